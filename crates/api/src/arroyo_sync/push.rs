//! `tributary arroyo push`: the catalog's profiles and tables, created in an Arroyo API.

use super::client::{ArroyoClient, RemoteProfile, RemoteTable};
use super::compare::{
    TableShape, extras_here, extras_there, profile_differences, table_differences,
};
use super::{SyncError, SyncKind, SyncOutcome, SyncReport};
use crate::schema_view;
use serde_json::json;
use std::collections::HashMap;
use tributary_catalog::CatalogStore;
use tributary_types::{ConnectionProfile, ConnectionTable, ProfileId, closest};

/// What to push, and how.
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    /// The tables to push (with their profiles); every profile and table when empty.
    pub tables: Vec<String>,
    /// Recreate tables that differ there (Arroyo cannot change a table in place); they
    /// get new ids there.
    pub replace: bool,
    /// The API token, sent as a bearer token.
    pub token: Option<String>,
}

/// Push `store`'s profiles and tables (or `options.tables` and their profiles) to the
/// Arroyo API at `url`; what happened to each.
pub async fn push(
    store: &dyn CatalogStore,
    url: &str,
    options: &PushOptions,
) -> Result<SyncReport, SyncError> {
    let client = ArroyoClient::new(url, options.token.as_deref())?;
    let (profiles, tables) = selection(store, &options.tables)?;
    let remote_profiles = client.profiles().await?;
    let remote_tables = client.tables().await?;
    let mut report = SyncReport {
        remote: client.base().to_string(),
        items: Vec::new(),
    };
    let pushed = push_profiles(&client, &profiles, &remote_profiles, &mut report).await;
    let profile_names: HashMap<&ProfileId, &str> =
        profiles.iter().map(|p| (&p.id, p.name.as_str())).collect();
    let remote_profile_names: HashMap<&str, &str> = remote_profiles
        .iter()
        .map(|p| (p.id.as_str(), p.name.as_str()))
        .collect();
    let remote_by_name: HashMap<String, &RemoteTable> = remote_tables
        .iter()
        .map(|t| (t.name.to_lowercase(), t))
        .collect();
    for t in &tables {
        let profile_name = t
            .profile
            .as_ref()
            .and_then(|id| profile_names.get(id).copied());
        let remote_profile = match &t.profile {
            None => None,
            Some(id) => match pushed.get(id) {
                Some(remote_id) => Some(remote_id.clone()),
                None => {
                    let reason = format!(
                        "its profile '{}' is not in the Arroyo API",
                        profile_name.unwrap_or(id.as_str())
                    );
                    report.push(
                        SyncKind::Table,
                        &t.name,
                        SyncOutcome::Refused { reason },
                        vec![],
                    );
                    continue;
                }
            },
        };
        let schema = schema_view(&t.schema);
        // The options Arroyo's config has no place for ride in it under their SQL keys,
        // and generated columns and the watermark beside it, as the table's view shows
        // them: a Tributary server takes them all back.
        let config = crate::with_table_options(t.config.clone(), t, false);
        let body = crate::table_body(t, remote_profile);
        let (generated, watermark) = extras_here(t);
        let here = TableShape {
            connector: &t.connector,
            profile: profile_name,
            config: &config,
            schema: &schema,
            generated,
            watermark,
        };
        // What the other side holds, as it shows it: a difference is never "unchanged",
        // and a table made without something sent is reported as such.
        let there_shape = |there: &'_ RemoteTable| {
            let (generated, watermark) = extras_there(there);
            let profile = there.connection_profile.as_ref().map(|p| {
                p.name
                    .clone()
                    .or_else(|| {
                        remote_profile_names
                            .get(p.id.as_str())
                            .map(|n| n.to_string())
                    })
                    .unwrap_or_else(|| p.id.clone())
            });
            (profile, generated, watermark)
        };
        let differences = |there: &RemoteTable| {
            let (profile, generated, watermark) = there_shape(there);
            table_differences(
                &here,
                &TableShape {
                    connector: &there.connector,
                    profile: profile.as_deref(),
                    config: &there.config,
                    schema: &there.schema,
                    generated,
                    watermark,
                },
            )
        };
        let made_whole = |made: RemoteTable, replaced: Option<Vec<&'static str>>| {
            let lost = differences(&made);
            let from = t.id.to_string();
            match (lost.is_empty(), replaced) {
                (false, _) => SyncOutcome::Incomplete {
                    lost,
                    from,
                    to: made.id,
                },
                (true, Some(parts)) => SyncOutcome::Replaced {
                    parts,
                    from,
                    to: made.id,
                },
                (true, None) => SyncOutcome::Created { from, to: made.id },
            }
        };
        let outcome = match remote_by_name.get(&t.name.to_lowercase()) {
            Some(there) => {
                let parts = differences(there);
                if parts.is_empty() {
                    SyncOutcome::Unchanged {
                        from: t.id.to_string(),
                        to: there.id.clone(),
                    }
                } else if options.replace {
                    match replace(&client, &there.id, &body).await {
                        Ok(made) => made_whole(made, Some(parts)),
                        Err(e) => SyncOutcome::Refused {
                            reason: e.to_string(),
                        },
                    }
                } else {
                    SyncOutcome::Differs { parts }
                }
            }
            None => match client.create_table(&body).await {
                Ok(made) => made_whole(made, None),
                Err(e) => SyncOutcome::Refused {
                    reason: e.to_string(),
                },
            },
        };
        // Where the target kept all of it, there is nothing to say.
        let notes = match outcome {
            SyncOutcome::Incomplete { .. } | SyncOutcome::Differs { .. } => beyond_arroyo(t),
            _ => vec![],
        };
        report.push(SyncKind::Table, &t.name, outcome, notes);
    }
    Ok(report)
}

