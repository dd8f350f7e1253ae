//! The records the catalog benchmarks write: a Kafka profile, and Kafka sources of 10
//! columns through it.

use serde_json::json;
use tributary_catalog::{new_profile_id, new_table_id};
use tributary_types::{
    CURRENT_FORMAT_VERSION, ConnectionProfile, ConnectionSchema, ConnectionTable, ConnectionType,
    FieldType, SourceField,
};

pub fn profile(name: &str) -> ConnectionProfile {
    ConnectionProfile {
        format_version: CURRENT_FORMAT_VERSION,
        id: new_profile_id(),
        name: name.into(),
        connector: "kafka".into(),
        config: json!({"bootstrapServers": "b:9092", "authentication": {}}),
        options: vec![],
        description: String::new(),
        created_at: 0,
        updated_at: 0,
        last_test: None,
    }
}

/// Table `t{n}` on `profile`, created at `n` (so pages have a stable order).
pub fn table(profile: &ConnectionProfile, n: usize) -> ConnectionTable {
    ConnectionTable {
        profile: Some(profile.id.clone()),
        config: json!({"topic": format!("t{n}"), "type": {"offset": "latest"}}),
        schema: ConnectionSchema {
            fields: (0..10)
                .map(|i| SourceField::new(format!("c{i}"), FieldType::Int64))
                .collect(),
            ..Default::default()
        },
        created_at: n as i64,
        ..ConnectionTable::new(
            new_table_id(),
            format!("t{n}"),
            "kafka",
            ConnectionType::Source,
        )
    }
}
