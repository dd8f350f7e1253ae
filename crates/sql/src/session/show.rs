//! The session's read-only catalog statements: SHOW and DESCRIBE.

use super::Session;
use super::outcome::{Handled, Reply};
use crate::describe;
use tributary_connectors::registry;
use tributary_dialect::ddl::catalog_diagnostic;
use tributary_dialect::parser::ast::Name;
use tributary_types::options::quoted_list;
use tributary_types::{Diagnostic, Span, closest};

impl Session {
    pub(super) fn show_tables(&self, span: Span) -> Handled {
        let store = self.shared.store.as_ref();
        let tables = store
            .tables()
            .map_err(|e| vec![catalog_diagnostic(e, span)])?;
        Ok(Reply::rows(describe::show_tables(store, &tables)))
    }

    pub(super) fn show_profiles(&self, span: Span) -> Handled {
        let store = self.shared.store.as_ref();
        let profiles = store
            .profiles()
            .map_err(|e| vec![catalog_diagnostic(e, span)])?;
        Ok(Reply::rows(describe::show_profiles(store, &profiles)))
    }

    pub(super) fn show_directories(&self, path: &str, span: Span) -> Handled {
        match tributary_connectors::subdirectories(path, &self.shared.access()) {
            Ok(dirs) => Ok(Reply::rows(tributary_exec::result_text::text_batch(
                &["name", "kind"],
                dirs.into_iter()
                    .map(|d| vec![d, "directory".to_string()])
                    .collect(),
            ))),
            Err(tributary_connectors::ListError::Forbidden(refused)) => {
                Err(vec![refused.diagnostic(span)])
            }
            Err(e) => {
                let help = match e {
                    tributary_connectors::ListError::Forbidden(_) => "",
                    tributary_connectors::ListError::Remote(_) => {
                        "Listing an object store needs the real endpoint; write the table's path directly."
                    }
                    tributary_connectors::ListError::Io { .. } => {
                        "Give an existing local directory, such as '/data' or 'file:///data'."
                    }
                };
                Err(vec![
                    Diagnostic::error(e.to_string())
                        .with_span(span)
                        .with_help(help)
                        .with_code(tributary_types::codes::CATALOG),
                ])
            }
        }
    }

    pub(super) fn show_create_table(&self, n: &Name) -> Handled {
        let t = self.lookup_table(n)?;
        let profile = t
            .profile
            .as_ref()
            .and_then(|id| self.shared.store.profile(id).ok().flatten())
            .map(|p| p.name);
        Ok(Reply::rows(describe::create_statement(
            t.to_create_sql(profile.as_deref()),
        )))
    }

    pub(super) fn show_create_profile(&self, n: &Name) -> Handled {
        let p = tributary_dialect::ddl::lookup_profile(self.shared.store.as_ref(), n)?;
        Ok(Reply::rows(describe::create_statement(p.to_create_sql())))
    }

    pub(super) fn describe_table(&self, n: &Name) -> Handled {
        if let Ok(None) = self.shared.store.table_by_name(&n.value)
            && let Ok(Some(view)) = self
                .shared
                .store
                .definition(tributary_types::DefinitionKind::View, &n.value)
        {
            return self.describe_view(&view, n);
        }
        let t = self.lookup_table(n)?;
        let mut notes = Vec::new();
        if let Some(r) = &t.registry {
            notes.push(
                Diagnostic::note(format!("the columns come from the schema registry: {r}"))
                    .with_span(n.span),
            );
        }
        if t.awaits_inferred_schema() {
            notes.push(
                Diagnostic::warning(format!("table '{}' has no columns yet", t.name))
                    .with_span(n.span)
                    .with_note(
                        "a sink created without columns takes them from its first INSERT INTO",
                    )
                    .with_code(tributary_types::codes::ADVICE),
            );
        }
        Ok(Reply::rows_with(describe::describe_table(&t), notes))
    }

    pub(super) fn describe_profile(&self, n: &Name) -> Handled {
        let store = self.shared.store.as_ref();
        let p = tributary_dialect::ddl::lookup_profile(store, n)?;
        Ok(Reply::rows(describe::describe_profile(store, &p)))
    }

    pub(super) fn describe_connector(&self, n: &Name) -> Handled {
        if let Some(e) = registry().get(&n.value) {
            return Ok(Reply::rows(describe::describe_connector(e)));
        }
        let ids: Vec<&str> = registry().ids().collect();
        let d = Diagnostic::error(format!("unknown connector '{}'", n.value))
            .with_span(n.span)
            .with_code(tributary_types::codes::UNKNOWN_CONNECTOR);
        let d = match closest(&n.value, ids.iter().copied()) {
            Some(s) => d.with_help(format!("Did you mean '{s}'?")),
            None => d.with_help(format!("Available connectors are {}.", quoted_list(&ids))),
        };
        Err(vec![d])
    }
}
