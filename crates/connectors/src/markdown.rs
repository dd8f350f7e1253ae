//! `docs/connectors.md`, rendered from the registry: every connector's roles, profile and
//! table options (from their JSON Schemas) and metadata keys. A test keeps the file current.

use crate::describe::{OptionDoc, Scope, option_docs};
use crate::registry::{RegisteredConnector, registry};
use std::fmt::Write;

/// The whole reference page.
pub fn connectors_markdown() -> String {
    let mut out = String::from(
        "# Connectors\n\n\
         Generated from the connectors' JSON Schemas by \
         `cargo run -p tributary-connectors --example connector-docs`; do not edit by hand.\n\
         `DESCRIBE CONNECTOR name` prints the same information in SQL.\n\n\
         | connector | name | source | sink | lookup | profile | testing | description |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let mark = |b: bool| if b { "yes" } else { "" };
    for e in registry().iter() {
        let c = e.connector;
        let r = c.roles();
        let _ = writeln!(
            out,
            "| [`{id}`](#{id}) | {} | {} | {} | {} | {} | {} | {} |",
            c.name(),
            mark(r.source),
            mark(r.sink),
            mark(r.lookup),
            mark(e.profile_schema.is_some()),
            mark(c.supports_testing()),
            c.description(),
            id = c.id(),
        );
    }
    for e in registry().iter() {
        connector_section(&mut out, e);
    }
    out
}

fn connector_section(out: &mut String, e: &RegisteredConnector) {
    let c = e.connector;
    let _ = write!(out, "\n## {}\n\n{}.", c.id(), c.description());
    if !c.requires_format() {
        out.push_str(" `format` is optional.");
    }
    out.push('\n');
    let docs = option_docs(e);
    for (scope, title) in [
        (Scope::Profile, "Connection profile options"),
        (Scope::Table, "Table options"),
    ] {
        let rows: Vec<&OptionDoc> = docs.iter().filter(|d| d.scope == scope).collect();
        if rows.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "\n### {title}\n\n| SQL key | JSON name | type | default | required | description |\n|---|---|---|---|---|---|\n"
        );
        for d in rows {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} |",
                d.key,
                code_or_blank(&d.json_name),
                value_type(d),
                d.default.as_deref().map(code).unwrap_or_default(),
                required(d),
                cell(&notes(d)),
            );
        }
    }
    if !c.metadata_keys().is_empty() {
        out.push_str("\n### Metadata keys\n\n| key | SQL type | description |\n|---|---|---|\n");
        for m in c.metadata_keys() {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                m.key,
                m.sql_type.field_type(),
                m.description
            );
        }
    }
}

fn code(s: &str) -> String {
    format!("`{s}`")
}

fn code_or_blank(s: &str) -> String {
    if s.is_empty() { String::new() } else { code(s) }
}

fn value_type(d: &OptionDoc) -> String {
    if d.allowed.is_empty() {
        cell(&d.value_type)
    } else {
        d.allowed
            .iter()
            .map(|v| format!("`'{v}'`"))
            .collect::<Vec<_>>()
            .join(" \\| ")
    }
}

fn required(d: &OptionDoc) -> String {
    match (&d.required, &d.condition) {
        (true, Some(c)) => format!("when {}", cell(c)),
        (true, None) => "yes".into(),
        (false, _) => String::new(),
    }
}

fn notes(d: &OptionDoc) -> String {
    let mut s = d.description.clone();
    if let Some(c) = d.condition.as_ref().filter(|_| !d.required) {
        s.push_str(&format!(" (when {c})"));
    }
    if d.sensitive {
        s.push_str(". Secret: redacted when printed");
    }
    if d.env_allowed {
        s.push_str(". Accepts {{ VAR }}");
    }
    s
}

/// Escape a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
