//! Secrets: `{{ VAR }}` environment references and redaction.
//!
//! A value may hold `{{ VAR }}` placeholders. They are kept verbatim in the catalog and
//! resolved from the environment only when a connection is made, never when printing.

/// What is printed in place of a secret.
pub const REDACTED: &str = "********";

/// Every `{{ NAME }}` reference in `s`, in order (names are `[A-Za-z0-9_]+`).
pub fn env_references(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push(name.to_string());
        }
        rest = &after[end + 2..];
    }
    out
}

/// Whether `s` holds at least one `{{ VAR }}` reference.
pub fn contains_env_reference(s: &str) -> bool {
    !env_references(s).is_empty()
}

/// Replace every `{{ VAR }}` in `s` using `lookup`; the error names the first missing
/// variable.
pub fn resolve_env(s: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(&rest[..start + 2]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str(&lookup(name).ok_or_else(|| name.to_string())?);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_resolves_references() {
        assert_eq!(
            env_references("a {{ USER }}:{{PASS}} b"),
            vec!["USER", "PASS"]
        );
        assert!(!contains_env_reference("plain {{ not valid! }}"));
        let got = resolve_env("x={{ A }},y={{B}}", |n| Some(n.to_lowercase())).unwrap();
        assert_eq!(got, "x=a,y=b");
        assert_eq!(
            resolve_env("{{ MISSING }}", |_| None).unwrap_err(),
            "MISSING"
        );
    }
}
