//! Protobuf: the checked-in descriptor set against its `.proto` (compiled with protox),
//! expansion against its snapshot, decoding checked against prost-reflect, round trips
//! through our encoder in every framing, and bad records.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::row;

use arrow_array::RecordBatch;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use std::path::{Path, PathBuf};
use tributary_formats::{
    BatchDecoder, DecodeError, ProtoSchemaError, RowEncoder, fields_from_protobuf,
};
use tributary_types::{BadData, ConnectionSchema, FieldType, Format, ProtobufFormat, SourceField};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/protobuf")
}

fn descriptor() -> Vec<u8> {
    std::fs::read(dir().join("orders.binpb")).unwrap()
}

#[test]
fn descriptor_set_matches_its_proto_and_expansion_its_snapshot() {
    let bless = std::env::var_os("TRIBUTARY_BLESS").is_some();
    let compiled = protox::Compiler::new([dir()])
        .unwrap()
        .include_imports(true)
        .open_files(["orders.proto"])
        .unwrap()
        .encode_file_descriptor_set();
    if bless {
        std::fs::write(dir().join("orders.binpb"), &compiled).unwrap();
    }
    assert!(
        compiled == descriptor(),
        "orders.binpb is stale; regenerate it with TRIBUTARY_BLESS=1 cargo test -p tributary-formats --test protobuf"
    );
    let expanded = fields_from_protobuf(&compiled, "shop.v1.Order").unwrap();
    let rendered = serde_json::to_string_pretty(&serde_json::json!({
        "sql": expanded.fields.iter().map(|f| format!("{} {}{}", f.name, f.field_type, if f.required { " NOT NULL" } else { "" })).collect::<Vec<_>>(),
        "fields": expanded.fields,
    }))
    .unwrap()
        + "\n";
    let snapshot = dir().join("orders.fields.json");
    if bless {
        std::fs::write(&snapshot, &rendered).unwrap();
    }
    assert_eq!(
        rendered,
        std::fs::read_to_string(&snapshot).unwrap_or_default(),
        "expansion differs from its snapshot (TRIBUTARY_BLESS=1 to accept)"
    );
}

#[test]
fn expansion_follows_presence_and_maps_well_known_types() {
    let e = fields_from_protobuf(&descriptor(), "shop.v1.Order").unwrap();
    let ty = |name: &str| {
        let f = e.fields.iter().find(|f| f.name == name).unwrap();
        (f.field_type.to_string(), f.required)
    };
    assert_eq!(ty("id"), ("BIGINT".into(), true));
    assert_eq!(ty("counter"), ("BIGINT UNSIGNED".into(), true));
    assert_eq!(ty("f32"), ("INT UNSIGNED".into(), true));
    assert_eq!(ty("payload"), ("BYTEA".into(), true));
    assert_eq!(ty("status"), ("TEXT".into(), true));
    assert_eq!(ty("coupon"), ("TEXT".into(), false));
    assert_eq!(
        ty("shipping"),
        ("STRUCT<city TEXT NOT NULL, zip TEXT>".into(), false)
    );
    assert_eq!(
        ty("lines").0,
        "STRUCT<sku TEXT NOT NULL, quantity INT UNSIGNED NOT NULL, price DOUBLE NOT NULL>[]"
    );
    assert_eq!(ty("counts"), ("MAP(TEXT, INT)".into(), true));
    assert_eq!(
        ty("addresses").0,
        "MAP(BIGINT, STRUCT<city TEXT NOT NULL, zip TEXT>)"
    );
    assert_eq!(ty("card"), ("TEXT".into(), false));
    assert_eq!(ty("placed_at"), ("TIMESTAMP(9)".into(), false));
    assert_eq!(ty("ttl"), ("BIGINT".into(), false));
    assert_eq!(ty("maybe_id"), ("BIGINT".into(), false));
    assert_eq!(ty("attributes"), ("JSON".into(), false));
}

