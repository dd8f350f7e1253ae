//! Turning a WITH clause's format options into a [`Format`], [`BadData`] and [`Framing`].

use crate::registry::{FORMATS, format_spec};
use crate::schema_files::{ProtoDirectory, read_schema_file, read_schema_text};
use tributary_types::options::{not_allowed, quoted_list, to_bool, to_u64};
use tributary_types::{
    AvroFormat, BadData, DecimalEncoding, Diagnostic, Format, Framing, JsonCompression, JsonFormat,
    ParquetCompression, ParquetFormat, ProtobufFormat, Span, TimestampFormat, WithOptions, closest,
    parse_data_size,
};

/// The format-related settings pulled from a WITH clause.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FormatOptions {
    /// The format, if `format` was given.
    pub format: Option<Format>,
    /// Where `format` was written.
    pub format_span: Option<Span>,
    /// `bad_data`.
    pub bad_data: Option<BadData>,
    /// `framing`.
    pub framing: Option<Framing>,
    /// Where `json.compression` was written, when it asks for compression.
    pub compression_span: Option<Span>,
    /// The schema document the columns come from (`json.schema`, `avro.schema`,
    /// `protobuf.descriptor_file`), when one was given.
    pub schema: Option<SchemaSource>,
}

/// A schema document given in a WITH clause, read and ready to expand.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaSource {
    /// JSON Schema text.
    Json {
        /// The text.
        text: String,
        /// Where the option's value is.
        span: Span,
    },
    /// Avro schema text (inline, or read from `avro.schema_file`).
    Avro {
        /// The text.
        text: String,
        /// Where the option's value is.
        span: Span,
    },
    /// A compiled Protobuf descriptor set and the message the table holds.
    Protobuf {
        /// The `FileDescriptorSet` bytes.
        descriptor: Vec<u8>,
        /// The fully-qualified message name.
        message: String,
        /// Where `protobuf.message` (or the descriptor option) is.
        span: Span,
        /// The `.proto` source and its imports by path, when given inline.
        source: Option<(String, std::collections::BTreeMap<String, String>)>,
    },
}

/// Pull `format`, its family of options, `bad_data` and `framing` from `opts`. Every
/// problem is reported; options of a format other than the chosen one are left in `opts`
/// and so reported as unknown later.
pub fn format_from_options(opts: &mut WithOptions, diags: &mut Vec<Diagnostic>) -> FormatOptions {
    let first = diags.len();
    let out = read_format_options(opts, diags);
    // An option's wrong type or value was coded where it was found; the rest are about
    // the format and its schema text.
    tributary_types::codes::fill(&mut diags[first..], tributary_types::codes::INVALID_FORMAT);
    out
}

fn read_format_options(opts: &mut WithOptions, diags: &mut Vec<Diagnostic>) -> FormatOptions {
    let mut out = FormatOptions::default();
    match opts.take_string("format") {
        Err(d) => diags.push(d),
        Ok(None) => {}
        Ok(Some((name, span))) => {
            out.format_span = Some(span);
            out.format = parse_format(&name, span, opts, diags, &mut out);
        }
    }
    match opts.take_string("bad_data") {
        Err(d) => diags.push(d),
        Ok(None) => {}
        Ok(Some((v, span))) => match v.as_str() {
            "fail" => out.bad_data = Some(BadData::Fail),
            "drop" => out.bad_data = Some(BadData::Drop),
            _ => diags.push(not_allowed("bad_data", &v, &["fail", "drop"], span)),
        },
    }
    let max_length = match opts.take("framing.newline.max_length") {
        Some(o) => match to_u64(&o) {
            Ok(n) => Some((n, o.key_span)),
            Err(d) => {
                diags.push(d);
                None
            }
        },
        None => None,
    };
    match opts.take_string("framing") {
        Err(d) => diags.push(d),
        Ok(None) => {
            if let Some((_, span)) = max_length {
                diags.push(
                    Diagnostic::error(
                        "option 'framing.newline.max_length' requires framing = 'newline'",
                    )
                    .with_span(span)
                    .with_help("Add framing = 'newline', or remove the option."),
                );
            }
        }
        Ok(Some((v, span))) => match v.as_str() {
            "newline" => {
                out.framing = Some(Framing::Newline {
                    max_line_length: max_length.map(|(n, _)| n),
                })
            }
            _ => diags.push(not_allowed("framing", &v, &["newline"], span)),
        },
    }
    out
}

