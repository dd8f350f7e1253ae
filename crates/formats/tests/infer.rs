//! Schema inference from sample messages: `fixtures/samples/*.jsonl` against their
//! snapshots (`TRIBUTARY_BLESS=1` to accept changes), and the rules one by one.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::path::Path;
use tributary_formats::{InferError, infer_fields};
use tributary_types::{FieldType, SourceField, TimeUnit};

#[test]
fn sample_files_match_their_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/samples");
    let bless = std::env::var_os("TRIBUTARY_BLESS").is_some();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".jsonl"))
        else {
            continue;
        };
        seen += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let samples: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let fields = infer_fields(&samples).unwrap();
        let rendered = serde_json::to_string_pretty(&fields).unwrap() + "\n";
        let snapshot = dir.join(format!("{stem}.fields.json"));
        if bless {
            std::fs::write(&snapshot, &rendered).unwrap();
        }
        let expected = std::fs::read_to_string(&snapshot).unwrap_or_default();
        assert_eq!(
            rendered, expected,
            "{stem}: inference differs from its snapshot"
        );
    }
    assert!(seen > 0);
}

fn field<'a>(fields: &'a [SourceField], name: &str) -> &'a SourceField {
    fields.iter().find(|f| f.name == name).unwrap()
}

#[test]
fn widening_nullability_and_timestamps() {
    let f = infer_fields(&[
        r#"{"a": 1, "b": "2026-01-01T00:00:00Z", "c": "x", "d": 1, "e": {"x": 1}}"#,
        r#"{"a": 2.5, "b": "2026-01-01T00:00:01Z", "c": null, "d": "one"}"#,
    ])
    .unwrap();
    assert_eq!(field(&f, "a").field_type, FieldType::Float64);
    assert!(field(&f, "a").required);
    assert_eq!(
        field(&f, "b").field_type,
        FieldType::Timestamp {
            unit: TimeUnit::Nanosecond
        }
    );
    assert!(!field(&f, "c").required, "null makes it nullable");
    assert_eq!(
        field(&f, "d").field_type,
        FieldType::Json,
        "number vs string"
    );
    assert!(!field(&f, "e").required, "absent from one sample");
    // A timestamp-looking column with one plain string is text.
    let f = infer_fields(&[r#"{"t": "2026-01-01T00:00:00Z"}"#, r#"{"t": "soon"}"#]).unwrap();
    assert_eq!(field(&f, "t").field_type, FieldType::String);
}

#[test]
fn bad_samples_are_named() {
    assert_eq!(
        infer_fields::<&str>(&[]).unwrap_err(),
        InferError::NoSamples
    );
    let e = infer_fields(&[r#"{"a": 1}"#, "{oops"]).unwrap_err();
    assert!(
        e.to_string().starts_with("sample 2 is not valid JSON"),
        "{e}"
    );
    let e = infer_fields(&["[1, 2]"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sample 1 is a JSON array, not an object; only objects have columns"
    );
}
