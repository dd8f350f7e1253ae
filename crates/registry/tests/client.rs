//! The registry client against the fake registry over real HTTP on 127.0.0.1: fetches,
//! pinned versions and ids, references, registration, Basic auth, and every failure with
//! the URL and what came back.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::time::Duration;
use tributary_registry::testing::FakeRegistry;
use tributary_registry::{Reference, RegistryClient, RegistryError, SchemaType, Version};

const V1: &str = r#"{"type":"record","name":"E","fields":[{"name":"id","type":"int"}]}"#;
const V2: &str = r#"{"type":"record","name":"E","fields":[{"name":"id","type":"long"}]}"#;

fn client(r: &FakeRegistry) -> RegistryClient {
    RegistryClient::new(&r.endpoint(), None, Duration::from_secs(5)).unwrap()
}

#[tokio::test]
async fn latest_pinned_versions_and_ids() {
    let r = FakeRegistry::start().await.unwrap();
    let (id1, _) = r.add("orders-value", SchemaType::Avro, V1, vec![]);
    let (id2, v2) = r.add("orders-value", SchemaType::Avro, V2, vec![]);
    let c = client(&r);
    let latest = c
        .subject_version("orders-value", Version::Latest)
        .await
        .unwrap();
    assert_eq!(
        (latest.id, latest.version, latest.schema.as_str()),
        (id2, Some(v2), V2)
    );
    assert_eq!(latest.schema_type, SchemaType::Avro);
    let first = c
        .subject_version("orders-value", Version::Number(1))
        .await
        .unwrap();
    assert_eq!((first.id, first.schema.as_str()), (id1, V1));
    let by_id = c.schema_by_id(id1).await.unwrap();
    assert_eq!(by_id.schema, V1);
    assert_eq!(c.subjects().await.unwrap(), ["orders-value"]);
}

#[tokio::test]
async fn subjects_with_odd_characters_are_encoded() {
    let r = FakeRegistry::start().await.unwrap();
    r.add("team a/orders?x-value", SchemaType::Json, "{}", vec![]);
    let got = client(&r)
        .subject_version("team a/orders?x-value", Version::Latest)
        .await
        .unwrap();
    assert_eq!(got.schema_type, SchemaType::Json);
}

#[tokio::test]
async fn references_resolve_recursively_and_cycles_are_refused() {
    let r = FakeRegistry::start().await.unwrap();
    r.add(
        "common",
        SchemaType::Protobuf,
        "syntax = \"proto3\"; message C {}",
        vec![],
    );
    r.add(
        "mid",
        SchemaType::Protobuf,
        "import \"common.proto\";",
        vec![Reference {
            name: "common.proto".into(),
            subject: "common".into(),
            version: 1,
        }],
    );
    r.add(
        "top-value",
        SchemaType::Protobuf,
        "import \"mid.proto\";",
        vec![Reference {
            name: "mid.proto".into(),
            subject: "mid".into(),
            version: 1,
        }],
    );
    let c = client(&r);
    let top = c
        .subject_version("top-value", Version::Latest)
        .await
        .unwrap();
    let refs = c.resolve_references(&top).await.unwrap();
    assert_eq!(
        refs.keys().collect::<Vec<_>>(),
        ["common.proto", "mid.proto"]
    );
    // a -> b -> a
    r.add(
        "a",
        SchemaType::Avro,
        "\"int\"",
        vec![Reference {
            name: "B".into(),
            subject: "b".into(),
            version: 1,
        }],
    );
    r.add(
        "b",
        SchemaType::Avro,
        "\"long\"",
        vec![Reference {
            name: "A".into(),
            subject: "a".into(),
            version: 1,
        }],
    );
    let a = c.subject_version("a", Version::Latest).await.unwrap();
    assert_eq!(
        c.resolve_references(&a).await.unwrap_err().to_string(),
        "the references of version 1 of subject 'a' refer back to it through subject 'b'"
    );
}

