//! The `validate` option of CREATE statements: whether (and how far) a table proves its
//! connection before it is stored.

use tributary_exec::connection_probe;
use tributary_types::{Diagnostic, Format, OptionValue, Span, SqlOption};

/// Split `validate` off a statement's options.
pub(super) fn take_validate(
    options: &[SqlOption],
) -> (Option<(OptionValue, Span)>, Vec<SqlOption>) {
    let mut validate = None;
    let mut rest = Vec::with_capacity(options.len());
    for o in options {
        if o.key == "validate" {
            validate = Some((o.value.clone(), o.value_span));
        } else {
            rest.push(o.clone());
        }
    }
    (validate, rest)
}

/// `validate` on CREATE TABLE: `None` (do not test), or how many messages to read
/// (0 for 'connect', which stops before reading).
pub(super) fn table_validation(
    validate: Option<(OptionValue, Span)>,
) -> Result<Option<u64>, Diagnostic> {
    let Some((value, span)) = validate else {
        return Ok(None);
    };
    match value.as_text().to_lowercase().as_str() {
        "connect" => Ok(Some(0)),
        "sample" => Ok(Some(connection_probe::DEFAULT_LIMIT)),
        "false" | "none" => Ok(None),
        other => Err(tributary_types::options::not_allowed(
            "validate",
            other,
            &["connect", "sample", "false"],
            span,
        )),
    }
}

/// Whether a format writes the Confluent wire header (and so needs a registered schema).
pub(crate) fn registry_framed(format: Option<&Format>) -> bool {
    match format {
        Some(Format::Avro(a)) => a.confluent_schema_registry,
        Some(Format::Json(j)) => j.confluent_schema_registry,
        Some(Format::Protobuf(p)) => p.confluent_schema_registry,
        _ => false,
    }
}
