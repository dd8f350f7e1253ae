//! Arroyo's implicit event time: every row a source reads carries `_timestamp`, the
//! WATERMARK FOR column when the table declares one, else the time its connector gives the
//! record (a Kafka message's timestamp, a generated event's time) or the time it is read.
//!
//! DataFusion has no hidden columns, and a column in a table's schema is in every
//! `SELECT *` (and so in every `INSERT INTO sink SELECT *`). So `_timestamp` joins a
//! source's schema only for statements that use event time: those naming `_timestamp`,
//! `row_time`, `tumble`, `hop` or `session` (and the views such a statement reads).
//! [`plan_statement`] plans a statement with it visible when so, and takes it out of the
//! statement's result again unless the statement's own select list names it.

use datafusion::arrow::datatypes::{DataType, Field, TimeUnit};
use datafusion::common::{Column, Result};
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder};
use datafusion::sql::parser::{DFParser, Statement as DFStatement};
use datafusion::sql::sqlparser::ast::{
    Expr as SqlExpr, Query, SelectItem, SetExpr, Statement as SqlStatement,
};
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
use std::collections::HashMap;
use std::future::Future;

/// The hidden event-time column every source row carries.
pub const TIMESTAMP_COLUMN: &str = "_timestamp";

/// Field metadata on `_timestamp`, so the result of a statement can tell it from a
/// column a user named so (which a connection table may not have: the name is reserved).
pub const IMPLICIT_TIME_METADATA: &str = "tributary.implicit_time";

/// The names whose use makes a statement read event time.
const EVENT_TIME_WORDS: &[&str] = &[TIMESTAMP_COLUMN, "row_time", "tumble", "hop", "session"];

tokio::task_local! {
    /// Whether the statement being planned sees `_timestamp`.
    static VISIBLE: bool;
}

/// Whether the statement being planned sees `_timestamp` on its sources.
pub(crate) fn visible() -> bool {
    VISIBLE.try_with(|v| *v).unwrap_or(false)
}

/// The `_timestamp` field: a nanosecond timestamp that every row has.
pub(crate) fn timestamp_field() -> Field {
    let metadata = HashMap::from([(IMPLICIT_TIME_METADATA.to_string(), "true".to_string())]);
    Field::new(
        TIMESTAMP_COLUMN,
        DataType::Timestamp(TimeUnit::Nanosecond, None),
        false,
    )
    .with_metadata(metadata)
}

/// Whether `text` uses event time: it names `_timestamp` or one of the functions that
/// read it. Read from its tokens, so a word inside a string literal does not count.
pub(crate) fn uses_event_time(text: &str) -> bool {
    let Ok(tokens) = Tokenizer::new(&tributary_dialect::parser::DIALECT, text).tokenize() else {
        // It will not plan either; planning says why.
        return false;
    };
    tokens.iter().any(|t| match t {
        Token::Word(w) => EVENT_TIME_WORDS
            .iter()
            .any(|name| w.value.eq_ignore_ascii_case(name)),
        _ => false,
    })
}

/// Plan `text` with `plan`: with `_timestamp` visible when the text uses event time (or
/// when the statement reading this one, a view's, sees it), and without it in the
/// result unless the text's select list names it. A view read by a statement that sees
/// `_timestamp` keeps it, so windows over the view find their time.
pub async fn plan_statement<F>(text: &str, plan: F) -> Result<LogicalPlan>
where
    F: Future<Output = Result<LogicalPlan>>,
{
    let outer = visible();
    if !outer && !uses_event_time(text) {
        return plan.await;
    }
    let planned = VISIBLE.scope(true, plan).await?;
    if outer || names_timestamp(text) {
        return Ok(planned);
    }
    hide(planned)
}

/// `plan` without the `_timestamp` columns of its result (those marked as the implicit
/// time), unless it is not a query's (an INSERT, an EXPLAIN, DDL).
fn hide(plan: LogicalPlan) -> Result<LogicalPlan> {
    let is_query = !matches!(
        plan,
        LogicalPlan::Dml(_)
            | LogicalPlan::Explain(_)
            | LogicalPlan::Analyze(_)
            | LogicalPlan::Ddl(_)
            | LogicalPlan::Copy(_)
            | LogicalPlan::Statement(_)
            | LogicalPlan::DescribeTable(_)
    );
    if !is_query || !plan.schema().fields().iter().any(|f| is_carried_time(f)) {
        return Ok(plan);
    }
    let kept: Vec<Expr> = plan
        .schema()
        .iter()
        .filter(|(_, f)| !is_carried_time(f))
        .map(|(q, f)| Expr::Column(Column::new(q.cloned(), f.name())))
        .collect();
    if kept.is_empty() {
        // `SELECT * FROM (SELECT _timestamp FROM t)`: it is all the query shows.
        return Ok(plan);
    }
    LogicalPlanBuilder::from(plan).project(kept)?.build()
}

