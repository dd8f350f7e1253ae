//! SQL text Tributary writes itself: statements for definitions that arrive as data (the
//! REST API's bodies) or that must be rebuilt from a stored record (a PATCH, the check
//! that a profile change keeps its tables valid). Names are always quoted and values
//! always literals, so no input can change a statement's shape. Each piece is written on
//! lines of its own and remembered with where it came from, so a diagnostic's line names
//! the part of the input it is about. The text may hold secrets: it is run, never shown.

use tributary_types::{ConnectionTable, Diagnostic, OptionValue, SourceField};

/// A statement Tributary wrote.
#[derive(Debug, Clone, Default)]
pub struct WrittenStatement {
    /// The SQL text.
    pub sql: String,
    /// (first line, last line, origin) of each piece.
    origins: Vec<(u64, u64, String)>,
    /// Input paths nothing used (config keys no option produces).
    pub ignored: Vec<String>,
    /// For ignored paths that look misspelt: the option meant.
    pub hints: std::collections::BTreeMap<String, String>,
    /// Read-only fields given in the body (Arroyo's responses carry them), not used.
    pub read_only: Vec<String>,
    line: u64,
}

impl WrittenStatement {
    pub fn new() -> Self {
        Self {
            line: 1,
            ..Default::default()
        }
    }

    /// Record the config keys `options` ignored (paths under `/config`), with the option
    /// each may have meant.
    pub fn ignore_config(&mut self, options: &tributary_connectors::ConfigOptions) {
        for p in &options.ignored {
            let path = format!("/config{p}");
            if let Some(near) = options.suggestions.get(p) {
                self.hints.insert(path.clone(), near.clone());
            }
            self.ignored.push(path);
        }
    }

    /// Append `text` as coming from `path`.
    pub fn push(&mut self, text: &str, path: &str) {
        let first = self.line;
        self.sql.push_str(text);
        self.line += text.matches('\n').count() as u64;
        self.origins.push((first, self.line, path.to_string()));
    }

    /// Append text that no body field stands for.
    pub fn raw(&mut self, text: &str) {
        self.sql.push_str(text);
        self.line += text.matches('\n').count() as u64;
    }

    /// Where the piece a diagnostic points at came from, from its line.
    pub fn path_of(&self, d: &Diagnostic) -> Option<String> {
        let line = d.span.filter(|s| s.is_known())?.start.line;
        self.origins
            .iter()
            .find(|(first, last, _)| (*first..=*last).contains(&line))
            .map(|(_, _, p)| p.clone())
    }
}

/// A name as a quoted SQL identifier, whatever it holds.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A string literal.
pub fn literal(s: &str) -> String {
    OptionValue::String(s.to_string()).to_string()
}

/// An option line, `'key' = value`.
pub fn option(key: &str, value: &OptionValue) -> String {
    format!("{} = {value}", literal(key))
}

/// The pieces of a table definition, before they are written out.
#[derive(Debug, Clone, Default)]
pub struct TableParts {
    /// Column lines, with their body paths.
    pub columns: Vec<(String, String)>,
    /// Options, with their body paths.
    pub options: Vec<(String, OptionValue, String)>,
    /// Lines after the columns (`WATERMARK FOR`, `PRIMARY KEY`), with their paths.
    pub constraints: Vec<(String, String)>,
    /// `PARTITIONED BY` expressions.
    pub partitioned_by: Vec<String>,
    /// `CREATE TEMPORARY TABLE`.
    pub temporary: bool,
}

impl TableParts {
    /// Add the `connector` and `connection_profile` options, from the body fields
    /// that carry them.
    pub fn set_connection(&mut self, connector: &str, profile: Option<&str>) {
        self.options.push((
            "connector".into(),
            OptionValue::String(connector.into()),
            "/connector".into(),
        ));
        if let Some(p) = profile {
            self.options.push((
                "connection_profile".into(),
                OptionValue::String(p.into()),
                "/connection_profile_id".into(),
            ));
        }
    }

    /// Write `CREATE TABLE name (...) WITH (...)`.
    pub fn statement(&self, name: &str) -> WrittenStatement {
        let mut s = WrittenStatement::new();
        let temporary = if self.temporary { "TEMPORARY " } else { "" };
        s.push(&format!("CREATE {temporary}TABLE {}", ident(name)), "/name");
        let lines: Vec<&(String, String)> = self.columns.iter().chain(&self.constraints).collect();
        if !lines.is_empty() {
            s.raw(" (\n");
            for (i, (line, path)) in lines.iter().enumerate() {
                if i > 0 {
                    s.raw(",\n");
                }
                s.push(&format!("  {line}"), path);
            }
            s.raw("\n)");
        }
        s.raw(" WITH (\n");
        for (i, (key, value, path)) in self.options.iter().enumerate() {
            if i > 0 {
                s.raw(",\n");
            }
            let line = match key.as_str() {
                "connector" | "connection_profile" => format!("  {key} = {value}"),
                _ => format!("  {}", option(key, value)),
            };
            s.push(&line, path);
        }
        s.raw("\n)");
        if !self.partitioned_by.is_empty() {
            s.raw(&format!(
                " PARTITIONED BY ({})",
                self.partitioned_by.join(", ")
            ));
        }
        s
    }
}

