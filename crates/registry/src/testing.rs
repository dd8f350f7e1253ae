//! [`FakeRegistry`]: a Schema-Registry-compatible HTTP server on 127.0.0.1 for tests. It
//! implements the documented endpoints the client uses (`GET /subjects`,
//! `GET /subjects/{subject}/versions/{version}`, `GET /schemas/ids/{id}`,
//! `POST /subjects/{subject}/versions`), the registry's error bodies and codes, optional
//! Basic authentication, and an artificial delay for timeout tests.

use crate::model::{Reference, SchemaType};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

#[derive(Debug, Clone)]
struct Stored {
    schema_type: SchemaType,
    schema: String,
    references: Vec<Reference>,
}

#[derive(Debug, Default)]
struct Registry {
    /// Schemas by id (id = index + 1).
    schemas: Vec<Stored>,
    /// Each subject's versions, as schema ids (version = index + 1).
    subjects: BTreeMap<String, Vec<u32>>,
    credentials: Option<(String, String)>,
    delay: Option<Duration>,
    requests: usize,
}

type Shared = Arc<Mutex<Registry>>;

/// A running fake registry; it stops when dropped.
#[derive(Debug)]
pub struct FakeRegistry {
    addr: SocketAddr,
    state: Shared,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeRegistry {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn lock(state: &Shared) -> MutexGuard<'_, Registry> {
    // A panicking test thread cannot leave the registry half-updated in a way that
    // matters to another request, so a poisoned lock is still usable.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl FakeRegistry {
    /// Start on a free port of 127.0.0.1, on the current Tokio runtime.
    pub async fn start() -> std::io::Result<Self> {
        let state: Shared = Arc::default();
        let app = Router::new()
            .route("/subjects", get(subjects))
            .route(
                "/subjects/{subject}/versions",
                axum::routing::post(register),
            )
            .route("/subjects/{subject}/versions/{version}", get(version))
            .route("/schemas/ids/{id}", get(by_id))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            addr,
            state,
            server,
        })
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Require Basic authentication with these credentials.
    pub fn require_credentials(&self, user: &str, password: &str) {
        lock(&self.state).credentials = Some((user.into(), password.into()));
    }

    /// Answer every request only after `delay`.
    pub fn delay(&self, delay: Duration) {
        lock(&self.state).delay = Some(delay);
    }

    /// Requests answered so far.
    pub fn requests(&self) -> usize {
        lock(&self.state).requests
    }

    /// Register `schema` under `subject` (a new version unless it is the latest already);
    /// its id and version.
    pub fn add(
        &self,
        subject: &str,
        schema_type: SchemaType,
        schema: &str,
        references: Vec<Reference>,
    ) -> (u32, u32) {
        add(
            &mut lock(&self.state),
            subject,
            schema_type,
            schema,
            references,
        )
    }
}

fn add(
    r: &mut Registry,
    subject: &str,
    schema_type: SchemaType,
    schema: &str,
    references: Vec<Reference>,
) -> (u32, u32) {
    let id = match r
        .schemas
        .iter()
        .position(|s| s.schema == schema && s.schema_type == schema_type)
    {
        Some(i) => i as u32 + 1,
        None => {
            r.schemas.push(Stored {
                schema_type,
                schema: schema.to_string(),
                references,
            });
            r.schemas.len() as u32
        }
    };
    let versions = r.subjects.entry(subject.to_string()).or_default();
    if versions.last() != Some(&id) {
        versions.push(id);
    }
    let version = versions.iter().rposition(|v| *v == id).unwrap_or(0) as u32 + 1;
    (id, version)
}

fn error(status: StatusCode, code: i64, message: String) -> Response {
    (
        status,
        [("content-type", "application/vnd.schemaregistry.v1+json")],
        json!({"error_code": code, "message": message}).to_string(),
    )
        .into_response()
}

fn ok(body: Value) -> Response {
    (
        StatusCode::OK,
        [("content-type", "application/vnd.schemaregistry.v1+json")],
        body.to_string(),
    )
        .into_response()
}

