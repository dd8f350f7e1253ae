//! Declared functions: `CREATE [OR REPLACE] [AGGREGATE | ASYNC] FUNCTION` records a UDF's
//! signature (checked to map onto Arrow types, and refused over a built-in's name),
//! `DROP FUNCTION` (refused while a view calls it). `SHOW FUNCTIONS` is DataFusion's,
//! which lists the declared ones once they are registered.

use super::Session;
use super::outcome::{Handled, Reply};
use tributary_catalog::Change;
use tributary_dialect::ddl::catalog_diagnostic;
use tributary_dialect::parser::ast::{CreateFunction, Name};
use tributary_types::{Definition, DefinitionBody, DefinitionKind, Diagnostic, Span, codes};

impl Session {
    pub(super) async fn create_function(&self, f: &CreateFunction) -> Handled {
        let store = self.shared.store.as_ref();
        let name = &f.name;
        // What is registered must be what the catalog holds before names are compared.
        self.sync_functions(name.span)?;
        let existing = store
            .definition(DefinitionKind::Function, &name.value)
            .map_err(|e| vec![catalog_diagnostic(e, name.span)])?;
        if existing.is_some() && f.if_not_exists {
            return Ok(Reply::done(
                "CREATE FUNCTION",
                vec![super::ddl::skipped("function", name)],
            ));
        }
        if existing.is_some() && !f.or_replace {
            return Err(vec![
                Diagnostic::error(format!("function '{}' already exists", name.value))
                    .with_span(name.span)
                    .with_code(codes::ALREADY_EXISTS)
                    .with_help("Write CREATE OR REPLACE FUNCTION to change its signature."),
            ]);
        }
        if existing.is_none() && self.is_builtin_function(&name.value) {
            return Err(vec![
                Diagnostic::error(format!(
                    "'{}' is a built-in function; a declared function needs a name of its own",
                    name.value
                ))
                .with_span(name.span)
                .with_code(codes::ALREADY_EXISTS)
                .with_help("Choose another name (SHOW FUNCTIONS lists the ones taken)."),
            ]);
        }
        if let Err(problem) = tributary_dialect::declared_functions::arrow_signature(&f.signature) {
            return Err(vec![
                Diagnostic::error(format!("function '{}' has a type Tributary cannot use: {problem}", name.value))
                    .with_span(f.returns_span.union(&name.span))
                    .with_code(codes::INVALID_SCHEMA)
                    .with_help("Use SQL types such as BIGINT, DOUBLE, TEXT, BOOLEAN, TIMESTAMP, or arrays and structs of them."),
            ]);
        }
        let mut definition = Definition::new(
            name.value.clone(),
            DefinitionBody::Function(f.signature.clone()),
            vec![],
            tributary_catalog::now_micros(),
        );
        if let Some(old) = existing {
            definition.created_at = old.created_at;
        }
        self.apply(
            vec![Change::PutDefinition {
                definition,
                replace: f.or_replace,
            }],
            name.span,
        )
        .await?;
        Ok(Reply::done("CREATE FUNCTION", vec![]))
    }

    pub(super) async fn drop_function(&self, name: &Name, if_exists: bool) -> Handled {
        let store = self.shared.store.as_ref();
        match store.definition(DefinitionKind::Function, &name.value) {
            Ok(Some(d)) => {
                self.apply(
                    vec![Change::DeleteDefinition(DefinitionKind::Function, d.name)],
                    name.span,
                )
                .await
                .map_err(|ds| super::views::with_cascade_help(ds, "DROP VIEW"))?;
                Ok(Reply::done("DROP FUNCTION", vec![]))
            }
            Ok(None) if if_exists => Ok(Reply::done(
                "DROP FUNCTION",
                vec![super::ddl::skipped_missing("function", name)],
            )),
            Ok(None) => Err(vec![
                Diagnostic::error(format!("function '{}' does not exist", name.value))
                    .with_span(name.span)
                    .with_code(codes::NOT_FOUND)
                    .with_help(
                        "SHOW FUNCTIONS lists the functions; declared ones show their signature.",
                    ),
            ]),
            Err(e) => Err(vec![catalog_diagnostic(e, name.span)]),
        }
    }

    /// Whether a function of this name is DataFusion's or Tributary's own (not declared).
    fn is_builtin_function(&self, name: &str) -> bool {
        let state = self.ctx.state();
        let name = name.to_lowercase();
        state.scalar_functions().contains_key(&name)
            || state.aggregate_functions().contains_key(&name)
            || state.window_functions().contains_key(&name)
    }

    /// Register the catalog's declared functions on the session, if they changed.
    pub(super) fn sync_functions(&self, span: Span) -> Result<(), Vec<Diagnostic>> {
        tributary_dialect::declared_functions::sync(
            &self.ctx,
            self.shared.store.as_ref(),
            &self.shared.functions,
        )
        .map_err(|problem| {
            vec![
                Diagnostic::error(problem)
                    .with_span(span)
                    .with_code(codes::CATALOG)
                    .with_help("Replace them with CREATE OR REPLACE FUNCTION."),
            ]
        })
    }
}
