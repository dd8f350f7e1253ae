//! Avro: schema expansion (fixtures against snapshots, and the errors), decoding checked
//! against apache-avro's own writer, writer-schema resolution, round trips through our
//! encoder, and bad records.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::row;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value;
use apache_avro::writer::datum::GenericDatumWriter;
use apache_avro::{Codec, Decimal, Schema, Writer};
use arrow_array::RecordBatch;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use tributary_formats::{
    AvroSchemaError, AvroSchemaLookup, BatchDecoder, DecodeError, RowEncoder,
    avro_schema_for_fields, fields_from_avro_schema, parse_avro_schema,
};
use tributary_types::{AvroFormat, BadData, ConnectionSchema, FieldType, Format, SourceField};

/// A datum as apache-avro writes it.
fn datum(schema: &Schema, value: Value) -> Vec<u8> {
    GenericDatumWriter::builder(schema)
        .build()
        .unwrap()
        .write_value_to_vec(value)
        .unwrap()
}

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/avro")
}

fn orders_text() -> String {
    std::fs::read_to_string(fixtures().join("orders.avsc")).unwrap()
}

#[test]
fn fixtures_match_their_snapshots() {
    let bless = std::env::var_os("TRIBUTARY_BLESS").is_some();
    let mut seen = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("avsc") {
            continue;
        }
        seen += 1;
        let schema = parse_avro_schema(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let expanded = fields_from_avro_schema(&schema).unwrap();
        let rendered = serde_json::to_string_pretty(&serde_json::json!({
            "sql": expanded.fields.iter().map(|f| format!("{} {}{}", f.name, f.field_type, if f.required { " NOT NULL" } else { "" })).collect::<Vec<_>>(),
            "fields": expanded.fields,
            "notes": expanded.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        }))
        .unwrap()
            + "\n";
        let snapshot = path.with_extension("fields.json");
        if bless {
            std::fs::write(&snapshot, &rendered).unwrap();
        }
        let expected = std::fs::read_to_string(&snapshot).unwrap_or_default();
        assert_eq!(
            rendered,
            expected,
            "{}: expansion differs from its snapshot (TRIBUTARY_BLESS=1 to accept)",
            path.display()
        );
    }
    assert!(seen > 0);
}

#[test]
fn expansion_maps_every_type_as_documented() {
    let schema = parse_avro_schema(&orders_text()).unwrap();
    let e = fields_from_avro_schema(&schema).unwrap();
    let ty = |name: &str| {
        let f = e.fields.iter().find(|f| f.name == name).unwrap();
        (f.field_type.to_string(), f.required)
    };
    assert_eq!(ty("id"), ("BIGINT".into(), true));
    assert_eq!(ty("note"), ("TEXT".into(), false));
    assert_eq!(ty("digest"), ("BYTEA".into(), true));
    assert_eq!(ty("status"), ("TEXT".into(), true));
    assert_eq!(ty("amount"), ("DECIMAL(12, 2)".into(), true));
    assert_eq!(ty("order_date"), ("DATE".into(), true));
    assert_eq!(ty("cutoff_us"), ("TIME(6)".into(), true));
    assert_eq!(ty("created_ns"), ("TIMESTAMP(9)".into(), true));
    assert_eq!(ty("local_ms"), ("TIMESTAMP(3)".into(), true));
    assert_eq!(
        ty("customer").0,
        "STRUCT<name TEXT NOT NULL, address STRUCT<city TEXT NOT NULL, zip TEXT>>"
    );
    // The named type Address is reused by reference.
    assert_eq!(
        ty("billing"),
        ("STRUCT<city TEXT NOT NULL, zip TEXT>".into(), false)
    );
    assert_eq!(ty("scores").0, "DOUBLE[]");
    assert_eq!(ty("attributes").0, "MAP(TEXT, TEXT)");
    assert_eq!(ty("counters"), ("MAP(TEXT, BIGINT)".into(), false));
    assert_eq!(ty("extra"), ("JSON".into(), false));
    assert_eq!(e.notes.len(), 1);
    assert!(
        e.notes[0]
            .to_string()
            .contains("column 'extra' is an Avro union of null, int, string, array")
    );
    assert_eq!(e.notes[0].column(), "extra");
}

