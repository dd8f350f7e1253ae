//! Schemas and the Confluent Schema Registry for `CREATE TABLE`. Avro sinks writing
//! registry-framed messages register their writer schema. When a kafka or confluent
//! source table reads a registry-framed format (`avro`, `json` or `protobuf` with
//! `<format>.confluent_schema_registry`) and gives no schema of its own, the subject's
//! schema (`value.subject`, or `{topic}-value`; latest, or pinned with
//! `schema_registry.version` / `schema_registry.id`) is fetched, with its references,
//! before the statement is validated. Credentials come from the profile (or the inline
//! settings) and are resolved from the environment only here, when connecting.

use std::collections::BTreeMap;
use tributary_catalog::CatalogStore;
use tributary_formats::{
    SchemaSource, compile_proto_sources, inline_avro_references, inline_json_schema_references,
    json_schema_for_fields,
};
use tributary_registry::{
    DEFAULT_TIMEOUT, RegisteredSchema, RegistryClient, RegistryError, SchemaType, Version,
};
use tributary_types::access::Access;
use tributary_types::options::to_bool;
use tributary_types::{
    ConnectionTable, ConnectionType, Diagnostic, Format, OptionValue, RegistrySource, SourceField,
    Span, SqlOption, resolve_env,
};

use crate::parser::ast::CreateTable;

/// A schema fetched for a table, ready to expand.
#[derive(Debug, Clone)]
pub struct FetchedSchema {
    /// What the columns come from.
    pub source: SchemaSource,
    /// Where it came from, recorded with the table.
    pub origin: RegistrySource,
}

/// What a statement asks of the registry: a source table's schema.
struct Wanted<'a> {
    format: String,
    flag_key: &'static str,
    flag: &'a SqlOption,
    expected: SchemaType,
}

/// Whether `stmt` reads its schema from the registry: a registry-framed source format with
/// no schema of its own (and, for JSON, no declared columns). Decided from the options
/// alone, without connecting.
fn wanted(stmt: &CreateTable) -> Option<Wanted<'_>> {
    let opt = |key: &str| stmt.options.iter().find(|o| o.key == key);
    let text = |key: &str| opt(key).map(|o| o.value.as_text());
    let format = text("format")?;
    let (flag_key, inline_keys, expected) = match format.as_str() {
        "avro" => (
            "avro.confluent_schema_registry",
            &["avro.schema", "avro.schema_file"][..],
            SchemaType::Avro,
        ),
        "json" => (
            "json.confluent_schema_registry",
            &["json.schema"][..],
            SchemaType::Json,
        ),
        "protobuf" => (
            "protobuf.confluent_schema_registry",
            &["protobuf.descriptor_file", "protobuf.schema_file"][..],
            SchemaType::Protobuf,
        ),
        _ => return None,
    };
    let flag = opt(flag_key).filter(|o| to_bool(o).unwrap_or(false))?;
    // A schema given in the statement wins; sinks write with their own columns.
    if inline_keys.iter().any(|k| opt(k).is_some()) || text("type").as_deref() == Some("sink") {
        return None;
    }
    // JSON without a schema reads its declared columns; the registry is only asked when
    // no columns are declared.
    if expected == SchemaType::Json && stmt.columns.iter().any(|c| c.metadata_key.is_none()) {
        return None;
    }
    Some(Wanted {
        format,
        flag_key,
        flag,
        expected,
    })
}

/// Everything a registry fetch needs, checked without connecting. Credentials are still
/// as written (`{{ VAR }}` references unresolved).
struct FetchPlan<'a> {
    wanted: Wanted<'a>,
    span: Span,
    settings: Settings,
    subject: String,
    pin: Pin,
}