fn parse_format(
    name: &str,
    span: Span,
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
    out: &mut FormatOptions,
) -> Option<Format> {
    if format_spec(name).is_none() {
        let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
        let mut d = Diagnostic::error(format!("unknown format '{name}'"))
            .with_span(span)
            .with_note(format!("supported formats are {}", quoted_list(&names)));
        if let Some(s) = closest(name, names.iter().copied()) {
            d = d.with_help(format!("Did you mean '{s}'?"));
        }
        diags.push(d);
        return None;
    };
    match name {
        "json" | "debezium_json" => Some(Format::Json(json_format(
            name == "debezium_json",
            opts,
            diags,
            out,
        ))),
        "avro" => Some(Format::Avro(avro_format(opts, diags, out))),
        "protobuf" => Some(Format::Protobuf(protobuf_format(span, opts, diags, out))),
        "parquet" => Some(Format::Parquet(parquet_format(opts, diags))),
        "raw_string" => Some(Format::RawString {}),
        "raw_bytes" => Some(Format::RawBytes {}),
        _ => None,
    }
}

fn json_format(
    debezium: bool,
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
    out: &mut FormatOptions,
) -> JsonFormat {
    let mut f = JsonFormat {
        debezium,
        timestamp_format: if debezium {
            TimestampFormat::UnixMillis
        } else {
            TimestampFormat::Rfc3339
        },
        decimal_encoding: if debezium {
            DecimalEncoding::Bytes
        } else {
            DecimalEncoding::Number
        },
        ..Default::default()
    };
    let registry = take_flag(opts, "json.confluent_schema_registry", diags);
    let include = take_flag(opts, "json.include_schema", diags);
    let unstructured = take_flag(opts, "json.unstructured", diags);
    f.confluent_schema_registry = registry.is_some_and(|(b, _)| b);
    f.include_schema = include.is_some_and(|(b, _)| b);
    f.unstructured = unstructured.is_some_and(|(b, _)| b);
    if let (Some((true, _)), Some((true, span))) = (registry, include) {
        diags.push(
            Diagnostic::error("at most one of 'json.confluent_schema_registry' and 'json.include_schema' may be set")
                .with_span(span)
                .with_help("A message either carries the registry header or an embedded schema; choose one."),
        );
    }
    if let Some((v, _)) = take_enum(
        opts,
        "json.timestamp_format",
        &["rfc3339", "unix_millis"],
        diags,
    ) {
        f.timestamp_format = if v == "unix_millis" {
            TimestampFormat::UnixMillis
        } else {
            TimestampFormat::Rfc3339
        };
    }
    if let Some((v, _)) = take_enum(
        opts,
        "json.decimal_encoding",
        &["number", "string", "bytes"],
        diags,
    ) {
        f.decimal_encoding = match v.as_str() {
            "string" => DecimalEncoding::String,
            "bytes" => DecimalEncoding::Bytes,
            _ => DecimalEncoding::Number,
        };
    }
    if let Some((v, span)) = take_enum(opts, "json.compression", &["uncompressed", "gzip"], diags)
        && v == "gzip"
    {
        f.compression = JsonCompression::Gzip;
        out.compression_span = Some(span);
    }
    match opts.take_string("json.schema") {
        Err(d) => diags.push(d),
        Ok(None) => {}
        Ok(Some(_)) if f.unstructured => diags.push(
            Diagnostic::error("option 'json.schema' cannot be combined with 'json.unstructured'")
                .with_span(out.format_span.unwrap_or_default())
                .with_help(
                    "Unstructured JSON has one column, value JSON; remove one of the two options.",
                ),
        ),
        Ok(Some((text, span))) => out.schema = Some(SchemaSource::Json { text, span }),
    }
    f
}

