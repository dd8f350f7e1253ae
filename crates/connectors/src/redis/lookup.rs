//! Redis as a lookup table: the value of each key (a string written by a `string`
//! target, or by any other client) is the row, decoded with the table's format, and the
//! key itself is the `METADATA FROM 'key'` column. A batch of keys is one `MGET`, in
//! chunks so that no single command grows without bound.

use crate::lookup::LookupReader;
use crate::probe::{MetadataValue, SampledMessage};
use crate::source::ReadFailure;
use ::redis::aio::MultiplexedConnection;

/// The most keys one `MGET` asks for.
const KEYS_PER_COMMAND: usize = 1_000;

/// A connection fetching rows by key.
pub(crate) struct RedisLookup {
    conn: MultiplexedConnection,
}

impl std::fmt::Debug for RedisLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLookup").finish_non_exhaustive()
    }
}

impl RedisLookup {
    pub(crate) fn new(conn: MultiplexedConnection) -> Self {
        Self { conn }
    }
}

#[async_trait::async_trait]
impl LookupReader for RedisLookup {
    async fn fetch(&mut self, keys: &[String]) -> Result<Vec<Option<SampledMessage>>, ReadFailure> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(KEYS_PER_COMMAND) {
            let values: Vec<Option<Vec<u8>>> = ::redis::cmd("MGET")
                .arg(chunk)
                .query_async(&mut self.conn)
                .await
                .map_err(refused)?;
            out.extend(chunk.iter().zip(values).map(|(key, value)| {
                value.map(|payload| SampledMessage {
                    payload,
                    metadata: vec![("key", MetadataValue::Text(key.as_str().into()))],
                    event_time: None,
                })
            }));
        }
        Ok(out)
    }
}

fn refused(e: ::redis::RedisError) -> ReadFailure {
    ReadFailure::new(
        format!("the server refused a lookup: {e}"),
        "Check the user's permissions on the keys, and that the server is reachable.",
    )
}
