//! The web console: static files compiled into the binary (`crates/server/console/`),
//! served at `/` and `/console/...` without a token (the page asks for one and sends it
//! to the API, which is where the data is). Each answer carries an ETag of its content
//! and `Cache-Control: no-cache`, so a browser revalidates with a cheap 304, and a
//! content security policy that allows only the console's own files.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::OnceLock;

/// Every file of the console: its path under `/console/`, its type and its bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("../console/index.html"),
    ),
    (
        "console.css",
        "text/css; charset=utf-8",
        include_bytes!("../console/console.css"),
    ),
    ("js/api.js", JS, include_bytes!("../console/js/api.js")),
    ("js/app.js", JS, include_bytes!("../console/js/app.js")),
    (
        "js/connections.js",
        JS,
        include_bytes!("../console/js/connections.js"),
    ),
    ("js/dom.js", JS, include_bytes!("../console/js/dom.js")),
    ("js/form.js", JS, include_bytes!("../console/js/form.js")),
    (
        "js/profiles.js",
        JS,
        include_bytes!("../console/js/profiles.js"),
    ),
    (
        "js/schema_step.js",
        JS,
        include_bytes!("../console/js/schema_step.js"),
    ),
    ("js/plan.js", JS, include_bytes!("../console/js/plan.js")),
    ("js/sql.js", JS, include_bytes!("../console/js/sql.js")),
    (
        "js/testing.js",
        JS,
        include_bytes!("../console/js/testing.js"),
    ),
    (
        "js/wizard.js",
        JS,
        include_bytes!("../console/js/wizard.js"),
    ),
];

const JS: &str = "text/javascript; charset=utf-8";

/// Scripts, styles and images from the console itself (icons are `data:` URLs); the API
/// on the same origin.
const POLICY: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// The console's routes.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/",
            get(|headers: HeaderMap| async move { file("index.html", &headers) }),
        )
        .route(
            "/console/{*path}",
            get(
                |Path(path): Path<String>, headers: HeaderMap| async move { file(&path, &headers) },
            ),
        )
}

/// The total size of the console's files, in bytes.
pub fn shipped_bytes() -> usize {
    FILES.iter().map(|(_, _, bytes)| bytes.len()).sum()
}

/// Each file's ETag, computed once.
fn etags() -> &'static Vec<String> {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| {
        FILES
            .iter()
            .map(|(_, _, b)| format!("\"{:016x}\"", fnv1a(b)))
            .collect()
    })
}

/// FNV-1a: a content fingerprint for ETags (not a security measure).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn file(path: &str, headers: &HeaderMap) -> Response {
    let Some(index) = FILES.iter().position(|(p, _, _)| *p == path) else {
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "No such file in the console.\n",
        )
            .into_response();
    };
    let (_, content_type, bytes) = FILES[index];
    let etag = &etags()[index];
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, content_type)], bytes).into_response()
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_ships_under_300_kb_and_every_file_it_loads_is_listed() {
        assert!(shipped_bytes() < 300 * 1024, "{} bytes", shipped_bytes());
        // Every module a file imports is one of the files.
        for (path, _, bytes) in FILES {
            let text = std::str::from_utf8(bytes).expect("the console's files are UTF-8");
            for line in text.lines().filter(|l| l.starts_with("import ")) {
                let Some(from) = line.split('"').nth(1) else {
                    continue;
                };
                let target = from.trim_start_matches("./");
                let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                let full = if dir.is_empty() {
                    target.to_string()
                } else {
                    format!("{dir}/{target}")
                };
                assert!(
                    FILES.iter().any(|(p, _, _)| *p == full),
                    "{path} imports {from}, which is not served"
                );
            }
        }
    }

    #[test]
    fn every_file_of_the_console_directory_is_served() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("console");
        let mut found = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("the console directory is readable") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    let rel = path.strip_prefix(&root).expect("under the root");
                    found.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        for f in &found {
            assert!(
                FILES.iter().any(|(p, _, _)| p == f),
                "console/{f} is not in FILES"
            );
        }
        assert_eq!(found.len(), FILES.len());
    }

    #[test]
    fn a_matching_etag_answers_not_modified() {
        let first = file("index.html", &HeaderMap::new());
        assert_eq!(first.status(), StatusCode::OK);
        let tag = first.headers()[header::ETAG].clone();
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, tag);
        assert_eq!(
            file("index.html", &headers).status(),
            StatusCode::NOT_MODIFIED
        );
        assert_eq!(
            file("nope.js", &HeaderMap::new()).status(),
            StatusCode::NOT_FOUND
        );
    }
}
