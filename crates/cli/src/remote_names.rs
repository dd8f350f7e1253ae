//! Completion over `--server`: the server's tables (with their columns) and profiles,
//! read from its REST API on a thread of its own into a [`NameSnapshot`] the completer
//! reads. Fetching never holds up typing: until the first answer arrives, and if the
//! server does not answer, completion simply offers no names. The shell asks for a new
//! fetch after each input it runs, since that input may have created or dropped some.

use crate::remote::Remote;
use serde_json::Value;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;
use tributary_complete::{LOOKUP_TIMEOUT, NameSnapshot, SnapshotTable};

/// Tables asked for per page (the API's largest page).
const PAGE: usize = 1_000;
/// The most pages read: a hundred thousand tables.
const MAX_PAGES: usize = 100;

/// A server's names, kept fresh by a background thread.
#[derive(Debug)]
pub struct RemoteNames {
    snapshot: Arc<NameSnapshot>,
    requests: mpsc::Sender<()>,
}

impl RemoteNames {
    /// Start fetching the names of the server at `url` (authenticating with `token`).
    pub fn start(url: &str, token: Option<String>) -> std::io::Result<Self> {
        let snapshot = Arc::new(NameSnapshot::new());
        let (requests, incoming) = mpsc::channel::<()>();
        let filled = snapshot.clone();
        let url = url.to_string();
        std::thread::Builder::new()
            .name("server-names".into())
            .spawn(move || fetch_on_request(&url, token, &incoming, &filled))?;
        let names = Self { snapshot, requests };
        names.refresh();
        Ok(names)
    }

    /// The names, for the completer.
    pub fn snapshot(&self) -> Arc<NameSnapshot> {
        self.snapshot.clone()
    }

    /// Fetch the names again, in the background.
    pub fn refresh(&self) {
        let _ = self.requests.send(());
    }
}

/// Serve fetch requests until the shell goes away; requests that pile up during a
/// fetch are served by one more.
fn fetch_on_request(
    url: &str,
    token: Option<String>,
    incoming: &mpsc::Receiver<()>,
    snapshot: &NameSnapshot,
) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let Ok(remote) = Remote::new(url, token) else {
        return;
    };
    while incoming.recv().is_ok() {
        while incoming.try_recv().is_ok() {}
        // A server that is slow or gone leaves the names as they were.
        let fetched =
            runtime.block_on(async { tokio::time::timeout(fetch_bound(), fetch(&remote)).await });
        if let Ok(Ok((tables, profiles))) = fetched {
            snapshot.replace(tables, profiles);
        }
    }
}

/// How long one fetch of every page may take.
fn fetch_bound() -> Duration {
    LOOKUP_TIMEOUT * 3
}

/// The server's tables and profiles.
async fn fetch(remote: &Remote) -> Result<(Vec<SnapshotTable>, Vec<(String, String)>), String> {
    let profiles = remote.get_json("/connection_profiles").await?;
    let profiles = profiles["data"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|p| Some((text(&p["name"])?, text(&p["connector"])?)))
                .collect()
        })
        .unwrap_or_default();
    let mut tables = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let path = match &after {
            Some(id) => format!("/connection_tables?limit={PAGE}&starting_after={id}"),
            None => format!("/connection_tables?limit={PAGE}"),
        };
        let page = remote.get_json(&path).await?;
        let data = page["data"].as_array().cloned().unwrap_or_default();
        after = data.last().and_then(|t| text(&t["id"]));
        tables.extend(data.iter().filter_map(table_names));
        if page["hasMore"] != Value::Bool(true) || after.is_none() {
            break;
        }
    }
    Ok((tables, profiles))
}

/// A table view's name and columns.
fn table_names(view: &Value) -> Option<SnapshotTable> {
    let columns = view["schema"]["fields"]
        .as_array()
        .map(|fields| {
            fields
                .iter()
                .filter_map(|f| Some((text(&f["name"])?, text(&f["sql_name"])?)))
                .collect()
        })
        .unwrap_or_default();
    Some(SnapshotTable {
        name: text(&view["name"])?,
        columns,
    })
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_view_gives_its_name_and_typed_columns() {
        let view = serde_json::json!({
            "id": "ct_1", "name": "orders",
            "schema": {"fields": [
                {"name": "id", "type": "int64", "sql_name": "BIGINT"},
                {"name": "at", "sql_name": "TIMESTAMP(9)"}
            ]}
        });
        assert_eq!(
            table_names(&view),
            Some(SnapshotTable {
                name: "orders".into(),
                columns: vec![
                    ("id".into(), "BIGINT".into()),
                    ("at".into(), "TIMESTAMP(9)".into())
                ],
            })
        );
        assert_eq!(table_names(&serde_json::json!({"id": "x"})), None);
    }
}
