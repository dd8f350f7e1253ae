//! The format registry: every format and every option it accepts, with allowed values,
//! defaults and descriptions. `DESCRIBE CONNECTOR` and suggestions read it; nothing else
//! lists format options.

/// One format option.
#[derive(Debug, Clone, Copy)]
pub struct FormatOption {
    /// The SQL key, `json.timestamp_format`.
    pub key: &'static str,
    /// `boolean`, `string`, `data size`, `integer`.
    pub value_type: &'static str,
    /// Allowed values, when an enumeration.
    pub allowed: &'static [&'static str],
    /// The default, as text.
    pub default: Option<&'static str>,
    /// What it does.
    pub description: &'static str,
}

/// A format and its options.
#[derive(Debug, Clone, Copy)]
pub struct FormatSpec {
    /// The `format = '...'` value.
    pub name: &'static str,
    /// What it is.
    pub description: &'static str,
    /// Its options.
    pub options: &'static [FormatOption],
}

const JSON_OPTIONS: &[FormatOption] = &[
    FormatOption {
        key: "json.confluent_schema_registry",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Messages carry the Confluent Schema Registry wire-format header (magic byte and schema id).",
    },
    FormatOption {
        key: "json.include_schema",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Sinks embed a Kafka Connect style schema in every message.",
    },
    FormatOption {
        key: "json.unstructured",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Read each message whole into a single JSON column named value.",
    },
    FormatOption {
        key: "json.timestamp_format",
        value_type: "string",
        allowed: &["rfc3339", "unix_millis"],
        default: Some("rfc3339 (unix_millis for debezium_json)"),
        description: "How timestamps are encoded.",
    },
    FormatOption {
        key: "json.decimal_encoding",
        value_type: "string",
        allowed: &["number", "string", "bytes"],
        default: Some("number (bytes for debezium_json)"),
        description: "How decimals are encoded.",
    },
    FormatOption {
        key: "json.compression",
        value_type: "string",
        allowed: &["uncompressed", "gzip"],
        default: Some("uncompressed"),
        description: "Compression of JSON files; only the filesystem connector supports gzip.",
    },
    FormatOption {
        key: "json.schema",
        value_type: "string",
        allowed: &[],
        default: None,
        description: "An inline JSON Schema describing the messages; the columns come from it (or, when declared too, must be a compatible subset).",
    },
];

const PARQUET_OPTIONS: &[FormatOption] = &[
    FormatOption {
        key: "parquet.compression",
        value_type: "string",
        allowed: &["uncompressed", "snappy", "gzip", "zstd", "lz4", "lz4_raw"],
        default: Some("zstd"),
        description: "Compression codec of written Parquet files.",
    },
    FormatOption {
        key: "parquet.row_group_size",
        value_type: "data size",
        allowed: &[],
        default: None,
        description: "Target row-group size, such as '128mb'; must be greater than 0.",
    },
];

const AVRO_OPTIONS: &[FormatOption] = &[
    FormatOption {
        key: "avro.confluent_schema_registry",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Messages carry the Confluent Schema Registry wire-format header.",
    },
    FormatOption {
        key: "avro.raw_datums",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Messages are bare Avro datums written with the table's schema, without a container header.",
    },
    FormatOption {
        key: "avro.into_unstructured_json",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Decode the whole record into a single JSON column named value.",
    },
    FormatOption {
        key: "avro.schema",
        value_type: "string",
        allowed: &[],
        default: None,
        description: "An inline Avro schema; the columns come from it (or, when declared too, must be a compatible subset).",
    },
    FormatOption {
        key: "avro.schema_file",
        value_type: "string",
        allowed: &[],
        default: None,
        description: "A path to an Avro schema file (.avsc), read when the table is created.",
    },
];

