//! `CREATE [TEMPORARY] TABLE ... WITH (...)`: steps 1-9 of the option pipeline.

use super::columns::{Columns, build_columns};
use super::generic::GENERIC_TABLE_OPTIONS;
use super::profile::{connector_option, finish, profile_not_found};
use super::registry::FetchedSchema;
use super::schema_def::apply_schema;
use super::unknown::report_unknown;
use crate::parser::ast::CreateTable;
use datafusion::execution::SessionState;
use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Value as SqlValue,
};
use tributary_catalog::{CatalogStore, new_table_id, now_micros};
use tributary_connectors::{
    MapRequest, MappedOptions, PartitionArg, PartitionTerm, RegisteredConnector, TableCheck,
    Target, describe, map_options,
};
use tributary_formats::{all_format_keys, format_from_options};
use tributary_types::options::quote_key;
use tributary_types::{
    CURRENT_FORMAT_VERSION, ConnectionProfile, ConnectionSchema, ConnectionTable, ConnectionType,
    Diagnostic, FieldType, Format, OptionValue, SourceField, Span, SqlOption, WithOptions,
    parse_interval_micros,
};

/// Validate a table definition into a record (not yet stored), with its warnings.
pub(crate) fn build_table(
    store: &dyn CatalogStore,
    state: &SessionState,
    stmt: &CreateTable,
    fetched: Option<FetchedSchema>,
) -> Result<(ConnectionTable, Vec<Diagnostic>), Vec<Diagnostic>> {
    let name = &stmt.name.value;
    if !stmt.has_with {
        return Err(vec![
            Diagnostic::error(format!("table '{name}' has no WITH clause"))
                .with_span(stmt.name.span)
                .with_help("Connection tables say where their data lives: add WITH (connector = '...', ...)."),
        ]);
    }
    let with_span = stmt.with_span;
    // 1. Parse: duplicates are reported and dropped.
    let (mut opts, mut diags) = WithOptions::new(stmt.options.clone());
    // 2. Generic options.
    let Some(entry) = connector_option(&mut opts, with_span, &mut diags) else {
        return Err(diags);
    };
    let c = entry.connector;
    let named_profile = opts.contains("connection_profile");
    let profile = resolve_profile(store, entry, &mut opts, &mut diags);
    let mut formats = format_from_options(&mut opts, &mut diags);
    registry_pins(&mut opts, formats.format.as_ref(), &mut diags);
    let registry = match fetched {
        Some(f) if formats.schema.is_none() => {
            formats.schema = Some(f.source);
            Some(f.origin)
        }
        _ => None,
    };
    let event_time_field = take_or_report(opts.take_field("event_time_field"), &mut diags);
    if let Some((_, s)) = &event_time_field {
        diags.push(
            Diagnostic::warning("option 'event_time_field' is deprecated")
                .with_span(*s)
                .with_help(
                    "Declare the event time with WATERMARK FOR column inside the column list.",
                ),
        );
    }
    let watermark_field = take_or_report(opts.take_field("watermark_field"), &mut diags);
    let idle_micros = take_or_report(opts.take_i64("idle_micros"), &mut diags).map(|(v, _)| v);
    lookup_cache_options(stmt.temporary, &mut opts, &mut diags);
    // A temporary table is a lookup table; `type` may say so but nothing else.
    if stmt.temporary
        && let Some(o) = opts.peek("type")
    {
        let t = o.value.as_text();
        if t != "lookup" {
            diags.push(
                Diagnostic::error(format!("a temporary table cannot have type '{t}'"))
                    .with_span(o.value_span)
                    .with_help(
                        "Temporary tables are lookup tables; remove 'type' or set it to 'lookup'.",
                    ),
            );
        }
        opts.take("type");
    }
    // Connectors without a `type` option still accept the one role they play.
    let declared_type = if stmt.temporary || has_type_option(entry) {
        None
    } else {
        declared_role(&mut opts, &mut diags)
    };
    // Connectors with a lookup variant select it with `type`; a temporary table implies it.
    if stmt.temporary && has_lookup_selector(entry) {
        opts.supply(SqlOption {
            key: "type".into(),
            key_span: stmt.name.span,
            value: OptionValue::String("lookup".into()),
            value_span: stmt.name.span,
        });
    }
    // 3-4. Connection settings: from the profile, or inline.
    let inline_settings = if named_profile && profile.is_none() {
        // The profile could not be used (reported above); its settings are not expected inline.
        for spec in c.profile_options() {
            opts.take(spec.key);
        }
        None
    } else {
        connection_settings(entry, profile.as_ref(), &mut opts, with_span, &mut diags)
    };
    // 4-5. Table options, mapped and validated against the schema.
    if stmt.temporary && !c.roles().lookup {
        check_role(entry, ConnectionType::Lookup, stmt, &mut diags);
        return Err(diags);
    }
    let req = MapRequest {
        connector: c.id(),
        object: "table",
        specs: c.table_options(),
        schema: &entry.table_schema,
        missing_span: with_span,
        missing_hint: None,
    };
    let mut mapped = map_options(req, &mut opts, &mut diags);
    // 6. Unknown options.
    let candidates = || {
        let mut candidates: Vec<String> = describe::all_keys(entry);
        if profile.is_some() {
            let profile_keys: Vec<&str> = c.profile_options().iter().map(|s| s.key).collect();
            candidates.retain(|k| !profile_keys.contains(&k.as_str()));
        }
        candidates.extend(all_format_keys().map(str::to_string));
        candidates.extend(GENERIC_TABLE_OPTIONS.iter().map(|g| g.key.to_string()));
        candidates
    };
    report_unknown(&opts, "table", c.id(), candidates, &mut diags);
    // 7. Schema.
    let mut cols = build_columns(state, stmt, c, &mut diags);
    let mut format = formats.format.clone().or_else(|| c.default_format());
    let definition = formats
        .schema
        .as_ref()
        .and_then(|source| apply_schema(source, format.as_mut(), &mut cols, &mut diags));
    if let (Some(r), Some(f)) = (&registry, format.as_mut()) {
        match f {
            Format::Avro(a) => a.schema_id = Some(r.id),
            Format::Json(j) => j.schema_id = Some(r.id),
            Format::Protobuf(p) => p.schema_id = Some(r.id),
            _ => {}
        }
    }
    c.adjust_fields(&mut cols.fields);
    if format.is_none() && c.requires_format() {
        diags.push(
            Diagnostic::error(format!(
                "missing required option 'format' for table of connector '{}'",
                c.id()
            ))
            .with_span(with_span)
            .with_help("Add format = 'json' (or raw_string, raw_bytes, debezium_json, parquet)."),
        );
    }
    if let Some(span) = formats.compression_span
        && !c.supports_json_compression()
    {
        diags.push(
            Diagnostic::error(format!(
                "option 'json.compression' is only supported by the filesystem connector, not '{}'",
                c.id()
            ))
            .with_span(span)
            .with_help("Remove the option; messages are not compressed per record."),
        );
    }
    // 8. Connection type.
    let connection_type = if stmt.temporary {
        ConnectionType::Lookup
    } else {
        c.connection_type(&mapped.config)
    };
    match declared_type {
        Some((t, span)) if t != connection_type => {
            let d = if entry.connector.roles().lookup && t == ConnectionType::Lookup {
                Diagnostic::error("lookup tables are declared with CREATE TEMPORARY TABLE")
                    .with_span(span)
                    .with_help("Write CREATE TEMPORARY TABLE, and remove 'type'.")
            } else {
                Diagnostic::error(format!(
                    "connector '{}' cannot be used as a {t} table",
                    c.id()
                ))
                .with_span(span)
                .with_note(format!("its tables are {connection_type} tables"))
                .with_help("Remove 'type', or use a connector that supports this role.")
            };
            diags.push(d);
        }
        _ => check_role(entry, connection_type, stmt, &mut diags),
    }
    if let Some(fixed) = c.fixed_schema() {
        fixed_schema(c.id(), fixed, &mut cols, stmt, &mut diags);
    } else if cols.fields.is_empty() && cols.virtual_columns.is_empty() {
        no_columns(
            name,
            connection_type,
            format.as_ref(),
            &mut cols,
            stmt,
            &mut diags,
        );
    }
    debezium_rules(&format, connection_type, &cols, stmt, &mut diags);
    avro_rules(
        name,
        format.as_mut(),
        connection_type,
        &cols,
        stmt,
        &mut diags,
    );
    let partitioned_by = partition_terms(stmt);
    if !partitioned_by.is_empty() {
        match c.partition_by(&partitioned_by, &mut mapped.config) {
            Some(found) => diags.extend(found),
            None => diags.push(
                Diagnostic::error(format!("connector '{}' does not support PARTITIONED BY", c.id()))
                    .with_span(partitioned_by[0].span)
                    .with_help("Remove PARTITIONED BY; filesystem sinks partition with 'partitioning.fields' and 'partitioning.time_pattern'."),
            ),
        }
    }
    let event_time = event_time(&cols, event_time_field, watermark_field, &mut diags);
    let schema = ConnectionSchema {
        format,
        bad_data: formats.bad_data,
        framing: formats.framing,
        inferred: Some(cols.fields.is_empty()).filter(|b| *b),
        primary_keys: cols.primary_keys.clone(),
        fields: cols.fields.clone(),
        definition,
        column_notes: cols.notes.clone(),
    };
    for e in schema.validate() {
        diags.push(
            Diagnostic::error(e.to_string())
                .with_span(stmt.name.span)
                .with_help(schema_help(&e)),
        );
    }
    if !diags.iter().any(Diagnostic::is_error) {
        let m = &mapped;
        let profile_config = profile
            .as_ref()
            .map(|p| &p.config)
            .or(inline_settings.as_ref().map(|m| &m.config));
        let cx = TableCheck {
            table: name,
            config: &m.config,
            profile: profile_config,
            schema: &schema,
            connection_type,
            options: m,
            statement_span: with_span,
        };
        diags.extend(c.check_table(&cx));
    }
    let warnings = finish(diags)?;
    // 9. The record.
    let options: Vec<_> = stmt
        .options
        .iter()
        .filter(|o| o.key != "connector" && o.key != "connection_profile")
        .map(|o| {
            let sensitive = mapped
                .entries
                .iter()
                .chain(inline_settings.iter().flat_map(|m| &m.entries))
                .any(|e| e.key == o.key && e.sensitive);
            o.to_entry(sensitive)
        })
        .collect();
    let config = mapped.config;
    let now = now_micros();
    Ok((
        ConnectionTable {
            format_version: CURRENT_FORMAT_VERSION,
            id: new_table_id(),
            name: name.clone(),
            connector: c.id().to_string(),
            profile: profile.map(|p| p.id),
            inline_profile: inline_settings.map(|m| m.config),
            connection_type,
            description: c.table_description(&config, connection_type),
            config,
            schema,
            options,
            virtual_columns: cols.virtual_columns,
            watermark: cols.watermark,
            event_time_field: event_time,
            idle_micros,
            partitioned_by: partitioned_by.into_iter().map(|t| t.text).collect(),
            temporary: stmt.temporary,
            registry,
            created_at: now,
            updated_at: now,
        },
        warnings,
    ))
}

