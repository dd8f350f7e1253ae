//! Arbitrary input never panics schema expansion or inference: the fixtures, mutated
//! byte by byte with a fixed-seed generator (reproducible), plus random bytes.

use std::path::Path;
use tributary_formats::{BatchDecoder, fields_from_json_schema, infer_fields};
use tributary_types::{BadData, ConnectionSchema, Format, JsonFormat};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    const TOKENS: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b":",
        b",",
        b"null",
        b"\"$ref\": \"#\"",
        b"\"type\"",
        b"\"object\"",
        b"\"array\"",
        b"\"items\"",
        b"\"oneOf\": [",
        b"\"allOf\": [",
        b"1e999",
        b"\\u0000",
        b"\xff",
    ];
    let mut out = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(3) {
            0 if !out.is_empty() => {
                let end = (at + rng.below(8)).min(out.len());
                out.drain(at.min(end)..end);
            }
            1 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                out.splice(at..at, t.iter().copied());
            }
            _ => out.insert(at, (rng.next() & 0xff) as u8),
        }
    }
    out
}

#[test]
fn mutated_and_random_inputs_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let schema = std::fs::read(root.join("json/orders.schema.json")).unwrap_or_default();
    let samples = std::fs::read(root.join("samples/events.jsonl")).unwrap_or_default();
    assert!(
        !schema.is_empty() && !samples.is_empty(),
        "fixtures missing"
    );
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    for _ in 0..3_000 {
        let s = mutate(&mut rng, &schema);
        let _ = fields_from_json_schema(&String::from_utf8_lossy(&s));
        let lines: Vec<Vec<u8>> = samples
            .split(|b| *b == b'\n')
            .map(|l| mutate(&mut rng, l))
            .collect();
        let _ = infer_fields(&lines);
        let noise: Vec<u8> = (0..rng.below(64))
            .map(|_| (rng.next() & 0xff) as u8)
            .collect();
        let _ = fields_from_json_schema(&String::from_utf8_lossy(&noise));
        let _ = infer_fields(&[&noise]);
        // The decoder of the sample table, on mutated messages, under both policies.
        if let Ok(expanded) = fields_from_json_schema(&String::from_utf8_lossy(&schema)) {
            for bad_data in [BadData::Drop, BadData::Fail] {
                let table = ConnectionSchema {
                    format: Some(Format::Json(JsonFormat::default())),
                    fields: expanded.fields.clone(),
                    bad_data: Some(bad_data),
                    ..Default::default()
                };
                if let Ok(mut d) = BatchDecoder::new(&table) {
                    for l in &lines {
                        let _ = d.push(l);
                    }
                    let _ = d.push(&noise);
                    let _ = d.finish();
                }
            }
        }
    }
}

