//! Completion and hints for SQL being typed, from the same connector registry, format
//! registry and catalog that validation uses: statement keywords; table, profile and
//! connector names where a name fits; inside `WITH (...)` the option keys of the
//! connector named so far (without those already given) and, after `=`, an option's
//! allowed values, profiles, formats or the profile's live names (Kafka topics and the
//! like); columns in queries and `WATERMARK FOR`; metadata keys after `METADATA FROM`.
//!
//! A [`Completer`] never touches the network: live names come from the function given
//! to [`Completer::with_live_names`], which answers from what it has (and may fetch in
//! the background). Catalog names are cached until the catalog's generation changes, so
//! a keystroke costs a prefix filter, not a catalog scan.

mod context;
mod live;
mod names;
mod options;

pub use live::{BackgroundLiveNames, LOOKUP_TIMEOUT};
pub use names::{NameSnapshot, NameSource, SnapshotTable, StoreNames};

use context::{Context, TableRef};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tributary_catalog::CatalogStore;

/// What a candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CandidateKind {
    /// A keyword or keyword phrase.
    Keyword,
    /// A connection table.
    Table,
    /// A connection profile.
    Profile,
    /// A connector id.
    Connector,
    /// An option key.
    OptionKey,
    /// An option value.
    Value,
    /// A column.
    Column,
    /// A connector's metadata key.
    MetadataKey,
    /// A column type.
    Type,
}

/// One completion candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// What replaces the word being typed.
    pub text: String,
    /// What it is.
    pub kind: CandidateKind,
    /// A short description: an option's type and default, a column's type, a table's
    /// connector.
    pub detail: String,
}

/// Candidates for the word at the cursor, which starts at `start`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    /// Byte offset where the word being completed starts.
    pub start: usize,
    /// The candidates, in the order to show them.
    pub candidates: Vec<Candidate>,
}

/// A hint to show beside the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The text to show.
    pub text: String,
    /// Whether it is the rest of the one candidate (accepting it completes the word),
    /// rather than a description (an option's type and default).
    pub completes: bool,
}

/// The live names a profile offers (topics, ...), if known now; never blocks.
pub type LiveNames = Arc<dyn Fn(&str) -> Option<Vec<String>> + Send + Sync>;

/// Completes statements against one catalog.
pub struct Completer {
    names: Arc<dyn NameSource>,
    live: Option<LiveNames>,
    cache: Mutex<Cached>,
}

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completer").finish_non_exhaustive()
    }
}

/// Catalog names as of one generation.
#[derive(Default)]
struct Cached {
    generation: Option<u64>,
    /// Table names (with an empty detail), sorted.
    tables: Arc<Vec<(String, String)>>,
    /// Profile names and connectors, sorted.
    profiles: Arc<Vec<(String, String)>>,
    /// Columns by lower-case table name: name and type.
    columns: HashMap<String, Arc<Vec<(String, String)>>>,
}

/// The most candidates returned; the rest are reached by typing more.
const MAX_CANDIDATES: usize = 500;

impl Completer {
    /// A completer over `store`.
    pub fn new(store: Arc<dyn CatalogStore>) -> Self {
        Self::over(Arc::new(StoreNames(store)))
    }

    /// A completer over the names `names` gives (a server's, say).
    pub fn over(names: Arc<dyn NameSource>) -> Self {
        Self {
            names,
            live: None,
            cache: Mutex::new(Cached::default()),
        }
    }

    /// Offer a profile's live names (from `live`) after its table's name option.
    pub fn with_live_names(mut self, live: LiveNames) -> Self {
        self.live = Some(live);
        self
    }