/// Whether the connector declares a `type` option of its own.
fn has_type_option(entry: &RegisteredConnector) -> bool {
    entry
        .connector
        .table_options()
        .iter()
        .any(|spec| spec.key == "type")
}

/// A `type` option on a connector that has none of its own: the role, checked later.
fn declared_role(
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
) -> Option<(ConnectionType, Span)> {
    let o = opts.take("type")?;
    let text = o.value.as_text();
    match text.as_str() {
        "source" => Some((ConnectionType::Source, o.value_span)),
        "sink" => Some((ConnectionType::Sink, o.value_span)),
        "lookup" => Some((ConnectionType::Lookup, o.value_span)),
        other => {
            diags.push(tributary_types::options::not_allowed(
                "type",
                other,
                &["source", "sink", "lookup"],
                o.value_span,
            ));
            None
        }
    }
}

/// Whether the connector's `type` selector offers `lookup`.
fn has_lookup_selector(entry: &RegisteredConnector) -> bool {
    entry.connector.table_options().iter().any(|spec| {
        spec.key == "type"
            && matches!(spec.target, Target::Selector { values, .. } if values.contains(&"lookup"))
    })
}

/// `PARTITIONED BY (...)` terms in the connector-neutral form connectors read.
fn partition_terms(stmt: &CreateTable) -> Vec<PartitionTerm> {
    stmt.partitioned_by
        .iter()
        .map(|(expr, span)| {
            let arg = |e: &Expr| match e {
                Expr::Identifier(i) => PartitionArg::Column(i.value.clone()),
                Expr::Value(v) => match &v.value {
                    SqlValue::Number(n, _) => n
                        .parse()
                        .map(PartitionArg::Integer)
                        .unwrap_or_else(|_| PartitionArg::Other(n.clone())),
                    other => PartitionArg::Other(other.to_string()),
                },
                other => PartitionArg::Other(other.to_string()),
            };
            let (function, args) = match expr {
                Expr::Function(f) => {
                    let args = match &f.args {
                        FunctionArguments::List(list) => list
                            .args
                            .iter()
                            .map(|a| match a {
                                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => arg(e),
                                other => PartitionArg::Other(other.to_string()),
                            })
                            .collect(),
                        FunctionArguments::None => vec![],
                        other => vec![PartitionArg::Other(other.to_string())],
                    };
                    (Some(f.name.to_string().to_lowercase()), args)
                }
                e => (None, vec![arg(e)]),
            };
            PartitionTerm {
                function,
                args,
                text: expr.to_string(),
                span: *span,
            }
        })
        .collect()
}

