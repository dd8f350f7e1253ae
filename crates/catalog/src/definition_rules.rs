//! The rules a batch must keep for views and declared functions, shared by every store:
//! views and tables share one namespace, what a definition reads exists, nothing is
//! dropped while something reads it, and no definition reads itself (through any chain).
//! A store answers the point lookups of [`DefinitionState`]; the rules work out the
//! state after the batch from them and the batch.

use crate::error::{CatalogError, Result};
use crate::store::{Change, ObjectKind, name_key};
use std::collections::{HashMap, HashSet};
use tributary_types::{Definition, DefinitionKind, Dependency, Namespace, TableId};

/// The committed state a batch is checked against.
pub(crate) trait DefinitionState {
    /// A table's name by id.
    fn table_name(&self, id: &TableId) -> Result<Option<String>>;
    /// Whether a table of this name exists.
    fn table_named(&self, name: &str) -> Result<Option<TableId>>;
    /// A definition by key ([`Definition::key`]).
    fn definition_at(&self, key: &str) -> Result<Option<Definition>>;
    /// The keys of the definitions that read `dependency_key` ([`Dependency::key`]).
    fn reader_keys(&self, dependency_key: &str) -> Result<Vec<String>>;
}

/// The reader-index entries a batch removes and adds: `(dependency key, reader key)`.
#[derive(Debug, Default)]
pub(crate) struct ReaderEdits {
    pub(crate) remove: Vec<(String, String)>,
    pub(crate) add: Vec<(String, String)>,
}

/// The most definitions a cycle check walks; a catalog never holds near this many views
/// reading each other, so reaching it means something is wrong, and the batch is refused.
const MAX_WALK: usize = 100_000;

/// Check the definition rules of `changes` against `state`; the reader-index edits they
/// imply.
pub(crate) fn check(state: &dyn DefinitionState, changes: &[Change]) -> Result<ReaderEdits> {
    let after = After::of(state, changes)?;
    let mut edits = ReaderEdits::default();
    for change in changes {
        match change {
            Change::PutTable(t) => {
                if after
                    .definition(&Dependency::relation(&t.name).key())?
                    .is_some()
                {
                    return Err(CatalogError::AlreadyExists {
                        kind: ObjectKind::View,
                        name: t.name.clone(),
                    });
                }
            }
            Change::PutDefinition {
                definition,
                replace,
            } => {
                let key = definition.key();
                let old = state.definition_at(&key)?;
                if let Some(old) = &old {
                    if !replace && !after.deleted_definitions.contains(&key) {
                        return Err(CatalogError::AlreadyExists {
                            kind: object_kind(definition.kind()),
                            name: old.name.clone(),
                        });
                    }
                    for read in &old.reads {
                        edits.remove.push((read.key(), key.clone()));
                    }
                }
                if definition.kind() == DefinitionKind::View
                    && after.table(&definition.name)?.is_some()
                {
                    return Err(CatalogError::AlreadyExists {
                        kind: ObjectKind::Table,
                        name: definition.name.clone(),
                    });
                }
                for read in &definition.reads {
                    if !after.exists(read)? {
                        return Err(CatalogError::NotFound {
                            kind: match read.namespace {
                                Namespace::Relation => ObjectKind::Table,
                                Namespace::Function => ObjectKind::Function,
                            },
                            name: read.name.clone(),
                        });
                    }
                    edits.add.push((read.key(), key.clone()));
                }
                after.refuse_cycle(definition)?;
            }
            Change::DeleteDefinition(kind, name) => {
                let key = Dependency {
                    namespace: kind.namespace(),
                    name: name.clone(),
                }
                .key();
                let Some(old) = state.definition_at(&key)? else {
                    return Err(CatalogError::NotFound {
                        kind: object_kind(*kind),
                        name: name.clone(),
                    });
                };
                for read in &old.reads {
                    edits.remove.push((read.key(), key.clone()));
                }
            }
            Change::PutProfile(_) | Change::DeleteProfile(_) | Change::DeleteTable(_) => {}
        }
    }
    after.refuse_dangling_readers(state)?;
    Ok(edits)
}

fn object_kind(kind: DefinitionKind) -> ObjectKind {
    match kind {
        DefinitionKind::View => ObjectKind::View,
        DefinitionKind::Function => ObjectKind::Function,
    }
}

/// The state after a batch, as the batch's own changes over the committed state.
struct After<'a> {
    state: &'a dyn DefinitionState,
    /// Definitions the batch puts, by key.
    put_definitions: HashMap<String, &'a Definition>,
    /// Keys of definitions the batch deletes (and does not put again).
    deleted_definitions: HashSet<String>,
    /// Lowercase names of tables the batch puts.
    put_tables: HashSet<String>,
    /// Lowercase names of tables the batch deletes (and does not put again), with the
    /// name as stored.
    deleted_tables: HashMap<String, String>,
}

