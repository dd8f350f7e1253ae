//! The console's requests against the OpenAPI document: every call the console's
//! JavaScript makes (`api.get("/connection_profiles")`, `post(...)`, `stream(...)`) is
//! to a documented route with that method, its query parameters are documented ones,
//! and the keys of an object literal it sends are fields of the route's request body.

use serde_json::Value;
use std::collections::BTreeSet;
use tributary_server::openapi;

/// One request the console's code makes.
#[derive(Debug)]
struct Call {
    file: String,
    method: &'static str,
    /// The path with `${...}` parts as `{}` and without the query string.
    path: String,
    query: Vec<String>,
    /// Top-level keys of the body, when it is written as an object literal.
    body_keys: Option<Vec<String>>,
}

const CALLS: &[(&str, &str)] = &[
    ("get(", "GET"),
    ("post(", "POST"),
    ("patch(", "PATCH"),
    ("del(", "DELETE"),
    ("stream(", "POST"),
];

fn console_calls() -> Vec<Call> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/console/js");
    let mut calls = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "js"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for (token, method) in CALLS {
            let mut from = 0;
            while let Some(found) = text[from..].find(token) {
                let at = from + found;
                from = at + token.len();
                // A call of the function itself, not `fooget(` or a definition.
                let before = text[..at].chars().last().unwrap_or(' ');
                if before.is_alphanumeric() || before == '_' || text[..at].ends_with("function ") {
                    continue;
                }
                let rest = text[from..].trim_start();
                let Some(quote) = rest.chars().next().filter(|c| matches!(c, '"' | '`')) else {
                    continue; // A path held in a variable: `call(method, path, ...)` itself.
                };
                let Some(end) = rest[1..].find(quote) else {
                    continue;
                };
                let literal = &rest[1..1 + end];
                if !literal.starts_with('/') {
                    continue;
                }
                let (path, query) = split_path(literal);
                let after = rest[end + 2..].trim_start();
                let body_keys = after
                    .strip_prefix(',')
                    .map(str::trim_start)
                    .filter(|b| b.starts_with('{'))
                    .map(object_keys);
                calls.push(Call {
                    file: file.clone(),
                    method,
                    path,
                    query,
                    body_keys,
                });
            }
        }
        // `sql(text)` posts to /sql: written in api.js as a call with a literal path.
    }
    calls
}

/// `/connection_tables/${id}?limit=1&x=${y}` as (`/connection_tables/{}`, [limit, x]).
fn split_path(literal: &str) -> (String, Vec<String>) {
    let mut path = String::new();
    let mut rest = literal;
    while let Some(open) = rest.find("${") {
        path.push_str(&rest[..open]);
        path.push_str("{}");
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        rest = &rest[close..];
    }
    path.push_str(rest);
    let (path, query) = path.split_once('?').unwrap_or((&path, ""));
    let names = query
        .split('&')
        .filter_map(|kv| kv.split('=').next())
        // A `{}` in the query stands for more parameters added by code.
        .map(|k| k.trim_start_matches("{}").to_string())
        .filter(|k| !k.is_empty())
        .collect();
    (path.to_string(), names)
}

/// The top-level keys of the object literal `text` starts with: `{ a: 1, b, ...c }`
/// gives [a, b].
fn object_keys(text: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut depth = 0;
    let mut entry = String::new();
    let mut in_string: Option<char> = None;
    for c in text.chars() {
        if let Some(q) = in_string {
            if c == q {
                in_string = None;
            }
            if depth == 1 {
                entry.push(c);
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => {
                in_string = Some(c);
                if depth == 1 {
                    entry.push(c);
                }
            }
            '{' | '(' | '[' => {
                depth += 1;
                if depth > 1 {
                    entry.push(c);
                }
            }
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    keys.extend(key_of(&entry));
                    break;
                }
                entry.push(c);
            }
            ',' if depth == 1 => {
                keys.extend(key_of(&entry));
                entry.clear();
            }
            _ if depth >= 1 => entry.push(c),
            _ => {}
        }
    }
    keys
}

