//! Reporting options nobody consumed: every unknown key, with the nearest valid key.

use tributary_types::limits::shorten;
use tributary_types::options::quote_key;
use tributary_types::{Diagnostic, WithOptions, closest};

/// One diagnostic per unknown option, with a did-you-mean from `candidates` and a pointer
/// to where the valid options are listed. Returns the keys suggested, which the unknown
/// options were probably meant to be (see [`drop_follow_ons`]).
pub(crate) fn report_unknown(
    opts: &WithOptions,
    object: &str,
    connector: &str,
    candidates: impl FnOnce() -> Vec<String>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let remaining = opts.remaining();
    if remaining.is_empty() {
        return vec![];
    }
    let mut suggested: Vec<String> = Vec::new();
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
        ))
        .with_code(tributary_types::codes::UNKNOWN_OPTION);
        match closest(&o.key, candidates.iter().map(String::as_str)) {
            Some(s) => {
                suggested.push(s.to_string());
                d = d.with_help(format!("Did you mean {}?", quote_key_always(s)));
            }
            None => {
                d = d.with_help(format!(
                    "Remove {}, or check its spelling.",
                    quote_key(&shorten(&o.key))
                ))
            }
        }
        diags.push(d);
    }
    suggested
}

/// Remove the "missing required option 'k'" errors for keys `suggested` for a misspelled
/// option: they follow from the typo, whose own diagnostic already says what to write.
pub(crate) fn drop_follow_ons(diags: &mut Vec<Diagnostic>, suggested: &[String]) {
    diags.retain(|d| {
        !suggested.iter().any(|k| {
            d.message
                .strip_prefix("missing required option '")
                .is_some_and(|rest| rest.starts_with(&format!("{k}'")))
        })
    });
}

fn quote_key_always(k: &str) -> String {
    format!("'{k}'")
}
