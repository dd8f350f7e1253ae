//! The option engine: WITH options -> a connector's JSON config, validated against its JSON
//! Schema, with every failure turned into a diagnostic that points at the option.
//!
//! It is generic: a connector only declares [`OptionSpec`]s and a schema. Types, enums,
//! patterns, ranges, required-ness and defaults all come from the schema.

use crate::schema_doc::{
    PropertyInfo, as_strings, fill_required_defaults, insert_at, leaf_properties, matching_branch,
    object_at, property,
};
use crate::spec::{OptionSpec, Target, ValueKind};
use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tributary_types::options::{
    expected, not_allowed, quote_key, quoted_list, to_bool, to_f64, to_i64,
};
use tributary_types::{
    Diagnostic, OptionEntry, OptionValue, Span, SqlOption, WithOptions, codes,
    contains_env_reference, looks_secret, parse_data_size, parse_interval_micros,
};

/// A connector's compiled schema: the document, its validator, and one validator per leaf
/// property so that a bad value is reported against the option that set it, even inside a
/// `oneOf` branch.
#[derive(Debug)]
pub struct CompiledSchema {
    /// The JSON Schema document.
    pub document: Value,
    /// Its validator.
    pub validator: jsonschema::Validator,
    properties: BTreeMap<String, jsonschema::Validator>,
}

impl CompiledSchema {
    /// Parse and compile schema text; a failure is a bug in the connector's declaration.
    pub fn compile(text: &str) -> Result<Self, String> {
        let document: Value =
            serde_json::from_str(text).map_err(|e| format!("schema is not JSON: {e}"))?;
        let validator = jsonschema::validator_for(&document)
            .map_err(|e| format!("schema is not a valid JSON Schema: {e}"))?;
        let mut properties = BTreeMap::new();
        for (pointer, node) in leaf_properties(&document) {
            let v = jsonschema::validator_for(node)
                .map_err(|e| format!("property {pointer} is not a valid JSON Schema: {e}"))?;
            properties.insert(pointer, v);
        }
        Ok(Self {
            document,
            validator,
            properties,
        })
    }
}

/// What a set of specs made of a WITH clause.
#[derive(Debug, Clone, Default)]
pub struct MappedOptions {
    /// The JSON config.
    pub config: Value,
    /// The consumed options, as written, with their sensitivity.
    pub entries: Vec<OptionEntry>,
    /// String values that conditions can test (selectors and string options, given or
    /// defaulted), by key.
    pub selectors: BTreeMap<String, String>,
    /// Where each consumed option's value is, by key.
    pub spans: BTreeMap<String, Span>,
}

impl MappedOptions {
    /// The span of an option's value, or `fallback` when it was not written.
    pub fn span_of(&self, key: &str, fallback: Span) -> Span {
        self.spans.get(key).copied().unwrap_or(fallback)
    }
}

/// Inputs of one mapping run.
#[derive(Debug, Clone, Copy)]
pub struct MapRequest<'a> {
    /// The connector id, for messages.
    pub connector: &'a str,
    /// What the options are for, as messages name it: `table 'orders'`,
    /// `connection profile 'prod'`.
    pub object: &'a str,
    /// The option declarations.
    pub specs: &'a [OptionSpec],
    /// The schema the config must satisfy.
    pub schema: &'a CompiledSchema,
    /// Where a missing option is reported (the WITH clause or the statement).
    pub missing_span: Span,
    /// A sentence added to the help of a missing option (another way to provide it).
    pub missing_hint: Option<&'a str>,
}

impl MapRequest<'_> {
    /// `table 'events' of connector 'nats'`, for messages.
    fn object_phrase(&self) -> String {
        format!("{} of connector '{}'", self.object, self.connector)
    }
}

/// Map the options of `req.specs` out of `opts` into a validated JSON config. Options the
/// specs do not know are left in `opts`.
pub fn map_options(
    req: MapRequest<'_>,
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
) -> MappedOptions {
    let first = diags.len();
    let out = map_options_coded(req, opts, diags);
    // Whatever rule found it, a problem with an option's value is an invalid option,
    // unless that rule said more precisely what it is.
    codes::fill(&mut diags[first..], codes::INVALID_OPTION);
    out
}

