//! The staging store: a script's statements checked and visible at once, written to the
//! catalog below as one atomic batch of their net effect, each durable with that batch.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::{profile, reopen, table, view};
use std::sync::Arc;
use std::time::Duration;
use tributary_catalog::{
    CatalogStore, Change, PendingWrite, SledStore, StagingLimits, StagingStore,
};
use tributary_types::{DefinitionKind, Dependency, Namespace};

fn reads(table: &str) -> Vec<Dependency> {
    vec![Dependency {
        namespace: Namespace::Relation,
        name: table.into(),
    }]
}

fn put_view(name: &str, reading: &str) -> Change {
    Change::PutDefinition {
        definition: view(name, &reads(reading)),
        replace: false,
    }
}

/// Stage one statement's changes; its durable write.
fn stage(store: &StagingStore, changes: Vec<Change>) -> PendingWrite {
    futures::executor::block_on(store.submit_staged(changes).visible()).unwrap()
}

/// A staging store that goes down after 128 statements, never on the clock (a loaded
/// machine may take milliseconds between two statements).
fn staging_over(base: &Arc<dyn CatalogStore>) -> StagingStore {
    let limits = StagingLimits {
        statements: 128,
        wait: Duration::from_secs(3600),
    };
    StagingStore::with_limits(base.clone(), limits).unwrap()
}

fn sled() -> (tempfile::TempDir, Arc<dyn CatalogStore>) {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn CatalogStore> = Arc::new(SledStore::open(dir.path()).unwrap());
    (dir, base)
}

#[test]
fn staged_statements_reach_the_store_below_as_one_batch_of_their_net_effect() {
    let (dir, base) = sled();
    // Already below: a table the script drops, and one whose view it replaces.
    let old = table("old", None);
    let kept = table("kept", None);
    base.apply(vec![
        Change::PutTable(old.clone()),
        Change::PutTable(kept.clone()),
        put_view("v", "kept"),
    ])
    .unwrap();
    let generation = base.generation();
    let staging = staging_over(&base);
    let p = profile("p");
    let a = table("a", Some(&p.id));
    let a_again = table("a", Some(&p.id));
    let gone = table("gone", None);
    let durables = vec![
        stage(&staging, vec![Change::PutProfile(p.clone())]),
        stage(&staging, vec![Change::PutTable(a.clone())]),
        stage(&staging, vec![Change::PutTable(gone.clone())]),
        stage(&staging, vec![Change::DeleteTable(gone.id.clone())]),
        stage(&staging, vec![Change::DeleteTable(a.id.clone())]),
        stage(&staging, vec![Change::PutTable(a_again.clone())]),
        stage(&staging, vec![Change::DeleteTable(old.id.clone())]),
        stage(
            &staging,
            vec![Change::DeleteDefinition(DefinitionKind::View, "v".into())],
        ),
        stage(&staging, vec![put_view("V", "a")]),
    ];
    // Each statement saw the ones before it; nothing is below yet.
    assert_eq!(staging.table_by_name("A").unwrap().unwrap().id, a_again.id);
    assert_eq!(staging.table_names().unwrap(), vec!["a", "kept"]);
    assert!(base.table_by_name("a").unwrap().is_none());
    assert!(base.table_by_name("old").unwrap().is_some());
    staging.write_staged(true);
    for d in durables {
        d.wait().unwrap();
    }
    // One batch below, holding the net effect.
    assert_eq!(base.generation(), generation + 1);
    assert_eq!(base.table_names().unwrap(), vec!["a", "kept"]);
    assert_eq!(base.table_by_name("a").unwrap().unwrap().id, a_again.id);
    assert_eq!(base.dependents(&p.id).unwrap(), vec![a_again.id.clone()]);
    let v = base.definition(DefinitionKind::View, "v").unwrap().unwrap();
    assert_eq!(v.name, "V");
    assert_eq!(v.reads, reads("a"));
    // And it is durable.
    drop((staging, base));
    let reopened = reopen(dir.path());
    assert_eq!(reopened.table_names().unwrap(), vec!["a", "kept"]);
}

