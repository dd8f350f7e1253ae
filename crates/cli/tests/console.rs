//! The web console in a real headless Chromium against the real `tributary serve`:
//! token sign-in, the connection wizard end to end (impulse; MQTT with a new profile
//! tested against the local broker; Kafka with an untested profile and a pasted JSON
//! Schema), a failing profile test, a server's field error beside its field, the SQL
//! tab's Check, a refused delete, the form renderer's unit tests, and load times.
//! Screenshots of the key steps are saved under `target/console-screenshots/`.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::browser::Browser;
use common::server::{Server, TOKEN};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// A server on a new catalog, and a browser signed in to it.
async fn signed_in(dir: &Path, test: &str) -> (Server, Browser) {
    let catalog = dir.join("cat");
    let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(&catalog)
        .args(["-q", "run", "-c", "SHOW TABLES"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let server = Server::start(&catalog, dir.join("server.log"));
    let browser = Browser::start(test).await;
    browser.go(&format!("{}/", server.url)).await;
    let token = browser.find("#login-token").await;
    browser.type_into(&token, TOKEN).await;
    browser.click_button("Sign in").await;
    browser.wait_text("main", "Connections").await;
    (server, browser)
}

/// Click Next (or the wizard's last button) and wait for `step` to be the current one.
async fn next_step(b: &Browser, label: &str, step: &str) {
    b.click_button(label).await;
    b.wait_text("ol.steps li[aria-current=step]", step).await;
}

/// Run SQL against the server's catalog through its API.
async fn api_sql(server: &Server, sql: &str) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{}/api/v1/sql", server.url))
        .bearer_auth(TOKEN)
        .header("Content-Type", "application/json")
        .body(json!({ "sql": sql }).to_string())
        .send()
        .await
        .unwrap();
    common::browser::json_of(response).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_asked_for_checked_and_kept_for_the_tab() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let server = Server::start(&catalog, dir.path().join("server.log"));
    let b = Browser::start("login").await;
    b.go(&format!("{}/#/profiles", server.url)).await;
    let token = b.find("#login-token").await;
    b.shot("sign-in").await;
    b.type_into(&token, "not-the-token-000").await;
    b.click_button("Sign in").await;
    b.wait_text("#login-error", "did not accept").await;
    b.shot("wrong-token").await;
    b.type_into(&token, TOKEN).await;
    b.click_button("Sign in").await;
    b.wait_text("main", "Connection profiles").await;
    // Kept in sessionStorage (this tab), not localStorage.
    let kept = b
        .js(
            "return [sessionStorage.getItem('tributary.token'), localStorage.length]",
            vec![],
        )
        .await;
    assert_eq!(kept, json!([TOKEN, 0]));
    // A reload stays signed in.
    b.go(&format!("{}/#/sql", server.url)).await;
    b.wait_text("main", "Check").await;
    assert!(!b.exists("#login[open]").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wizard_creates_an_impulse_table_and_the_sql_tab_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let (server, b) = signed_in(dir.path(), "wizard-impulse").await;
    b.shot("connections-empty").await;
    b.click_button("New connection").await;
    let card = b.find("button.card[data-connector=impulse]").await;
    b.shot("choose-connector").await;
    b.click(&card).await;
    b.wait_text("ol.steps li[aria-current=step]", "Table").await;
    // No profile step for a connector without profiles, and no schema step for a fixed
    // schema.
    let steps = b.text("ol.steps").await;
    assert!(
        !steps.contains("Profile") && !steps.contains("Schema"),
        "{steps}"
    );
    b.fill("Event Rate", "50").await;
    b.fill("Message Count", "20").await;
    b.shot("impulse-options").await;
    next_step(&b, "Next", "Test").await;
    // A generator has no endpoint to test: its stage says so, and the verdict passes.
    b.wait_text("main", "The test passed").await;
    b.wait_text("ol.stages", "NOT_TESTABLE").await;
    b.shot("impulse-test").await;
    next_step(&b, "Next", "Create").await;
    b.fill("Table name", "ticks").await;
    let sql = b.wait_text("main", "CREATE TABLE \"ticks\"").await;
    assert!(sql.contains("connector = 'impulse'"), "{sql}");
    b.shot("impulse-create").await;
    b.click_button("Create connection").await;
    b.wait_text("main h1", "ticks").await;
    b.wait_text("main", "counter").await;
    b.shot("impulse-table").await;
    // The CREATE TABLE tab has the statement, with a copy button.
    b.click_button("CREATE TABLE").await;
    b.find_text("button.copy", "Copy").await;
    // It is in the catalog, as SQL sees it.
    let answer = api_sql(&server, "SELECT count(*) AS n FROM ticks").await;
    assert_eq!(answer["results"][0]["rows"], json!([[20]]), "{answer}");

    // The SQL tab: a script whose third line is wrong is checked, the error underlined
    // at its line.
    b.go(&format!("{}/#/sql", server.url)).await;
    let editor = b.find(".editor textarea").await;
    b.type_into(&editor, "SELECT counter\nFROM ticks\nWHERE nope > 1;")
        .await;
    b.click_button("Check").await;
    let listed = b.wait_text(".diagnostics", "3:7").await;
    assert!(listed.contains("nope"), "{listed}");
    assert!(b.exists(".editor .marks mark").await);
    assert_eq!(b.text(".gutter .bad").await, "3");
    b.shot("sql-check").await;
    // A query over an endless source is a valid pipeline; Check says that as a preview
    // it would not finish, and how to bound it.
    api_sql(
        &server,
        "CREATE TABLE endless WITH (connector = 'impulse', event_rate = 10)",
    )
    .await;
    b.type_into(&editor, "SELECT count(*) FROM endless;").await;
    b.click_button("Check").await;
    let listed = b
        .wait_text(".diagnostics", "as a preview (run, the shell, POST /sql)")
        .await;
    assert!(
        listed.contains("table 'endless' (connector 'impulse') never ends")
            && listed.contains("SET preview.max_rows"),
        "{listed}"
    );
    b.wait_text(".output", "1 statement(s) valid").await;
    assert!(
        !b.exists(".gutter .bad").await,
        "a note marks no line as bad"
    );
    b.shot("sql-check-endless").await;
    // Explain shows the plan of the statement at the cursor.
    b.type_into(
        &editor,
        "SELECT counter FROM ticks ORDER BY counter LIMIT 5;",
    )
    .await;
    b.click_button("Explain").await;
    b.wait_text(".output", "logical_plan").await;
    b.shot("sql-explain").await;
    // Run streams the rows into a table.
    b.click_button("Run").await;
    b.wait_text(".output", "5 rows").await;
    b.shot("sql-run").await;
    // The same pages in dark mode.
    b.dark().await;
    b.shot("sql-run-dark").await;
    b.go(&format!("{}/#/connections/ticks", server.url)).await;
    b.wait_text("main h1", "ticks").await;
    // The table view says what its event time is, as DESCRIBE does.
    let time = b.wait_text("p.event-time", "_timestamp").await;
    assert!(
        time.contains("the wall clock when each row is made")
            && time.contains("_timestamp - INTERVAL '1' SECOND"),
        "{time}"
    );
    b.shot("table-dark").await;
    b.go(&format!("{}/#/new", server.url)).await;
    b.find("button.card[data-connector=kafka]").await;
    b.shot("connectors-dark").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wizard_creates_an_mqtt_profile_tested_live_and_a_table_reading_samples() {
    let dir = tempfile::tempdir().unwrap();
    let (server, b) = signed_in(dir.path(), "wizard-mqtt").await;
    let topic = format!("tributary/console/{}", std::process::id());
    // A retained message: the table's test reads it as soon as it subscribes.
    let published = Command::new("mosquitto_pub")
        .args(["-h", "127.0.0.1", "-p", "1883", "-r", "-t", &topic])
        .args(["-m", r#"{"device": "d1", "reading": 42}"#])
        .status()
        .expect("mosquitto_pub must be installed (.ci/run installs mosquitto-clients)");
    assert!(published.success());

    b.go(&format!("{}/#/new", server.url)).await;
    b.click(&b.find("button.card[data-connector=mqtt]").await)
        .await;
    b.wait_text("ol.steps li[aria-current=step]", "Profile")
        .await;
    // No stored profile yet: the form for a new one.
    b.fill("Profile name", "local_mqtt").await;
    b.fill("URL", "mqtt://127.0.0.1:1883").await;
    b.shot("mqtt-profile-form").await;
    b.click_button("Test connection").await;
    b.wait_text(".test-results", "The test passed").await;
    let stages = b.text("ol.stages").await;
    assert!(stages.contains("connect"), "{stages}");
    b.shot_of(".test-results", "mqtt-profile-tested").await;
    b.click_button("Create profile").await;
    // The profile's name is in the form already: wait for the wizard to say it was made
    // (the create tests the connection first, which takes longer on a loaded machine).
    b.wait_text("body", "Profile local_mqtt was created").await;
    next_step(&b, "Next", "Table").await;
    b.fill("Topic", &topic).await;
    next_step(&b, "Next", "Schema").await;
    // Inferred from the retained message, read from the broker with the wizard's settings.
    b.click(&b.labelled("Infer from sample messages").await)
        .await;
    b.click_button("Read sample messages").await;
    let inferred = b
        .wait_text("main", "Inferred 2 columns from 1 message")
        .await;
    assert!(
        inferred.contains("device") && inferred.contains("reading"),
        "{inferred}"
    );
    b.shot("mqtt-inferred").await;
    // Then listed by hand instead.
    b.click(&b.labelled("List the columns").await).await;
    b.type_into(&b.find("input[aria-label='Column 1 name']").await, "device")
        .await;
    b.click_button("Add a column").await;
    b.type_into(
        &b.find("input[aria-label='Column 2 name']").await,
        "reading",
    )
    .await;
    b.js(
        "const s = document.querySelector(\"select[aria-label='Column 2 type']\"); s.value = 'BIGINT'; s.dispatchEvent(new Event('change'));",
        vec![],
    )
    .await;
    b.click_button("Preview columns").await;
    b.wait_text("main", "Resulting columns").await;
    b.shot_of(".wizard-nav", "mqtt-schema").await;
    next_step(&b, "Next", "Test").await;
    b.wait_text("main", "The test passed").await;
    let rows = b.wait_text("main", "Sampled rows").await;
    assert!(rows.contains("d1") && rows.contains("42"), "{rows}");
    b.shot("mqtt-test").await;
    next_step(&b, "Next", "Create").await;
    b.fill("Table name", "readings").await;
    b.wait_text("main", "CREATE TABLE \"readings\"").await;
    b.click_button("Create connection").await;
    b.wait_text("main h1", "readings").await;
    // Tested in the wizard, so created with a connection check, whose result it keeps.
    b.wait_text("main .facts", "passed").await;
    b.shot("mqtt-table").await;
    let answer = api_sql(&server, "DESCRIBE readings").await;
    assert!(
        answer["results"][0]["rows"].to_string().contains("reading"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wizard_creates_a_kafka_table_with_an_untested_profile_and_a_pasted_json_schema() {
    let dir = tempfile::tempdir().unwrap();
    let (server, b) = signed_in(dir.path(), "wizard-kafka").await;
    b.go(&format!("{}/#/new?connector=kafka", server.url)).await;
    b.wait_text("ol.steps li[aria-current=step]", "Profile")
        .await;
    b.fill("Profile name", "prod").await;
    // A reserved name that never resolves (RFC 6761), whatever the machine's network.
    b.fill("Bootstrap Servers", "kafka-1.invalid:9092").await;
    // Stored without a test: no broker runs here.
    b.click(&b.find_text("label", "Store without testing").await)
        .await;
    b.shot("kafka-profile").await;
    b.click_button("Create profile").await;
    b.wait_text("body", "Profile prod was created").await;
    next_step(&b, "Next", "Table").await;
    b.fill("Topic", "orders").await;
    b.shot("kafka-options").await;
    next_step(&b, "Next", "Schema").await;
    b.click(&b.find_text("label", "JSON Schema").await).await;
    let schema = r#"{"type": "object", "properties": {"id": {"type": "integer"}, "customer": {"type": "string"}, "at": {"type": "string", "format": "date-time"}}, "required": ["id", "at"]}"#;
    b.type_into(&b.labelled("JSON Schema document").await, schema)
        .await;
    b.click_button("Preview columns").await;
    let preview = b.wait_text("main", "Resulting columns").await;
    assert!(preview.contains("customer"), "{preview}");
    b.select("Event-time column", "at").await;
    b.shot("kafka-schema").await;
    next_step(&b, "Next", "Test").await;
    // Nothing answers at the profile's address: the failing stage, its code and hint.
    let verdict = b
        .wait_text("main", "The test failed at stage 'resolve'")
        .await;
    for shown in [
        // The table has no name yet, and no stand-in name is shown.
        "the connection test of the new table failed at stage 'resolve'",
        "Code: DNS_UNRESOLVED",
        "bootstrap server 'kafka-1.invalid:9092' does not resolve",
        "Check 'bootstrap_servers': the host name does not resolve from here.",
    ] {
        assert!(verdict.contains(shown), "{shown} missing:\n{verdict}");
    }
    b.shot("kafka-test-failed").await;
    next_step(&b, "Next", "Create").await;
    b.fill("Table name", "orders").await;
    let sql = b.wait_text("main", "WATERMARK FOR").await;
    assert!(sql.contains("'json.schema' = '{"), "{sql}");
    b.click_button("Create connection").await;
    b.wait_text("main h1", "orders").await;
    b.wait_text("main", "customer").await;
    b.shot("kafka-table").await;

    // The profile cannot be deleted while the table uses it; the refusal names it.
    b.go(&format!("{}/#/profiles/prod", server.url)).await;
    b.wait_text("main", "orders").await;
    b.click_button("Delete").await;
    b.click(&b.find_text("dialog button.danger", "Delete").await)
        .await;
    let refused = b.wait_text("main .banner.error", "not deleted").await;
    assert!(refused.contains("orders"), "{refused}");
    b.shot_of("main .banner.error", "profile-delete-refused")
        .await;
    let still = api_sql(&server, "SHOW CONNECTION PROFILES").await;
    assert!(still.to_string().contains("prod"), "{still}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_profile_test_shows_its_stage_code_and_hint_and_server_errors_sit_by_their_field()
{
    let dir = tempfile::tempdir().unwrap();
    let (server, b) = signed_in(dir.path(), "profile-errors").await;
    b.go(&format!("{}/#/profiles/new?connector=mqtt", server.url))
        .await;
    b.fill("Profile name", "broken").await;
    // Nothing listens on port 1.
    b.fill("URL", "mqtt://127.0.0.1:1").await;
    b.click_button("Test connection").await;
    let failed = b
        .wait_text(".test-results", "failed at stage 'connect'")
        .await;
    assert!(failed.contains("CONNECT_REFUSED"), "{failed}");
    assert!(failed.contains("broker is running"), "the hint: {failed}");
    assert!(b.exists("ol.stages li.failed").await);
    b.shot_of(".test-results", "profile-test-failed").await;
    // A rule only the server knows: TLS options with a plain mqtt:// URL. Its error is
    // shown beside the CA field.
    b.fill("URL", "mqtt://127.0.0.1:1883").await;
    b.fill("CA", "/etc/ssl/ca.pem").await;
    b.click_button("Create profile").await;
    let beside = b
        .js(
            "const l = [...document.querySelectorAll('label')].find(l => l.textContent.startsWith('CA')); return l.closest('.field').querySelector('.field-error').textContent;",
            vec![],
        )
        .await;
    let beside = beside.as_str().unwrap_or_default().to_string();
    let beside = if beside.is_empty() {
        b.wait_text(".invalid .field-error", "only applies").await
    } else {
        beside
    };
    assert!(beside.contains("only applies to ssl://"), "{beside}");
    b.shot("field-error").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_tab_shows_and_applies_what_pasted_sql_would_change_and_never_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let (server, b) = signed_in(dir.path(), "plan").await;
    let secret = "hunter2-console-plan";
    api_sql(
        &server,
        &format!("CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://h:6379', password = '{secret}', validate = false); CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10'); CREATE TABLE old WITH (connector = 'impulse', event_rate = '1');"),
    )
    .await;
    b.go(&format!("{}/#/plan", server.url)).await;
    b.wait_text("main h1", "Plan").await;
    let paste = |sql: String| {
        let b = &b;
        async move {
            b.js(
                "const t = document.querySelector('textarea.mono'); t.value = arguments[0]; t.dispatchEvent(new Event('input'));",
                vec![json!(sql)],
            )
            .await;
        }
    };
    paste("CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://h:6379', password = 'rotated', validate = false);\nCREATE TABLE ticks WITH (connector = 'impulse', event_rate = '20');\nCREATE TABLE bids WITH (connector = 'nexmark', event_rate = '5');".into()).await;
    // The button, not the navigation's link of the same name.
    b.click(&b.find_text("button", "Plan").await).await;
    let shown = b
        .wait_text("main", "1 to create, 2 to change, 0 to replace, 0 to drop")
        .await;
    for part in ["1 kept", "option 'event_rate'", "(secret)", "bids"] {
        assert!(shown.contains(part), "{part} missing:\n{shown}");
    }
    assert!(
        !shown.contains(secret) && !shown.contains("rotated"),
        "{shown}"
    );
    b.js(
        "document.querySelector('.plan-change').scrollIntoView();",
        vec![],
    )
    .await;
    b.shot("plan-changes").await;
    // Applied as shown: every change at once.
    b.click(&b.find_text("button", "Apply these changes").await)
        .await;
    let shown = b
        .wait_text(
            "main",
            "Applied: 1 created, 2 changed, 0 replaced, 0 dropped.",
        )
        .await;
    assert!(
        !shown.contains(secret) && !shown.contains("rotated"),
        "{shown}"
    );
    b.shot("plan-applied").await;
    let answer = api_sql(&server, "SHOW CREATE TABLE ticks; SHOW TABLES").await;
    assert!(
        answer.to_string().contains("20") && answer.to_string().contains("bids"),
        "{answer}"
    );
    // A plan made before the catalog changed is not applied.
    paste("CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://h:6379', password = 'rotated', validate = false);\nCREATE TABLE ticks WITH (connector = 'impulse', event_rate = '30');\nCREATE TABLE bids WITH (connector = 'nexmark', event_rate = '5');".into()).await;
    b.click(&b.find_text("button", "Plan").await).await;
    b.wait_text("main", "0 to create, 1 to change").await;
    api_sql(
        &server,
        "CREATE TABLE meanwhile WITH (connector = 'impulse', event_rate = '1');",
    )
    .await;
    b.click(&b.find_text("button", "Apply these changes").await)
        .await;
    let shown = b.wait_text("main", "Press Plan again").await;
    assert!(
        shown.contains("has changed since the plan was made"),
        "{shown}"
    );
    b.js(
        "document.querySelector('.plan-apply').scrollIntoView({block: 'end'});",
        vec![],
    )
    .await;
    b.shot("plan-stale").await;
    let answer = api_sql(&server, "SHOW CREATE TABLE ticks").await;
    assert!(answer.to_string().contains("20"), "{answer}");
    // An invalid statement: where it is.
    paste("CREATE TABLE ticks WITH (connector = 'impulse', event_rat = '20');".into()).await;
    // The button, not the navigation's link of the same name.
    b.click(&b.find_text("button", "Plan").await).await;
    let shown = b.wait_text("main", "line 1, column").await;
    assert!(shown.contains("event_rat"), "{shown}");
    b.shot("plan-invalid").await;
    // Not applied.
    let answer = api_sql(&server, "SHOW CREATE TABLE ticks").await;
    assert!(answer.to_string().contains("20"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_renderer_passes_its_unit_tests_and_renders_every_connectors_forms() {
    let dir = tempfile::tempdir().unwrap();
    let (server, b) = signed_in(dir.path(), "form-renderer").await;
    let tests = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/console_form.test.js"),
    )
    .unwrap();
    let script = format!(
        "const done = arguments[arguments.length - 1];\n{tests}\nrun(arguments[0], arguments[1]).then(done, (e) => done({{failures: [String(e)], passed: 0}}));"
    );
    let result = b
        .js_async(&script, vec![json!(server.url), json!(TOKEN)])
        .await;
    assert_eq!(result["failures"], json!([]), "{result}");
    assert!(result["passed"].as_u64().unwrap() >= 12, "{result}");
    let connectors = result["connectors"].as_u64().unwrap();
    assert!(connectors >= 20, "{result}");
    // Both forms of each connector that has a profile, and every table form.
    assert!(result["forms"].as_u64().unwrap() > connectors, "{result}");
}

/// Load times, by the Navigation Timing API and the wizard's own `wizard-step` measures.
/// The figures go to BENCHMARKS.md from a run on an idle machine (`cargo test --test
/// console -- --nocapture timing`); the bound here only catches a page gone badly slow,
/// as other tests may share the machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_and_wizard_step_times_are_measured() {
    let dir = tempfile::tempdir().unwrap();
    let (server, b) = signed_in(dir.path(), "timing").await;
    // A fresh load of the page, signed in (the token stays with the tab).
    b.go("about:blank").await;
    b.go(&format!("{}/#/connections", server.url)).await;
    b.wait_text("main", "Connections").await;
    let nav = b
        .js(
            "const n = performance.getEntriesByType('navigation')[0]; return {load: n.loadEventEnd - n.startTime, dom: n.domContentLoadedEventEnd - n.startTime};",
            vec![],
        )
        .await;
    b.go(&format!("{}/#/new", server.url)).await;
    b.click(&b.find("button.card[data-connector=impulse]").await)
        .await;
    b.wait_text("ol.steps li[aria-current=step]", "Table").await;
    b.fill("Event Rate", "10").await;
    b.fill("Message Count", "5").await;
    next_step(&b, "Next", "Test").await;
    b.wait_text("main", "The test passed").await;
    next_step(&b, "Next", "Create").await;
    // A connector with a profile and a schema: those steps too.
    api_sql(
        &server,
        "CREATE CONNECTION PROFILE m WITH (connector = 'mqtt', url = 'mqtt://127.0.0.1:1883', validate = false)",
    )
    .await;
    b.go(&format!("{}/#/connections", server.url)).await;
    b.go(&format!("{}/#/new?connector=mqtt", server.url)).await;
    b.wait_text("ol.steps li[aria-current=step]", "Profile")
        .await;
    next_step(&b, "Next", "Table").await;
    b.fill("Topic", "timing/test").await;
    next_step(&b, "Next", "Schema").await;
    let steps = b
        .js(
            "return performance.getEntriesByName('wizard-step').map(m => [m.detail, m.duration]);",
            vec![],
        )
        .await;
    let resources = b
        .js(
            "return performance.getEntriesByType('resource').map(r => [r.name.replace(location.origin, ''), Math.round(r.startTime), Math.round(r.duration)]);",
            vec![],
        )
        .await;
    println!("resources: {resources}");
    let load = nav["load"].as_f64().unwrap();
    println!(
        "console timing: first load {load:.1} ms (DOMContentLoaded {:.1} ms); wizard steps {steps}",
        nav["dom"].as_f64().unwrap()
    );
    assert!(load < 2000.0, "the first load took {load} ms");
    for step in steps.as_array().unwrap() {
        let ms = step[1].as_f64().unwrap();
        assert!(ms < 2000.0, "step {} took {ms} ms", step[0]);
    }
    let measured: Vec<&str> = steps
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s[0].as_str())
        .collect();
    for step in [
        "connector",
        "profile",
        "options",
        "schema",
        "test",
        "create",
    ] {
        assert!(measured.contains(&step), "{step} was not measured: {steps}");
    }
}

/// Arroyo's console compiles each connector's schemas with Ajv's draft 2019-09 build
/// before it validates a form: every schema served must compile there (a 2020-12
/// `$schema` would not). The form renderer's side is walked by the sql crate's
/// `every_served_schema_is_one_arroyos_console_renders`.
#[test]
fn arroyos_console_compiles_every_served_schema_with_its_own_ajv() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let modules = root.join("target/npm/node_modules");
    assert!(
        modules.join("ajv").is_dir() && modules.join("ajv-formats").is_dir(),
        "ajv is not installed in {}: run `npm install --prefix target/npm ajv@8 ajv-formats@3` (.ci/run does)",
        modules.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("connectors.json");
    let connectors = tributary_api::connectors();
    std::fs::write(&served, serde_json::to_string(&connectors).unwrap()).unwrap();
    let out = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/arroyo_console_schemas.cjs"))
        .arg(&served)
        .env("NODE_PATH", &modules)
        .output()
        .expect("node must be installed");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_str(said.trim()).unwrap();
    assert_eq!(result["problems"], json!([]), "{result}");
    // Every table schema and every profile schema.
    let expected = connectors.data.len()
        + connectors
            .data
            .iter()
            .filter(|c| c.connection_config.is_some())
            .count();
    assert_eq!(result["compiled"], json!(expected), "{result}");
}
