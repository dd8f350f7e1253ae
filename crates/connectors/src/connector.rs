//! The [`Connector`] trait: everything Tributary knows about one kind of external system.

use crate::lookup::LookupReader;
use crate::mapping::MappedOptions;
use crate::probe::{Probe, Stage, TestCode};
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use crate::spec::{MetadataKey, OptionSpec, PartitionTerm};
use serde_json::Value;
use std::fmt::Debug;
use tributary_types::{ConnectionSchema, ConnectionType, Diagnostic, SourceField, Span};

/// Which roles a connector can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Roles {
    /// Can be read.
    pub source: bool,
    /// Can be written.
    pub sink: bool,
    /// Can be looked up by key.
    pub lookup: bool,
}

/// What a connector declares about itself, as one constant per connector: identity,
/// roles, schemas and option mappings. Behaviour (checks, descriptions) stays in
/// [`Connector`] methods.
#[derive(Debug, Clone, Copy)]
pub struct ConnectorInfo {
    /// The id used in `connector = '...'`.
    pub id: &'static str,
    /// A display name.
    pub name: &'static str,
    /// One sentence on what it connects to.
    pub description: &'static str,
    /// The roles it can play.
    pub roles: Roles,
    /// Whether TEST statements reach the system from here: the connector has a live
    /// test (a test in `tests/testing_flag.rs` checks this against what its test does).
    /// `SHOW CONNECTORS` and the REST `/connectors` answer show it.
    pub testing: bool,
    /// The profile JSON Schema, for connectors that take a profile.
    pub profile_schema: Option<&'static str>,
    /// The table JSON Schema.
    pub table_schema: &'static str,
    /// The SQL keys of the profile and where they go.
    pub profile_options: &'static [OptionSpec],
    /// The SQL keys of the table and where they go.
    pub table_options: &'static [OptionSpec],
    /// The keys `METADATA FROM` may name.
    pub metadata_keys: &'static [MetadataKey],
    /// Whether `format` must be set.
    pub requires_format: bool,
    /// Whether `json.compression = 'gzip'` is supported.
    pub json_compression: bool,
}

impl ConnectorInfo {
    /// The defaults a connector's constant starts from (`..ConnectorInfo::BASE`): no
    /// profile, no testing, no metadata, no gzip JSON, a format required. Every connector
    /// sets its own id, name, description, roles, table schema and table options.
    pub const BASE: ConnectorInfo = ConnectorInfo {
        id: "",
        name: "",
        description: "",
        roles: Roles {
            source: false,
            sink: false,
            lookup: false,
        },
        testing: false,
        profile_schema: None,
        table_schema: "{}",
        profile_options: &[],
        table_options: &[],
        metadata_keys: &[],
        requires_format: true,
        json_compression: false,
    };
}

impl Roles {
    /// Read only.
    pub const SOURCE: Roles = Roles {
        source: true,
        sink: false,
        lookup: false,
    };
    /// Write only.
    pub const SINK: Roles = Roles {
        source: false,
        sink: true,
        lookup: false,
    };
    /// Read and write.
    pub const SOURCE_AND_SINK: Roles = Roles {
        source: true,
        sink: true,
        lookup: false,
    };
}

/// What a connector's cross-field table checks can see.
#[derive(Debug, Clone, Copy)]
pub struct TableCheck<'a> {
    /// The table's name.
    pub table: &'a str,
    /// The mapped table config.
    pub config: &'a Value,
    /// The profile config (stored or inline), if the connector has one.
    pub profile: Option<&'a Value>,
    /// Fields, format and policies.
    pub schema: &'a ConnectionSchema,
    /// What the table is.
    pub connection_type: ConnectionType,
    /// The options as written, with their spans.
    pub options: &'a MappedOptions,
    /// Where the statement is.
    pub statement_span: Span,
}

impl TableCheck<'_> {
    /// The span of an option's value, or of the statement when it was not written.
    pub fn span_of(&self, key: &str) -> Span {
        self.options.span_of(key, self.statement_span)
    }
}

/// What a connector's cross-field profile checks can see.
#[derive(Debug, Clone, Copy)]
pub struct ProfileCheck<'a> {
    /// The mapped profile config.
    pub config: &'a Value,
    /// The options as written, with their spans.
    pub options: &'a MappedOptions,
    /// Where the statement is.
    pub statement_span: Span,
    /// What the settings are for, as messages name it (`connection profile 'prod'`).
    pub object: &'a str,
}

