//! Decoding messages into Arrow batches: every supported format, the bad-data policies,
//! framing, the Confluent header, timestamp encodings and JSON columns.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampNanosecondType};
use arrow_array::{Array, RecordBatch};
use tributary_formats::{BatchDecoder, DecodeError, fields_from_json_schema};
use tributary_types::{
    BadData, ConnectionSchema, FieldType, Format, Framing, JsonFormat, SourceField, TimeUnit,
    TimestampFormat,
};

fn schema(format: Format, fields: Vec<SourceField>) -> ConnectionSchema {
    ConnectionSchema {
        format: Some(format),
        fields,
        ..Default::default()
    }
}

fn decode(s: &ConnectionSchema, messages: &[&[u8]]) -> Result<RecordBatch, DecodeError> {
    let mut d = BatchDecoder::new(s)?;
    for m in messages {
        d.push(m)?;
    }
    Ok(d.finish()?.unwrap())
}

fn json_fields() -> Vec<SourceField> {
    vec![
        SourceField::required("id", FieldType::Int64),
        SourceField::new(
            "at",
            FieldType::Timestamp {
                unit: TimeUnit::Nanosecond,
            },
        ),
        SourceField::new("name", FieldType::String),
        SourceField {
            metadata_key: Some("key".into()),
            ..SourceField::new("k", FieldType::Bytes)
        },
    ]
}

#[test]
fn json_rows_with_nulls_and_extra_fields() {
    let s = schema(Format::Json(JsonFormat::default()), json_fields());
    let b = decode(
        &s,
        &[
            br#"{"id": 1, "at": "2026-11-29T10:00:00Z", "name": "ada", "ignored": [1]}"#,
            br#"{"id": 2}"#,
        ],
    )
    .unwrap();
    assert_eq!(b.num_columns(), 3, "metadata columns are not decoded");
    assert_eq!(b.column(0).as_primitive::<Int64Type>().values(), &[1, 2]);
    let at = b.column(1).as_primitive::<TimestampNanosecondType>();
    assert_eq!(at.value(0), 1_795_946_400_000_000_000);
    assert!(at.is_null(1));
    assert_eq!(b.column(2).as_string::<i32>().value(0), "ada");
}

