//! The PostgreSQL catalog where it differs from the embedded one: several stores (each
//! with its own connections, as separate processes have) on one database, migrations,
//! and errors that never show the password. The shared contract runs in `store.rs` and
//! `definitions.rs` against every store.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::{PgSchema, profile, table, view};
use std::time::{Duration, Instant};
use tributary_catalog::{CatalogError, CatalogStore, Change, PostgresStore};
use tributary_types::{DefinitionKind, Dependency};

fn open(schema: &PgSchema) -> PostgresStore {
    PostgresStore::open(&schema.url).unwrap()
}

#[test]
fn racing_creates_from_separate_stores_let_exactly_one_win() {
    let schema = PgSchema::new();
    let stores: Vec<PostgresStore> = (0..6).map(|_| open(&schema)).collect();
    for round in 0..10 {
        let name = format!("orders{round}");
        let start = std::sync::Barrier::new(stores.len());
        let outcomes: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = stores
                .iter()
                .enumerate()
                .map(|(w, store)| {
                    let name = if w % 2 == 0 {
                        name.clone()
                    } else {
                        name.to_uppercase()
                    };
                    let start = &start;
                    s.spawn(move || {
                        let t = table(&name, None);
                        start.wait();
                        store.apply(vec![Change::PutTable(t)])
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(won, 1, "round {round}: {outcomes:?}");
        for lost in outcomes.iter().filter_map(|o| o.as_ref().err()) {
            assert!(
                matches!(lost, CatalogError::AlreadyExists { .. }),
                "round {round}: {lost}"
            );
        }
    }
    assert_eq!(stores[0].table_names().unwrap().len(), 10);
}

#[test]
fn dropping_a_profile_in_one_store_while_another_creates_on_it_never_dangles() {
    let schema = PgSchema::new();
    let stores: Vec<PostgresStore> = (0..4).map(|_| open(&schema)).collect();
    for round in 0..10 {
        let p = profile(&format!("p{round}"));
        stores[0]
            .apply(vec![Change::PutProfile(p.clone())])
            .unwrap();
        let start = std::sync::Barrier::new(stores.len());
        let outcomes: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = stores
                .iter()
                .enumerate()
                .map(|(w, store)| {
                    let (id, start) = (p.id.clone(), &start);
                    s.spawn(move || {
                        let change = if w == 0 {
                            Change::DeleteProfile(id)
                        } else {
                            Change::PutTable(table(&format!("r{round}_{w}"), Some(&id)))
                        };
                        start.wait();
                        store.apply(vec![change])
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let users = stores[1].dependents(&p.id).unwrap();
        match &outcomes[0] {
            Ok(()) => {
                assert!(stores[2].profile(&p.id).unwrap().is_none());
                assert!(users.is_empty(), "round {round}: {users:?} dangle");
                for refused in outcomes[1..].iter().filter_map(|o| o.as_ref().err()) {
                    assert!(
                        matches!(refused, CatalogError::NotFound { .. }),
                        "{refused}"
                    );
                }
                let made = outcomes[1..].iter().filter(|o| o.is_ok()).count();
                assert_eq!(
                    made, 0,
                    "round {round}: a table was made on a dropped profile"
                );
            }
            Err(CatalogError::ProfileInUse { .. }) => {
                let made = outcomes[1..].iter().filter(|o| o.is_ok()).count();
                assert!(made >= 1 && users.len() == made, "round {round}");
            }
            Err(other) => panic!("round {round}: {other}"),
        }
    }
    for t in stores[3].tables().unwrap() {
        if let Some(p) = &t.profile {
            assert!(
                stores[3].profile(p).unwrap().is_some(),
                "{} dangles",
                t.name
            );
        }
    }
}

#[test]
fn a_change_made_elsewhere_raises_the_generation_within_a_second() {
    let schema = PgSchema::new();
    let (writer, reader) = (open(&schema), open(&schema));
    for round in 0..3 {
        let before = reader.generation();
        writer
            .apply(vec![Change::PutTable(table(&format!("t{round}"), None))])
            .unwrap();
        // Notified: no statement needed.
        let started = Instant::now();
        while reader.generation() == before {
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "round {round}: no notification within a second"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            reader
                .table_by_name(&format!("T{round}"))
                .unwrap()
                .is_some()
        );
    }
    // And a refresh sees the change at once, notification or not.
    let before = reader.generation();
    writer
        .apply(vec![Change::PutProfile(profile("prod"))])
        .unwrap();
    reader.refresh().unwrap();
    assert!(reader.generation() > before);
}

/// Wait up to a second for `store`'s generation to reach `at_least`.
fn await_generation(store: &PostgresStore, at_least: u64, what: &str) {
    let started = Instant::now();
    while store.generation() < at_least {
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{what}: generation {} after a second, wanted {at_least}",
            store.generation()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_store_closed_right_after_a_write_still_notifies_it() {
    let schema = PgSchema::new();
    let (writer, reader) = (open(&schema), open(&schema));
    // Once the reader has heard one notification, its listener is up.
    let before = reader.generation();
    writer
        .apply(vec![Change::PutProfile(profile("prod"))])
        .unwrap();
    await_generation(&reader, before + 1, "first notification");
    std::thread::sleep(Duration::from_millis(150));
    let before = reader.generation();
    // The first is notified at once; the second falls within the notification
    // interval and is put off, and the store closes before the interval ends.
    writer
        .apply(vec![Change::PutTable(table("a", None))])
        .unwrap();
    writer
        .apply(vec![Change::PutTable(table("b", None))])
        .unwrap();
    drop(writer);
    await_generation(&reader, before + 2, "the closing store's last write");
}

#[test]
fn the_catalog_persists_and_a_newer_schema_is_refused() {
    let schema = PgSchema::new();
    let p = profile("prod");
    {
        let store = open(&schema);
        store.apply(vec![Change::PutProfile(p.clone())]).unwrap();
    }
    assert_eq!(open(&schema).profile_by_name("PROD").unwrap().unwrap(), p);
    schema.execute("INSERT INTO tributary_schema_version (version) VALUES (99)");
    let e = PostgresStore::open(&schema.url).unwrap_err();
    assert!(
        matches!(e, CatalogError::NewerSchema { found: 99, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("99"), "{e}");
}

#[test]
fn newer_and_corrupt_records_are_clear_errors() {
    let schema = PgSchema::new();
    let store = open(&schema);
    let mut newer = profile("future");
    newer.format_version = 99;
    store.apply(vec![Change::PutProfile(newer)]).unwrap();
    let e = store.profile_by_name("future").unwrap_err();
    assert!(
        matches!(e, CatalogError::NewerFormat { found: 99, .. }),
        "{e}"
    );
    schema.execute(
        "INSERT INTO tributary_tables (id, name_key, name, created_at, record)
         VALUES ('ct_broken', 'broken', 'broken', 1, '{not json')",
    );
    let e = store.table_by_name("broken").unwrap_err();
    assert!(matches!(e, CatalogError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("'ct_broken'"), "{e}");
}

#[test]
fn errors_never_show_the_password() {
    // Nothing listens on port 1.
    let e = PostgresStore::open("postgres://alice:s3cr3t-pw@127.0.0.1:1/db").unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, CatalogError::Unreachable { .. }), "{text}");
    assert!(!text.contains("s3cr3t-pw"), "{text}");
    assert!(text.contains("postgres://alice@127.0.0.1:1/db"), "{text}");
    let e = PostgresStore::open("postgres://alice:s3cr3t-pw@127.0.0.1:notaport/db").unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, CatalogError::BadLocation { .. }), "{text}");
    assert!(!text.contains("s3cr3t-pw"), "{text}");
}

#[test]
fn a_batch_that_writes_one_key_twice_keeps_the_last_write() {
    // Written change by change (the one-statement group write cannot order two writes
    // of one row); the result must be the same as on every other store.
    let schema = PgSchema::new();
    let store = open(&schema);
    let mut t = table("first", None);
    let mut renamed = t.clone();
    renamed.name = "second".into();
    store
        .apply(vec![Change::PutTable(t.clone()), Change::PutTable(renamed)])
        .unwrap();
    assert!(store.table_by_name("first").unwrap().is_none());
    assert_eq!(store.table(&t.id).unwrap().unwrap().name, "second");
    t.name = "third".into();
    store
        .apply(vec![
            Change::PutTable(t.clone()),
            Change::DeleteTable(t.id.clone()),
        ])
        .unwrap();
    assert!(store.table(&t.id).unwrap().is_none());
    assert!(store.table_names().unwrap().is_empty());
}

#[test]
fn opening_an_existing_catalog_creates_nothing() {
    let schema = PgSchema::new();
    assert!(PostgresStore::open_existing(&schema.url).unwrap().is_none());
    // Still nothing: the first look created no table.
    assert!(PostgresStore::open_existing(&schema.url).unwrap().is_none());
    open(&schema)
        .apply(vec![Change::PutProfile(profile("prod"))])
        .unwrap();
    let store = PostgresStore::open_existing(&schema.url).unwrap().unwrap();
    assert!(store.profile_by_name("prod").unwrap().is_some());
    // A catalog made by an older build needs the upgrade a writer applies.
    schema.execute("DELETE FROM tributary_schema_version");
    schema.execute("INSERT INTO tributary_schema_version (version) VALUES (0)");
    assert!(PostgresStore::open_existing(&schema.url).unwrap().is_none());
}

/// Another process's transaction, held open on its own connection.
struct Elsewhere(postgres::Client);

impl Elsewhere {
    /// Open a transaction that runs `sql`, bumps the catalog keys `bumped` and locks
    /// `shared` for share, and raises the catalog's version, as every write does, holding
    /// them until [`commit`](Self::commit).
    fn begin(schema: &PgSchema, sql: &str, bumped: &[&str], shared: &[&str]) -> Self {
        let mut c = postgres::Client::connect(&schema.url, postgres::NoTls).unwrap();
        c.batch_execute(&format!("BEGIN; {sql}")).unwrap();
        c.execute(
            "INSERT INTO tributary_keys (key, version) SELECT unnest($1::text[]), 1
             ON CONFLICT (key) DO UPDATE SET version = tributary_keys.version + 1",
            &[&bumped],
        )
        .unwrap();
        c.execute(
            "SELECT FROM tributary_keys WHERE key = ANY($1) FOR SHARE",
            &[&shared],
        )
        .unwrap();
        // The last slot: a store's writer claims the first free one.
        c.batch_execute("UPDATE tributary_version_slots SET version = version + 1 WHERE slot = 63")
            .unwrap();
        Self(c)
    }

    fn commit(mut self) {
        self.0.batch_execute("COMMIT").unwrap();
    }

    fn version(schema: &PgSchema) -> i64 {
        let mut c = postgres::Client::connect(&schema.url, postgres::NoTls).unwrap();
        c.query_one(
            "SELECT sum(version)::int8 FROM tributary_version_slots",
            &[],
        )
        .unwrap()
        .get(0)
    }

    /// Wait until one of this process's catalog sessions waits for a lock.
    fn wait_for_a_waiting_writer(&mut self) {
        let name = tributary_catalog::postgres_application_name(std::process::id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while self
            .0
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE application_name = $1 AND wait_event_type = 'Lock'",
                &[&name],
            )
            .unwrap()
            .get::<_, i64>(0)
            == 0
        {
            assert!(Instant::now() < deadline, "the write never waited");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

#[test]
fn a_write_whose_checks_went_stale_is_checked_again() {
    let schema = PgSchema::new();
    let store = open(&schema);
    store
        .apply(vec![Change::PutTable(table("seed", None))])
        .unwrap();
    // Another process creates `orders` in a transaction it commits only once this
    // store's write of `orders`, checked against the state before, waits behind it.
    let other_id = tributary_catalog::new_table_id();
    let mut other = Elsewhere::begin(
        &schema,
        &format!(
            "INSERT INTO tributary_tables (id, name_key, name, profile_id, created_at, record)
             SELECT '{other_id}', 'orders', 'orders', profile_id, created_at,
                    replace(replace(record, id, '{other_id}'), '\"seed\"', '\"orders\"')
             FROM tributary_tables WHERE name_key = 'seed'"
        ),
        &["tn:orders", &format!("t:{other_id}")],
        &[],
    );
    let before = Elsewhere::version(&schema);
    std::thread::scope(|s| {
        let ours = s.spawn(|| store.apply(vec![Change::PutTable(table("ORDERS", None))]));
        other.wait_for_a_waiting_writer();
        other.commit();
        // Checked again against the new state: the ordinary refusal, not a broken
        // unique constraint.
        let refused = ours.join().unwrap().unwrap_err();
        assert!(
            matches!(&refused, CatalogError::AlreadyExists { name, .. } if name == "ORDERS"),
            "{refused}"
        );
    });
    assert_eq!(
        store.table_by_name("orders").unwrap().unwrap().id.as_str(),
        other_id.as_str()
    );
    assert_eq!(Elsewhere::version(&schema), before + 1);
}

#[test]
fn writes_whose_keys_do_not_meet_do_not_wait_for_each_other() {
    let schema = PgSchema::new();
    let store = open(&schema);
    let p = profile("prod");
    store.apply(vec![Change::PutProfile(p.clone())]).unwrap();
    let on_prod = format!("p:{}", p.id);
    // Another process is creating a table on `prod` (its profile's key locked shared)
    // and holds the keys of its own table, uncommitted.
    let other = Elsewhere::begin(&schema, "SELECT 1", &["tn:theirs", "t:theirs"], &[&on_prod]);
    let before = Elsewhere::version(&schema);
    // Tables on the same profile, written in one statement or (a row written twice)
    // change by change: neither waits for the other process.
    for twice in [false, true] {
        let t = table(&format!("ours_{twice}"), Some(&p.id));
        let mut changes = vec![Change::PutTable(t.clone())];
        if twice {
            changes.push(Change::PutTable(t));
        }
        let (done, outcome) = std::sync::mpsc::channel();
        let pending = store.submit(changes);
        std::thread::spawn(move || done.send(pending.wait()));
        outcome
            .recv_timeout(Duration::from_secs(10))
            .expect("the write waited for an unrelated transaction")
            .unwrap();
    }
    other.commit();
    assert_eq!(Elsewhere::version(&schema), before + 3);
    assert_eq!(store.dependents(&p.id).unwrap().len(), 2);
}

#[test]
fn a_view_and_a_table_racing_for_one_name_never_both_win() {
    let schema = PgSchema::new();
    let stores: Vec<PostgresStore> = (0..2).map(|_| open(&schema)).collect();
    stores[0]
        .apply(vec![Change::PutTable(table("base", None))])
        .unwrap();
    for round in 0..25 {
        let name = format!("thing{round}");
        let start = std::sync::Barrier::new(2);
        let (as_table, as_view) = std::thread::scope(|s| {
            let t = s.spawn(|| {
                let t = table(&name, None);
                start.wait();
                stores[0].apply(vec![Change::PutTable(t)])
            });
            let v = s.spawn(|| {
                let v = view(&name.to_uppercase(), &[Dependency::relation("base")]);
                start.wait();
                stores[1].apply(vec![Change::PutDefinition {
                    definition: v,
                    replace: false,
                }])
            });
            (t.join().unwrap(), v.join().unwrap())
        });
        assert!(
            as_table.is_ok() != as_view.is_ok(),
            "round {round}: {as_table:?} {as_view:?}"
        );
        let lost = as_table.err().or(as_view.err()).unwrap();
        assert!(matches!(lost, CatalogError::AlreadyExists { .. }), "{lost}");
        let table_there = stores[1].table_by_name(&name).unwrap().is_some();
        let view_there = stores[0]
            .definition(DefinitionKind::View, &name)
            .unwrap()
            .is_some();
        assert!(table_there != view_there, "round {round}");
    }
}

#[test]
fn dropping_a_table_while_a_view_on_it_is_created_never_dangles() {
    let schema = PgSchema::new();
    let stores: Vec<PostgresStore> = (0..2).map(|_| open(&schema)).collect();
    for round in 0..25 {
        let t = table(&format!("base{round}"), None);
        stores[0].apply(vec![Change::PutTable(t.clone())]).unwrap();
        let start = std::sync::Barrier::new(2);
        let (dropped, viewed) = std::thread::scope(|s| {
            let d = s.spawn(|| {
                start.wait();
                stores[0].apply(vec![Change::DeleteTable(t.id.clone())])
            });
            let v = s.spawn(|| {
                let v = view(&format!("v{round}"), &[Dependency::relation(&t.name)]);
                start.wait();
                stores[1].apply(vec![Change::PutDefinition {
                    definition: v,
                    replace: false,
                }])
            });
            (d.join().unwrap(), v.join().unwrap())
        });
        let table_there = stores[1].table(&t.id).unwrap().is_some();
        let view_there = stores[0]
            .definition(DefinitionKind::View, &format!("v{round}"))
            .unwrap()
            .is_some();
        match (&dropped, &viewed) {
            (Ok(()), Err(CatalogError::NotFound { .. })) => {
                assert!(!table_there && !view_there, "round {round}")
            }
            (Err(CatalogError::ReadBy { .. }), Ok(())) => {
                assert!(table_there && view_there, "round {round}")
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
}

/// A creation takes its profile to exist without reading it, and its foreign key
/// proves that: a profile another process deleted fails the write, and the creation is
/// checked again on what is stored.
#[test]
fn a_creation_on_a_profile_deleted_elsewhere_is_refused_and_writes_nothing() {
    let schema = PgSchema::new();
    let (ours, theirs) = (open(&schema), open(&schema));
    let p = profile("prod");
    ours.apply(vec![Change::PutProfile(p.clone())]).unwrap();
    let first = table("first", Some(&p.id));
    ours.apply(vec![Change::PutTable(first.clone())]).unwrap();
    theirs
        .apply(vec![
            Change::DeleteTable(first.id.clone()),
            Change::DeleteProfile(p.id.clone()),
        ])
        .unwrap();
    let before = Elsewhere::version(&schema);
    let refused = ours
        .apply(vec![Change::PutTable(table("second", Some(&p.id)))])
        .unwrap_err();
    assert!(
        matches!(refused, CatalogError::NotFound { .. }),
        "{refused}"
    );
    assert_eq!(Elsewhere::version(&schema), before);
    assert!(theirs.table_by_name("second").unwrap().is_none());
    // And once it is made again, tables go on it as before.
    ours.apply(vec![Change::PutProfile(p.clone())]).unwrap();
    for name in ["second", "third"] {
        ours.apply(vec![Change::PutTable(table(name, Some(&p.id)))])
            .unwrap();
    }
    assert_eq!(theirs.dependents(&p.id).unwrap().len(), 2);
}

/// A table written by another process is unknown here: changing it takes this writer a
/// read, never a refusal or a second table.
#[test]
fn changing_a_table_made_elsewhere_changes_it() {
    let schema = PgSchema::new();
    let (ours, theirs) = (open(&schema), open(&schema));
    let made = table("orders", None);
    theirs.apply(vec![Change::PutTable(made.clone())]).unwrap();
    let mut changed = made.clone();
    changed.description = "changed here".into();
    ours.apply(vec![Change::PutTable(changed)]).unwrap();
    let stored = theirs.table_by_name("orders").unwrap().unwrap();
    assert_eq!(
        (stored.id, stored.description.as_str()),
        (made.id, "changed here")
    );
    assert_eq!(theirs.table_names().unwrap().len(), 1);
}

/// Schema 3 gives what older schemas stored the keys a writer takes to mean "nothing
/// here", so a name an older build used is never guessed free.
#[test]
fn names_taken_before_schema_3_stay_taken() {
    let schema = PgSchema::new();
    {
        let old = open(&schema);
        old.apply(vec![Change::PutTable(table("base", None))])
            .unwrap();
        old.apply(vec![Change::PutDefinition {
            definition: view("recent", &[Dependency::relation("base")]),
            replace: false,
        }])
        .unwrap();
    }
    // As a schema 2 catalog written before its keys existed would be.
    schema.execute("DELETE FROM tributary_keys");
    schema.execute("DELETE FROM tributary_schema_version WHERE version >= 3");
    let store = open(&schema);
    for name in ["RECENT", "base"] {
        let refused = store
            .apply(vec![Change::PutTable(table(name, None))])
            .unwrap_err();
        assert!(
            matches!(&refused, CatalogError::AlreadyExists { .. }),
            "{name}: {refused}"
        );
    }
    assert_eq!(store.table_names().unwrap().len(), 1);
}

/// A batch that writes one table twice goes change by change, in a transaction whose
/// constraints are deferred; a profile another process deletes meanwhile still gives
/// the ordinary refusal, not a failed COMMIT.
#[test]
fn a_table_written_twice_on_a_profile_deleted_meanwhile_is_refused() {
    let schema = PgSchema::new();
    let store = open(&schema);
    let p = profile("prod");
    store.apply(vec![Change::PutProfile(p.clone())]).unwrap();
    let mut other = Elsewhere::begin(
        &schema,
        &format!("DELETE FROM tributary_profiles WHERE id = '{}'", p.id),
        &[&format!("p:{}", p.id), "pn:prod"],
        &[],
    );
    let t = table("orders", Some(&p.id));
    let mut renamed = t.clone();
    renamed.name = "orders_v2".into();
    std::thread::scope(|s| {
        let ours =
            s.spawn(|| store.apply(vec![Change::PutTable(t.clone()), Change::PutTable(renamed)]));
        other.wait_for_a_waiting_writer();
        other.commit();
        let refused = ours.join().unwrap().unwrap_err();
        assert!(
            matches!(refused, CatalogError::NotFound { .. }),
            "{refused}"
        );
    });
    assert!(store.table_names().unwrap().is_empty());
}