#[test]
fn a_batch_refused_below_fails_every_statement_in_it_and_stores_none() {
    let (_dir, base) = sled();
    let staging = staging_over(&base);
    let first = stage(&staging, vec![Change::PutTable(table("x", None))]);
    let second = stage(&staging, vec![Change::PutTable(table("y", None))]);
    // Someone writes below the layer (what only the catalog's holder may do): the
    // batch's name is taken there, so the whole batch is refused.
    base.apply(vec![Change::PutTable(table("X", None))])
        .unwrap();
    staging.write_staged(true);
    let e = first.wait().unwrap_err();
    assert_eq!(e.to_string(), "table 'x' already exists");
    assert_eq!(
        second.wait().unwrap_err().to_string(),
        "catalog storage error: table 'x' already exists"
    );
    assert_eq!(base.table_names().unwrap(), vec!["X"]);
    // The layer is gone with its batch: what is read is what is below.
    assert_eq!(staging.table_names().unwrap(), vec!["X"]);
}

#[test]
fn staged_statements_go_down_when_many_have_gathered_and_when_the_store_closes() {
    let (dir, base) = sled();
    let staging = staging_over(&base);
    let mut durables: Vec<PendingWrite> = (0..130)
        .map(|i| {
            stage(
                &staging,
                vec![Change::PutTable(table(&format!("t{i}"), None))],
            )
        })
        .collect();
    // The first 128 went down without being asked, and are durable; two wait.
    assert_eq!(base.table_names().unwrap().len(), 128);
    for d in &mut durables[..128] {
        futures::executor::block_on(d).unwrap();
    }
    // A statement that is not staged writes everything staged first.
    staging
        .apply(vec![Change::PutTable(table("direct", None))])
        .unwrap();
    assert_eq!(base.table_names().unwrap().len(), 131);
    let late = stage(&staging, vec![Change::PutTable(table("late", None))]);
    drop(staging);
    late.wait().unwrap();
    drop(base);
    assert_eq!(reopen(dir.path()).table_names().unwrap().len(), 132);
}

#[test]
fn a_statement_refused_by_the_layer_stages_nothing() {
    let (_dir, base) = sled();
    let staging = staging_over(&base);
    let _ok = stage(&staging, vec![Change::PutTable(table("t", None))]);
    let refused = futures::executor::block_on(
        staging
            .submit_staged(vec![Change::PutTable(table("T", None))])
            .visible(),
    );
    assert_eq!(refused.unwrap_err().to_string(), "table 'T' already exists");
    staging.write_staged(true);
    assert_eq!(base.table_names().unwrap(), vec!["t"]);
}

#[test]
fn discarded_statements_fail_and_are_never_written() {
    let (_dir, base) = sled();
    let staging = staging_over(&base);
    let a = stage(&staging, vec![Change::PutTable(table("a", None))]);
    staging.discard_staged();
    assert!(
        a.wait()
            .unwrap_err()
            .to_string()
            .contains("not stored: the script stopped"),
    );
    assert!(staging.table_names().unwrap().is_empty());
    staging.write_staged(true);
    drop(staging);
    assert!(base.table_names().unwrap().is_empty());
}

#[test]
fn staged_statements_go_down_once_the_oldest_has_waited_long_enough() {
    let (_dir, base) = sled();
    let limits = StagingLimits {
        statements: 1000,
        wait: Duration::from_millis(50),
    };
    let staging = StagingStore::with_limits(base.clone(), limits).unwrap();
    let first = stage(&staging, vec![Change::PutTable(table("a", None))]);
    staging.write_staged(false);
    assert!(base.table_names().unwrap().is_empty(), "not due yet");
    std::thread::sleep(Duration::from_millis(60));
    // Due: the next statement takes the waiting one down with it.
    let second = stage(&staging, vec![Change::PutTable(table("b", None))]);
    assert_eq!(base.table_names().unwrap(), vec!["a", "b"]);
    first.wait().unwrap();
    second.wait().unwrap();
    // And a script that pauses has its statement written by the session's own tick.
    let third = stage(&staging, vec![Change::PutTable(table("c", None))]);
    std::thread::sleep(Duration::from_millis(60));
    staging.write_staged(false);
    assert_eq!(base.table_names().unwrap().len(), 3);
    third.wait().unwrap();
}
