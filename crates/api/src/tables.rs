//! Connection tables over REST: creating one runs `CREATE TABLE`, a PATCH replaces the
//! table with its changed definition (validated whole), deleting runs `DROP TABLE`, and
//! listings page through the catalog's creation-time index.

use super::bodies::{ConnectionTablePatch, ConnectionTablePost, PaginationQueryParams, SchemaPost};
use super::error::{ApiDiagnostic, ApiError};
use super::profiles::{catalog, find_profile};
use super::run::{body_error, run_written, warnings};
use super::statements::{config_options, config_path, set_schema, table_statement};
use super::views::{ConnectionTableCollection, ConnectionTableView};
use std::collections::HashMap;
use tributary_catalog::CatalogStore;
use tributary_dialect::sql_writer::{WrittenStatement, ident, table_parts_of};
use tributary_sql::session::Session;
use tributary_types::limits::MAX_PAGE_SIZE;
use tributary_types::{ConnectionProfile, ConnectionTable, ProfileId, TableId};

/// The page size when none is asked for (Arroyo's).
const DEFAULT_PAGE_SIZE: i64 = 10;

/// A table by id (`ct_...`) or, failing that, by name.
pub fn find_table(store: &dyn CatalogStore, key: &str) -> Result<ConnectionTable, ApiError> {
    let found = match TableId::parse(key) {
        Some(id) => store.table(&id).map_err(catalog)?,
        None => None,
    };
    match found {
        Some(t) => Ok(t),
        None => store
            .table_by_name(key)
            .map_err(catalog)?
            .ok_or_else(|| ApiError::not_found("Connection table")),
    }
}

/// The name of the profile a body names by id or name.
pub(crate) fn profile_name(
    store: &dyn CatalogStore,
    key: Option<&str>,
) -> Result<Option<String>, ApiError> {
    match key.map(str::trim).filter(|k| !k.is_empty()) {
        None => Ok(None),
        Some(k) => match find_profile(store, k) {
            Ok(p) => Ok(Some(p.name)),
            Err(e) if e.code == "not_found" => Err(ApiError::body(format!(
                "No connection profile with id '{}'",
                tributary_types::limits::shorten(k)
            ))
            .with_hint("GET /api/v1/connection_profiles lists the profiles.")),
            Err(e) => Err(e),
        },
    }
}

/// A profile as a table's view needs it: the record (its name goes into `create_sql`)
/// and its view with the tables that use it.
type ProfileOfTable = Option<(ConnectionProfile, super::ConnectionProfileView)>;

/// The view of `t`, with its profile (and the profile's tables) read through `cache`.
fn view(
    store: &dyn CatalogStore,
    t: &ConnectionTable,
    cache: &mut HashMap<ProfileId, ProfileOfTable>,
) -> Result<ConnectionTableView, ApiError> {
    let profile = match &t.profile {
        None => None,
        Some(id) => match cache.get(id) {
            Some(p) => p.clone(),
            None => {
                let p = match store.profile(id).map_err(catalog)? {
                    Some(p) => {
                        let view = super::profiles::profile_view(store, &p)?;
                        Some((p, view))
                    }
                    None => None,
                };
                cache.insert(id.clone(), p.clone());
                p
            }
        },
    };
    let mut view = ConnectionTableView::of(t, profile.as_ref().map(|(p, _)| p));
    view.connection_profile = profile.map(|(_, v)| v);
    Ok(view)
}

/// `GET /connection_tables`: one page, newest first.
pub fn list_tables(
    session: &Session,
    params: &PaginationQueryParams,
) -> Result<ConnectionTableCollection, ApiError> {
    let limit = params.limit.unwrap_or(DEFAULT_PAGE_SIZE);
    if limit < 1 {
        return Err(ApiError::body("Limit must be greater than 0"));
    }
    if limit as u64 > MAX_PAGE_SIZE as u64 {
        return Err(ApiError::body(format!(
            "Limit must be at most {MAX_PAGE_SIZE}"
        )));
    }
    let store = session.store().as_ref();
    let after = match params.starting_after.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(TableId::parse(s).ok_or_else(|| {
            ApiError::body(format!(
                "starting_after must be a table id (ct_...), not '{}'",
                tributary_types::limits::shorten(s)
            ))
        })?),
    };
    let (page, has_more) =
        store
            .tables_page(after.as_ref(), limit as usize)
            .map_err(|e| {
                match e {
            tributary_catalog::CatalogError::NotFound { name, .. } => ApiError::body(format!(
                "starting_after names no table: '{name}'"
            ))
            .with_hint(
                "Start from the first page, or pass the id of the last table of the page before.",
            ),
            other => catalog(other),
        }
            })?;
    let mut cache = HashMap::new();
    let data = page
        .iter()
        .map(|t| view(store, t, &mut cache))
        .collect::<Result<_, _>>()?;
    Ok(ConnectionTableCollection { data, has_more })
}

/// `GET /connection_tables/{id}`.
pub fn get_table(session: &Session, key: &str) -> Result<ConnectionTableView, ApiError> {
    let store = session.store().as_ref();
    let t = find_table(store, key)?;
    view(store, &t, &mut HashMap::new())
}

/// `GET /connection_tables/{id}/create_sql`: the `SHOW CREATE TABLE` text.
pub fn create_sql(session: &Session, key: &str) -> Result<String, ApiError> {
    get_table(session, key).map(|v| v.create_sql)
}