/// `lookup.cache.*`: only for lookup (temporary) tables.
fn lookup_cache_options(temporary: bool, opts: &mut WithOptions, diags: &mut Vec<Diagnostic>) {
    let bytes = opts.take("lookup.cache.max_bytes");
    let ttl = opts.take("lookup.cache.ttl");
    if let Some(o) = &bytes
        && let Err(d) = tributary_types::options::to_u64(o)
    {
        diags.push(d);
    }
    if let Some(o) = &ttl
        && let Err(e) = parse_interval_micros(&o.value.as_text())
    {
        diags.push(
            Diagnostic::error(format!(
                "invalid interval for option 'lookup.cache.ttl': {e}"
            ))
            .with_span(o.value_span)
            .with_help("Write it as 'lookup.cache.ttl' = INTERVAL '5' MINUTE."),
        );
    }
    if !temporary {
        for o in bytes.iter().chain(ttl.iter()) {
            diags.push(
                Diagnostic::error(format!("option '{}' only applies to lookup tables", o.key))
                    .with_span(o.key_span)
                    .with_help(
                        "Create the table with CREATE TEMPORARY TABLE, or remove the option.",
                    ),
            );
        }
    }
}

fn take_or_report<T>(r: Result<Option<T>, Diagnostic>, diags: &mut Vec<Diagnostic>) -> Option<T> {
    r.unwrap_or_else(|d| {
        diags.push(d);
        None
    })
}

