//! Each connector's `testing` flag (what `SHOW CONNECTORS` and the REST `/connectors`
//! answer show) says what its connection test really does: a connector that claims no
//! test answers `NOT_TESTABLE`, and one that claims a test never does. Run against an
//! empty configuration, so nothing is reached.

use serde_json::Value;
use std::time::Duration;
use tributary_connectors::probe::{Probe, TestCode};
use tributary_connectors::registry;
use tributary_types::ConnectionType;

#[tokio::test]
async fn the_testing_flag_matches_what_the_test_does() {
    let env = |_: &str| None;
    let empty = Value::Null;
    for entry in registry().iter() {
        let c = entry.connector;
        let roles = c.roles();
        let role = if roles.source {
            ConnectionType::Source
        } else if roles.sink {
            ConnectionType::Sink
        } else {
            ConnectionType::Lookup
        };
        let mut probe = Probe::new(
            &empty,
            Duration::from_millis(200),
            &env,
            &Default::default(),
        )
        .with_table(&empty, role, 1);
        c.test_table(&mut probe).await;
        let untestable = probe
            .events()
            .iter()
            .any(|e| e.code == Some(TestCode::NotTestable));
        assert_eq!(
            c.supports_testing(),
            !untestable,
            "connector '{}' claims testing = {} but its test {} NOT_TESTABLE: {:?}",
            c.id(),
            c.supports_testing(),
            if untestable {
                "answers"
            } else {
                "never answers"
            },
            probe.events()
        );
    }
}
