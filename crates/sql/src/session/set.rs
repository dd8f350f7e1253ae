//! `SET name = value`: Arroyo's pipeline options (`updating_ttl`), the preview bounds
//! (`preview.max_rows`, `preview.timeout`) and DataFusion's options (`datafusion.*`), in
//! the session's configuration. An unknown name gets did-you-mean; a bad value says why,
//! at the value.

use super::Session;
use super::outcome::{Handled, Reply};
use datafusion::config::{ConfigExtension, ExtensionOptions};
use tributary_dialect::datafusion_diagnostics::datafusion_message;
use tributary_dialect::parser::ast::Name;
use tributary_exec::pipeline_options::PIPELINE_OPTIONS;
use tributary_exec::preview_bounds::PreviewOptions;
use tributary_types::{Diagnostic, Span, closest, codes};

/// An extension's entry key with its prefix (entries may or may not carry it).
fn prefixed(prefix: &str, key: &str) -> String {
    if key.starts_with(&format!("{prefix}.")) {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

impl Session {
    pub(super) fn set_option(&self, name: &Name, value: &str, value_span: Span) -> Handled {
        let wanted = name.value.to_ascii_lowercase();
        let key = PIPELINE_OPTIONS
            .iter()
            .find(|(short, _)| *short == wanted)
            .map(|(_, key)| (*key).to_string())
            .unwrap_or(wanted);
        let state = self.ctx.state_ref();
        let mut state = state.write();
        let options = state.config_mut().options_mut();
        // DataFusion's own keys, the preview bounds, and the pipeline options by their
        // short names.
        let preview = ExtensionOptions::entries(&PreviewOptions::default())
            .into_iter()
            .map(|e| prefixed(PreviewOptions::PREFIX, &e.key));
        let known: Vec<String> = options
            .entries()
            .into_iter()
            .map(|e| e.key)
            .chain(preview)
            .chain(
                PIPELINE_OPTIONS
                    .iter()
                    .map(|(short, _)| (*short).to_string()),
            )
            .collect();
        let pipeline = PIPELINE_OPTIONS.iter().any(|(_, k)| *k == key);
        if !known.contains(&key) && !pipeline {
            let mut d = Diagnostic::error(format!("unknown option '{}'", name.value))
                .with_span(name.span)
                .with_note("SET takes Arroyo's 'updating_ttl', the read bounds 'preview.max_rows' and 'preview.timeout', and DataFusion's 'datafusion.*' options")
                .with_code(codes::UNKNOWN_OPTION);
            d = match closest(&name.value, known.iter().map(String::as_str)) {
                Some(s) => d.with_help(format!("Did you mean '{s}'?")),
                None => d.with_help("Check the option's name; SHOW ALL lists DataFusion's."),
            };
            return Err(vec![d]);
        }
        if let Err(e) = options.set(&key, value) {
            let why = datafusion_message(&e);
            // Tributary's own options name themselves; DataFusion's parse errors do not.
            let message = if why.contains(&*name.value) || why.contains(&key) {
                why
            } else {
                format!("invalid value '{value}' for option '{}': {why}", name.value)
            };
            return Err(vec![
                Diagnostic::error(message)
                    .with_span(value_span)
                    .with_code(codes::INVALID_OPTION),
            ]);
        }
        Ok(Reply::done("SET", vec![]))
    }
}