fn map_options_coded(
    req: MapRequest<'_>,
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
) -> MappedOptions {
    let mut out = MappedOptions {
        config: Value::Object(Map::new()),
        ..Default::default()
    };
    let errors_before = diags.iter().filter(|d| d.is_error()).count();
    // Values holding `{{ VAR }}` references: their format is checked when resolved.
    let mut env_pointers: Vec<String> = Vec::new();

    // Selectors first, in declaration order: conditions on other options (and on later
    // selectors) depend on them.
    for spec in req.specs {
        let Target::Selector {
            values, default, ..
        } = spec.target
        else {
            continue;
        };
        if !condition_holds(spec, &out.selectors) {
            if let Some(o) = take_with_aliases(spec, opts, diags) {
                record(&mut out, &o, false);
                diags.push(only_applies(spec, &o));
            }
            continue;
        }
        match take_with_aliases(spec, opts, diags) {
            Some(o) => {
                record(&mut out, &o, false);
                match &o.value {
                    OptionValue::String(v) | OptionValue::Identifier(v)
                        if values.contains(&v.as_str()) =>
                    {
                        out.selectors.insert(spec.key.to_string(), v.clone());
                    }
                    OptionValue::String(v) | OptionValue::Identifier(v) => {
                        diags.push(not_allowed(spec.key, v, values, o.value_span));
                    }
                    _ => diags.push(expected(
                        &o,
                        "a single-quoted string",
                        &format!("'{}'", values[0]),
                    )),
                }
            }
            None => match default {
                Some(d) => {
                    out.selectors.insert(spec.key.to_string(), (*d).to_string());
                }
                None => diags.push(missing(req, spec, None)),
            },
        }
    }

    for spec in req.specs {
        if let Target::Selector { .. } = spec.target
            && let Some(chosen) = out.selectors.get(spec.key)
        {
            for (value, pointer) in spec.creates {
                if value == chosen && out.config.pointer(pointer).is_none() {
                    insert_at(&mut out.config, pointer, Value::Object(Map::new()));
                }
            }
        }
    }

    for spec in req.specs {
        if let Target::Indexed { pointer, .. } = spec.target {
            let items = opts.take_prefixed(spec.key);
            if !items.is_empty() {
                // Subscription messages can carry tokens: the schema says which are secret.
                let sensitive =
                    property(&req.schema.document, pointer).is_some_and(|i| i.sensitive);
                map_indexed(spec.key, pointer, items, sensitive, &mut out, diags);
            }
            continue;
        }
        if let Target::Prefixed { pointer, .. } = spec.target {
            for o in opts.take_prefixed(spec.key) {
                let sub = o.key[spec.key.len()..].to_string();
                // Free maps (storage options) hold credentials under many names; the
                // schema cannot list them, so their names decide.
                record(&mut out, &o, looks_secret(&sub));
                match &o.value {
                    OptionValue::String(v) => insert_at(
                        &mut out.config,
                        &format!("{pointer}/{sub}"),
                        Value::String(v.clone()),
                    ),
                    _ => diags.push(expected(&o, "a single-quoted string", "'text'")),
                }
            }
            continue;
        }
        let Target::Pointer(pointer) = spec.target else {
            continue;
        };
        let Some(info) = property(&req.schema.document, pointer) else {
            diags.push(Diagnostic::error(format!(
                "internal error: option '{}' of connector '{}' names '{pointer}', which its schema does not define; this is a bug in Tributary",
                spec.key, req.connector
            )));
            continue;
        };
        let applies = condition_holds(spec, &out.selectors);
        // One key may land in different places per variant (NATS `subject`): leave the
        // option to the declaration whose condition holds.
        if !applies
            && req
                .specs
                .iter()
                .any(|other| other.key == spec.key && condition_holds(other, &out.selectors))
        {
            continue;
        }
        match take_with_aliases(spec, opts, diags) {
            Some(o) => {
                record(&mut out, &o, info.sensitive);
                if !applies {
                    diags.push(only_applies(spec, &o));
                    continue;
                }
                // Report a pair of alternatives once, at the second one given.
                if let Some(other) = spec
                    .exclusive_with
                    .iter()
                    .find(|k| out.spans.contains_key(**k) && **k != spec.key)
                {
                    diags.push(
                        Diagnostic::error(format!(
                            "options '{other}' and '{}' cannot both be set",
                            spec.key
                        ))
                        .with_span(o.key_span)
                        .with_help(format!("Keep one of {}.", quoted_list(&group(spec))))
                        .with_code(codes::CONFLICTING_OPTIONS),
                    );
                    continue;
                }
                if let Some(w) = deprecated_form(spec.kind, &o) {
                    diags.push(w);
                }
                match convert(&o, spec.kind, &info) {
                    Ok(v) => {
                        // String values can select variants for later options (`type`).
                        if let Value::String(s) = &v {
                            out.selectors.insert(spec.key.to_string(), s.clone());
                        }
                        let deferred = match &v {
                            Value::String(s) if contains_env_reference(s) => {
                                if !(info.is_var_str() || info.sensitive) {
                                    diags.push(env_not_allowed(&o));
                                }
                                // Checked once the variable is resolved, at connection time.
                                env_pointers.push(pointer.to_string());
                                true
                            }
                            _ => false,
                        };
                        insert_at(&mut out.config, pointer, v);
                        if deferred {
                            continue;
                        }
                        if let Some(validator) = req.schema.properties.get(pointer) {
                            let value = out.config.pointer(pointer).cloned().unwrap_or_default();
                            for err in validator.iter_errors(&value) {
                                if let Some(d) =
                                    schema_error(req, &out, pointer, err.kind(), &err.to_string())
                                {
                                    diags.push(d);
                                }
                            }
                        }
                    }
                    Err(d) => diags.push(d),
                }
            }
            None if applies && info.required && !spec.exclusive_with.is_empty() => {
                let keys = group(spec);
                let given = keys
                    .iter()
                    .any(|k| out.spans.contains_key(*k) || opts.contains(k));
                // The group is reported once, by its first member.
                if !given && keys.first() == Some(&spec.key) {
                    diags.push(
                        Diagnostic::error(format!(
                            "{} needs one of the options {}",
                            req.object_phrase(),
                            quoted_list(&keys)
                        ))
                        .with_span(req.missing_span)
                        .with_help(format!(
                            "Add one of {} to the WITH clause.",
                            quoted_list(&keys)
                        ))
                        .with_code(codes::MISSING_OPTION),
                    );
                }
            }
            None if applies && info.required => match info.default() {
                Some(d) => {
                    if let Value::String(s) = d {
                        out.selectors.insert(spec.key.to_string(), s.clone());
                    }
                    insert_at(&mut out.config, pointer, d.clone())
                }
                None => diags.push(missing(req, spec, Some(&info))),
            },
            None => {}
        }
    }

    fill_required_defaults(&req.schema.document, &mut out.config);
    // Whole-document rules (required settings, variant combinations) once every value is
    // individually valid; value errors were reported per option above.
    let mapping_failed = diags.iter().filter(|d| d.is_error()).count() > errors_before;
    if !mapping_failed {
        for err in req.schema.validator.iter_errors(&out.config) {
            let path = err.instance_path().as_str().to_string();
            let value_check = !matches!(
                err.kind(),
                ValidationErrorKind::OneOfNotValid { .. }
                    | ValidationErrorKind::AnyOf { .. }
                    | ValidationErrorKind::Required { .. }
            );
            if value_check && env_pointers.contains(&path) {
                continue;
            }
            let found = match err.kind() {
                ValidationErrorKind::OneOfNotValid { .. } | ValidationErrorKind::AnyOf { .. } => {
                    branch_errors(req, &out, &path)
                }
                kind => schema_error(req, &out, &path, kind, &err.to_string())
                    .into_iter()
                    .collect(),
            };
            for d in found {
                if !diags.contains(&d) {
                    diags.push(d);
                }
            }
        }
    }
    out
}