#[test]
fn unix_millis_and_confluent_header() {
    let format = JsonFormat {
        timestamp_format: TimestampFormat::UnixMillis,
        confluent_schema_registry: true,
        ..Default::default()
    };
    let s = schema(Format::Json(format), json_fields());
    let mut msg = vec![0, 0, 0, 0, 7];
    msg.extend_from_slice(br#"{"id": 5, "at": 1795946400000}"#);
    let b = decode(&s, &[&msg]).unwrap();
    let at = b.column(1).as_primitive::<TimestampNanosecondType>();
    assert_eq!(at.value(0), 1_795_946_400_000_000_000);
    let err = decode(&s, &[br#"{"id": 5}"#]).unwrap_err();
    assert!(
        err.to_string().contains("Confluent wire-format header"),
        "{err}"
    );
}

#[test]
fn bad_records_fail_or_are_dropped_with_the_first_reason() {
    let mut s = schema(Format::Json(JsonFormat::default()), json_fields());
    let messages: [&[u8]; 4] = [
        br#"{"id": 1}"#,
        br#"{"id": "not a number"}"#,
        br#"{"id": 3"#,
        br#"{"id": 4}"#,
    ];
    let err = decode(&s, &messages).unwrap_err();
    match &err {
        DecodeError::BadRecord { index, .. } => assert_eq!(*index, 2),
        other => panic!("{other:?}"),
    }
    s.bad_data = Some(BadData::Drop);
    let mut d = BatchDecoder::new(&s).unwrap();
    for m in messages {
        d.push(m).unwrap();
    }
    let b = d.finish().unwrap().unwrap();
    assert_eq!(b.column(0).as_primitive::<Int64Type>().values(), &[1, 4]);
    assert_eq!(d.dropped().count, 2);
    let first = d.dropped().first.as_ref().unwrap().to_string();
    assert!(
        first.starts_with("record 2 could not be decoded"),
        "{first}"
    );
}

#[test]
fn json_columns_keep_the_raw_text() {
    let fields = fields_from_json_schema(
        r#"{"type": "object", "properties": {"id": {"type": "integer"}, "attrs": {"type": "object"}}}"#,
    )
    .unwrap()
    .fields;
    let s = schema(Format::Json(JsonFormat::default()), fields);
    let b = decode(
        &s,
        &[
            br#"{"id": 1, "attrs": {"a": [1, 2]}}"#,
            br#"{"id": 2, "attrs": null}"#,
        ],
    )
    .unwrap();
    let attrs = b.column_by_name("attrs").unwrap().as_string::<i32>();
    assert_eq!(attrs.value(0), r#"{"a": [1, 2]}"#);
    assert!(attrs.is_null(1));
}

#[test]
fn nested_structs_and_lists() {
    let fields = fields_from_json_schema(
        r#"{"type": "object", "properties": {"u": {"type": "object", "properties": {"n": {"type": "string"}}}, "tags": {"type": "array", "items": {"type": "string"}}}}"#,
    )
    .unwrap()
    .fields;
    let s = schema(Format::Json(JsonFormat::default()), fields);
    let b = decode(&s, &[br#"{"u": {"n": "x"}, "tags": ["a", "b"]}"#]).unwrap();
    let u = b.column(0).as_struct();
    assert_eq!(u.column(0).as_string::<i32>().value(0), "x");
    assert_eq!(b.column(1).as_list::<i32>().value(0).len(), 2);
}

#[test]
fn raw_formats_and_newline_framing() {
    let mut s = schema(
        Format::RawString {},
        vec![SourceField::new("value", FieldType::String)],
    );
    s.framing = Some(Framing::Newline {
        max_line_length: Some(5),
    });
    s.bad_data = Some(BadData::Drop);
    let mut d = BatchDecoder::new(&s).unwrap();
    d.push(b"one\ntwo\r\ntoo long\n\nsix").unwrap();
    d.push(&[0xff, 0xfe]).unwrap();
    let b = d.finish().unwrap().unwrap();
    let v = b.column(0).as_string::<i32>();
    assert_eq!(
        (0..v.len()).map(|i| v.value(i)).collect::<Vec<_>>(),
        ["one", "two", "six"]
    );
    assert_eq!(d.dropped().count, 2, "the long line and the invalid UTF-8");
    let s = schema(
        Format::RawBytes {},
        vec![SourceField::new("value", FieldType::Bytes)],
    );
    let b = decode(&s, &[&[0, 1, 2]]).unwrap();
    assert_eq!(b.column(0).as_binary::<i32>().value(0), &[0, 1, 2]);
}

#[test]
fn unstructured_json_keeps_whole_messages() {
    let format = JsonFormat {
        unstructured: true,
        ..Default::default()
    };
    let s = schema(
        Format::Json(format),
        vec![SourceField::new("value", FieldType::Json)],
    );
    let b = decode(&s, &[br#"{"a": 1}"#, b"[1,2]"]).unwrap();
    assert_eq!(b.column(0).as_string::<i32>().value(1), "[1,2]");
    assert!(decode(&s, &[b"{nope"]).is_err());
}

#[test]
fn tables_without_a_format_are_refused_up_front() {
    let s = ConnectionSchema::default();
    assert!(
        BatchDecoder::new(&s)
            .unwrap_err()
            .to_string()
            .contains("no format")
    );
}

#[test]
fn batches_larger_than_the_decoder_window_and_reuse() {
    let s = schema(Format::Json(JsonFormat::default()), json_fields());
    let mut d = BatchDecoder::new(&s).unwrap();
    for round in 0..2 {
        let n = 20_000 + round;
        for i in 0..n {
            d.push(format!(r#"{{"id": {i}}}"#).as_bytes()).unwrap();
        }
        let b = d.finish().unwrap().unwrap();
        assert_eq!(b.num_rows(), n);
        let ids = b.column(0).as_primitive::<Int64Type>();
        assert_eq!(ids.value(n - 1), (n - 1) as i64);
    }
    // After a failing batch the decoder still decodes the next one.
    d.push(br#"{"id": "x"}"#).unwrap();
    assert!(d.finish().is_err());
    d.push(br#"{"id": 9}"#).unwrap();
    assert_eq!(d.finish().unwrap().unwrap().num_rows(), 1);
}

#[test]
fn gzip_json_files_with_newline_framing() {
    use std::io::Write;
    let format = JsonFormat {
        compression: tributary_types::JsonCompression::Gzip,
        ..Default::default()
    };
    let mut s = schema(Format::Json(format), json_fields());
    s.framing = Some(Framing::Newline {
        max_line_length: None,
    });
    s.bad_data = Some(BadData::Drop);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"{\"id\": 1}\n{\"id\": 2}\n").unwrap();
    let file = gz.finish().unwrap();
    let mut d = BatchDecoder::new(&s).unwrap();
    d.push(&file).unwrap();
    d.push(b"not gzip at all").unwrap();
    let b = d.finish().unwrap().unwrap();
    assert_eq!(b.column(0).as_primitive::<Int64Type>().values(), &[1, 2]);
    assert_eq!(d.dropped().count, 1);
    let first = d.dropped().first.as_ref().unwrap().to_string();
    assert!(first.contains("not valid gzip data"), "{first}");
}

#[test]
fn json_decodes_only_the_columns_asked_for_and_leaves_the_rest_null() {
    let fields = vec![
        SourceField::required("id", FieldType::Int64),
        SourceField::required("name", FieldType::String),
        SourceField::new("raw", FieldType::Json),
    ];
    let s = schema(Format::Json(JsonFormat::default()), fields);
    // `name` is not text and `raw` is skipped: neither is an error when not decoded.
    let message: &[u8] = br#"{"id": 7, "name": {"x": 1}, "raw": [1, 2]}"#;
    assert!(decode(&s, &[message]).is_err(), "every column is decoded");
    let mut d = BatchDecoder::new(&s).unwrap().decoding_only(|n| n == "id");
    d.push(message).unwrap();
    let b = d.finish().unwrap().unwrap();
    assert_eq!(b.column(0).as_primitive::<Int64Type>().values(), &[7]);
    assert_eq!(b.column(1).null_count(), 1);
    assert_eq!(b.column(2).null_count(), 1);
    let schema = d.schema();
    assert!(
        !schema.field(0).is_nullable(),
        "a decoded column keeps its NOT NULL"
    );
    assert!(
        schema.field(1).is_nullable(),
        "a skipped one comes out NULL"
    );
    // Nothing decoded still counts the records, and a broken one is still an error.
    let mut none = BatchDecoder::new(&s).unwrap().decoding_only(|_| false);
    for m in [message, br#"{"id": 8}"#] {
        none.push(m).unwrap();
    }
    assert_eq!(none.finish().unwrap().unwrap().num_rows(), 2);
    none.push(b"{\"id\": ").unwrap();
    assert!(none.finish().is_err(), "a record that is not JSON");
}
