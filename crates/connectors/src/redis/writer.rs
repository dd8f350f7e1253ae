//! Redis for INSERT INTO, by the table's target. `string`: `SET prefix+key row` (with
//! `target.ttl_secs`, an expiry). `list`: the row pushed onto `prefix+key` (at the end,
//! or the front with `target.operation = 'prepend'`), trimmed to `target.max_length`.
//! `hash`: `HSET prefix+key field row`. The key (and field) come from the table's key
//! (and field) columns; without a key column the prefix alone is the key. Each batch is
//! one pipeline, so a batch costs one round trip.

use crate::sink::{OutMessage, SinkWriter, WriteFailure};
use ::redis::aio::MultiplexedConnection;
use serde_json::Value;

/// The structure rows go to.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    String {
        ttl: Option<u64>,
    },
    List {
        prepend: bool,
        max_length: Option<i64>,
    },
    Hash,
}

/// A connection writing one table's target.
pub(crate) struct RedisWriter {
    conn: MultiplexedConnection,
    target: Target,
    prefix: String,
    key_column: Option<String>,
    field_column: Option<String>,
}

impl std::fmt::Debug for RedisWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisWriter")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisWriter {
    /// The writer the table's `target` settings describe.
    pub(crate) fn new(conn: MultiplexedConnection, table: &Value) -> Self {
        let t = table
            .pointer("/connectorType/target")
            .unwrap_or(&Value::Null);
        let text = |k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
        let (target, prefix, key_column) = if t.get("listPrefix").is_some()
            || t.get("listKeyColumn").is_some()
            || t.get("operation").is_some()
            || t.get("maxLength").is_some()
        {
            let prepend = text("operation").is_some_and(|o| o.eq_ignore_ascii_case("prepend"));
            let max_length = t.get("maxLength").and_then(Value::as_i64);
            (
                Target::List {
                    prepend,
                    max_length,
                },
                text("listPrefix"),
                text("listKeyColumn"),
            )
        } else if t.get("hashKeyPrefix").is_some() || t.get("hashFieldColumn").is_some() {
            (Target::Hash, text("hashKeyPrefix"), text("hashKeyColumn"))
        } else {
            let ttl = t.get("ttlSecs").and_then(Value::as_u64);
            (Target::String { ttl }, text("keyPrefix"), text("keyColumn"))
        };
        Self {
            conn,
            field_column: (target == Target::Hash)
                .then(|| text("hashFieldColumn"))
                .flatten(),
            target,
            prefix: prefix.unwrap_or_default(),
            key_column,
        }
    }

    fn key(&self, m: &OutMessage) -> Vec<u8> {
        let mut key = self.prefix.as_bytes().to_vec();
        if let Some(k) = &m.key {
            key.extend_from_slice(k);
        }
        key
    }
}

#[async_trait::async_trait]
impl SinkWriter for RedisWriter {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        let mut pipe = ::redis::pipe();
        for m in &messages {
            let key = self.key(m);
            match &self.target {
                Target::String { ttl: Some(ttl) } => {
                    pipe.set_ex(key, &m.payload, *ttl).ignore();
                }
                Target::String { ttl: None } => {
                    pipe.set(key, &m.payload).ignore();
                }
                Target::List {
                    prepend,
                    max_length,
                } => {
                    if *prepend {
                        pipe.lpush(&key, &m.payload).ignore();
                        if let Some(n) = max_length {
                            pipe.ltrim(&key, 0, (*n - 1) as isize).ignore();
                        }
                    } else {
                        pipe.rpush(&key, &m.payload).ignore();
                        if let Some(n) = max_length {
                            pipe.ltrim(&key, -(*n as isize), -1).ignore();
                        }
                    }
                }
                Target::Hash => {
                    let field = m.field.clone().unwrap_or_default();
                    pipe.hset(key, field, &m.payload).ignore();
                }
            }
        }
        pipe.query_async::<()>(&mut self.conn).await.map_err(|e| {
            WriteFailure::new(
                format!("the server refused a write: {e}"),
                "Check the user's permissions on the key prefix, and the server's memory.",
            )
        })
    }

    fn key_column(&self) -> Option<&str> {
        self.key_column.as_deref()
    }

    fn field_column(&self) -> Option<&str> {
        self.field_column.as_deref()
    }
}