/// An option and its alternatives, sorted so every member names the group alike.
fn group(spec: &OptionSpec) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = std::iter::once(spec.key)
        .chain(spec.exclusive_with.iter().copied())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Arroyo still reads intervals and column names written as strings, but has deprecated
/// those spellings; so do we.
fn deprecated_form(kind: ValueKind, o: &SqlOption) -> Option<Diagnostic> {
    let written = current_spelling(kind, &o.value)?;
    let what = match written {
        OptionValue::Interval(_) => "an interval",
        _ => "a column name",
    };
    Some(
        Diagnostic::warning(format!(
            "option '{}' is {what} written as a string; that form is deprecated",
            o.key
        ))
        .with_span(o.value_span)
        .with_help(format!("Write {} = {written}.", quote_key(&o.key))),
    )
}

/// The current spelling of a value written in a deprecated form (an interval or a column
/// name as a string); `None` when its form is current.
fn current_spelling(kind: ValueKind, value: &OptionValue) -> Option<OptionValue> {
    let OptionValue::String(text) = value else {
        return None;
    };
    match kind {
        ValueKind::IntervalSeconds | ValueKind::IntervalMillis | ValueKind::IntervalMicros => Some(
            OptionValue::Interval(format!("INTERVAL '{}'", text.replace('\'', "''"))),
        ),
        ValueKind::Field => Some(OptionValue::Identifier(tributary_types::quote_ident(text))),
        _ => None,
    }
}

