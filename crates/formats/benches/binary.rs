//! Avro and Protobuf decode throughput into Arrow for a 10-field record with a nested struct
//! and a list, one thread: Tributary's direct decoders against decoding each message to a
//! value, converting it to `serde_json::Value`, and handing the JSON to arrow-json (how
//! Arroyo decodes both formats). Also schema expansion of 200-field Avro and Protobuf
//! schemas. `cargo bench -p tributary-formats --bench binary`; results go in BENCHMARKS.md.

use apache_avro::Schema;
use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value;
use apache_avro::writer::datum::GenericDatumWriter;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use std::hint::black_box;
use tributary_formats::{
    BatchDecoder, fields_from_avro_schema, fields_from_protobuf, parse_avro_schema,
};
use tributary_types::{AvroFormat, ConnectionSchema, Format, ProtobufFormat};

const ROWS: usize = 10_000;

const AVRO: &str = r#"{"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "user", "type": {"type": "record", "name": "User", "fields": [
        {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "price", "type": "double"}, {"name": "qty", "type": "int"},
    {"name": "paid", "type": "boolean"}, {"name": "currency", "type": "string"},
    {"name": "country", "type": "string"}, {"name": "note", "type": ["null", "string"]}]}"#;

const PROTO: &str = r#"syntax = "proto3";
package bench;
message User { string name = 1; int32 age = 2; }
message Order {
  int64 id = 1; int64 at = 2; User user = 3; repeated string tags = 4; double price = 5;
  int32 qty = 6; bool paid = 7; string currency = 8; string country = 9; optional string note = 10;
}
"#;

fn avro_messages(schema: &Schema) -> Vec<Vec<u8>> {
    let writer = GenericDatumWriter::builder(schema).build().expect("writer");
    (0..ROWS as i64)
        .map(|i| {
            let v = Value::Record(vec![
                ("id".into(), Value::Long(i)),
                (
                    "at".into(),
                    Value::TimestampMicros(1_764_460_800_000_000 + i),
                ),
                (
                    "user".into(),
                    Value::Record(vec![
                        ("name".into(), Value::String(format!("user{i}"))),
                        ("age".into(), Value::Int(20 + (i % 50) as i32)),
                    ]),
                ),
                (
                    "tags".into(),
                    Value::Array(vec![
                        Value::String("a".into()),
                        Value::String(format!("b{}", i % 7)),
                    ]),
                ),
                ("price".into(), Value::Double(i as f64 + 0.5)),
                ("qty".into(), Value::Int((i % 9) as i32)),
                ("paid".into(), Value::Boolean(i % 2 == 0)),
                ("currency".into(), Value::String("EUR".into())),
                ("country".into(), Value::String("NL".into())),
                (
                    "note".into(),
                    Value::Union(1, Box::new(Value::String(format!("order number {i}")))),
                ),
            ]);
            writer.write_value_to_vec(v).expect("datum")
        })
        .collect()
}

fn compile_proto(text: &str, file: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("tributary-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join(file), text).expect("write");
    let bytes = protox::Compiler::new([&dir])
        .expect("compiler")
        .include_imports(true)
        .open_files([file])
        .expect("compile")
        .encode_file_descriptor_set();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

fn proto_messages(desc: &MessageDescriptor) -> Vec<Vec<u8>> {
    (0..ROWS)
        .map(|i| {
            let json = format!(
                r#"{{"id": "{i}", "at": "{}", "user": {{"name": "user{i}", "age": {}}}, "tags": ["a", "b{}"], "price": {}.5, "qty": {}, "paid": {}, "currency": "EUR", "country": "NL", "note": "order number {i}"}}"#,
                1_764_460_800_000_000u64 + i as u64,
                20 + i % 50,
                i % 7,
                i % 1000,
                i % 9,
                i % 2 == 0
            );
            let mut de = serde_json::Deserializer::from_str(&json);
            DynamicMessage::deserialize(desc.clone(), &mut de)
                .expect("message")
                .encode_to_vec()
        })
        .collect()
}

/// The Arroyo way: every message to a `serde_json::Value`, then arrow-json.
fn via_json(schema: &SchemaRef, values: impl Iterator<Item = serde_json::Value>) -> RecordBatch {
    let mut decoder = arrow_json::ReaderBuilder::new(schema.clone())
        .with_batch_size(ROWS)
        .build_decoder()
        .expect("decoder");
    let values: Vec<serde_json::Value> = values.collect();
    decoder.serialize(&values).expect("serialize");
    decoder.flush().expect("flush").expect("batch")
}

fn bench_avro(c: &mut Criterion) {
    let schema = Schema::parse_str(AVRO).expect("schema");
    let fields = fields_from_avro_schema(&schema).expect("fields").fields;
    let table = ConnectionSchema {
        format: Some(Format::Avro(AvroFormat {
            raw_datums: true,
            reader_schema: Some(AVRO.into()),
            ..Default::default()
        })),
        fields,
        ..Default::default()
    };
    let msgs = avro_messages(&schema);
    let bytes: usize = msgs.iter().map(Vec::len).sum();
    let mut ours = BatchDecoder::new(&table).expect("decoder");
    let arrow_schema = ours.schema();
    let reader = GenericDatumReader::builder(&schema)
        .build()
        .expect("reader");
    let mut g = c.benchmark_group("decode_avro_10_fields");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("avro_value_then_json_then_arrow", |b| {
        b.iter(|| {
            via_json(
                &arrow_schema,
                msgs.iter().map(|m| {
                    let v = reader.read_value(&mut m.as_slice()).expect("datum");
                    avro_to_json(v)
                }),
            )
        })
    });
    g.bench_function("tributary_direct", |b| {
        b.iter(|| {
            for m in &msgs {
                ours.push(m).expect("push");
            }
            ours.finish().expect("finish").expect("batch")
        })
    });
    g.finish();
}

/// apache-avro's value as JSON, the way a JSON round trip sees it (timestamps as numbers,
/// unions as their value).
fn avro_to_json(v: Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Null => J::Null,
        Value::Boolean(b) => J::Bool(b),
        Value::Int(i) => J::from(i),
        Value::Long(i) | Value::TimestampMicros(i) => J::from(i),
        Value::Double(d) => J::from(d),
        Value::String(s) => J::String(s),
        Value::Union(_, v) => avro_to_json(*v),
        Value::Array(a) => J::Array(a.into_iter().map(avro_to_json).collect()),
        Value::Record(fields) => J::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, avro_to_json(v)))
                .collect(),
        ),
        other => J::String(format!("{other:?}")),
    }
}