/// Check what `stmt` asks of the registry, without connecting: the connector has a
/// registry, one is configured, and the subject and pin are valid. `Ok(None)` when the
/// statement needs no registry schema (or misses its topic, which validation reports).
fn plan_fetch<'a>(
    store: &dyn CatalogStore,
    stmt: &'a CreateTable,
) -> Result<Option<FetchPlan<'a>>, Vec<Diagnostic>> {
    let opt = |key: &str| stmt.options.iter().find(|o| o.key == key);
    let text = |key: &str| opt(key).map(|o| o.value.as_text());
    let Some(wanted) = wanted(stmt) else {
        return Ok(None);
    };
    let flag_key = wanted.flag_key;
    let span = wanted.flag.key_span;
    let err = |d: Diagnostic| Err(vec![d.with_span(span)]);
    let connector = text("connector").unwrap_or_default();
    if connector != "kafka" && connector != "confluent" {
        return err(Diagnostic::error(format!(
            "option '{flag_key}' reads schemas from a schema registry, which only the kafka and confluent connectors have"
        ))
        .with_help(format!("Give the schema in the statement, or remove '{flag_key}'."))
        .with_code(tributary_types::codes::SCHEMA_REGISTRY));
    }
    let settings =
        registry_settings(store, &connector, stmt).map_err(|d| vec![d.with_span(span)])?;
    if settings.endpoint.is_none() {
        let place = match text("connection_profile") {
            Some(p) => format!("connection profile '{p}'"),
            None => "the table's connection settings".into(),
        };
        return err(Diagnostic::error(format!(
            "option '{flag_key}' needs a schema registry, but {place} configures none"
        ))
        .with_help("Set 'schema_registry.endpoint' on the connection profile, or give the schema in the statement.")
        .with_code(tributary_types::codes::SCHEMA_REGISTRY));
    }
    let subject = match (text("value.subject"), text("topic")) {
        (Some(s), _) => s,
        (None, Some(topic)) => format!("{topic}-value"),
        (None, None) => return Ok(None), // the missing topic is reported by validation
    };
    let pin =
        pinned(opt("schema_registry.version"), opt("schema_registry.id")).map_err(|d| vec![d])?;
    Ok(Some(FetchPlan {
        wanted,
        span,
        settings,
        subject,
        pin,
    }))
}

/// For `check` and offline sessions: everything about the registry that can be checked
/// without connecting, and the note saying the schema was not fetched (`None` when the
/// statement needs no registry schema).
pub fn registry_not_fetched(
    store: &dyn CatalogStore,
    stmt: &CreateTable,
) -> Result<Option<Diagnostic>, Vec<Diagnostic>> {
    Ok(plan_fetch(store, stmt)?.map(|plan| {
        Diagnostic::note(format!(
            "the schema of subject '{}' was not fetched from the schema registry, so the table's columns were not checked against it",
            plan.subject
        ))
        .with_span(plan.span)
        .with_note("check and offline sessions make no network calls")
    }))
}

/// Fetch the registry schema `stmt` needs, if it needs one.
pub async fn fetch_registry_schema(
    store: &dyn CatalogStore,
    stmt: &CreateTable,
    access: &Access,
) -> Result<Option<FetchedSchema>, Vec<Diagnostic>> {
    let Some(FetchPlan {
        wanted,
        span,
        settings,
        subject,
        pin,
    }) = plan_fetch(store, stmt)?
    else {
        return Ok(None);
    };
    let Wanted {
        format, expected, ..
    } = wanted;
    let (endpoint, auth) = settings
        .resolve(access)
        .await
        .map_err(|d| vec![d.with_span(span)])?;
    let client = RegistryClient::new(&endpoint, auth, DEFAULT_TIMEOUT)
        .map_err(|e| vec![registry_error(e, &subject, span)])?;
    let fetched = match pin {
        Pin::Id(id) => client.schema_by_id(id).await,
        Pin::Version(v) => client.subject_version(&subject, v).await,
    }
    .map_err(|e| vec![registry_error(e, &subject, span)])?;
    if fetched.schema_type != expected {
        return Err(vec![Diagnostic::error(format!(
            "format '{format}' reads {expected} schemas, but the registry holds a {} schema for subject '{subject}'",
            fetched.schema_type
        ))
        .with_span(span)
        .with_help(format!(
            "Use the format that matches the registered schema, or point 'value.subject' at a {expected} subject."
        ))
        .with_code(tributary_types::codes::SCHEMA_REGISTRY)]);
    }
    let references = client
        .resolve_references(&fetched)
        .await
        .map_err(|e| vec![registry_error(e, &subject, span)])?;
    let message = stmt.options.iter().find(|o| o.key == "protobuf.message");
    let source = schema_source(&fetched, &references, message, span).map_err(|d| vec![d])?;
    Ok(Some(FetchedSchema {
        source,
        origin: RegistrySource {
            subject: match pin {
                Pin::Id(_) => None,
                Pin::Version(_) => Some(subject),
            },
            version: fetched.version,
            id: fetched.id,
        },
    }))
}