/// The profiles and tables to push: everything, or the named tables and their profiles.
fn selection(
    store: &dyn CatalogStore,
    names: &[String],
) -> Result<(Vec<ConnectionProfile>, Vec<ConnectionTable>), SyncError> {
    if names.is_empty() {
        return Ok((store.profiles()?, store.tables()?));
    }
    let mut tables: Vec<ConnectionTable> = Vec::with_capacity(names.len());
    for name in names {
        match store.table_by_name(name)? {
            Some(t) if !tables.iter().any(|x| x.id == t.id) => tables.push(t),
            Some(_) => {}
            None => {
                let known = store.table_names()?;
                let suggestion = closest(name, known.iter().map(String::as_str))
                    .map(|s| format!("; did you mean '{s}'?"))
                    .unwrap_or_default();
                return Err(SyncError::UnknownTable {
                    name: name.clone(),
                    suggestion,
                });
            }
        }
    }
    let mut profiles: Vec<ConnectionProfile> = Vec::new();
    for id in tables.iter().filter_map(|t| t.profile.as_ref()) {
        if !profiles.iter().any(|p| &p.id == id)
            && let Some(p) = store.profile(id)?
        {
            profiles.push(p);
        }
    }
    profiles.sort_by_key(|p| p.name.to_lowercase());
    tables.sort_by_key(|t| t.name.to_lowercase());
    Ok((profiles, tables))
}

/// Push each profile that is not there yet; the remote id of every profile that is there
/// now, by local id.
async fn push_profiles(
    client: &ArroyoClient,
    profiles: &[ConnectionProfile],
    remote: &[RemoteProfile],
    report: &mut SyncReport,
) -> HashMap<ProfileId, String> {
    let by_name: HashMap<String, &RemoteProfile> =
        remote.iter().map(|p| (p.name.to_lowercase(), p)).collect();
    let mut pushed = HashMap::new();
    for p in profiles {
        let (outcome, notes) = match by_name.get(&p.name.to_lowercase()) {
            Some(there) => {
                pushed.insert(p.id.clone(), there.id.clone());
                let parts = profile_differences(
                    (&p.connector, &p.config),
                    (&there.connector, &there.config),
                );
                if parts.is_empty() {
                    let to = there.id.clone();
                    (
                        SyncOutcome::Unchanged {
                            from: p.id.to_string(),
                            to,
                        },
                        vec![],
                    )
                } else {
                    let note = "Arroyo cannot change a profile in place: delete it there (with its tables) and push again".to_string();
                    (SyncOutcome::Differs { parts }, vec![note])
                }
            }
            None => {
                // Stored settings, secrets as written: the stream processor needs them;
                // `{{ VAR }}` references stay references, resolved where it runs.
                let body = json!({
                    "name": p.name,
                    "connector": p.connector,
                    "config": p.config,
                    "validate": false,
                });
                match client.create_profile(&body).await {
                    Ok(made) => {
                        pushed.insert(p.id.clone(), made.id.clone());
                        let from = p.id.to_string();
                        (SyncOutcome::Created { from, to: made.id }, vec![])
                    }
                    Err(e) => (
                        SyncOutcome::Refused {
                            reason: e.to_string(),
                        },
                        vec![],
                    ),
                }
            }
        };
        report.push(SyncKind::Profile, &p.name, outcome, notes);
    }
    pushed
}

/// Delete the table `id` there and create it again from `body`.
async fn replace(
    client: &ArroyoClient,
    id: &str,
    body: &serde_json::Value,
) -> Result<RemoteTable, SyncError> {
    client.delete_table(id).await?;
    client.create_table(body).await
}

/// What of a table Arroyo's API cannot hold, as notes.
fn beyond_arroyo(t: &ConnectionTable) -> Vec<String> {
    let mut notes = Vec::new();
    if !t.virtual_columns.is_empty() {
        notes.push(format!(
            "its {} generated column(s) are not in Arroyo's table shape: declare them in the pipeline's query",
            t.virtual_columns.len()
        ));
    }
    if t.watermark.is_some() {
        notes.push(
            "its watermark is not in Arroyo's table shape: declare it in the pipeline's query"
                .into(),
        );
    }
    notes
}
