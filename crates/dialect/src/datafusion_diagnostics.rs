//! DataFusion errors as user-facing text and diagnostics.

use datafusion::error::DataFusionError;
use tributary_types::{Diagnostic, Span, codes};

/// The innermost, user-meaningful message of a DataFusion error, without DataFusion's
/// category prefixes and with a lowercase first letter.
pub fn datafusion_message(e: &DataFusionError) -> String {
    let inner = match e {
        DataFusionError::Context(_, inner) => return datafusion_message(inner),
        DataFusionError::Diagnostic(_, inner) => return datafusion_message(inner),
        DataFusionError::Shared(inner) => return datafusion_message(inner),
        DataFusionError::External(inner) => {
            if let Some(d) = inner.downcast_ref::<Diagnostic>() {
                return d.message.clone();
            }
            inner.to_string()
        }
        DataFusionError::Plan(s)
        | DataFusionError::Execution(s)
        | DataFusionError::NotImplemented(s)
        | DataFusionError::Configuration(s) => s.clone(),
        DataFusionError::SchemaError(s, _) => s.to_string(),
        other => other.to_string(),
    };
    let mut text = inner;
    for prefix in [
        "Error during planning: ",
        "Schema error: ",
        "This feature is not implemented: ",
        "Execution error: ",
        "SQL error: ",
    ] {
        if let Some(rest) = text.strip_prefix(prefix) {
            text = rest.to_string();
        }
    }
    let trimmed = text.trim_end_matches('.').to_string();
    lowercase_first(&trimmed)
}

fn lowercase_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if c.clone().next().is_none_or(|n| !n.is_uppercase()) => {
            f.to_lowercase().collect::<String>() + c.as_str()
        }
        Some(f) => f.to_string() + c.as_str(),
        None => String::new(),
    }
}

/// A DataFusion error as a diagnostic. Tributary's own diagnostics raised inside DataFusion
/// callbacks come back as they were; others get the statement's span, or the position
/// DataFusion reported.
pub fn datafusion_diagnostic(e: &DataFusionError, statement: Span) -> Diagnostic {
    if let Some(d) = find_ours(e) {
        return d.clone().or_span(statement);
    }
    // DataFusion parsed the statement's own text: its positions count from the statement.
    if let Some(pe) = find_parser_error(e) {
        let mut d = crate::parser::spans::parser_error(pe.clone(), Span::default());
        // Without a position, the parser ran out of statement: point at its end.
        d.span = Some(
            d.span
                .map(|s| s.offset_by(statement.start))
                .unwrap_or(Span::new(statement.end, statement.end)),
        );
        return d;
    }
    let span = df_span(e)
        .map(|s| s.offset_by(statement.start))
        .unwrap_or(statement);
    Diagnostic::error(datafusion_message(e))
        .with_span(span)
        .with_code(datafusion_code(e))
}

/// The code for a DataFusion error of its own: planning, a missing feature, or a
/// failure while running.
fn datafusion_code(e: &DataFusionError) -> codes::Code {
    match e {
        DataFusionError::Context(_, inner) | DataFusionError::Diagnostic(_, inner) => {
            datafusion_code(inner)
        }
        DataFusionError::Shared(inner) => datafusion_code(inner),
        DataFusionError::Plan(_)
        | DataFusionError::SchemaError(..)
        | DataFusionError::Configuration(_) => codes::PLAN_ERROR,
        DataFusionError::NotImplemented(_) => codes::UNSUPPORTED,
        DataFusionError::ResourcesExhausted(_) => codes::LIMIT_EXCEEDED,
        _ => codes::EXECUTION_ERROR,
    }
}

fn find_ours(e: &DataFusionError) -> Option<&Diagnostic> {
    match e {
        DataFusionError::External(inner) => inner.downcast_ref::<Diagnostic>(),
        DataFusionError::Context(_, inner) | DataFusionError::Diagnostic(_, inner) => {
            find_ours(inner)
        }
        DataFusionError::Shared(inner) => find_ours(inner),
        _ => None,
    }
}

fn find_parser_error(
    e: &DataFusionError,
) -> Option<&datafusion::sql::sqlparser::parser::ParserError> {
    match e {
        DataFusionError::SQL(pe, _) => Some(pe),
        DataFusionError::Context(_, inner) | DataFusionError::Diagnostic(_, inner) => {
            find_parser_error(inner)
        }
        DataFusionError::Shared(inner) => find_parser_error(inner),
        _ => None,
    }
}

fn df_span(e: &DataFusionError) -> Option<Span> {
    let d = e.diagnostic()?;
    let s = d.span?;
    Some(Span::new(
        tributary_types::Location::new(s.start.line, s.start.column),
        tributary_types::Location::new(s.end.line, s.end.column),
    ))
}

/// Wrap a Tributary diagnostic so it can travel through DataFusion's error type.
pub fn to_datafusion(d: Diagnostic) -> DataFusionError {
    DataFusionError::External(Box::new(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_removed() {
        let e = DataFusionError::Plan("Table 'x' not found".into());
        assert_eq!(datafusion_message(&e), "table 'x' not found");
        let e = DataFusionError::NotImplemented("UDF".into());
        assert_eq!(datafusion_message(&e), "UDF");
    }

    #[test]
    fn parser_errors_read_as_ours_at_their_place_in_the_script() {
        use datafusion::sql::sqlparser::parser::ParserError;
        let e = DataFusionError::SQL(
            Box::new(ParserError::ParserError(
                "Expected: end of statement, found: FRM at Line: 1, Column: 10".into(),
            )),
            None,
        );
        let statement = Span::new(
            tributary_types::Location::new(2, 1),
            tributary_types::Location::new(2, 22),
        );
        let d = datafusion_diagnostic(&e, statement);
        assert_eq!(
            d.message,
            "syntax error: expected end of statement, found FRM"
        );
        assert_eq!(d.span.unwrap().start, tributary_types::Location::new(2, 10));
        let e = DataFusionError::SQL(
            Box::new(ParserError::ParserError(
                "Expected: an expression, found: EOF".into(),
            )),
            None,
        );
        let d = datafusion_diagnostic(&e, statement);
        assert_eq!(
            d.message,
            "syntax error: expected an expression, found the end of the statement"
        );
        assert_eq!(d.span.unwrap().start, statement.end);
    }

    #[test]
    fn our_diagnostics_survive_the_round_trip() {
        let d = Diagnostic::error("table 't' is a sink").with_help("Read from a source.");
        let e = DataFusionError::Context("ctx".into(), Box::new(to_datafusion(d.clone())));
        assert_eq!(datafusion_diagnostic(&e, Span::default()), d);
    }
}