/// What a sink writing registry-framed messages needs from the registry, decided without
/// connecting.
#[derive(Debug)]
pub enum SinkRegistration {
    /// Not a sink, or its format does not frame messages for a registry.
    Nothing,
    /// The id is pinned with `schema_registry.id`.
    Pinned(u32),
    /// The writer schema must be registered under `subject`.
    Register {
        settings: Settings,
        subject: String,
        schema_type: SchemaType,
        schema: String,
        span: Span,
    },
}

/// Check what a sink asks of the registry, without connecting: a pinned id, or a
/// configured registry and a writer schema to register (`check`, offline sessions and
/// profile changes use this alone).
pub fn plan_sink_registration(
    store: &dyn CatalogStore,
    stmt: &CreateTable,
    table: &ConnectionTable,
) -> Result<SinkRegistration, Vec<Diagnostic>> {
    if table.connection_type != ConnectionType::Sink {
        return Ok(SinkRegistration::Nothing);
    }
    let opt = |key: &str| stmt.options.iter().find(|o| o.key == key);
    let physical: Vec<SourceField> = table.schema.physical_fields().cloned().collect();
    let (flag, schema_type, schema) = match &table.schema.format {
        Some(Format::Avro(a)) if a.confluent_schema_registry => (
            "avro.confluent_schema_registry",
            SchemaType::Avro,
            a.reader_schema.clone(),
        ),
        Some(Format::Json(j)) if j.confluent_schema_registry => (
            "json.confluent_schema_registry",
            SchemaType::Json,
            Some(
                json_schema_for_fields(
                    &physical,
                    j.timestamp_format == tributary_types::TimestampFormat::UnixMillis,
                )
                .to_string(),
            ),
        ),
        Some(Format::Protobuf(p)) if p.confluent_schema_registry => (
            "protobuf.confluent_schema_registry",
            SchemaType::Protobuf,
            None,
        ),
        _ => return Ok(SinkRegistration::Nothing),
    };
    let span = opt(flag).map(|o| o.key_span).unwrap_or(stmt.with_span);
    if let Some(pin) = opt("schema_registry.id") {
        return Ok(match pinned(None, Some(pin)).map_err(|d| vec![d])? {
            Pin::Id(id) => SinkRegistration::Pinned(id),
            Pin::Version(_) => SinkRegistration::Nothing,
        });
    }
    let Some(schema) = schema else {
        return Err(vec![
            Diagnostic::error(
                "a protobuf sink writing registry-framed messages needs the id of its registered schema",
            )
            .with_span(span)
            .with_help("Register the .proto with the schema registry and give its id with 'schema_registry.id'.")
            .with_code(tributary_types::codes::SCHEMA_REGISTRY),
        ]);
    };
    let settings =
        registry_settings(store, &table.connector, stmt).map_err(|d| vec![d.with_span(span)])?;
    if settings.endpoint.is_none() {
        return Err(vec![
            Diagnostic::error(format!(
                "option '{flag}' needs a schema registry to register the sink's schema with, but none is configured"
            ))
            .with_span(span)
            .with_help("Set 'schema_registry.endpoint' on the connection profile, or give the registered schema's id with 'schema_registry.id'.")
            .with_code(tributary_types::codes::SCHEMA_REGISTRY),
        ]);
    }
    let subject = match (opt("value.subject"), opt("topic")) {
        (Some(s), _) => s.value.as_text(),
        (None, Some(t)) => format!("{}-value", t.value.as_text()),
        (None, None) => return Ok(SinkRegistration::Nothing),
    };
    Ok(SinkRegistration::Register {
        settings,
        subject,
        schema_type,
        schema,
        span,
    })
}

