//! The `redis` connector: rows written to Redis strings, lists or hashes (sink), and
//! tables looked up by key (lookup, `CREATE TEMPORARY TABLE`).

mod lookup;
mod probe;
mod writer;

use crate::connector::{Completions, Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::lookup::LookupReader;
use crate::probe::Probe;
use crate::sink::SinkWriter;
use crate::spec::{MetadataKey, MetadataType, OptionSpec, ValueKind};
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic, FieldType};

/// The `redis` connector.
#[derive(Debug)]
pub struct Redis;

const PROFILE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("address", "/connection/address").exclusive_with(&["cluster.addresses"]),
    OptionSpec::at("cluster.addresses", "/connection/addresses").exclusive_with(&["address"]),
    OptionSpec::at("username", "/username"),
    OptionSpec::at("password", "/password"),
];

const SINK: &[&str] = &["sink"];
const STRING: &[&str] = &["string"];
const LIST: &[&str] = &["list"];
const HASH: &[&str] = &["hash"];
const TARGET: &str = "/connectorType/target";

// The key prefix and key column land under a different JSON name per target; the mapping
// picks the declaration whose `target` matches.
const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::selector(
        "type",
        &["sink", "lookup"],
        Some("sink"),
        "Whether rows are written (sink) or looked up by key (lookup; implied by CREATE TEMPORARY TABLE)",
    )
    .creates(&[("lookup", "/connectorType/lookup")]),
    OptionSpec::selector(
        "target",
        &["string", "list", "hash"],
        Some("string"),
        "The Redis data structure rows are written to",
    )
    .when("type", SINK),
    OptionSpec::at("target.key_prefix", "/connectorType/target/keyPrefix").when("target", STRING),
    OptionSpec::at("target.key_prefix", "/connectorType/target/listPrefix").when("target", LIST),
    OptionSpec::at("target.key_prefix", "/connectorType/target/hashKeyPrefix")
        .when("target", HASH),
    OptionSpec::at("target.key_column", "/connectorType/target/keyColumn")
        .when("target", STRING)
        .kind(ValueKind::Field),
    OptionSpec::at("target.key_column", "/connectorType/target/listKeyColumn")
        .when("target", LIST)
        .kind(ValueKind::Field),
    OptionSpec::at("target.key_column", "/connectorType/target/hashKeyColumn")
        .when("target", HASH)
        .kind(ValueKind::Field),
    OptionSpec::at("target.ttl_secs", "/connectorType/target/ttlSecs").when("target", STRING),
    OptionSpec::at("target.max_length", "/connectorType/target/maxLength").when("target", LIST),
    OptionSpec::at("target.operation", "/connectorType/target/operation")
        .when("target", LIST)
        .kind(ValueKind::Pascal),
    OptionSpec::at("target.field_column", "/connectorType/target/hashFieldColumn")
        .when("target", HASH)
        .kind(ValueKind::Field),
];

const METADATA: &[MetadataKey] = &[MetadataKey {
    key: "key",
    sql_type: MetadataType::Text,
    description: "The Redis key of a looked-up row (lookup tables)",
}];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "redis",
    name: "Redis",
    description: "Write rows to Redis strings, lists and hashes; look rows up by key",
    roles: Roles {
        source: false,
        sink: true,
        lookup: true,
    },
    testing: true,
    profile_schema: Some(include_str!("profile.json")),
    table_schema: include_str!("table.json"),
    profile_options: PROFILE_OPTIONS,
    table_options: TABLE_OPTIONS,
    metadata_keys: METADATA,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Redis {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        if table.pointer("/connectorType/lookup").is_some() {
            ConnectionType::Lookup
        } else {
            ConnectionType::Sink
        }
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        match cx.connection_type {
            ConnectionType::Lookup => lookup_rules(cx, &mut out),
            _ => sink_rules(cx, &mut out),
        }
        out
    }
    fn profile_description(&self, profile: &Value) -> String {
        match profile
            .pointer("/connection/addresses")
            .and_then(Value::as_array)
        {
            Some(nodes) => format!("cluster of {} nodes", nodes.len()),
            None => str_at(profile, "/connection/address")
                .unwrap_or_default()
                .to_string(),
        }
    }
    fn table_description(&self, _table: &Value, connection_type: ConnectionType) -> String {
        match connection_type {
            ConnectionType::Lookup => "RedisLookup".into(),
            _ => "RedisSink".into(),
        }
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe::connect(probe).await;
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        probe::test_table(probe).await;
    }
    async fn open_sink(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        probe::open_sink(probe).await
    }
    async fn open_lookup(&self, probe: &mut Probe<'_>) -> Option<Box<dyn LookupReader>> {
        probe::open_lookup(probe).await
    }
    async fn complete(&self, probe: &mut Probe<'_>) -> Option<Completions> {
        probe::key_prefixes(probe).await.map(|names| Completions {
            kind: "key prefix",
            names,
        })
    }
}

/// Key and field columns must be non-nullable TEXT columns of the table.
fn sink_rules(cx: &TableCheck<'_>, out: &mut Vec<Diagnostic>) {
    let columns = [
        (
            "target.key_column",
            ["keyColumn", "listKeyColumn", "hashKeyColumn"].as_slice(),
        ),
        ("target.field_column", ["hashFieldColumn"].as_slice()),
    ];
    for (key, names) in columns {
        let Some(col) = names
            .iter()
            .find_map(|n| str_at(cx.config, &format!("{TARGET}/{n}")))
        else {
            continue;
        };
        let problem = match cx.schema.field(col) {
            None if cx.schema.fields.is_empty() => None,
            None => Some(format!("table '{}' has no column '{col}'", cx.table)),
            Some(f) if f.field_type != FieldType::String => {
                Some(format!("column '{col}' is {}", f.field_type))
            }
            Some(f) if !f.required => Some(format!("column '{col}' is nullable")),
            Some(_) => None,
        };
        if let Some(p) = problem {
            out.push(
                Diagnostic::error(format!(
                    "option '{key}' must name a non-nullable TEXT column: {p}"
                ))
                .with_span(cx.span_of(key))
                .with_help(format!(
                    "Declare the column as {col} TEXT NOT NULL, or name another column."
                )),
            );
        }
    }
}

/// Every PRIMARY KEY column of a lookup table reads the Redis key.
fn lookup_rules(cx: &TableCheck<'_>, out: &mut Vec<Diagnostic>) {
    let help = "Declare the key as `name TEXT METADATA FROM 'key' PRIMARY KEY`.";
    if cx.schema.primary_keys.is_empty() {
        out.push(
            Diagnostic::error("a redis lookup table needs a PRIMARY KEY column that reads the key")
                .with_span(cx.statement_span)
                .with_help(help),
        );
    }
    for pk in &cx.schema.primary_keys {
        let ok = cx.schema.field(pk).is_some_and(|f| {
            f.field_type == FieldType::String && f.metadata_key.as_deref() == Some("key")
        });
        if !ok {
            out.push(
                Diagnostic::error(format!(
                    "primary key column '{pk}' of a redis lookup table must be TEXT METADATA FROM 'key'"
                ))
                .with_span(cx.statement_span)
                .with_help(help),
            );
        }
    }
}