const PROTOBUF_OPTIONS: &[FormatOption] = &[
    FormatOption {
        key: "protobuf.descriptor_file",
        value_type: "string",
        allowed: &[],
        default: None,
        description: "A path to a compiled FileDescriptorSet (protoc --include_imports --descriptor_set_out), read when the table is created.",
    },
    FormatOption {
        key: "protobuf.schema_file",
        value_type: "string",
        allowed: &[],
        default: None,
        description: "A path to a .proto file, compiled when the table is created (imports are resolved from its directory; no protoc needed).",
    },
    FormatOption {
        key: "protobuf.schema",
        value_type: "string",
        allowed: &[],
        default: None,
        description: "The .proto source itself, compiled when the table is created; its imports are given as 'protobuf.import.<path>' options (the REST API's protobuf schema definition).",
    },
    FormatOption {
        key: "protobuf.import.",
        value_type: "string",
        allowed: &[],
        default: None,
        description: "The source of a file that 'protobuf.schema' imports, keyed by its import path: 'protobuf.import.common/money.proto'.",
    },
    FormatOption {
        key: "protobuf.message",
        value_type: "string",
        allowed: &[],
        default: None,
        description: "The fully-qualified message name, such as 'shop.v1.Order'.",
    },
    FormatOption {
        key: "protobuf.into_unstructured_json",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Decode the whole message into a single JSON column named value.",
    },
    FormatOption {
        key: "protobuf.confluent_schema_registry",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Messages carry the Confluent Schema Registry wire-format header.",
    },
    FormatOption {
        key: "protobuf.length_delimited",
        value_type: "boolean",
        allowed: &[],
        default: Some("false"),
        description: "Each message is preceded by its length as a varint.",
    },
];

/// Every format, in the order `DESCRIBE CONNECTOR` lists them.
pub const FORMATS: &[FormatSpec] = &[
    FormatSpec {
        name: "json",
        description: "JSON documents, one per message.",
        options: JSON_OPTIONS,
    },
    FormatSpec {
        name: "debezium_json",
        description: "Debezium change events (before/after/op) in JSON; needs a PRIMARY KEY on sources.",
        options: JSON_OPTIONS,
    },
    FormatSpec {
        name: "raw_string",
        description: "Each message is one UTF-8 string in a TEXT column named value.",
        options: &[],
    },
    FormatSpec {
        name: "raw_bytes",
        description: "Each message is one byte string in a BYTEA column named value.",
        options: &[],
    },
    FormatSpec {
        name: "parquet",
        description: "Parquet files (filesystem connectors).",
        options: PARQUET_OPTIONS,
    },
    FormatSpec {
        name: "avro",
        description: "Avro records, optionally through a Confluent Schema Registry.",
        options: AVRO_OPTIONS,
    },
    FormatSpec {
        name: "protobuf",
        description: "Protocol Buffers messages from a compiled descriptor set.",
        options: PROTOBUF_OPTIONS,
    },
];

/// Options that apply to every format.
pub const GENERIC_FORMAT_OPTIONS: &[FormatOption] = &[
    FormatOption {
        key: "format",
        value_type: "string",
        allowed: &[
            "json",
            "debezium_json",
            "raw_string",
            "raw_bytes",
            "parquet",
            "avro",
            "protobuf",
        ],
        default: None,
        description: "The wire format of messages or files.",
    },
    FormatOption {
        key: "bad_data",
        value_type: "string",
        allowed: &["fail", "drop"],
        default: Some("fail"),
        description: "What to do with a record that does not decode: stop with an error, or drop and count it.",
    },
    FormatOption {
        key: "framing",
        value_type: "string",
        allowed: &["newline"],
        default: None,
        description: "How a byte stream is split into messages.",
    },
    FormatOption {
        key: "framing.newline.max_length",
        value_type: "integer",
        allowed: &[],
        default: None,
        description: "The longest line accepted with newline framing, in bytes.",
    },
];

/// The spec of a format by name.
pub fn format_spec(name: &str) -> Option<&'static FormatSpec> {
    FORMATS.iter().find(|f| f.name == name)
}

/// Every format-related key (generic and per format), for suggestions.
pub fn all_format_keys() -> impl Iterator<Item = &'static str> {
    GENERIC_FORMAT_OPTIONS
        .iter()
        .chain(JSON_OPTIONS)
        .chain(PARQUET_OPTIONS)
        .chain(AVRO_OPTIONS)
        .chain(PROTOBUF_OPTIONS)
        .map(|o| o.key)
}