    /// The candidates for the word at `cursor` (a byte offset) in `text`.
    pub fn complete(&self, text: &str, cursor: usize) -> Completion {
        let at = context::at(text, cursor);
        let typed = at.prefix.as_str();
        let mut candidates = self.candidates(&at.context, typed);
        candidates.retain(|c| matches_prefix(&c.text, typed));
        candidates.truncate(MAX_CANDIDATES);
        // Keywords are offered in the case the user types them in.
        if typed.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
            for c in &mut candidates {
                if matches!(c.kind, CandidateKind::Keyword | CandidateKind::Type) {
                    c.text = c.text.to_ascii_lowercase();
                }
            }
        }
        Completion {
            start: at.start,
            candidates,
        }
    }

    /// A hint for the cursor: the rest of the only candidate, or, where an option's value
    /// is to be typed, the option's type and default.
    pub fn hint(&self, text: &str, cursor: usize) -> Option<Hint> {
        if cursor != text.len() {
            return None;
        }
        let at = context::at(text, cursor);
        if let Context::OptionValue { options, key } = &at.context
            && at.prefix.is_empty()
        {
            let target = self.target(options);
            return options::describe(&target, options, key).map(|d| Hint {
                text: d,
                completes: false,
            });
        }
        if at.prefix.is_empty() {
            return None;
        }
        let done = self.complete(text, cursor);
        match done.candidates.as_slice() {
            [only] if only.text.len() > at.prefix.len() => {
                let rest = only.text.get(at.prefix.len()..)?;
                Some(Hint {
                    text: rest.to_string(),
                    completes: true,
                })
            }
            _ => None,
        }
    }

    /// The candidates of `context`; catalog names are filtered by what was `typed`
    /// before a candidate is made for them (there may be 100,000).
    fn candidates(&self, context: &Context, typed: &str) -> Vec<Candidate> {
        match context {
            Context::Keywords(words) => keywords(words, CandidateKind::Keyword),
            Context::ColumnTypes => keywords(context::column_types(), CandidateKind::Type),
            Context::Tables(extra) => {
                let mut out: Vec<Candidate> = self
                    .names()
                    .0
                    .iter()
                    .filter(|(name, _)| ident_matches(name, typed))
                    .map(|(name, connector)| Candidate {
                        text: quote_ident(name),
                        kind: CandidateKind::Table,
                        detail: connector.clone(),
                    })
                    .collect();
                out.extend(keywords(extra, CandidateKind::Keyword));
                out
            }
            Context::Profiles => self
                .names()
                .1
                .iter()
                .filter(|(name, _)| ident_matches(name, typed))
                .map(|(name, connector)| Candidate {
                    text: quote_ident(name),
                    kind: CandidateKind::Profile,
                    detail: connector.clone(),
                })
                .collect(),
            Context::Connectors => options::connectors(false),
            Context::OptionKey { options, .. } => options::keys(&self.target(options), options),
            Context::OptionValue { options, key } => {
                let target = self.target(options);
                let profiles = || self.names().1;
                let live = |profile: &str| self.live.as_ref().and_then(|f| f(profile));
                options::values(&target, options, key, &profiles, &live)
            }
            Context::Columns { tables, qualifier } => self.columns(tables, qualifier.as_deref()),
            Context::DeclaredColumns(names) => names
                .iter()
                .map(|n| Candidate {
                    text: quote_ident(n),
                    kind: CandidateKind::Column,
                    detail: String::new(),
                })
                .collect(),
            Context::MetadataKeys { connector } => options::metadata_keys(connector.as_deref()),
            Context::Nothing => Vec::new(),
        }
    }

    /// What an option list configures: its connector (named, or its profile's) and
    /// profile.
    fn target(&self, options: &context::Options) -> options::Target {
        let profiles = self.names().1;
        let connector_of = |name: &str| {
            profiles
                .iter()
                .find(|(p, _)| p.eq_ignore_ascii_case(name))
                .map(|(_, c)| c.clone())
        };
        let profile = options
            .value("connection_profile")
            .map(str::to_string)
            .or_else(|| options.altered.clone());
        let connector = options
            .value("connector")
            .map(str::to_string)
            .or_else(|| profile.as_deref().and_then(connector_of));
        options::Target {
            for_profile: options.profile,
            connector,
            profile,
        }
    }

    /// The columns of the tables a query reads (of one, when qualified).
    fn columns(&self, tables: &[TableRef], qualifier: Option<&str>) -> Vec<Candidate> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for t in tables {
            let named = |q: &str| {
                t.alias
                    .as_deref()
                    .is_some_and(|a| a.eq_ignore_ascii_case(q))
                    || t.name.eq_ignore_ascii_case(q)
            };
            if qualifier.is_some_and(|q| !named(q)) {
                continue;
            }
            for (name, ty) in self.table_columns(&t.name).iter() {
                if seen.insert(name.to_ascii_lowercase()) {
                    out.push(Candidate {
                        text: quote_ident(name),
                        kind: CandidateKind::Column,
                        detail: ty.clone(),
                    });
                }
            }
        }
        out
    }

    /// Table and profile names, refreshed when the catalog changed.
    #[allow(clippy::type_complexity)]
    fn names(&self) -> (Arc<Vec<(String, String)>>, Arc<Vec<(String, String)>>) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let generation = self.names.generation();
        if cache.generation != Some(generation) {
            // Names only: decoding every table for its connector would cost a catalog
            // scan per change at 10,000 tables.
            let mut tables: Vec<(String, String)> = self
                .names
                .table_names()
                .into_iter()
                .map(|name| (name, String::new()))
                .collect();
            tables.sort();
            let mut profiles = self.names.profiles();
            profiles.sort();
            *cache = Cached {
                generation: Some(generation),
                tables: Arc::new(tables),
                profiles: Arc::new(profiles),
                columns: HashMap::new(),
            };
        }
        (cache.tables.clone(), cache.profiles.clone())
    }

    /// A table's columns (physical, metadata and virtual), cached with the names.
    fn table_columns(&self, name: &str) -> Arc<Vec<(String, String)>> {
        self.names();
        let key = name.to_ascii_lowercase();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = cache.columns.get(&key) {
            return c.clone();
        }
        let columns = Arc::new(self.names.columns(name));
        cache.columns.insert(key, columns.clone());
        columns
    }
}

/// Candidates for keywords.
fn keywords(words: &[&str], kind: CandidateKind) -> Vec<Candidate> {
    words
        .iter()
        .map(|w| Candidate {
            text: (*w).to_string(),
            kind,
            detail: String::new(),
        })
        .collect()
}

/// Whether `candidate` completes what was typed: a case-insensitive prefix, quotes
/// included (`'ear` completes `'earliest'`).
fn matches_prefix(candidate: &str, typed: &str) -> bool {
    candidate
        .get(..typed.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(typed))
}

/// Whether the name, as it must be typed, completes what was typed; without making a
/// string for a plain name.
fn ident_matches(name: &str, typed: &str) -> bool {
    if is_plain(name) {
        matches_prefix(name, typed)
    } else {
        matches_prefix(&quote_ident(name), typed)
    }
}

/// A plain lower-case identifier, typed without quotes.
fn is_plain(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A name as it must be typed: bare when it is a plain lower-case identifier, else in
/// double quotes.
fn quote_ident(name: &str) -> String {
    if is_plain(name) {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests;
