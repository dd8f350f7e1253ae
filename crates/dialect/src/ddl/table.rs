//! `CREATE [TEMPORARY] TABLE ... WITH (...)`: steps 1-9 of the option pipeline. The
//! rules each step applies live beside it: `table_options` (profile, inline settings,
//! PARTITIONED BY, lookup cache), `table_roles` (source, sink or lookup) and
//! `table_schema` (schema rules after the columns are built).

use super::column_plans::finish_columns;
use super::columns::declare_columns;
use super::file_access::{check_read_path, check_schema_files};
use super::generic::GENERIC_TABLE_OPTIONS;
use super::profile::{connector_option, finish};
use super::registry::FetchedSchema;
use super::schema_def::apply_schema;
use super::table_options::{
    connection_settings, lookup_cache_options, partition_terms, resolve_profile, take_or_report,
};
use super::table_roles::{check_role, declared_role, has_lookup_selector, has_type_option};
use super::table_schema::{
    avro_rules, debezium_rules, event_time, fixed_schema, no_columns, registry_pins, schema_help,
};
use super::unknown::{drop_follow_ons, report_unknown};
use crate::parser::ast::CreateTable;
use datafusion::execution::SessionState;
use tributary_catalog::{CatalogStore, new_table_id, now_micros};
use tributary_connectors::{MapRequest, TableCheck, describe, map_options};
use tributary_formats::{all_format_keys, format_from_options};
use tributary_types::access::Access;
use tributary_types::{
    CURRENT_FORMAT_VERSION, ConnectionSchema, ConnectionTable, ConnectionType, Diagnostic, Format,
    OptionValue, SqlOption, WithOptions, codes,
};

