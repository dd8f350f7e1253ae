//! Looking rows up by key for a lookup join. A connector opens a [`LookupReader`] through
//! the same [`Probe`](crate::probe::Probe) its connection test uses; the reader fetches
//! the stored value of many keys in one round trip. Decoding the values is the caller's,
//! with the table's `BatchDecoder`, as for a source's messages.

use crate::probe::SampledMessage;
use crate::source::ReadFailure;
use std::fmt;

/// One open lookup table.
///
/// A reader holds its connection; dropping it closes the connection.
#[async_trait::async_trait]
pub trait LookupReader: Send + fmt::Debug {
    /// The row stored under each key, in the order of `keys`: its payload with the key as
    /// metadata, or `None` where nothing is stored.
    async fn fetch(&mut self, keys: &[String]) -> Result<Vec<Option<SampledMessage>>, ReadFailure>;
}
