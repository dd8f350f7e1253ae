//! Connection profiles over REST: each request is the statement SQL would run
//! (`CREATE`, `ALTER`, `DROP CONNECTION PROFILE`), or the same test and completion calls.

use super::bodies::{ConnectionProfilePatch, ConnectionProfilePost};
use super::error::{ApiError, ApiStatus};
use super::run::{body_error, run_written, warnings};
use super::statements::{config_options, profile_statement};
use super::views::{
    ConnectionAutocompleteResp, ConnectionProfileCollection, ConnectionProfileView,
    TestSourceMessage,
};
use tributary_catalog::CatalogStore;
use tributary_dialect::sql_writer::{WrittenStatement, ident, option};
use tributary_exec::connection_probe;
use tributary_sql::session::Session;
use tributary_types::{ConnectionProfile, ProfileId};

/// A profile by id (`cp_...`) or, failing that, by name.
pub fn find_profile(store: &dyn CatalogStore, key: &str) -> Result<ConnectionProfile, ApiError> {
    let found = match ProfileId::parse(key) {
        Some(id) => store.profile(&id).map_err(catalog)?,
        None => None,
    };
    match found {
        Some(p) => Ok(p),
        None => store
            .profile_by_name(key)
            .map_err(catalog)?
            .ok_or_else(|| ApiError::not_found("Connection profile")),
    }
}

pub(crate) fn catalog(e: tributary_catalog::CatalogError) -> ApiError {
    ApiError::new(ApiStatus::Internal, "catalog_error", e.to_string())
}

fn check_name(name: &str) -> Result<(), ApiError> {
    if name.trim().is_empty() {
        return Err(ApiError::body("'name' must not be empty")
            .with_hint("Give the profile a name, unique among profiles."));
    }
    Ok(())
}

/// `GET /connection_profiles`: every profile, most recently changed first.
pub fn list_profiles(session: &Session) -> Result<ConnectionProfileCollection, ApiError> {
    let store = session.store();
    let mut profiles = store.profiles().map_err(catalog)?;
    profiles.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.name.cmp(&b.name)));
    // One pass over the tables finds every profile's users.
    let mut users: std::collections::HashMap<String, Vec<String>> =
        std::collections::HashMap::new();
    if !profiles.is_empty() {
        for t in store.tables().map_err(catalog)? {
            if let Some(p) = &t.profile {
                users.entry(p.to_string()).or_default().push(t.name);
            }
        }
    }
    Ok(ConnectionProfileCollection {
        data: profiles
            .iter()
            .map(|p| {
                let tables = users.remove(&p.id.to_string()).unwrap_or_default();
                ConnectionProfileView::with_tables(p, tables)
            })
            .collect(),
    })
}

/// `GET /connection_profiles/{id}`.
pub fn get_profile(session: &Session, key: &str) -> Result<ConnectionProfileView, ApiError> {
    let store = session.store();
    let p = find_profile(store.as_ref(), key)?;
    profile_view(store.as_ref(), &p)
}

/// The view of a stored profile with the names of the tables that use it: what every
/// answer about one profile shows (a GET, a PATCH, a table's nested profile).
pub(crate) fn profile_view(
    store: &dyn CatalogStore,
    p: &ConnectionProfile,
) -> Result<ConnectionProfileView, ApiError> {
    let mut tables = Vec::new();
    for id in store.dependents(&p.id).map_err(catalog)? {
        if let Some(t) = store.table(&id).map_err(catalog)? {
            tables.push(t.name);
        }
    }
    Ok(ConnectionProfileView::with_tables(p, tables))
}

/// `POST /connection_profiles`: `CREATE CONNECTION PROFILE`, tested before it is stored
/// unless the body says `validate: false`.
pub async fn create_profile(
    session: &Session,
    post: &ConnectionProfilePost,
) -> Result<ConnectionProfileView, ApiError> {
    check_name(&post.name)?;
    let stmt = profile_statement(&post.name, &post.connector, &post.config, post.validate);
    let result = run_written(session, &stmt).await?;
    let stored = session
        .store()
        .profile_by_name(&post.name)
        .map_err(catalog)?
        .ok_or_else(|| ApiError::internal("the profile was stored but cannot be read back"))?;
    let mut view = ConnectionProfileView::of(&stored);
    view.warnings = warnings(&result.warnings, &stmt);
    Ok(view)
}

/// `POST /connection_profiles/test`: the profile's connection test, nothing stored. An
/// invalid definition is an error; a failed test is a message with `error: true`.
pub async fn test_profile(
    session: &Session,
    post: &ConnectionProfilePost,
) -> Result<TestSourceMessage, ApiError> {
    let stmt = profile_statement(&post.name, &post.connector, &post.config, None);
    let tested = session
        .test_definition(&stmt.sql, 0, connection_probe::DEFAULT_TIMEOUT, None)
        .await
        .map_err(|e| body_error(&e, &stmt))?;
    Ok(profile_verdict(&post.name, &tested))
}

