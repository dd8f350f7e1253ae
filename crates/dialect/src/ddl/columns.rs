//! Columns of a connection table as declared: physical, metadata and virtual columns,
//! and `*` (the columns of a schema document), each checked with a diagnostic that points
//! at the column. The schema document's columns join them next (`schema_def`); then
//! `column_plans` checks what needs the final columns: keys, virtual columns, watermark.

use crate::column_types::field_type;
use crate::parser::ast::CreateTable;
use datafusion::arrow::datatypes::{Field, Schema};
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
    /// Where columns that were not declared came from (a schema document, the connector,
    /// a sink's first INSERT), by name.
    pub origins: BTreeMap<String, String>,
    /// The column list in order.
    pub layout: Vec<Slot>,
    /// The declared types of virtual columns, by their index in the statement.
    pub declared_types: HashMap<usize, FieldType>,
    /// Declared columns whose type was refused, by lowercase name: their error is the
    /// root cause, so what refers to them (keys, watermarks, "no columns") is not
    /// reported again.
    pub refused: BTreeSet<String>,
}

impl Columns {
    /// All columns (fields and virtual) as an Arrow schema, in declaration order.
    pub fn arrow_schema(&self) -> Schema {
        all_arrow_fields(&self.fields, &self.virtual_columns)
    }
}

/// Physical, metadata and virtual columns in declaration order as an Arrow schema.
pub fn all_arrow_fields(fields: &[SourceField], virtual_columns: &[VirtualColumn]) -> Schema {
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

/// One place in the column list, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A physical or metadata field, by name.
    Field(String),
    /// A virtual column, by its index in the statement's column list.
    Virtual(usize),
    /// `*`, until the schema's columns take its place.
    Star,
}

/// Declare the columns of `stmt` for connector `c`: physical and metadata fields checked,
/// virtual columns kept for [`super::column_plans::finish_columns`].
pub(crate) fn declare_columns(
    stmt: &CreateTable,
    c: &dyn Connector,
    diags: &mut Vec<Diagnostic>,
) -> Columns {
    let first = diags.len();
    let cols = declared_columns(stmt, c, diags);
    tributary_types::codes::fill(&mut diags[first..], tributary_types::codes::INVALID_SCHEMA);
    cols
}

fn declared_columns(stmt: &CreateTable, c: &dyn Connector, diags: &mut Vec<Diagnostic>) -> Columns {
    let mut cols = Columns::default();
    for (position, col) in stmt.columns.iter().enumerate() {
        if stmt.star.is_some_and(|(at, _)| at == position) {
            cols.layout.push(Slot::Star);
        }
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
        cols.spans.insert(key.clone(), col.name.span);
        let ty = match field_type(&col.name.value, &col.data_type, col.type_span) {
            Ok(t) => t,
            Err(d) => {
                diags.push(d);
                cols.refused.insert(key);
                continue;
            }
        };
        if col.primary_key {
            cols.primary_keys.insert(col.name.value.clone());
        }
        if col.generated.is_some() {
            cols.layout.push(Slot::Virtual(position));
            cols.declared_types.insert(position, ty);
            continue;
        }
        let mut field = SourceField::new(col.name.value.clone(), ty);
        field.required = col.not_null || col.primary_key;
        if let Some((key, span)) = &col.metadata_key {
            check_metadata(c, &field, key, *span, diags);
            field.metadata_key = Some(key.clone());
        }
        cols.layout.push(Slot::Field(field.name.clone()));
        cols.fields.push(field);
    }
    if stmt.star.is_some_and(|(at, _)| at >= stmt.columns.len()) {
        cols.layout.push(Slot::Star);
    }
    cols
}

impl Columns {
    /// Whether the column list has `*`.
    pub(crate) fn has_star(&self) -> bool {
        self.layout.contains(&Slot::Star)
    }

    /// Physical (not metadata) fields that were declared.
    pub(crate) fn declared_physical(&self) -> Vec<&SourceField> {
        self.fields
            .iter()
            .filter(|f| f.metadata_key.is_none())
            .collect()
    }

    /// Put `fields` where `*` is (or first, when the list has no `*`), recording where
    /// they came from; declared fields keep their places.
    pub(crate) fn insert_at_star(&mut self, fields: Vec<SourceField>, origin: &str) {
        let at = self
            .layout
            .iter()
            .position(|s| *s == Slot::Star)
            .unwrap_or(0);
        self.layout.retain(|s| *s != Slot::Star);
        let slots: Vec<Slot> = fields.iter().map(|f| Slot::Field(f.name.clone())).collect();
        self.layout.splice(at..at, slots);
        for f in &fields {
            self.origins.insert(f.name.clone(), origin.to_string());
        }
        let mut by_name: HashMap<String, SourceField> = std::mem::take(&mut self.fields)
            .into_iter()
            .chain(fields)
            .map(|f| (f.name.clone(), f))
            .collect();
        self.fields = self
            .layout
            .iter()
            .filter_map(|s| match s {
                Slot::Field(name) => by_name.remove(name),
                _ => None,
            })
            .collect();
    }

    /// Replace every field with `fields` (a connector's fixed schema), first in the list.
    pub(crate) fn set_fields(&mut self, fields: Vec<SourceField>, origin: &str) {
        self.layout.retain(|s| matches!(s, Slot::Virtual(_)));
        self.fields.clear();
        self.insert_at_star(fields, origin);
    }

    /// `*` that nothing took the place of (no schema document): dropped.
    pub(crate) fn drop_star(&mut self) {
        self.layout.retain(|s| *s != Slot::Star);
    }

    /// Every field's final position among all columns (fields and virtual ones).
    pub(crate) fn virtual_positions(&self) -> Vec<(usize, usize)> {
        self.layout
            .iter()
            .enumerate()
            .filter_map(|(position, s)| match s {
                Slot::Virtual(index) => Some((*index, position)),
                _ => None,
            })
            .collect()
    }
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
