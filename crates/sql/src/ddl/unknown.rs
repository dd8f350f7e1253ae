//! Reporting options nobody consumed: every unknown key, with the nearest valid key.

use tributary_types::limits::shorten;
use tributary_types::options::quote_key;
use tributary_types::{Diagnostic, WithOptions, closest};

/// One diagnostic per unknown option, with a did-you-mean from `candidates` and a pointer
/// to where the valid options are listed.
pub(crate) fn report_unknown(
    opts: &WithOptions,
    object: &str,
    connector: &str,
    candidates: impl FnOnce() -> Vec<String>,
    diags: &mut Vec<Diagnostic>,
) {
    let remaining = opts.remaining();
    if remaining.is_empty() {
        return;
    }
    // Built only when needed: rendering every option's documentation is not free.
    let candidates = candidates();
    for o in remaining {
        let mut d = Diagnostic::error(format!(
            "unknown option '{}' for {object} of connector '{connector}'",
            shorten(&o.key)
        ))
        .with_span(o.key_span)
        .with_note(format!(
            "DESCRIBE CONNECTOR {connector} lists the valid options"
        ));
        match closest(&o.key, candidates.iter().map(String::as_str)) {
            Some(s) => d = d.with_help(format!("Did you mean {}?", quote_key_always(s))),
            None => {
                d = d.with_help(format!(
                    "Remove {}, or check its spelling.",
                    quote_key(&shorten(&o.key))
                ))
            }
        }
        diags.push(d);
    }
}

fn quote_key_always(k: &str) -> String {
    format!("'{k}'")
}
