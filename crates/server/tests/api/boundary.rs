//! The server's boundary, as an attacker holding one valid token would try it: the
//! host's files, another user's stored password, the server's own variables, cloud
//! metadata addresses, memory and concurrency. Each test fails when its guard is taken
//! away (checked once by hand for each, as SECURITY.md records).

use crate::common::{App, app_with};
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tributary_sql::resources::QueryLimits;
use tributary_types::access::{Access, Confinement};

fn confined(dirs: &[&Path], never: &[&Path]) -> Access {
    Access::confined(&Confinement {
        file_reads: dirs.iter().map(|d| d.to_path_buf()).collect(),
        never_read: never.iter().map(|d| d.to_path_buf()).collect(),
        ..Default::default()
    })
    .unwrap()
}

/// The statement results of `POST /sql`.
async fn sql(app: &App, text: &str) -> Vec<Value> {
    let r = app.post("/api/v1/sql", json!({ "sql": text })).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["results"].as_array().unwrap().clone()
}

/// `POST /sql` with `body` on a task of its own: its status, answer and duration.
fn spawn_sql(app: &App, body: Value) -> tokio::task::JoinHandle<(u16, String, Duration)> {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let router = app.router.clone();
    tokio::spawn(async move {
        let started = Instant::now();
        let req = axum::http::Request::builder()
            .method("POST")
            .uri("/api/v1/sql")
            .header("authorization", format!("Bearer {}", crate::common::TOKEN))
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body.to_string()))
            .unwrap();
        let r = router.oneshot(req).await.unwrap();
        let status = r.status().as_u16();
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            String::from_utf8_lossy(&bytes).into_owned(),
            started.elapsed(),
        )
    })
}

