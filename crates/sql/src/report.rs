//! Statement results as data for programs: the shape of the CLI's `--format json` and
//! `--format jsonl` (one [`StatementReport`] per statement), built from the same
//! outcomes the text output prints. Rows are objects keyed by column name, with every
//! key kept (NULL as `null`) and values in their JSON types; diagnostics carry their
//! code and position, so editors and CI can annotate the script.
//!
//! A report can be written whole, or in three pieces as a query's rows arrive: its
//! [`ReportHead`] (what and where, the columns), the rows, then its [`ReportTail`]
//! (how it ended, notes and diagnostics).

use crate::session::{Outcome, Output};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;
use tributary_dialect::parser::spans::LineIndex;
use tributary_dialect::partial_lexer::{Kind, tokens};
use tributary_types::{Diagnostic, Severity, Span};

/// How far past a statement's start its kind is looked for, when its end is not known:
/// the first words follow at most a comment or two.
const KIND_LOOKAHEAD: usize = 4096;

/// One statement's result.
#[derive(Debug, Clone, Serialize)]
pub struct StatementReport {
    /// What it is and where.
    #[serde(flatten)]
    pub head: ReportHead,
    /// Its rows (empty for commands).
    pub rows: Vec<Map<String, Value>>,
    /// How it ended.
    #[serde(flatten)]
    pub tail: ReportTail,
}

/// The part of a report known when a statement starts: what it is and its columns.
#[derive(Debug, Clone, Serialize)]
pub struct ReportHead {
    /// Its position in the script, from 1.
    pub statement: usize,
    /// The statement: `CREATE TABLE`, `SELECT`, `SHOW TABLES`, ...
    pub kind: String,
    /// Its result's columns (empty for commands). A name that repeats an earlier one is
    /// suffixed `#2`, `#3`, ..., as it is in the rows' keys.
    pub columns: Vec<ReportColumn>,
}

/// The part of a report known when a statement ends: where it was (a server streaming
/// rows tells only where a statement starts until it ends), how it ended.
#[derive(Debug, Clone, Serialize)]
pub struct ReportTail {
    /// Where its text is.
    pub span: ReportSpan,
    /// Whether it succeeded.
    pub ok: bool,
    /// The command's status (`CREATE TABLE`); `null` for rows (an INSERT's `count` too) and
    /// failures.
    pub status: Option<String>,
    /// How many rows it returned.
    pub row_count: u64,
    /// What it did or found (connection-test stages, where a schema came from).
    pub notes: Vec<ReportDiagnostic>,
    /// Its errors and warnings.
    pub diagnostics: Vec<ReportDiagnostic>,
}

/// A stretch of the script: 1-based lines and columns (in characters), the end
/// exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReportSpan {
    /// The first line.
    pub line: u64,
    /// The first column.
    pub column: u64,
    /// The line where it ends.
    pub end_line: u64,
    /// The column where it ends (exclusive).
    pub end_column: u64,
}

impl From<Span> for ReportSpan {
    fn from(s: Span) -> Self {
        Self {
            line: s.start.line,
            column: s.start.column,
            end_line: s.end.line,
            end_column: s.end.column,
        }
    }
}

/// One result column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportColumn {
    /// Its name: the key of its value in each row.
    pub name: String,
    /// Its SQL type.
    #[serde(rename = "type")]
    pub data_type: String,
    /// Whether it can be NULL.
    pub nullable: bool,
}

/// A diagnostic as data. Every key is present; those that do not apply are `null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportDiagnostic {
    /// `error`, `warning` or `note`.
    pub severity: &'static str,
    /// What kind of problem (`UNKNOWN_OPTION`; docs/cli.md lists them).
    pub code: Option<String>,
    /// What is wrong, or worth knowing.
    pub message: String,
    /// Where it starts (1-based), when it has a place in the script.
    pub line: Option<u64>,
    /// See `line`.
    pub column: Option<u64>,
    /// Where it ends (exclusive).
    pub end_line: Option<u64>,
    /// See `end_line`.
    pub end_column: Option<u64>,
    /// How to fix it.
    pub help: Option<String>,
    /// Further facts.
    pub notes: Vec<String>,
}