/// Delay, count, and check credentials; `Err` is the response to send instead.
async fn admit(state: &Shared, headers: &HeaderMap) -> Result<(), Response> {
    let (delay, credentials) = {
        let mut r = lock(state);
        r.requests += 1;
        (r.delay, r.credentials.clone())
    };
    if let Some(d) = delay {
        tokio::time::sleep(d).await;
    }
    if let Some((user, password)) = credentials {
        let expected = format!("Basic {}", base64(&format!("{user}:{password}")));
        let given = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if given != expected {
            return Err(error(
                StatusCode::UNAUTHORIZED,
                40101,
                "Unauthorized".into(),
            ));
        }
    }
    Ok(())
}

fn describe(id: u32, s: &Stored) -> Value {
    let mut v = json!({"id": id, "schema": s.schema, "references": s.references});
    if s.schema_type != SchemaType::Avro {
        v["schemaType"] = json!(s.schema_type.to_string());
    }
    v
}

async fn subjects(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(r) = admit(&state, &headers).await {
        return r;
    }
    let names: Vec<String> = lock(&state).subjects.keys().cloned().collect();
    ok(json!(names))
}

async fn version(
    State(state): State<Shared>,
    headers: HeaderMap,
    Path((subject, version)): Path<(String, String)>,
) -> Response {
    if let Err(r) = admit(&state, &headers).await {
        return r;
    }
    let r = lock(&state);
    let Some(versions) = r.subjects.get(&subject) else {
        return error(
            StatusCode::NOT_FOUND,
            40401,
            format!("Subject '{subject}' not found."),
        );
    };
    let index = if version == "latest" {
        versions.len().checked_sub(1)
    } else {
        version
            .parse::<usize>()
            .ok()
            .and_then(|v| v.checked_sub(1))
            .filter(|i| *i < versions.len())
    };
    let Some(index) = index else {
        return error(
            StatusCode::NOT_FOUND,
            40402,
            format!("Version {version} not found."),
        );
    };
    let id = versions[index];
    let Some(stored) = r.schemas.get(id as usize - 1) else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            50001,
            "lost schema".into(),
        );
    };
    let mut body = describe(id, stored);
    body["subject"] = json!(subject);
    body["version"] = json!(index + 1);
    ok(body)
}

async fn by_id(State(state): State<Shared>, headers: HeaderMap, Path(id): Path<u32>) -> Response {
    if let Err(r) = admit(&state, &headers).await {
        return r;
    }
    let r = lock(&state);
    match id.checked_sub(1).and_then(|i| r.schemas.get(i as usize)) {
        Some(s) => {
            let mut body = describe(id, s);
            if let Some(o) = body.as_object_mut() {
                o.remove("id");
            }
            ok(body)
        }
        None => error(
            StatusCode::NOT_FOUND,
            40403,
            format!("Schema {id} not found"),
        ),
    }
}

async fn register(
    State(state): State<Shared>,
    headers: HeaderMap,
    Path(subject): Path<String>,
    body: String,
) -> Response {
    if let Err(r) = admit(&state, &headers).await {
        return r;
    }
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            42201,
            "Invalid schema".into(),
        );
    };
    let Some(schema) = request["schema"].as_str() else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            42201,
            "Invalid schema".into(),
        );
    };
    let schema_type = match request["schemaType"].as_str() {
        None | Some("AVRO") => SchemaType::Avro,
        Some("JSON") => SchemaType::Json,
        Some("PROTOBUF") => SchemaType::Protobuf,
        Some(other) => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                42202,
                format!("Unknown schema type {other}"),
            );
        }
    };
    let references: Vec<Reference> =
        serde_json::from_value(request["references"].clone()).unwrap_or_default();
    let (id, _) = add(&mut lock(&state), &subject, schema_type, schema, references);
    ok(json!({"id": id}))
}

/// Standard base64 (for the expected Authorization header).
fn base64(input: &str) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = input.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