/// `POST /connection_tables/sql`: the `CREATE TABLE` statement a table body stands for,
/// secrets written `********`, checked as `tributary check` would (on a copy of the
/// catalog, connecting nowhere) but not run: a console shows what it is about to create,
/// and the errors of an invalid body with the paths of their fields. Beyond Arroyo.
pub async fn table_body_sql(
    session: &Session,
    post: &ConnectionTablePost,
) -> Result<String, ApiError> {
    let stmt = body_statement(session, post, None, true)?;
    let checking = super::queries::checking_session(session);
    let mut refused = None;
    checking
        .run_script_with(&stmt.sql, tributary_sql::session::Mode::Check, |outcome| {
            if let Err(e) = outcome {
                refused = Some(e);
            }
            std::ops::ControlFlow::Continue(())
        })
        .await;
    if let Some(e) = refused {
        return Err(body_error(&e, &stmt));
    }
    Ok(tributary_dialect::secret_spans::masked(&stmt.sql))
}

/// The statement a table body stands for.
pub(crate) fn body_statement(
    session: &Session,
    post: &ConnectionTablePost,
    schema_override: Option<&SchemaPost>,
    validate: bool,
) -> Result<WrittenStatement, ApiError> {
    if post.name.trim().is_empty() {
        return Err(ApiError::body("'name' must not be empty")
            .with_hint("Give the table a name, unique among tables."));
    }
    let profile = profile_name(
        session.store().as_ref(),
        post.connection_profile_id.as_deref(),
    )?;
    let mut parsed;
    let schema = match schema_override {
        Some(s) => Some(s),
        None => {
            parsed = match &post.schema {
                Some(v) => SchemaPost::from_value(v, "schema")?,
                None => None,
            };
            if let Some(s) = parsed.as_mut()
                && s.watermark.is_none()
            {
                s.watermark = post.watermark.clone();
            }
            parsed.as_ref()
        }
    };
    Ok(table_statement(
        &post.name,
        &post.connector,
        profile.as_deref(),
        &post.config,
        schema,
        if validate {
            post.validate.as_ref()
        } else {
            None
        },
        &post.virtual_columns,
    ))
}

/// `POST /connection_tables`: `CREATE TABLE` from the body.
pub async fn create_table(
    session: &Session,
    post: &ConnectionTablePost,
) -> Result<ConnectionTableView, ApiError> {
    let stmt = body_statement(session, post, None, true)?;
    let (result, stored) = session
        .create_table_stored(&stmt.sql)
        .await
        .map_err(|e| body_error(&e, &stmt))?;
    let stored = stored.ok_or_else(|| ApiError::internal("the table was not stored"))?;
    let mut v = view(session.store().as_ref(), &stored, &mut HashMap::new())?;
    v.warnings = warnings(&result.warnings, &stmt);
    Ok(v)
}

/// `DELETE /connection_tables/{id}`: `DROP TABLE`.
pub async fn delete_table(session: &Session, key: &str) -> Result<(), ApiError> {
    let t = find_table(session.store().as_ref(), key)?;
    let mut stmt = WrittenStatement::new();
    stmt.push(&format!("DROP TABLE {}", ident(&t.name)), "/id");
    run_written(session, &stmt).await.map(|_| ())
}

/// `PATCH /connection_tables/{id}`: the stored definition with the patch applied (a new
/// name, another profile, options set or removed with `null`, a replacement schema),
/// validated whole like a new table and stored under the same id.
pub async fn patch_table(
    session: &Session,
    key: &str,
    patch: &ConnectionTablePatch,
) -> Result<ConnectionTableView, ApiError> {
    let store = session.store().as_ref();
    let t = find_table(store, key)?;
    let profile = match &patch.connection_profile_id {
        Some(k) => profile_name(store, Some(k))?,
        None => match &t.profile {
            Some(id) => store.profile(id).map_err(catalog)?.map(|p| p.name),
            None => None,
        },
    };
    let mut parts = table_parts_of(&t, profile.as_deref());
    let changes = config_options(&t.connector, &patch.config, true);
    // A secret stored for one address never follows a change of address (a webhook's
    // endpoint, a source's URL): unless the patch gives it again, it is dropped.
    let stored: Vec<(String, String)> = t
        .options
        .iter()
        .map(|o| (o.key.clone(), o.value.as_text()))
        .collect();
    let changed: Vec<(String, String)> = changes
        .options
        .iter()
        .map(|(k, v)| (k.clone(), v.as_text()))
        .collect();
    let unbound: Vec<String> = tributary_connectors::secrets_unbound_by(&stored, &changed)
        .into_iter()
        .map(str::to_string)
        .collect();
    parts
        .options
        .retain(|(k, _, _)| !changes.removed.contains(k) && !unbound.contains(k));
    for (k, v) in changes.options.clone() {
        let path = config_path(&changes, &k);
        match parts.options.iter_mut().find(|(key, _, _)| *key == k) {
            Some(slot) => {
                slot.1 = v;
                slot.2 = path;
            }
            None => parts.options.push((k, v, path)),
        }
    }
    let mut read_only = Vec::new();
    if let Some(v) = &patch.schema
        && let Some(schema) = SchemaPost::from_value(v, "schema")?
    {
        set_schema(&mut parts, &schema, &mut read_only);
    }
    let name = patch.name.clone().unwrap_or_else(|| t.name.clone());
    if name.trim().is_empty() {
        return Err(ApiError::body("'name' must not be empty"));
    }
    let mut stmt = parts.statement(&name);
    stmt.ignore_config(&changes);
    stmt.read_only = read_only;
    let (result, stored) = session
        .replace_table(&t.id, &stmt.sql)
        .await
        .map_err(|e| body_error(&e, &stmt))?;
    let mut v = view(store, &stored, &mut HashMap::new())?;
    v.warnings = warnings(&result.warnings, &stmt);
    if !unbound.is_empty() {
        v.warnings.push(ApiDiagnostic::body_warning(
            tributary_connectors::secrets_dropped_message(
                &format!("table '{}'", stored.name),
                &unbound,
            ),
            "/config".into(),
        ));
    }
    Ok(v)
}