impl From<&Diagnostic> for ReportDiagnostic {
    fn from(d: &Diagnostic) -> Self {
        let span = d.span.filter(Span::is_known);
        Self {
            severity: match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            },
            code: d.code.map(|c| c.as_str().to_string()),
            message: d.message.clone(),
            line: span.map(|s| s.start.line),
            column: span.map(|s| s.start.column),
            end_line: span.map(|s| s.end.line),
            end_column: span.map(|s| s.end.column),
            help: d.help.clone(),
            notes: d.notes.clone(),
        }
    }
}

/// The head of statement number `statement` of the script `index` indexes, at `span`,
/// whose result has `schema` (none for a command). A span that is only a start (a
/// server streaming rows says only where the statement starts) is read a little way on.
pub fn report_head(
    index: &LineIndex<'_>,
    statement: usize,
    span: Span,
    schema: Option<&SchemaRef>,
) -> ReportHead {
    let script = index.text();
    let text = if span.end == span.start {
        let from = index.offset(span.start);
        let mut to = (from + KIND_LOOKAHEAD).min(script.len());
        while !script.is_char_boundary(to) {
            to -= 1;
        }
        script.get(from..to).unwrap_or("")
    } else {
        index.slice(span)
    };
    ReportHead {
        statement,
        kind: statement_kind(text),
        columns: schema.map(report_columns).unwrap_or_default(),
    }
}

/// The tail of a finished statement: `row_count` rows were returned (streamed ones are
/// counted by whoever printed them).
pub fn report_tail(outcome: &Outcome, row_count: u64) -> ReportTail {
    let (span, ok, status, diags) = match outcome {
        Ok(r) => {
            let status = match &r.output {
                Output::Done(tag) => Some(tag.clone()),
                Output::Rows { .. } | Output::Streamed { .. } => None,
            };
            (r.span, true, status, r.warnings.as_slice())
        }
        Err(e) => (e.span, false, None, e.diagnostics.as_slice()),
    };
    let mut notes: Vec<ReportDiagnostic> = Vec::new();
    let mut diagnostics = Vec::new();
    for d in diags {
        if d.severity == Severity::Note {
            notes.push(d.into());
        } else {
            diagnostics.push(d.into());
        }
    }
    if let Ok(r) = outcome
        && let Output::Streamed {
            rows,
            stopped: true,
            ..
        } = r.output
    {
        notes.push(
            (&Diagnostic::note(format!("the query was stopped after {rows} rows"))
                .with_span(r.span)
                .with_code(tributary_types::codes::INFO))
                .into(),
        );
    }
    ReportTail {
        span: span.into(),
        ok,
        status,
        row_count,
        notes,
        diagnostics,
    }
}

/// The whole report of a statement of the script `index` indexes, whose rows (if any)
/// are in its outcome.
pub fn statement_report(
    index: &LineIndex<'_>,
    statement: usize,
    outcome: &Outcome,
) -> StatementReport {
    let (span, schema, batches) = match outcome {
        Ok(r) => match &r.output {
            Output::Rows { schema, batches } => (r.span, Some(schema), batches.as_slice()),
            Output::Streamed { schema, .. } => (r.span, Some(schema), &[][..]),
            Output::Done(_) => (r.span, None, &[][..]),
        },
        Err(e) => (e.span, None, &[][..]),
    };
    let head = report_head(index, statement, span, schema);
    let mut rows = Vec::new();
    let mut row_error = None;
    if let Some(schema) = schema {
        let encoder = RowObjects::new(schema);
        for batch in batches {
            match encoder.rows(batch) {
                Ok(mut r) => rows.append(&mut r),
                Err(e) => row_error = Some(e),
            }
        }
    }
    let mut tail = report_tail(outcome, rows.len() as u64);
    if let Some(e) = row_error {
        tail.diagnostics.push(
            (&Diagnostic::error(format!("the result cannot be written as JSON: {e}"))
                .with_span(span)
                .with_code(tributary_types::codes::EXECUTION_ERROR))
                .into(),
        );
    }
    StatementReport { head, rows, tail }
}

