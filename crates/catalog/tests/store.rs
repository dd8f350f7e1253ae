//! The catalog stores: names, dependencies, atomicity, durability, locking and format
//! checks, against a real sled directory.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::{profile, reopen, stores, table};
use std::sync::Arc;
use tributary_catalog::{
    CatalogError, CatalogStore, Change, LockWait, OverlayStore, SledStore, new_profile_id,
};
use tributary_types::{CURRENT_FORMAT_VERSION, ConnectionTable};

#[test]
fn names_are_unique_case_insensitively_and_lookups_ignore_case() {
    for (store, _dir) in stores() {
        let p = profile("Prod");
        store.apply(vec![Change::PutProfile(p.clone())]).unwrap();
        assert_eq!(store.profile_by_name("prod").unwrap().unwrap().id, p.id);
        let err = store
            .apply(vec![Change::PutProfile(profile("PROD"))])
            .unwrap_err();
        assert_eq!(err.to_string(), "connection profile 'PROD' already exists");
        store
            .apply(vec![Change::PutTable(table("Orders", Some(&p.id)))])
            .unwrap();
        assert_eq!(
            store.table_by_name("ORDERS").unwrap().unwrap().name,
            "Orders"
        );
        assert_eq!(store.table_names().unwrap(), vec!["Orders"]);
    }
}

#[test]
fn restrict_blocks_and_cascade_removes_dependents() {
    for (store, _dir) in stores() {
        let p = profile("prod");
        let (a, b) = (table("a", Some(&p.id)), table("b", Some(&p.id)));
        store
            .apply(vec![
                Change::PutProfile(p.clone()),
                Change::PutTable(a.clone()),
                Change::PutTable(b.clone()),
            ])
            .unwrap();
        assert_eq!(store.dependents(&p.id).unwrap().len(), 2);
        let err = store
            .apply(vec![Change::DeleteProfile(p.id.clone())])
            .unwrap_err();
        assert!(matches!(err, CatalogError::ProfileInUse { .. }));
        assert_eq!(
            err.to_string(),
            "connection profile 'prod' is used by 2 table(s): a, b"
        );
        assert!(
            store.profile(&p.id).unwrap().is_some(),
            "a failed batch changes nothing"
        );
        store
            .apply(vec![
                Change::DeleteTable(a.id),
                Change::DeleteTable(b.id),
                Change::DeleteProfile(p.id.clone()),
            ])
            .unwrap();
        assert!(store.profile(&p.id).unwrap().is_none());
        assert!(store.tables().unwrap().is_empty());
        assert!(store.dependents(&p.id).unwrap().is_empty());
    }
}

#[test]
fn failing_batch_is_atomic() {
    for (store, _dir) in stores() {
        store
            .apply(vec![Change::PutTable(table("t", None))])
            .unwrap();
        let err = store
            .apply(vec![
                Change::PutTable(table("u", None)),
                Change::PutTable(table("T", None)),
            ])
            .unwrap_err();
        assert!(matches!(err, CatalogError::AlreadyExists { .. }));
        assert_eq!(store.table_names().unwrap(), vec!["t"]);
        let missing = table("v", Some(&new_profile_id()));
        assert!(matches!(
            store.apply(vec![Change::PutTable(missing)]).unwrap_err(),
            CatalogError::NotFound { .. }
        ));
    }
}

#[test]
fn renaming_updates_the_index() {
    for (store, _dir) in stores() {
        let mut t = table("old", None);
        store.apply(vec![Change::PutTable(t.clone())]).unwrap();
        t.name = "new".into();
        store.apply(vec![Change::PutTable(t)]).unwrap();
        assert!(store.table_by_name("old").unwrap().is_none());
        assert!(store.table_by_name("new").unwrap().is_some());
        assert_eq!(store.table_names().unwrap(), vec!["new"]);
    }
}

