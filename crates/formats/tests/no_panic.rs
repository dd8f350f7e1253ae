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