#[test]
fn bad_descriptors_and_names_say_what_is_there() {
    let err = |bytes: &[u8], name: &str| fields_from_protobuf(bytes, name).unwrap_err().to_string();
    assert_eq!(
        err(&descriptor(), "shop.v1.Ordr"),
        "message 'shop.v1.Ordr' is not in the descriptor set; did you mean 'shop.v1.Order'? It defines 'shop.v1.Address', 'shop.v1.Line', 'shop.v1.Node', 'shop.v1.Order'"
    );
    assert_eq!(
        err(&descriptor(), "shop.v1.Node"),
        "message 'shop.v1.Node' at children contains itself; recursive messages cannot be columns"
    );
    assert!(err(b"\x0a\x05junk!", "a.B").starts_with("the descriptor set is invalid: "));
    assert!(matches!(
        fields_from_protobuf(&[], "a.B"),
        Err(ProtoSchemaError::MessageNotFound { .. })
    ));
}

fn order_descriptor() -> MessageDescriptor {
    DescriptorPool::decode(descriptor().as_slice())
        .unwrap()
        .get_message_by_name("shop.v1.Order")
        .unwrap()
}

/// A message from its proto3 JSON form, encoded by prost-reflect.
fn encoded(json: &str) -> Vec<u8> {
    let mut de = serde_json::Deserializer::from_str(json);
    DynamicMessage::deserialize(order_descriptor(), &mut de)
        .unwrap()
        .encode_to_vec()
}

const FULL: &str = r#"{
    "id": "9007199254740993", "small": -3, "delta": -2, "bigDelta": "-5", "counter": "18446744073709551615",
    "f32": 7, "f64": "8", "sf32": -9, "sf64": "-10", "ratio": 0.5, "total": 12.25, "paid": true,
    "note": "ünïcode", "payload": "AAH/", "status": "STATUS_PAID", "coupon": "",
    "shipping": {"city": "Paris"},
    "lines": [{"sku": "a", "quantity": 2, "price": 1.5}, {"sku": "b"}],
    "tags": ["x", "y"], "scores": ["1", "-2"],
    "counts": {"k": 1}, "addresses": {"5": {"city": "Rome", "zip": "00100"}},
    "account": "77",
    "placedAt": "2026-11-30T01:02:03.000000004Z", "ttl": "1.5s",
    "maybeId": "0", "maybeName": "named",
    "attributes": {"a": [1, "b", null], "c": {"d": true}}
}"#;

fn table(format: ProtobufFormat, fields: Vec<SourceField>) -> ConnectionSchema {
    ConnectionSchema {
        format: Some(Format::Protobuf(ProtobufFormat {
            compiled_schema: Some(descriptor()),
            message_name: Some("shop.v1.Order".into()),
            ..format
        })),
        fields,
        ..Default::default()
    }
}

fn order_table(format: ProtobufFormat) -> ConnectionSchema {
    table(
        format,
        fields_from_protobuf(&descriptor(), "shop.v1.Order")
            .unwrap()
            .fields,
    )
}

fn decode(t: &ConnectionSchema, messages: &[Vec<u8>]) -> RecordBatch {
    let mut d = BatchDecoder::new(t).unwrap();
    for m in messages {
        d.push(m).unwrap();
    }
    d.finish().unwrap().unwrap()
}

#[test]
fn messages_encoded_by_prost_reflect_decode_into_every_column_type() {
    let batch = decode(
        &order_table(ProtobufFormat::default()),
        &[encoded(FULL), encoded("{}")],
    );
    assert_eq!(
        row(&batch, 0),
        [
            "id=9007199254740993",
            "small=-3",
            "delta=-2",
            "big_delta=-5",
            "counter=18446744073709551615",
            "f32=7",
            "f64=8",
            "sf32=-9",
            "sf64=-10",
            "ratio=0.5",
            "total=12.25",
            "paid=true",
            "note=ünïcode",
            "payload=0001ff",
            "status=STATUS_PAID",
            "coupon=",
            "shipping={city: Paris, zip: NULL}",
            "lines=[{sku: a, quantity: 2, price: 1.5}, {sku: b, quantity: 0, price: 0.0}]",
            "tags=[x, y]",
            "scores=[1, -2]",
            "counts={k: 1}",
            "addresses={5: {city: Rome, zip: 00100}}",
            "card=NULL",
            "account=77",
            "placed_at=2026-11-30T01:02:03.000000004",
            "ttl=1500000000",
            "maybe_id=0",
            "maybe_name=named",
            r#"attributes={"a":[1.0,"b",null],"c":{"d":true}}"#,
        ]
    );
    // An empty message: proto3 defaults where there is no presence, NULL where there is.
    let empty = row(&batch, 1);
    assert_eq!(empty[0], "id=0");
    assert_eq!(empty[14], "status=STATUS_UNSPECIFIED");
    assert_eq!(empty[15], "coupon=NULL");
    assert_eq!(empty[16], "shipping=NULL");
    assert_eq!(empty[17], "lines=[]");
    assert_eq!(empty[20], "counts={}");
    assert_eq!(empty[26], "maybe_id=NULL");
}