/// The columns of a result, named as its rows' keys.
pub fn report_columns(schema: &SchemaRef) -> Vec<ReportColumn> {
    let keys = row_keys(schema);
    schema
        .fields()
        .iter()
        .zip(keys)
        .map(|(f, name)| ReportColumn {
            name,
            data_type: tributary_types::SourceField::from_arrow(f)
                .map(|s| s.field_type.sql_name())
                .unwrap_or_else(|| f.data_type().to_string()),
            nullable: f.is_nullable(),
        })
        .collect()
}

/// Each column's key in a row object: its name, or for a name already used, the name
/// and its occurrence (`id#2`), so that no value hides another.
fn row_keys(schema: &SchemaRef) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    schema
        .fields()
        .iter()
        .map(|f| {
            let n = seen.entry(f.name().as_str()).or_insert(0);
            *n += 1;
            if *n == 1 {
                f.name().clone()
            } else {
                format!("{}#{n}", f.name())
            }
        })
        .collect()
}

/// Turns a result's batches into row objects, keyed as [`report_columns`] names them.
#[derive(Debug, Clone)]
pub struct RowObjects {
    keys: Vec<String>,
    positional: SchemaRef,
}

impl RowObjects {
    /// An encoder for rows of `schema`.
    pub fn new(schema: &SchemaRef) -> Self {
        // Arrow's writer keys values by field name; positional names cannot collide.
        let positional = Arc::new(Schema::new(
            schema
                .fields()
                .iter()
                .enumerate()
                .map(|(i, f)| f.as_ref().clone().with_name(format!("c{i}")))
                .collect::<Vec<Field>>(),
        ));
        Self {
            keys: row_keys(schema),
            positional,
        }
    }

    /// The rows of `batch`, each an object with every column's key (NULL as `null`).
    pub fn rows(&self, batch: &RecordBatch) -> Result<Vec<Map<String, Value>>, String> {
        let renamed = RecordBatch::try_new(self.positional.clone(), batch.columns().to_vec())
            .map_err(|e| e.to_string())?;
        let mut buf = Vec::new();
        {
            let mut w = datafusion::arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, datafusion::arrow::json::writer::LineDelimited>(&mut buf);
            w.write(&renamed).map_err(|e| e.to_string())?;
            w.finish().map_err(|e| e.to_string())?;
        }
        let mut rows = Vec::with_capacity(batch.num_rows());
        for line in buf.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let mut positional: Map<String, Value> =
                serde_json::from_slice(line).map_err(|e| e.to_string())?;
            let row = self
                .keys
                .iter()
                .enumerate()
                .map(|(i, key)| {
                    let value = positional.remove(&format!("c{i}")).unwrap_or(Value::Null);
                    (key.clone(), value)
                })
                .collect();
            rows.push(row);
        }
        Ok(rows)
    }
}

/// What a statement is, from its first words: `CREATE TABLE`, `SHOW CREATE TABLE`,
/// `SELECT` (also for `WITH` and `VALUES`), or its first keyword for other statements.
pub fn statement_kind(text: &str) -> String {
    let words: Vec<String> = tokens(text)
        .into_iter()
        .take_while(|t| t.kind == Kind::Word)
        .take(4)
        .map(|t| t.text(text).to_ascii_uppercase())
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    for (prefix, kind) in KINDS {
        if words.starts_with(prefix) {
            return (*kind).to_string();
        }
    }
    words.first().map(|w| w.to_string()).unwrap_or_default()
}