/// `connection_profile`: the named profile, which must exist and be of this connector.
fn resolve_profile(
    store: &dyn CatalogStore,
    entry: &RegisteredConnector,
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
) -> Option<ConnectionProfile> {
    let (name, span) = take_or_report(opts.take_string("connection_profile"), diags)?;
    let c = entry.connector;
    if entry.profile_schema.is_none() {
        diags.push(
            Diagnostic::error(format!(
                "connector '{}' does not use connection profiles",
                c.id()
            ))
            .with_span(span)
            .with_help("Remove 'connection_profile'."),
        );
        return None;
    }
    match store.profile_by_name(&name) {
        Ok(Some(p)) if p.connector != c.id() => {
            diags.push(
                Diagnostic::error(format!(
                    "connection profile '{}' is for connector '{}', not '{}'",
                    p.name,
                    p.connector,
                    c.id()
                ))
                .with_span(span)
                .with_help(format!(
                    "Use a profile created with connector = '{}', or change the table's connector.",
                    c.id()
                )),
            );
            None
        }
        Ok(Some(p)) => Some(p),
        Ok(None) => {
            diags.push(profile_not_found(store, &name, span));
            None
        }
        Err(e) => {
            diags.push(super::catalog_diagnostic(e, span));
            None
        }
    }
}

