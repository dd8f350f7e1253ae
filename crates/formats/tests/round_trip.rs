//! Encode then decode gives back the same rows, per format.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
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
    let e = RowEncoder::new(
        &Format::Json(JsonFormat {
            unstructured: true,
            ..Default::default()
        }),
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("use raw_string for that"), "{e}");
    let e = RowEncoder::new(&Format::Avro(Default::default()), None).unwrap_err();
    assert!(
        e.to_string().contains("no Avro schema to write with"),
        "{e}"
    );
}

#[test]
fn nested_json_columns_and_timestamps_and_decimal_encodings_round_trip() {
    use tributary_types::{DecimalEncoding, TimeUnit};
    let fields = vec![
        SourceField::required("id", FieldType::Int64),
        SourceField::new(
            "s",
            FieldType::Struct {
                fields: vec![
                    SourceField::new("doc", FieldType::Json),
                    SourceField::new(
                        "at",
                        FieldType::Timestamp {
                            unit: TimeUnit::Microsecond,
                        },
                    ),
                    SourceField::new(
                        "cost",
                        FieldType::Decimal128 {
                            precision: 12,
                            scale: 3,
                        },
                    ),
                ],
            },
        ),
        SourceField::new("docs", FieldType::list(FieldType::Json)),
        SourceField::new(
            "amount",
            FieldType::Decimal128 {
                precision: 10,
                scale: 2,
            },
        ),
    ];
    let messages: [&[u8]; 2] = [
        br#"{"id": 1, "s": {"doc": {"a": [1, {"b": null}]}, "at": 1764460800123, "cost": "AeJA"}, "docs": [{"x": 1}, "two", 3], "amount": "MDk="}"#,
        br#"{"id": 2, "s": {"doc": null, "at": null, "cost": null}, "docs": [], "amount": "/g=="}"#,
    ];
    let decimal_encoding = DecimalEncoding::Bytes;
    let table = ConnectionSchema {
        format: Some(Format::Json(JsonFormat {
            timestamp_format: TimestampFormat::UnixMillis,
            decimal_encoding,
            ..Default::default()
        })),
        fields: fields.clone(),
        ..Default::default()
    };
    let (a, b) = round_trip(&table, &messages, None);
    assert_eq!(a, b);
    let s = a.column(1).as_struct();
    assert_eq!(
        s.column(0).as_string::<i32>().value(0),
        r#"{"a":[1,{"b":null}]}"#
    );
    assert_eq!(
        s.column(1)
            .as_primitive::<arrow_array::types::TimestampMicrosecondType>()
            .value(0),
        1_764_460_800_123_000
    );
    // "AeJA" is 0x01e240 = 123456 unscaled: 123.456.
    assert_eq!(
        s.column(2)
            .as_primitive::<arrow_array::types::Decimal128Type>()
            .value(0),
        123_456
    );
    // "MDk=" is 0x3039 = 12345: 123.45; "/g==" is 0xfe = -2: -0.02.
    let amounts = a
        .column(3)
        .as_primitive::<arrow_array::types::Decimal128Type>();
    assert_eq!((amounts.value(0), amounts.value(1)), (12_345, -2));
    // Written back the same way.
    let out = RowEncoder::new(table.format.as_ref().unwrap(), None)
        .unwrap()
        .encode(&a)
        .unwrap();
    let text = String::from_utf8(out[0].clone()).unwrap();
    assert!(text.contains(r#""amount":"MDk=""#), "{text}");
    assert!(text.contains(r#""at":1764460800123"#), "{text}");
    assert!(text.contains(r#""doc":{"a":[1,{"b":null}]}"#), "{text}");
    // Decimals as strings.
    let table = ConnectionSchema {
        format: Some(Format::Json(JsonFormat {
            decimal_encoding: DecimalEncoding::String,
            ..Default::default()
        })),
        fields: vec![SourceField::new(
            "amount",
            FieldType::Decimal128 {
                precision: 10,
                scale: 2,
            },
        )],
        ..Default::default()
    };
    let (a, b) = round_trip(
        &table,
        &[br#"{"amount": "-123.45"}"#, br#"{"amount": 7}"#],
        None,
    );
    assert_eq!(a, b);
    let out = RowEncoder::new(table.format.as_ref().unwrap(), None)
        .unwrap()
        .encode(&a)
        .unwrap();
    assert_eq!(out[0], br#"{"amount":"-123.45"}"#);
    assert_eq!(out[1], br#"{"amount":"7.00"}"#);
}

#[test]
fn bad_base64_decimals_are_bad_records_naming_the_field() {
    let table = ConnectionSchema {
        format: Some(Format::Json(JsonFormat {
            decimal_encoding: tributary_types::DecimalEncoding::Bytes,
            ..Default::default()
        })),
        fields: vec![SourceField::new(
            "amount",
            FieldType::Decimal128 {
                precision: 10,
                scale: 2,
            },
        )],
        ..Default::default()
    };
    let mut d = BatchDecoder::new(&table).unwrap();
    let e = d.push(br#"{"amount": "not base64!"}"#).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "record 1 could not be decoded: field 'amount': 'not base64!' is not base64"
        ),
        "{e}"
    );
}

#[test]
fn debezium_events_become_a_changelog_and_back() {
    use tributary_types::BadData;
    let table = ConnectionSchema {
        format: Some(Format::Json(JsonFormat {
            debezium: true,
            timestamp_format: TimestampFormat::UnixMillis,
            decimal_encoding: tributary_types::DecimalEncoding::Bytes,
            ..Default::default()
        })),
        fields: vec![
            SourceField::required("id", FieldType::Int64),
            SourceField::new("name", FieldType::String),
            SourceField::new(
                "amount",
                FieldType::Decimal128 {
                    precision: 10,
                    scale: 2,
                },
            ),
        ],
        bad_data: Some(BadData::Drop),
        ..Default::default()
    };
    let messages: [&[u8]; 6] = [
        br#"{"before": null, "after": {"id": 1, "name": "a", "amount": "MDk="}, "op": "c", "ts_ms": 1}"#,
        br#"{"schema": {}, "payload": {"before": {"id": 1, "name": "a", "amount": "MDk="}, "after": {"id": 1, "name": "b", "amount": null}, "op": "u"}}"#,
        b"",
        br#"{"before": {"id": "not a number"}, "after": {"id": 2}, "op": "u"}"#,
        br#"{"before": {"id": 1, "name": "b"}, "after": null, "op": "d"}"#,
        br#"{"after": {"id": 3}, "op": "r"}"#,
    ];
    let mut d = BatchDecoder::new(&table).unwrap();
    assert_eq!(d.schema().field(3).name(), tributary_formats::CHANGE_COLUMN);
    for m in messages {
        d.push(m).unwrap();
    }
    let batch = d.finish().unwrap().unwrap();
    let ids = batch
        .column(0)
        .as_primitive::<arrow_array::types::Int64Type>();
    let changes = batch.column(3).as_string::<i32>();
    let rows: Vec<(i64, &str)> = (0..batch.num_rows())
        .map(|i| (ids.value(i), changes.value(i)))
        .collect();
    assert_eq!(
        rows,
        [(1, "+I"), (1, "-U"), (1, "+U"), (1, "-D"), (3, "+I")]
    );
    // The bad update is dropped whole and reported as the fourth message.
    assert_eq!(d.dropped().count, 1);
    assert!(
        matches!(
            &d.dropped().first,
            Some(tributary_formats::DecodeError::BadRecord { index: 4, .. })
        ),
        "{:?}",
        d.dropped().first
    );
    // Encoding pairs the update's images into one event again.
    let out = RowEncoder::new(table.format.as_ref().unwrap(), None)
        .unwrap()
        .encode(&batch)
        .unwrap();
    let out: Vec<String> = out
        .into_iter()
        .map(|m| String::from_utf8(m).unwrap())
        .collect();
    assert_eq!(
        out,
        [
            r#"{"before":null,"after":{"id":1,"name":"a","amount":"MDk="},"op":"c"}"#,
            r#"{"before":{"id":1,"name":"a","amount":"MDk="},"after":{"id":1,"name":"b"},"op":"u"}"#,
            r#"{"before":{"id":1,"name":"b"},"after":null,"op":"d"}"#,
            r#"{"before":null,"after":{"id":3},"op":"c"}"#,
        ]
    );
    // And decoding those events gives the same changelog.
    for m in &out {
        d.push(m.as_bytes()).unwrap();
    }
    assert_eq!(d.finish().unwrap().unwrap(), batch);
}

#[test]
fn parquet_files_round_trip_with_every_codec_and_conform_to_the_table() {
    use tributary_types::{BadData, ParquetCompression, ParquetFormat};
    let json = json_table(JsonFormat::default());
    let mut d = BatchDecoder::new(&json).unwrap();
    for m in MESSAGES {
        d.push(m).unwrap();
    }
    let rows = d.finish().unwrap().unwrap();
    for compression in [
        ParquetCompression::Uncompressed,
        ParquetCompression::Snappy,
        ParquetCompression::Gzip,
        ParquetCompression::Zstd,
        ParquetCompression::Lz4,
        ParquetCompression::Lz4Raw,
    ] {
        let table = ConnectionSchema {
            format: Some(Format::Parquet(ParquetFormat {
                compression,
                row_group_bytes: Some(1),
            })),
            fields: json.fields.clone(),
            ..Default::default()
        };
        let files = RowEncoder::new(table.format.as_ref().unwrap(), None)
            .unwrap()
            .encode(&rows)
            .unwrap();
        assert_eq!(files.len(), 1, "one file per batch");
        assert_eq!(&files[0][..4], b"PAR1");
        let mut p = BatchDecoder::new(&table).unwrap();
        p.push(&files[0]).unwrap();
        p.push(&files[0]).unwrap();
        let back = p.finish().unwrap().unwrap();
        assert_eq!(back.num_rows(), 2 * rows.num_rows(), "{compression:?}");
        assert_eq!(back.slice(0, rows.num_rows()), rows, "{compression:?}");
    }
    // A table reading a subset, a widened type and a column the file lacks.
    let file = RowEncoder::new(&Format::Parquet(ParquetFormat::default()), None)
        .unwrap()
        .encode(&rows)
        .unwrap()
        .remove(0);
    let narrow = ConnectionSchema {
        format: Some(Format::Parquet(ParquetFormat::default())),
        fields: vec![
            SourceField::new("price", FieldType::Float64),
            SourceField::required("id", FieldType::Int64),
            SourceField::new("missing", FieldType::String),
        ],
        bad_data: Some(BadData::Drop),
        ..Default::default()
    };
    let mut p = BatchDecoder::new(&narrow).unwrap();
    p.push(&file).unwrap();
    p.push(b"PAR1 but not really").unwrap();
    let b = p.finish().unwrap().unwrap();
    assert_eq!(b.num_columns(), 3);
    assert_eq!(b.num_rows(), 3);
    assert_eq!(b.column(2).null_count(), 3);
    assert_eq!(p.dropped().count, 1);
    let reason = match &p.dropped().first {
        Some(tributary_formats::DecodeError::BadRecord { reason, .. }) => reason.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        reason.starts_with("it is not a readable Parquet file"),
        "{reason}"
    );
    // A NOT NULL column the file lacks is a bad file.
    let strict = ConnectionSchema {
        fields: vec![SourceField::required("nope", FieldType::Int32)],
        bad_data: None,
        ..narrow
    };
    let e = BatchDecoder::new(&strict).unwrap().push(&file).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("the file has no column 'nope', which is NOT NULL"),
        "{e}"
    );
}