/// `value` of option `key` of a `connector` table (or profile) in its current spelling,
/// when it was written in a deprecated one: what a dump writes, so its restore warns of
/// nothing.
pub fn current_form(connector: &str, key: &str, value: &OptionValue) -> Option<OptionValue> {
    let entry = crate::registry().get(connector)?;
    let c = &entry.connector;
    let spec = c
        .table_options()
        .iter()
        .chain(c.profile_options())
        .find(|s| s.key == key)?;
    current_spelling(spec.kind, value)
}

fn env_not_allowed(o: &SqlOption) -> Diagnostic {
    Diagnostic::error(format!(
        "option '{}' does not accept environment references ({{{{ VAR }}}})",
        o.key
    ))
    .with_span(o.value_span)
    .with_help(
        "Write the value itself; DESCRIBE CONNECTOR marks the options that accept {{ VAR }}.",
    )
    .with_code(codes::SECRET)
}

fn only_applies(spec: &OptionSpec, o: &SqlOption) -> Diagnostic {
    let cond = spec
        .when
        .map(|c| format!("{} is {}", quote_key(c.key), quoted_list(c.values)))
        .unwrap_or_default();
    Diagnostic::error(format!("option '{}' only applies when {cond}", spec.key))
        .with_span(o.key_span)
        .with_help("Remove the option, or change the selecting option.")
        .with_code(codes::CONFLICTING_OPTIONS)
}

/// `prefix0`, `prefix1`, ... into an array, in index order, without gaps.
fn map_indexed(
    prefix: &str,
    pointer: &str,
    items: Vec<SqlOption>,
    sensitive: bool,
    out: &mut MappedOptions,
    diags: &mut Vec<Diagnostic>,
) {
    let mut numbered: Vec<(usize, SqlOption)> = Vec::new();
    for o in items {
        record(out, &o, sensitive);
        let index = o.key[prefix.len()..].parse::<usize>();
        match (index, &o.value) {
            (Ok(i), OptionValue::String(_)) => numbered.push((i, o)),
            (Err(_), _) => diags.push(
                Diagnostic::error(format!(
                    "option '{}' must end in a number, as in '{prefix}0'",
                    o.key
                ))
                .with_span(o.key_span)
                .with_help(format!(
                    "Number the entries '{prefix}0', '{prefix}1', and so on."
                )),
            ),
            (Ok(_), _) => diags.push(expected(&o, "a single-quoted string", "'text'")),
        }
    }
    numbered.sort_by_key(|(i, _)| *i);
    for (expected_index, (i, o)) in numbered.iter().enumerate() {
        if *i != expected_index {
            diags.push(
                Diagnostic::error(format!(
                    "option '{}' skips '{prefix}{expected_index}'",
                    o.key
                ))
                .with_span(o.key_span)
                .with_help(format!("Number the entries from '{prefix}0' without gaps.")),
            );
            return;
        }
    }
    let values = numbered
        .into_iter()
        .map(|(_, o)| Value::String(o.value.as_text()))
        .collect();
    insert_at(&mut out.config, pointer, Value::Array(values));
}