/// With a profile, the table may not repeat its settings; without one, the settings are
/// read inline into a profile-shaped config.
fn connection_settings(
    entry: &RegisteredConnector,
    profile: Option<&ConnectionProfile>,
    opts: &mut WithOptions,
    with_span: Span,
    diags: &mut Vec<Diagnostic>,
) -> Option<MappedOptions> {
    let c = entry.connector;
    let schema = entry.profile_schema.as_ref()?;
    if let Some(p) = profile {
        for spec in c.profile_options() {
            let Some(o) = opts.take(spec.key) else {
                continue;
            };
            let d = if p.options.iter().any(|e| e.key == spec.key) {
                Diagnostic::error(format!(
                    "option '{}' is set both by connection profile '{}' and by the table",
                    spec.key, p.name
                ))
                .with_span(o.key_span)
                .with_help(format!(
                    "Remove {} from the table; the profile's value applies.",
                    quote_key(spec.key)
                ))
            } else {
                Diagnostic::error(format!("option '{}' belongs to the connection profile, not the table", spec.key))
                    .with_span(o.key_span)
                    .with_help(format!(
                        "Set it on the profile with ALTER CONNECTION PROFILE {} SET ({} = ...), or drop 'connection_profile' and give every setting inline.",
                        p.name,
                        quote_key(spec.key)
                    ))
            };
            diags.push(d);
        }
        return None;
    }
    let req = MapRequest {
        connector: c.id(),
        object: "table",
        specs: c.profile_options(),
        schema,
        missing_span: with_span,
        missing_hint: Some("Or name a connection profile with connection_profile = '...'."),
    };
    let mapped = map_options(req, opts, diags);
    if !diags.iter().any(Diagnostic::is_error) {
        diags.extend(c.check_profile(&tributary_connectors::ProfileCheck {
            config: &mapped.config,
            options: &mapped,
            statement_span: with_span,
        }));
    }
    Some(mapped)
}

fn check_role(
    entry: &RegisteredConnector,
    t: ConnectionType,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    let roles = entry.connector.roles();
    let ok = match t {
        ConnectionType::Source => roles.source,
        ConnectionType::Sink => roles.sink,
        ConnectionType::Lookup => roles.lookup,
    };
    if !ok {
        let mut can = vec![];
        if roles.source {
            can.push("source");
        }
        if roles.sink {
            can.push("sink");
        }
        if roles.lookup {
            can.push("lookup (CREATE TEMPORARY TABLE)");
        }
        diags.push(
            Diagnostic::error(format!(
                "connector '{}' cannot be used as a {t} table",
                entry.connector.id()
            ))
            .with_span(stmt.name.span)
            .with_note(format!("it supports: {}", can.join(", ")))
            .with_help("Use a connector that supports this role."),
        );
    }
}

