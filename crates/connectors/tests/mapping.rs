//! The option engine against real connector declarations: defaults, enums, patterns,
//! conditions and required options, with the exact diagnostics users see.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use serde_json::json;
use tributary_connectors::{MapRequest, map_options, registry};
use tributary_types::{Diagnostic, Location, OptionValue, Span, SqlOption, WithOptions};

fn opts(pairs: &[(&str, OptionValue)]) -> WithOptions {
    let items = pairs
        .iter()
        .enumerate()
        .map(|(i, (k, v))| {
            let line = i as u64 + 1;
            SqlOption {
                key: k.to_string(),
                key_span: Span::new(Location::new(line, 1), Location::new(line, 4)),
                value: v.clone(),
                value_span: Span::new(Location::new(line, 10), Location::new(line, 14)),
            }
        })
        .collect();
    WithOptions::new(items).0
}

fn s(v: &str) -> OptionValue {
    OptionValue::String(v.into())
}

fn map(
    connector: &str,
    profile: bool,
    pairs: &[(&str, OptionValue)],
) -> (serde_json::Value, Vec<Diagnostic>, WithOptions) {
    let entry = registry().get(connector).unwrap();
    let (specs, schema) = if profile {
        (
            entry.connector.profile_options(),
            entry.profile_schema.as_ref().unwrap(),
        )
    } else {
        (entry.connector.table_options(), &entry.table_schema)
    };
    let mut o = opts(pairs);
    let mut diags = vec![];
    let req = MapRequest {
        connector,
        object: if profile {
            "connection profile"
        } else {
            "table"
        },
        specs,
        schema,
        missing_span: Span::default(),
        missing_hint: None,
    };
    let mapped = map_options(req, &mut o, &mut diags);
    (mapped.config, diags, o)
}

fn messages(d: &[Diagnostic]) -> Vec<&str> {
    d.iter().map(|d| d.message.as_str()).collect()
}

#[test]
fn kafka_source_gets_default_offset() {
    let (config, diags, rest) = map(
        "kafka",
        false,
        &[("topic", s("orders")), ("type", s("source"))],
    );
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        config,
        json!({"topic": "orders", "type": {"offset": "latest"}})
    );
    assert!(rest.remaining().is_empty());
}

#[test]
fn kafka_sink_options_and_client_configs() {
    let (config, diags, _) = map(
        "kafka",
        false,
        &[
            ("topic", s("out")),
            ("type", s("sink")),
            ("sink.commit_mode", s("exactly_once")),
            ("client_configs", s("linger.ms=5, acks=all")),
        ],
    );
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        config,
        json!({"topic": "out", "type": {"commit_mode": "exactly_once"}, "client_configs": {"linger.ms": "5", "acks": "all"}})
    );
}

#[test]
fn enum_errors_list_values_and_suggest() {
    let (_, diags, _) = map(
        "kafka",
        false,
        &[
            ("topic", s("t")),
            ("type", s("source")),
            ("source.offset", s("earliet")),
        ],
    );
    assert_eq!(
        messages(&diags),
        ["invalid value 'earliet' for option 'source.offset'"]
    );
    assert_eq!(
        diags[0].notes,
        ["allowed values are 'latest', 'earliest', 'group'"]
    );
    assert_eq!(diags[0].help.as_deref(), Some("Did you mean 'earliest'?"));
    assert_eq!(diags[0].span.unwrap().start, Location::new(3, 10));
}

#[test]
fn options_of_the_other_variant_are_rejected() {
    let (_, diags, _) = map(
        "kafka",
        false,
        &[
            ("topic", s("t")),
            ("type", s("source")),
            ("sink.commit_mode", s("exactly_once")),
        ],
    );
    assert_eq!(
        messages(&diags),
        ["option 'sink.commit_mode' only applies when type is 'sink'"]
    );
}

