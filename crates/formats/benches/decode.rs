//! JSON decode throughput into Arrow for a 10-field record with a nested struct and a list:
//! Tributary's `BatchDecoder` against arrow-json's own `Decoder` on the same bytes, one
//! thread. `cargo bench -p tributary-formats --bench decode`; results go in BENCHMARKS.md.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::sync::Arc;
use tributary_formats::{BatchDecoder, fields_from_json_schema};
use tributary_types::{ConnectionSchema, Format, JsonFormat};

const SCHEMA: &str = r#"{"type": "object", "required": ["id", "at"], "properties": {
    "id": {"type": "integer"}, "at": {"type": "string", "format": "date-time"},
    "user": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
    "tags": {"type": "array", "items": {"type": "string"}},
    "price": {"type": "number"}, "qty": {"type": "integer"}, "paid": {"type": "boolean"},
    "currency": {"type": "string"}, "country": {"type": "string"}, "note": {"type": "string"}}}"#;

const ROWS: usize = 10_000;

fn messages() -> Vec<Vec<u8>> {
    (0..ROWS)
        .map(|i| {
            format!(
                r#"{{"id": {i}, "at": "2026-11-29T10:{:02}:{:02}Z", "user": {{"name": "user{i}", "age": {}}}, "tags": ["a", "b{}"], "price": {}.5, "qty": {}, "paid": {}, "currency": "EUR", "country": "NL", "note": "order number {i}"}}"#,
                (i / 60) % 60,
                i % 60,
                20 + i % 50,
                i % 7,
                i % 1000,
                i % 9,
                i % 2 == 0
            )
            .into_bytes()
        })
        .collect()
}

fn bench_json(c: &mut Criterion) {
    let fields = fields_from_json_schema(SCHEMA).expect("schema").fields;
    let table = ConnectionSchema {
        format: Some(Format::Json(JsonFormat::default())),
        fields,
        ..Default::default()
    };
    let msgs = messages();
    let bytes: usize = msgs.iter().map(Vec::len).sum();
    let mut joined = Vec::with_capacity(bytes + ROWS);
    for m in &msgs {
        joined.extend_from_slice(m);
        joined.push(b'\n');
    }
    let arrow_schema = BatchDecoder::new(&table).expect("decoder").schema();

    let mut g = c.benchmark_group("decode_json_10_fields");
    g.throughput(Throughput::Bytes(bytes as u64));
    // Both decoders are long-lived, as a source's are: each iteration decodes the whole
    // set of messages into one batch.
    let mut arrow_decoder = arrow_json::ReaderBuilder::new(Arc::clone(&arrow_schema))
        .with_batch_size(ROWS)
        .build_decoder()
        .expect("decoder");
    g.bench_function("arrow_json_decoder", |b| {
        b.iter(|| {
            let mut at = 0;
            while at < joined.len() {
                let n = arrow_decoder.decode(&joined[at..]).expect("decode");
                if n == 0 {
                    break;
                }
                at += n;
            }
            arrow_decoder.flush().expect("flush").expect("batch")
        })
    });
    let mut ours = BatchDecoder::new(&table).expect("decoder");
    g.bench_function("tributary_batch_decoder", |b| {
        b.iter(|| {
            for m in &msgs {
                ours.push(m).expect("push");
            }
            ours.finish().expect("finish").expect("batch")
        })
    });
    g.finish();
}

criterion_group!(benches, bench_json);
criterion_main!(benches);