/// `apply --allow-replace` drops an object and creates another of the same name in one
/// batch. An overlay absorbs a batch's changes in hash order, so the rounds try both
/// orders of deletion and creation.
#[test]
fn an_object_replaced_by_name_in_one_batch_is_found_by_that_name() {
    for (store, _dir) in stores() {
        let mut p = profile("p");
        let mut t = table("t", Some(&p.id));
        store
            .apply(vec![
                Change::PutProfile(p.clone()),
                Change::PutTable(t.clone()),
            ])
            .unwrap();
        for _round in 0..12 {
            let (p2, t2) = (profile("p"), table("t", None));
            let t2 = ConnectionTable {
                profile: Some(p2.id.clone()),
                ..t2
            };
            store
                .apply(vec![
                    Change::DeleteTable(t.id.clone()),
                    Change::DeleteProfile(p.id.clone()),
                    Change::PutProfile(p2.clone()),
                    Change::PutTable(t2.clone()),
                ])
                .unwrap();
            assert_eq!(
                store.table_by_name("t").unwrap().map(|x| x.id),
                Some(t2.id.clone())
            );
            assert_eq!(
                store.profile_by_name("p").unwrap().map(|x| x.id),
                Some(p2.id.clone())
            );
            assert_eq!(store.table_names().unwrap(), vec!["t"]);
            (p, t) = (p2, t2);
        }
    }
}

#[test]
fn pages_run_newest_first_and_follow_replacements_and_deletions() {
    for (store, _dir) in stores() {
        let gen0 = store.generation();
        let mut tables: Vec<ConnectionTable> = (0..25)
            .map(|i| {
                let mut t = table(&format!("t{i:02}"), None);
                // Two tables share each creation time: ties are ordered by id.
                t.created_at = 1_000 + i / 2;
                t
            })
            .collect();
        for t in &tables {
            store.apply(vec![Change::PutTable(t.clone())]).unwrap();
        }
        assert!(store.generation() > gen0);
        tables.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then_with(|| b.id.as_str().cmp(a.id.as_str()))
        });
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let (page, more) = store.tables_page(after.as_ref(), 10).unwrap();
            seen.extend(page.iter().map(|t| t.id.clone()));
            after = page.last().map(|t| t.id.clone());
            if !more {
                break;
            }
        }
        let expected: Vec<_> = tables.iter().map(|t| t.id.clone()).collect();
        assert_eq!(seen, expected);
        // A replacement keeps its place; a deletion leaves the order.
        let mut renamed = tables[3].clone();
        renamed.name = "renamed".into();
        store.apply(vec![Change::PutTable(renamed)]).unwrap();
        store
            .apply(vec![Change::DeleteTable(tables[0].id.clone())])
            .unwrap();
        let (page, more) = store.tables_page(None, 3).unwrap();
        let names: Vec<&str> = page.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [tables[1].name.as_str(), tables[2].name.as_str(), "renamed"]
        );
        assert!(more);
        let (rest, more) = store.tables_page(Some(&page[2].id), 100).unwrap();
        assert_eq!(rest.len(), 21);
        assert!(!more);
        let gone = store.tables_page(Some(&tables[0].id), 10).unwrap_err();
        assert!(matches!(gone, CatalogError::NotFound { .. }), "{gone}");
    }
}

