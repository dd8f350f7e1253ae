//! Which batches may share a group: those whose footprints (what they write and read) do
//! not overlap.

use super::MAX_GROUP;
use crate::store::{Change, name_key};
use std::collections::{HashSet, VecDeque};

/// The pending batches to write now: in arrival order, each one whose footprint does not
/// overlap those taken before it, at most [`MAX_GROUP`]. The rest stay pending, in order.
pub(super) fn take_group<K>(pending: &mut VecDeque<(K, Vec<Change>)>) -> Vec<(K, Vec<Change>)> {
    let mut taken = Vec::new();
    let mut left = VecDeque::new();
    let mut claimed = Footprint::default();
    while let Some((key, changes)) = pending.pop_front() {
        let mine = Footprint::of(&changes);
        if taken.len() < MAX_GROUP && !mine.overlaps(&claimed) {
            claimed.writes.extend(mine.writes);
            claimed.reads.extend(mine.reads);
            taken.push((key, changes));
        } else {
            left.push_back((key, changes));
        }
    }
    *pending = left;
    taken
}

/// What a batch writes (the ids it puts or deletes, the names it puts,
/// case-insensitively) and what it only reads (the profiles its tables use). Two batches
/// whose footprints do not overlap give the same outcomes checked apart as checked one
/// after the other. Reads overlap only writes: many tables may be created on one profile
/// in a group, but not beside that profile's deletion.
#[derive(Debug, Default)]
struct Footprint {
    writes: HashSet<String>,
    reads: HashSet<String>,
}

impl Footprint {
    fn of(changes: &[Change]) -> Self {
        let mut f = Footprint::default();
        for change in changes {
            match change {
                Change::PutProfile(p) => {
                    f.writes.insert(format!("profile:{}", p.id));
                    f.writes
                        .insert(format!("profile-name:{}", name_key(&p.name)));
                }
                Change::DeleteProfile(id) => {
                    f.writes.insert(format!("profile:{id}"));
                }
                Change::PutTable(t) => {
                    f.writes.insert(format!("table:{}", t.id));
                    f.writes.insert(format!("table-name:{}", name_key(&t.name)));
                    if let Some(p) = &t.profile {
                        f.reads.insert(format!("profile:{p}"));
                    }
                }
                Change::DeleteTable(id) => {
                    f.writes.insert(format!("table:{id}"));
                    // A dropped table's name is not known here: it conflicts with every
                    // batch that writes a definition (which might read it).
                    f.reads.insert("definitions".to_string());
                }
                Change::PutDefinition { definition, .. } => {
                    f.writes.insert("definitions".to_string());
                    if definition.kind() == tributary_types::DefinitionKind::View {
                        f.writes
                            .insert(format!("table-name:{}", name_key(&definition.name)));
                    }
                    // The tables it reads may be created by a batch beside it.
                    for read in &definition.reads {
                        f.reads
                            .insert(format!("table-name:{}", name_key(&read.name)));
                    }
                }
                Change::DeleteDefinition(kind, name) => {
                    f.writes.insert("definitions".to_string());
                    if *kind == tributary_types::DefinitionKind::View {
                        f.writes.insert(format!("table-name:{}", name_key(name)));
                    }
                }
            }
        }
        f
    }

    fn overlaps(&self, other: &Footprint) -> bool {
        self.writes
            .iter()
            .any(|k| other.writes.contains(k) || other.reads.contains(k))
            || self.reads.iter().any(|k| other.writes.contains(k))
    }
}