/// Avro and Protobuf: mutated schemas, descriptor sets and messages never panic expansion
/// or decoding, and whatever decodes makes a valid batch with one row per accepted message.
#[test]
fn binary_formats_survive_mutation() {
    use apache_avro::types::Value;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let avsc = std::fs::read(root.join("avro/orders.avsc")).unwrap_or_default();
    let descriptor = std::fs::read(root.join("protobuf/orders.binpb")).unwrap_or_default();
    assert!(
        !avsc.is_empty() && !descriptor.is_empty(),
        "fixtures missing"
    );
    let small = r#"{"type":"record","name":"R","fields":[
        {"name":"id","type":"long"},{"name":"tags","type":{"type":"array","items":"string"}},
        {"name":"m","type":{"type":"map","values":["null","double"]}},
        {"name":"u","type":["null","int","string"]},
        {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}"#;
    let schema = apache_avro::Schema::parse_str(small).unwrap_or(apache_avro::Schema::Null);
    let writer = apache_avro::writer::datum::GenericDatumWriter::builder(&schema).build();
    let good: Vec<u8> = writer
        .ok()
        .and_then(|w| {
            w.write_value_to_vec(Value::Record(vec![
                ("id".into(), Value::Long(-7)),
                ("tags".into(), Value::Array(vec![Value::String("a".into())])),
                (
                    "m".into(),
                    Value::Map(
                        [(
                            "k".to_string(),
                            Value::Union(1, Box::new(Value::Double(1.5))),
                        )]
                        .into(),
                    ),
                ),
                (
                    "u".into(),
                    Value::Union(2, Box::new(Value::String("s".into()))),
                ),
                (
                    "d".into(),
                    Value::Decimal(apache_avro::Decimal::from(vec![0x01, 0x02])),
                ),
            ]))
            .ok()
        })
        .unwrap_or_default();
    assert!(!good.is_empty(), "could not write the sample datum");
    let avro_table = |bad_data| ConnectionSchema {
        format: Some(Format::Avro(tributary_types::AvroFormat {
            raw_datums: true,
            reader_schema: Some(small.into()),
            ..Default::default()
        })),
        fields: tributary_formats::parse_avro_schema(small)
            .ok()
            .and_then(|s| tributary_formats::fields_from_avro_schema(&s).ok())
            .map(|e| e.fields)
            .unwrap_or_default(),
        bad_data: Some(bad_data),
        ..Default::default()
    };
    let proto_table = ConnectionSchema {
        format: Some(Format::Protobuf(tributary_types::ProtobufFormat {
            compiled_schema: Some(descriptor.clone()),
            message_name: Some("shop.v1.Order".into()),
            length_delimited: true,
            ..Default::default()
        })),
        fields: tributary_formats::fields_from_protobuf(&descriptor, "shop.v1.Order")
            .map(|e| e.fields)
            .unwrap_or_default(),
        bad_data: Some(BadData::Drop),
        ..Default::default()
    };
    // A length-delimited Order with nested, repeated, map and well-known fields.
    let order: &[u8] = &[
        0x08, 0x2a, 0x6a, 0x03, b'a', b'b', b'c', 0x8a, 0x01, 0x04, 0x0a, 0x02, b'N', b'Y', 0xa2,
        0x01, 0x03, 0x01, 0x02, 0x03, 0xaa, 0x01, 0x05, 0x0a, 0x01, b'k', 0x10, 0x01, 0xca, 0x01,
        0x04, 0x08, 0x01, 0x10, 0x02,
    ];
    let proto_good = [&[order.len() as u8][..], order].concat();
    let mut rng = Rng(0xa5a5_0f0f_1234_5678);
    for _ in 0..3_000 {
        let s = mutate(&mut rng, &avsc);
        if let Ok(schema) = tributary_formats::parse_avro_schema(&String::from_utf8_lossy(&s)) {
            let _ = tributary_formats::fields_from_avro_schema(&schema);
        }
        let d = mutate(&mut rng, &descriptor);
        let _ = tributary_formats::fields_from_protobuf(&d, "shop.v1.Order");
        for (table, message) in [
            (avro_table(BadData::Drop), &good),
            (avro_table(BadData::Fail), &good),
            (proto_table.clone(), &proto_good),
        ] {
            let Ok(mut decoder) = BatchDecoder::new(&table) else {
                panic!("the sample tables must be decodable");
            };
            let mut accepted = 0;
            for m in [
                message.clone(),
                mutate(&mut rng, message),
                mutate(&mut rng, message),
            ] {
                let before = decoder.dropped().count;
                if decoder.push(&m).is_ok() && decoder.dropped().count == before {
                    accepted += 1;
                }
            }
            match decoder.finish() {
                Ok(Some(batch)) => assert!(batch.num_rows() >= accepted.min(1)),
                Ok(None) => assert_eq!(accepted, 0),
                Err(e) => panic!("a batch of accepted records failed to build: {e}"),
            }
        }
    }
}

/// Damaged Parquet files are bad records, never panics.
#[test]
fn damaged_parquet_files_never_panic() {
    use tributary_types::{FieldType, ParquetFormat, SourceField};
    let table = ConnectionSchema {
        format: Some(Format::Parquet(ParquetFormat::default())),
        fields: vec![
            SourceField::required("id", FieldType::Int64),
            SourceField::new("tags", FieldType::list(FieldType::String)),
            SourceField::new("m", FieldType::map(FieldType::String, FieldType::Float64)),
        ],
        bad_data: Some(BadData::Drop),
        ..Default::default()
    };
    let Ok(mut json) = BatchDecoder::new(&ConnectionSchema {
        format: Some(Format::Json(JsonFormat::default())),
        ..table.clone()
    }) else {
        panic!("json decoder");
    };
    for i in 0..50 {
        let _ = json
            .push(format!(r#"{{"id": {i}, "tags": ["a", "b"], "m": {{"k": {i}.5}}}}"#).as_bytes());
    }
    let rows = json
        .finish()
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("rows"));
    let file =
        tributary_formats::RowEncoder::new(table.format.as_ref().unwrap_or_else(|| panic!()), None)
            .and_then(|e| e.encode(&rows))
            .ok()
            .and_then(|mut f| f.pop())
            .unwrap_or_default();
    assert!(!file.is_empty());
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    for _ in 0..2_000 {
        let Ok(mut d) = BatchDecoder::new(&table) else {
            panic!("parquet decoder");
        };
        let mut damaged = file.clone();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(damaged.len());
            damaged[at] = (rng.next() & 0xff) as u8;
        }
        if rng.below(4) == 0 {
            damaged.truncate(rng.below(damaged.len()));
        }
        let _ = d.push(&damaged);
        let _ = d.finish();
    }
}