#[test]
fn bad_schemas_say_what_and_where() {
    let err = |text: &str| fields_from_avro(text).unwrap_err().to_string();
    assert_eq!(
        err("{\"type\": \"record\",\n \"name\": }"),
        "the Avro schema is not valid JSON: expected value (line 2, column 10 of the schema)"
    );
    assert!(
        err(r#"{"type": "record", "name": "R", "fields": [{"name": "a", "type": "strin"}]}"#)
            .starts_with("the Avro schema is invalid: ")
    );
    assert_eq!(
        err(r#""string""#),
        "the Avro schema's top level must be a record, but it is string"
    );
    assert_eq!(
        err(
            r#"{"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}"#
        ),
        "Avro type 'Node' at next contains itself; recursive types cannot be columns"
    );
    assert_eq!(
        err(r#"{"type": "record", "name": "R", "fields": [{"name": "nothing", "type": "null"}]}"#),
        "nothing has type null, which holds no data"
    );
}

fn fields_from_avro(text: &str) -> Result<Vec<SourceField>, AvroSchemaError> {
    fields_from_avro_schema(&parse_avro_schema(text)?).map(|e| e.fields)
}

/// A full order as apache-avro values.
fn order(id: i64, note: Option<&str>) -> Value {
    let address = |city: &str, zip: Option<&str>| {
        Value::Record(vec![
            ("city".into(), Value::String(city.into())),
            (
                "zip".into(),
                match zip {
                    Some(z) => Value::Union(1, Box::new(Value::String(z.into()))),
                    None => Value::Union(0, Box::new(Value::Null)),
                },
            ),
        ])
    };
    Value::Record(vec![
        ("id".into(), Value::Long(id)),
        ("quantity".into(), Value::Int(-3)),
        ("paid".into(), Value::Boolean(true)),
        ("ratio".into(), Value::Float(0.5)),
        ("price".into(), Value::Double(1234.5)),
        (
            "note".into(),
            match note {
                Some(n) => Value::Union(1, Box::new(Value::String(n.into()))),
                None => Value::Union(0, Box::new(Value::Null)),
            },
        ),
        ("payload".into(), Value::Bytes(vec![0, 1, 255])),
        ("digest".into(), Value::Fixed(16, vec![7; 16])),
        ("status".into(), Value::Enum(1, "PAID".into())),
        // -12345 cents: two's complement big-endian.
        (
            "amount".into(),
            Value::Decimal(Decimal::from(vec![0xcf, 0xc7])),
        ),
        (
            "tax".into(),
            Value::Decimal(Decimal::from(vec![0, 0, 0, 0, 0, 0, 0x30, 0x39])),
        ),
        ("order_date".into(), Value::Date(20_000)),
        ("cutoff_ms".into(), Value::TimeMillis(3_600_000)),
        ("cutoff_us".into(), Value::TimeMicros(3_600_000_001)),
        (
            "created_ms".into(),
            Value::TimestampMillis(1_764_460_800_123),
        ),
        (
            "created_us".into(),
            Value::TimestampMicros(1_764_460_800_123_456),
        ),
        (
            "created_ns".into(),
            Value::TimestampNanos(1_764_460_800_123_456_789),
        ),
        ("local_ms".into(), Value::LocalTimestampMillis(86_400_000)),
        (
            "trace".into(),
            Value::Uuid(
                apache_avro::Uuid::parse_str("67e55044-10b1-426f-9247-bb680e5fe0c8").unwrap(),
            ),
        ),
        (
            "customer".into(),
            Value::Record(vec![
                ("name".into(), Value::String("Ada \"A\" Lovelace".into())),
                (
                    "address".into(),
                    Value::Union(1, Box::new(address("London", None))),
                ),
            ]),
        ),
        (
            "billing".into(),
            Value::Union(1, Box::new(address("Paris", Some("75001")))),
        ),
        (
            "tags".into(),
            Value::Array(vec![Value::String("a".into()), Value::String("b".into())]),
        ),
        (
            "scores".into(),
            Value::Array(vec![
                Value::Union(1, Box::new(Value::Double(1.5))),
                Value::Union(0, Box::new(Value::Null)),
            ]),
        ),
        (
            "attributes".into(),
            Value::Map(HashMap::from([(
                "color".to_string(),
                Value::String("red".into()),
            )])),
        ),
        ("counters".into(), Value::Union(0, Box::new(Value::Null))),
        (
            "extra".into(),
            Value::Union(
                3,
                Box::new(Value::Array(vec![Value::Long(1), Value::Long(2)])),
            ),
        ),
    ])
}

fn table(format: AvroFormat, fields: Vec<SourceField>) -> ConnectionSchema {
    ConnectionSchema {
        format: Some(Format::Avro(format)),
        fields,
        ..Default::default()
    }
}

fn orders_table(format: AvroFormat) -> ConnectionSchema {
    let text = orders_text();
    let fields = fields_from_avro(&text).unwrap();
    table(
        AvroFormat {
            reader_schema: Some(text),
            ..format
        },
        fields,
    )
}

fn raw() -> AvroFormat {
    AvroFormat {
        raw_datums: true,
        ..Default::default()
    }
}

fn decode(table: &ConnectionSchema, messages: &[Vec<u8>]) -> RecordBatch {
    let mut d = BatchDecoder::new(table).unwrap();
    for m in messages {
        d.push(m).unwrap();
    }
    d.finish().unwrap().unwrap()
}

#[test]
fn datums_written_by_apache_avro_decode_into_every_column_type() {
    let schema = Schema::parse_str(&orders_text()).unwrap();
    let messages = vec![
        datum(&schema, order(1, Some("first"))),
        datum(&schema, order(2, None)),
    ];
    let batch = decode(&orders_table(raw()), &messages);
    assert_eq!(batch.num_rows(), 2);
    assert_eq!(
        row(&batch, 0),
        [
            "id=1",
            "quantity=-3",
            "paid=true",
            "ratio=0.5",
            "price=1234.5",
            "note=first",
            "payload=0001ff",
            "digest=07070707070707070707070707070707",
            "status=PAID",
            "amount=-123.45",
            "tax=12.345",
            "order_date=2024-10-04",
            "cutoff_ms=01:00:00",
            "cutoff_us=01:00:00.000001",
            "created_ms=2025-11-30T00:00:00.123",
            "created_us=2025-11-30T00:00:00.123456",
            "created_ns=2025-11-30T00:00:00.123456789",
            "local_ms=1970-01-02T00:00:00",
            "trace=67e55044-10b1-426f-9247-bb680e5fe0c8",
            "customer={name: Ada \"A\" Lovelace, address: {city: London, zip: NULL}}",
            "billing={city: Paris, zip: 75001}",
            "tags=[a, b]",
            "scores=[1.5, NULL]",
            "attributes={color: red}",
            "counters=NULL",
            "extra=[1,2]",
        ]
    );
    assert_eq!(row(&batch, 1)[5], "note=NULL");
}

#[test]
fn object_container_files_decode_with_null_and_deflate_codecs() {
    let schema = Schema::parse_str(&orders_text()).unwrap();
    for codec in [Codec::Null, Codec::Deflate(Default::default())] {
        let mut w = Writer::with_codec(&schema, Vec::new(), codec).unwrap();
        for id in 0..3 {
            w.append_value(order(id, None)).unwrap();
        }
        let file = w.into_inner().unwrap();
        // The deflate file is the checked-in sample `fixtures/samples/orders.avro`.
        let sample = fixtures().join("../samples/orders.avro");
        if std::env::var_os("TRIBUTARY_BLESS").is_some()
            && matches!(codec, Codec::Deflate(_))
            && !sample.exists()
        {
            std::fs::write(&sample, &file).unwrap();
        }
        let batch = decode(&orders_table(AvroFormat::default()), &[file]);
        assert_eq!(batch.num_rows(), 3, "{codec:?}");
        assert_eq!(row(&batch, 2)[0], "id=2");
    }
}

#[test]
fn round_trips_through_our_encoder_in_every_framing() {
    let schema = Schema::parse_str(&orders_text()).unwrap();
    let messages = vec![
        datum(&schema, order(1, Some("x"))),
        datum(&schema, order(2, None)),
    ];
    let first = decode(&orders_table(raw()), &messages);
    for format in [
        raw(),
        AvroFormat::default(),
        AvroFormat {
            confluent_schema_registry: true,
            schema_id: Some(7),
            ..Default::default()
        },
    ] {
        let t = orders_table(format);
        let encoded = RowEncoder::new(t.format.as_ref().unwrap(), None)
            .unwrap()
            .encode(&first)
            .unwrap();
        assert_eq!(decode(&t, &encoded), first);
    }
}

#[test]
fn our_datums_read_back_with_apache_avro() {
    let schema = Schema::parse_str(&orders_text()).unwrap();
    let original = order(5, Some("check"));
    let batch = decode(&orders_table(raw()), &[datum(&schema, original.clone())]);
    let t = orders_table(raw());
    let ours = RowEncoder::new(t.format.as_ref().unwrap(), None)
        .unwrap()
        .encode(&batch)
        .unwrap();
    let read = |bytes: &[u8]| {
        GenericDatumReader::builder(&schema)
            .build()
            .unwrap()
            .read_value(&mut &bytes[..])
            .unwrap()
    };
    assert_eq!(read(&ours[0]), read(&datum(&schema, original)));
}

#[test]
fn generated_sink_schemas_are_valid_avro_and_round_trip() {
    let fields = vec![
        SourceField::required("order id", FieldType::Int64),
        SourceField::new(
            "at",
            FieldType::Timestamp {
                unit: tributary_types::TimeUnit::Nanosecond,
            },
        ),
        SourceField::new("tags", FieldType::list(FieldType::String)),
        SourceField::new("attrs", FieldType::map(FieldType::String, FieldType::Int32)),
        SourceField::new(
            "who",
            FieldType::Struct {
                fields: vec![SourceField::new("name", FieldType::String)],
            },
        ),
        SourceField::new(
            "amount",
            FieldType::Decimal128 {
                precision: 9,
                scale: 2,
            },
        ),
    ];
    let text = avro_schema_for_fields("my-sink", &fields).unwrap();
    let schema = Schema::parse_str(&text).unwrap();
    assert!(text.contains(r#""name":"order_id""#), "{text}");
    assert!(matches!(schema, Schema::Record(_)));
    // Rows decoded with the generated schema come back unchanged after encoding.
    let t = table(
        AvroFormat {
            raw_datums: true,
            reader_schema: Some(text.clone()),
            ..Default::default()
        },
        fields_from_avro(&text).unwrap(),
    );
    let value = Value::Record(vec![
        ("order_id".into(), Value::Long(9)),
        (
            "at".into(),
            Value::Union(1, Box::new(Value::TimestampNanos(5))),
        ),
        (
            "tags".into(),
            Value::Union(
                1,
                Box::new(Value::Array(vec![Value::Union(
                    1,
                    Box::new(Value::String("t".into())),
                )])),
            ),
        ),
        ("attrs".into(), Value::Union(0, Box::new(Value::Null))),
        (
            "who".into(),
            Value::Union(
                1,
                Box::new(Value::Record(vec![(
                    "name".into(),
                    Value::Union(0, Box::new(Value::Null)),
                )])),
            ),
        ),
        (
            "amount".into(),
            Value::Union(1, Box::new(Value::Decimal(Decimal::from(vec![0x01, 0x00])))),
        ),
    ]);
    let first = decode(&t, &[datum(&schema, value)]);
    let again = RowEncoder::new(t.format.as_ref().unwrap(), None)
        .unwrap()
        .encode(&first)
        .unwrap();
    assert_eq!(decode(&t, &again), first);
    assert_eq!(row(&first, 0)[5], "amount=2.56");
    // A map with non-text keys cannot be written as Avro.
    let bad = avro_schema_for_fields(
        "t",
        &[SourceField::new(
            "m",
            FieldType::map(FieldType::Int32, FieldType::Int32),
        )],
    );
    assert_eq!(
        bad.unwrap_err(),
        "column 'm': Avro maps have string keys, but the keys are INT"
    );
}

/// Writer schemas by registry id.
#[derive(Debug)]
struct Registry(HashMap<u32, String>);

impl AvroSchemaLookup for Registry {
    fn avro_schema(&self, id: u32) -> Result<String, String> {
        self.0
            .get(&id)
            .cloned()
            .ok_or_else(|| format!("schema {id} is not registered"))
    }
}

fn framed(id: u32, datum: Vec<u8>) -> Vec<u8> {
    [vec![0], id.to_be_bytes().to_vec(), datum].concat()
}

#[test]
fn registry_messages_resolve_each_writer_schema_into_the_table_columns() {
    let v1 = r#"{"type": "record", "name": "E", "fields": [
        {"name": "id", "type": "int"}, {"name": "score", "type": "float"}, {"name": "gone", "type": "string"}]}"#;
    let v2 = r#"{"type": "record", "name": "E", "fields": [
        {"name": "id", "type": "long"}, {"name": "score", "type": "double"},
        {"name": "label", "type": ["null", "string"], "default": null}]}"#;
    let reader = v2;
    let t = table(
        AvroFormat {
            confluent_schema_registry: true,
            reader_schema: Some(reader.into()),
            schema_id: Some(2),
            ..Default::default()
        },
        fields_from_avro(reader).unwrap(),
    );
    let s1 = Schema::parse_str(v1).unwrap();
    let s2 = Schema::parse_str(v2).unwrap();
    let m1 = framed(
        1,
        datum(
            &s1,
            Value::Record(vec![
                ("id".into(), Value::Int(7)),
                ("score".into(), Value::Float(0.25)),
                ("gone".into(), Value::String("dropped".into())),
            ]),
        ),
    );
    let m2 = framed(
        2,
        datum(
            &s2,
            Value::Record(vec![
                ("id".into(), Value::Long(1 << 40)),
                ("score".into(), Value::Double(2.5)),
                (
                    "label".into(),
                    Value::Union(1, Box::new(Value::String("new".into()))),
                ),
            ]),
        ),
    );
    // Without the registry, only the table's own schema id can be read.
    let mut d = BatchDecoder::new(&t).unwrap();
    let e = d.push(&m1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "record 1 could not be decoded: it was written with schema id 1, but the table's schema is id 2; reading other writer schemas needs the schema registry"
    );
    // An async caller asks which schema is missing and installs it.
    let mut d = BatchDecoder::new(&t).unwrap();
    assert_eq!(d.unknown_avro_writer(&m1), Some(1));
    assert_eq!(
        d.unknown_avro_writer(&m2),
        None,
        "the table's own schema is known"
    );
    d.add_avro_writer_schema(1, v1).unwrap();
    assert_eq!(d.unknown_avro_writer(&m1), None);
    d.push(&m1).unwrap();
    assert_eq!(d.finish().unwrap().unwrap().num_rows(), 1);
    let lookup = Registry(HashMap::from([(1, v1.to_string()), (2, v2.to_string())]));
    let mut d = BatchDecoder::new(&t)
        .unwrap()
        .with_avro_schema_lookup(Arc::new(lookup));
    d.push(&m1).unwrap();
    d.push(&m2).unwrap();
    let batch = d.finish().unwrap().unwrap();
    assert_eq!(row(&batch, 0), ["id=7", "score=0.25", "label=NULL"]);
    assert_eq!(
        row(&batch, 1),
        ["id=1099511627776", "score=2.5", "label=new"]
    );
    // An unknown id is a bad record naming it.
    let e = d.push(&framed(9, vec![])).unwrap_err();
    assert!(
        e.to_string()
            .contains("writer schema 9: schema 9 is not registered"),
        "{e}"
    );
}

#[test]
fn incompatible_writer_schemas_are_refused_before_any_record() {
    let reader = r#"{"type": "record", "name": "E", "fields": [{"name": "id", "type": "int"}]}"#;
    let writer = r#"{"type": "record", "name": "E", "fields": [{"name": "id", "type": "string"}]}"#;
    let t = table(
        AvroFormat {
            confluent_schema_registry: true,
            reader_schema: Some(reader.into()),
            ..Default::default()
        },
        fields_from_avro(reader).unwrap(),
    );
    let lookup = Registry(HashMap::from([(3, writer.to_string())]));
    let mut d = BatchDecoder::new(&t)
        .unwrap()
        .with_avro_schema_lookup(Arc::new(lookup));
    let e = d.push(&framed(3, vec![2, b'x'])).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "writer schema 3: field 'id': the writer's string cannot be read into Int32"
        ),
        "{e}"
    );
}

