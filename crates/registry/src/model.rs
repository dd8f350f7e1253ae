//! The registry's documents: a registered schema, its type and its references.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The kind of schema a registry entry holds (`schemaType`; absent means Avro).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum SchemaType {
    /// Avro (the registry's default).
    #[default]
    Avro,
    /// JSON Schema.
    Json,
    /// Protobuf `.proto` text.
    Protobuf,
}

impl fmt::Display for SchemaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SchemaType::Avro => "AVRO",
            SchemaType::Json => "JSON",
            SchemaType::Protobuf => "PROTOBUF",
        })
    }
}

/// Which version of a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The newest.
    Latest,
    /// A pinned version number.
    Number(u32),
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::Latest => f.write_str("latest"),
            Version::Number(n) => write!(f, "{n}"),
        }
    }
}

/// A reference from one schema to another subject's version (an Avro named type, a
/// Protobuf import, a JSON Schema `$ref`), by the name the referring schema uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The name the referring schema uses (the import path, the type's full name).
    pub name: String,
    /// The subject holding it.
    pub subject: String,
    /// The version of that subject.
    pub version: u32,
}

/// A schema as the registry holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredSchema {
    /// The global id, which messages carry in their header. Known when fetched by
    /// subject; by id, it is the id asked for.
    #[serde(default)]
    pub id: u32,
    /// The subject, when fetched by subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The version within the subject, when fetched by subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The schema's kind.
    #[serde(default)]
    pub schema_type: SchemaType,
    /// The schema text.
    pub schema: String,
    /// Other subjects' schemas this one refers to.
    #[serde(default)]
    pub references: Vec<Reference>,
}
