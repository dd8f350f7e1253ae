//! `tributary serve`: the REST API over the catalog, until SIGTERM or Ctrl-C. The
//! catalog is held (and announced, so `run` and `repl` can name the server) while it
//! runs; on SIGTERM requests in flight get a grace period, then the catalog is flushed.

use crate::args::{Cli, LogFormatArg, ServeArgs};
use crate::output::err_line;
use crate::store::Location;
use std::sync::Arc;
use tributary_catalog::ServerNotice;
use tributary_server::{Auth, LogFormat, ServerConfig, Stopped, init_logging, router, serve};
use tributary_sql::Session;
use tributary_sql::resources::QueryLimits;
use tributary_types::access::{Access, Confinement};

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
    let mut config = ServerConfig::new(auth.clone());
    config.access = match Access::confined(&Confinement {
        file_reads: args.allow_file_reads.clone(),
        // Whatever the operator allows, the catalog (every stored secret) is never read.
        never_read: match &location {
            Location::Dir(path) => vec![path.clone()],
            Location::Postgres(_) => vec![],
        },
        variable_prefix: Some(args.variable_prefix.clone()),
        variables: args.allow_variables.clone(),
        deny_private_networks: args.deny_private_networks,
        allow_hosts: args.allow_hosts.clone(),
    }) {
        Ok(a) => a,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    match query_limits(args) {
        Ok(limits) => config.limits = limits,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    }
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
    let timeouts = config.timeouts;
    let app = router(Arc::new(session), config);
    let grace = args.shutdown_grace;
    let stopped = serve(listener, app, timeouts, stop_signal(grace), grace).await;
    if stopped == Stopped::Cancelled {
        tracing::warn!(
            grace_s = grace.as_secs_f64(),
            "requests still running after the grace period were cancelled"
        );
    }
    match store.flush() {
        Ok(()) => {
            tracing::info!("stopped; the catalog is flushed");
            0
        }
        Err(e) => {
            err_line(&format!("error: cannot flush the catalog: {e}"));
            1
        }
    }
}

/// The query limits the flags set, the machine's defaults for the rest.
fn query_limits(args: &ServeArgs) -> Result<QueryLimits, String> {
    let mut limits = QueryLimits::for_this_machine();
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if let Some(total) = args.total_query_memory {
        limits.total_memory = size(total);
        limits.query_memory = limits.total_memory / 4;
    }
    if let Some(one) = args.query_memory {
        limits.query_memory = size(one);
    }
    if limits.query_memory > limits.total_memory {
        return Err(format!(
            "--query-memory ({} bytes) is more than --total-query-memory ({} bytes)",
            limits.query_memory, limits.total_memory
        ));
    }
    if args.query_deadline.is_zero() || args.query_deadline > args.max_query_deadline {
        return Err(
            "--query-deadline must be longer than zero and at most --max-query-deadline".into(),
        );
    }
    if args.max_concurrent_queries == 0 {
        return Err("--max-concurrent-queries must be at least 1".into());
    }
    limits.deadline = args.query_deadline;
    limits.max_deadline = args.max_query_deadline;
    limits.slots = args.max_concurrent_queries;
    Ok(limits)
}

/// SIGTERM or Ctrl-C.
async fn stop_signal(grace: std::time::Duration) {
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
    tracing::info!(
        grace_s = grace.as_secs_f64(),
        "stopping: requests in flight may finish within the grace period"
    );
}
