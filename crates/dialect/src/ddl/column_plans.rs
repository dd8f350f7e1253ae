//! What needs a table's final columns (declared ones and a schema document's): the
//! primary key, virtual columns planned with DataFusion against the fields, and the
//! watermark.

use super::columns::Columns;
use crate::parser::ast::CreateTable;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{DFSchema, ExprSchema};
use datafusion::execution::SessionState;
use datafusion::logical_expr::ExprSchemable;
use std::collections::BTreeSet;
use tributary_types::options::quoted_list;
use tributary_types::{Diagnostic, FieldType, Span, VirtualColumn, Watermark, closest};

/// Check the primary key, plan the virtual columns and the watermark.
pub(crate) fn finish_columns(
    state: &SessionState,
    stmt: &CreateTable,
    cols: &mut Columns,
    diags: &mut Vec<Diagnostic>,
) {
    let first = diags.len();
    primary_key(stmt, cols, diags);
    virtual_columns(state, stmt, cols, diags);
    watermark(state, stmt, cols, diags);
    tributary_types::codes::fill(&mut diags[first..], tributary_types::codes::INVALID_SCHEMA);
}

/// Virtual columns see the physical and metadata columns, as in Arroyo.
fn virtual_columns(
    state: &SessionState,
    stmt: &CreateTable,
    cols: &mut Columns,
    diags: &mut Vec<Diagnostic>,
) {
    let positions = cols.virtual_positions();
    if positions.is_empty() {
        return;
    }
    let Ok(base) = DFSchema::try_from(super::columns::all_arrow_fields(&cols.fields, &[])) else {
        return;
    };
    for (index, position) in positions {
        let col = &stmt.columns[index];
        let (Some(g), Some(declared)) = (&col.generated, cols.declared_types.get(&index).cloned())
        else {
            continue;
        };
        let Some((ty, nullable)) = plan_expr(
            state,
            &base,
            (&g.expr.to_string(), g.span),
            &format!("virtual column '{}'", col.name.value),
            &cols.refused,
            diags,
        ) else {
            continue;
        };
        match FieldType::from_arrow(&Field::new("", ty.clone(), true)) {
            // A wider declared type is a lossless cast, as PostgreSQL allows.
            Some(planned) if planned.widens_to(&declared) => {}
            Some(planned) => diags.push(
                Diagnostic::error(format!(
                    "virtual column '{}' is declared {} but its expression is {}",
                    col.name.value, declared, planned
                ))
                .with_span(col.type_span)
                .with_help(format!("Declare it as {planned}, or CAST the expression to {declared}.")),
            ),
            None => diags.push(
                Diagnostic::error(format!("the expression of virtual column '{}' has type {ty}, which cannot be used in a connection table", col.name.value))
                    .with_span(g.span)
                    .with_help(format!("CAST it to {declared}.")),
            ),
        }
        if col.not_null && nullable {
            diags.push(
                Diagnostic::error(format!(
                    "virtual column '{}' is declared NOT NULL but its expression can be NULL",
                    col.name.value
                ))
                .with_span(g.span)
                .with_help("Remove NOT NULL, or wrap the expression in COALESCE(..)."),
            );
        }
        cols.virtual_columns.push(VirtualColumn {
            name: col.name.value.clone(),
            expression: g.expr.to_string(),
            field_type: declared,
            required: !nullable,
            stored: g.stored,
            position,
        });
    }
}

fn primary_key(stmt: &CreateTable, cols: &mut Columns, diags: &mut Vec<Diagnostic>) {
    if stmt.primary_key.is_empty() {
        return;
    }
    if !cols.primary_keys.is_empty() {
        diags.push(
            Diagnostic::error(format!(
                "table '{}' declares its primary key twice",
                stmt.name.value
            ))
            .with_span(stmt.primary_key[0].span)
            .with_help("Declare the key either on the columns or in PRIMARY KEY (...), not both."),
        );
        return;
    }
    for k in &stmt.primary_key {
        match cols
            .fields
            .iter_mut()
            .find(|f| f.name.eq_ignore_ascii_case(&k.value))
        {
            Some(f) => {
                f.required = true;
                cols.primary_keys.insert(f.name.clone());
            }
            None if cols.refused.contains(&k.value.to_lowercase()) => {}
            None => diags.push(
                Diagnostic::error(format!(
                    "primary key column '{}' is not a column of table '{}'",
                    k.value, stmt.name.value
                ))
                .with_span(k.span)
                .with_help("Name a physical or metadata column."),
            ),
        }
    }
}