/// Give a sink writing registry-framed messages the schema id its messages carry: the one
/// pinned with `schema_registry.id`, or the id the registry assigns when its writer schema
/// (the Avro schema, or a JSON Schema of its columns) is registered under its subject. The
/// id (and subject) are recorded on the table.
pub async fn register_sink_schema(
    store: &dyn CatalogStore,
    stmt: &CreateTable,
    table: &mut ConnectionTable,
    access: &Access,
) -> Result<(), Vec<Diagnostic>> {
    let (id, subject) = match plan_sink_registration(store, stmt, table)? {
        SinkRegistration::Nothing => return Ok(()),
        SinkRegistration::Pinned(id) => (id, None),
        SinkRegistration::Register {
            settings,
            subject,
            schema_type,
            schema,
            span,
        } => {
            let (endpoint, auth) = settings
                .resolve(access)
                .await
                .map_err(|d| vec![d.with_span(span)])?;
            let client = RegistryClient::new(&endpoint, auth, DEFAULT_TIMEOUT)
                .map_err(|e| vec![registry_error(e, &subject, span)])?;
            let id = client
                .register(&subject, schema_type, &schema, &[])
                .await
                .map_err(|e| vec![registry_error(e, &subject, span)])?;
            (id, Some(subject))
        }
    };
    match &mut table.schema.format {
        Some(Format::Avro(a)) => a.schema_id = Some(id),
        Some(Format::Json(j)) => j.schema_id = Some(id),
        Some(Format::Protobuf(p)) => p.schema_id = Some(id),
        _ => {}
    }
    table.registry = Some(RegistrySource {
        subject,
        version: None,
        id,
    });
    Ok(())
}

/// The registry's endpoint and credentials for the table, as written: `{{ VAR }}`
/// references are resolved only when connecting.
pub struct Settings {
    endpoint: Option<String>,
    key: Option<String>,
    secret: Option<String>,
}

/// The endpoint alone: the credentials are secrets, and a Debug dump is output.
impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field(
                "endpoint",
                &self.endpoint.as_deref().map(tributary_types::redact_text),
            )
            .field("key", &self.key.as_ref().map(|_| "********"))
            .field("secret", &self.secret.as_ref().map(|_| "********"))
            .finish()
    }
}

impl Settings {
    /// The endpoint and Basic credentials with the environment's values, once `access`
    /// allows the variables they name and the address the endpoint resolves to.
    async fn resolve(
        &self,
        access: &Access,
    ) -> Result<(String, Option<(String, String)>), Diagnostic> {
        let env = |s: &str| {
            for name in tributary_types::env_references(s) {
                access.variable(&name).map_err(|r| {
                    r.diagnostic(Span::default())
                        .with_note("the schema registry's settings name it")
                })?;
            }
            let resolved = resolve_env(s, |name| std::env::var(name).ok()).map_err(|e| {
                Diagnostic::error(format!("cannot connect to the schema registry: {e}"))
                    .with_help("Set the environment variable, or write the value directly.")
                    .with_code(tributary_types::codes::SCHEMA_REGISTRY)
            })?;
            tributary_types::remember_secrets_in(false, &resolved);
            Ok::<_, Diagnostic>(resolved)
        };
        let endpoint = env(self.endpoint.as_deref().unwrap_or_default())?;
        police_endpoint(&endpoint, access).await?;
        let auth = match (&self.key, &self.secret) {
            (Some(k), Some(s)) => {
                let secret = env(s)?;
                tributary_types::remember_secret(&secret);
                Some((env(k)?, secret))
            }
            (Some(k), None) => Some((env(k)?, String::new())),
            _ => None,
        };
        Ok((endpoint, auth))
    }
}

