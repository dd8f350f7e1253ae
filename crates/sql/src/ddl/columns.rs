//! Columns of a connection table: physical, metadata and virtual columns, the primary key
//! and the watermark, each checked with a diagnostic that points at the column.

use crate::parser::ast::CreateTable;
use crate::types::field_type;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{DFSchema, ExprSchema};
use datafusion::execution::SessionState;
use datafusion::logical_expr::ExprSchemable;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tributary_connectors::Connector;
use tributary_types::options::quoted_list;
use tributary_types::{
    Diagnostic, FieldType, SourceField, Span, VirtualColumn, Watermark, closest,
};

/// The column part of a table definition.
#[derive(Debug, Default)]
pub(crate) struct Columns {
    /// Physical and metadata fields in declaration order.
    pub fields: Vec<SourceField>,
    /// Virtual columns.
    pub virtual_columns: Vec<VirtualColumn>,
    /// Primary-key column names.
    pub primary_keys: BTreeSet<String>,
    /// The watermark declaration.
    pub watermark: Option<Watermark>,
    /// Where each column is declared, by lowercase name.
    pub spans: HashMap<String, Span>,
    /// Why a column from a schema document was approximated, by column name.
    pub notes: BTreeMap<String, String>,
}

impl Columns {
    /// All columns (fields and virtual) as an Arrow schema, in declaration order.
    pub fn arrow_schema(&self) -> Schema {
        all_arrow_fields(&self.fields, &self.virtual_columns)
    }
}

/// Physical, metadata and virtual columns in declaration order as an Arrow schema.
pub(crate) fn all_arrow_fields(
    fields: &[SourceField],
    virtual_columns: &[VirtualColumn],
) -> Schema {
    let mut out: Vec<Field> = Vec::with_capacity(fields.len() + virtual_columns.len());
    let mut physical = fields.iter();
    let total = fields.len() + virtual_columns.len();
    for position in 0..total {
        match virtual_columns.iter().find(|v| v.position == position) {
            Some(v) => out.push(
                SourceField {
                    name: v.name.clone(),
                    field_type: v.field_type.clone(),
                    required: v.required,
                    metadata_key: None,
                }
                .to_arrow(),
            ),
            None => {
                if let Some(f) = physical.next() {
                    out.push(f.to_arrow());
                }
            }
        }
    }
    Schema::new(out)
}

/// Build and check the columns of `stmt` for connector `c`.
pub(crate) fn build_columns(
    state: &SessionState,
    stmt: &CreateTable,
    c: &dyn Connector,
    diags: &mut Vec<Diagnostic>,
) -> Columns {
    let mut cols = Columns::default();
    let mut pending_virtual = Vec::new();
    for (position, col) in stmt.columns.iter().enumerate() {
        let key = col.name.value.to_lowercase();
        if cols.spans.contains_key(&key) {
            diags.push(
                Diagnostic::error(format!(
                    "duplicate column name '{}' in table '{}'",
                    col.name.value, stmt.name.value
                ))
                .with_span(col.name.span)
                .with_help("Give every column a distinct name."),
            );
            continue;
        }
        cols.spans.insert(key, col.name.span);
        let ty = match field_type(&col.name.value, &col.data_type, col.type_span) {
            Ok(t) => t,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        if col.primary_key {
            cols.primary_keys.insert(col.name.value.clone());
        }
        if let Some(g) = &col.generated {
            pending_virtual.push((position, col, ty, g));
            continue;
        }
        let mut field = SourceField::new(col.name.value.clone(), ty);
        field.required = col.not_null || col.primary_key;
        if let Some((key, span)) = &col.metadata_key {
            check_metadata(c, &field, key, *span, diags);
            field.metadata_key = Some(key.clone());
        }
        cols.fields.push(field);
    }
    primary_key(stmt, &mut cols, diags);
    // Virtual columns see the physical and metadata columns, as in Arroyo.
    let base = DFSchema::try_from(all_arrow_fields(&cols.fields, &[])).ok();
    for (position, col, declared, g) in pending_virtual {
        let Some(base) = &base else { break };
        let Some((ty, nullable)) = plan_expr(
            state,
            base,
            &g.expr.to_string(),
            g.span,
            &format!("virtual column '{}'", col.name.value),
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
    watermark(state, stmt, &mut cols, diags);
    cols
}

fn check_metadata(
    c: &dyn Connector,
    field: &SourceField,
    key: &str,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) {
    let keys = c.metadata_keys();
    match keys.iter().find(|m| m.key == key) {
        None => {
            let names: Vec<&str> = keys.iter().map(|m| m.key).collect();
            let mut d = Diagnostic::error(format!(
                "unknown metadata key '{key}' for connector '{}'",
                c.id()
            ))
            .with_span(span);
            d = if names.is_empty() {
                d.with_note(format!("connector '{}' exposes no metadata", c.id()))
                    .with_help("Remove METADATA FROM, or read the value from the message itself.")
            } else {
                d = d.with_note(format!("its metadata keys are {}", quoted_list(&names)));
                match closest(key, names.iter().copied()) {
                    Some(s) => d.with_help(format!("Did you mean '{s}'?")),
                    None => d.with_help(format!("Use one of {}.", quoted_list(&names))),
                }
            };
            diags.push(d);
        }
        Some(m) if m.sql_type.field_type() != field.field_type => diags.push(
            Diagnostic::error(format!(
                "column '{}' reads metadata '{key}', which is {}, but the column is declared {}",
                field.name,
                m.sql_type.field_type(),
                field.field_type
            ))
            .with_span(span)
            .with_help(format!(
                "Declare it as {} {} METADATA FROM '{key}'.",
                field.name,
                m.sql_type.field_type()
            )),
        ),
        Some(_) => {}
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
            &expr.to_string(),
            *span,
            "the WATERMARK FOR expression",
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

/// Plan `sql` against `schema`: its type and nullability, or a diagnostic at `span`.
pub(crate) fn plan_expr(
    state: &SessionState,
    schema: &DFSchema,
    sql: &str,
    span: Span,
    what: &str,
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
            let msg = crate::errors::datafusion_message(&e);
            let d = match msg.strip_prefix("no field named ") {
                Some(rest) => {
                    let field = rest
                        .split(['.', ' '])
                        .next()
                        .unwrap_or(rest)
                        .trim_matches('"');
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