/// Explain a planning failure that `_timestamp` in `*` caused: in a statement that uses
/// event time, `*` includes it (DataFusion has no hidden columns), so an INSERT's query
/// has one column more than its sink, and `*, _timestamp` names it twice.
pub fn explain_wildcard(d: &mut tributary_types::Diagnostic, text: &str) {
    if !uses_event_time(text) {
        return;
    }
    let message = d.message.to_lowercase();
    let help = if message.contains("column count doesn't match insert query") {
        "List the query's columns instead of `*`.".to_string()
    } else if message.contains("unique expression names") && message.contains(TIMESTAMP_COLUMN) {
        format!("Give it another name: SELECT *, {TIMESTAMP_COLUMN} AS event_time.")
    } else {
        return;
    };
    d.notes.push(format!(
        "this statement uses event time, so `*` includes the hidden column {TIMESTAMP_COLUMN}"
    ));
    d.help = Some(help);
}

/// Whether `field` is the implicit `_timestamp` (or passed on from it).
pub(crate) fn is_implicit(field: &Field) -> bool {
    field.metadata().contains_key(IMPLICIT_TIME_METADATA)
}

/// Whether `field` is `_timestamp` carried from a source, under its own name (not a
/// column a query made of it, `row_time() AS ts`).
pub(crate) fn is_carried_time(field: &Field) -> bool {
    field.name() == TIMESTAMP_COLUMN && is_implicit(field)
}

/// Whether the select list of `text`'s query (or of an INSERT's query) names
/// `_timestamp`, as `_timestamp`, `t._timestamp` or `... AS _timestamp`.
fn names_timestamp(text: &str) -> bool {
    let Ok(mut statements) =
        DFParser::parse_sql_with_dialect(text, &tributary_dialect::parser::DIALECT)
    else {
        return false;
    };
    let Some(DFStatement::Statement(statement)) = statements.pop_front() else {
        return false;
    };
    match *statement {
        SqlStatement::Query(q) => query_names_timestamp(&q),
        SqlStatement::Insert(i) => i.source.as_deref().is_some_and(query_names_timestamp),
        _ => false,
    }
}

fn query_names_timestamp(query: &Query) -> bool {
    let mut body = query.body.as_ref();
    // A set operation's columns are its first branch's.
    loop {
        match body {
            SetExpr::SetOperation { left, .. } => body = left,
            SetExpr::Query(q) => body = q.body.as_ref(),
            SetExpr::Select(select) => {
                return select.projection.iter().any(|item| match item {
                    SelectItem::UnnamedExpr(e) => is_timestamp_ref(e),
                    SelectItem::ExprWithAlias { alias, .. } => {
                        alias.value.eq_ignore_ascii_case(TIMESTAMP_COLUMN)
                    }
                    _ => false,
                });
            }
            _ => return false,
        }
    }
}

fn is_timestamp_ref(e: &SqlExpr) -> bool {
    let last = match e {
        SqlExpr::Identifier(i) => Some(i),
        SqlExpr::CompoundIdentifier(parts) => parts.last(),
        SqlExpr::Nested(inner) => return is_timestamp_ref(inner),
        _ => None,
    };
    last.is_some_and(|i| i.value.eq_ignore_ascii_case(TIMESTAMP_COLUMN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_use_event_time_by_their_words_not_their_strings() {
        for uses in [
            "SELECT _timestamp FROM t",
            "SELECT count(*), TUMBLE(interval '1' minute) AS w FROM t GROUP BY w",
            "SELECT row_time() FROM t",
            "SELECT hop(interval '1' second, interval '1' minute) FROM t",
            r#"SELECT "_timestamp" FROM t"#,
        ] {
            assert!(uses_event_time(uses), "{uses}");
        }
        for not in [
            "SELECT * FROM t",
            "SELECT 'tumble' FROM t",
            "SELECT timestamp_col FROM t",
        ] {
            assert!(!uses_event_time(not), "{not}");
        }
    }

    #[test]
    fn a_select_list_names_the_timestamp_only_at_its_top() {
        for named in [
            "SELECT _timestamp FROM t",
            "SELECT t._timestamp, a FROM t",
            "SELECT a, row_time() AS _timestamp FROM t",
            "INSERT INTO s SELECT _timestamp FROM t",
            "SELECT _timestamp FROM t UNION ALL SELECT _timestamp FROM u",
        ] {
            assert!(names_timestamp(named), "{named}");
        }
        for not in [
            "SELECT * FROM t WHERE _timestamp > now()",
            "SELECT * FROM (SELECT _timestamp FROM t)",
            "SELECT _timestamp AS ts FROM t",
        ] {
            assert!(!names_timestamp(not), "{not}");
        }
    }
}
