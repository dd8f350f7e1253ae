//! INSERT targets: a sink created without columns takes its schema from its first INSERT,
//! and every later INSERT must produce the same columns.

use crate::windows::implicit_time::plan_statement;
use datafusion::execution::SessionState;
use datafusion::sql::parser::{DFParser, Statement as DFStatement};
use datafusion::sql::sqlparser::ast::{Statement as SqlStatement, TableObject};
use tributary_catalog::CatalogStore;
use tributary_dialect::datafusion_diagnostics::datafusion_diagnostic;
use tributary_types::{ConnectionTable, ConnectionType, Diagnostic, SourceField, Span};

/// The table an INSERT writes to, and the schema inferred for it if it has none yet.
#[derive(Debug)]
pub struct InsertTarget {
    /// The stored table.
    pub table: ConnectionTable,
    /// The fields taken from the query, when the table awaits its schema.
    pub inferred: Option<Vec<SourceField>>,
}

/// The INSERT statement in `sql` (directly, or under EXPLAIN).
fn parse_insert(sql: &str) -> Option<datafusion::sql::sqlparser::ast::Insert> {
    let mut statements =
        DFParser::parse_sql_with_dialect(sql, &tributary_dialect::parser::DIALECT).ok()?;
    let insert = match statements.pop_front()? {
        DFStatement::Statement(s) => *s,
        DFStatement::Explain(e) => match *e.statement {
            DFStatement::Statement(s) => *s,
            _ => return None,
        },
        _ => return None,
    };
    match insert {
        SqlStatement::Insert(insert) => Some(insert),
        _ => None,
    }
}

/// For an INSERT that gives a window (the struct of `start` and `end` that `tumble`,
/// `hop` and `session` return) to a TIMESTAMP column: the diagnostic naming the column
/// and saying how to take one end of the window. DataFusion's own message only names the
/// two types.
pub async fn window_into_timestamp(
    sql: &str,
    store: &dyn CatalogStore,
    state: &SessionState,
    span: Span,
) -> Option<Diagnostic> {
    let insert = parse_insert(sql)?;
    let TableObject::TableName(name) = &insert.table else {
        return None;
    };
    let table_name = name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(tributary_dialect::parser::normalize_ident)?;
    let table = store.table_by_name(&table_name).ok()??;
    let targets: Vec<SourceField> = if insert.columns.is_empty() {
        table.schema.fields.clone()
    } else {
        insert
            .columns
            .iter()
            .filter_map(|c| {
                let name = tributary_dialect::parser::normalize_ident(c.0.last()?.as_ident()?);
                table.schema.fields.iter().find(|f| f.name == name).cloned()
            })
            .collect()
    };
    let source = insert.source.as_ref()?;
    let source = source.to_string();
    let plan = plan_statement(&source, state.create_logical_plan(&source))
        .await
        .ok()?;
    let window = crate::windows::window_type();
    let (given, target) = plan.schema().fields().iter().zip(&targets).find(|(f, t)| {
        *f.data_type() == window
            && matches!(t.field_type, tributary_types::FieldType::Timestamp { .. })
    })?;
    Some(
        Diagnostic::error(format!(
            "column '{}' of table '{}' is a TIMESTAMP, but the query gives it a window ('{}', a struct of start and end)",
            target.name, table.name, given.name()
        ))
        .with_span(span)
        .with_help(format!(
            "Take one end of the window: name it in a subquery and select w.start (or w.end), or write tumble(...)['start'] AS {}.",
            target.name
        ))
        .with_code(tributary_types::codes::PLAN_ERROR),
    )
}

/// Inspect `sql` (an INSERT, or EXPLAIN of one) for a sink whose schema is inferred.
pub async fn insert_target(
    sql: &str,
    store: &dyn CatalogStore,
    state: &SessionState,
    span: Span,
) -> Result<Option<InsertTarget>, Vec<Diagnostic>> {
    let Some(insert) = parse_insert(sql) else {
        return Ok(None);
    };
    let TableObject::TableName(name) = &insert.table else {
        return Ok(None);
    };
    let table_name = name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(tributary_dialect::parser::normalize_ident)
        .unwrap_or_default();
    let Ok(Some(table)) = store.table_by_name(&table_name) else {
        return Ok(None);
    };
    let inferred_sink =
        table.connection_type == ConnectionType::Sink && table.schema.inferred == Some(true);
    let Some(source) = insert.source.as_ref().filter(|_| inferred_sink) else {
        return Ok(Some(InsertTarget {
            table,
            inferred: None,
        }));
    };
    let source = source.to_string();
    let plan = plan_statement(&source, state.create_logical_plan(&source))
        .await
        .map_err(|e| vec![datafusion_diagnostic(&e, span)])?;
    let mut fields = Vec::new();
    for f in plan.schema().fields() {
        match SourceField::from_arrow(f) {
            Some(sf) => fields.push(sf),
            None => {
                return Err(vec![
                    Diagnostic::error(format!("column '{}' of the query has type {}, which cannot be written to a connection table", f.name(), f.data_type()))
                        .with_span(span)
                        .with_help("CAST it to a supported type, such as TEXT or BIGINT.")
                        .with_code(tributary_types::codes::PLAN_ERROR),
                ]);
            }
        }
    }
    if table.awaits_inferred_schema() {
        return Ok(Some(InsertTarget {
            table,
            inferred: Some(fields),
        }));
    }
    let shape = |fs: &[SourceField]| {
        fs.iter()
            .map(|f| format!("{} {}", f.name, f.field_type))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let same = fields.len() == table.schema.fields.len()
        && fields
            .iter()
            .zip(&table.schema.fields)
            .all(|(a, b)| a.name == b.name && a.field_type == b.field_type);
    if !same {
        return Err(vec![
            Diagnostic::error(format!(
                "all inserts into table '{}' must share the same schema",
                table.name
            ))
            .with_span(span)
            .with_note(format!(
                "the table's schema, from its first INSERT, is ({})",
                shape(&table.schema.fields)
            ))
            .with_note(format!("this query produces ({})", shape(&fields)))
            .with_help("Select the same column names and types, using aliases and CASTs.")
            .with_code(tributary_types::codes::PLAN_ERROR),
        ]);
    }
    Ok(Some(InsertTarget {
        table,
        inferred: None,
    }))
}