impl ProfileCheck<'_> {
    /// The span of an option's value, or of the statement when it was not written.
    pub fn span_of(&self, key: &str) -> Span {
        self.options.span_of(key, self.statement_span)
    }
}

/// One kind of external system. Implementations live in their own folder with their JSON
/// Schemas and are listed once in the registry; nothing else branches on a connector's id.
#[async_trait::async_trait]
pub trait Connector: Send + Sync + Debug {
    /// What the connector declares about itself.
    fn info(&self) -> &'static ConnectorInfo;
    /// The id used in `connector = '...'`.
    fn id(&self) -> &'static str {
        self.info().id
    }
    /// A display name.
    fn name(&self) -> &'static str {
        self.info().name
    }
    /// One sentence on what it connects to.
    fn description(&self) -> &'static str {
        self.info().description
    }
    /// The roles it can play.
    fn roles(&self) -> Roles {
        self.info().roles
    }
    /// Whether connection tests are supported.
    fn supports_testing(&self) -> bool {
        self.info().testing
    }
    /// The profile JSON Schema, for connectors that take a profile.
    fn profile_schema(&self) -> Option<&'static str> {
        self.info().profile_schema
    }
    /// The table JSON Schema.
    fn table_schema(&self) -> &'static str {
        self.info().table_schema
    }
    /// The SQL keys of the profile and where they go.
    fn profile_options(&self) -> &'static [OptionSpec] {
        self.info().profile_options
    }
    /// The SQL keys of the table and where they go.
    fn table_options(&self) -> &'static [OptionSpec] {
        self.info().table_options
    }
    /// The keys `METADATA FROM` may name.
    fn metadata_keys(&self) -> &'static [MetadataKey] {
        self.info().metadata_keys
    }
    /// The fixed schema of connectors that supply their own (impulse, nexmark).
    fn fixed_schema(&self) -> Option<Vec<SourceField>> {
        None
    }
    /// Whether `format` must be set.
    fn requires_format(&self) -> bool {
        self.info().requires_format
    }
    /// Adjust the declared columns to what the system stores (delta and iceberg keep
    /// timestamps in microseconds). Runs before any check sees the columns.
    fn adjust_fields(&self, _fields: &mut [SourceField]) {}
    /// The format a table gets when it names none (iceberg: parquet).
    fn default_format(&self) -> Option<tributary_types::Format> {
        None
    }
    /// Whether `json.compression = 'gzip'` is supported.
    fn supports_json_compression(&self) -> bool {
        self.info().json_compression
    }
    /// Source, sink or lookup, from the table config.
    fn connection_type(&self, table: &Value) -> ConnectionType;
    /// Cross-field profile rules a schema cannot express.
    fn check_profile(&self, _cx: &ProfileCheck<'_>) -> Vec<Diagnostic> {
        vec![]
    }
    /// Cross-field table rules a schema cannot express.
    fn check_table(&self, _cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        vec![]
    }
    /// Fold `PARTITIONED BY (...)` into the table config. `None`: the connector has no
    /// partition clause (the caller reports it); otherwise the problems found.
    fn partition_by(
        &self,
        _terms: &[PartitionTerm],
        _config: &mut Value,
    ) -> Option<Vec<Diagnostic>> {
        None
    }
    /// A one-line description of a profile (for Kafka, its servers).
    fn profile_description(&self, _profile: &Value) -> String {
        String::new()
    }
    /// A one-line description of a table, `KafkaSource<orders>`.
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String;
    /// Test the connection settings against the live system: resolve, connect,
    /// authenticate. Connectors whose system cannot be reached from a test machine (cloud
    /// services) say so; their configuration has been checked already.
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        not_testable(self.info(), probe);
    }
    /// Test a table: the connection, then locate its topic/stream/path and read up to
    /// `probe.limit` messages (sources), or check that it can write (sinks).
    async fn test_table(&self, probe: &mut Probe<'_>) {
        self.test_connection(probe).await;
    }
    /// The names a user can pick for a table of this profile (Kafka topics, Redis key
    /// prefixes), found by connecting; `None` when the connector has nothing to list or
    /// the connection failed (the probe says why).
    async fn complete(&self, _probe: &mut Probe<'_>) -> Option<Completions> {
        None
    }
    /// Where a source's records get their event time when the table declares no
    /// WATERMARK (Arroyo's hidden `_timestamp`): a phrase `DESCRIBE` and the console
    /// show. A reader that gives a message no time of its own leaves the time it is
    /// read, which this default says.
    fn record_time(&self, _table: &Value) -> &'static str {
        "the time each record is read"
    }
    /// Whether a source table ends on its own (files, a generator with a count), so a
    /// query may read it to the end; an unbounded one needs a `LIMIT` or a preview bound.
    fn bounded(&self, _table: &Value) -> bool {
        false
    }
    /// Whether several readers may share the source, each taking some of its partitions
    /// (`Probe::split`), so a query reads it in parallel streams.
    fn splits(&self, _table: &Value) -> bool {
        false
    }
    /// Whether reading or writing the table stays on this machine (a generator, local
    /// files, stdout), so an offline session may run queries over it.
    fn stays_local(&self, _table: &Value) -> bool {
        false
    }
    /// The local file or directory a source table reads (its `path` option, as
    /// written), which a confined session reads only where its operator allows;
    /// `None` for tables that read no local files.
    fn local_read_path<'t>(&self, _table: &'t Value) -> Option<&'t str> {
        None
    }
    /// Whether writing the table creates or changes files on this machine, which a
    /// session allows only when told to (as for `COPY ... TO`).
    fn writes_local_files(&self, _table: &Value) -> bool {
        false
    }
    /// Open a reader of a source table for a query: resolve and connect as the table's
    /// test does, then hand back the reader; `None` when that failed (the probe says at
    /// which stage and why). `probe.limit` is the most messages the query will read, when
    /// it is known.
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        probe.fail(
            Stage::Read,
            TestCode::Unsupported,
            format!("queries cannot read connector '{}' yet", self.info().id),
            "Use TEST TABLE to read sample messages from it.",
        );
        None
    }
    /// Open a lookup table for a lookup join: connect as the table's test does, then hand
    /// back the reader of rows by key; `None` when that failed (the probe says why).
    async fn open_lookup(&self, probe: &mut Probe<'_>) -> Option<Box<dyn LookupReader>> {
        probe.fail(
            Stage::Read,
            TestCode::Unsupported,
            format!(
                "queries cannot look rows up in connector '{}'",
                self.info().id
            ),
            "Lookup tables are redis tables created with CREATE TEMPORARY TABLE.",
        );
        None
    }
    /// Open a writer of a sink table for `INSERT INTO`: resolve and connect as the
    /// table's test does, then hand back the writer; `None` when that failed (the probe
    /// says at which stage and why).
    async fn open_sink(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        probe.fail(
            Stage::Write,
            TestCode::Unsupported,
            format!("queries cannot write connector '{}' yet", self.info().id),
            "EXPLAIN INSERT INTO ... shows the plan; blackhole tables can be written.",
        );
        None
    }
}