fn condition_holds(spec: &OptionSpec, selectors: &BTreeMap<String, String>) -> bool {
    spec.when.is_none_or(|c| {
        selectors
            .get(c.key)
            .is_some_and(|v| c.values.contains(&v.as_str()))
    })
}

fn record(out: &mut MappedOptions, o: &SqlOption, sensitive: bool) {
    out.spans.insert(o.key.clone(), o.value_span);
    out.entries.push(o.to_entry(sensitive));
}

/// Take the option by its key or a deprecated alias (with a warning).
fn take_with_aliases(
    spec: &OptionSpec,
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
) -> Option<SqlOption> {
    if let Some(o) = opts.take(spec.key) {
        return Some(o);
    }
    for alias in spec.deprecated_aliases {
        if let Some(mut o) = opts.take(alias) {
            diags.push(
                Diagnostic::warning(format!("option '{alias}' is deprecated"))
                    .with_span(o.key_span)
                    .with_help(format!("Write {} instead.", quote_key(spec.key))),
            );
            o.key = spec.key.to_string();
            return Some(o);
        }
    }
    None
}

fn missing(req: MapRequest<'_>, spec: &OptionSpec, info: Option<&PropertyInfo<'_>>) -> Diagnostic {
    let mut d = Diagnostic::error(format!(
        "missing required option '{}' for {} of connector '{}'",
        spec.key, req.object, req.connector
    ))
    .with_span(req.missing_span)
    .with_code(codes::MISSING_OPTION);
    if let Some(c) = spec.when {
        d = d.with_note(format!(
            "it is required when {} is {}",
            quote_key(c.key),
            quoted_list(c.values)
        ));
    }
    let example = match spec.target {
        Target::Selector { values, .. } => format!("'{}'", values[0]),
        Target::Pointer(_) | Target::Prefixed { .. } | Target::Indexed { .. } => info
            .and_then(|i| i.node.get("examples").and_then(|e| e.get(0)).cloned())
            .map(|e| match e {
                Value::String(s) => format!("'{s}'"),
                other => other.to_string(),
            })
            .or_else(|| info.and_then(|i| i.enum_values().first().map(|v| format!("'{v}'"))))
            .unwrap_or_else(|| "'...'".into()),
    };
    if let Some(i) = info.filter(|i| !i.description().is_empty()) {
        d = d.with_note(format!(
            "{}: {}",
            spec.key,
            i.description().trim_end_matches('.')
        ));
    }
    let hint = req
        .missing_hint
        .map(|h| format!(" {h}"))
        .unwrap_or_default();
    d.with_help(format!(
        "Add {} = {example} to the WITH clause.{hint}",
        quote_key(spec.key)
    ))
}