fn watermark(
    state: &SessionState,
    stmt: &CreateTable,
    cols: &mut Columns,
    diags: &mut Vec<Diagnostic>,
) {
    for extra in stmt.watermarks.iter().skip(1) {
        diags.push(
            Diagnostic::error("only one WATERMARK FOR clause is allowed per table")
                .with_span(extra.span)
                .with_help("Remove the extra WATERMARK FOR clause."),
        );
    }
    let Some(w) = stmt.watermarks.first() else {
        return;
    };
    let schema = cols.arrow_schema();
    let Ok(column) = schema
        .field_with_name(&w.column.value)
        .cloned()
        .or_else(|_| {
            schema
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(&w.column.value))
                .map(|f| f.as_ref().clone())
                .ok_or(())
        })
    else {
        if cols.refused.contains(&w.column.value.to_lowercase()) {
            return;
        }
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let mut d = Diagnostic::error(format!(
            "WATERMARK FOR column '{}' does not exist in table '{}'",
            w.column.value, stmt.name.value
        ))
        .with_span(w.column.span);
        if let Some(s) = closest(&w.column.value, names.iter().copied()) {
            d = d.with_help(format!("Did you mean '{s}'?"));
        } else {
            d = d.with_help("Name a TIMESTAMP column of the table.");
        }
        diags.push(d);
        return;
    };
    if !matches!(column.data_type(), DataType::Timestamp(_, None)) {
        let shown = FieldType::from_arrow(&column)
            .map(|t| t.to_string())
            .unwrap_or_else(|| column.data_type().to_string());
        diags.push(
            Diagnostic::error(format!(
                "WATERMARK FOR column '{}' has type {shown}, but it must be a TIMESTAMP",
                column.name()
            ))
            .with_span(w.column.span)
            .with_help("Use a TIMESTAMP column, or add a virtual column that converts this one."),
        );
        return;
    }
    let mut expression = None;
    if let Some((expr, span)) = &w.expr {
        let Ok(df) = DFSchema::try_from(schema) else {
            return;
        };
        if let Some((ty, nullable)) = plan_expr(
            state,
            &df,
            (&expr.to_string(), *span),
            "the WATERMARK FOR expression",
            &cols.refused,
            diags,
        ) {
            if !matches!(ty, DataType::Timestamp(_, None)) {
                diags.push(
                    Diagnostic::error(format!("the WATERMARK FOR expression has type {ty}, but it must be a TIMESTAMP"))
                        .with_span(*span)
                        .with_help(format!("Subtract an interval from the column, for example {} - INTERVAL '5' SECOND.", column.name())),
                );
            } else if nullable {
                diags.push(
                    Diagnostic::error(
                        "the WATERMARK FOR expression can be NULL, but it must be NOT NULL",
                    )
                    .with_span(*span)
                    .with_help(format!(
                        "Declare column '{}' NOT NULL, or wrap the expression in COALESCE(..).",
                        column.name()
                    )),
                );
            }
        }
        expression = Some(expr.to_string());
    }
    cols.watermark = Some(Watermark {
        column: column.name().clone(),
        expression,
    });
}

/// Plan `sql` against `schema`: its type and nullability, or a diagnostic at `span`
/// (none when the expression names a column whose declaration was `refused`: that
/// column's error says what is wrong).
pub(crate) fn plan_expr(
    state: &SessionState,
    schema: &DFSchema,
    (sql, span): (&str, Span),
    what: &str,
    refused: &BTreeSet<String>,
    diags: &mut Vec<Diagnostic>,
) -> Option<(DataType, bool)> {
    let planned = state.create_logical_expr(sql, schema).and_then(|e| {
        let ty = e.get_type(schema)?;
        let nullable = e.nullable(schema as &dyn ExprSchema)?;
        Ok((ty, nullable))
    });
    match planned {
        Ok(r) => Some(r),
        Err(e) => {
            let msg = crate::datafusion_diagnostics::datafusion_message(&e);
            let d = match msg.strip_prefix("no field named ") {
                Some(rest) => {
                    let field = rest
                        .split(['.', ' '])
                        .next()
                        .unwrap_or(rest)
                        .trim_matches('"');
                    if refused.contains(&field.to_lowercase()) {
                        return None;
                    }
                    let names: Vec<&str> =
                        schema.fields().iter().map(|f| f.name().as_str()).collect();
                    let d = Diagnostic::error(format!("{what} refers to unknown column '{field}'"))
                        .with_span(span);
                    match closest(field, names.iter().copied()) {
                        Some(s) => d.with_help(format!("Did you mean '{s}'?")),
                        None => d.with_help(format!(
                            "Refer to the table's physical or metadata columns: {}.",
                            quoted_list(&names)
                        )),
                    }
                }
                None => Diagnostic::error(format!("cannot plan {what}: {msg}")).with_span(span),
            };
            diags.push(d);
            None
        }
    }
}
