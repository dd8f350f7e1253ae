//! The REST calls that read from other systems or check schemas without storing: a
//! table body's connection test as a stream of events, columns inferred from sampled
//! messages, and a schema body's expansion.

use super::bodies::{ConnectionTablePost, SchemaInferPost, SchemaPost};
use super::error::{ApiError, ApiStatus};
use super::rows::rows_as_objects;
use super::run::body_error;
use super::tables::body_statement;
use super::views::{TestSourceMessage, schema_view};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tributary_connectors::probe::{Outcome, TestEvent};
use tributary_exec::connection_probe;
use tributary_sql::session::Session;
use tributary_types::limits::MAX_TEST_SECONDS;
use tributary_types::{
    ConnectionSchema, Diagnostic, FieldType, Format, JsonFormat, SchemaDefinition, SourceField,
};
use utoipa::ToSchema;

/// A running connection test: its events as they happen, ending with one whose `done`
/// is true. Dropping it cancels the test.
#[derive(Debug)]
pub struct TestStream {
    events: mpsc::UnboundedReceiver<Result<TestSourceMessage, ApiError>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestStream {
    /// The stream with its first event: an error before any stage (an invalid
    /// definition) is the answer instead.
    async fn first(mut self) -> Result<(TestSourceMessage, TestStream), ApiError> {
        match self.events.recv().await {
            Some(Ok(first)) => Ok((first, self)),
            Some(Err(e)) => Err(e),
            None => Err(ApiError::internal(
                "the connection test ended without a result",
            )),
        }
    }

    /// The next event; `None` after the last.
    pub async fn next(&mut self) -> Option<TestSourceMessage> {
        match self.events.recv().await? {
            Ok(m) => Some(m),
            // A definition error after events began cannot happen (the definition is
            // built first); report it as the failed end all the same.
            Err(e) => Some(TestSourceMessage::fail(e.message)),
        }
    }
}

impl Drop for TestStream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn event_message(e: &TestEvent) -> TestSourceMessage {
    TestSourceMessage {
        error: e.outcome == Outcome::Failed,
        done: false,
        message: format!("{}: {}", e.stage, e.message),
        stage: Some(e.stage.to_string()),
        code: e.code.map(|c| c.to_string()),
        hint: e.hint.clone(),
        rows: None,
    }
}

/// The name a table is tested under while it has none.
const UNNAMED_TABLE: &str = "unnamed_table";

/// `POST /connection_tables/test`: validate the body as `CREATE TABLE` would (an
/// invalid one is an error, returned before any event), then test it, streaming each
/// stage's event and ending with the verdict (and, for sources, the decoded sample rows).
/// `name` may be empty: the answers then speak of "the new table". The whole test is bounded by `max` (at most [`MAX_TEST_SECONDS`]).
pub async fn test_table(
    session: Arc<Session>,
    post: &ConnectionTablePost,
    max: Duration,
) -> Result<(TestSourceMessage, TestStream), ApiError> {
    let max = max.min(Duration::from_secs(MAX_TEST_SECONDS));
    // A table tested before it is named (the console's wizard names it last) is tested
    // under a stand-in name that no answer shows: they speak of "the new table".
    let named = !post.name.trim().is_empty();
    let mut post = post.clone();
    if !named {
        post.name = UNNAMED_TABLE.into();
    }
    let stmt = body_statement(&session, &post, None, false)?;
    let name = post.name.clone();
    let shown = move |text: String| {
        if named {
            text
        } else {
            text.replace(&format!("table '{UNNAMED_TABLE}'"), "the new table")
        }
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let events = tx.clone();
    let progress: connection_probe::Progress = Arc::new(move |e: &TestEvent| {
        let _ = events.send(Ok(event_message(e)));
    });
    let task = tokio::spawn(async move {
        let run = session.test_definition(
            &stmt.sql,
            connection_probe::DEFAULT_LIMIT,
            connection_probe::DEFAULT_TIMEOUT,
            Some(progress),
        );
        let last = match tokio::time::timeout(max, run).await {
            Err(_) => Ok(TestSourceMessage::fail(shown(format!(
                "the connection test of table '{name}' took longer than {} s and was stopped",
                max.as_secs_f64()
            )))),
            Ok(Err(e)) => Err(body_error(&e, &stmt)),
            Ok(Ok(tested)) => {
                // Stage notes repeat the events already streamed; send only the others.
                let repeats = |n: &Diagnostic| {
                    tested
                        .events
                        .iter()
                        .any(|e| n.message.starts_with(&format!("{}: ", e.stage)))
                };
                for note in tested.notes.iter().filter(|n| !n.is_error() && !repeats(n)) {
                    let _ = tx.send(Ok(TestSourceMessage::info(shown(note.message.clone()))));
                }
                let mut verdict = match &tested.failure {
                    Some(diags) => failed(diags),
                    None => passed(&name, &tested),
                };
                verdict.message = shown(verdict.message);
                Ok(verdict)
            }
        };
        let _ = tx.send(last);
    });
    TestStream { events: rx, task }.first().await
}

/// `POST /connection_profiles/test` asked for a stream (`Accept: text/event-stream`):
/// the profile's test, each stage's event as it ends, then the verdict that the plain
/// answer gives. Beyond Arroyo.
pub async fn test_profile_stream(
    session: Arc<Session>,
    post: &super::bodies::ConnectionProfilePost,
    max: Duration,
) -> Result<(TestSourceMessage, TestStream), ApiError> {
    let max = max.min(Duration::from_secs(MAX_TEST_SECONDS));
    let stmt =
        super::statements::profile_statement(&post.name, &post.connector, &post.config, None);
    // An invalid profile fails before any stage runs: its error is the first thing the
    // task sends, and so the answer, not an event.
    let name = post.name.clone();
    let (tx, rx) = mpsc::unbounded_channel();
    let events = tx.clone();
    let progress: connection_probe::Progress = Arc::new(move |e: &TestEvent| {
        let _ = events.send(Ok(event_message(e)));
    });
    let task = tokio::spawn(async move {
        let run = session.test_definition(
            &stmt.sql,
            0,
            connection_probe::DEFAULT_TIMEOUT,
            Some(progress),
        );
        let last = match tokio::time::timeout(max, run).await {
            Err(_) => Ok(TestSourceMessage::fail(format!(
                "the connection test of connection profile '{name}' took longer than {} s and was stopped",
                max.as_secs_f64()
            ))),
            Ok(Err(e)) => Err(body_error(&e, &stmt)),
            Ok(Ok(tested)) => Ok(super::profiles::profile_verdict(&name, &tested)),
        };
        let _ = tx.send(last);
    });
    TestStream { events: rx, task }.first().await
}

fn failed(diags: &[Diagnostic]) -> TestSourceMessage {
    let first = diags.first();
    let mut m = TestSourceMessage::fail(
        first
            .map(|d| d.message.clone())
            .unwrap_or_else(|| "the connection test failed".into()),
    );
    m.hint = first.and_then(|d| d.help.clone());
    m.code = first.and_then(|d| {
        let (_, rest) = d.message.split_once(" [")?;
        rest.split_once(']').map(|(code, _)| code.to_string())
    });
    m
}

fn passed(name: &str, tested: &tributary_sql::DefinitionTest) -> TestSourceMessage {
    let skipped =
        !tested.events.is_empty() && tested.events.iter().all(|e| e.outcome == Outcome::Skipped);
    if skipped {
        return TestSourceMessage::done(format!(
            "table '{name}' is valid; its connection cannot be tested from here"
        ));
    }
    let mut m = match &tested.rows {
        Some(batch) => TestSourceMessage::done(format!(
            "the connection test of table '{name}' passed: read {} message(s), {} row(s) decoded",
            tested.payloads.len(),
            batch.num_rows()
        )),
        None => TestSourceMessage::done(format!("the connection test of table '{name}' passed")),
    };
    if let Some(batch) = &tested.rows {
        m.rows = rows_as_objects(std::slice::from_ref(batch)).ok();
    }
    m
}

/// `POST /connection_tables/schemas/infer`'s answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InferredSchema {
    /// The schema with the inferred columns (`inferred: true`).
    #[schema(value_type = Object)]
    pub schema: Value,
    /// How many messages the columns were inferred from.
    pub messages: usize,
}

/// `POST /connection_tables/schemas/infer`: read up to `limit` JSON messages with the
/// table body's settings (its columns aside) and infer columns from them.
pub async fn infer_schema(
    session: &Session,
    post: &SchemaInferPost,
) -> Result<InferredSchema, ApiError> {
    let given = match &post.table.schema {
        Some(v) => SchemaPost::from_value(v, "schema")?.unwrap_or_default(),
        None => SchemaPost::default(),
    };
    let json = match &given.format {
        None => JsonFormat::default(),
        Some(Format::Json(j)) if !j.confluent_schema_registry && !j.debezium => j.clone(),
        Some(other) => {
            return Err(ApiError::new(
                ApiStatus::BadRequest,
                "invalid_definition",
                format!("columns can be inferred from JSON messages only, not format '{other}'"),
            )
            .with_hint("Use a schema document (JSON Schema, Avro, Protobuf) for other formats; for a registry-framed source the registry's schema gives the columns."));
        }
    };
    // Sample whole messages: one JSON column, whatever they hold.
    let sampling = SchemaPost {
        format: Some(Format::Json(JsonFormat {
            unstructured: true,
            ..json.clone()
        })),
        fields: vec![SourceField::new("value", FieldType::Json)],
        ..given.clone()
    };
    let sampling = SchemaPost {
        definition: None,
        primary_keys: Default::default(),
        ..sampling
    };
    let stmt = body_statement(session, &post.table, Some(&sampling), false)?;
    let limit = post
        .limit
        .unwrap_or(connection_probe::DEFAULT_LIMIT)
        .clamp(1, 1_000);
    let tested = session
        .test_definition(&stmt.sql, limit, connection_probe::DEFAULT_TIMEOUT, None)
        .await
        .map_err(|e| body_error(&e, &stmt))?;
    if let Some(diags) = &tested.failure {
        let first = diags.first();
        let mut e = ApiError::new(
            ApiStatus::BadRequest,
            "connection_failed",
            first
                .map(|d| d.message.clone())
                .unwrap_or_else(|| "the connection test failed".into()),
        );
        e.hint = first.and_then(|d| d.help.clone());
        return Err(e);
    }
    if tested.payloads.is_empty() {
        return Err(ApiError::body(format!(
            "no messages were read from table '{}', so there is nothing to infer columns from",
            post.table.name
        ))
        .with_hint("Produce a few messages first, or declare the columns."));
    }
    let fields = tributary_formats::infer_fields(&tested.payloads)
        .map_err(|e| ApiError::body(format!("cannot infer columns from the messages read: {e}")))?;
    let schema = ConnectionSchema {
        format: Some(Format::Json(json)),
        bad_data: given.bad_data,
        framing: given.framing,
        fields,
        inferred: Some(true),
        ..Default::default()
    };
    Ok(InferredSchema {
        schema: schema_view(&schema),
        messages: tested.payloads.len(),
    })
}

/// `POST /connection_tables/schemas/test`: expand a schema body's document into columns
/// and check the schema's rules; the expanded schema, or why it is invalid.
pub fn test_schema(body: &Value) -> Result<Value, ApiError> {
    let schema = SchemaPost::from_value(body, "schema")?.unwrap_or_default();
    let invalid = |m: String| ApiError::new(ApiStatus::BadRequest, "invalid_schema", m);
    let (fields, definition) = match &schema.definition {
        None => (schema.fields.clone(), None),
        Some(d) => {
            let expanded = match d {
                SchemaDefinition::JsonSchema { schema } => {
                    tributary_formats::fields_from_json_schema(schema)
                        .map_err(|e| invalid(format!("invalid JSON schema: {e}")))?
                }
                SchemaDefinition::AvroSchema { schema } => {
                    tributary_formats::parse_avro_schema(schema)
                        .and_then(|s| tributary_formats::fields_from_avro_schema(&s))
                        .map_err(|e| invalid(format!("invalid Avro schema: {e}")))?
                }
                SchemaDefinition::ProtobufSchema {
                    schema: source,
                    dependencies,
                } => {
                    let Some(Format::Protobuf(p)) = &schema.format else {
                        return Err(invalid(
                            "the schema has a protobuf definition but its format is not protobuf"
                                .into(),
                        ));
                    };
                    let Some(message) = &p.message_name else {
                        return Err(invalid(
                            "message_name must be given for a protobuf schema".into(),
                        ));
                    };
                    let mut files = dependencies.clone();
                    files.insert("schema.proto".into(), source.clone());
                    let descriptor =
                        tributary_formats::compile_proto_sources("schema.proto", &files).map_err(
                            |e| invalid(format!("cannot compile the protobuf schema: {e}")),
                        )?;
                    tributary_formats::fields_from_protobuf(&descriptor, message)
                        .map_err(|e| invalid(format!("invalid Protobuf schema: {e}")))?
                }
            };
            // Metadata columns are declared beside the document's.
            let mut fields = expanded.fields;
            fields.extend(
                schema
                    .fields
                    .iter()
                    .filter(|f| f.metadata_key.is_some())
                    .cloned(),
            );
            (fields, Some(d.clone()))
        }
    };
    let expanded = ConnectionSchema {
        format: schema.format.clone(),
        bad_data: schema.bad_data,
        framing: schema.framing,
        fields,
        primary_keys: schema.primary_keys.clone(),
        definition,
        ..Default::default()
    };
    let problems = expanded.validate();
    if let Some(first) = problems.first() {
        let mut e = invalid(first.to_string());
        e.diagnostics = problems
            .iter()
            .map(|p| {
                super::error::ApiDiagnostic::in_body(
                    &Diagnostic::error(p.to_string()),
                    Some("/fields".into()),
                )
            })
            .collect();
        return Err(e);
    }
    Ok(schema_view(&expanded))
}