/// Convert one option's value to JSON following `kind` and the schema's type.
fn convert(o: &SqlOption, kind: ValueKind, info: &PropertyInfo<'_>) -> Result<Value, Diagnostic> {
    let interval = |divisor: i64| -> Result<Value, Diagnostic> {
        let text = match &o.value {
            OptionValue::Interval(t) | OptionValue::String(t) => t.clone(),
            _ => return Err(expected(o, "an interval", "INTERVAL '5' SECOND")),
        };
        let micros = parse_interval_micros(&text).map_err(|e| {
            Diagnostic::error(format!("invalid interval for option '{}': {e}", o.key))
                .with_span(o.value_span)
                .with_help(format!(
                    "Write it as {} = INTERVAL '5' SECOND.",
                    quote_key(&o.key)
                ))
        })?;
        Ok(Value::from(micros / divisor))
    };
    match kind {
        ValueKind::IntervalSeconds => return interval(1_000_000),
        ValueKind::IntervalMillis => return interval(1_000),
        ValueKind::IntervalMicros => return interval(1),
        ValueKind::DataSize => {
            let text = match &o.value {
                OptionValue::Number(t) | OptionValue::String(t) => t.clone(),
                _ => return Err(expected(o, "a data size", "'64mb'")),
            };
            return parse_data_size(&text).map(Value::from).map_err(|e| {
                Diagnostic::error(format!("invalid data size for option '{}': {e}", o.key))
                    .with_span(o.value_span)
                    .with_help(format!("Write it as {} = '64mb'.", quote_key(&o.key)))
            });
        }
        ValueKind::Field => {
            return match &o.value {
                OptionValue::Identifier(s) | OptionValue::String(s) => Ok(Value::String(s.clone())),
                _ => Err(expected(o, "a column name", "event_time")),
            };
        }
        ValueKind::Pascal => {
            return match &o.value {
                OptionValue::Identifier(s) | OptionValue::String(s) => {
                    Ok(Value::String(pascal_case(s)))
                }
                _ => Err(expected(o, "a single-quoted string", "'text'")),
            };
        }
        ValueKind::Auto => {}
    }
    match info.type_name() {
        Some("integer") => to_i64(o).map(Value::from),
        Some("number") => to_f64(o).map(Value::from),
        Some("boolean") => to_bool(o).map(Value::Bool),
        Some("array") => Ok(Value::Array(match &o.value {
            OptionValue::Array(items) => items.iter().map(|i| Value::String(i.as_text())).collect(),
            OptionValue::String(s) => s
                .split(',')
                .map(|p| Value::String(p.trim().to_string()))
                .filter(|v| v != "")
                .collect(),
            OptionValue::Identifier(s) => vec![Value::String(s.clone())],
            _ => return Err(expected(o, "an array", "['a', 'b']")),
        })),
        Some("object") => match &o.value {
            OptionValue::String(s) => parse_pairs(s).map_err(|e| {
                Diagnostic::error(format!("invalid value for option '{}': {e}", o.key))
                    .with_span(o.value_span)
                    .with_help(format!(
                        "Write it as {} = 'key1=value1,key2=value2'.",
                        quote_key(&o.key)
                    ))
            }),
            _ => Err(expected(
                o,
                "a string of comma-separated key=value pairs",
                "'k1=v1,k2=v2'",
            )),
        },
        _ => match &o.value {
            OptionValue::String(s) => Ok(Value::String(s.clone())),
            _ => Err(expected(o, "a single-quoted string", "'text'")),
        },
    }
}

/// `at_least_once` and `append` to `AtLeastOnce` and `Append`; PascalCase stays as is.
fn pascal_case(s: &str) -> String {
    s.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn parse_pairs(s: &str) -> Result<Value, String> {
    let mut map = Map::new();
    for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("'{pair}' is not a key=value pair"))?;
        map.insert(k.trim().to_string(), Value::String(v.trim().to_string()));
    }
    Ok(Value::Object(map))
}

/// Explain a failed `oneOf` by the branch the given settings belong to: its required
/// settings that are missing.
fn branch_errors(req: MapRequest<'_>, out: &MappedOptions, path: &str) -> Vec<Diagnostic> {
    let instance = out.config.pointer(path).cloned().unwrap_or(Value::Null);
    let branch =
        object_at(&req.schema.document, path).and_then(|node| matching_branch(node, &instance));
    let Some(branch) = branch else {
        let keys: Vec<String> = instance
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let d = Diagnostic::error(format!(
            "the settings under '{}' of {} of connector '{}' do not form a valid combination",
            path.trim_start_matches('/').replace('/', "."),
            req.object,
            req.connector
        ))
        .with_span(req.missing_span)
        .with_note(format!("given: {}", keys.join(", ")))
        .with_help(format!(
            "Run DESCRIBE CONNECTOR {} to see which options go together.",
            req.connector
        ));
        return vec![d];
    };
    let required = branch
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    required
        .iter()
        .filter_map(Value::as_str)
        .filter(|name| instance.get(*name).is_none())
        .map(|name| {
            let pointer = format!("{path}/{name}");
            match req
                .specs
                .iter()
                .find(|s| s.pointer() == Some(pointer.as_str()))
            {
                Some(spec) => missing(req, spec, property(&req.schema.document, &pointer).as_ref()),
                None => Diagnostic::error(format!(
                    "missing required setting '{}' for {} of connector '{}'",
                    pointer.trim_start_matches('/').replace('/', "."),
                    req.object,
                    req.connector
                ))
                .with_span(req.missing_span)
                .with_code(codes::MISSING_OPTION),
            }
        })
        .collect()
}