fn fixed_schema(
    id: &str,
    fixed: Vec<SourceField>,
    cols: &mut Columns,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    if !stmt.columns.is_empty() {
        let declared: Vec<(String, FieldType, bool)> = cols
            .fields
            .iter()
            .map(|f| (f.name.clone(), f.field_type.clone(), f.required))
            .collect();
        let expected: Vec<(String, FieldType, bool)> = fixed
            .iter()
            .map(|f| (f.name.clone(), f.field_type.clone(), f.required))
            .collect();
        if declared != expected || !cols.virtual_columns.is_empty() {
            let list: Vec<String> = fixed
                .iter()
                .map(|f| {
                    format!(
                        "{} {}{}",
                        f.name,
                        f.field_type,
                        if f.required { " NOT NULL" } else { "" }
                    )
                })
                .collect();
            diags.push(
                Diagnostic::error(format!(
                    "the columns of table '{}' do not match the fixed schema of connector '{id}'",
                    stmt.name.value
                ))
                .with_span(stmt.columns[0].span)
                .with_note(format!("its schema is: {}", list.join(", ")))
                .with_help("Omit the column list; the connector supplies its schema."),
            );
        }
    }
    cols.fields = fixed;
}

/// A table without columns: sinks take their schema from the first INSERT; formats with a
/// single `value` column get it; other sources must declare columns.
fn no_columns(
    name: &str,
    t: ConnectionType,
    format: Option<&Format>,
    cols: &mut Columns,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    if t == ConnectionType::Sink {
        return;
    }
    match format {
        Some(Format::RawString {}) => cols
            .fields
            .push(SourceField::new("value", FieldType::String)),
        Some(Format::RawBytes {}) => cols
            .fields
            .push(SourceField::new("value", FieldType::Bytes)),
        Some(f) if f.unstructured_option().is_some() => {
            cols.fields.push(SourceField::new("value", FieldType::Json))
        }
        _ => diags.push(
            Diagnostic::error(format!("{t} table '{name}' declares no columns"))
                .with_span(stmt.name.span)
                .with_help("Declare its columns: CREATE TABLE name (col TYPE, ...) WITH (...)."),
        ),
    }
}

/// `schema_registry.version` and `schema_registry.id` (read by the registry fetch) only
/// make sense with a registry-framed format.
fn registry_pins(opts: &mut WithOptions, format: Option<&Format>, diags: &mut Vec<Diagnostic>) {
    let framed = match format {
        Some(Format::Avro(a)) => a.confluent_schema_registry,
        Some(Format::Json(j)) => j.confluent_schema_registry,
        Some(Format::Protobuf(p)) => p.confluent_schema_registry,
        _ => false,
    };
    for key in ["schema_registry.version", "schema_registry.id"] {
        if let Some(o) = opts.take(key)
            && !framed
        {
            diags.push(
                Diagnostic::error(format!(
                    "option '{key}' needs a registry-framed format"
                ))
                .with_span(o.key_span)
                .with_help("Set '<format>.confluent_schema_registry' = true (avro, json or protobuf), or remove the option."),
            );
        }
    }
}

/// Avro and Protobuf tables need a schema: sources read with it, and Avro sinks without
/// one write with the schema their columns imply.
fn avro_rules(
    name: &str,
    format: Option<&mut Format>,
    t: ConnectionType,
    cols: &Columns,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    let a = match format {
        Some(Format::Avro(a)) => a,
        Some(Format::Protobuf(p)) if p.compiled_schema.is_none() => {
            diags.push(
                Diagnostic::error(format!("protobuf {t} table '{name}' needs the message's schema"))
                    .with_span(stmt.name.span)
                    .with_help("Give 'protobuf.descriptor_file' or 'protobuf.schema_file' with 'protobuf.message', or name the topic so its '<topic>-value' subject is read from the schema registry."),
            );
            return;
        }
        _ => return,
    };
    if a.reader_schema.is_some() {
        return;
    }
    if t == ConnectionType::Sink {
        let physical: Vec<SourceField> = cols
            .fields
            .iter()
            .filter(|f| f.metadata_key.is_none())
            .cloned()
            .collect();
        match tributary_formats::avro_schema_for_fields(name, &physical) {
            Ok(text) => a.reader_schema = Some(text),
            Err(e) => diags.push(
                Diagnostic::error(format!(
                    "sink table '{name}' cannot be written as Avro: {e}"
                ))
                .with_span(stmt.name.span)
                .with_help(
                    "Change the column's type, or give the writer schema with 'avro.schema'.",
                ),
            ),
        }
        return;
    }
    let help = if a.confluent_schema_registry {
        "Give the schema with 'avro.schema' or 'avro.schema_file', or name the topic so its '<topic>-value' subject is read from the schema registry."
    } else {
        "Give the schema with 'avro.schema' or 'avro.schema_file', or set 'avro.confluent_schema_registry' to read it from the schema registry."
    };
    diags.push(
        Diagnostic::error(format!("avro {t} table '{name}' needs an Avro schema"))
            .with_span(stmt.name.span)
            .with_note(
                "Avro messages carry no field names; the reader schema says how to read them",
            )
            .with_help(help),
    );
}

