//! `tributary serve`: the REST API over the catalog, until SIGTERM or Ctrl-C. The
//! catalog is held (and announced, so `run` and `repl` can name the server) while it
//! runs; in-flight requests finish before it stops, then the catalog is flushed.

use crate::args::{Cli, LogFormatArg, ServeArgs};
use crate::output::err_line;
use crate::store::Location;
use std::sync::Arc;
use tributary_catalog::ServerNotice;
use tributary_server::{Auth, LogFormat, ServerConfig, init_logging, router};
use tributary_sql::Session;

/// Serve until asked to stop; the exit status.
pub async fn run(cli: &Cli, args: &ServeArgs) -> u8 {
    init_logging(match args.log_format {
        LogFormatArg::Text => LogFormat::Text,
        LogFormatArg::Json => LogFormat::Json,
    });
    let env_tokens = std::env::var("TRIBUTARY_TOKENS").ok();
    let auth = match Auth::configure(
        args.bind,
        &cli.token,
        env_tokens.as_deref(),
        args.tokens_file.as_deref(),
        args.no_auth,
    ) {
        Ok(a) => a,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    let location = match crate::store::catalog_location(cli) {
        Ok(p) => p,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    let store = match crate::store::open(cli) {
        Ok(s) => s,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    let listener = match tokio::net::TcpListener::bind(args.bind).await {
        Ok(l) => l,
        Err(e) => {
            err_line(&format!("error: cannot listen on {}: {e}", args.bind));
            return 2;
        }
    };
    let addr = listener.local_addr().unwrap_or(args.bind);
    let url = format!("http://{addr}");
    // A catalog directory records the server's address, so that a shell started on it
    // can point at the server; a shared PostgreSQL catalog needs no such note.
    let _notice = match &location {
        Location::Dir(path) => match ServerNotice::announce(path, &url) {
            Ok(n) => Some(n),
            Err(e) => {
                tracing::warn!(error = %e, "cannot record the server's address in the catalog directory");
                None
            }
        },
        Location::Postgres(_) => None,
    };
    let mut session = Session::new(Arc::clone(&store));
    if cli.allow_file_writes {
        session = session.allow_file_writes();
    }
    if matches!(auth, Auth::Disabled) {
        tracing::warn!(
            "authentication is off (--no-auth): any process on this machine can read and change the catalog"
        );
    }
    tracing::info!(url = %url, catalog = %store.location(), "Tributary is serving its REST API");
    let app = router(Arc::new(session), ServerConfig::new(auth));
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(stop_signal())
        .await;
    let flushed = store.flush();
    match (served, flushed) {
        (Ok(()), Ok(())) => {
            tracing::info!("stopped; the catalog is flushed");
            0
        }
        (Err(e), _) => {
            err_line(&format!("error: the server failed: {e}"));
            1
        }
        (_, Err(e)) => {
            err_line(&format!("error: cannot flush the catalog: {e}"));
            1
        }
    }
}

/// SIGTERM or Ctrl-C.
async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
    tracing::info!("stopping: in-flight requests finish first");
}
