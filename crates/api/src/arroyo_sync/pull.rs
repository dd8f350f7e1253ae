//! `tributary arroyo pull`: an Arroyo cluster's profiles and tables, imported into the
//! catalog through the same validation as Tributary's own `POST /connection_*`.

use super::client::{ArroyoClient, RemoteProfile, RemoteTable};
use super::compare::{
    TableShape, extras_here, extras_there, profile_differences, reference_redacted,
    table_differences,
};
use super::{SyncError, SyncKind, SyncOutcome, SyncReport};
use crate::{ApiError, ConnectionProfilePost, ConnectionTablePost, schema_view};
use std::collections::{HashMap, HashSet};
use tributary_sql::Session;

/// Import the profiles and tables of the Arroyo API at `url` into `session`'s catalog;
/// what happened to each. Objects already here by name are compared, never changed.
pub async fn pull(
    session: &Session,
    url: &str,
    token: Option<&str>,
) -> Result<SyncReport, SyncError> {
    let client = ArroyoClient::new(url, token)?;
    let mut profiles = client.profiles().await?;
    let mut tables = client.tables().await?;
    profiles.sort_by_key(|p| p.name.to_lowercase());
    tables.sort_by_key(|t| t.name.to_lowercase());
    let mut report = SyncReport {
        remote: client.base().to_string(),
        items: Vec::new(),
    };
    let mut missing = HashSet::new();
    for p in &profiles {
        let (outcome, notes) = pull_profile(session, p).await?;
        if matches!(outcome, SyncOutcome::Refused { .. }) {
            missing.insert(p.id.as_str());
        }
        report.push(SyncKind::Profile, &p.name, outcome, notes);
    }
    let profile_names: HashMap<&str, &str> = profiles
        .iter()
        .map(|p| (p.id.as_str(), p.name.as_str()))
        .collect();
    for t in &tables {
        let profile = t.connection_profile.as_ref().map(|p| {
            let name = p
                .name
                .as_deref()
                .or_else(|| profile_names.get(p.id.as_str()).copied());
            (p.id.as_str(), name)
        });
        let (outcome, notes) = match profile {
            Some((id, name)) if missing.contains(id) || name.is_none() => (
                SyncOutcome::Refused {
                    reason: format!("its profile '{}' was not imported", name.unwrap_or(id)),
                },
                vec![],
            ),
            _ => pull_table(session, t, profile.and_then(|(_, name)| name)).await?,
        };
        report.push(SyncKind::Table, &t.name, outcome, notes);
    }
    Ok(report)
}

async fn pull_profile(
    session: &Session,
    p: &RemoteProfile,
) -> Result<(SyncOutcome, Vec<String>), SyncError> {
    if let Some(here) = session.store().profile_by_name(&p.name)? {
        let parts = profile_differences((&here.connector, &here.config), (&p.connector, &p.config));
        return Ok(if parts.is_empty() {
            let to = here.id.to_string();
            (
                SyncOutcome::Unchanged {
                    from: p.id.clone(),
                    to,
                },
                vec![],
            )
        } else {
            (SyncOutcome::Differs { parts }, vec![])
        });
    }
    let mut config = p.config.clone();
    let notes = redacted_notes(reference_redacted(&p.name, &mut config));
    let post = ConnectionProfilePost {
        name: p.name.clone(),
        connector: p.connector.clone(),
        config,
        // The cluster may reach what this machine cannot: store it, test it later.
        validate: Some(false),
    };
    Ok(match crate::create_profile(session, &post).await {
        Ok(made) => (
            SyncOutcome::Created {
                from: p.id.clone(),
                to: made.id,
            },
            notes,
        ),
        Err(e) => (SyncOutcome::Refused { reason: reason(&e) }, vec![]),
    })
}

async fn pull_table(
    session: &Session,
    t: &RemoteTable,
    profile: Option<&str>,
) -> Result<(SyncOutcome, Vec<String>), SyncError> {
    let store = session.store();
    if let Some(here) = store.table_by_name(&t.name)? {
        let here_profile = match &here.profile {
            Some(id) => store.profile(id)?.map(|p| p.name),
            None => None,
        };
        let schema = schema_view(&here.schema);
        let (here_generated, here_watermark) = extras_here(&here);
        let (there_generated, there_watermark) = extras_there(t);
        let parts = table_differences(
            &TableShape {
                connector: &here.connector,
                profile: here_profile.as_deref(),
                config: &here.config,
                schema: &schema,
                generated: here_generated,
                watermark: here_watermark,
            },
            &TableShape {
                connector: &t.connector,
                profile,
                config: &t.config,
                schema: &t.schema,
                generated: there_generated,
                watermark: there_watermark,
            },
        );
        return Ok(if parts.is_empty() {
            let to = here.id.to_string();
            (
                SyncOutcome::Unchanged {
                    from: t.id.clone(),
                    to,
                },
                vec![],
            )
        } else {
            (SyncOutcome::Differs { parts }, vec![])
        });
    }
    let mut config = t.config.clone();
    let notes = redacted_notes(reference_redacted(&t.name, &mut config));
    let post = ConnectionTablePost {
        name: t.name.clone(),
        connector: t.connector.clone(),
        connection_profile_id: profile.map(str::to_string),
        config,
        schema: (!t.schema.is_null()).then(|| t.schema.clone()),
        validate: None,
        virtual_columns: t.virtual_columns.clone(),
        watermark: t.watermark.clone(),
    };
    Ok(match crate::create_table(session, &post).await {
        Ok(made) => (
            SyncOutcome::Created {
                from: t.id.clone(),
                to: made.id,
            },
            notes,
        ),
        Err(e) => (SyncOutcome::Refused { reason: reason(&e) }, vec![]),
    })
}

/// The API error's message and hint, as one line.
fn reason(e: &ApiError) -> String {
    match &e.hint {
        Some(hint) => format!("{} ({hint})", e.message),
        None => e.message.clone(),
    }
}

fn redacted_notes(variables: Vec<String>) -> Vec<String> {
    variables
        .into_iter()
        .map(|v| {
            format!("a secret arrived redacted and is stored as {{{{ {v} }}}}: set {v} where Tributary connects")
        })
        .collect()
}
