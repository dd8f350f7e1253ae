//! Views and declared functions in every store: one namespace with tables, reads that
//! must exist, drops refused while something reads, no cycles, atomic batches.

#![allow(clippy::unwrap_used)] // Tests panic on failure.

mod common;

use common::{reopen, stores, table, view};
use tributary_catalog::{CatalogError, CatalogStore, Change};
use tributary_types::{
    Definition, DefinitionBody, DefinitionKind, Dependency, FunctionArg, FunctionSignature,
};

fn function(name: &str) -> Definition {
    Definition::new(
        name.into(),
        DefinitionBody::Function(FunctionSignature {
            args: vec![FunctionArg {
                name: None,
                data_type: "BIGINT".into(),
            }],
            returns: "BIGINT".into(),
            aggregate: false,
            is_async: false,
            language: None,
        }),
        vec![],
        1,
    )
}

fn put(d: Definition) -> Change {
    Change::PutDefinition {
        definition: d,
        replace: false,
    }
}

fn replace(d: Definition) -> Change {
    Change::PutDefinition {
        definition: d,
        replace: true,
    }
}

fn drop_view(name: &str) -> Change {
    Change::DeleteDefinition(DefinitionKind::View, name.into())
}

#[test]
fn views_share_the_table_namespace_and_read_what_exists() {
    for (store, _dir) in stores() {
        let orders = table("Orders", None);
        store.apply(vec![Change::PutTable(orders.clone())]).unwrap();
        let err = store.apply(vec![put(view("ORDERS", &[]))]).unwrap_err();
        assert_eq!(err.to_string(), "table 'ORDERS' already exists");
        store
            .apply(vec![put(view("Big", &[Dependency::relation("orders")]))])
            .unwrap();
        let err = store
            .apply(vec![Change::PutTable(table("big", None))])
            .unwrap_err();
        assert_eq!(err.to_string(), "view 'big' already exists");
        let err = store.apply(vec![put(view("big", &[]))]).unwrap_err();
        assert!(matches!(err, CatalogError::AlreadyExists { .. }), "{err}");
        let err = store
            .apply(vec![put(view("v", &[Dependency::relation("nope")]))])
            .unwrap_err();
        assert_eq!(err.to_string(), "table 'nope' does not exist");
        let err = store
            .apply(vec![put(view("v", &[Dependency::function("f")]))])
            .unwrap_err();
        assert_eq!(err.to_string(), "function 'f' does not exist");
        let got = store
            .definition(DefinitionKind::View, "BIG")
            .unwrap()
            .unwrap();
        assert_eq!(got.name, "Big");
        assert!(
            store
                .definition(DefinitionKind::Function, "big")
                .unwrap()
                .is_none()
        );
        let readers = store.readers(&Dependency::relation("ORDERS")).unwrap();
        assert_eq!(readers.len(), 1);
        assert_eq!(readers[0].name, "Big");
    }
}

#[test]
fn nothing_read_is_dropped_and_cascades_are_one_batch() {
    for (store, _dir) in stores() {
        let t = table("t", None);
        store
            .apply(vec![
                Change::PutTable(t.clone()),
                put(function("f")),
                put(view(
                    "v1",
                    &[Dependency::relation("t"), Dependency::function("f")],
                )),
                put(view("v2", &[Dependency::relation("v1")])),
            ])
            .unwrap();
        let err = store
            .apply(vec![Change::DeleteTable(t.id.clone())])
            .unwrap_err();
        assert_eq!(err.to_string(), "table 't' is read by view v1");
        let err = store.apply(vec![drop_view("v1")]).unwrap_err();
        assert_eq!(err.to_string(), "view 'v1' is read by view v2");
        let err = store
            .apply(vec![Change::DeleteDefinition(
                DefinitionKind::Function,
                "F".into(),
            )])
            .unwrap_err();
        assert_eq!(err.to_string(), "function 'f' is read by view v1");
        assert_eq!(store.definitions(DefinitionKind::View).unwrap().len(), 2);
        store
            .apply(vec![
                drop_view("v2"),
                drop_view("v1"),
                Change::DeleteTable(t.id),
                Change::DeleteDefinition(DefinitionKind::Function, "f".into()),
            ])
            .unwrap();
        assert!(store.definitions(DefinitionKind::View).unwrap().is_empty());
        assert!(
            store
                .definitions(DefinitionKind::Function)
                .unwrap()
                .is_empty()
        );
        assert!(
            store
                .readers(&Dependency::relation("t"))
                .unwrap()
                .is_empty()
        );
        let err = store.apply(vec![drop_view("v1")]).unwrap_err();
        assert_eq!(err.to_string(), "view 'v1' does not exist");
    }
}