/// Refuse a registry endpoint whose address `access` does not allow (a confined
/// session never asks a link-local metadata service for a "schema").
async fn police_endpoint(endpoint: &str, access: &Access) -> Result<(), Diagnostic> {
    if access.is_unrestricted() {
        return Ok(());
    }
    let Ok(url) = url::Url::parse(endpoint) else {
        // The client says what is wrong with the URL.
        return Ok(());
    };
    let host = url.host_str().unwrap_or_default().to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let addrs = tokio::net::lookup_host((bare.as_str(), port))
        .await
        .map_err(|e| {
            Diagnostic::error(format!(
                "cannot connect to the schema registry: '{bare}' does not resolve: {e}"
            ))
            .with_help("Check the registry's endpoint.")
            .with_code(tributary_types::codes::SCHEMA_REGISTRY)
        })?;
    for addr in addrs {
        access
            .address(&bare, addr.ip())
            .map_err(|r| r.diagnostic(Span::default()))?;
    }
    Ok(())
}

fn registry_settings(
    store: &dyn CatalogStore,
    connector: &str,
    stmt: &CreateTable,
) -> Result<Settings, Diagnostic> {
    let profile = stmt
        .options
        .iter()
        .find(|o| o.key == "connection_profile")
        .map(|o| o.value.as_text());
    let (endpoint, key, secret) = match profile {
        Some(name) => {
            let p = store
                .profile_by_name(&name)
                .ok()
                .flatten()
                // A missing profile is reported by validation.
                .ok_or_else(|| {
                    Diagnostic::error(format!("connection profile '{name}' does not exist"))
                        .with_code(tributary_types::codes::NOT_FOUND)
                })?;
            let group = if connector == "confluent" {
                "schemaRegistry"
            } else {
                "schemaRegistryEnum"
            };
            let field = |k: &str| {
                p.config
                    .get(group)
                    .and_then(|g| g.get(k))
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            (field("endpoint"), field("apiKey"), field("apiSecret"))
        }
        None => {
            let field = |k: &str| {
                stmt.options
                    .iter()
                    .find(|o| o.key == k)
                    .map(|o| o.value.as_text())
            };
            (
                field("schema_registry.endpoint"),
                field("schema_registry.api_key"),
                field("schema_registry.api_secret"),
            )
        }
    };
    Ok(Settings {
        endpoint,
        key,
        secret,
    })
}

#[derive(Debug, Clone, Copy)]
enum Pin {
    Version(Version),
    Id(u32),
}

fn pinned(version: Option<&SqlOption>, id: Option<&SqlOption>) -> Result<Pin, Diagnostic> {
    let number = |o: &SqlOption, what: &str| -> Result<u32, Diagnostic> {
        let text = o.value.as_text();
        text.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
            Diagnostic::error(format!(
                "invalid value '{text}' for option '{}': expected a positive {what}",
                o.key
            ))
            .with_span(o.value_span)
            .with_help(if what == "version" {
                "Use a version number such as 3, or 'latest'."
            } else {
                "Use the schema id the registry assigned, such as 42."
            })
            .with_code(tributary_types::codes::SCHEMA_REGISTRY)
        })
    };
    match (version, id) {
        (Some(_), Some(i)) => Err(Diagnostic::error(
            "at most one of 'schema_registry.version' and 'schema_registry.id' may be set",
        )
        .with_span(i.key_span)
        .with_help("An id names one schema already; remove the version.")
        .with_code(tributary_types::codes::SCHEMA_REGISTRY)),
        (Some(v), None) if matches!(&v.value, OptionValue::String(s) if s == "latest") => {
            Ok(Pin::Version(Version::Latest))
        }
        (Some(v), None) => Ok(Pin::Version(Version::Number(number(v, "version")?))),
        (None, Some(i)) => Ok(Pin::Id(number(i, "schema id")?)),
        (None, None) => Ok(Pin::Version(Version::Latest)),
    }
}

