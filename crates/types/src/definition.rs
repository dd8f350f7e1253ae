//! The SQL objects the catalog keeps beside connection tables: views and declared
//! functions. Each is stored by name with the names it reads, so the catalog can refuse
//! to drop what something still uses.

use crate::records::CURRENT_FORMAT_VERSION;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefinitionKind {
    /// `CREATE VIEW`: a named query, read like a table.
    View,
    /// `CREATE FUNCTION`: a user-defined function's signature (its body lives elsewhere).
    Function,
}

impl DefinitionKind {
    /// The namespace its name lives in: views share tables' names, functions have their
    /// own.
    pub fn namespace(self) -> Namespace {
        match self {
            DefinitionKind::View => Namespace::Relation,
            DefinitionKind::Function => Namespace::Function,
        }
    }
}

impl fmt::Display for DefinitionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DefinitionKind::View => "view",
            DefinitionKind::Function => "function",
        })
    }
}

/// The namespaces names are unique in (case-insensitively).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Namespace {
    /// Tables and views: what a query's FROM names.
    Relation,
    /// Declared functions.
    Function,
}

impl Namespace {
    /// The one-letter key prefix a store files the namespace under.
    pub fn prefix(self) -> &'static str {
        match self {
            Namespace::Relation => "r:",
            Namespace::Function => "f:",
        }
    }
}

/// A name a definition reads: a table or view, or a declared function.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Dependency {
    /// Which namespace the name is in.
    pub namespace: Namespace,
    /// The name as the catalog stores it.
    pub name: String,
}

impl Dependency {
    /// A table or view.
    pub fn relation(name: impl Into<String>) -> Self {
        Self {
            namespace: Namespace::Relation,
            name: name.into(),
        }
    }

    /// A declared function.
    pub fn function(name: impl Into<String>) -> Self {
        Self {
            namespace: Namespace::Function,
            name: name.into(),
        }
    }

    /// The key a store indexes it by: namespace prefix and lowercase name.
    pub fn key(&self) -> String {
        format!("{}{}", self.namespace.prefix(), self.name.to_lowercase())
    }
}

/// One argument of a declared function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionArg {
    /// Its name, if one was written.
    pub name: Option<String>,
    /// Its SQL type as written (normalised by the parser).
    pub data_type: String,
}

/// What a declared function is called like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionSignature {
    /// The arguments in order.
    pub args: Vec<FunctionArg>,
    /// The result's SQL type.
    pub returns: String,
    /// An aggregate (UDAF) rather than a scalar function.
    pub aggregate: bool,
    /// An async scalar function (Arroyo's async UDFs).
    pub is_async: bool,
    /// The language its body is written in, when given (`rust`, `python`).
    pub language: Option<String>,
}

/// What kind-specific facts a definition carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DefinitionBody {
    /// A view: its query as written, and its column names when the statement lists them.
    View {
        /// The `SELECT` (or `VALUES`, `WITH`) text after `AS`.
        query: String,
        /// `CREATE VIEW v (a, b) AS ...`: the names given to its columns.
        columns: Vec<String>,
        /// How many views deep it reads (1 reads only tables): bounds expansion.
        depth: u32,
    },
    /// A declared function.
    Function(FunctionSignature),
}

/// A view or a declared function, as the catalog persists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// The record format.
    pub format_version: u32,
    /// Its name as written (unique case-insensitively in its namespace).
    pub name: String,
    /// What it is.
    pub body: DefinitionBody,
    /// The tables, views and functions it reads.
    pub reads: Vec<Dependency>,
    /// When it was created (microseconds since the epoch).
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
}

impl Definition {
    /// A new definition record.
    pub fn new(name: String, body: DefinitionBody, reads: Vec<Dependency>, now: i64) -> Self {
        Self {
            format_version: CURRENT_FORMAT_VERSION,
            name,
            body,
            reads,
            created_at: now,
            updated_at: now,
        }
    }

    /// What it is.
    pub fn kind(&self) -> DefinitionKind {
        match self.body {
            DefinitionBody::View { .. } => DefinitionKind::View,
            DefinitionBody::Function(_) => DefinitionKind::Function,
        }
    }

    /// The name it is known by, as a [`Dependency`] of whatever reads it.
    pub fn as_dependency(&self) -> Dependency {
        Dependency {
            namespace: self.kind().namespace(),
            name: self.name.clone(),
        }
    }

    /// The key a store files it under: namespace prefix and lowercase name.
    pub fn key(&self) -> String {
        self.as_dependency().key()
    }
}
