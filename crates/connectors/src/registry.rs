//! The connector registry: an explicit list, one line per connector, with compiled schemas.

use crate::connector::Connector;
use crate::mapping::CompiledSchema;
use crate::{
    blackhole, confluent, delta, filesystem, fluvio, iceberg, impulse, kafka, kinesis, mqtt, nats,
    nexmark, polling_http, rabbitmq, redis, single_file, sse, stdout, webhook, websocket,
};
use std::sync::OnceLock;

/// Every connector, in the order `SHOW CONNECTORS` lists them (by id).
const CONNECTORS: &[&dyn Connector] = &[
    &blackhole::Blackhole,
    &confluent::Confluent,
    &delta::Delta,
    &filesystem::FileSystem,
    &fluvio::Fluvio,
    &iceberg::Iceberg,
    &impulse::Impulse,
    &kafka::Kafka,
    &kinesis::Kinesis,
    &mqtt::Mqtt,
    &nats::Nats,
    &nexmark::Nexmark,
    &polling_http::PollingHttp,
    &rabbitmq::Rabbitmq,
    &redis::Redis,
    &single_file::SingleFile,
    &sse::Sse,
    &stdout::Stdout,
    &webhook::Webhook,
    &websocket::Websocket,
];

/// A connector with its schemas compiled.
#[derive(Debug)]
pub struct RegisteredConnector {
    /// The connector.
    pub connector: &'static dyn Connector,
    /// Its profile schema, if it takes a profile.
    pub profile_schema: Option<CompiledSchema>,
    /// Its table schema.
    pub table_schema: CompiledSchema,
}

/// All connectors.
#[derive(Debug)]
pub struct Registry {
    entries: Vec<RegisteredConnector>,
}

impl Registry {
    fn build() -> Self {
        let entries = CONNECTORS
            .iter()
            .map(|c| {
                // The schemas are compiled into the binary and checked by this crate's tests,
                // so a failure here is a bug in a connector's declaration, not user input.
                let compile = |text: &str, what: &str| {
                    CompiledSchema::compile(text).unwrap_or_else(|e| {
                        panic!(
                            "bug: the {what} schema of connector '{}' is broken: {e}",
                            c.id()
                        )
                    })
                };
                RegisteredConnector {
                    connector: *c,
                    profile_schema: c.profile_schema().map(|s| compile(s, "profile")),
                    table_schema: compile(c.table_schema(), "table"),
                }
            })
            .collect();
        Self { entries }
    }

    /// The connector with this id (exact, case-sensitive as Arroyo's).
    pub fn get(&self, id: &str) -> Option<&RegisteredConnector> {
        self.entries.iter().find(|e| e.connector.id() == id)
    }

    /// Every connector, by id.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredConnector> {
        self.entries.iter()
    }

    /// Every connector id.
    pub fn ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|e| e.connector.id())
    }
}

/// The process-wide registry.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::build)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema_doc::property;
    use crate::spec::Target;

    #[test]
    fn every_schema_compiles_and_every_key_maps_to_a_property() {
        for entry in registry().iter() {
            let c = entry.connector;
            let schemas = [
                (c.profile_options(), entry.profile_schema.as_ref()),
                (c.table_options(), Some(&entry.table_schema)),
            ];
            for (specs, schema) in schemas {
                for spec in specs {
                    let pointer = match spec.target {
                        Target::Pointer(p)
                        | Target::Prefixed { pointer: p, .. }
                        | Target::Indexed { pointer: p, .. } => p,
                        Target::Selector { .. } => continue,
                    };
                    let schema = schema.unwrap_or_else(|| {
                        panic!("{}: option '{}' without a schema", c.id(), spec.key)
                    });
                    assert!(
                        property(&schema.document, pointer).is_some(),
                        "{}: '{}' -> {pointer} is not in the schema",
                        c.id(),
                        spec.key
                    );
                }
            }
        }
    }

    #[test]
    fn ids_are_sorted_and_unique() {
        let ids: Vec<&str> = registry().ids().collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted);
        assert!(registry().get("kafka").is_some());
        assert!(registry().get("Kafka").is_none());
    }
}