#[test]
fn bad_records_are_dropped_whole_with_the_field_that_failed() {
    let schema = Schema::parse_str(&orders_text()).unwrap();
    let good = datum(&schema, order(1, None));
    let truncated = good[..good.len() - 3].to_vec();
    let mut longer = good.clone();
    longer.push(0);
    let mut t = orders_table(raw());
    t.bad_data = Some(BadData::Drop);
    let mut d = BatchDecoder::new(&t).unwrap();
    for m in [&good, &truncated, &longer, &good] {
        d.push(m).unwrap();
    }
    let batch = d.finish().unwrap().unwrap();
    assert_eq!(batch.num_rows(), 2);
    assert_eq!(d.dropped().count, 2);
    let Some(DecodeError::BadRecord { index, reason }) = &d.dropped().first else {
        panic!("no first error")
    };
    assert_eq!(*index, 2);
    assert!(reason.starts_with("field 'extra': "), "{reason}");
    // Failing records stop decoding under bad_data = 'fail', naming the record.
    let mut d = BatchDecoder::new(&orders_table(raw())).unwrap();
    let e = d.push(&longer).unwrap_err();
    assert_eq!(
        e.to_string(),
        "record 1 could not be decoded: 1 bytes are left over after the record; it was probably written with a different schema"
    );
}

#[test]
fn declared_subsets_skip_the_other_fields_and_unstructured_takes_it_all() {
    let schema = Schema::parse_str(&orders_text()).unwrap();
    let message = datum(&schema, order(4, Some("n")));
    let subset = vec![
        SourceField::new("status", FieldType::String),
        SourceField::required("id", FieldType::Int64),
        SourceField::new("absent", FieldType::Int32),
    ];
    let t = table(
        AvroFormat {
            reader_schema: Some(orders_text()),
            ..raw()
        },
        subset,
    );
    let batch = decode(&t, std::slice::from_ref(&message));
    assert_eq!(row(&batch, 0), ["status=PAID", "id=4", "absent=NULL"]);
    let t = table(
        AvroFormat {
            reader_schema: Some(orders_text()),
            into_unstructured_json: true,
            ..raw()
        },
        vec![SourceField::new("value", FieldType::Json)],
    );
    let batch = decode(&t, &[message]);
    let json: serde_json::Value =
        serde_json::from_str(&row(&batch, 0)[0]["value=".len()..]).unwrap();
    assert_eq!(json["id"], 4);
    assert_eq!(json["customer"]["address"]["city"], "London");
    assert_eq!(json["extra"], serde_json::json!([1, 2]));
}
