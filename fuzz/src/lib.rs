//! Fuzz targets: what Tributary reads from untrusted text and bytes. Each target takes
//! arbitrary bytes and must return, whatever they are: no panic, no abort, no hang, and
//! memory and time at most linear in the input. AFL++ drives them through the `fuzz`
//! binary (feature `afl`); `tests/replay.rs` runs each target over its seed corpus and
//! every regression input in `fuzz/regressions/<target>/`, in CI, and `tests/linear.rs`
//! asserts the linear bound on scaled families of them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_formats::{
    BatchDecoder, fields_from_avro_schema, fields_from_json_schema, fields_from_protobuf,
    parse_avro_schema,
};
use tributary_sql::{Mode, Session};
use tributary_types::{
    AvroFormat, ConnectionSchema, Format, JsonFormat, ProtobufFormat, SourceField,
};

/// Every target, by the name the `fuzz` binary takes.
pub const TARGETS: &[&str] = &[
    "parser",
    "script",
    "json_schema",
    "avro_schema",
    "protobuf_schema",
    "decode",
];

/// Run `target` on `data`; `false` for an unknown target.
pub fn run(target: &str, data: &[u8]) -> bool {
    match target {
        "parser" => parser(data),
        "script" => script(data),
        "json_schema" => json_schema(data),
        "avro_schema" => avro_schema(data),
        "protobuf_schema" => protobuf_schema(data),
        "decode" => decode(data),
        _ => return false,
    }
    true
}

/// The script parser: statements, options, spans.
fn parser(data: &[u8]) {
    let _ = tributary_sql::parser::parse_script(&String::from_utf8_lossy(data));
}

/// A script checked as `tributary check` does, on an empty in-memory catalog: the option
/// pipeline, schema documents given inline, planning, with nothing connected to.
fn script(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let session = Session::new(Arc::new(OverlayStore::in_memory())).offline();
    let _ = runtime.block_on(session.run_script(&text, Mode::Check));
}

/// JSON Schema documents expanded into columns.
fn json_schema(data: &[u8]) {
    let _ = fields_from_json_schema(&String::from_utf8_lossy(data));
}

/// Avro schemas parsed and expanded into columns.
fn avro_schema(data: &[u8]) {
    if let Ok(schema) = parse_avro_schema(&String::from_utf8_lossy(data)) {
        let _ = fields_from_avro_schema(&schema);
    }
}

/// Protobuf descriptor sets expanded into columns (the message the fixtures define).
fn protobuf_schema(data: &[u8]) {
    let _ = fields_from_protobuf(data, "shop.v1.Order");
}

/// The decoders: the first byte picks one (JSON, unstructured JSON, Avro datums, an Avro
/// container file, Protobuf, length-delimited Protobuf, raw text, raw bytes), the rest
/// is one message for it, then the batch is finished.
fn decode(data: &[u8]) {
    let Some((&pick, message)) = data.split_first() else {
        return;
    };
    let Some(schema) = decoding_schema(pick) else {
        return;
    };
    let Ok(mut decoder) = BatchDecoder::new(&schema) else {
        return;
    };
    let _ = decoder.push(message);
    let _ = decoder.finish();
}

/// The fixtures directory, for the schemas the decoders read with.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// The columns of a JSON Schema fixture.
fn fixture_fields(name: &str) -> Vec<SourceField> {
    std::fs::read_to_string(fixtures().join(name))
        .ok()
        .and_then(|t| fields_from_json_schema(&t).ok())
        .map(|e| e.fields)
        .unwrap_or_default()
}