/// Create a table from `body`, then PATCH its config with `config`: the PATCH's answer.
async fn create_then_patch(app: &App, body: Value, config: Value) -> crate::common::Reply {
    let r = app.post("/api/v1/connection_tables", body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let id = r.json()["id"].as_str().unwrap().to_string();
    app.call(
        "PATCH",
        &format!("/api/v1/connection_tables/{id}"),
        Some(json!({ "config": config })),
    )
    .await
}

/// Create a Redis profile named `name` at `address` with `password`, not tested: its id.
async fn redis_profile(app: &App, name: &str, address: &str, password: &str) -> String {
    let r = app
        .post(
            "/api/v1/connection_profiles",
            json!({"name": name, "connector": "redis", "validate": false,
                   "config": {"connection": {"address": address}, "password": password}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["id"].as_str().unwrap().to_string()
}

fn single_file_table(name: &str, path: &str) -> Value {
    json!({"name": name, "connector": "single_file",
           "config": {"path": path, "type": "source"},
           "schema": {"format": {"raw_string": {}}, "fields": []}})
}

#[tokio::test]
async fn file_sources_read_only_inside_allowed_directories() {
    let allowed = tempfile::tempdir().unwrap();
    let catalog = tempfile::tempdir().unwrap();
    std::fs::write(allowed.path().join("ok.txt"), "hello\n").unwrap();
    std::fs::write(catalog.path().join("db"), "every stored secret\n").unwrap();
    std::os::unix::fs::symlink(catalog.path().join("db"), allowed.path().join("link")).unwrap();
    let app = app_with(|mut c| {
        c.access = confined(&[allowed.path()], &[catalog.path()]);
        c
    });
    let inside = |f: &str| allowed.path().join(f).display().to_string();
    let refused = [
        catalog.path().join("db").display().to_string(),
        "/proc/self/environ".to_string(),
        inside("link"),
        format!("{}/../{}", allowed.path().display(), "x"),
    ];
    for (i, path) in refused.iter().enumerate() {
        // Created over REST: 403, naming the flag.
        let r = app
            .post(
                "/api/v1/connection_tables",
                single_file_table(&format!("t{i}"), path),
            )
            .await;
        assert_eq!(r.status, 403, "{path}: {}", r.text());
        assert_eq!(r.json()["code"], "forbidden");
        assert!(r.text().contains("--allow-file-reads"), "{}", r.text());
        // Tested without storing: the test fails at its first stage.
        let t = app
            .post(
                "/api/v1/connection_tables/test",
                single_file_table("probe", path),
            )
            .await;
        assert!(t.text().contains("not allowed"), "{path}: {}", t.text());
        assert!(!t.text().contains("every stored secret"));
        // Over SQL: created and previewed alike.
        let results = sql(
            &app,
            &format!(
                "CREATE TABLE s{i} (value TEXT) WITH (connector = 'single_file', path = '{path}', type = 'source', format = 'raw_string'); SELECT * FROM s{i}"
            ),
        )
        .await;
        assert_eq!(results[0]["error"], true, "{path}: {results:?}");
        assert_eq!(results[0]["diagnostics"][0]["code"], "FORBIDDEN");
    }
    // A table stored through another path (the catalog's owner, say) is still refused
    // when it is read or tested.
    let session = app.session.clone();
    let owner = tributary_sql::Session::new(session.store().clone());
    owner
        .execute(&format!(
            "CREATE TABLE planted (value TEXT) WITH (connector = 'single_file', path = '{}', type = 'source', format = 'raw_string')",
            refused[1]
        ))
        .await
        .unwrap();
    let results = sql(&app, "SELECT * FROM planted LIMIT 1; TEST TABLE planted").await;
    let text = serde_json::to_string(&results).unwrap();
    assert!(text.contains("not allowed"), "{text}");
    assert!(!text.contains("TRIBUTARY_TOKENS"), "{text}");
    // A PATCH that points a table at a refused file is refused too.
    let p = create_then_patch(
        &app,
        single_file_table("good", &inside("ok.txt")),
        json!({"path": "/proc/self/environ"}),
    )
    .await;
    assert_eq!(p.status, 403, "{}", p.text());
    // Inside the allowed directory, a preview reads the file.
    let results = sql(&app, "SELECT value FROM good").await;
    assert_eq!(results[0]["rows"], json!([["hello"]]), "{results:?}");
    // A file turned into a link to the catalog after the table was made is refused as
    // it opens.
    std::fs::remove_file(allowed.path().join("ok.txt")).unwrap();
    std::os::unix::fs::symlink(catalog.path().join("db"), allowed.path().join("ok.txt")).unwrap();
    for statement in ["SELECT value FROM good", "TEST TABLE good"] {
        let text = serde_json::to_string(&sql(&app, statement).await).unwrap();
        assert!(text.contains("never read"), "{statement}: {text}");
        assert!(!text.contains("every stored secret"), "{text}");
    }
    // A directory's files are checked one by one as they open: a link among them to
    // the catalog is refused even though the directory is allowed.
    let data = allowed.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("a.txt"), "fine\n").unwrap();
    std::os::unix::fs::symlink(catalog.path().join("db"), data.join("b.txt")).unwrap();
    let results = sql(
        &app,
        &format!(
            "CREATE TABLE dir (value TEXT) WITH (connector = 'filesystem', type = 'source', path = '{}', format = 'raw_string'); SELECT value FROM dir",
            data.display()
        ),
    )
    .await;
    let text = serde_json::to_string(&results).unwrap();
    assert!(text.contains("never read"), "{text}");
    assert!(!text.contains("every stored secret"), "{text}");
}

#[tokio::test]
async fn a_password_does_not_follow_a_changed_address() {
    let app = app_with(|c| c);
    // A listener standing in for the attacker's host records what it is sent.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Ok(Ok((mut s, _))) =
            tokio::time::timeout(Duration::from_secs(3), listener.accept()).await
        {
            let mut buf = vec![0u8; 4096];
            if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await
            {
                all.extend_from_slice(&buf[..n]);
            }
        }
        all
    });
    let id = redis_profile(&app, "cache", "redis://127.0.0.1:6379", "hunter2-secret").await;
    let p = app
        .call(
            "PATCH",
            &format!("/api/v1/connection_profiles/{id}"),
            Some(
                json!({"config": {"connection": {"address": format!("redis://127.0.0.1:{port}")}},
                        "validate": false}),
            ),
        )
        .await;
    assert_eq!(p.status, 200, "{}", p.text());
    assert!(p.text().contains("secrets were dropped"), "{}", p.text());
    assert!(p.text().contains("'password'"), "{}", p.text());
    sql(&app, "TEST CONNECTION PROFILE cache TIMEOUT '1 second'").await;
    let got = received.await.unwrap();
    assert!(
        !String::from_utf8_lossy(&got).contains("hunter2-secret"),
        "the old password reached the new address: {}",
        String::from_utf8_lossy(&got)
    );
    // Given again with the address, the secret is kept.
    let p = app
        .call(
            "PATCH",
            &format!("/api/v1/connection_profiles/{id}"),
            Some(
                json!({"config": {"connection": {"address": "redis://127.0.0.1:6379"},
                                   "password": "new-secret"}, "validate": false}),
            ),
        )
        .await;
    assert!(!p.text().contains("secrets were dropped"), "{}", p.text());
}

#[tokio::test]
async fn only_the_operators_variables_resolve() {
    // An allowed name that is not set fails as MISSING_VARIABLE, never FORBIDDEN.
    let app = app_with(|c| c);
    for (name, allowed) in [
        ("TRIBUTARY_TOKENS", false),
        ("HOME", false),
        ("TRIBUTARY_VAR_BOUNDARY_TEST", true),
    ] {
        let results = sql(
            &app,
            &format!(
                "CREATE TABLE v_{n} (a TEXT) WITH (connector = 'polling_http', endpoint = 'http://127.0.0.1:9/x', headers = 'X: {{{{ {name} }}}}', format = 'json', validate = 'connect'); ",
                n = name.to_lowercase()
            ),
        )
        .await;
        let text = serde_json::to_string(&results).unwrap();
        if allowed {
            assert!(!text.contains("FORBIDDEN"), "{name}: {text}");
        } else {
            assert!(text.contains("FORBIDDEN"), "{name}: {text}");
            let rule = if name == "HOME" {
                "TRIBUTARY_VAR_"
            } else {
                "configures the server"
            };
            assert!(text.contains(rule), "{name}: {text}");
        }
    }
}

#[tokio::test]
async fn cloud_metadata_is_never_reached() {
    let app = app_with(|c| c);
    let table = json!({"name": "hook", "connector": "webhook",
        "config": {"endpoint": "http://169.254.169.254/latest/meta-data/"},
        "schema": {"format": {"type": "json"}, "fields": [{"name": "a", "type": "int64"}]}});
    let t = app.post("/api/v1/connection_tables/test", table).await;
    assert!(t.text().contains("link-local"), "{}", t.text());
    let results = sql(
        &app,
        "CREATE TABLE hook (a BIGINT) WITH (connector = 'webhook', endpoint = 'http://169.254.169.254/x', format = 'json');
         INSERT INTO hook SELECT 1",
    )
    .await;
    let text = serde_json::to_string(&results).unwrap();
    assert!(text.contains("link-local"), "{text}");
    // The same over SSE and polling sources, through a name that resolves there.
    let results = sql(
        &app,
        "CREATE TABLE poll (a TEXT) WITH (connector = 'polling_http', endpoint = 'http://[::ffff:169.254.169.254]/', format = 'json', validate = 'connect')",
    )
    .await;
    assert!(
        serde_json::to_string(&results)
            .unwrap()
            .contains("FORBIDDEN")
    );
}

#[tokio::test]
async fn a_query_over_its_memory_answers_an_error_and_the_server_carries_on() {
    let app = app_with(|mut c| {
        c.limits = QueryLimits {
            query_memory: 64 << 20,
            total_memory: 128 << 20,
            ..QueryLimits::for_this_machine()
        };
        c
    });
    let heavy = spawn_sql(
        &app,
        json!({"sql": "CREATE TABLE fast WITH (connector = 'impulse', event_rate = 1000000000, message_count = 100000000);
                        SELECT length(string_agg(repeat('x', 1000), ',')) FROM fast"}),
    );
    let mut slowest = Duration::ZERO;
    while !heavy.is_finished() {
        let started = Instant::now();
        let r = app.get("/api/v1/ping").await;
        assert_eq!(r.status, 200);
        slowest = slowest.max(started.elapsed());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (_, answer, _) = heavy.await.unwrap();
    assert!(answer.contains("--query-memory"), "{answer}");
    assert!(answer.contains("64 MiB"), "{answer}");
    assert!(
        slowest < Duration::from_millis(100),
        "ping took {slowest:?}"
    );
    // Nothing is held once the query's tasks have wound down.
    let resources = app.session.resources().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while resources.memory_in_use() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} bytes still held 5 s after the query failed",
            resources.memory_in_use()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_queries_neither_starve_the_server_nor_outlive_their_deadline() {
    let app = app_with(|mut c| {
        c.limits = QueryLimits {
            slots: 8,
            max_waiting: 0,
            deadline: Duration::from_secs(3),
            ..QueryLimits::for_this_machine()
        };
        c
    });
    app.sql(
        "CREATE TABLE small WITH (connector = 'impulse', event_rate = 1000000000, message_count = 100);
         CREATE TABLE big WITH (connector = 'impulse', event_rate = 1000000000, message_count = 1000000000)",
    )
    .await;
    // A cross join that would take hours: a hundred rows against a billion.
    let heavy = json!({"sql": "SELECT count(*) FROM small a CROSS JOIN big b WHERE (a.counter * 7 + b.counter) % 1000003 = 1"});
    let mut running = Vec::new();
    for _ in 0..8 {
        running.push(spawn_sql(&app, heavy.clone()));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The ninth finds every slot taken and nobody may wait: 429 at once.
    let ninth = app.post("/api/v1/sql", heavy.clone()).await;
    assert_eq!(ninth.status, 429, "{}", ninth.text());
    let mut pings = Vec::new();
    while running.iter().any(|h| !h.is_finished()) {
        let started = Instant::now();
        assert_eq!(app.get("/api/v1/ping").await.status, 200);
        pings.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for h in running {
        let (status, _, took) = h.await.unwrap();
        // Each ends by its deadline, cut off (cancelling waits for the operator's
        // current batch, which eight queries on two cores make slow in a debug build).
        assert_eq!(status, 504);
        assert!(took < Duration::from_secs(9), "took {took:?}");
    }
    pings.sort();
    let p99 = pings[(pings.len() * 99 / 100).min(pings.len() - 1)];
    assert!(
        p99 < Duration::from_millis(50),
        "ping p99 {p99:?} of {}",
        pings.len()
    );
}

#[tokio::test]
async fn a_deadline_stops_an_operator_that_makes_many_batches_from_one() {
    let app = app_with(|mut c| {
        c.limits = QueryLimits {
            deadline: Duration::from_secs(2),
            ..QueryLimits::for_this_machine()
        };
        c
    });
    app.sql(
        "CREATE TABLE mid WITH (connector = 'impulse', event_rate = 1000000000, message_count = 1000000);
         CREATE TABLE few WITH (connector = 'impulse', event_rate = 1000000000, message_count = 1000)",
    )
    .await;
    // One batch of `few` against a million rows: hundreds of thousands of batches made
    // from one batch the source gave, which only yields between operators interrupt.
    let started = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        app.post(
            "/api/v1/sql",
            json!({"sql": "SELECT count(*) FROM mid a CROSS JOIN few b"}),
        ),
    )
    .await
    .expect("the query ran on past its deadline");
    assert_eq!(r.status, 504, "{}", r.text());
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_that_never_yield_do_not_hold_up_the_threads_that_answer() {
    let app = app_with(|c| c);
    app.sql("CREATE TABLE n WITH (connector = 'impulse', event_rate = 1000000000, message_count = 8000)")
        .await;
    // A nested-loop join's filter over one batch pair is one long step that never
    // yields: run where HTTP is answered, it would hold those threads for its length.
    let heavy = json!({"sql": "SELECT count(*) FROM n a CROSS JOIN n b WHERE (a.counter * 7 + b.counter) % 1000003 = 1"});
    let mut running = Vec::new();
    for _ in 0..4 {
        running.push(spawn_sql(&app, heavy.clone()));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut pings = Vec::new();
    while running.iter().any(|h| !h.is_finished()) {
        let started = Instant::now();
        assert_eq!(app.get("/api/v1/ping").await.status, 200);
        pings.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for h in running {
        assert_eq!(h.await.unwrap().0, 200);
    }
    pings.sort();
    let p99 = pings[(pings.len() * 99 / 100).min(pings.len() - 1)];
    assert!(
        p99 < Duration::from_millis(50),
        "ping p99 {p99:?} of {}",
        pings.len()
    );
}

#[tokio::test]
async fn a_tables_secret_headers_do_not_follow_a_changed_endpoint() {
    let app = app_with(|c| c);
    let p = create_then_patch(
        &app,
        json!({"name": "hook", "connector": "webhook",
               "config": {"endpoint": "http://127.0.0.1:9/in",
                          "headers": "Authorization: Bearer table-secret-42"},
               "schema": {"format": {"type": "json"}, "fields": [{"name": "a", "type": "int64"}]}}),
        json!({"endpoint": "http://127.0.0.1:10/elsewhere"}),
    )
    .await;
    assert_eq!(p.status, 200, "{}", p.text());
    assert!(p.text().contains("secrets were dropped"), "{}", p.text());
    let stored = app.session.store().table_by_name("hook").unwrap().unwrap();
    assert!(
        stored.options.iter().all(|o| o.key != "headers"),
        "{:?}",
        stored.options.iter().map(|o| &o.key).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn an_answer_never_confirms_a_guess_at_a_stored_secret() {
    let app = app_with(|c| c);
    redis_profile(&app, "theirs", "redis://127.0.0.1:6379", "Stored-Pw-8812").await;
    // The server now knows the password by value: text that answers no request hides it
    // (without this the comparison below would hold vacuously).
    assert_eq!(
        tributary_types::redact_text("pw Stored-Pw-8812"),
        "pw ********"
    );
    app.sql("CREATE TABLE ticks WITH (connector = 'impulse', event_rate = 10)")
        .await;
    // The right guess and a wrong one (of the same length, so spans agree) are answered
    // alike, word for word: a diagnostic naming the word, and a plan quoting it.
    let answer = |word: &'static str| {
        let app = &app;
        async move {
            let failed = sql(app, &format!("SELECT \"{word}\" FROM ticks")).await;
            let planned = app
                .post(
                    "/api/v1/pipelines/validate_query",
                    json!({"query": format!("SELECT counter FROM ticks WHERE '{word}' <> ''")}),
                )
                .await;
            assert_eq!(planned.status, 200, "{}", planned.text());
            let text = format!("{failed:?} {}", planned.text());
            assert!(text.matches(word).count() >= 2, "{text}");
            text.replace(word, "WORD")
        }
    };
    assert_eq!(
        answer("Stored-Pw-8812").await,
        answer("Stored-Pw-8813").await
    );
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_is_refused() {
    let app = app_with(|mut c| {
        c.timeouts.body_read = Duration::from_millis(500);
        c
    });
    // Half a body, then nothing.
    let stalled = futures::stream::once(async {
        Ok::<_, std::io::Error>(bytes::Bytes::from_static(b"{\"sql\": \"SELE"))
    })
    .chain(futures::stream::pending());
    let req = axum::http::Request::builder()
        .method("POST")
        .uri("/api/v1/sql")
        .header("authorization", format!("Bearer {}", crate::common::TOKEN))
        .header("content-type", "application/json")
        .body(axum::body::Body::from_stream(stalled))
        .unwrap();
    let started = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(5), app.send(req))
        .await
        .expect("the server waited for the body without bound");
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["code"], "body_timeout");
    assert!(started.elapsed() < Duration::from_secs(2));
}