/// Names found for completion, and what they are (`topic`, `key prefix`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completions {
    /// What the names are.
    pub kind: &'static str,
    /// The names, sorted.
    pub names: Vec<String>,
}

/// The event of a connector without a live test.
fn not_testable(info: &ConnectorInfo, probe: &mut Probe<'_>) {
    let why = if info.testing {
        format!(
            "live testing of connector '{}' is not implemented yet; its configuration was checked",
            info.id
        )
    } else {
        format!(
            "connector '{}' is tested against its real endpoint only; its configuration was checked",
            info.id
        )
    };
    probe.skip(Stage::Connect, TestCode::NotTestable, why);
}

/// The string at `pointer` in `v`, if any.
pub fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// Source when the table config has a value at `pointer` (a source-only setting), sink
/// otherwise: how connectors with a source/sink variant tell them apart.
pub(crate) fn source_if_set(table: &Value, pointer: &str) -> ConnectionType {
    if table.pointer(pointer).is_some() {
        ConnectionType::Source
    } else {
        ConnectionType::Sink
    }
}

/// Sink when the table config has a value at `pointer` (a sink-only setting), source
/// otherwise.
pub(crate) fn sink_if_set(table: &Value, pointer: &str) -> ConnectionType {
    match source_if_set(table, pointer) {
        ConnectionType::Source => ConnectionType::Sink,
        _ => ConnectionType::Source,
    }
}
