//! The options every connection table and profile accepts, whatever the connector.

/// A generic option and what it does.
#[derive(Debug, Clone, Copy)]
pub struct GenericOption {
    /// The SQL key.
    pub key: &'static str,
    /// The value type.
    pub value_type: &'static str,
    /// The default, if any.
    pub default: Option<&'static str>,
    /// What it does.
    pub description: &'static str,
}

/// Options of every `CREATE TABLE`, besides the format options.
pub const GENERIC_TABLE_OPTIONS: &[GenericOption] = &[
    GenericOption {
        key: "connector",
        value_type: "string",
        default: None,
        description: "The connector: kafka, filesystem, ... (SHOW CONNECTORS lists them). Required.",
    },
    GenericOption {
        key: "connection_profile",
        value_type: "string",
        default: None,
        description: "The name of a connection profile holding the connection settings.",
    },
    GenericOption {
        key: "event_time_field",
        value_type: "column name",
        default: None,
        description: "Deprecated: the event-time column; write WATERMARK FOR column instead.",
    },
    GenericOption {
        key: "watermark_field",
        value_type: "column name",
        default: None,
        description: "Deprecated: a column holding the watermark; write WATERMARK FOR column AS expression instead.",
    },
    GenericOption {
        key: "idle_micros",
        value_type: "integer",
        default: Some("300000000"),
        description: "Microseconds without data after which a source partition is idle; 0 or less disables idleness.",
    },
    GenericOption {
        key: "schema_registry.version",
        value_type: "integer or 'latest'",
        default: Some("latest"),
        description: "With a registry-framed format and no schema in the statement: the version of the subject to read the schema from.",
    },
    GenericOption {
        key: "schema_registry.id",
        value_type: "integer",
        default: None,
        description: "With a registry-framed format and no schema in the statement: the registry id of the schema to use (not with schema_registry.version).",
    },
    GenericOption {
        key: "lookup.cache.max_bytes",
        value_type: "integer",
        default: None,
        description: "Lookup tables: the most bytes the lookup cache holds.",
    },
    GenericOption {
        key: "lookup.cache.ttl",
        value_type: "interval",
        default: None,
        description: "Lookup tables: how long a cached lookup stays valid.",
    },
];

/// Options of every `CREATE CONNECTION PROFILE`, besides the connector's own.
pub const GENERIC_PROFILE_OPTIONS: &[GenericOption] = &[
    GenericOption {
        key: "connector",
        value_type: "string",
        default: None,
        description: "The connector the profile is for. Required.",
    },
    GenericOption {
        key: "validate",
        value_type: "boolean",
        default: Some("true"),
        description: "Test the connection before storing the profile; false stores it without a test (for offline setups).",
    },
];
