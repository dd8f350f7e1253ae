//! `apply`: the catalog made to match files, in one batch or not at all.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;
use crate::plan::apply_files;
use tributary_types::DefinitionKind;

// The catalog and its secret are the plan tests' own.
use super::tests::{SECRET, base};

fn files(sql: &str) -> Vec<SourceFile> {
    vec![SourceFile {
        name: "catalog.sql".into(),
        text: sql.into(),
    }]
}

/// A session over a catalog holding what `sql` makes.
async fn session_with(sql: &str) -> Session {
    let store: Arc<dyn CatalogStore> = Arc::new(OverlayStore::in_memory());
    let session = Session::new(store);
    for outcome in session.run_script(sql, Mode::Run).await {
        outcome.unwrap_or_else(|e| panic!("{sql}: {:?}", e.diagnostics));
    }
    session
}

async fn apply(session: &Session, sql: &str, options: ApplyOptions) -> Result<Applied, ApplyError> {
    apply_files(session, &files(sql), &options).await
}

fn everything(store: &dyn CatalogStore) -> String {
    crate::dump::dump_catalog(store).unwrap().script
}

#[tokio::test]
async fn apply_creates_changes_and_prunes_then_plans_nothing() {
    let session = session_with(&format!(
        "{}\nCREATE TABLE old WITH (connector = 'impulse', event_rate = '1');",
        base()
    ))
    .await;
    let store = session.store().clone();
    let orders_before = store.table_by_name("orders").unwrap().unwrap();
    let k_before = store.profile_by_name("k").unwrap().unwrap();
    let wanted = base()
        .replace("topic = 'orders'", "topic = 'orders_v2'")
        .replace("b:9092", "c:9092")
        + "\nCREATE TABLE fresh WITH (connector = 'nexmark', event_rate = '5');";
    // Without --prune, `old` stays.
    let applied = apply(&session, &wanted, ApplyOptions::default())
        .await
        .unwrap();
    assert_eq!(
        applied.plan.count(Action::Create),
        1,
        "{}",
        plan_text(&applied.plan)
    );
    assert_eq!(
        applied.plan.count(Action::Change),
        2,
        "{}",
        plan_text(&applied.plan)
    );
    assert!(store.table_by_name("old").unwrap().is_some());
    let orders = store.table_by_name("orders").unwrap().unwrap();
    assert_eq!(orders.id, orders_before.id, "changed in place");
    assert_eq!(orders.created_at, orders_before.created_at);
    assert_eq!(orders.config["topic"], "orders_v2");
    let k = store.profile_by_name("k").unwrap().unwrap();
    assert_eq!(k.id, k_before.id);
    assert_eq!(orders.profile.as_ref(), Some(&k.id));
    assert!(store.table_by_name("fresh").unwrap().is_some());
    // The view reads the changed table still.
    assert!(
        store
            .definition(DefinitionKind::View, "big")
            .unwrap()
            .is_some()
    );
    // With --prune, `old` goes; then the files and the catalog agree.
    let pruned = apply(
        &session,
        &wanted,
        ApplyOptions {
            prune: true,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(pruned.plan.count(Action::Drop), 1);
    assert!(store.table_by_name("old").unwrap().is_none());
    let again = apply(&session, &wanted, ApplyOptions::default())
        .await
        .unwrap();
    assert!(again.plan.is_empty(), "{}", plan_text(&again.plan));
    let desired = desired_catalog(None, &files(&wanted)).await.unwrap();
    assert!(
        plan(desired.as_ref(), store.as_ref(), true)
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_dump_applied_with_a_change_keeps_the_stored_secrets() {
    let session = session_with(&base()).await;
    let store = session.store().clone();
    let dumped = everything(store.as_ref());
    assert!(!dumped.contains(SECRET), "{dumped}");
    // The dump's secrets are references standing for the stored values; a change of
    // another option of the same profile and table must not replace them.
    let edited = dumped
        .replace("h:6379", "h2:6379")
        .replace("'orders'", "'orders_v3'");
    assert_ne!(edited, dumped);
    let applied = apply(&session, &edited, ApplyOptions::default())
        .await
        .unwrap();
    let text = plan_text(&applied.plan);
    assert!(text.contains("~ profile r"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
    let r = store.profile_by_name("r").unwrap().unwrap();
    let stored = serde_json::to_string(&r).unwrap();
    assert!(!stored.contains("TRIBUTARY_SECRET"), "{stored}");
    assert!(stored.contains(&format!("u:{SECRET}@h2:6379")), "{stored}");
    assert_eq!(
        r.options
            .iter()
            .find(|o| o.key == "password")
            .unwrap()
            .value
            .as_text(),
        SECRET
    );
    // And the catalog now dumps as the edited files say.
    let desired = desired_catalog(None, &files(&edited)).await.unwrap();
    assert!(
        plan(desired.as_ref(), store.as_ref(), true)
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_replacement_needs_allow_replace_and_keeps_the_views_that_read_it() {
    let session = session_with(&base()).await;
    let store = session.store().clone();
    let before = everything(store.as_ref());
    let wanted = base().replace(
        "CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json');",
        "CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (connector = 'sse', endpoint = 'http://127.0.0.1:1/orders', format = 'json');",
    );
    match apply(&session, &wanted, ApplyOptions::default()).await {
        Err(ApplyError::ReplaceNotAllowed { replaced, .. }) => {
            assert_eq!(replaced, vec!["table orders".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(everything(store.as_ref()), before, "nothing was applied");
    let old_id = store.table_by_name("orders").unwrap().unwrap().id;
    let applied = apply(
        &session,
        &wanted,
        ApplyOptions {
            allow_replace: true,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(applied.plan.count(Action::Replace), 1);
    let orders = store.table_by_name("orders").unwrap().unwrap();
    assert_ne!(orders.id, old_id);
    assert_eq!(orders.connector, "sse");
    assert!(
        store
            .definition(DefinitionKind::View, "big")
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_failure_anywhere_applies_nothing() {
    let session = session_with(&base()).await;
    let store = session.store().clone();
    let before = everything(store.as_ref());
    let fingerprint_before = fingerprint(store.as_ref()).unwrap();
    // Valid files, many changes, and one profile whose connection test fails (nothing
    // listens on port 1): not one change is made.
    let wanted = base().replace("topic = 'orders'", "topic = 'x'")
        + "\nCREATE TABLE fresh WITH (connector = 'nexmark', event_rate = '5');
           CREATE CONNECTION PROFILE dead WITH (connector = 'redis', address = 'redis://127.0.0.1:1');";
    match apply(&session, &wanted, ApplyOptions::default()).await {
        Err(ApplyError::Refused { failures, plan }) => {
            assert_eq!(plan.count(Action::Create), 2);
            let (file, diagnostics) = &failures[0];
            assert_eq!(*file, Some(0));
            assert!(diagnostics[0].message.contains("'dead'"), "{diagnostics:?}");
            // The diagnostic points at the profile's name in its file.
            let at = diagnostics[0].span.unwrap().start;
            let last = wanted.lines().last().unwrap();
            assert_eq!(at.line, wanted.lines().count() as u64);
            assert_eq!(at.column, last.find("dead").unwrap() as u64 + 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(everything(store.as_ref()), before);
    assert_eq!(fingerprint(store.as_ref()).unwrap(), fingerprint_before);
    // A kept view reading a table the files drop (with --prune, and the view kept by
    // the files): refused by the catalog's rules, nothing applied.
    let without_orders = base()
        .replace("CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json');", "")
        .replace("CREATE VIEW big AS SELECT id FROM orders WHERE amount > 100;", "");
    let invalid = apply(
        &session,
        &(without_orders.clone() + "CREATE VIEW big AS SELECT id FROM orders;"),
        ApplyOptions::default(),
    )
    .await;
    assert!(
        matches!(invalid, Err(ApplyError::Invalid(_))),
        "{invalid:?}"
    );
    assert_eq!(everything(store.as_ref()), before);
}

#[tokio::test]
async fn a_saved_plan_is_refused_once_the_catalog_has_changed() {
    let session = session_with(&base()).await;
    let store = session.store().clone();
    let planned_against = fingerprint(store.as_ref()).unwrap();
    let wanted = base().replace("event_rate = '10'", "event_rate = '20'");
    // Someone else changes the catalog after the plan was made.
    for outcome in session
        .run_script(
            "CREATE TABLE meanwhile WITH (connector = 'impulse', event_rate = '1');",
            Mode::Run,
        )
        .await
    {
        outcome.unwrap();
    }
    let before = everything(store.as_ref());
    let options = ApplyOptions {
        planned_against: Some(planned_against),
        ..Default::default()
    };
    match apply(&session, &wanted, options).await {
        Err(e @ ApplyError::CatalogChanged { .. }) => {
            assert!(e.to_string().contains("has changed since the plan"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(everything(store.as_ref()), before);
    // Against the fingerprint of now, it applies.
    let now = fingerprint(store.as_ref()).unwrap();
    let options = ApplyOptions {
        planned_against: Some(now.clone()),
        ..Default::default()
    };
    let applied = apply(&session, &wanted, options).await.unwrap();
    assert_eq!(applied.plan.count(Action::Change), 1);
    assert_ne!(applied.fingerprint, now, "a change changes the fingerprint");
    assert_eq!(applied.fingerprint, fingerprint(store.as_ref()).unwrap());
    // A plan file reads back as it was written.
    let saved = PlanFile {
        files: files(&wanted),
        prune: true,
        fingerprint: applied.fingerprint.clone(),
        plan: applied.plan.clone(),
    };
    assert_eq!(
        PlanFile::parse(&saved.to_json().to_string()).unwrap(),
        saved
    );
    let wrong = PlanFile::parse("{\"format\": \"tributary-plan/9\"}").unwrap_err();
    assert!(wrong.contains("does not read"), "{wrong}");
    assert!(PlanFile::parse("[1,").unwrap_err().contains("line 1"));
}