#[test]
fn wire_details_follow_the_spec() {
    // Unpacked repeated scalars, a repeated singular field (last wins), a message sent twice
    // (merged), and an unknown field (skipped).
    let mut m = Vec::new();
    m.extend([0xa0, 0x01, 0x05]); // scores = 5 (field 20, varint, unpacked)
    m.extend([0xa0, 0x01, 0x06]); // scores = 6
    m.extend([0x08, 0x01, 0x08, 0x02]); // id = 1, then id = 2
    m.extend([0x8a, 0x01, 0x04, 0x0a, 0x02, b'N', b'Y']); // shipping {city: NY}
    m.extend([0x8a, 0x01, 0x04, 0x12, 0x02, b'1', b'0']); // shipping {zip: 10}
    m.extend([0xf8, 0x07, 0x2a]); // field 127 = 42, unknown
    let batch = decode(&order_table(ProtobufFormat::default()), &[m]);
    let r = row(&batch, 0);
    assert_eq!(r[0], "id=2");
    assert_eq!(r[16], "shipping={city: NY, zip: 10}");
    assert_eq!(r[19], "scores=[5, 6]");
}

#[test]
fn round_trips_through_our_encoder_in_every_framing() {
    let first = decode(
        &order_table(ProtobufFormat::default()),
        &[encoded(FULL), encoded("{}")],
    );
    for format in [
        ProtobufFormat::default(),
        ProtobufFormat {
            length_delimited: true,
            ..Default::default()
        },
        ProtobufFormat {
            confluent_schema_registry: true,
            ..Default::default()
        },
    ] {
        let t = order_table(format);
        let encoded = RowEncoder::new(t.format.as_ref().unwrap(), Some(3))
            .unwrap()
            .encode(&first)
            .unwrap();
        assert_eq!(decode(&t, &encoded), first);
    }
    // Several length-delimited messages in one payload are several rows.
    let t = order_table(ProtobufFormat {
        length_delimited: true,
        ..Default::default()
    });
    let encoded = RowEncoder::new(t.format.as_ref().unwrap(), None)
        .unwrap()
        .encode(&first)
        .unwrap();
    assert_eq!(decode(&t, &[encoded.concat()]).num_rows(), 2);
}

#[test]
fn our_messages_read_back_with_prost_reflect() {
    let batch = decode(&order_table(ProtobufFormat::default()), &[encoded(FULL)]);
    let t = order_table(ProtobufFormat::default());
    let ours = RowEncoder::new(t.format.as_ref().unwrap(), None)
        .unwrap()
        .encode(&batch)
        .unwrap();
    let back = DynamicMessage::decode(order_descriptor(), ours[0].as_slice()).unwrap();
    let original = DynamicMessage::decode(order_descriptor(), encoded(FULL).as_slice()).unwrap();
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(&original).unwrap()
    );
}