/// The fetched schema (with its references) as something to expand.
fn schema_source(
    fetched: &RegisteredSchema,
    references: &BTreeMap<String, RegisteredSchema>,
    message: Option<&SqlOption>,
    span: Span,
) -> Result<SchemaSource, Diagnostic> {
    let texts: BTreeMap<String, String> = references
        .iter()
        .map(|(name, r)| (name.clone(), r.schema.clone()))
        .collect();
    match fetched.schema_type {
        SchemaType::Avro => {
            let text = inline_avro_references(&fetched.schema, &texts).map_err(|e| {
                Diagnostic::error(format!("the registry's Avro schema cannot be used: {e}"))
                    .with_span(span)
                    .with_code(tributary_types::codes::SCHEMA_REGISTRY)
            })?;
            Ok(SchemaSource::Avro { text, span })
        }
        SchemaType::Json => {
            let text = inline_json_schema_references(&fetched.schema, &texts).map_err(|e| {
                Diagnostic::error(format!("the registry's JSON schema cannot be used: {e}"))
                    .with_span(span)
                    .with_code(tributary_types::codes::SCHEMA_REGISTRY)
            })?;
            Ok(SchemaSource::Json { text, span })
        }
        SchemaType::Protobuf => {
            const MAIN: &str = "registry-schema.proto";
            let mut files = texts;
            files.insert(MAIN.to_string(), fetched.schema.clone());
            let descriptor = compile_proto_sources(MAIN, &files).map_err(|e| {
                Diagnostic::error(format!(
                    "the registry's Protobuf schema does not compile: {e}"
                ))
                .with_span(span)
                .with_code(tributary_types::codes::SCHEMA_REGISTRY)
            })?;
            let message = match message {
                Some(m) => m.value.as_text(),
                // Confluent's convention: without a message name, the file's first message.
                None => first_message(&descriptor, MAIN).ok_or_else(|| {
                    Diagnostic::error("the registry's Protobuf schema defines no message")
                        .with_span(span)
                        .with_code(tributary_types::codes::SCHEMA_REGISTRY)
                })?,
            };
            Ok(SchemaSource::Protobuf {
                descriptor,
                message,
                span,
                source: None,
            })
        }
    }
}

fn first_message(descriptor: &[u8], file: &str) -> Option<String> {
    let pool = tributary_formats::parse_descriptor_set(descriptor).ok()?;
    let f = pool.get_file_by_name(file)?;
    f.messages().next().map(|m| m.full_name().to_string())
}

fn registry_error(e: RegistryError, subject: &str, span: Span) -> Diagnostic {
    let help = match &e {
        RegistryError::NotFound { .. } => format!(
            "Check that subject '{subject}' exists (the default is '<topic>-value'; set 'value.subject' otherwise), or give the schema in the statement."
        ),
        RegistryError::Unauthorized { .. } => {
            "Check 'schema_registry.api_key' and 'schema_registry.api_secret' on the connection profile.".into()
        }
        RegistryError::Connect { .. } | RegistryError::Timeout { .. } => {
            "Check 'schema_registry.endpoint' and that the registry is running.".into()
        }
        _ => "Check the registry's schema, or give the schema in the statement.".into(),
    };
    Diagnostic::error(e.to_string())
        .with_span(span)
        .with_help(help)
        .with_code(tributary_types::codes::SCHEMA_REGISTRY)
}
