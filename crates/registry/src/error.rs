//! [`RegistryError`]: what went wrong talking to a schema registry, with the URL asked
//! and what came back.

use std::time::Duration;

/// Why a registry request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The endpoint is not an http(s) URL.
    #[error("schema registry endpoint '{endpoint}' is not valid: {reason}")]
    BadEndpoint {
        /// The endpoint as configured.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Nothing answered.
    #[error("could not connect to the schema registry at {url}: {reason}")]
    Connect {
        /// The URL asked.
        url: String,
        /// The connection error.
        reason: String,
    },
    /// No answer within the timeout.
    #[error("the schema registry at {url} did not answer within {}", humanize(*after))]
    Timeout {
        /// The URL asked.
        url: String,
        /// The timeout.
        after: Duration,
    },
    /// The subject, version or id does not exist (HTTP 404).
    #[error("{what} was not found in the schema registry ({url} answered 404: {message})")]
    NotFound {
        /// `subject 'orders-value'`, `version 3 of subject 'x'`, `schema id 7`.
        what: String,
        /// The URL asked.
        url: String,
        /// The registry's message.
        message: String,
    },
    /// The credentials were refused (HTTP 401 or 403).
    #[error("the schema registry at {url} refused the credentials ({status}: {message})")]
    Unauthorized {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The registry's message.
        message: String,
    },
    /// Any other non-success answer.
    #[error("the schema registry at {url} answered {status}: {message}")]
    Status {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The registry's message (or the body).
        message: String,
    },
    /// An answer that is not the documented JSON.
    #[error("the schema registry at {url} sent an unexpected answer: {reason}")]
    BadResponse {
        /// The URL asked.
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// References that refer back to themselves or nest too deeply.
    #[error("the references of {what} {reason}")]
    References {
        /// The schema whose references were being resolved.
        what: String,
        /// What went wrong.
        reason: String,
    },
}

fn humanize(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