/// First words and the kind they start, longest first where one prefixes another.
const KINDS: &[(&[&str], &str)] = &[
    (
        &["CREATE", "CONNECTION", "PROFILE"],
        "CREATE CONNECTION PROFILE",
    ),
    (&["CREATE", "TEMPORARY", "TABLE"], "CREATE TABLE"),
    (&["CREATE", "TABLE"], "CREATE TABLE"),
    (
        &["ALTER", "CONNECTION", "PROFILE"],
        "ALTER CONNECTION PROFILE",
    ),
    (
        &["DROP", "CONNECTION", "PROFILE"],
        "DROP CONNECTION PROFILE",
    ),
    (&["DROP", "TABLE"], "DROP TABLE"),
    (
        &["SHOW", "CREATE", "CONNECTION"],
        "SHOW CREATE CONNECTION PROFILE",
    ),
    (&["SHOW", "CREATE", "TABLE"], "SHOW CREATE TABLE"),
    (
        &["SHOW", "CONNECTION", "PROFILES"],
        "SHOW CONNECTION PROFILES",
    ),
    (&["SHOW", "TABLES"], "SHOW TABLES"),
    (&["SHOW", "TOPICS"], "SHOW TOPICS"),
    (&["SHOW", "DIRECTORIES"], "SHOW DIRECTORIES"),
    (&["SHOW", "CONNECTORS"], "SHOW CONNECTORS"),
    (
        &["DESCRIBE", "CONNECTION", "PROFILE"],
        "DESCRIBE CONNECTION PROFILE",
    ),
    (&["DESCRIBE", "CONNECTOR"], "DESCRIBE CONNECTOR"),
    (&["DESCRIBE"], "DESCRIBE TABLE"),
    (
        &["TEST", "CONNECTION", "PROFILE"],
        "TEST CONNECTION PROFILE",
    ),
    (&["TEST", "TABLE"], "TEST TABLE"),
    (&["INSERT"], "INSERT"),
    (&["WITH"], "SELECT"),
    (&["VALUES"], "SELECT"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{BooleanArray, Float64Array, Int64Array, StringArray};
    use datafusion::arrow::datatypes::DataType;

    #[test]
    fn kinds_come_from_the_first_words_whatever_their_case_and_comments() {
        assert_eq!(
            statement_kind("create temporary table t (a int) with (connector = 'x')"),
            "CREATE TABLE"
        );
        assert_eq!(
            statement_kind("-- why\nSHOW CREATE CONNECTION PROFILE p"),
            "SHOW CREATE CONNECTION PROFILE"
        );
        assert_eq!(statement_kind("describe t"), "DESCRIBE TABLE");
        assert_eq!(
            statement_kind("WITH x AS (SELECT 1) SELECT * FROM x"),
            "SELECT"
        );
        assert_eq!(statement_kind("select 1"), "SELECT");
        assert_eq!(statement_kind("explain select 1"), "EXPLAIN");
        assert_eq!(statement_kind("frobnicate"), "FROBNICATE");
        assert_eq!(statement_kind("'not a word'"), "");
    }

    #[test]
    fn rows_keep_types_every_key_and_repeated_names_apart() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("ok", DataType::Boolean, true),
            Field::new("id", DataType::Float64, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2])),
                Arc::new(StringArray::from(vec![Some("a"), None])),
                Arc::new(BooleanArray::from(vec![Some(true), None])),
                Arc::new(Float64Array::from(vec![Some(0.5), None])),
            ],
        )
        .expect("a batch");
        let rows = RowObjects::new(&schema).rows(&batch).expect("rows");
        assert_eq!(
            serde_json::to_string(&rows).expect("json"),
            r#"[{"id":1,"name":"a","ok":true,"id#2":0.5},{"id":2,"name":null,"ok":null,"id#2":null}]"#
        );
        let columns = report_columns(&schema);
        assert_eq!(columns[3].name, "id#2");
        assert_eq!(columns[0].data_type, "BIGINT");
        assert!(!columns[0].nullable);
    }

    #[test]
    fn a_diagnostic_keeps_every_key_and_its_place() {
        let d = Diagnostic::error("unknown option 'topik'")
            .with_span(Span::new(
                tributary_types::Location::new(2, 5),
                tributary_types::Location::new(2, 10),
            ))
            .with_help("Did you mean 'topic'?")
            .with_code(tributary_types::codes::UNKNOWN_OPTION);
        let json = serde_json::to_value(ReportDiagnostic::from(&d)).expect("json");
        assert_eq!(
            json,
            serde_json::json!({
                "severity": "error", "code": "UNKNOWN_OPTION",
                "message": "unknown option 'topik'",
                "line": 2, "column": 5, "end_line": 2, "end_column": 10,
                "help": "Did you mean 'topic'?", "notes": []
            })
        );
        let unplaced =
            serde_json::to_value(ReportDiagnostic::from(&Diagnostic::note("n"))).expect("json");
        assert_eq!(unplaced["line"], Value::Null);
        assert_eq!(unplaced["code"], Value::Null);
    }
}