fn avro_format(
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
    out: &mut FormatOptions,
) -> AvroFormat {
    let registry = take_flag(opts, "avro.confluent_schema_registry", diags);
    let raw = take_flag(opts, "avro.raw_datums", diags);
    let unstructured = take_flag(opts, "avro.into_unstructured_json", diags);
    if let (Some((true, _)), Some((true, span))) = (registry, raw) {
        diags.push(
            Diagnostic::error(
                "at most one of 'avro.confluent_schema_registry' and 'avro.raw_datums' may be set",
            )
            .with_span(span)
            .with_help(
                "Registry-framed messages are already single datums; keep the registry option.",
            ),
        );
    }
    let format = AvroFormat {
        confluent_schema_registry: registry.is_some_and(|(b, _)| b),
        raw_datums: raw.is_some_and(|(b, _)| b),
        into_unstructured_json: unstructured.is_some_and(|(b, _)| b),
        reader_schema: None,
        schema_id: None,
    };
    let inline = take_or_report(opts.take_string("avro.schema"), diags);
    let file = take_or_report(opts.take_string("avro.schema_file"), diags);
    match (inline, file) {
        (Some(_), Some((_, span))) => diags.push(
            Diagnostic::error("at most one of 'avro.schema' and 'avro.schema_file' may be set")
                .with_span(span)
                .with_help("Give the schema inline or as a file, not both."),
        ),
        (Some((text, span)), None) => out.schema = Some(SchemaSource::Avro { text, span }),
        (None, Some((path, span))) => match read_schema_text(std::path::Path::new(&path)) {
            Ok(text) => out.schema = Some(SchemaSource::Avro { text, span }),
            Err(e) => diags.push(
                Diagnostic::error(format!("cannot read Avro schema file '{path}': {e}"))
                    .with_span(span)
                    .with_help("Give a readable .avsc file (relative paths are resolved from the working directory), or the schema inline with 'avro.schema'."),
            ),
        },
        (None, None) => {}
    }
    format
}

