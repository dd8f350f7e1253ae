//! Declarations a connector makes about its SQL options: which WITH key lands where in its
//! JSON config, under which condition, and how the value is read.

/// How a WITH value is turned into JSON. `Auto` follows the JSON Schema type of the target
/// property; the others cover SQL forms a schema type cannot tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// By the schema's `type`: string, integer, number, boolean, an array of strings (an
    /// array or a comma-separated string), or an object of strings (`'k=v,k2=v2'`).
    Auto,
    /// An interval (`INTERVAL '5' SECOND`), stored as whole seconds.
    IntervalSeconds,
    /// An interval, stored as whole milliseconds.
    IntervalMillis,
    /// An interval, stored as whole microseconds.
    IntervalMicros,
    /// A data size (`'64mb'`), stored as bytes.
    DataSize,
    /// A column name: a bare identifier (or, for compatibility, a string).
    Field,
    /// An enum whose JSON spelling is PascalCase (`AtLeastOnce`): SQL may write it that way
    /// or in snake case (`at_least_once`).
    Pascal,
}

/// Where an option's value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Into the JSON config at this JSON Pointer (`/type/offset`).
    Pointer(&'static str),
    /// Every option whose key starts with this prefix (`storage.`) goes into the object at
    /// `pointer`, keyed by the rest of the key.
    Prefixed {
        /// The object's JSON Pointer.
        pointer: &'static str,
        /// What the entries are.
        description: &'static str,
    },
    /// Numbered keys (`subscription_messages.0`, `.1`, ...) collected in order into the
    /// array at `pointer`; the numbers must run from 0 without gaps.
    Indexed {
        /// The array's JSON Pointer.
        pointer: &'static str,
        /// What the entries are.
        description: &'static str,
    },
    /// Nowhere in the config: the value selects a variant (`type = 'source'`) and is only
    /// used by conditions.
    Selector {
        /// The allowed values.
        values: &'static [&'static str],
        /// The value when the option is absent; `None` makes the option required.
        default: Option<&'static str>,
        /// What it chooses.
        description: &'static str,
    },
}

/// A condition on another option (a selector, or a string option declared earlier): the
/// option applies only when `key` has one of `values`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition {
    /// The selector's SQL key.
    pub key: &'static str,
    /// The values under which the option applies.
    pub values: &'static [&'static str],
}

/// One SQL WITH key of a connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    /// The SQL key, `source.offset`.
    pub key: &'static str,
    /// Where the value goes.
    pub target: Target,
    /// When the option applies.
    pub when: Option<Condition>,
    /// How the value is read.
    pub kind: ValueKind,
    /// Older spellings, accepted with a warning.
    pub deprecated_aliases: &'static [&'static str],
    /// For selectors: `(value, pointer)` pairs; choosing `value` puts an empty object at
    /// `pointer` (a variant without settings, such as a Fluvio sink's `"type": {}`).
    pub creates: &'static [(&'static str, &'static str)],
    /// Keys this option is an alternative to: exactly one of the group must be given (when
    /// the group is required), never two (NATS `stream` or `subject`).
    pub exclusive_with: &'static [&'static str],
}

impl OptionSpec {
    /// An option stored at `pointer`, read by the schema's type.
    pub const fn at(key: &'static str, pointer: &'static str) -> Self {
        Self {
            key,
            target: Target::Pointer(pointer),
            when: None,
            kind: ValueKind::Auto,
            deprecated_aliases: &[],
            creates: &[],
            exclusive_with: &[],
        }
    }

    /// A selector with allowed `values` and an optional default.
    pub const fn selector(
        key: &'static str,
        values: &'static [&'static str],
        default: Option<&'static str>,
        description: &'static str,
    ) -> Self {
        Self {
            key,
            target: Target::Selector {
                values,
                default,
                description,
            },
            when: None,
            kind: ValueKind::Auto,
            deprecated_aliases: &[],
            creates: &[],
            exclusive_with: &[],
        }
    }

    /// Every option starting with `prefix` (for example `storage.`) into the object at
    /// `pointer`.
    pub const fn prefixed(
        prefix: &'static str,
        pointer: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            key: prefix,
            target: Target::Prefixed {
                pointer,
                description,
            },
            when: None,
            kind: ValueKind::Auto,
            deprecated_aliases: &[],
            creates: &[],
            exclusive_with: &[],
        }
    }

    /// Numbered keys `prefix0`, `prefix1`, ... into the array at `pointer`.
    pub const fn indexed(
        prefix: &'static str,
        pointer: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            key: prefix,
            target: Target::Indexed {
                pointer,
                description,
            },
            when: None,
            kind: ValueKind::Auto,
            deprecated_aliases: &[],
            creates: &[],
            exclusive_with: &[],
        }
    }

    /// Make the option one of a group of alternatives.
    pub const fn exclusive_with(mut self, keys: &'static [&'static str]) -> Self {
        self.exclusive_with = keys;
        self
    }

    /// For a selector: choosing a value creates an empty object at a pointer.
    pub const fn creates(mut self, pairs: &'static [(&'static str, &'static str)]) -> Self {
        self.creates = pairs;
        self
    }

    /// Apply only when selector `key` is one of `values`.
    pub const fn when(mut self, key: &'static str, values: &'static [&'static str]) -> Self {
        self.when = Some(Condition { key, values });
        self
    }

    /// Read the value as `kind`.
    pub const fn kind(mut self, kind: ValueKind) -> Self {
        self.kind = kind;
        self
    }

    /// Accept older spellings with a deprecation warning.
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.deprecated_aliases = aliases;
        self
    }

    /// The JSON Pointer, for pointer targets.
    pub fn pointer(&self) -> Option<&'static str> {
        match self.target {
            Target::Pointer(p) => Some(p),
            Target::Selector { .. } | Target::Prefixed { .. } | Target::Indexed { .. } => None,
        }
    }
}

/// A metadata key a connector exposes for `METADATA FROM 'key'` columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataKey {
    /// The key.
    pub key: &'static str,
    /// The SQL type a column reading it must have.
    pub sql_type: MetadataType,
    /// What it holds.
    pub description: &'static str,
}

/// The types metadata values come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataType {
    /// `INT`.
    Int,
    /// `BIGINT`.
    BigInt,
    /// `TEXT`.
    Text,
    /// `BYTEA`.
    Bytea,
}

impl MetadataType {
    /// The field type.
    pub fn field_type(self) -> tributary_types::FieldType {
        use tributary_types::FieldType;
        match self {
            MetadataType::Int => FieldType::Int32,
            MetadataType::BigInt => FieldType::Int64,
            MetadataType::Text => FieldType::String,
            MetadataType::Bytea => FieldType::Bytes,
        }
    }
}

/// One term of `PARTITIONED BY (...)`, as the SQL layer hands it to a connector: a bare
/// column (`region`) or a call (`bucket(id, 16)`).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionTerm {
    /// The function name in lower case, `None` for a bare column.
    pub function: Option<String>,
    /// The arguments, or the one column of a bare term.
    pub args: Vec<PartitionArg>,
    /// The SQL text of the term, for messages and `SHOW CREATE TABLE`.
    pub text: String,
    /// Where the term is.
    pub span: tributary_types::Span,
}

/// An argument of a partition term.
#[derive(Debug, Clone, PartialEq)]
pub enum PartitionArg {
    /// A column name.
    Column(String),
    /// An integer literal.
    Integer(i64),
    /// Anything else, as SQL text.
    Other(String),
}
