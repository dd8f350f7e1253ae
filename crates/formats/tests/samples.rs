//! Sample messages per format, checked in under `fixtures/samples/`, decoded against their
//! row snapshots (`*.rows.txt`). `TRIBUTARY_BLESS=1 cargo test -p tributary-formats --test
//! samples` rewrites the snapshots, and writes a sample file that is missing: Protobuf
//! messages from `orders.pb.json`, a Parquet file of the Avro sample's rows. The Avro
//! container file comes from apache-avro, written by the avro test when blessing.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use arrow_array::RecordBatch;
use std::path::{Path, PathBuf};
use tributary_formats::{
    BatchDecoder, RowEncoder, fields_from_avro_schema, fields_from_protobuf, parse_avro_schema,
};
use tributary_types::{
    AvroFormat, ConnectionSchema, Format, ParquetFormat, ProtobufFormat, SourceField,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn bless() -> bool {
    std::env::var_os("TRIBUTARY_BLESS").is_some()
}

fn rows_text(batch: &RecordBatch) -> String {
    let mut out = String::new();
    for i in 0..batch.num_rows() {
        for cell in common::row(batch, i) {
            out.push_str(&cell);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

fn check(sample: &str, table: &ConnectionSchema, messages: Vec<Vec<u8>>) {
    let mut d = BatchDecoder::new(table).unwrap();
    for m in &messages {
        d.push(m).unwrap();
    }
    let batch = d.finish().unwrap().unwrap();
    assert_eq!(d.dropped().count, 0);
    let rendered = rows_text(&batch);
    let snapshot = fixtures().join(format!("samples/{sample}.rows.txt"));
    if bless() {
        std::fs::write(&snapshot, &rendered).unwrap();
    }
    assert_eq!(
        rendered,
        std::fs::read_to_string(&snapshot).unwrap_or_default(),
        "{sample}: decoded rows differ from the snapshot (TRIBUTARY_BLESS=1 to accept)"
    );
}

fn avro_table(format: AvroFormat) -> ConnectionSchema {
    let text = std::fs::read_to_string(fixtures().join("avro/orders.avsc")).unwrap();
    let fields = fields_from_avro_schema(&parse_avro_schema(&text).unwrap())
        .unwrap()
        .fields;
    ConnectionSchema {
        format: Some(Format::Avro(AvroFormat {
            reader_schema: Some(text),
            ..format
        })),
        fields,
        ..Default::default()
    }
}

fn proto_table(length_delimited: bool) -> ConnectionSchema {
    let descriptor = std::fs::read(fixtures().join("protobuf/orders.binpb")).unwrap();
    let fields: Vec<SourceField> = fields_from_protobuf(&descriptor, "shop.v1.Order")
        .unwrap()
        .fields;
    ConnectionSchema {
        format: Some(Format::Protobuf(ProtobufFormat {
            compiled_schema: Some(descriptor),
            message_name: Some("shop.v1.Order".into()),
            length_delimited,
            ..Default::default()
        })),
        fields,
        ..Default::default()
    }
}

/// The sample, written from rows the JSON sample of the same orders decodes into, when
/// blessing and it is missing.
fn sample_file(name: &str, make: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
    let path = fixtures().join(format!("samples/{name}"));
    if bless() && !path.exists() {
        std::fs::write(&path, make()).unwrap();
    }
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Rows of every Avro column type, from the Avro object container file.
fn avro_rows() -> RecordBatch {
    let file = std::fs::read(fixtures().join("samples/orders.avro")).unwrap();
    let mut d = BatchDecoder::new(&avro_table(AvroFormat::default())).unwrap();
    d.push(&file).unwrap();
    d.finish().unwrap().unwrap()
}

#[test]
fn avro_container_file() {
    // Written by apache-avro (the avro test writes it when blessing); kept as the
    // reference for our container-file reader.
    let file = sample_file("orders.avro", || {
        panic!(
            "fixtures/samples/orders.avro is missing: run TRIBUTARY_BLESS=1 cargo test -p tributary-formats --test avro first"
        )
    });
    check(
        "orders.avro",
        &avro_table(AvroFormat::default()),
        vec![file],
    );
}

#[test]
fn parquet_file() {
    let table = ConnectionSchema {
        format: Some(Format::Parquet(ParquetFormat::default())),
        ..avro_table(AvroFormat::default())
    };
    let file = sample_file("orders.parquet", || {
        RowEncoder::new(table.format.as_ref().unwrap(), None)
            .unwrap()
            .encode(&avro_rows())
            .unwrap()
            .remove(0)
    });
    check("orders.parquet", &table, vec![file]);
}

#[test]
fn protobuf_length_delimited_messages() {
    let file = sample_file("orders.pb", || {
        let json = std::fs::read_to_string(fixtures().join("samples/orders.pb.json")).unwrap();
        let pool = prost_reflect::DescriptorPool::decode(
            std::fs::read(fixtures().join("protobuf/orders.binpb"))
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        let desc = pool.get_message_by_name("shop.v1.Order").unwrap();
        let mut out = Vec::new();
        for line in json.lines().filter(|l| !l.trim().is_empty()) {
            let mut de = serde_json::Deserializer::from_str(line);
            let msg = prost_reflect::DynamicMessage::deserialize(desc.clone(), &mut de).unwrap();
            prost::Message::encode_length_delimited(&msg, &mut out).unwrap();
        }
        out
    });
    check("orders.pb", &proto_table(true), vec![file]);
}