fn protobuf_format(
    format_span: Span,
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
    out: &mut FormatOptions,
) -> ProtobufFormat {
    let registry = take_flag(opts, "protobuf.confluent_schema_registry", diags);
    let delimited = take_flag(opts, "protobuf.length_delimited", diags);
    let unstructured = take_flag(opts, "protobuf.into_unstructured_json", diags);
    if let (Some((true, _)), Some((true, span))) = (registry, delimited) {
        diags.push(
            Diagnostic::error("at most one of 'protobuf.confluent_schema_registry' and 'protobuf.length_delimited' may be set")
                .with_span(span)
                .with_help("Registry-framed messages carry a header, not a length prefix; choose one."),
        );
    }
    let mut format = ProtobufFormat {
        confluent_schema_registry: registry.is_some_and(|(b, _)| b),
        length_delimited: delimited.is_some_and(|(b, _)| b),
        into_unstructured_json: unstructured.is_some_and(|(b, _)| b),
        ..Default::default()
    };
    let message = take_or_report(opts.take_string("protobuf.message"), diags);
    let descriptor_file = take_or_report(opts.take_string("protobuf.descriptor_file"), diags);
    let schema_file = take_or_report(opts.take_string("protobuf.schema_file"), diags);
    let inline = take_or_report(opts.take_string("protobuf.schema"), diags);
    let imports = take_imports(opts, diags);
    let given: Vec<(&str, Span)> = [
        (
            "protobuf.descriptor_file",
            descriptor_file.as_ref().map(|(_, s)| *s),
        ),
        (
            "protobuf.schema_file",
            schema_file.as_ref().map(|(_, s)| *s),
        ),
        ("protobuf.schema", inline.as_ref().map(|(_, s)| *s)),
    ]
    .into_iter()
    .filter_map(|(k, s)| s.map(|s| (k, s)))
    .collect();
    if let Some((_, span)) = imports.values().next()
        && inline.is_none()
    {
        diags.push(
            Diagnostic::error("'protobuf.import.*' options need 'protobuf.schema'")
                .with_span(*span)
                .with_help("Imports supplement an inline schema; a .proto file's imports are read from its directory."),
        );
    }
    let mut inline_source = None;
    let descriptor = match (descriptor_file, schema_file, inline) {
        _ if given.len() > 1 => {
            diags.push(
                Diagnostic::error(format!(
                    "at most one of 'protobuf.descriptor_file', 'protobuf.schema_file' and 'protobuf.schema' may be set, but {} are",
                    given.iter().map(|(k, _)| format!("'{k}'")).collect::<Vec<_>>().join(" and ")
                ))
                .with_span(given[1].1)
                .with_help("Give either the compiled descriptor set, the .proto file, or the .proto source."),
            );
            None
        }
        (None, None, Some((source, span))) => {
            let deps: std::collections::BTreeMap<String, String> = imports
                .into_iter()
                .map(|(path, (text, _))| (path, text))
                .collect();
            let mut files = deps.clone();
            files.insert(INLINE_PROTO.to_string(), source.clone());
            match crate::references::compile_proto_sources(INLINE_PROTO, &files) {
                Ok(bytes) => {
                    inline_source = Some((source, deps));
                    Some((bytes, span))
                }
                Err(e) => {
                    diags.push(
                        Diagnostic::error(format!("cannot compile 'protobuf.schema': {e}"))
                            .with_span(span)
                            .with_help(format!("Fix the .proto source (it is compiled as '{INLINE_PROTO}'); give each file it imports as 'protobuf.import.<path>'. The google/protobuf well-known types are built in.")),
                    );
                    None
                }
            }
        }
        (Some((path, span)), None, None) => match read_schema_file(std::path::Path::new(&path)) {
            Ok(bytes) => Some((bytes, span)),
            Err(e) => {
                diags.push(
                    Diagnostic::error(format!("cannot read Protobuf descriptor file '{path}': {e}"))
                        .with_span(span)
                        .with_help("Give a FileDescriptorSet written by protoc --include_imports --descriptor_set_out=FILE (relative paths are resolved from the working directory)."),
                );
                None
            }
        },
        (None, Some((path, span)), None) => match compile_proto(&path) {
            Ok(bytes) => Some((bytes, span)),
            Err(e) => {
                diags.push(
                    Diagnostic::error(format!("cannot compile Protobuf schema file '{path}': {e}"))
                        .with_span(span)
                        .with_help("Fix the .proto file; imports are looked up next to it, and the google/protobuf well-known types are built in."),
                );
                None
            }
        },
        // Registry-framed tables read the schema from the registry instead.
        (None, None, None) if format.confluent_schema_registry => None,
        _ => {
            diags.push(
                Diagnostic::error("format 'protobuf' needs the message's schema")
                    .with_span(format_span)
                    .with_help("Add 'protobuf.descriptor_file' = 'FILE.binpb' (a compiled descriptor set), 'protobuf.schema_file' = 'FILE.proto' or 'protobuf.schema' = '<.proto source>', and 'protobuf.message' = 'package.Message'; or set 'protobuf.confluent_schema_registry' to read it from the schema registry."),
            );
            None
        }
    };
    match (descriptor, message) {
        (Some((bytes, _)), Some((name, span))) => {
            format.compiled_schema = Some(bytes.clone());
            format.message_name = Some(name.clone());
            out.schema = Some(SchemaSource::Protobuf {
                descriptor: bytes,
                message: name,
                span,
                source: inline_source,
            });
        }
        (Some((bytes, _)), None) => {
            format.compiled_schema = Some(bytes);
            diags.push(
                Diagnostic::error(
                    "format 'protobuf' needs 'protobuf.message', the message the table holds",
                )
                .with_span(format_span)
                .with_help("Add 'protobuf.message' = 'package.Message' (fully qualified)."),
            );
        }
        (None, message) => format.message_name = message.map(|(m, _)| m),
    }
    format
}