/// The table schema decoder `pick` reads with.
fn decoding_schema(pick: u8) -> Option<ConnectionSchema> {
    let json_fields = || fixture_fields("json/orders.schema.json");
    let avro = || -> Option<(String, Vec<SourceField>)> {
        let text = std::fs::read_to_string(fixtures().join("avro/orders.avsc")).ok()?;
        let fields = fields_from_avro_schema(&parse_avro_schema(&text).ok()?)
            .ok()?
            .fields;
        Some((text, fields))
    };
    let proto = |length_delimited: bool| -> Option<ConnectionSchema> {
        let descriptor = std::fs::read(fixtures().join("protobuf/orders.binpb")).ok()?;
        let fields = fields_from_protobuf(&descriptor, "shop.v1.Order")
            .ok()?
            .fields;
        Some(ConnectionSchema {
            format: Some(Format::Protobuf(ProtobufFormat {
                compiled_schema: Some(descriptor),
                message_name: Some("shop.v1.Order".into()),
                length_delimited,
                ..Default::default()
            })),
            fields,
            ..Default::default()
        })
    };
    let with = |format: Format, fields: Vec<SourceField>| ConnectionSchema {
        format: Some(format),
        fields,
        ..Default::default()
    };
    Some(match pick % 8 {
        0 => with(Format::Json(JsonFormat::default()), json_fields()),
        1 => with(
            Format::Json(JsonFormat {
                unstructured: true,
                ..JsonFormat::default()
            }),
            Vec::new(),
        ),
        2 => {
            let (text, fields) = avro()?;
            with(
                Format::Avro(AvroFormat {
                    reader_schema: Some(text),
                    raw_datums: true,
                    ..AvroFormat::default()
                }),
                fields,
            )
        }
        3 => {
            let (text, fields) = avro()?;
            with(
                Format::Avro(AvroFormat {
                    reader_schema: Some(text),
                    ..AvroFormat::default()
                }),
                fields,
            )
        }
        4 => proto(false)?,
        5 => proto(true)?,
        6 => with(Format::RawString {}, Vec::new()),
        _ => with(Format::RawBytes {}, Vec::new()),
    })
}

/// The seed inputs of `target`: the SQL tests and the fixtures, as AFL++ starts from and
/// as the replay test runs.
pub fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = |dir: &Path, ends: &[&str]| -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    todo.push(path);
                } else if ends.iter().any(|e| path.to_string_lossy().ends_with(e))
                    && let Ok(bytes) = std::fs::read(&path)
                {
                    let name = path
                        .strip_prefix(&root)
                        .unwrap_or(&path)
                        .display()
                        .to_string();
                    out.push((name, bytes));
                }
            }
        }
        out.sort();
        out
    };
    match target {
        "parser" | "script" => {
            let mut out = files(&root.join("examples"), &[".sql"]);
            for (name, bytes) in files(&root.join("sql-tests"), &[".slt"]) {
                let text = String::from_utf8_lossy(&bytes);
                for (i, sql) in slt_statements(&text).into_iter().enumerate() {
                    out.push((format!("{name} #{i}"), sql.into_bytes()));
                }
            }
            out
        }
        "json_schema" => files(&fixtures(), &[".schema.json", ".fields.json"]),
        "avro_schema" => files(&fixtures(), &[".avsc"]),
        "protobuf_schema" => files(&fixtures(), &[".binpb"]),
        "decode" => {
            let samples = files(&fixtures().join("samples"), &[""]);
            let mut out = Vec::new();
            for (name, bytes) in samples {
                for pick in 0..8u8 {
                    let mut input = vec![pick];
                    input.extend_from_slice(&bytes);
                    out.push((format!("{name} (decoder {pick})"), input));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The SQL of each record of a sqllogictest file: the lines after a `statement` or
/// `query` line, up to a blank line or the `----` before expected results.
fn slt_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.starts_with("statement") || line.starts_with("query") => {
                current = Some(String::new());
            }
            Some(sql) if line.trim().is_empty() || line.starts_with("----") => {
                out.push(std::mem::take(sql));
                current = None;
            }
            Some(sql) => {
                sql.push_str(line);
                sql.push('\n');
            }
            None => {}
        }
    }
    if let Some(sql) = current.filter(|s| !s.is_empty()) {
        out.push(sql);
    }
    out
}

/// The regression inputs of `target`: `fuzz/regressions/<target>/*`, each an input that
/// once crashed or hung, kept after the fix.
pub fn regressions(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(target);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let bytes = std::fs::read(e.path()).ok()?;
            Some((e.path().display().to_string(), bytes))
        })
        .collect();
    out.sort();
    out
}
