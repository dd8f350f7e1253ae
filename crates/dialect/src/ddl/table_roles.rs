//! The role of a connection table: the `type` option, temporary (lookup) tables, and
//! whether the connector can play the role.

use crate::parser::ast::CreateTable;
use tributary_connectors::{RegisteredConnector, Target};
use tributary_types::{ConnectionType, Diagnostic, Span, WithOptions};

/// Whether the connector declares a `type` option of its own.
pub(super) fn has_type_option(entry: &RegisteredConnector) -> bool {
    entry
        .connector
        .table_options()
        .iter()
        .any(|spec| spec.key == "type")
}

/// A `type` option on a connector that has none of its own: the role, checked later.
pub(super) fn declared_role(
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
pub(super) fn has_lookup_selector(entry: &RegisteredConnector) -> bool {
    entry.connector.table_options().iter().any(|spec| {
        spec.key == "type"
            && matches!(spec.target, Target::Selector { values, .. } if values.contains(&"lookup"))
    })
}

pub(super) fn check_role(
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
            .with_help("Use a connector that supports this role.")
            .with_code(tributary_types::codes::INVALID_OPTION),
        );
    }
}
