//! Bearer-token authentication: tokens from `--token`, `TRIBUTARY_TOKENS` or a tokens
//! file, compared in constant time; a missing or wrong token is a 401 with a
//! `WWW-Authenticate` challenge. Authentication can be turned off only on a loopback
//! address.

use crate::reply::Failure;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use std::path::Path;
use subtle::ConstantTimeEq;
use tributary_api::{ApiError, ApiStatus};

/// How requests are authenticated.
#[derive(Clone)]
pub enum Auth {
    /// Every request carries `Authorization: Bearer <one of these>`.
    Tokens(Vec<Vec<u8>>),
    /// No authentication (`--no-auth`; loopback addresses only).
    Disabled,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // Never the tokens themselves.
            Auth::Tokens(t) => write!(f, "Auth::Tokens({} token(s))", t.len()),
            Auth::Disabled => f.write_str("Auth::Disabled"),
        }
    }
}

/// Why a server cannot start with the authentication asked for.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No token from any source, and authentication not turned off.
    #[error(
        "no API token is configured: pass --token, set TRIBUTARY_TOKENS or give --tokens-file; or, on a loopback address only, --no-auth"
    )]
    NoTokens,
    /// `--no-auth` on an address other machines can reach.
    #[error(
        "--no-auth is allowed only on a loopback address (127.0.0.1, ::1), not on {0}: anyone who can reach it could read and change the catalog"
    )]
    NotLoopback(SocketAddr),
    /// The tokens file cannot be read.
    #[error("cannot read tokens file '{path}': {reason}")]
    File {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A token is too short to be a secret.
    #[error("API tokens must be at least {MIN_TOKEN_CHARS} characters long")]
    TooShort,
}

/// The shortest token accepted.
pub const MIN_TOKEN_CHARS: usize = 8;

impl Auth {
    /// Accept these tokens.
    pub fn tokens<I, S>(tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Auth::Tokens(
            tokens
                .into_iter()
                .map(|t| t.as_ref().trim().as_bytes().to_vec())
                .filter(|t| !t.is_empty())
                .collect(),
        )
    }

    /// The authentication for a server on `bind`: the tokens given on the command line,
    /// in `TRIBUTARY_TOKENS` (comma-separated) and in a tokens file (one per line, `#`
    /// comments), or none when `no_auth` (loopback only).
    pub fn configure(
        bind: SocketAddr,
        flags: &[String],
        env: Option<&str>,
        file: Option<&Path>,
        no_auth: bool,
    ) -> Result<Auth, AuthError> {
        if no_auth {
            if !bind.ip().is_loopback() {
                return Err(AuthError::NotLoopback(bind));
            }
            return Ok(Auth::Disabled);
        }
        let mut tokens: Vec<String> = flags.to_vec();
        if let Some(env) = env {
            tokens.extend(env.split(',').map(str::to_string));
        }
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|e| AuthError::File {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
            tokens.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string),
            );
        }
        let tokens: Vec<String> = tokens
            .into_iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
        if tokens.is_empty() {
            return Err(AuthError::NoTokens);
        }
        if tokens.iter().any(|t| t.chars().count() < MIN_TOKEN_CHARS) {
            return Err(AuthError::TooShort);
        }
        Ok(Auth::tokens(tokens))
    }

    /// Whether `given` is one of the tokens, in time independent of where they differ.
    fn accepts(&self, given: &[u8]) -> bool {
        match self {
            Auth::Disabled => true,
            Auth::Tokens(tokens) => {
                let mut ok = subtle::Choice::from(0u8);
                // Every token is compared, over the longer length, whatever matched.
                for t in tokens {
                    ok |= constant_time_eq(t, given);
                }
                ok.into()
            }
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> subtle::Choice {
    let len = a.len().max(b.len());
    let mut same = (a.len() as u64).ct_eq(&(b.len() as u64));
    for i in 0..len {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        same &= x.ct_eq(&y);
    }
    same
}

/// The middleware: pass authenticated requests on, answer the rest with 401.
pub(crate) async fn require_token(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    if matches!(state.config.auth, Auth::Disabled) {
        return next.run(req).await;
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    match given {
        Some(token) if state.config.auth.accepts(token.as_bytes()) => next.run(req).await,
        Some(_) => challenge(
            "the bearer token is not valid",
            "Bearer realm=\"tributary\", error=\"invalid_token\"",
        ),
        None => challenge(
            "this API needs a bearer token",
            "Bearer realm=\"tributary\"",
        ),
    }
}

fn challenge(message: &str, www: &'static str) -> Response {
    let mut r = Failure(
        ApiError::new(ApiStatus::Unauthorized, "unauthorized", message)
            .with_hint("Send the header 'Authorization: Bearer <token>' with a token the server was started with."),
    )
    .into_response();
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(www));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_exactly() {
        let auth = Auth::tokens(["first-token", "second-token"]);
        assert!(auth.accepts(b"first-token"));
        assert!(auth.accepts(b"second-token"));
        for wrong in [&b"first-toke"[..], b"first-token2", b"", b"FIRST-TOKEN"] {
            assert!(!auth.accepts(wrong), "{wrong:?}");
        }
    }

    #[test]
    fn configuration_refuses_what_would_be_unsafe() {
        let public: SocketAddr = "0.0.0.0:8000".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:8000".parse().unwrap();
        assert!(matches!(
            Auth::configure(public, &[], None, None, true),
            Err(AuthError::NotLoopback(_))
        ));
        assert!(matches!(
            Auth::configure(local, &[], None, None, true),
            Ok(Auth::Disabled)
        ));
        assert!(matches!(
            Auth::configure(local, &[], None, None, false),
            Err(AuthError::NoTokens)
        ));
        assert!(matches!(
            Auth::configure(local, &["short".into()], None, None, false),
            Err(AuthError::TooShort)
        ));
        let Ok(Auth::Tokens(t)) = Auth::configure(
            public,
            &["flag-token".into()],
            Some("env-one1, env-two2"),
            None,
            false,
        ) else {
            panic!("tokens expected");
        };
        assert_eq!(t.len(), 3);
        assert!(!format!("{:?}", Auth::Tokens(t)).contains("flag-token"));
    }
}