/// The name an inline `protobuf.schema` is compiled under.
const INLINE_PROTO: &str = "schema.proto";

/// The `protobuf.import.<path>` options: imported sources by path.
fn take_imports(
    opts: &mut WithOptions,
    diags: &mut Vec<Diagnostic>,
) -> std::collections::BTreeMap<String, (String, Span)> {
    let mut out = std::collections::BTreeMap::new();
    for o in opts.take_prefixed("protobuf.import.") {
        let path = o.key["protobuf.import.".len()..].to_string();
        match &o.value {
            tributary_types::OptionValue::String(text) if !path.is_empty() => {
                out.insert(path, (text.clone(), o.value_span));
            }
            _ => diags.push(
                Diagnostic::error(format!(
                    "'{}' must be a string: the imported file's source",
                    o.key
                ))
                .with_span(o.value_span)
                .with_help("Write 'protobuf.import.<import path>' = '<.proto source>'."),
            ),
        }
    }
    out
}

/// Compile a `.proto` file (and its imports, looked up in its directory) into a
/// descriptor set, without protoc.
fn compile_proto(path: &str) -> Result<Vec<u8>, String> {
    let path = std::path::Path::new(path);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or("the path names no file")?;
    // The file itself is checked like any schema file before the compiler opens it.
    read_schema_file(path)?;
    let mut chain = protox::file::ChainFileResolver::new();
    chain.add(ProtoDirectory {
        dir,
        read: Default::default(),
    });
    chain.add(protox::file::GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(chain);
    compiler.include_imports(true);
    compiler.open_file(file).map_err(|e| e.to_string())?;
    Ok(compiler.encode_file_descriptor_set())
}

/// Take a boolean option: its value and where its key is.
fn take_flag(
    opts: &mut WithOptions,
    key: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<(bool, Span)> {
    let o = opts.take(key)?;
    match to_bool(&o) {
        Ok(b) => Some((b, o.key_span)),
        Err(d) => {
            diags.push(d);
            None
        }
    }
}

fn take_or_report<T>(r: Result<Option<T>, Diagnostic>, diags: &mut Vec<Diagnostic>) -> Option<T> {
    r.unwrap_or_else(|d| {
        diags.push(d);
        None
    })
}

fn parquet_format(opts: &mut WithOptions, diags: &mut Vec<Diagnostic>) -> ParquetFormat {
    let mut f = ParquetFormat::default();
    let codecs = ["uncompressed", "snappy", "gzip", "zstd", "lz4", "lz4_raw"];
    if let Some((v, _)) = take_enum(opts, "parquet.compression", &codecs, diags) {
        f.compression = match v.as_str() {
            "uncompressed" => ParquetCompression::Uncompressed,
            "snappy" => ParquetCompression::Snappy,
            "gzip" => ParquetCompression::Gzip,
            "lz4" => ParquetCompression::Lz4,
            "lz4_raw" => ParquetCompression::Lz4Raw,
            _ => ParquetCompression::Zstd,
        };
    }
    if let Some(o) = opts.take("parquet.row_group_size") {
        let parsed = match &o.value {
            tributary_types::OptionValue::Number(s) | tributary_types::OptionValue::String(s) => {
                parse_data_size(s)
            }
            _ => Err(format!(
                "expected a data size such as '128mb', but it is {}",
                o.value_kind()
            )),
        };
        match parsed {
            Ok(0) => diags.push(
                Diagnostic::error("option 'parquet.row_group_size' must be greater than 0")
                    .with_span(o.value_span)
                    .with_help("Use a size such as '128mb'."),
            ),
            Ok(n) => f.row_group_bytes = Some(n),
            Err(e) => diags.push(
                Diagnostic::error(format!(
                    "invalid value for option 'parquet.row_group_size': {e}"
                ))
                .with_span(o.value_span)
                .with_help("Use a size such as '128mb'."),
            ),
        }
    }
    f
}

/// Take a string option whose value must be one of `allowed` (case-insensitively).
fn take_enum(
    opts: &mut WithOptions,
    key: &str,
    allowed: &[&str],
    diags: &mut Vec<Diagnostic>,
) -> Option<(String, Span)> {
    match opts.take_string(key) {
        Err(d) => {
            diags.push(d);
            None
        }
        Ok(None) => None,
        Ok(Some((v, span))) => {
            let norm = v.to_ascii_lowercase();
            // Arroyo spells this one 'UnixMillis' too.
            let norm = if norm == "unixmillis" {
                "unix_millis".to_string()
            } else {
                norm
            };
            if allowed.contains(&norm.as_str()) {
                Some((norm, span))
            } else {
                diags.push(not_allowed(key, &v, allowed, span));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_types::{Location, OptionValue, SqlOption};

    fn opts(pairs: &[(&str, OptionValue)]) -> WithOptions {
        let span = Span::new(Location::new(1, 1), Location::new(1, 2));
        WithOptions::new(
            pairs
                .iter()
                .map(|(k, v)| SqlOption {
                    key: k.to_string(),
                    key_span: span,
                    value: v.clone(),
                    value_span: span,
                })
                .collect(),
        )
        .0
    }

    fn s(v: &str) -> OptionValue {
        OptionValue::String(v.into())
    }

    #[test]
    fn debezium_defaults_and_json_options() {
        let mut o = opts(&[
            ("format", s("debezium_json")),
            ("json.decimal_encoding", s("string")),
            ("bad_data", s("drop")),
        ]);
        let mut d = vec![];
        let f = format_from_options(&mut o, &mut d);
        assert!(d.is_empty(), "{d:?}");
        let Some(Format::Json(j)) = f.format else {
            panic!("not json")
        };
        assert!(j.debezium);
        assert_eq!(j.timestamp_format, TimestampFormat::UnixMillis);
        assert_eq!(j.decimal_encoding, DecimalEncoding::String);
        assert_eq!(f.bad_data, Some(BadData::Drop));
        assert!(o.remaining().is_empty());
    }

    #[test]
    fn errors_are_collected() {
        let mut o = opts(&[
            ("format", s("jsn")),
            ("bad_data", s("skip")),
            (
                "framing.newline.max_length",
                OptionValue::Number("10".into()),
            ),
        ]);
        let mut d = vec![];
        format_from_options(&mut o, &mut d);
        let msgs: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "unknown format 'jsn'",
                "invalid value 'skip' for option 'bad_data'",
                "option 'framing.newline.max_length' requires framing = 'newline'"
            ]
        );
        assert_eq!(d[0].help.as_deref(), Some("Did you mean 'json'?"));
    }

    #[test]
    fn options_of_other_formats_stay_unconsumed() {
        let mut o = opts(&[
            ("format", s("raw_string")),
            ("json.unstructured", OptionValue::Bool(true)),
        ]);
        let mut d = vec![];
        let f = format_from_options(&mut o, &mut d);
        assert_eq!(f.format, Some(Format::RawString {}));
        assert_eq!(o.remaining().len(), 1);
    }

    #[test]
    fn parquet_row_group_size() {
        let mut o = opts(&[("format", s("parquet")), ("parquet.row_group_size", s("0"))]);
        let mut d = vec![];
        format_from_options(&mut o, &mut d);
        assert_eq!(
            d[0].message,
            "option 'parquet.row_group_size' must be greater than 0"
        );
    }
}
