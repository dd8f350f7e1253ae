//! [`RegistryClient`]: the registry's documented REST endpoints, with timeouts and errors
//! that name the URL.

use crate::error::RegistryError;
use crate::model::{Reference, RegisteredSchema, SchemaType, Version};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;
use url::Url;

/// How long one request may take unless the caller says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// References nest at most this deep.
const MAX_REFERENCE_DEPTH: usize = 10;

/// The media type the registry speaks.
const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// A schema registry at one endpoint.
#[derive(Debug, Clone)]
pub struct RegistryClient {
    base: Url,
    auth: Option<(String, String)>,
    timeout: Duration,
    http: reqwest::Client,
}

/// The registry's error body.
#[derive(Debug, Deserialize)]
struct ErrorBody {
    #[serde(default)]
    error_code: Option<i64>,
    #[serde(default)]
    message: Option<String>,
}

impl RegistryClient {
    /// A client for `endpoint` (`http://host:8081`, optionally with a path prefix), with
    /// Basic credentials when given and a per-request `timeout`.
    pub fn new(
        endpoint: &str,
        auth: Option<(String, String)>,
        timeout: Duration,
    ) -> Result<Self, RegistryError> {
        let bad = |reason: &str| RegistryError::BadEndpoint {
            endpoint: endpoint.to_string(),
            reason: reason.to_string(),
        };
        let mut base = Url::parse(endpoint).map_err(|e| bad(&e.to_string()))?;
        if base.scheme() != "http" && base.scheme() != "https" {
            return Err(bad("it must start with http:// or https://"));
        }
        if base.cannot_be_a_base() {
            return Err(bad("it must be an http(s) URL with a host"));
        }
        // A trailing slash makes relative joins keep any path prefix.
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| bad(&e.to_string()))?;
        Ok(Self {
            base,
            auth,
            timeout,
            http,
        })
    }

    /// The endpoint, for messages.
    pub fn endpoint(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    /// `GET /subjects/{subject}/versions/{version}`.
    pub async fn subject_version(
        &self,
        subject: &str,
        version: Version,
    ) -> Result<RegisteredSchema, RegistryError> {
        let url = self.url(&["subjects", subject, "versions", &version.to_string()]);
        let what = match version {
            Version::Latest => format!("subject '{subject}'"),
            Version::Number(n) => format!("version {n} of subject '{subject}'"),
        };
        let body = self.get(&url, &what).await?;
        let mut schema: RegisteredSchema = parse(&url, &body)?;
        schema.subject.get_or_insert_with(|| subject.to_string());
        Ok(schema)
    }

    /// `GET /schemas/ids/{id}`.
    pub async fn schema_by_id(&self, id: u32) -> Result<RegisteredSchema, RegistryError> {
        let url = self.url(&["schemas", "ids", &id.to_string()]);
        let body = self.get(&url, &format!("schema id {id}")).await?;
        let mut schema: RegisteredSchema = parse(&url, &body)?;
        schema.id = id;
        Ok(schema)
    }

    /// `GET /subjects`: every subject, for completion.
    pub async fn subjects(&self) -> Result<Vec<String>, RegistryError> {
        let url = self.url(&["subjects"]);
        let body = self.get(&url, "the subject list").await?;
        parse(&url, &body)
    }

    /// Every schema `schema` refers to, directly or not, by the name its referrer uses.
    /// Cycles and nesting deeper than ten levels are errors.
    pub async fn resolve_references(
        &self,
        schema: &RegisteredSchema,
    ) -> Result<BTreeMap<String, RegisteredSchema>, RegistryError> {
        let what = match (&schema.subject, schema.version) {
            (Some(s), Some(v)) => format!("version {v} of subject '{s}'"),
            _ => format!("schema id {}", schema.id),
        };
        let mut out = BTreeMap::new();
        let mut stack: Vec<(Reference, usize)> =
            schema.references.iter().cloned().map(|r| (r, 1)).collect();
        let mut seen: HashSet<(String, u32)> = HashSet::new();
        while let Some((reference, depth)) = stack.pop() {
            if depth > MAX_REFERENCE_DEPTH {
                return Err(RegistryError::References {
                    what,
                    reason: format!("nest more than {MAX_REFERENCE_DEPTH} levels deep"),
                });
            }
            if !seen.insert((reference.subject.clone(), reference.version)) {
                continue;
            }
            let found = self
                .subject_version(&reference.subject, Version::Number(reference.version))
                .await?;
            if found.references.iter().any(|r| {
                schema.subject.as_deref() == Some(r.subject.as_str())
                    && schema.version == Some(r.version)
            }) {
                return Err(RegistryError::References {
                    what,
                    reason: format!("refer back to it through subject '{}'", reference.subject),
                });
            }
            stack.extend(found.references.iter().cloned().map(|r| (r, depth + 1)));
            out.insert(reference.name.clone(), found);
        }
        Ok(out)
    }

    /// `POST /subjects/{subject}/versions`: register (or find) a schema; its id.
    pub async fn register(
        &self,
        subject: &str,
        schema_type: SchemaType,
        schema: &str,
        references: &[Reference],
    ) -> Result<u32, RegistryError> {
        let url = self.url(&["subjects", subject, "versions"]);
        let mut body = serde_json::json!({"schema": schema});
        if schema_type != SchemaType::Avro {
            body["schemaType"] = serde_json::json!(schema_type.to_string());
        }
        if !references.is_empty() {
            body["references"] =
                serde_json::to_value(references).map_err(|e| RegistryError::BadResponse {
                    url: url.to_string(),
                    reason: e.to_string(),
                })?;
        }
        let request = self
            .with_auth(self.http.post(url.clone()))
            .header(reqwest::header::CONTENT_TYPE, CONTENT_TYPE)
            .body(body.to_string());
        let text = self
            .send(request, &url, &format!("subject '{subject}'"))
            .await?;
        #[derive(Deserialize)]
        struct Registered {
            id: u32,
        }
        parse::<Registered>(&url, &text).map(|r| r.id)
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty();
            for s in segments {
                path.push(s);
            }
        }
        url
    }

    fn with_auth(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.auth {
            Some((user, password)) => request.basic_auth(user, Some(password)),
            None => request,
        }
    }

    async fn get(&self, url: &Url, what: &str) -> Result<String, RegistryError> {
        let request = self
            .with_auth(self.http.get(url.clone()))
            .header(reqwest::header::ACCEPT, CONTENT_TYPE);
        self.send(request, url, what).await
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        url: &Url,
        what: &str,
    ) -> Result<String, RegistryError> {
        let shown = url.to_string();
        let transport = |e: reqwest::Error| {
            if e.is_timeout() {
                RegistryError::Timeout {
                    url: shown.clone(),
                    after: self.timeout,
                }
            } else {
                RegistryError::Connect {
                    url: shown.clone(),
                    reason: root_cause(&e),
                }
            }
        };
        let response = request.send().await.map_err(transport)?;
        let status = response.status();
        let text = response.text().await.map_err(transport)?;
        if status.is_success() {
            return Ok(text);
        }
        let message = match serde_json::from_str::<ErrorBody>(&text) {
            Ok(ErrorBody {
                message: Some(m),
                error_code,
            }) => match error_code {
                Some(code) => format!("{m} (error code {code})"),
                None => m,
            },
            _ => text.chars().take(300).collect(),
        };
        Err(match status.as_u16() {
            404 => RegistryError::NotFound {
                what: what.to_string(),
                url: shown,
                message,
            },
            401 | 403 => RegistryError::Unauthorized {
                url: shown,
                status: status.as_u16(),
                message,
            },
            code => RegistryError::Status {
                url: shown,
                status: code,
                message,
            },
        })
    }
}

fn parse<T: serde::de::DeserializeOwned>(url: &Url, body: &str) -> Result<T, RegistryError> {
    serde_json::from_str(body).map_err(|e| RegistryError::BadResponse {
        url: url.to_string(),
        reason: e.to_string(),
    })
}

/// The innermost cause of a transport error ("Connection refused"), which is what a user
/// can act on.
fn root_cause(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}
