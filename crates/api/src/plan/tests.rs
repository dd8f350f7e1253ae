//! Plans between catalogs built from SQL.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;

pub(super) const SECRET: &str = "hunter2-plan-secret";

/// A catalog holding what `sql` makes, checked as `plan` checks files.
async fn catalog(sql: &str) -> Arc<OverlayStore> {
    let files = [SourceFile {
        name: "catalog.sql".into(),
        text: sql.into(),
    }];
    desired_catalog(None, &files)
        .await
        .unwrap_or_else(|invalid| panic!("{sql}: {:?}", invalid.failures))
}

#[tokio::test]
async fn invalid_files_say_which_statements_of_which_file_failed() {
    let files = [
        SourceFile {
            name: "a.sql".into(),
            text: "CREATE TABLE t WITH (connector = 'impulse', event_rate = '1');".into(),
        },
        SourceFile {
            name: "b.sql".into(),
            text: "CREATE VIEW v AS SELECT * FROM t; CREATE VIEW w AS SELECT * FROM nowhere;"
                .into(),
        },
    ];
    let invalid = desired_catalog(None, &files).await.unwrap_err();
    assert_eq!(invalid.statements, 3);
    assert_eq!(invalid.failures.len(), 1);
    let (file, diagnostics) = &invalid.failures[0];
    assert_eq!(*file, 1);
    assert!(
        diagnostics[0].message.contains("nowhere"),
        "{diagnostics:?}"
    );
}

pub(super) fn base() -> String {
    format!(
        "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'b:9092', validate = false);
         CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://u:{SECRET}@h:6379', password = '{SECRET}', validate = false);
         CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json');
         CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10');
         CREATE VIEW big AS SELECT id FROM orders WHERE amount > 100;"
    )
}

fn text_of(plan: &Plan) -> String {
    let text = plan_text(plan);
    let json = plan_json(plan).to_string();
    assert!(
        !text.contains(SECRET) && !json.contains(SECRET),
        "{text}\n{json}"
    );
    text
}

#[tokio::test]
async fn the_same_statements_plan_nothing() {
    let (a, b) = (catalog(&base()).await, catalog(&base()).await);
    let plan = plan(a.as_ref(), b.as_ref(), false).unwrap();
    assert!(plan.is_empty(), "{}", text_of(&plan));
    assert_eq!(
        text_of(&plan).trim(),
        "No changes: the catalog matches the files."
    );
}

#[tokio::test]
async fn creates_changes_replacements_and_drops_are_listed_option_by_option() {
    let have = catalog(&format!(
        "{}\nCREATE TABLE old WITH (connector = 'impulse', event_rate = '1');",
        base()
    ))
    .await;
    let wanted = catalog(
        &base()
            .replace("topic = 'orders'", "topic = 'orders_v2'")
            .replace(
                "(id BIGINT, amount DOUBLE)",
                "(id BIGINT, amount DOUBLE, note TEXT)",
            )
            .replace(
                &format!("password = '{SECRET}'"),
                "password = 'another-one'",
            )
            .replace(
                "CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10');",
                "CREATE TABLE ticks (x BIGINT) WITH (connector = 'blackhole');
         CREATE TABLE fresh WITH (connector = 'nexmark', event_rate = '5');",
            ),
    )
    .await;
    let kept = plan(wanted.as_ref(), have.as_ref(), false).unwrap();
    let text = text_of(&kept);
    for line in [
        "+ table fresh",
        "~ table orders",
        "    option 'topic': 'orders' -> 'orders_v2'",
        "    column \"note\": (none) -> TEXT",
        "-/+ table ticks",
        "~ profile r",
        "    option 'password': (secret) -> (secret)",
        "Plan: 1 to create, 2 to change, 1 to replace, 0 to drop; 1 kept",
    ] {
        assert!(text.contains(line), "{line} missing:\n{text}");
    }
    assert!(!text.contains("old"), "{text}");
    assert!(!kept.is_empty());
    let pruned = plan(wanted.as_ref(), have.as_ref(), true).unwrap();
    let text = text_of(&pruned);
    assert!(text.contains("- table old"), "{text}");
    assert!(text.contains("1 to drop"), "{text}");
    let json = plan_json(&pruned);
    assert_eq!(json["summary"]["drop"], 1);
    assert_eq!(json["summary"]["replace"], 1);
    // What a server answers reads back as the same plan.
    assert_eq!(plan_from_json(&json), Some(pruned));
    assert_eq!(
        plan_from_json(&serde_json::json!({"changes": [{"action": "maybe"}]})),
        None
    );
}

#[tokio::test]
async fn a_dump_plans_nothing_against_the_catalog_it_came_from() {
    let have = catalog(&base()).await;
    let dumped = crate::dump::dump_catalog(have.as_ref()).unwrap();
    assert!(!dumped.script.contains(SECRET), "{}", dumped.script);
    let wanted = catalog(&dumped.script).await;
    let plan = plan(wanted.as_ref(), have.as_ref(), true).unwrap();
    assert!(plan.is_empty(), "{}", text_of(&plan));
}

#[tokio::test]
async fn a_changed_view_is_shown_on_one_line_without_credentials() {
    let have = catalog(&format!(
        "CREATE VIEW v AS SELECT 'redis://u:{SECRET}@h' AS x;"
    ))
    .await;
    let wanted = catalog("CREATE VIEW v AS\nSELECT 'redis://u:other-pw@h' AS x;").await;
    let text = text_of(&plan(wanted.as_ref(), have.as_ref(), false).unwrap());
    assert!(
        text.contains("~ view v\n    definition: CREATE VIEW"),
        "{text}"
    );
    assert!(!text.contains("other-pw"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains("definition")).count(),
        1,
        "{text}"
    );
}

#[tokio::test]
async fn a_table_is_the_same_whatever_storing_gave_its_record_and_differs_in_anything_else() {
    let sql = "CREATE TABLE orders (id BIGINT) WITH (connector = 'kafka', bootstrap_servers = 'b:9092', topic = 't', type = 'source', format = 'json');";
    let a = catalog(sql).await.table_by_name("orders").unwrap().unwrap();
    let mut stored = a.clone();
    stored.id = tributary_types::TableId::from_suffix("0123456789");
    stored.profile = Some(tributary_types::ProfileId::from_suffix("9876543210"));
    stored.created_at += 10;
    stored.updated_at += 20;
    assert!(compare::same_definition(&a, &stored));
    let changes: [fn(&mut tributary_types::ConnectionTable); 6] = [
        |t| t.name = "Orders".into(),
        |t| t.options[0].key = "other".into(),
        |t| t.config = serde_json::json!({}),
        |t| t.description = "now described".into(),
        |t| t.temporary = true,
        |t| t.schema.fields.clear(),
    ];
    for change in changes {
        let mut other = a.clone();
        change(&mut other);
        assert!(!compare::same_definition(&a, &other), "{other:?}");
    }
}