fn bench_protobuf(c: &mut Criterion) {
    let descriptor = compile_proto(PROTO, "bench.proto");
    let pool = DescriptorPool::decode(descriptor.as_slice()).expect("pool");
    let desc = pool.get_message_by_name("bench.Order").expect("message");
    let fields = fields_from_protobuf(&descriptor, "bench.Order")
        .expect("fields")
        .fields;
    let table = ConnectionSchema {
        format: Some(Format::Protobuf(ProtobufFormat {
            compiled_schema: Some(descriptor.clone()),
            message_name: Some("bench.Order".into()),
            ..Default::default()
        })),
        fields,
        ..Default::default()
    };
    let msgs = proto_messages(&desc);
    let bytes: usize = msgs.iter().map(Vec::len).sum();
    let mut ours = BatchDecoder::new(&table).expect("decoder");
    let arrow_schema = ours.schema();
    // Default values must be written (absent means NULL to arrow-json, and the columns
    // are NOT NULL), and 64-bit integers as numbers, which arrow-json reads into BIGINT.
    let options = prost_reflect::SerializeOptions::new()
        .skip_default_fields(false)
        .stringify_64_bit_integers(false);
    let mut g = c.benchmark_group("decode_protobuf_10_fields");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("dynamic_message_then_json_then_arrow", |b| {
        b.iter(|| {
            via_json(
                &arrow_schema,
                msgs.iter().map(|m| {
                    let msg = DynamicMessage::decode(desc.clone(), m.as_slice()).expect("decode");
                    msg.serialize_with_options(serde_json::value::Serializer, &options)
                        .expect("json")
                }),
            )
        })
    });
    g.bench_function("tributary_direct", |b| {
        b.iter(|| {
            for m in &msgs {
                ours.push(m).expect("push");
            }
            ours.finish().expect("finish").expect("batch")
        })
    });
    g.finish();
}

fn bench_expansion(c: &mut Criterion) {
    let avro_fields: Vec<String> = (0..200)
        .map(|i| match i % 5 {
            0 => format!(r#"{{"name": "f{i}", "type": "long"}}"#),
            1 => format!(r#"{{"name": "f{i}", "type": ["null", "string"]}}"#),
            2 => format!(r#"{{"name": "f{i}", "type": {{"type": "array", "items": "double"}}}}"#),
            3 => format!(r#"{{"name": "f{i}", "type": {{"type": "map", "values": "int"}}}}"#),
            _ => format!(
                r#"{{"name": "f{i}", "type": {{"type": "record", "name": "R{i}", "fields": [{{"name": "a", "type": "int"}}, {{"name": "b", "type": {{"type": "long", "logicalType": "timestamp-micros"}}}}]}}}}"#
            ),
        })
        .collect();
    let avro = format!(
        r#"{{"type": "record", "name": "Wide", "fields": [{}]}}"#,
        avro_fields.join(",")
    );
    let proto_fields: Vec<String> = (0..200)
        .map(|i| match i % 5 {
            0 => format!("int64 f{i} = {};", i + 1),
            1 => format!("optional string f{i} = {};", i + 1),
            2 => format!("repeated double f{i} = {};", i + 1),
            3 => format!("map<string, int32> f{i} = {};", i + 1),
            _ => format!("Inner f{i} = {};", i + 1),
        })
        .collect();
    let proto = format!(
        "syntax = \"proto3\";\npackage wide;\nmessage Inner {{ int32 a = 1; int64 b = 2; }}\nmessage Wide {{\n{}\n}}\n",
        proto_fields.join("\n")
    );
    let descriptor = compile_proto(&proto, "wide.proto");
    let mut g = c.benchmark_group("expand_200_fields");
    g.bench_function("avro_parse_and_expand", |b| {
        b.iter(|| {
            let s = parse_avro_schema(black_box(&avro)).expect("parse");
            fields_from_avro_schema(&s).expect("expand")
        })
    });
    g.bench_function("protobuf_decode_set_and_expand", |b| {
        b.iter(|| fields_from_protobuf(black_box(&descriptor), "wide.Wide").expect("expand"))
    });
    g.finish();
}

criterion_group!(benches, bench_avro, bench_protobuf, bench_expansion);
criterion_main!(benches);
