//! The calls `arroyo push` and `pull` make to an Arroyo API (or a Tributary server, whose
//! shapes are the same): list, create and delete profiles and tables. Answers are read
//! leniently (Arroyo's camelCase and Tributary's snake_case keys) and bounded in size;
//! the token is sent, never shown.

use super::SyncError;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// The largest answer read (a page of 1,000 tables with their schemas fits well).
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
/// Tables asked for per page.
const PAGE: usize = 1_000;
/// Pages read at most (a million tables), so a server that always says `hasMore` ends.
const MAX_PAGES: usize = 1_000;

/// A profile as the remote API shows it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RemoteProfile {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) connector: String,
    #[serde(default)]
    pub(crate) config: Value,
}

/// The profile a remote table names.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RemoteProfileRef {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: Option<String>,
}

/// A table as the remote API shows it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RemoteTable {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) connector: String,
    #[serde(default, alias = "connectionProfile")]
    pub(crate) connection_profile: Option<RemoteProfileRef>,
    #[serde(default)]
    pub(crate) config: Value,
    #[serde(default)]
    pub(crate) schema: Value,
    /// Generated columns (a Tributary server shows them; Arroyo does not).
    #[serde(default)]
    pub(crate) virtual_columns: Vec<crate::VirtualColumnPost>,
    /// The watermark (likewise).
    #[serde(default)]
    pub(crate) watermark: Option<tributary_types::Watermark>,
}

#[derive(Deserialize)]
struct Collection<T> {
    data: Vec<T>,
    #[serde(default, rename = "hasMore", alias = "has_more")]
    has_more: bool,
}

/// An Arroyo API at `base` (`http://host:port`, with or without `/api/v1`).
#[derive(Debug, Clone)]
pub(crate) struct ArroyoClient {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl ArroyoClient {
    pub(crate) fn new(url: &str, token: Option<&str>) -> Result<Self, SyncError> {
        let parsed = url::Url::parse(url).map_err(|e| SyncError::BadUrl {
            url: tributary_types::redact_text(&tributary_types::limits::shorten(url)).into_owned(),
            detail: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || !parsed.username().is_empty() {
            return Err(SyncError::BadUrl {
                url: tributary_types::redact_text(&tributary_types::limits::shorten(url)).into_owned(),
                detail: "write it as http://host:port or https://host:port, without credentials (pass --token)".into(),
            });
        }
        let trimmed = url.trim_end_matches('/');
        let base = trimmed
            .strip_suffix("/api/v1")
            .unwrap_or(trimmed)
            .to_string();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| SyncError::Remote {
                what: "prepare the HTTP client".into(),
                detail: e.to_string(),
            })?;
        Ok(Self {
            http,
            base,
            token: token.map(str::to_string),
        })
    }

    /// The API's address, as messages show it.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> String {
        format!("{}/api/v1{path}", self.base)
    }

    async fn send(
        &self,
        what: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<Option<Value>, SyncError> {
        let request = match &self.token {
            Some(t) => request.bearer_auth(t),
            None => request,
        };
        let remote = |detail: String| SyncError::Remote {
            what: what.to_string(),
            detail,
        };
        let mut answer = request.send().await.map_err(|e| remote(transport(e)))?;
        let status = answer.status();
        let mut body = Vec::new();
        while let Some(chunk) = answer.chunk().await.map_err(|e| remote(transport(e)))? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(remote(format!(
                    "the answer is larger than {} MiB",
                    MAX_ANSWER_BYTES / (1024 * 1024)
                )));
            }
            body.extend_from_slice(&chunk);
        }
        let json: Option<Value> = if body.is_empty() {
            None
        } else {
            serde_json::from_slice(&body).ok()
        };
        if !status.is_success() {
            let message = json
                .as_ref()
                .and_then(|j| j.get("error").and_then(Value::as_str))
                .map(str::to_string)
                .unwrap_or_else(|| {
                    tributary_types::limits::shorten(&String::from_utf8_lossy(&body)).into_owned()
                });
            return Err(SyncError::Refused {
                what: what.to_string(),
                status: status.as_u16(),
                message: tributary_types::redact_text(&message).into_owned(),
            });
        }
        match (json, body.is_empty()) {
            (Some(j), _) => Ok(Some(j)),
            (None, true) => Ok(None),
            (None, false) => Err(remote("the answer is not JSON".into())),
        }
    }

    fn post(&self, path: &str, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(self.url(path))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
    }

    async fn get_json(&self, what: &str, path: &str) -> Result<Value, SyncError> {
        self.send(what, self.http.get(self.url(path)))
            .await?
            .ok_or_else(|| SyncError::Remote {
                what: what.to_string(),
                detail: "the answer is empty".into(),
            })
    }

    fn decode<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, SyncError> {
        serde_json::from_value(value).map_err(|e| SyncError::Remote {
            what: what.to_string(),
            detail: format!("the answer is not in Arroyo's shape: {e}"),
        })
    }

    pub(crate) async fn profiles(&self) -> Result<Vec<RemoteProfile>, SyncError> {
        let what = "list the connection profiles";
        let page: Collection<RemoteProfile> =
            Self::decode(what, self.get_json(what, "/connection_profiles").await?)?;
        Ok(page.data)
    }

    pub(crate) async fn tables(&self) -> Result<Vec<RemoteTable>, SyncError> {
        let what = "list the connection tables";
        let mut all: Vec<RemoteTable> = Vec::new();
        for _ in 0..MAX_PAGES {
            let path = match all.last() {
                None => format!("/connection_tables?limit={PAGE}"),
                Some(t) => format!(
                    "/connection_tables?limit={PAGE}&starting_after={}",
                    url::form_urlencoded::byte_serialize(t.id.as_bytes()).collect::<String>()
                ),
            };
            let page: Collection<RemoteTable> =
                Self::decode(what, self.get_json(what, &path).await?)?;
            let more = page.has_more && !page.data.is_empty();
            all.extend(page.data);
            if !more {
                return Ok(all);
            }
        }
        Err(SyncError::Remote {
            what: what.into(),
            detail: format!("more than {MAX_PAGES} pages"),
        })
    }

    pub(crate) async fn create_profile(&self, body: &Value) -> Result<RemoteProfile, SyncError> {
        let what = "create a connection profile";
        let answer = self
            .send(what, self.post("/connection_profiles", body))
            .await?
            .unwrap_or(Value::Null);
        Self::decode(what, answer)
    }

    pub(crate) async fn create_table(&self, body: &Value) -> Result<RemoteTable, SyncError> {
        let what = "create a connection table";
        let answer = self
            .send(what, self.post("/connection_tables", body))
            .await?
            .unwrap_or(Value::Null);
        Self::decode(what, answer)
    }

    pub(crate) async fn delete_table(&self, id: &str) -> Result<(), SyncError> {
        let path = format!(
            "/connection_tables/{}",
            url::form_urlencoded::byte_serialize(id.as_bytes()).collect::<String>()
        );
        self.send(
            "delete a connection table",
            self.http.delete(self.url(&path)),
        )
        .await
        .map(|_| ())
    }
}

/// A transport error's text, without the URL reqwest adds (the caller names it).
fn transport(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