/// Validate a table definition into a record (not yet stored), with its warnings.
/// `schema_pending` says the table's schema lives in a registry that was not asked
/// (`check`, offline sessions): the rules that need the schema are skipped.
pub fn build_table(
    store: &dyn CatalogStore,
    state: &SessionState,
    stmt: &CreateTable,
    fetched: Option<FetchedSchema>,
    schema_pending: bool,
    access: &Access,
) -> Result<(ConnectionTable, Vec<Diagnostic>), Vec<Diagnostic>> {
    let name = &stmt.name.value;
    // Messages name the table: a long statement's snippet may not show its name.
    let object = format!("table '{}'", tributary_types::limits::shorten(name));
    if !stmt.has_with {
        return Err(vec![
            Diagnostic::error(format!("table '{name}' has no WITH clause"))
                .with_span(stmt.name.span)
                .with_help("Connection tables say where their data lives: add WITH (connector = '...', ...).")
                .with_code(codes::MISSING_OPTION),
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
    let errors = |diags: &[Diagnostic]| diags.iter().filter(|d| d.is_error()).count();
    let errors_before_format = errors(&diags);
    check_schema_files(&mut opts, access, &mut diags);
    let mut formats = format_from_options(&mut opts, &mut diags);
    let format_failed = errors(&diags) > errors_before_format;
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
                )
                .with_code(codes::ADVICE),
        );
    }
    let watermark_field = take_or_report(opts.take_field("watermark_field"), &mut diags);
    let idle_micros = take_or_report(opts.take_i64("idle_micros"), &mut diags).map(|(v, _)| v);
    let lookup = stmt.temporary
        || opts
            .peek("type")
            .is_some_and(|o| o.value.as_text() == "lookup");
    lookup_cache_options(lookup, &mut opts, &mut diags);
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
                    )
                    .with_code(codes::INVALID_OPTION),
            );
            opts.take("type");
        }
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
        connection_settings(
            entry,
            profile.as_ref(),
            &object,
            &mut opts,
            with_span,
            &mut diags,
        )
    };
    // 4-5. Table options, mapped and validated against the schema.
    if stmt.temporary && !c.roles().lookup {
        check_role(entry, ConnectionType::Lookup, stmt, &mut diags);
        return Err(diags);
    }
    let req = MapRequest {
        connector: c.id(),
        object: &object,
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
    let misspelled = report_unknown(&opts, &object, c.id(), candidates, &mut diags);
    // 7. Schema: the declared columns, a schema document's, then what needs them all.
    let mut cols = declare_columns(stmt, c, &mut diags);
    let mut format = formats.format.clone().or_else(|| c.default_format());
    let errors_before_schema = errors(&diags);
    let definition = formats.schema.as_ref().and_then(|source| {
        apply_schema(
            source,
            registry.is_some(),
            format.as_mut(),
            &mut cols,
            &mut diags,
        )
    });
    // When the format or its schema is wrong, that error is the root cause: the rules
    // that need the schema (columns, a reader schema) would only repeat it.
    let schema_in_doubt = schema_pending || format_failed || errors(&diags) > errors_before_schema;
    if let Some((_, star)) = stmt.star
        && cols.has_star()
    {
        if !schema_in_doubt && c.fixed_schema().is_none() {
            diags.push(
                Diagnostic::error(format!(
                    "'*' stands for the columns of a schema document, but table '{name}' has none"
                ))
                .with_span(star)
                .with_help("Give the schema ('json.schema', 'avro.schema', 'protobuf.schema_file' or a schema registry), or list the columns instead of '*'.")
                .with_code(codes::INVALID_SCHEMA),
            );
        }
        cols.drop_star();
    }
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
                "missing required option 'format' for {object} of connector '{}'",
                c.id()
            ))
            .with_span(with_span)
            .with_help(format!(
                "Add format = 'json' (or {}).",
                tributary_formats::FORMATS
                    .iter()
                    .map(|f| f.name)
                    .filter(|n| *n != "json")
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .with_code(codes::MISSING_OPTION),
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
            .with_help("Remove the option; messages are not compressed per record.")
            .with_code(codes::CONFLICTING_OPTIONS),
        );
    }
    // 8. Connection type.
    let connection_type = if stmt.temporary {
        ConnectionType::Lookup
    } else {
        c.connection_type(&mapped.config)
    };
    check_read_path(
        c,
        &mapped.config,
        connection_type,
        &stmt.options,
        access,
        &mut diags,
    );
    match declared_type {
        Some((t, span)) if t != connection_type => {
            let d = if entry.connector.roles().lookup && t == ConnectionType::Lookup {
                Diagnostic::error("lookup tables are declared with CREATE TEMPORARY TABLE")
                    .with_span(span)
                    .with_help("Write CREATE TEMPORARY TABLE, and remove 'type'.")
                    .with_code(codes::INVALID_OPTION)
            } else {
                Diagnostic::error(format!(
                    "connector '{}' cannot be used as a {t} table",
                    c.id()
                ))
                .with_span(span)
                .with_note(format!("its tables are {connection_type} tables"))
                .with_help("Remove 'type', or use a connector that supports this role.")
                .with_code(codes::INVALID_OPTION)
            };
            diags.push(d);
        }
        _ => check_role(entry, connection_type, stmt, &mut diags),
    }
    if !cols.refused.is_empty() {
        // A declared column's type was refused: the columns are not what the statement
        // says, so whether they fit the connector is not known.
    } else if let Some(fixed) = c.fixed_schema() {
        fixed_schema(c.id(), fixed, &mut cols, stmt, &mut diags);
    } else if cols.declared_physical().is_empty() && !schema_in_doubt {
        no_columns(
            name,
            connection_type,
            format.as_ref(),
            &mut cols,
            stmt,
            &mut diags,
        );
    }
    finish_columns(state, stmt, &mut cols, &mut diags);
    debezium_rules(&format, connection_type, &cols, stmt, &mut diags);
    if !schema_in_doubt {
        avro_rules(
            name,
            format.as_mut(),
            connection_type,
            &cols,
            stmt,
            &mut diags,
        );
    }
    let partitioned_by = partition_terms(stmt);
    if !partitioned_by.is_empty() {
        match c.partition_by(&partitioned_by, &mut mapped.config) {
            Some(mut found) => {
                codes::fill(&mut found, codes::INVALID_SCHEMA);
                diags.extend(found)
            }
            None => diags.push(
                Diagnostic::error(format!("connector '{}' does not support PARTITIONED BY", c.id()))
                    .with_span(partitioned_by[0].span)
                    .with_help("Remove PARTITIONED BY; filesystem sinks partition with 'partitioning.fields' and 'partitioning.time_pattern'.")
                    .with_code(codes::UNSUPPORTED),
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
        column_origins: cols.origins.clone(),
    };
    for e in schema.validate() {
        diags.push(
            Diagnostic::error(e.to_string())
                .with_span(stmt.name.span)
                .with_help(schema_help(&e))
                .with_code(codes::INVALID_SCHEMA),
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
        // A connector's own rules are about the options it was given.
        let mut found = c.check_table(&cx);
        codes::fill(&mut found, codes::INVALID_OPTION);
        diags.extend(found);
    }
    drop_follow_ons(&mut diags, &misspelled);
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
            description: tributary_types::redact_text(
                &c.table_description(&config, connection_type),
            )
            .into_owned(),
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
            last_test: None,
        },
        warnings,
    ))
}