/// Turn one JSON Schema error into a diagnostic about the option that produced it.
fn schema_error(
    req: MapRequest<'_>,
    out: &MappedOptions,
    path: &str,
    kind: &ValidationErrorKind,
    raw: &str,
) -> Option<Diagnostic> {
    let spec_at = |pointer: &str| req.specs.iter().find(|s| s.pointer() == Some(pointer));
    let info_at = |pointer: &str| property(&req.schema.document, pointer);
    let value_at = |pointer: &str| out.config.pointer(pointer);
    let key_for = |pointer: &str| {
        spec_at(pointer)
            .map(|s| s.key.to_string())
            .unwrap_or_else(|| pointer.trim_start_matches('/').replace('/', "."))
    };
    let span_for = |pointer: &str| {
        spec_at(pointer)
            .map(|s| out.span_of(s.key, req.missing_span))
            .unwrap_or(req.missing_span)
    };
    let sensitive = info_at(path).is_some_and(|i| i.sensitive);
    // The validator's own text quotes the value, which must not leak a secret.
    let detail = if sensitive {
        "the value does not fit the schema"
    } else {
        raw
    };
    let shown = |pointer: &str| match value_at(pointer) {
        _ if sensitive => "the given value".to_string(),
        Some(Value::String(s)) => format!("'{s}'"),
        Some(v) => v.to_string(),
        None => "the value".into(),
    };
    Some(match kind {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let pointer = format!("{path}/{name}");
            match spec_at(&pointer) {
                Some(spec) => missing(req, spec, info_at(&pointer).as_ref()),
                None => Diagnostic::error(format!(
                    "missing required setting '{}' for {} of connector '{}'",
                    key_for(&pointer),
                    req.object,
                    req.connector
                ))
                .with_span(req.missing_span)
                .with_code(codes::MISSING_OPTION),
            }
        }
        ValidationErrorKind::Enum { options } => {
            let allowed = as_strings(options);
            let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
            let value = value_at(path)
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .unwrap_or_default();
            not_allowed(&key_for(path), &value, &allowed, span_for(path))
        }
        ValidationErrorKind::Pattern { pattern } => {
            let mut d = Diagnostic::error(format!(
                "invalid value {} for option '{}'",
                shown(path),
                key_for(path)
            ))
            .with_span(span_for(path))
            .with_note(format!("the value must match the pattern {pattern}"));
            if let Some(example) = info_at(path).and_then(|i| {
                i.node
                    .get("examples")
                    .and_then(|e| e.get(0))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            }) {
                d = d.with_help(format!("Use a value such as '{example}'."));
            }
            d
        }
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit }
        | ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => {
            let bound = match kind {
                ValidationErrorKind::Minimum { .. } => "at least",
                ValidationErrorKind::ExclusiveMinimum { .. } => "greater than",
                ValidationErrorKind::Maximum { .. } => "at most",
                _ => "less than",
            };
            Diagnostic::error(format!(
                "option '{}' must be {bound} {limit}, but it is {}",
                key_for(path),
                shown(path)
            ))
            .with_span(span_for(path))
            .with_help(format!("Use a value {bound} {limit}."))
        }
        ValidationErrorKind::MinLength { limit } => Diagnostic::error(format!(
            "option '{}' must have at least {limit} character(s)",
            key_for(path)
        ))
        .with_span(span_for(path))
        .with_help("Give it a non-empty value."),
        ValidationErrorKind::Type { .. } => Diagnostic::error(format!(
            "option '{}' has the wrong type: {detail}",
            key_for(path)
        ))
        .with_span(span_for(path)),
        _ => Diagnostic::error(format!(
            "invalid settings for {} at '{}': {detail}",
            req.object_phrase(),
            key_for(path)
        ))
        .with_span(if path.is_empty() {
            req.missing_span
        } else {
            span_for(path)
        })
        .with_help(format!(
            "Run DESCRIBE CONNECTOR {} to see the valid options.",
            req.connector
        )),
    })
}