/// What a profile's test came to, as its last message.
pub(crate) fn profile_verdict(
    name: &str,
    tested: &tributary_sql::DefinitionTest,
) -> TestSourceMessage {
    match &tested.failure {
        Some(diags) => {
            let mut m = TestSourceMessage::fail(
                diags
                    .first()
                    .map(|d| d.message.clone())
                    .unwrap_or_else(|| "the connection test failed".into()),
            );
            let failed = tested
                .events
                .iter()
                .find(|e| e.outcome == tributary_connectors::probe::Outcome::Failed);
            m.stage = failed.map(|e| e.stage.to_string());
            m.code = failed.and_then(|e| e.code).map(|c| c.to_string());
            m.hint = diags.first().and_then(|d| d.help.clone());
            m
        }
        None => {
            let skipped = tested
                .events
                .iter()
                .all(|e| e.outcome == tributary_connectors::probe::Outcome::Skipped);
            let message = match tested.events.last() {
                Some(e) if skipped => e.message.clone(),
                Some(_) => format!(
                    "connection profile '{}' connected: {}",
                    name,
                    tested
                        .events
                        .iter()
                        .map(|e| format!("{} {}", e.stage, e.outcome))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => "this connector does not support testing".into(),
            };
            TestSourceMessage::done(message)
        }
    }
}

/// `DELETE /connection_profiles/{id}`: `DROP CONNECTION PROFILE`, refused while tables
/// use it (naming them).
pub async fn delete_profile(session: &Session, key: &str) -> Result<(), ApiError> {
    let profile = find_profile(session.store().as_ref(), key)?;
    let mut stmt = WrittenStatement::new();
    stmt.push(
        &format!("DROP CONNECTION PROFILE {}", ident(&profile.name)),
        "/id",
    );
    run_written(session, &stmt).await.map(|_| ())
}

/// `GET /connection_profiles/{id}/autocomplete`: the names a table of the profile can
/// use (Kafka topics, ...), by the table field they fill.
pub async fn autocomplete(
    session: &Session,
    key: &str,
) -> Result<ConnectionAutocompleteResp, ApiError> {
    let profile = find_profile(session.store().as_ref(), key)?;
    let mut values = std::collections::BTreeMap::new();
    match session.completions(&profile.name).await {
        Ok(Some(c)) => {
            values.insert(completion_field(&profile.connector, c.kind), c.names);
        }
        Ok(None) => {}
        Err(diags) => {
            let first = diags.into_iter().next();
            return Err(ApiError::new(
                ApiStatus::BadRequest,
                "connection_failed",
                format!(
                    "Failed to get autocomplete suggestions: {}",
                    first
                        .as_ref()
                        .map(|d| d.message.as_str())
                        .unwrap_or("the connection failed")
                ),
            )
            .with_hint(
                first
                    .and_then(|d| d.help)
                    .unwrap_or_else(|| "Test the profile to see what fails.".into()),
            ));
        }
    }
    Ok(ConnectionAutocompleteResp { values })
}

/// The table-config field completions fill: the one its schema marks
/// `"format": "autocomplete"`, else the kind of name (`topic`).
fn completion_field(connector: &str, kind: &str) -> String {
    let marked = tributary_connectors::registry()
        .get(connector)
        .and_then(|e| {
            e.table_schema
                .document
                .get("properties")
                .and_then(|p| p.as_object())
                .and_then(|props| {
                    props.iter().find_map(|(k, v)| {
                        (v.get("format").and_then(|f| f.as_str()) == Some("autocomplete"))
                            .then(|| k.clone())
                    })
                })
        });
    marked.unwrap_or_else(|| kind.replace(' ', "_"))
}

/// `PATCH /connection_profiles/{id}`: `ALTER CONNECTION PROFILE ... SET`, with `null`
/// values removing options; the whole profile is validated again and must keep every
/// table using it valid.
pub async fn patch_profile(
    session: &Session,
    key: &str,
    patch: &ConnectionProfilePatch,
) -> Result<ConnectionProfileView, ApiError> {
    let profile = find_profile(session.store().as_ref(), key)?;
    let options = config_options(&profile.connector, &patch.config, false);
    let mut stmt = WrittenStatement::new();
    stmt.push(
        &format!("ALTER CONNECTION PROFILE {}", ident(&profile.name)),
        "/id",
    );
    stmt.raw(" SET (\n");
    // The connector (unchanged) keeps the SET list non-empty when only removals are asked.
    stmt.push(
        &format!(
            "  connector = {}",
            tributary_types::OptionValue::String(profile.connector.clone())
        ),
        "/config",
    );
    for (k, v) in &options.options {
        stmt.raw(",\n");
        stmt.push(
            &format!("  {}", option(k, v)),
            &crate::statements::config_path(&options, k),
        );
    }
    if let Some(validate) = patch.validate {
        stmt.raw(",\n");
        stmt.push(&format!("  validate = {validate}"), "/validate");
    }
    stmt.raw("\n)");
    stmt.ignore_config(&options);
    let result = session
        .alter_profile_by_id(&profile.id, &stmt.sql, &options.removed)
        .await
        .map_err(|e| body_error(&e, &stmt))?;
    let stored = session
        .store()
        .profile(&profile.id)
        .map_err(catalog)?
        .ok_or_else(|| ApiError::not_found("Connection profile"))?;
    let mut view = profile_view(session.store().as_ref(), &stored)?;
    view.warnings = warnings(&result.warnings, &stmt);
    Ok(view)
}
