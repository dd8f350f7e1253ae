//! A profile's live names (Kafka topics, ...) for completion, fetched in the background:
//! asking never waits. The first ask for a profile starts a lookup on a thread of its
//! own (with the profile's connection test bound and [`LOOKUP_TIMEOUT`] over it) and
//! answers nothing; later asks answer what it found, for the rest of the session. A
//! lookup that fails or times out is remembered as empty, so a broken profile costs
//! one lookup, not one per keystroke.

use super::LiveNames;
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tributary_catalog::CatalogStore;
use tributary_sql::Session;

/// How long one lookup may take before it counts as empty.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone)]
enum State {
    Pending,
    Found(Arc<Vec<String>>),
}

/// Live names by profile, filled by a background thread.
#[derive(Debug, Clone)]
pub struct BackgroundLiveNames {
    known: Arc<Mutex<HashMap<String, State>>>,
    requests: mpsc::Sender<String>,
}

impl BackgroundLiveNames {
    /// Look names up over `store`'s profiles, on a thread started now.
    pub fn start(store: Arc<dyn CatalogStore>) -> std::io::Result<Self> {
        let known: Arc<Mutex<HashMap<String, State>>> = Arc::default();
        let (requests, incoming) = mpsc::channel::<String>();
        let filled = known.clone();
        std::thread::Builder::new()
            .name("live-names".into())
            .spawn(move || lookups(store, incoming, filled))?;
        Ok(Self { known, requests })
    }

    /// What is known of `profile`'s names now; asks for them when nothing is.
    pub fn names(&self, profile: &str) -> Option<Vec<String>> {
        let key = profile.to_ascii_lowercase();
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        match known.get(&key) {
            Some(State::Found(names)) => Some(names.as_ref().clone()),
            Some(State::Pending) => None,
            None => {
                known.insert(key, State::Pending);
                let _ = self.requests.send(profile.to_string());
                None
            }
        }
    }

    /// As a completer's source of live names.
    pub fn as_live_names(&self) -> LiveNames {
        let me = self.clone();
        Arc::new(move |profile: &str| me.names(profile))
    }
}

/// Answer requests one at a time until every handle is gone.
fn lookups(
    store: Arc<dyn CatalogStore>,
    incoming: mpsc::Receiver<String>,
    known: Arc<Mutex<HashMap<String, State>>>,
) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let session = Session::new(store);
    while let Ok(profile) = incoming.recv() {
        let found = runtime.block_on(async {
            match tokio::time::timeout(LOOKUP_TIMEOUT, session.completions(&profile)).await {
                Ok(Ok(Some(c))) => c.names,
                _ => Vec::new(),
            }
        });
        let mut known = known.lock().unwrap_or_else(|p| p.into_inner());
        known.insert(profile.to_ascii_lowercase(), State::Found(Arc::new(found)));
    }
}