#[test]
fn bad_messages_are_dropped_whole_with_the_field_that_failed() {
    let good = encoded(FULL);
    let truncated = good[..good.len() - 4].to_vec();
    let wrong_wire = vec![0x0d, 0, 0, 0, 0]; // id (varint) sent as 32-bit
    let mut t = order_table(ProtobufFormat::default());
    t.bad_data = Some(BadData::Drop);
    let mut d = BatchDecoder::new(&t).unwrap();
    for m in [&good, &truncated, &wrong_wire, &good] {
        d.push(m).unwrap();
    }
    assert_eq!(d.finish().unwrap().unwrap().num_rows(), 2);
    assert_eq!(d.dropped().count, 2);
    let mut d = BatchDecoder::new(&order_table(ProtobufFormat::default())).unwrap();
    let e = d.push(&wrong_wire).unwrap_err();
    assert_eq!(
        e,
        DecodeError::BadRecord {
            index: 1,
            reason: "field 'id': a value of type int64 was sent as 32-bit".into()
        }
    );
    // Registry framing must name the table's message.
    let t = order_table(ProtobufFormat {
        confluent_schema_registry: true,
        ..Default::default()
    });
    let mut d = BatchDecoder::new(&t).unwrap();
    let e = d.push(&[0, 0, 0, 0, 1, 0]).unwrap_err();
    assert!(
        e.to_string().contains(
            "names message index [0] of the schema, but the table reads the message at [2]"
        ),
        "{e}"
    );
}

#[test]
fn subsets_and_unstructured_json() {
    let subset = vec![
        SourceField::new("note", FieldType::String),
        SourceField::new(
            "placed_at",
            FieldType::Timestamp {
                unit: tributary_types::TimeUnit::Millisecond,
            },
        ),
        SourceField::new("not_in_message", FieldType::Int32),
    ];
    let batch = decode(&table(ProtobufFormat::default(), subset), &[encoded(FULL)]);
    assert_eq!(
        row(&batch, 0),
        [
            "note=ünïcode",
            "placed_at=2026-11-30T01:02:03",
            "not_in_message=NULL"
        ]
    );
    let t = table(
        ProtobufFormat {
            into_unstructured_json: true,
            ..Default::default()
        },
        vec![SourceField::new("value", FieldType::Json)],
    );
    let batch = decode(&t, &[encoded(FULL)]);
    let json: serde_json::Value =
        serde_json::from_str(&row(&batch, 0)[0]["value=".len()..]).unwrap();
    assert_eq!(json["shipping"]["city"], "Paris");
    assert_eq!(json["status"], "STATUS_PAID");
}

/// Descriptor sets that once panicked the descriptor library (found by fuzzing; the
/// inputs are in fuzz/regressions/protobuf_schema): each is a clear error now.
#[test]
fn hostile_descriptor_sets_are_refused_with_a_reason() {
    use prost::Message as _;
    use prost_reflect::prost_types::{
        DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet,
        MessageOptions, field_descriptor_proto,
    };
    let file = |syntax: &str, messages: Vec<DescriptorProto>| FileDescriptorProto {
        name: Some("a.proto".into()),
        package: Some("a".into()),
        syntax: Some(syntax.into()),
        message_type: messages,
        ..Default::default()
    };
    let unknown_syntax = FileDescriptorSet {
        file: vec![file("editions-9999", vec![])],
    }
    .encode_to_vec();
    let e = tributary_formats::parse_descriptor_set(&unknown_syntax).unwrap_err();
    assert!(e.to_string().contains("has syntax 'editions-9999'"), "{e}");

    let key = FieldDescriptorProto {
        name: Some("key".into()),
        number: Some(1),
        r#type: Some(field_descriptor_proto::Type::String as i32),
        label: Some(field_descriptor_proto::Label::Optional as i32),
        ..Default::default()
    };
    let entry = DescriptorProto {
        name: Some("Entry".into()),
        field: vec![key],
        options: Some(MessageOptions {
            map_entry: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    };
    let no_value = FileDescriptorSet {
        file: vec![file(
            "proto3",
            vec![DescriptorProto {
                name: Some("M".into()),
                nested_type: vec![entry],
                ..Default::default()
            }],
        )],
    }
    .encode_to_vec();
    match tributary_formats::parse_descriptor_set(&no_value) {
        Err(e) => assert!(e.to_string().contains("map entry"), "{e}"),
        Ok(_) => panic!("a map entry without a value field was accepted"),
    }
}
