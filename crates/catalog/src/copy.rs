//! Moving a whole catalog from one store to another (`tributary catalog copy`): every
//! record as stored (ids, times, secrets as written), in one batch, so the target holds
//! all of it or none.

use crate::error::{CatalogError, Result};
use crate::store::{CatalogStore, Change};
use tributary_types::DefinitionKind;

/// What a copy moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopySummary {
    /// Connection profiles.
    pub profiles: usize,
    /// Connection tables.
    pub tables: usize,
    /// Views.
    pub views: usize,
    /// Declared functions.
    pub functions: usize,
}

impl CopySummary {
    /// Every object counted.
    pub fn total(&self) -> usize {
        self.profiles + self.tables + self.views + self.functions
    }
}

impl std::fmt::Display for CopySummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        write!(
            f,
            "{}, {}, {} and {}",
            plural(self.profiles, "profile", "profiles"),
            plural(self.tables, "table", "tables"),
            plural(self.views, "view", "views"),
            plural(self.functions, "function", "functions"),
        )
    }
}

/// What `store` holds, counted.
pub fn count(store: &dyn CatalogStore) -> Result<CopySummary> {
    Ok(CopySummary {
        profiles: store.profiles()?.len(),
        tables: store.table_names()?.len(),
        views: store.definitions(DefinitionKind::View)?.len(),
        functions: store.definitions(DefinitionKind::Function)?.len(),
    })
}

/// Copy everything in `from` into `to`, which must be empty (a copy never merges: two
/// catalogs' names and ids could clash half-way). Returns what was copied.
pub fn copy_catalog(from: &dyn CatalogStore, to: &dyn CatalogStore) -> Result<CopySummary> {
    let present = count(to)?;
    if present.total() > 0 {
        return Err(CatalogError::NotEmpty {
            location: to.location(),
            holds: present.to_string(),
        });
    }
    let profiles = from.profiles()?;
    let tables = from.tables()?;
    let views = from.definitions(DefinitionKind::View)?;
    let functions = from.definitions(DefinitionKind::Function)?;
    let summary = CopySummary {
        profiles: profiles.len(),
        tables: tables.len(),
        views: views.len(),
        functions: functions.len(),
    };
    let mut changes = Vec::with_capacity(summary.total());
    changes.extend(profiles.into_iter().map(Change::PutProfile));
    changes.extend(tables.into_iter().map(Change::PutTable));
    changes.extend(
        functions
            .into_iter()
            .chain(views)
            .map(|definition| Change::PutDefinition {
                definition,
                replace: false,
            }),
    );
    if !changes.is_empty() {
        to.apply(changes)?;
    }
    Ok(summary)
}
