//! Stored records: decoding them with format-version checks (and teaching the redaction
//! path their secrets), shared by every store.

use crate::error::{CatalogError, Result};
use serde::de::DeserializeOwned;
use std::path::Path;
use tributary_types::{CURRENT_FORMAT_VERSION, ConnectionProfile, ConnectionTable, Definition};

/// Records that carry a format version.
pub(crate) trait Versioned {
    fn format_version(&self) -> u32;

    /// Teach the redaction path the secrets the record holds, as it is read.
    fn remember_secrets(&self) {}
}

impl Versioned for ConnectionProfile {
    fn format_version(&self) -> u32 {
        self.format_version
    }

    fn remember_secrets(&self) {
        ConnectionProfile::remember_secrets(self)
    }
}

impl Versioned for Definition {
    fn format_version(&self) -> u32 {
        self.format_version
    }
}

impl Versioned for ConnectionTable {
    fn format_version(&self) -> u32 {
        self.format_version
    }

    fn remember_secrets(&self) {
        ConnectionTable::remember_secrets(self)
    }
}

/// Decode the JSON record `what` stored under `key` in the catalog at `location`: a
/// record of a newer format is [`CatalogError::NewerFormat`], anything unreadable
/// [`CatalogError::Corrupt`].
pub(crate) fn decode_record<T: DeserializeOwned + Versioned>(
    location: &Path,
    what: &str,
    key: &str,
    bytes: &[u8],
) -> Result<T> {
    let newer = |found| CatalogError::NewerFormat {
        path: location.to_path_buf(),
        found,
        supported: CURRENT_FORMAT_VERSION,
    };
    match serde_json::from_slice::<T>(bytes) {
        Ok(record) if record.format_version() > CURRENT_FORMAT_VERSION => {
            Err(newer(record.format_version()))
        }
        Ok(record) => {
            // Whatever process stored it, its secrets are hidden from this one's output.
            record.remember_secrets();
            Ok(record)
        }
        Err(e) => {
            // A newer record may not fit this build's shape: say so rather than "corrupt".
            #[derive(serde::Deserialize)]
            struct Version {
                format_version: u32,
            }
            match serde_json::from_slice::<Version>(bytes) {
                Ok(v) if v.format_version > CURRENT_FORMAT_VERSION => Err(newer(v.format_version)),
                _ => Err(CatalogError::Corrupt {
                    path: location.to_path_buf(),
                    detail: format!("{what} '{key}' cannot be read: {e}"),
                }),
            }
        }
    }
}

/// A record as stored: its JSON text.
pub(crate) fn encode<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
        .map_err(|e| CatalogError::Storage(format!("cannot encode a record: {e}")))
}