fn key_of(entry: &str) -> Option<String> {
    let entry = entry.trim();
    if entry.is_empty() || entry.starts_with("...") {
        return None;
    }
    let key = entry.split(':').next().unwrap_or(entry).trim();
    Some(key.trim_matches(['"', '\'']).to_string())
}

/// The document's operation for `method` on `path` (`{}` matching any `{param}`).
fn operation<'a>(doc: &'a Value, method: &str, path: &str) -> Option<&'a Value> {
    let wanted: Vec<&str> = path.split('/').collect();
    doc["paths"]
        .as_object()?
        .iter()
        .find_map(|(documented, item)| {
            let documented = documented.strip_prefix("/v1").unwrap_or(documented);
            let parts: Vec<&str> = documented.split('/').collect();
            let same = parts.len() == wanted.len()
                && parts
                    .iter()
                    .zip(&wanted)
                    .all(|(d, w)| d == w || (d.starts_with('{') && *w == "{}"));
            same.then(|| item.get(method.to_lowercase()))?
        })
}

/// The property names of a request body's schema, following `$ref` and `allOf`; `None`
/// when it takes any object.
fn body_fields(doc: &Value, schema: &Value) -> Option<BTreeSet<String>> {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.rsplit('/').next()?;
        return body_fields(doc, &doc["components"]["schemas"][name]);
    }
    let mut out = BTreeSet::new();
    if let Some(all) = schema["allOf"].as_array() {
        for part in all {
            out.extend(body_fields(doc, part)?);
        }
        return Some(out);
    }
    let props = schema["properties"].as_object()?;
    out.extend(props.keys().cloned());
    Some(out)
}

#[test]
fn every_console_request_is_a_documented_route_with_documented_fields() {
    let doc = serde_json::to_value(openapi()).unwrap();
    let calls = console_calls();
    // The wizard, the profiles page, the SQL tab and the table view all make requests.
    for route in [
        "/connection_profiles",
        "/connection_tables/schemas/infer",
        "/connection_tables/sql",
        "/sql",
        "/connectors",
    ] {
        assert!(
            calls.iter().any(|c| c.path == route),
            "no console call to {route} found: the parser missed it\n{calls:#?}"
        );
    }
    let mut wrong = Vec::new();
    for call in &calls {
        let Some(op) = operation(&doc, call.method, &call.path) else {
            wrong.push(format!(
                "{}: {} {} is not in the OpenAPI document",
                call.file, call.method, call.path
            ));
            continue;
        };
        let params: BTreeSet<&str> = op["parameters"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .filter(|p| p["in"] == "query")
                    .filter_map(|p| p["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        for q in &call.query {
            if !params.contains(q.as_str()) {
                wrong.push(format!(
                    "{}: {} {} sends query parameter '{q}', which the document does not declare ({params:?})",
                    call.file, call.method, call.path
                ));
            }
        }
        let Some(keys) = &call.body_keys else {
            continue;
        };
        let schema = &op["requestBody"]["content"]["application/json"]["schema"];
        if schema.is_null() {
            wrong.push(format!(
                "{}: {} {} sends a body, but the route takes none",
                call.file, call.method, call.path
            ));
            continue;
        }
        let Some(fields) = body_fields(&doc, schema) else {
            continue; // Any object.
        };
        for k in keys {
            if !fields.contains(k) {
                wrong.push(format!(
                    "{}: {} {} sends '{k}', which is not a field of its body ({fields:?})",
                    call.file, call.method, call.path
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_parser_reads_paths_queries_and_object_keys() {
    assert_eq!(
        split_path("/connection_tables?limit=1000${after ? `&starting_after=x` : \"\"}"),
        ("/connection_tables".to_string(), vec!["limit".to_string()])
    );
    assert_eq!(
        split_path("/connection_profiles/${encodeURIComponent(p.id)}/autocomplete"),
        ("/connection_profiles/{}/autocomplete".to_string(), vec![])
    );
    assert_eq!(
        object_keys("{ table: { name: \"x,y\", config: f(a, b) }, limit: 20, ...rest }"),
        vec!["table", "limit"]
    );
    assert_eq!(
        object_keys("{ config, validate: !x.checked }"),
        vec!["config", "validate"]
    );
}
