//! Checks shared by the HTTP-family connectors (polling_http, sse, webhook, websocket):
//! endpoint URLs and `headers` strings, validated without making a request.

use crate::connector::{TableCheck, str_at};
use tributary_types::{Diagnostic, env_references};
use url::Url;

/// Parse `'Name: value,Name2: value2'` into pairs. Names must be HTTP tokens.
pub(crate) fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = part
            .split_once(':')
            .ok_or_else(|| format!("entry {} has no ':' between name and value", out.len() + 1))?;
        let name = name.trim();
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return Err(format!(
                "entry {} has an invalid header name '{name}'",
                out.len() + 1
            ));
        }
        out.push((name.to_string(), value.trim().to_string()));
    }
    Ok(out)
}

/// The checks every HTTP-family table shares: its `endpoint` is a URL with one of
/// `schemes`, and its `headers` parse.
pub(crate) fn check_http_table(cx: &TableCheck<'_>, schemes: &[&str]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    check_endpoint(cx, "endpoint", "/endpoint", schemes, &mut out);
    check_headers(cx, &mut out);
    out
}

/// Report a `headers` option that does not parse. The message never repeats a value, since
/// headers often carry tokens. A value that is one `{{ VAR }}` reference (every header
/// from the environment, as a dump writes a secret) is parsed once resolved, when the
/// connection is made.
fn check_headers(cx: &TableCheck<'_>, out: &mut Vec<Diagnostic>) {
    if let Some(text) = str_at(cx.config, "/headers")
        && !tributary_types::is_env_reference(text)
        && let Err(e) = parse_headers(text)
    {
        out.push(
            Diagnostic::error(format!("invalid value for option 'headers': {e}"))
                .with_span(cx.span_of("headers"))
                .with_help("Write headers as 'Name: value,Other-Name: value'."),
        );
    }
}

/// Report an endpoint that is not a URL with one of `schemes` and a host. Values that
/// reference environment variables are checked when the connection is made.
fn check_endpoint(
    cx: &TableCheck<'_>,
    key: &str,
    pointer: &str,
    schemes: &[&str],
    out: &mut Vec<Diagnostic>,
) {
    let Some(text) = str_at(cx.config, pointer) else {
        return;
    };
    if !env_references(text).is_empty() {
        return;
    }
    let problem = match Url::parse(text) {
        Err(e) => Some(format!("it is not a valid URL ({e})")),
        Ok(u) if !schemes.contains(&u.scheme()) => Some(format!(
            "its scheme is '{}', not {}",
            u.scheme(),
            tributary_types::options::quoted_list(schemes)
        )),
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Some("it has no host".into()),
        Ok(_) => None,
    };
    if let Some(p) = problem {
        out.push(
            Diagnostic::error(format!("invalid value for option '{key}': {p}"))
                .with_span(cx.span_of(key))
                .with_help(format!(
                    "Write a full URL such as '{}://host:port/path'.",
                    schemes[0]
                )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_and_reject() {
        let h = parse_headers("Authorization: Bearer x, Accept: application/json").unwrap();
        assert_eq!(h[0], ("Authorization".into(), "Bearer x".into()));
        assert_eq!(h[1].1, "application/json");
        assert!(parse_headers("").unwrap().is_empty());
        assert!(parse_headers("novalue").unwrap_err().contains("no ':'"));
        assert!(
            parse_headers("bad name: x")
                .unwrap_err()
                .contains("'bad name'")
        );
    }
}