#[test]
fn concurrent_writers_all_land_durably() {
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<_> = {
        let store = Arc::new(SledStore::open(dir.path()).unwrap());
        let handles: Vec<_> = (0..8)
            .map(|w| {
                let store = store.clone();
                std::thread::spawn(move || {
                    (0..25)
                        .map(|i| {
                            let t = table(&format!("w{w}_{i}"), None);
                            store.apply(vec![Change::PutTable(t.clone())]).unwrap();
                            t.id
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    };
    let store = reopen(dir.path());
    assert_eq!(store.table_names().unwrap().len(), 200);
    for id in ids {
        assert!(store.table(&id).unwrap().is_some());
    }
    let (page, more) = store.tables_page(None, 1_000).unwrap();
    assert_eq!((page.len(), more), (200, false));
}

/// Tables written with [`keep_busy`].
const BUSY: usize = 500;

/// Once every racer is ready, write a batch large enough to take a while: the racers
/// (who wait a moment after `start`) queue behind it and are checked as one group.
fn keep_busy(store: &SledStore, round: usize, start: &std::sync::Barrier) {
    let batch = (0..BUSY)
        .map(|i| Change::PutTable(table(&format!("busy{round}_{i}"), None)))
        .collect();
    start.wait();
    store.apply(batch).unwrap();
}

#[test]
fn racing_creates_of_one_name_let_exactly_one_win() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    for round in 0..10 {
        let name = format!("orders{round}");
        let start = std::sync::Barrier::new(9);
        let outcomes: Vec<_> = std::thread::scope(|s| {
            s.spawn(|| keep_busy(&store, round, &start));
            let handles: Vec<_> = (0..8)
                .map(|w| {
                    // Different cases of one name: the index is case-insensitive.
                    let name = if w % 2 == 0 {
                        name.clone()
                    } else {
                        name.to_uppercase()
                    };
                    let (store, start) = (&store, &start);
                    s.spawn(move || {
                        start.wait();
                        std::thread::sleep(std::time::Duration::from_millis(2));
                        store.apply(vec![Change::PutTable(table(&name, None))])
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(won, 1, "round {round}: {outcomes:?}");
        for lost in outcomes.iter().filter_map(|o| o.as_ref().err()) {
            assert!(matches!(lost, CatalogError::AlreadyExists { .. }), "{lost}");
        }
        assert!(store.table_by_name(&name).unwrap().is_some());
    }
    assert_eq!(store.table_names().unwrap().len(), 10 * (BUSY + 1));
}

#[test]
fn dropping_a_profile_while_tables_are_created_on_it_never_leaves_one_dangling() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    for round in 0..10 {
        let p = profile(&format!("p{round}"));
        store.apply(vec![Change::PutProfile(p.clone())]).unwrap();
        let start = std::sync::Barrier::new(8);
        let (created, dropped) = std::thread::scope(|s| {
            s.spawn(|| keep_busy(&store, 100 + round, &start));
            let creates: Vec<_> = (0..6)
                .map(|w| {
                    let (store, id, start) = (&store, p.id.clone(), &start);
                    s.spawn(move || {
                        let t = table(&format!("r{round}_{w}"), Some(&id));
                        start.wait();
                        std::thread::sleep(std::time::Duration::from_millis(2));
                        store.apply(vec![Change::PutTable(t)])
                    })
                })
                .collect();
            let dropped = s.spawn(|| {
                start.wait();
                std::thread::sleep(std::time::Duration::from_millis(2));
                store.apply(vec![Change::DeleteProfile(p.id.clone())])
            });
            let created: Vec<_> = creates.into_iter().map(|h| h.join().unwrap()).collect();
            (created, dropped.join().unwrap())
        });
        let users = store.dependents(&p.id).unwrap();
        match dropped {
            Ok(()) => {
                assert!(store.profile(&p.id).unwrap().is_none());
                assert!(
                    users.is_empty(),
                    "round {round}: {users:?} use a dropped profile"
                );
                // A create ordered after the drop is refused; one before it blocks it.
                for refused in created.iter().filter_map(|c| c.as_ref().err()) {
                    assert!(
                        matches!(refused, CatalogError::NotFound { .. }),
                        "{refused}"
                    );
                }
                assert!(created.iter().all(|c| c.is_err()), "round {round}");
            }
            Err(CatalogError::ProfileInUse { .. }) => {
                let made = created.iter().filter(|c| c.is_ok()).count();
                assert!(made >= 1 && users.len() == made, "round {round}");
            }
            Err(other) => panic!("round {round}: {other}"),
        }
    }
    for t in store.tables().unwrap() {
        if let Some(p) = &t.profile {
            assert!(store.profile(p).unwrap().is_some(), "{} dangles", t.name);
        }
    }
}

#[test]
fn persists_across_reopen_and_locks_out_a_second_opener() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile("prod");
    {
        let store = SledStore::open(dir.path()).unwrap();
        store.apply(vec![Change::PutProfile(p.clone())]).unwrap();
        let second = SledStore::open(dir.path()).unwrap_err();
        assert!(matches!(second, CatalogError::InUse { .. }));
        assert!(
            second.to_string().contains("is in use by another process"),
            "{second}"
        );
    }
    let store = reopen(dir.path());
    assert_eq!(store.profile_by_name("prod").unwrap().unwrap(), p);
}

#[test]
fn newer_and_corrupt_records_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = SledStore::open(dir.path()).unwrap();
        let mut newer = profile("future");
        newer.format_version = CURRENT_FORMAT_VERSION + 1;
        store.apply(vec![Change::PutProfile(newer)]).unwrap();
    }
    let store = reopen(dir.path());
    let err = store.profile_by_name("future").unwrap_err();
    assert!(
        matches!(err, CatalogError::NewerFormat { found, .. } if found == CURRENT_FORMAT_VERSION + 1),
        "{err}"
    );
    drop(store);
    // A database marked with a newer format is refused at open.
    {
        let db = sled::open(dir.path().join("db")).unwrap();
        db.insert("format_version", "99").unwrap();
        db.flush().unwrap();
    }
    // sled's own threads may hold the file lock a moment after the handle is dropped:
    // wait for it as a reopening process would.
    let wait = LockWait {
        timeout: std::time::Duration::from_secs(10),
        on_wait: &|_| {},
    };
    let err = SledStore::open_waiting(dir.path(), wait).unwrap_err();
    assert!(err.to_string().contains("format version 99"), "{err}");
}

#[test]
fn garbage_files_are_reported_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("db")).unwrap();
    std::fs::write(dir.path().join("db").join("db"), vec![0xAB; 4096]).unwrap();
    std::fs::write(dir.path().join("db").join("conf"), b"not a sled config").unwrap();
    let err = SledStore::open(dir.path()).unwrap_err();
    assert!(
        matches!(
            err,
            CatalogError::Corrupt { .. } | CatalogError::Io { .. } | CatalogError::Storage(_)
        ),
        "{err}"
    );
}

#[test]
fn overlay_hides_base_changes_until_applied_there() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn CatalogStore> = Arc::new(SledStore::open(dir.path()).unwrap());
    let p = profile("prod");
    base.apply(vec![Change::PutProfile(p.clone())]).unwrap();
    let overlay = OverlayStore::over(base.clone());
    overlay
        .apply(vec![Change::PutTable(table("t", Some(&p.id)))])
        .unwrap();
    overlay
        .apply(vec![Change::DeleteTable(
            overlay.table_by_name("t").unwrap().unwrap().id,
        )])
        .unwrap();
    overlay
        .apply(vec![Change::DeleteProfile(p.id.clone())])
        .unwrap();
    assert!(overlay.profile_by_name("prod").unwrap().is_none());
    assert!(base.profile_by_name("prod").unwrap().is_some());
    assert!(base.tables().unwrap().is_empty());
}

#[test]
fn overlay_sees_base_objects_renamed_moved_and_deleted_above_them() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn CatalogStore> = Arc::new(SledStore::open(dir.path()).unwrap());
    let (p1, p2) = (profile("p1"), profile("p2"));
    let t = table("orders", Some(&p1.id));
    base.apply(vec![
        Change::PutProfile(p1.clone()),
        Change::PutProfile(p2.clone()),
        Change::PutTable(t.clone()),
    ])
    .unwrap();
    let overlay = OverlayStore::over(base.clone());
    // Profile in use below: cannot be dropped above.
    let err = overlay
        .apply(vec![Change::DeleteProfile(p1.id.clone())])
        .unwrap_err();
    assert!(matches!(err, CatalogError::ProfileInUse { .. }), "{err}");
    // Rename the table and move it to p2 above; p1 is then free.
    let mut moved = t.clone();
    moved.name = "Orders_V2".into();
    moved.profile = Some(p2.id.clone());
    overlay.apply(vec![Change::PutTable(moved)]).unwrap();
    assert!(overlay.table_by_name("orders").unwrap().is_none());
    assert_eq!(
        overlay.table_by_name("orders_v2").unwrap().unwrap().id,
        t.id
    );
    assert_eq!(overlay.dependents(&p1.id).unwrap(), vec![]);
    assert_eq!(overlay.dependents(&p2.id).unwrap(), vec![t.id.clone()]);
    overlay
        .apply(vec![Change::DeleteProfile(p1.id.clone())])
        .unwrap();
    // The old name is free above, taken again by a new table; nothing changed below.
    overlay
        .apply(vec![Change::PutTable(table("ORDERS", Some(&p2.id)))])
        .unwrap();
    assert_eq!(overlay.table_names().unwrap(), vec!["ORDERS", "Orders_V2"]);
    assert_eq!(base.table_names().unwrap(), vec!["orders"]);
    assert_eq!(base.dependents(&p1.id).unwrap(), vec![t.id]);
}
