//! JSON Schema expansion: every `fixtures/json/*.schema.json` against its snapshot
//! `*.fields.json` (regenerate with `TRIBUTARY_BLESS=1 cargo test -p tributary-formats`), and
//! the errors a bad schema gets.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::path::Path;
use tributary_formats::{JsonSchemaError, fields_from_json_schema};
use tributary_types::{FieldType, SourceField, TimeUnit};

#[test]
fn fixtures_match_their_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/json");
    let bless = std::env::var_os("TRIBUTARY_BLESS").is_some();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".schema.json") else {
            continue;
        };
        seen += 1;
        let expanded = fields_from_json_schema(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let rendered = serde_json::to_string_pretty(&serde_json::json!({
            "fields": expanded.fields,
            "notes": expanded.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        }))
        .unwrap()
            + "\n";
        let snapshot = dir.join(format!("{stem}.fields.json"));
        if bless {
            std::fs::write(&snapshot, &rendered).unwrap();
        }
        let expected = std::fs::read_to_string(&snapshot).unwrap_or_default();
        assert_eq!(
            rendered, expected,
            "{stem}: expansion differs from its snapshot (TRIBUTARY_BLESS=1 to accept)"
        );
    }
    assert!(seen > 0, "no fixtures in {}", dir.display());
}

#[test]
fn mapping_rules() {
    let f = fields_from_json_schema(
        r#"{"type": "object", "required": ["a", "t"], "properties": {
            "a": {"type": "string"}, "b": {"type": "number"},
            "c": {"type": "array", "items": {"type": "string"}},
            "t": {"type": "string", "format": "date-time"},
            "n": {"type": ["integer", "null"]}}}"#,
    )
    .unwrap();
    let by = |n: &str| f.fields.iter().find(|x| x.name == n).unwrap();
    assert!(by("a").required && by("a").field_type == FieldType::String);
    assert!(!by("b").required && by("b").field_type == FieldType::Float64);
    match &by("c").field_type {
        FieldType::List { items } => {
            assert!(items.required && items.field_type == FieldType::String)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        by("t").field_type,
        FieldType::Timestamp {
            unit: TimeUnit::Nanosecond
        }
    );
    assert!(!by("n").required && by("n").field_type == FieldType::Int64);
    assert!(f.notes.is_empty(), "{:?}", f.notes);
}

#[test]
fn errors_say_what_and_where() {
    let err = |text: &str| fields_from_json_schema(text).unwrap_err();
    match err("{\n  \"type\": \"object\",\n  \"properties\": {\n}") {
        JsonSchemaError::NotJson { line, .. } => assert_eq!(line, 4),
        other => panic!("{other:?}"),
    }
    assert!(
        err(r#"{"type": "string"}"#)
            .to_string()
            .contains("root must describe an object")
    );
    let e = err(r##"{"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}"##);
    assert!(
        e.to_string()
            .contains("cannot resolve $ref '#/$defs/Missing' at a"),
        "{e}"
    );
    let e = err(r#"{"type": "object", "properties": {"a": {"$ref": "other.json#/X"}}}"#);
    assert!(
        e.to_string().contains("only references within the schema"),
        "{e}"
    );
    let e = err(
        r##"{"type": "object", "properties": {"n": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}}"##,
    );
    assert!(matches!(e, JsonSchemaError::Recursive { .. }), "{e}");
    let e = err(r#"{"type": "object", "properties": {"a": 5}}"#);
    assert!(
        e.to_string().contains("the schema of a must be an object"),
        "{e}"
    );
}

#[test]
fn sink_schemas_expand_back_into_the_same_columns() {
    let fields = vec![
        SourceField::required("id", FieldType::Int64),
        SourceField::new(
            "at",
            FieldType::Timestamp {
                unit: TimeUnit::Nanosecond,
            },
        ),
        SourceField::new(
            "user",
            FieldType::Struct {
                fields: vec![SourceField::required("name", FieldType::String)],
            },
        ),
        SourceField::new("tags", FieldType::list(FieldType::String)),
        SourceField::new("doc", FieldType::Json),
    ];
    let schema = tributary_formats::json_schema_for_fields(&fields, false);
    let back = fields_from_json_schema(&schema.to_string()).unwrap();
    assert_eq!(back.fields, fields);
}
