//! The benchmarks' shared catalog: `tables` Kafka tables of ten columns spread over
//! 1,000 profiles, built once in a sled store under `target/bench-catalogs/` and reused.

#![allow(dead_code)] // Each bench uses part of it.

use std::path::{Path, PathBuf};
use tributary_catalog::{CatalogStore, Change, SledStore, new_profile_id, new_table_id};
use tributary_types::{
    CURRENT_FORMAT_VERSION, ConnectionProfile, ConnectionSchema, ConnectionTable, ConnectionType,
    FieldType, Format, JsonFormat, SourceField, TimeUnit, Watermark,
};

pub const PROFILES: usize = 1_000;

pub fn fields() -> Vec<SourceField> {
    let mut f: Vec<SourceField> = (0..9)
        .map(|i| {
            SourceField::new(
                format!("c{i}"),
                if i % 2 == 0 {
                    FieldType::Int64
                } else {
                    FieldType::String
                },
            )
        })
        .collect();
    f.push(SourceField::required(
        "ts",
        FieldType::Timestamp {
            unit: TimeUnit::Millisecond,
        },
    ));
    f
}

/// Build (once) a catalog of `tables` tables spread over 1,000 profiles.
pub fn catalog(tables: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../target/bench-catalogs/t{tables}"));
    if dir.join("ready").exists() {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let store = SledStore::open(&dir).expect("open bench catalog");
    let profiles: Vec<ConnectionProfile> = (0..PROFILES.min(tables))
        .map(|i| ConnectionProfile {
            format_version: CURRENT_FORMAT_VERSION,
            id: new_profile_id(),
            name: format!("profile_{i}"),
            connector: "kafka".into(),
            config: serde_json::json!({"bootstrapServers": "localhost:9092", "authentication": {}}),
            options: vec![],
            description: "localhost:9092".into(),
            created_at: 0,
            updated_at: 0,
            last_test: None,
        })
        .collect();
    store
        .apply(profiles.iter().cloned().map(Change::PutProfile).collect())
        .expect("profiles");
    let template_fields = fields();
    for chunk in (0..tables).collect::<Vec<_>>().chunks(1_000) {
        let changes = chunk
            .iter()
            .map(|i| {
                Change::PutTable(ConnectionTable {
                    profile: Some(profiles[i % profiles.len()].id.clone()),
                    config: serde_json::json!({"topic": format!("t{i}"), "type": {"offset": "latest"}}),
                    schema: ConnectionSchema { format: Some(Format::Json(JsonFormat::default())), fields: template_fields.clone(), ..Default::default() },
                    watermark: Some(Watermark { column: "ts".into(), expression: None }),
                    event_time_field: Some("ts".into()),
                    description: format!("KafkaSource<t{i}>"),
                    ..ConnectionTable::new(new_table_id(), format!("t{i}"), "kafka", ConnectionType::Source)
                })
            })
            .collect();
        store.apply(changes).expect("tables");
    }
    drop(store);
    std::fs::write(dir.join("ready"), b"").expect("marker");
    dir
}
