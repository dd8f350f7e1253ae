//! Encode then decode gives back the same rows, per format.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use arrow_array::RecordBatch;
use tributary_formats::{BatchDecoder, RowEncoder, fields_from_json_schema};
use tributary_types::{
    ConnectionSchema, FieldType, Format, JsonFormat, SourceField, TimestampFormat,
};

fn round_trip(
    table: &ConnectionSchema,
    messages: &[&[u8]],
    schema_id: Option<u32>,
) -> (RecordBatch, RecordBatch) {
    let mut d = BatchDecoder::new(table).unwrap();
    for m in messages {
        d.push(m).unwrap();
    }
    let first = d.finish().unwrap().unwrap();
    let encoded = RowEncoder::new(table.format.as_ref().unwrap(), schema_id)
        .unwrap()
        .encode(&first)
        .unwrap();
    assert_eq!(encoded.len(), first.num_rows());
    for m in &encoded {
        d.push(m).unwrap();
    }
    (first, d.finish().unwrap().unwrap())
}

const SCHEMA: &str = r#"{"type": "object", "required": ["id"], "properties": {
    "id": {"type": "integer"}, "at": {"type": "string", "format": "date-time"},
    "user": {"type": "object", "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}},
    "price": {"type": "number"}, "paid": {"type": "boolean"}, "attrs": {"type": "object"}}}"#;

const MESSAGES: [&[u8]; 3] = [
    br#"{"id": 1, "at": "2026-11-29T10:00:00.123456789Z", "user": {"name": "ada", "tags": ["a", "b"]}, "price": 9.5, "paid": true, "attrs": {"k": [1, {"x": null}]}}"#,
    br#"{"id": 2, "user": {"name": null, "tags": []}, "attrs": "plain"}"#,
    br#"{"id": 3, "at": "1970-01-01T00:00:00Z"}"#,
];

fn json_table(format: JsonFormat) -> ConnectionSchema {
    ConnectionSchema {
        format: Some(Format::Json(format)),
        fields: fields_from_json_schema(SCHEMA).unwrap().fields,
        ..Default::default()
    }
}

#[test]
fn json_round_trips_with_nesting_nulls_and_json_columns() {
    let (a, b) = round_trip(&json_table(JsonFormat::default()), &MESSAGES, None);
    assert_eq!(a, b);
}

#[test]
fn json_round_trips_with_unix_millis_and_the_confluent_header() {
    let format = JsonFormat {
        timestamp_format: TimestampFormat::UnixMillis,
        confluent_schema_registry: true,
        ..Default::default()
    };
    let table = json_table(format);
    // Millisecond precision on the wire: start from values that have no finer part.
    let messages: Vec<Vec<u8>> = [
        br#"{"id": 1, "at": 1795946400123}"#.as_slice(),
        br#"{"id": 2}"#.as_slice(),
    ]
    .iter()
    .map(|m| [&[0, 0, 0, 0, 42][..], m].concat())
    .collect();
    let refs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
    let (a, b) = round_trip(&table, &refs, Some(42));
    assert_eq!(a, b);
    let encoded = RowEncoder::new(table.format.as_ref().unwrap(), Some(42))
        .unwrap()
        .encode(&a)
        .unwrap();
    assert_eq!(&encoded[0][..5], &[0, 0, 0, 0, 42]);
    assert!(String::from_utf8_lossy(&encoded[0][5..]).contains(r#""at":1795946400123"#));
}

#[test]
fn raw_formats_round_trip() {
    let table = ConnectionSchema {
        format: Some(Format::RawString {}),
        fields: vec![SourceField::new("value", FieldType::String)],
        ..Default::default()
    };
    let (a, b) = round_trip(&table, &[b"hello", "w\u{f6}rld".as_bytes(), b""], None);
    assert_eq!(a, b);
    let table = ConnectionSchema {
        format: Some(Format::RawBytes {}),
        fields: vec![SourceField::new("value", FieldType::Bytes)],
        ..Default::default()
    };
    let (a, b) = round_trip(&table, &[&[0, 255, 1], b""], None);
    assert_eq!(a, b);
}

#[test]
fn encoder_refusals_are_explained() {
    let e = RowEncoder::new(
        &Format::Json(JsonFormat {
            confluent_schema_registry: true,
            ..Default::default()
        }),
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("needs a schema id"), "{e}");
    let e = RowEncoder::new(&Format::Parquet(Default::default()), None).unwrap_err();
    assert!(
        e.to_string()
            .contains("'parquet' format is not supported yet"),
        "{e}"
    );
}