#[tokio::test]
async fn registration_returns_the_id_and_reuses_it() {
    let r = FakeRegistry::start().await.unwrap();
    let c = client(&r);
    let id = c
        .register("out-value", SchemaType::Avro, V1, &[])
        .await
        .unwrap();
    assert_eq!(
        c.register("out-value", SchemaType::Avro, V1, &[])
            .await
            .unwrap(),
        id
    );
    let got = c
        .subject_version("out-value", Version::Latest)
        .await
        .unwrap();
    assert_eq!((got.id, got.schema.as_str()), (id, V1));
}

#[tokio::test]
async fn basic_auth_is_sent_and_a_refusal_is_reported_without_the_secret() {
    let r = FakeRegistry::start().await.unwrap();
    r.require_credentials("key", "s3cret");
    r.add("x", SchemaType::Avro, V1, vec![]);
    let good = RegistryClient::new(
        &r.endpoint(),
        Some(("key".into(), "s3cret".into())),
        Duration::from_secs(5),
    )
    .unwrap();
    assert!(good.subject_version("x", Version::Latest).await.is_ok());
    let bad = RegistryClient::new(
        &r.endpoint(),
        Some(("key".into(), "wrong-secret".into())),
        Duration::from_secs(5),
    )
    .unwrap();
    let e = bad.subject_version("x", Version::Latest).await.unwrap_err();
    let text = e.to_string();
    assert_eq!(
        text,
        format!(
            "the schema registry at {}/subjects/x/versions/latest refused the credentials (401: Unauthorized (error code 40101))",
            r.endpoint()
        )
    );
    assert!(!text.contains("wrong-secret"));
}

#[tokio::test]
async fn failures_name_the_url_and_what_came_back() {
    let r = FakeRegistry::start().await.unwrap();
    r.add("x", SchemaType::Avro, V1, vec![]);
    let c = client(&r);
    let e = c
        .subject_version("nope", Version::Latest)
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "subject 'nope' was not found in the schema registry ({}/subjects/nope/versions/latest answered 404: Subject 'nope' not found. (error code 40401))",
            r.endpoint()
        )
    );
    let e = c
        .subject_version("x", Version::Number(9))
        .await
        .unwrap_err();
    assert!(
        matches!(e, RegistryError::NotFound { ref what, .. } if what == "version 9 of subject 'x'"),
        "{e}"
    );
    let e = c.schema_by_id(99).await.unwrap_err();
    assert!(
        e.to_string().starts_with("schema id 99 was not found"),
        "{e}"
    );
    // Timeout.
    r.delay(Duration::from_millis(800));
    let slow = RegistryClient::new(&r.endpoint(), None, Duration::from_millis(200)).unwrap();
    let e = slow
        .subject_version("x", Version::Latest)
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "the schema registry at {}/subjects/x/versions/latest did not answer within 200 ms",
            r.endpoint()
        )
    );
}

#[tokio::test]
async fn refused_connections_and_bad_endpoints() {
    // A port nothing listens on: bind, note it, close.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let c = RegistryClient::new(
        &format!("http://127.0.0.1:{port}"),
        None,
        Duration::from_secs(2),
    )
    .unwrap();
    let e = c.subject_version("x", Version::Latest).await.unwrap_err();
    assert!(
        matches!(&e, RegistryError::Connect { url, reason } if url.contains(&port.to_string()) && reason.to_lowercase().contains("refused")),
        "{e}"
    );
    let e = RegistryClient::new("localhost:8081", None, Duration::from_secs(1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "schema registry endpoint 'localhost:8081' is not valid: it must start with http:// or https://"
    );
    // Unknown host.
    let c = RegistryClient::new(
        "http://no-such-host.invalid:8081",
        None,
        Duration::from_secs(5),
    )
    .unwrap();
    let e = c.subject_version("x", Version::Latest).await.unwrap_err();
    assert!(matches!(e, RegistryError::Connect { .. }), "{e}");
}

#[tokio::test]
async fn a_path_prefix_in_the_endpoint_is_kept() {
    let r = FakeRegistry::start().await.unwrap();
    let c =
        RegistryClient::new(&format!("{}/", r.endpoint()), None, Duration::from_secs(5)).unwrap();
    assert_eq!(c.endpoint(), r.endpoint());
    assert!(c.subjects().await.unwrap().is_empty());
    assert_eq!(r.requests(), 1);
}
