//! Views: `CREATE [OR REPLACE] VIEW` (planned now, stored with what it reads), `DROP
//! VIEW [CASCADE]`, `SHOW VIEWS`, `SHOW CREATE VIEW` and `DESCRIBE` of a view. The
//! catalog refuses dropping what a view reads; CASCADE drops the readers in one batch.

use super::Session;
use super::outcome::{Handled, Mode, Reply};
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::parser::DFParser;
use datafusion::sql::resolve::resolve_table_references;
use std::collections::BTreeSet;
use tributary_catalog::{CatalogStore, Change};
use tributary_dialect::datafusion_diagnostics::datafusion_diagnostic;
use tributary_dialect::ddl::catalog_diagnostic;
use tributary_dialect::parser::ast::{CreateView, DropBehavior, Name};
use tributary_exec::provider::check_plan;
use tributary_types::{
    Definition, DefinitionBody, DefinitionKind, Dependency, Diagnostic, Span, closest, codes,
};

/// How many views deep a view may read (a view of a view of ... a table): planning a
/// query inlines every level.
pub(crate) const MAX_VIEW_DEPTH: u32 = 32;

impl Session {
    pub(super) async fn create_view(&self, v: &CreateView, mode: Mode) -> Handled {
        let store = self.shared.store.as_ref();
        let name = &v.name;
        let existing = store
            .definition(DefinitionKind::View, &name.value)
            .map_err(|e| vec![catalog_diagnostic(e, name.span)])?;
        if existing.is_some() && v.if_not_exists {
            return Ok(Reply::done(
                "CREATE VIEW",
                vec![super::ddl::skipped("view", name)],
            ));
        }
        if existing.is_some() && !v.or_replace {
            return Err(vec![
                Diagnostic::error(format!("view '{}' already exists", name.value))
                    .with_span(name.span)
                    .with_code(codes::ALREADY_EXISTS)
                    .with_help("Write CREATE OR REPLACE VIEW to replace it, or CREATE VIEW IF NOT EXISTS to keep it."),
            ]);
        }
        self.refuse_taken_relation(name)?;
        let plan = self.plan_definition_query(&v.query.text, v.query.span)?;
        let columns: Vec<String> = v.columns.iter().map(|c| c.value.clone()).collect();
        let plan = tributary_exec::provider::named_columns(plan, &columns)
            .map_err(|e| vec![datafusion_diagnostic(&e, v.query.span).with_span(name.span)])?;
        let mut problems = check_plan(&plan, v.query.span, self.file_writes);
        if problems.is_empty() {
            let at = tributary_exec::provider::StatementText {
                text: &v.query.text,
                span: v.query.span,
                pipeline: false,
            };
            problems = tributary_exec::provider::streaming_violations(&plan, &at);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let (reads, depth) = self.reads_of(&v.query.text, v.query.span)?;
        if depth > MAX_VIEW_DEPTH {
            return Err(vec![
                Diagnostic::error(format!(
                    "view '{}' would read views {depth} deep, more than the limit of {MAX_VIEW_DEPTH}",
                    name.value
                ))
                .with_span(v.query.span)
                .with_code(codes::LIMIT_EXCEEDED)
                .with_help("Read the tables of the deepest views directly."),
            ]);
        }
        if mode == Mode::Check {
            // A checked query is a pipeline to be: planning it physically finds what
            // logical planning leaves (a window over a column of the wrong type).
            let state = self.ctx.state();
            tributary_dialect::deep_stack::block_on_deep(state.create_physical_plan(&plan))
                .map_err(|e| vec![datafusion_diagnostic(&e, v.query.span)])?;
        }
        let now = tributary_catalog::now_micros();
        let mut definition = Definition::new(
            name.value.clone(),
            DefinitionBody::View {
                query: v.query.text.clone(),
                columns,
                depth,
            },
            reads,
            now,
        );
        if let Some(old) = existing {
            definition.created_at = old.created_at;
        }
        self.apply(
            vec![Change::PutDefinition {
                definition,
                replace: v.or_replace,
            }],
            name.span,
        )
        .await?;
        Ok(Reply::done("CREATE VIEW", vec![]))
    }

    /// Refuse a view or script table named like a table (or a script table named like a
    /// view): they share one namespace.
    pub(super) fn refuse_taken_relation(&self, name: &Name) -> Result<(), Vec<Diagnostic>> {
        let store = self.shared.store.as_ref();
        let taken = if matches!(store.table_by_name(&name.value), Ok(Some(_))) {
            Some("table")
        } else if self.shared.script().get(&name.value).is_some() {
            Some("script table")
        } else {
            None
        };
        match taken {
            Some(kind) => Err(vec![
                Diagnostic::error(format!("{kind} '{}' already exists", name.value))
                    .with_span(name.span)
                    .with_code(codes::ALREADY_EXISTS)
                    .with_note("tables, views and a script's memory tables share one namespace")
                    .with_help("Choose another name."),
            ]),
            None => Ok(()),
        }
    }

    /// Plan a query a definition holds (with the session's declared functions), at
    /// `span` in the script.
    pub(super) fn plan_definition_query(
        &self,
        text: &str,
        span: Span,
    ) -> Result<LogicalPlan, Vec<Diagnostic>> {
        self.sync_functions(span)?;
        let state = self.ctx.state();
        let planning = tributary_exec::windows::implicit_time::plan_statement(
            text,
            state.create_logical_plan(text),
        );
        tributary_dialect::deep_stack::block_on_deep(planning)
            .map_err(|e| vec![self.query_diagnostic(&e, span)])
    }

    /// The tables, views and declared functions a view's query names, and how many views
    /// deep it reads. Read from the query's text: DataFusion's planner inlines views, so
    /// the plan no longer says which it read. A view may not read a script's tables,
    /// which end with the script.
    fn reads_of(&self, query: &str, span: Span) -> Result<(Vec<Dependency>, u32), Vec<Diagnostic>> {
        use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, visit_expressions};
        let store = self.shared.store.as_ref();
        let parsed = DFParser::parse_sql_with_dialect(query, &tributary_dialect::parser::DIALECT)
            .ok()
            .and_then(|mut statements| statements.pop_front());
        let Some(statement) = parsed else {
            // It planned, so it parses; nothing to record if it somehow does not.
            return Ok((Vec::new(), 1));
        };
        let (relations, _ctes) = resolve_table_references(&statement, true)
            .map_err(|e| vec![datafusion_diagnostic(&e, span)])?;
        let mut reads: BTreeSet<Dependency> = BTreeSet::new();
        let mut depth = 1;
        for relation in relations {
            let name = relation.table();
            if let Ok(Some(t)) = store.table_by_name(name) {
                reads.insert(Dependency::relation(t.name));
            } else if let Ok(Some(v)) = store.definition(DefinitionKind::View, name) {
                if let DefinitionBody::View { depth: d, .. } = v.body {
                    depth = depth.max(d + 1);
                }
                reads.insert(Dependency::relation(v.name));
            } else if let Some(t) = self.shared.script().get(name) {
                return Err(vec![
                    Diagnostic::error(format!(
                        "a view cannot read '{}', a table that lives only for this script",
                        t.name
                    ))
                    .with_span(span)
                    .with_code(codes::PLAN_ERROR)
                    .with_help(
                        "Read it in a query of this script, or make the view read what fills it.",
                    ),
                ]);
            }
        }
        let mut functions: BTreeSet<String> = BTreeSet::new();
        let datafusion::sql::parser::Statement::Statement(sql) = &statement else {
            return Ok((reads.into_iter().collect(), depth));
        };
        let _ = visit_expressions(sql.as_ref(), |e| {
            if let SqlExpr::Function(f) = e
                && let Some(last) = f.name.0.last().and_then(|p| p.as_ident())
            {
                functions.insert(tributary_dialect::parser::normalize_ident(last));
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        for f in functions {
            if let Ok(Some(d)) = store.definition(DefinitionKind::Function, &f) {
                reads.insert(Dependency::function(d.name));
            }
        }
        Ok((reads.into_iter().collect(), depth))
    }

    pub(super) async fn drop_view(
        &self,
        names: &[Name],
        if_exists: bool,
        behavior: DropBehavior,
        span: Span,
    ) -> Handled {
        let store = self.shared.store.as_ref();
        let mut changes = Vec::new();
        let mut warnings = Vec::new();
        let mut errors = Vec::new();
        for n in names {
            match store.definition(DefinitionKind::View, &n.value) {
                Ok(Some(v)) => {
                    let dependency = v.as_dependency();
                    changes.push(Change::DeleteDefinition(DefinitionKind::View, v.name));
                    if behavior == DropBehavior::Cascade {
                        cascade(store, &dependency, &mut changes)
                            .map_err(|e| vec![catalog_diagnostic(e, n.span)])?;
                    }
                }
                Ok(None) if if_exists => warnings.push(super::ddl::skipped_missing("view", n)),
                Ok(None) => errors.push(self.view_not_found(n)),
                Err(e) => errors.push(catalog_diagnostic(e, n.span)),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        self.apply(dedupe(changes), span)
            .await
            .map_err(|d| with_cascade_help(d, "DROP VIEW"))?;
        Ok(Reply::done("DROP VIEW", warnings))
    }

    pub(super) fn show_views(&self, span: Span) -> Handled {
        let views = self
            .shared
            .store
            .definitions(DefinitionKind::View)
            .map_err(|e| vec![catalog_diagnostic(e, span)])?;
        let rows = views
            .iter()
            .map(|v| {
                let reads: Vec<&str> = v.reads.iter().map(|r| r.name.as_str()).collect();
                let query = match &v.body {
                    DefinitionBody::View { query, .. } => query.clone(),
                    DefinitionBody::Function(_) => String::new(),
                };
                vec![v.name.clone(), reads.join(", "), query]
            })
            .collect();
        Ok(Reply::rows(tributary_exec::result_text::text_batch(
            &["name", "reads", "query"],
            rows,
        )))
    }

    pub(super) fn show_create_view(&self, n: &Name) -> Handled {
        let v = self.lookup_view(n)?;
        Ok(Reply::rows(crate::describe::create_statement(
            tributary_dialect::sql_writer::create_definition(&v),
        )))
    }

    /// `DESCRIBE v` of a view: its columns as its query plans now.
    pub(super) fn describe_view(&self, v: &Definition, n: &Name) -> Handled {
        let DefinitionBody::View { query, columns, .. } = &v.body else {
            return Err(vec![self.view_not_found(n)]);
        };
        let plan = self.plan_definition_query(query, n.span).and_then(|p| {
            tributary_exec::provider::named_columns(p, columns)
                .map_err(|e| vec![datafusion_diagnostic(&e, n.span)])
        })?;
        let rows = plan
            .schema()
            .fields()
            .iter()
            .map(|f| {
                let sql = tributary_types::FieldType::from_arrow(f)
                    .map(|t| t.sql_name())
                    .unwrap_or_else(|| f.data_type().to_string());
                vec![
                    f.name().clone(),
                    sql,
                    f.data_type().to_string(),
                    if f.is_nullable() { "yes" } else { "no" }.to_string(),
                ]
            })
            .collect();
        Ok(Reply::rows(tributary_exec::result_text::text_batch(
            &["column", "type", "arrow_type", "nullable"],
            rows,
        )))
    }

    fn lookup_view(&self, n: &Name) -> Result<Definition, Vec<Diagnostic>> {
        match self.shared.store.definition(DefinitionKind::View, &n.value) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(vec![self.view_not_found(n)]),
            Err(e) => Err(vec![catalog_diagnostic(e, n.span)]),
        }
    }

    fn view_not_found(&self, n: &Name) -> Diagnostic {
        let names: Vec<String> = self
            .shared
            .store
            .definitions(DefinitionKind::View)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.name)
            .collect();
        let d = Diagnostic::error(format!("view '{}' does not exist", n.value))
            .with_span(n.span)
            .with_code(codes::NOT_FOUND);
        match closest(&n.value, names.iter().map(String::as_str)) {
            Some(s) => d.with_help(format!("Did you mean '{s}'?")),
            None => d.with_help("Run SHOW VIEWS to list the views."),
        }
    }
}

/// Add the deletion of every view that reads `dependency`, and of theirs, to `changes`.
pub(super) fn cascade(
    store: &dyn CatalogStore,
    dependency: &Dependency,
    changes: &mut Vec<Change>,
) -> tributary_catalog::Result<()> {
    let mut todo = vec![dependency.clone()];
    let mut seen: BTreeSet<String> = BTreeSet::new();
    while let Some(dep) = todo.pop() {
        if !seen.insert(dep.key()) {
            continue;
        }
        for reader in store.readers(&dep)? {
            todo.push(reader.as_dependency());
            changes.push(Change::DeleteDefinition(reader.kind(), reader.name));
        }
    }
    Ok(())
}

/// `changes` without repeated deletions of one definition (a view read twice along a
/// cascade).
pub(super) fn dedupe(changes: Vec<Change>) -> Vec<Change> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    changes
        .into_iter()
        .filter(|c| match c {
            Change::DeleteDefinition(kind, name) => seen.insert(
                Dependency {
                    namespace: kind.namespace(),
                    name: name.clone(),
                }
                .key(),
            ),
            Change::DeleteTable(id) => seen.insert(format!("table:{id}")),
            _ => true,
        })
        .collect()
}

/// A refused drop's diagnostics, with the CASCADE form in the help.
pub(super) fn with_cascade_help(mut diagnostics: Vec<Diagnostic>, verb: &str) -> Vec<Diagnostic> {
    for d in &mut diagnostics {
        if d.message.contains(" is read by ") {
            d.help = Some(format!(
                "Drop those first, or drop them together with {verb} ... CASCADE."
            ));
        }
    }
    diagnostics
}
