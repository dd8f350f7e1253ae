//! Reading a connector's JSON Schema: finding the property a JSON Pointer names (through
//! `properties` and `oneOf`/`anyOf`/`allOf` branches) with what the schema says about it.

use serde_json::Value;

/// What the schema says about one property.
#[derive(Debug, Clone, Copy)]
pub struct PropertyInfo<'a> {
    /// The property's schema.
    pub node: &'a Value,
    /// Whether it is required all the way from the root: every enclosing object is required
    /// and the object (or branch) holding it lists it as required.
    pub required: bool,
    /// Whether the holding object lists it in `sensitive`.
    pub sensitive: bool,
}

impl<'a> PropertyInfo<'a> {
    /// The JSON type name (`string`, `integer`, ...); the first non-null one for unions.
    pub fn type_name(&self) -> Option<&'a str> {
        match self.node.get("type")? {
            Value::String(s) => Some(s.as_str()),
            Value::Array(a) => a.iter().filter_map(Value::as_str).find(|t| *t != "null"),
            _ => None,
        }
    }

    /// The `enum` values as strings.
    pub fn enum_values(&self) -> Vec<String> {
        self.node.get("enum").map(as_strings).unwrap_or_default()
    }

    /// The `default`.
    pub fn default(&self) -> Option<&'a Value> {
        self.node.get("default")
    }

    /// The `description`.
    pub fn description(&self) -> &'a str {
        self.node
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Whether `{{ VAR }}` references are allowed (`format: var-str`).
    pub fn is_var_str(&self) -> bool {
        self.node.get("format").and_then(Value::as_str) == Some("var-str")
    }
}

/// The items of a JSON array as text (strings unquoted, other values as JSON).
pub fn as_strings(array: &Value) -> Vec<String> {
    array
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Find the property at `pointer` (`/a/b`) in `schema`.
pub fn property<'a>(schema: &'a Value, pointer: &str) -> Option<PropertyInfo<'a>> {
    let mut parts = pointer.trim_start_matches('/').split('/').peekable();
    let mut node = schema;
    let mut required_path = true;
    loop {
        let name = parts.next()?;
        let mut info = find_in_object(node, name)?;
        required_path &= info.required;
        if parts.peek().is_none() {
            info.required = required_path;
            return Some(info);
        }
        node = info.node;
    }
}

/// Look for `name` in `node`'s properties, then in each composition branch.
fn find_in_object<'a>(node: &'a Value, name: &str) -> Option<PropertyInfo<'a>> {
    if let Some(p) = node.get("properties").and_then(|p| p.get(name)) {
        let listed = |key: &str| {
            node.get(key)
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(name)))
        };
        return Some(PropertyInfo {
            node: p,
            required: listed("required"),
            sensitive: listed("sensitive"),
        });
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(branches) = node.get(key).and_then(Value::as_array) {
            for b in branches {
                if let Some(found) = find_in_object(b, name) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// Every leaf property (one without nested `properties` or branches) with its JSON Pointer.
pub fn leaf_properties(schema: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    collect_leaves(schema, "", &mut out);
    out
}

fn collect_leaves<'a>(node: &'a Value, prefix: &str, out: &mut Vec<(String, &'a Value)>) {
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            let pointer = format!("{prefix}/{name}");
            if is_container(child) {
                collect_leaves(child, &pointer, out);
            } else if !out.iter().any(|(p, _)| *p == pointer) {
                out.push((pointer, child));
            }
        }
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for branch in node
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            collect_leaves(branch, prefix, out);
        }
    }
}

/// Whether a property's schema holds further declared properties (an object of settings
/// rather than a value).
pub fn is_container(node: &Value) -> bool {
    node.get("properties").is_some()
        || ["oneOf", "anyOf", "allOf"]
            .iter()
            .any(|k| node.get(*k).is_some())
}

/// The branch of a `oneOf` at `node` that declares every key of `instance`.
pub fn matching_branch<'a>(node: &'a Value, instance: &Value) -> Option<&'a Value> {
    let keys: Vec<&String> = instance.as_object()?.keys().collect();
    let branches = node
        .get("oneOf")
        .or_else(|| node.get("anyOf"))?
        .as_array()?;
    branches.iter().find(|b| {
        let props = b.get("properties").and_then(Value::as_object);
        keys.iter()
            .all(|k| props.is_some_and(|p| p.contains_key(k.as_str())))
            && (!keys.is_empty()
                || props.is_none_or(|p| p.is_empty())
                || b.get("required").is_none())
    })
}

/// The schema node of the object at `pointer` (the root for an empty pointer).
pub fn object_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(schema);
    }
    property(schema, pointer).map(|i| i.node)
}

/// Fill in the default of every required property that is absent, at the root and inside
/// the objects present (following the `oneOf` branch their keys select).
pub fn fill_required_defaults(node: &Value, instance: &mut Value) {
    let node = match matching_branch(node, instance) {
        Some(branch) if node.get("properties").is_none() => branch,
        _ => node,
    };
    let Some(props) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Value::Object(map) = instance else { return };
    for (name, child) in props {
        if !map.contains_key(name)
            && required.contains(&name.as_str())
            && let Some(d) = child.get("default")
        {
            map.insert(name.clone(), d.clone());
        }
        if let Some(v) = map.get_mut(name)
            && v.is_object()
        {
            fill_required_defaults(child, v);
        }
    }
}

/// Set `value` at `pointer` in `root`, creating objects on the way.
pub fn insert_at(root: &mut Value, pointer: &str, value: Value) {
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    let mut node = root;
    for (i, part) in parts.iter().enumerate() {
        if !node.is_object() {
            *node = Value::Object(Default::default());
        }
        let Value::Object(map) = node else { return };
        if i == parts.len() - 1 {
            map.insert((*part).to_string(), value);
            return;
        }
        node = map
            .entry((*part).to_string())
            .or_insert_with(|| Value::Object(Default::default()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_properties_through_branches() {
        let schema = json!({
            "type": "object",
            "required": ["topic", "type"],
            "properties": {
                "topic": {"type": "string"},
                "type": {"oneOf": [
                    {"type": "object", "required": ["offset"], "properties": {"offset": {"type": "string", "enum": ["latest", "earliest"], "default": "latest"}}},
                    {"type": "object", "required": ["commit_mode"], "sensitive": ["secret"], "properties": {"commit_mode": {"type": "string"}, "secret": {"type": "string", "format": "var-str"}}}
                ]}
            }
        });
        let t = property(&schema, "/topic").unwrap();
        assert!(t.required);
        assert_eq!(t.type_name(), Some("string"));
        let o = property(&schema, "/type/offset").unwrap();
        assert!(o.required);
        assert_eq!(o.enum_values(), vec!["latest", "earliest"]);
        assert_eq!(o.default(), Some(&json!("latest")));
        let s = property(&schema, "/type/secret").unwrap();
        assert!(s.sensitive && s.is_var_str() && !s.required);
        assert!(property(&schema, "/nope").is_none());
    }

    #[test]
    fn insert_creates_objects() {
        let mut v = json!({});
        insert_at(&mut v, "/a/b", json!(1));
        insert_at(&mut v, "/a/c", json!(2));
        assert_eq!(v, json!({"a": {"b": 1, "c": 2}}));
    }
}