#[test]
fn missing_required_options() {
    let (_, diags, _) = map("kafka", false, &[]);
    assert_eq!(
        messages(&diags),
        [
            "missing required option 'type' for table of connector 'kafka'",
            "missing required option 'topic' for table of connector 'kafka'"
        ]
    );
    assert_eq!(
        diags[1].help.as_deref(),
        Some("Add topic = 'orders' to the WITH clause.")
    );
}

#[test]
fn sasl_requires_credentials_and_patterns_are_checked() {
    let (_, diags, _) = map(
        "kafka",
        true,
        &[
            ("bootstrap_servers", s("localhost:9092")),
            ("auth.type", s("sasl")),
            ("auth.protocol", s("SASL_SSL")),
        ],
    );
    assert_eq!(
        messages(&diags),
        [
            "missing required option 'auth.mechanism' for connection profile of connector 'kafka'",
            "missing required option 'auth.username' for connection profile of connector 'kafka'",
            "missing required option 'auth.password' for connection profile of connector 'kafka'",
        ]
    );
    assert_eq!(
        diags[0].notes[0],
        "it is required when 'auth.type' is 'sasl'"
    );
    let (_, diags, _) = map("kafka", true, &[("bootstrap_servers", s("localhost"))]);
    assert_eq!(
        messages(&diags),
        ["invalid value 'localhost' for option 'bootstrap_servers'"]
    );
    assert_eq!(
        diags[0].help.as_deref(),
        Some("Use a value such as 'broker-1:9092,broker-2:9092'.")
    );
}

#[test]
fn sasl_profile_maps_into_authentication() {
    let (config, diags, _) = map(
        "kafka",
        true,
        &[
            ("bootstrap_servers", s("b1:9092,b2:9092")),
            ("auth.type", s("sasl")),
            ("auth.protocol", s("SASL_SSL")),
            ("auth.mechanism", s("PLAIN")),
            ("auth.username", s("svc")),
            ("auth.password", s("{{ KAFKA_PASSWORD }}")),
        ],
    );
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        config["authentication"],
        json!({"protocol": "SASL_SSL", "mechanism": "PLAIN", "username": "svc", "password": "{{ KAFKA_PASSWORD }}"})
    );
    let (config, _, _) = map("kafka", true, &[("bootstrap_servers", s("b1:9092"))]);
    assert_eq!(
        config,
        json!({"bootstrapServers": "b1:9092", "authentication": {}})
    );
}

#[test]
fn wrong_types_and_ranges() {
    let (_, diags, _) = map("impulse", false, &[("event_rate", s("fast"))]);
    assert_eq!(
        messages(&diags),
        ["expected option 'event_rate' to be a number, but it is a string"]
    );
    let (_, diags, _) = map(
        "impulse",
        false,
        &[("event_rate", OptionValue::Number("-1".into()))],
    );
    assert_eq!(
        messages(&diags),
        ["option 'event_rate' must be at least 0, but it is -1.0"]
    );
}

#[test]
fn filesystem_sink_intervals_sizes_and_storage() {
    let (config, diags, _) = map(
        "filesystem",
        false,
        &[
            ("type", s("sink")),
            ("path", s("s3://bucket/out")),
            ("storage.aws_region", s("us-east-1")),
            (
                "rolling_policy.interval",
                OptionValue::Interval("INTERVAL '5' MINUTE".into()),
            ),
            ("rolling_policy.file_size", s("128mb")),
            (
                "partitioning.fields",
                OptionValue::Array(vec![OptionValue::Identifier("a".into())]),
            ),
            ("multipart.target_part_size", s("1mb")),
        ],
    );
    assert_eq!(
        messages(&diags),
        ["option 'multipart.target_part_size' must be at least 5242880, but it is 1048576"]
    );
    assert_eq!(
        config["table_type"]["rolling_policy"],
        json!({"interval_seconds": 300, "file_size_bytes": 134217728})
    );
    assert_eq!(
        config["table_type"]["storage_options"],
        json!({"aws_region": "us-east-1"})
    );
    assert_eq!(config["table_type"]["partitioning"]["fields"], json!(["a"]));
}