impl<'a> After<'a> {
    fn of(state: &'a dyn DefinitionState, changes: &'a [Change]) -> Result<Self> {
        let mut after = After {
            state,
            put_definitions: HashMap::new(),
            deleted_definitions: HashSet::new(),
            put_tables: HashSet::new(),
            deleted_tables: HashMap::new(),
        };
        for change in changes {
            match change {
                Change::PutTable(t) => {
                    // A table renamed by the batch leaves its old name.
                    if let Some(old) = state.table_name(&t.id)?
                        && name_key(&old) != name_key(&t.name)
                    {
                        after.deleted_tables.insert(name_key(&old), old);
                    }
                    after.deleted_tables.remove(&name_key(&t.name));
                    after.put_tables.insert(name_key(&t.name));
                }
                Change::DeleteTable(id) => {
                    if let Some(name) = state.table_name(id)? {
                        after.put_tables.remove(&name_key(&name));
                        after.deleted_tables.insert(name_key(&name), name);
                    }
                }
                Change::PutDefinition { definition, .. } => {
                    let key = definition.key();
                    after.deleted_definitions.remove(&key);
                    after.put_definitions.insert(key, definition);
                }
                Change::DeleteDefinition(kind, name) => {
                    let key = Dependency {
                        namespace: kind.namespace(),
                        name: name.clone(),
                    }
                    .key();
                    after.put_definitions.remove(&key);
                    after.deleted_definitions.insert(key);
                }
                Change::PutProfile(_) | Change::DeleteProfile(_) => {}
            }
        }
        Ok(after)
    }

    /// A table of this name after the batch (`Some(())`), or none.
    fn table(&self, name: &str) -> Result<Option<()>> {
        let key = name_key(name);
        if self.put_tables.contains(&key) {
            return Ok(Some(()));
        }
        if self.deleted_tables.contains_key(&key) {
            return Ok(None);
        }
        Ok(self.state.table_named(name)?.map(|_| ()))
    }

    /// A definition after the batch.
    fn definition(&self, key: &str) -> Result<Option<Definition>> {
        if let Some(d) = self.put_definitions.get(key) {
            return Ok(Some((*d).clone()));
        }
        if self.deleted_definitions.contains(key) {
            return Ok(None);
        }
        self.state.definition_at(key)
    }

    /// Whether what a definition reads exists after the batch.
    fn exists(&self, read: &Dependency) -> Result<bool> {
        if self.definition(&read.key())?.is_some() {
            return Ok(true);
        }
        Ok(read.namespace == Namespace::Relation && self.table(&read.name)?.is_some())
    }

    /// Refuse a definition that reads itself through a chain of definitions.
    fn refuse_cycle(&self, definition: &Definition) -> Result<()> {
        let target = definition.key();
        let mut seen: HashSet<String> = HashSet::new();
        // Each name to visit, with the definition's own read it was reached through.
        let mut todo: Vec<(Dependency, String)> = definition
            .reads
            .iter()
            .map(|r| (r.clone(), r.name.clone()))
            .collect();
        while let Some((read, via)) = todo.pop() {
            let key = read.key();
            if key == target {
                return Err(CatalogError::Cycle {
                    name: definition.name.clone(),
                    through: via,
                });
            }
            if !seen.insert(key.clone()) {
                continue;
            }
            if seen.len() > MAX_WALK {
                return Err(CatalogError::Storage(format!(
                    "the definitions '{}' reads are nested more than {MAX_WALK} deep",
                    definition.name
                )));
            }
            if let Some(d) = self.definition(&key)? {
                todo.extend(d.reads.into_iter().map(|r| (r, via.clone())));
            }
        }
        Ok(())
    }

    /// Refuse a batch that leaves a definition reading a table, view or function that
    /// the batch removes.
    fn refuse_dangling_readers(&self, state: &dyn DefinitionState) -> Result<()> {
        let mut gone: Vec<(ObjectKind, String, String)> = self
            .deleted_tables
            .iter()
            .filter(|(key, _)| !self.put_definitions.contains_key(&format!("r:{key}")))
            .map(|(key, name)| (ObjectKind::Table, format!("r:{key}"), name.clone()))
            .collect();
        for key in &self.deleted_definitions {
            let kind = if key.starts_with(Namespace::Function.prefix()) {
                ObjectKind::Function
            } else {
                ObjectKind::View
            };
            let name = state
                .definition_at(key)?
                .map(|d| d.name)
                .unwrap_or_else(|| key[2..].to_string());
            // A view dropped while a table of its name is created reads as the table.
            if kind == ObjectKind::View && self.table(&name)?.is_some() {
                continue;
            }
            gone.push((kind, key.clone(), name));
        }
        gone.sort();
        for (kind, key, name) in gone {
            let mut readers: Vec<String> = Vec::new();
            for reader in state.reader_keys(&key)? {
                if let Some(d) = self.definition(&reader)?
                    && d.reads.iter().any(|r| r.key() == key)
                {
                    readers.push(format!("{} {}", d.kind(), d.name));
                }
            }
            for d in self.put_definitions.values() {
                if d.reads.iter().any(|r| r.key() == key) {
                    let label = format!("{} {}", d.kind(), d.name);
                    if !readers.contains(&label) {
                        readers.push(label);
                    }
                }
            }
            if !readers.is_empty() {
                readers.sort();
                return Err(CatalogError::ReadBy {
                    kind,
                    name,
                    readers,
                });
            }
        }
        Ok(())
    }
}
