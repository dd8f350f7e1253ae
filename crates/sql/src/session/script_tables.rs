//! Tables that live for a script, as Arroyo's pipelines have them: a memory table
//! (`CREATE TABLE t (cols)` with no WITH), written by exactly one `INSERT INTO` and read
//! only after it, and a named result (`CREATE TABLE t AS query`). Neither reaches the
//! catalog. Writing one runs nothing: the INSERT's query becomes what reading it reads.

use super::Session;
use super::outcome::{Handled, Reply};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{LogicalPlan, WriteOp};
use std::sync::Arc;
use tributary_dialect::parser::ast::{CreateTable, Name, QueryText};
use tributary_exec::provider::script::{ScriptKind, ScriptTable};
use tributary_types::{Diagnostic, Span, codes};

impl Session {
    /// `CREATE TABLE t (cols)` with no WITH: a memory table.
    pub(super) fn create_memory_table(&self, create: &CreateTable) -> Handled {
        let name = &create.name;
        if create.temporary {
            return Err(vec![no_with(name)]);
        }
        let extra = create
            .columns
            .iter()
            .find_map(|c| {
                c.metadata_key
                    .as_ref()
                    .map(|(_, s)| (*s, "METADATA columns"))
                    .or_else(|| c.generated.as_ref().map(|g| (g.span, "virtual columns")))
            })
            .or_else(|| create.watermarks.first().map(|w| (w.span, "a WATERMARK")))
            .or_else(|| {
                create
                    .partitioned_by
                    .first()
                    .map(|(_, s)| (*s, "PARTITIONED BY"))
            });
        if let Some((span, what)) = extra {
            return Err(vec![
                Diagnostic::error(format!(
                    "memory table '{}' cannot have {what}, which belong to connection tables",
                    name.value
                ))
                .with_span(span)
                .with_code(codes::MISSING_OPTION)
                .with_note("a CREATE TABLE without WITH is a memory table: it lives for the script and holds what one INSERT INTO writes")
                .with_help(CONNECTION_HELP),
            ]);
        }
        if create.columns.is_empty() {
            return Err(vec![
                Diagnostic::error(format!("memory table '{}' declares no columns", name.value))
                    .with_span(name.span)
                    .with_code(codes::INVALID_SCHEMA)
                    .with_help(CONNECTION_HELP),
            ]);
        }
        self.refuse_taken_relation(name)?;
        self.refuse_taken_view(name)?;
        let mut fields = Vec::with_capacity(create.columns.len());
        let mut errors = Vec::new();
        for c in &create.columns {
            match tributary_dialect::column_types::field_type(
                &c.name.value,
                &c.data_type,
                c.type_span,
            ) {
                Ok(t) => fields.push(Field::new(&c.name.value, t.to_arrow(), !c.not_null)),
                Err(d) => errors.push(d),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        self.shared.script().put(ScriptTable {
            name: name.value.clone(),
            kind: ScriptKind::Memory,
            schema: Arc::new(Schema::new(fields)),
            content: None,
        });
        Ok(Reply::done(
            "CREATE TABLE",
            vec![
                Diagnostic::note(format!(
                    "'{}' has no WITH clause, so it is a memory table: it lives for this script and is written by one INSERT INTO",
                    name.value
                ))
                .with_span(name.span)
                .with_code(codes::INFO)
                .with_help(CONNECTION_HELP),
            ],
        ))
    }

    /// `CREATE TABLE t AS query`: a named result for the rest of the script, judged as a
    /// `pipeline` (every source a stream) when the script is checked.
    pub(super) fn create_table_as(
        &self,
        name: &Name,
        query: &QueryText,
        pipeline: bool,
    ) -> Handled {
        self.refuse_taken_relation(name)?;
        self.refuse_taken_view(name)?;
        let plan = self.plan_definition_query(&query.text, query.span)?;
        let mut problems =
            tributary_exec::provider::check_plan(&plan, query.span, self.file_writes);
        if problems.is_empty() {
            let at = tributary_exec::provider::StatementText {
                text: &query.text,
                span: query.span,
                pipeline,
            };
            problems = tributary_exec::provider::streaming_violations(&plan, &at);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        self.shared.script().put(ScriptTable {
            name: name.value.clone(),
            kind: ScriptKind::Query,
            schema: Arc::new(plan.schema().as_arrow().clone()),
            content: Some((plan, query.span)),
        });
        Ok(Reply::done("CREATE TABLE", vec![]))
    }

    /// If `plan` writes a script table, write it (its query becomes the table's content)
    /// and say so; `None` for every other plan.
    pub(super) fn write_script_table(&self, plan: &LogicalPlan, span: Span) -> Option<Handled> {
        let LogicalPlan::Dml(dml) = plan else {
            return None;
        };
        if !matches!(dml.op, WriteOp::Insert(_)) {
            return None;
        }
        let provider = source_as_provider(&dml.target).ok()?;
        let table = provider.downcast_ref::<ScriptTable>()?.clone();
        Some(self.fill_script_table(table, &dml.input, span))
    }

    fn fill_script_table(
        &self,
        mut table: ScriptTable,
        input: &LogicalPlan,
        span: Span,
    ) -> Handled {
        if table.kind == ScriptKind::Query {
            return Err(vec![
                Diagnostic::error(format!(
                    "cannot insert into '{}': it is the result of CREATE TABLE ... AS",
                    table.name
                ))
                .with_span(span)
                .with_code(codes::PLAN_ERROR)
                .with_help("Write to a memory table (CREATE TABLE t (cols)) or a sink instead."),
            ]);
        }
        if let Some((_, first)) = &table.content {
            return Err(vec![
                Diagnostic::error(format!(
                    "memory table '{}' is already written, by the INSERT at line {}",
                    table.name, first.start.line
                ))
                .with_span(span)
                .with_code(codes::PLAN_ERROR)
                .with_note("a memory table is written by exactly one INSERT INTO, as in Arroyo")
                .with_help("Combine the queries with UNION ALL in that one INSERT, or write to another memory table."),
            ]);
        }
        table.content = Some((input.clone(), span));
        self.shared.script().put(table);
        Ok(Reply::done("INSERT", vec![]))
    }

    /// Refuse a script table named like a view.
    fn refuse_taken_view(&self, name: &Name) -> Result<(), Vec<Diagnostic>> {
        match self
            .shared
            .store
            .definition(tributary_types::DefinitionKind::View, &name.value)
        {
            Ok(Some(_)) => Err(vec![
                Diagnostic::error(format!("view '{}' already exists", name.value))
                    .with_span(name.span)
                    .with_code(codes::ALREADY_EXISTS)
                    .with_help(
                        "Choose another name: tables, views and memory tables share one namespace.",
                    ),
            ]),
            Ok(None) => Ok(()),
            Err(e) => Err(vec![tributary_dialect::ddl::catalog_diagnostic(
                e, name.span,
            )]),
        }
    }
}

/// The help kept for whoever meant a connection table.
pub(crate) const CONNECTION_HELP: &str =
    "For a connection table, say where its data lives: add WITH (connector = '...', ...).";

/// A TEMPORARY table without WITH: a lookup table needs its connector.
fn no_with(name: &Name) -> Diagnostic {
    Diagnostic::error(format!("table '{}' has no WITH clause", name.value))
        .with_span(name.span)
        .with_code(codes::MISSING_OPTION)
        .with_help("Lookup (TEMPORARY) tables say where their data lives: add WITH (connector = '...', ...).")
}
