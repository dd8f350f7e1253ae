//! Wire formats, bad-data policy and framing of a connection table, serialised in Arroyo's
//! shapes (`{"type": "json", ...}`, `{"behavior": "drop"}`, `{"method": "newline"}`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// How JSON timestamps are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimestampFormat {
    /// RFC 3339 strings.
    #[default]
    #[serde(alias = "RFC3339")]
    Rfc3339,
    /// Milliseconds since the epoch, as numbers.
    #[serde(alias = "UnixMillis")]
    UnixMillis,
}

/// How JSON decimals are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DecimalEncoding {
    /// As JSON numbers.
    #[default]
    Number,
    /// As strings.
    String,
    /// As base64 big-endian unscaled bytes (Debezium's convention).
    Bytes,
}

/// Compression of JSON files (filesystem only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum JsonCompression {
    /// Plain text.
    #[default]
    Uncompressed,
    /// gzip.
    Gzip,
}

/// The `json` format's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct JsonFormat {
    /// Messages carry the Confluent wire-format header.
    pub confluent_schema_registry: bool,
    /// A pinned registry schema id.
    #[serde(
        alias = "confluent_schema_version",
        skip_serializing_if = "Option::is_none"
    )]
    pub schema_id: Option<u32>,
    /// Sinks embed a Kafka-Connect-style schema in every message.
    pub include_schema: bool,
    /// Debezium before/after/op envelope.
    pub debezium: bool,
    /// The whole message goes into one JSON column `value`.
    pub unstructured: bool,
    /// Timestamp encoding.
    pub timestamp_format: TimestampFormat,
    /// Decimal encoding.
    pub decimal_encoding: DecimalEncoding,
    /// Compression (filesystem only).
    pub compression: JsonCompression,
}

/// Parquet compression codecs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ParquetCompression {
    /// No compression.
    Uncompressed,
    /// Snappy.
    Snappy,
    /// gzip.
    Gzip,
    /// Zstandard (the default).
    #[default]
    Zstd,
    /// LZ4 frame.
    Lz4,
    /// Raw LZ4.
    Lz4Raw,
}

/// The `parquet` format's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ParquetFormat {
    /// Compression codec.
    pub compression: ParquetCompression,
    /// Target row-group size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_group_bytes: Option<u64>,
}

/// The `avro` format's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct AvroFormat {
    /// Messages carry the Confluent wire-format header (a 0 byte and a 4-byte schema id).
    pub confluent_schema_registry: bool,
    /// Messages are bare datums written with the table's schema (no container header).
    pub raw_datums: bool,
    /// The whole record goes into one JSON column `value`.
    pub into_unstructured_json: bool,
    /// The table's Avro schema, which decoding reads into.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reader_schema: Option<String>,
    /// The registry id of the table's schema, when it came from the registry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_id: Option<u32>,
}

/// The `protobuf` format's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ProtobufFormat {
    /// The whole message goes into one JSON column `value`.
    pub into_unstructured_json: bool,
    /// The fully-qualified message name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_name: Option<String>,
    /// The compiled `FileDescriptorSet` (with imports), as bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compiled_schema: Option<Vec<u8>>,
    /// Messages carry the Confluent wire-format header (magic byte, schema id and
    /// message indexes).
    pub confluent_schema_registry: bool,
    /// Each message is preceded by its length as a varint.
    pub length_delimited: bool,
    /// The registry id of the table's schema, when it came from the registry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_id: Option<u32>,
}

/// A table's wire format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Format {
    /// JSON documents (also `debezium_json`, which sets `debezium`).
    Json(JsonFormat),
    /// Avro records.
    Avro(AvroFormat),
    /// Protocol Buffers messages.
    Protobuf(ProtobufFormat),
    /// Parquet files.
    Parquet(ParquetFormat),
    /// Each message is one UTF-8 string in column `value`.
    RawString {},
    /// Each message is one byte string in column `value`.
    RawBytes {},
}

impl Format {
    /// The SQL name of this format (`debezium_json` for Debezium JSON).
    pub fn sql_name(&self) -> &'static str {
        match self {
            Format::Json(j) if j.debezium => "debezium_json",
            Format::Json(_) => "json",
            Format::Avro(_) => "avro",
            Format::Protobuf(_) => "protobuf",
            Format::Parquet(_) => "parquet",
            Format::RawString {} => "raw_string",
            Format::RawBytes {} => "raw_bytes",
        }
    }

    /// The option that reads each message whole into one JSON `value` column, when set.
    pub fn unstructured_option(&self) -> Option<&'static str> {
        match self {
            Format::Json(j) if j.unstructured => Some("json.unstructured"),
            Format::Avro(a) if a.into_unstructured_json => Some("avro.into_unstructured_json"),
            Format::Protobuf(p) if p.into_unstructured_json => {
                Some("protobuf.into_unstructured_json")
            }
            _ => None,
        }
    }

    /// Whether rows are updates (Debezium) rather than appends.
    pub fn is_updating(&self) -> bool {
        matches!(self, Format::Json(j) if j.debezium)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.sql_name())
    }
}

/// What to do with a record that does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "behavior", rename_all = "snake_case")]
pub enum BadData {
    /// Stop with an error (the default).
    #[default]
    Fail,
    /// Skip it and count it.
    Drop,
}

/// How a byte stream is split into messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Framing {
    /// One message per line.
    Newline {
        /// Longest line accepted, in bytes.
        max_line_length: Option<u64>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arroyo_json_shapes() {
        let f = Format::Json(JsonFormat {
            debezium: true,
            ..Default::default()
        });
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["type"], "json");
        assert_eq!(v["debezium"], true);
        assert_eq!(f.sql_name(), "debezium_json");
        assert_eq!(
            serde_json::to_string(&BadData::Drop).unwrap(),
            r#"{"behavior":"drop"}"#
        );
        let fr: Framing =
            serde_json::from_str(r#"{"method":"newline","max_line_length":null}"#).unwrap();
        assert_eq!(
            fr,
            Framing::Newline {
                max_line_length: None
            }
        );
        let raw: Format = serde_json::from_str(r#"{"type":"raw_string"}"#).unwrap();
        assert_eq!(raw, Format::RawString {});
    }
}