fn debezium_rules(
    format: &Option<Format>,
    t: ConnectionType,
    cols: &Columns,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    if !format.as_ref().is_some_and(Format::is_updating) {
        return;
    }
    if let Some(v) = cols.virtual_columns.first() {
        diags.push(
            Diagnostic::error("virtual columns cannot be used with the debezium_json format")
                .with_span(
                    cols.spans
                        .get(&v.name.to_lowercase())
                        .copied()
                        .unwrap_or(stmt.name.span),
                )
                .with_help("Remove the virtual column and compute it in a query instead."),
        );
    }
    if t == ConnectionType::Source && cols.primary_keys.is_empty() {
        diags.push(
            Diagnostic::error(format!(
                "debezium_json source table '{}' must have a PRIMARY KEY",
                stmt.name.value
            ))
            .with_span(stmt.name.span)
            .with_help("Mark the key columns with PRIMARY KEY, or add PRIMARY KEY (col, ...)."),
        );
    }
}

fn event_time(
    cols: &Columns,
    field: Option<(String, Span)>,
    watermark_field: Option<(String, Span)>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    if let Some(w) = &cols.watermark {
        if let Some((_, s)) = &field {
            diags.push(
                Diagnostic::error(
                    "option 'event_time_field' cannot be combined with WATERMARK FOR",
                )
                .with_span(*s)
                .with_help("Remove 'event_time_field'; WATERMARK FOR names the event-time column."),
            );
        }
        return Some(w.column.clone());
    }
    let schema = cols.arrow_schema();
    for (key, value) in [
        ("event_time_field", &field),
        ("watermark_field", &watermark_field),
    ] {
        let Some((name, span)) = value else { continue };
        match schema
            .fields()
            .iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
        {
            None => diags.push(
                Diagnostic::error(format!(
                    "option '{key}' names column '{name}', which does not exist"
                ))
                .with_span(*span)
                .with_help("Name a TIMESTAMP column of the table."),
            ),
            Some(f)
                if !matches!(
                    f.data_type(),
                    datafusion::arrow::datatypes::DataType::Timestamp(_, None)
                ) =>
            {
                diags.push(
                    Diagnostic::error(format!(
                        "option '{key}' names column '{name}', which is not a TIMESTAMP"
                    ))
                    .with_span(*span)
                    .with_help("Name a TIMESTAMP column of the table."),
                )
            }
            Some(_) => {}
        }
    }
    field.map(|(n, _)| n)
}

fn schema_help(e: &tributary_types::SchemaError) -> String {
    match e {
        tributary_types::SchemaError::DuplicateField { .. } => {
            "Give every field a distinct name at each nesting level.".into()
        }
        tributary_types::SchemaError::RawString => {
            "Declare exactly one column: value TEXT (metadata columns may be added).".into()
        }
        tributary_types::SchemaError::RawBytes => {
            "Declare exactly one column: value BYTEA (metadata columns may be added).".into()
        }
        tributary_types::SchemaError::Unstructured { .. } => {
            "Declare exactly one column: value JSON (metadata columns may be added).".into()
        }
    }
}
