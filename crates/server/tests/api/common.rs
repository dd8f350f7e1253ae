//! A router over a fresh on-disk catalog, and requests against it.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use std::sync::Arc;
use tower::ServiceExt;
use tributary_catalog::SledStore;
use tributary_server::{Auth, ServerConfig, router};
use tributary_sql::Session;

pub const TOKEN: &str = "router-test-token";

pub struct App {
    pub router: Router,
    pub session: Arc<Session>,
    _dir: tempfile::TempDir,
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}), status {}: {}",
                self.status,
                String::from_utf8_lossy(&self.bytes)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// The `data:` events of a server-sent event stream.
    pub fn events(&self) -> Vec<Value> {
        self.text()
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }
}

pub fn app() -> App {
    app_with(|c| c)
}

pub fn app_with(configure: impl FnOnce(ServerConfig) -> ServerConfig) -> App {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SledStore::open(dir.path()).unwrap());
    app_on(store, dir, configure)
}

/// A router over `store` (PostgreSQL, say), configured as by default.
pub fn app_over(store: Arc<dyn tributary_catalog::CatalogStore>) -> App {
    app_on(store, tempfile::tempdir().unwrap(), |c| c)
}

fn app_on(
    store: Arc<dyn tributary_catalog::CatalogStore>,
    dir: tempfile::TempDir,
    configure: impl FnOnce(ServerConfig) -> ServerConfig,
) -> App {
    let session = Arc::new(Session::new(store));
    let config = configure(ServerConfig::new(Auth::tokens([TOKEN])));
    App {
        router: router(session.clone(), config),
        session,
        _dir: dir,
    }
}

impl App {
    /// A request with the token and, when given, a JSON body.
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Reply {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", format!("Bearer {TOKEN}"));
        let body = match body {
            Some(v) => {
                req = req.header("content-type", "application/json");
                Body::from(serde_json::to_vec(&v).unwrap())
            }
            None => Body::empty(),
        };
        self.send(req.body(body).unwrap()).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.call("GET", path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.call("POST", path, Some(body)).await
    }

    pub async fn send(&self, req: Request<Body>) -> Reply {
        let response = self.router.clone().oneshot(req).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec();
        Reply {
            status,
            headers,
            bytes,
        }
    }

    /// Run SQL through the same session (what a SQL user of the catalog does).
    pub async fn sql(&self, sql: &str) {
        self.session
            .execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// A TCP server that accepts connections and never answers: a peer that hangs.
pub async fn hanging_peer() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    port
}

/// An HTTP server that answers every request with `body` as JSON.
pub async fn json_peer(body: &'static str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}
