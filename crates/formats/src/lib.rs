//! Formats: which wire formats exist, the options each takes, and how a WITH clause's
//! format options become a [`Format`], [`BadData`] and [`Framing`].
//!
//! Schema work: [`fields_from_json_schema`], [`fields_from_avro_schema`] and
//! [`fields_from_protobuf`] (schema documents → columns, bounded by
//! `tributary_types::limits`), and [`infer_fields`] (columns from sample messages). The
//! codecs: [`BatchDecoder`] and [`RowEncoder`]. The option registry here is the single
//! source of truth for `DESCRIBE CONNECTOR` and did-you-mean suggestions.

mod avro_decode;
mod avro_encode;
mod avro_plan;
mod avro_schema;
mod columns;
mod debezium;
mod decode;
mod encode;
mod expanded;
mod failure;
mod from_options;
mod infer;
mod json_rewrite;
mod json_schema;
mod parquet_files;
mod proto_decode;
mod proto_encode;
mod proto_schema;
mod references;
mod registry;
mod schema_files;
mod wire;

pub use avro_decode::AvroSchemaLookup;
pub use avro_encode::avro_schema_for_fields;
pub use avro_schema::{AvroSchemaError, fields_from_avro_schema, parse_avro_schema};
pub use debezium::CHANGE_COLUMN;
pub use decode::{BatchDecoder, DecodeError, Dropped};
pub use encode::{EncodeError, RowEncoder};
pub use expanded::{ColumnNote, ExpandedSchema};
pub use from_options::{FormatOptions, SchemaSource, format_from_options};
pub use infer::{InferError, infer_fields};
pub use json_schema::{JsonSchemaError, fields_from_json_schema, json_schema_for_fields};
pub use proto_schema::{ProtoSchemaError, fields_from_protobuf, parse_descriptor_set};
pub use references::{
    compile_proto_sources, inline_avro_references, inline_json_schema_references,
};
pub use registry::{
    FORMATS, FormatOption, FormatSpec, GENERIC_FORMAT_OPTIONS, all_format_keys, format_spec,
};

#[doc(no_inline)]
pub use tributary_types::{BadData, Format, Framing};
