//! Table options outside the connector's own: `PARTITIONED BY`, `lookup.cache.*`, the
//! named connection profile, and the connection settings given by a profile or inline.

use crate::parser::ast::CreateTable;
use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Value as SqlValue,
};
use tributary_catalog::CatalogStore;
use tributary_connectors::{
    MapRequest, MappedOptions, PartitionArg, PartitionTerm, RegisteredConnector, map_options,
};
use tributary_types::options::quote_key;
use tributary_types::{ConnectionProfile, Diagnostic, Span, WithOptions, parse_interval_micros};

use super::profile::profile_not_found;

/// `PARTITIONED BY (...)` terms in the connector-neutral form connectors read.
pub(super) fn partition_terms(stmt: &CreateTable) -> Vec<PartitionTerm> {
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
pub(super) fn lookup_cache_options(
    temporary: bool,
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
) {
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
            .with_help("Write it as 'lookup.cache.ttl' = INTERVAL '5' MINUTE.")
            .with_code(tributary_types::codes::INVALID_OPTION),
        );
    }
    if !temporary {
        for o in bytes.iter().chain(ttl.iter()) {
            diags.push(
                Diagnostic::error(format!("option '{}' only applies to lookup tables", o.key))
                    .with_span(o.key_span)
                    .with_help(
                        "Create the table with CREATE TEMPORARY TABLE, or remove the option.",
                    )
                    .with_code(tributary_types::codes::CONFLICTING_OPTIONS),
            );
        }
    }
}

pub(super) fn take_or_report<T>(
    r: Result<Option<T>, Diagnostic>,
    diags: &mut Vec<Diagnostic>,
) -> Option<T> {
    r.unwrap_or_else(|d| {
        diags.push(d);
        None
    })
}

/// `connection_profile`: the named profile, which must exist and be of this connector.
pub(super) fn resolve_profile(
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
            .with_help("Remove 'connection_profile'.")
            .with_code(tributary_types::codes::INVALID_OPTION),
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
                ))
                .with_code(tributary_types::codes::INVALID_OPTION),
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
pub(super) fn connection_settings(
    entry: &RegisteredConnector,
    profile: Option<&ConnectionProfile>,
    object: &str,
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
                .with_code(tributary_types::codes::CONFLICTING_OPTIONS)
            } else {
                Diagnostic::error(format!("option '{}' belongs to the connection profile, not the table", spec.key))
                    .with_span(o.key_span)
                    .with_help(format!(
                        "Set it on the profile with ALTER CONNECTION PROFILE {} SET ({} = ...), or drop 'connection_profile' and give every setting inline.",
                        p.name,
                        quote_key(spec.key)
                    ))
                    .with_code(tributary_types::codes::INVALID_OPTION)
            };
            diags.push(d);
        }
        return None;
    }
    let req = MapRequest {
        connector: c.id(),
        object,
        specs: c.profile_options(),
        schema,
        missing_span: with_span,
        missing_hint: Some("Or name a connection profile with connection_profile = '...'."),
    };
    let mapped = map_options(req, opts, diags);
    if !diags.iter().any(Diagnostic::is_error) {
        let mut found = c.check_profile(&tributary_connectors::ProfileCheck {
            config: &mapped.config,
            options: &mapped,
            statement_span: with_span,
            object,
        });
        tributary_types::codes::fill(&mut found, tributary_types::codes::INVALID_OPTION);
        diags.extend(found);
    }
    Some(mapped)
}
