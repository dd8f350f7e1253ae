//! Schemas that refer to others (registry references): Avro named types from other
//! subjects inlined into one self-contained schema, and `.proto` files compiled together
//! with their imports from memory (no files, no protoc).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// Inline the named types `references` defines (full name → schema text) where `main`
/// first uses them, so the result parses on its own. Later uses stay name references, as
/// Avro allows once a type is defined.
pub fn inline_avro_references(
    main: &str,
    references: &BTreeMap<String, String>,
) -> Result<String, String> {
    let mut root: serde_json::Value =
        serde_json::from_str(main).map_err(|e| format!("the schema is not JSON: {e}"))?;
    let mut parsed = BTreeMap::new();
    for (name, text) in references {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("referenced schema '{name}' is not JSON: {e}"))?;
        parsed.insert(name.clone(), v);
    }
    let mut defined = HashSet::new();
    inline(&mut root, &parsed, &mut defined, 0)?;
    serde_json::to_string(&root).map_err(|e| e.to_string())
}

fn inline(
    v: &mut serde_json::Value,
    refs: &BTreeMap<String, serde_json::Value>,
    defined: &mut HashSet<String>,
    depth: usize,
) -> Result<(), String> {
    use serde_json::Value as J;
    if depth > 64 {
        return Err("references nest too deeply".into());
    }
    match v {
        J::String(name) => {
            if let Some(target) = refs.get(name.as_str())
                && defined.insert(name.clone())
            {
                let mut target = target.clone();
                inline(&mut target, refs, defined, depth + 1)?;
                *v = target;
            }
        }
        J::Array(items) => {
            for item in items {
                inline(item, refs, defined, depth + 1)?;
            }
        }
        J::Object(o) => {
            // A named type defined here counts as defined from now on.
            if let Some(J::String(n)) = o.get("name") {
                let full = match o.get("namespace") {
                    Some(J::String(ns)) if !n.contains('.') => format!("{ns}.{n}"),
                    _ => n.clone(),
                };
                if matches!(o.get("type"), Some(J::String(t)) if t == "record" || t == "enum" || t == "fixed")
                {
                    defined.insert(full);
                }
            }
            for key in ["type", "items", "values", "fields"] {
                if let Some(child) = o.get_mut(key) {
                    inline(child, refs, defined, depth + 1)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Compile `main` (a `.proto` file name in `files`) with its imports, all from `files`
/// (name → source), plus the built-in google/protobuf well-known types, into a
/// `FileDescriptorSet`.
pub fn compile_proto_sources(
    main: &str,
    files: &BTreeMap<String, String>,
) -> Result<Vec<u8>, String> {
    let mut chain = protox::file::ChainFileResolver::new();
    chain.add(Sources(files.clone()));
    chain.add(protox::file::GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(chain);
    compiler.include_imports(true);
    compiler.open_file(main).map_err(|e| e.to_string())?;
    Ok(compiler.encode_file_descriptor_set())
}

/// `.proto` sources held in memory, by import name.
struct Sources(BTreeMap<String, String>);

impl protox::file::FileResolver for Sources {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        let name = path.to_str()?;
        self.0.contains_key(name).then(|| name.to_string())
    }

    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        match self.0.get(name) {
            Some(source) => protox::file::File::from_source(name, source),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avro_references_are_inlined_once() {
        let main = r#"{"type":"record","name":"Order","fields":[
            {"name":"ship","type":"com.acme.Address"},{"name":"bill","type":["null","com.acme.Address"]}]}"#;
        let refs = BTreeMap::from([(
            "com.acme.Address".to_string(),
            r#"{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"}]}"#.to_string(),
        )]);
        let text = inline_avro_references(main, &refs).unwrap_or_default();
        let schema = crate::parse_avro_schema(&text).map_err(|e| e.to_string());
        let fields = schema
            .and_then(|s| crate::fields_from_avro_schema(&s).map_err(|e| e.to_string()))
            .map(|e| e.fields.len());
        assert_eq!(fields, Ok(2), "{text}");
        assert_eq!(text.matches("\"city\"").count(), 1);
    }

    #[test]
    fn proto_imports_compile_from_memory() {
        let files = BTreeMap::from([
            (
                "common.proto".to_string(),
                "syntax = \"proto3\"; package c; message Money { int64 cents = 1; }".to_string(),
            ),
            (
                "order.proto".to_string(),
                "syntax = \"proto3\"; package o; import \"common.proto\"; import \"google/protobuf/timestamp.proto\"; message Order { c.Money total = 1; google.protobuf.Timestamp at = 2; }".to_string(),
            ),
        ]);
        let set = compile_proto_sources("order.proto", &files);
        let fields = set
            .map_err(|e| e.to_string())
            .and_then(|b| crate::fields_from_protobuf(&b, "o.Order").map_err(|e| e.to_string()))
            .map(|e| e.fields.len());
        assert_eq!(fields, Ok(2));
        let missing = compile_proto_sources("nope.proto", &files).unwrap_err();
        assert!(missing.contains("nope.proto"), "{missing}");
    }
}

/// Make a JSON Schema that refers to other documents (registry references, by name)
/// self-contained: each referenced document moves under `$defs` of the root, and every
/// `$ref` to it (whole, or into it with `name#/pointer`) and every local `$ref` inside it is
/// rewritten to point there. Referenced documents may refer to others in turn.
pub fn inline_json_schema_references(
    main: &str,
    references: &BTreeMap<String, String>,
) -> Result<String, String> {
    let mut root: serde_json::Value =
        serde_json::from_str(main).map_err(|e| format!("the schema is not JSON: {e}"))?;
    // Where each referenced document will live.
    let slots: BTreeMap<&str, String> = references
        .keys()
        .enumerate()
        .map(|(i, name)| (name.as_str(), format!("#/$defs/__reference_{i}")))
        .collect();
    let mut defs = serde_json::Map::new();
    for (i, (name, text)) in references.iter().enumerate() {
        let mut doc: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("referenced schema '{name}' is not JSON: {e}"))?;
        let own = slots.get(name.as_str()).cloned().unwrap_or_default();
        rewrite_refs(&mut doc, &slots, Some(&own), 0)?;
        defs.insert(format!("__reference_{i}"), doc);
    }
    rewrite_refs(&mut root, &slots, None, 0)?;
    if !defs.is_empty() {
        let serde_json::Value::Object(o) = &mut root else {
            return Err("the schema's root is not an object".into());
        };
        let target = o
            .entry("$defs")
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(existing) = target {
            existing.extend(defs);
        }
    }
    serde_json::to_string(&root).map_err(|e| e.to_string())
}

/// Point `$ref`s at the slots of referenced documents; `own` is the slot of the document
/// being rewritten, whose local refs (`#/...`) move with it.
fn rewrite_refs(
    v: &mut serde_json::Value,
    slots: &BTreeMap<&str, String>,
    own: Option<&str>,
    depth: usize,
) -> Result<(), String> {
    use serde_json::Value as J;
    if depth > 128 {
        return Err("the schema nests too deeply".into());
    }
    match v {
        J::Object(o) => {
            if let Some(J::String(r)) = o.get_mut("$ref") {
                let (doc, pointer) = r.split_once('#').unwrap_or((r.as_str(), ""));
                let rewritten = if doc.is_empty() {
                    own.map(|slot| format!("{slot}{pointer}"))
                } else {
                    slots.get(doc).map(|slot| format!("{slot}{pointer}"))
                };
                if let Some(new) = rewritten {
                    *r = new;
                }
            }
            for child in o.values_mut() {
                rewrite_refs(child, slots, own, depth + 1)?;
            }
        }
        J::Array(items) => {
            for item in items {
                rewrite_refs(item, slots, own, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod json_tests {
    use super::*;

    #[test]
    fn json_references_move_under_defs() {
        let main = r##"{"type":"object","properties":{"customer":{"$ref":"customer.json"},"address":{"$ref":"customer.json#/$defs/Address"}}}"##;
        let refs = BTreeMap::from([(
            "customer.json".to_string(),
            r##"{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"home":{"$ref":"#/$defs/Address"}},"$defs":{"Address":{"type":"object","properties":{"city":{"type":"string"}}}}}"##.to_string(),
        )]);
        let text = inline_json_schema_references(main, &refs).unwrap_or_default();
        let fields = crate::fields_from_json_schema(&text).map(|e| {
            e.fields
                .iter()
                .map(|f| format!("{} {}", f.name, f.field_type))
                .collect::<Vec<_>>()
        });
        assert_eq!(
            fields,
            Ok(vec![
                "customer STRUCT<name TEXT NOT NULL, home STRUCT<city TEXT>>".to_string(),
                "address STRUCT<city TEXT>".to_string()
            ]),
            "{text}"
        );
    }
}