/// Whether an option belongs to the schema part of a table (set from `schema`).
pub fn is_schema_option(key: &str) -> bool {
    matches!(key, "format" | "bad_data" | "framing")
        || ["json.", "avro.", "protobuf.", "parquet.", "framing."]
            .iter()
            .any(|p| key.starts_with(p))
}

pub fn column(f: &SourceField) -> String {
    let mut line = format!("{} {}", ident(&f.name), f.field_type.sql_name());
    if f.required {
        line.push_str(" NOT NULL");
    }
    if let Some(key) = &f.metadata_key {
        line.push_str(&format!(" METADATA FROM {}", literal(key)));
    }
    line
}

/// The origin of virtual-column lines (a replacement schema keeps them).
pub const VIRTUAL_COLUMNS: &str = "/virtual_columns";

use tributary_types::column_origin::DOCUMENTS as DOCUMENT_ORIGINS;

/// The parts of a stored table's definition, with its secrets as stored, naming
/// `profile` as its profile: running them rebuilds the same table. Columns a schema
/// document gave are written as `*`; columns a connector or format fills are left out.
pub fn table_parts_of(t: &ConnectionTable, profile: Option<&str>) -> TableParts {
    let mut parts = TableParts {
        temporary: t.temporary,
        partitioned_by: t.partitioned_by.clone(),
        ..Default::default()
    };
    let origins = &t.schema.column_origins;
    let mut columns: Vec<(usize, String, &str)> = Vec::new();
    let virtual_positions: Vec<usize> = t.virtual_columns.iter().map(|v| v.position).collect();
    let mut next = 0usize;
    let mut star = false;
    let awaiting = t.awaits_inferred_schema();
    for f in &t.schema.fields {
        while virtual_positions.contains(&next) {
            next += 1;
        }
        match origins.get(&f.name).map(String::as_str) {
            None if !awaiting => columns.push((next, column(f), "/schema/fields")),
            Some(o) if DOCUMENT_ORIGINS.contains(&o) && !star => {
                star = true;
                columns.push((next, "*".into(), "/schema/fields"));
            }
            _ => {}
        }
        next += 1;
    }
    for v in &t.virtual_columns {
        let stored = if v.stored { " STORED" } else { "" };
        columns.push((
            v.position,
            format!(
                "{} {} GENERATED ALWAYS AS ({}){stored}",
                ident(&v.name),
                v.field_type.sql_name(),
                v.expression
            ),
            VIRTUAL_COLUMNS,
        ));
    }
    columns.sort_by_key(|(p, _, _)| *p);
    parts.columns = columns
        .into_iter()
        .map(|(_, line, origin)| (line, origin.into()))
        .collect();
    if let Some(w) = &t.watermark {
        let line = match &w.expression {
            Some(e) => format!("WATERMARK FOR {} AS {e}", ident(&w.column)),
            None => format!("WATERMARK FOR {}", ident(&w.column)),
        };
        parts.constraints.push((line, "/schema".into()));
    }
    if !t.schema.primary_keys.is_empty() {
        let keys: Vec<String> = t.schema.primary_keys.iter().map(|k| ident(k)).collect();
        parts.constraints.push((
            format!("PRIMARY KEY ({})", keys.join(", ")),
            "/schema/primary_keys".into(),
        ));
    }
    parts.set_connection(&t.connector, profile);
    for o in &t.options {
        if o.key == "connector" || o.key == "connection_profile" {
            continue;
        }
        let path = if is_schema_option(&o.key) {
            "/schema"
        } else {
            "/config"
        };
        parts
            .options
            .push((o.key.clone(), o.value.clone(), path.into()));
    }
    // A schema fetched from a registry is pinned by id, so the rebuilt table reads the
    // same schema (SHOW CREATE does the same).
    if let Some(r) = &t.registry
        && !t
            .options
            .iter()
            .any(|o| o.key == "schema_registry.id" || o.key == "schema_registry.version")
    {
        parts.options.push((
            "schema_registry.id".into(),
            OptionValue::String(r.id.to_string()),
            "/schema".into(),
        ));
    }
    parts
}

/// The statement that recreates a view or declared function.
pub fn create_definition(d: &tributary_types::Definition) -> String {
    use tributary_types::DefinitionBody;
    match &d.body {
        DefinitionBody::View { query, columns, .. } => {
            let names = if columns.is_empty() {
                String::new()
            } else {
                let list: Vec<String> = columns.iter().map(|c| ident(c)).collect();
                format!(" ({})", list.join(", "))
            };
            format!("CREATE VIEW {}{names} AS\n{query}", ident(&d.name))
        }
        DefinitionBody::Function(sig) => {
            let kind = if sig.aggregate {
                "AGGREGATE "
            } else if sig.is_async {
                "ASYNC "
            } else {
                ""
            };
            let args: Vec<String> = sig
                .args
                .iter()
                .map(|a| match &a.name {
                    Some(n) => format!("{} {}", ident(n), a.data_type),
                    None => a.data_type.clone(),
                })
                .collect();
            let language = sig
                .language
                .as_ref()
                .map(|l| format!(" LANGUAGE {l}"))
                .unwrap_or_default();
            format!(
                "CREATE {kind}FUNCTION {}({}) RETURNS {}{language}",
                ident(&d.name),
                args.join(", "),
                sig.returns
            )
        }
    }
}