#[test]
fn replacing_moves_the_reads_and_never_makes_a_cycle() {
    for (store, _dir) in stores() {
        let (a, b) = (table("a", None), table("b", None));
        store
            .apply(vec![
                Change::PutTable(a.clone()),
                Change::PutTable(b.clone()),
                put(view("v1", &[Dependency::relation("a")])),
                put(view("v2", &[Dependency::relation("v1")])),
            ])
            .unwrap();
        store
            .apply(vec![replace(view("v1", &[Dependency::relation("b")]))])
            .unwrap();
        // `a` is free now, `b` is read.
        store.apply(vec![Change::DeleteTable(a.id)]).unwrap();
        let err = store.apply(vec![Change::DeleteTable(b.id)]).unwrap_err();
        assert_eq!(err.to_string(), "table 'b' is read by view v1");
        let err = store
            .apply(vec![replace(view("v1", &[Dependency::relation("v2")]))])
            .unwrap_err();
        assert_eq!(err.to_string(), "'v1' would read itself through 'v2'");
        let err = store
            .apply(vec![replace(view("v1", &[Dependency::relation("v1")]))])
            .unwrap_err();
        assert!(matches!(err, CatalogError::Cycle { .. }), "{err}");
        // A failed batch changed nothing: v1 still reads b.
        let v1 = store
            .definition(DefinitionKind::View, "v1")
            .unwrap()
            .unwrap();
        assert_eq!(v1.reads, vec![Dependency::relation("b")]);
        // Functions have a namespace of their own.
        store.apply(vec![put(function("v1"))]).unwrap();
        assert!(
            store
                .definition(DefinitionKind::View, "v1")
                .unwrap()
                .is_some()
        );
    }
}

#[test]
fn a_view_may_take_a_dropped_tables_name_in_the_same_batch() {
    for (store, _dir) in stores() {
        let t = table("t", None);
        let u = table("u", None);
        store
            .apply(vec![Change::PutTable(t.clone()), Change::PutTable(u)])
            .unwrap();
        store
            .apply(vec![
                Change::DeleteTable(t.id),
                put(view("t", &[Dependency::relation("u")])),
            ])
            .unwrap();
        assert!(store.table_by_name("t").unwrap().is_none());
        assert!(
            store
                .definition(DefinitionKind::View, "t")
                .unwrap()
                .is_some()
        );
    }
}

#[test]
fn definitions_persist_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = tributary_catalog::SledStore::open(dir.path()).unwrap();
        store
            .apply(vec![
                Change::PutTable(table("t", None)),
                put(function("f")),
                put(view(
                    "v",
                    &[Dependency::relation("t"), Dependency::function("f")],
                )),
            ])
            .unwrap();
    }
    let store = reopen(dir.path());
    let v = store
        .definition(DefinitionKind::View, "v")
        .unwrap()
        .unwrap();
    assert_eq!(v.reads.len(), 2);
    assert_eq!(store.readers(&Dependency::function("f")).unwrap().len(), 1);
    assert_eq!(
        store.definitions(DefinitionKind::Function).unwrap()[0].name,
        "f"
    );
}
