//! The progress callback: each stage of a connection test is reported as it happens.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;

#[tokio::test]
async fn progress_reports_each_event_as_it_happens() {
    use std::sync::Mutex;
    use tributary_sql::TestEvent;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let s = session().with_progress(Arc::new(move |e: &TestEvent| {
        sink.lock()
            .unwrap()
            .push(format!("{} {}", e.stage, e.outcome));
    }));
    let port = closed_port();
    s.execute(&format!("CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://127.0.0.1:{port}', validate = false)"))
        .await
        .unwrap();
    assert!(seen.lock().unwrap().is_empty(), "nothing was tested yet");
    let _ = s.execute("TEST CONNECTION PROFILE r").await;
    assert_eq!(*seen.lock().unwrap(), ["resolve passed", "connect failed"]);
    // Creating with a test reports too.
    seen.lock().unwrap().clear();
    s.execute("CREATE CONNECTION PROFILE ok WITH (connector = 'redis', address = 'redis://127.0.0.1:6379')")
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        ["resolve passed", "connect passed", "authenticate passed"]
    );
}
