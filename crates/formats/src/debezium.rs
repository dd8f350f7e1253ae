//! Debezium change events (`debezium_json`) as rows and back. A message's `before`/`after`
//! images become rows tagged with their change kind, in the `_change` column the decoder
//! adds after the table's columns (Flink's RowKind spellings): a create or snapshot read is
//! `+I`, an update `-U` (its before image, when the event has one) then `+U`, a delete
//! `-D` of the before image. Tombstones (empty or `null` messages) are skipped; Kafka
//! Connect's `{"schema": ..., "payload": ...}` wrapping is unwrapped.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The column holding each row's change kind.
pub const CHANGE_COLUMN: &str = "_change";

/// What a row is in a changelog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    Insert,
    UpdateBefore,
    UpdateAfter,
    Delete,
}

impl ChangeKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Insert => "+I",
            ChangeKind::UpdateBefore => "-U",
            ChangeKind::UpdateAfter => "+U",
            ChangeKind::Delete => "-D",
        }
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    before: Option<&'a RawValue>,
    #[serde(borrow, default)]
    after: Option<&'a RawValue>,
    #[serde(default)]
    op: Option<String>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
}

/// The row images a message holds, with their change kinds.
pub(crate) fn row_images(message: &[u8]) -> Result<Vec<(ChangeKind, &[u8])>, String> {
    let trimmed = message.trim_ascii();
    if trimmed.is_empty() || trimmed == b"null" {
        return Ok(Vec::new());
    }
    let mut envelope: Envelope<'_> = serde_json::from_slice(message)
        .map_err(|e| format!("it is not a Debezium change event: {e}"))?;
    if envelope.op.is_none()
        && let Some(payload) = envelope.payload
    {
        if payload.get() == "null" {
            return Ok(Vec::new());
        }
        envelope = serde_json::from_str(payload.get())
            .map_err(|e| format!("its payload is not a Debezium change event: {e}"))?;
    }
    let (before, after) = (image(envelope.before), image(envelope.after));
    let op = envelope.op.ok_or(
        "it has no 'op' field (expected a Debezium change event with before, after and op)",
    )?;
    Ok(match (op.as_str(), before, after) {
        ("c" | "r", _, Some(a)) => vec![(ChangeKind::Insert, a)],
        ("u", Some(b), Some(a)) => {
            vec![(ChangeKind::UpdateBefore, b), (ChangeKind::UpdateAfter, a)]
        }
        ("u", None, Some(a)) => vec![(ChangeKind::UpdateAfter, a)],
        ("d", Some(b), _) => vec![(ChangeKind::Delete, b)],
        ("d", None, _) => {
            return Err(
                "a delete without a 'before' image; the source database must log whole rows (e.g. PostgreSQL REPLICA IDENTITY FULL)"
                    .into(),
            );
        }
        ("c" | "r" | "u", _, None) => {
            return Err(format!("an '{op}' event without an 'after' image"));
        }
        ("t", _, _) => {
            return Err("a truncate event, which has no rows to decode".into());
        }
        (other, _, _) => {
            return Err(format!(
                "op '{other}' is not a Debezium operation (c, r, u, d)"
            ));
        }
    })
}

/// A row image's JSON bytes, unless absent or `null`.
fn image(v: Option<&RawValue>) -> Option<&[u8]> {
    v.filter(|v| v.get() != "null").map(|v| v.get().as_bytes())
}

/// Debezium events for rows already encoded as JSON objects, tagged with change kinds
/// (`None`: an insert). An update's before image pairs with the after image that follows.
pub(crate) fn envelopes(
    rows: Vec<Vec<u8>>,
    kinds: Option<Vec<&str>>,
) -> Result<Vec<Vec<u8>>, String> {
    let Some(kinds) = kinds else {
        return Ok(rows
            .into_iter()
            .map(|r| envelope(None, Some(&r), "c"))
            .collect());
    };
    let mut out = Vec::with_capacity(rows.len());
    let mut pending_before: Option<Vec<u8>> = None;
    for (row, kind) in rows.into_iter().zip(kinds) {
        match kind {
            "+I" => out.push(envelope(None, Some(&row), "c")),
            "-U" => pending_before = Some(row),
            "+U" => out.push(envelope(pending_before.take().as_deref(), Some(&row), "u")),
            "-D" => out.push(envelope(Some(&row), None, "d")),
            other => {
                return Err(format!(
                    "'{other}' is not a change kind ('+I', '-U', '+U' or '-D')"
                ));
            }
        }
    }
    Ok(out)
}

fn envelope(before: Option<&[u8]>, after: Option<&[u8]>, op: &str) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(32 + before.map_or(0, <[u8]>::len) + after.map_or(0, <[u8]>::len));
    out.extend_from_slice(b"{\"before\":");
    out.extend_from_slice(before.unwrap_or(b"null"));
    out.extend_from_slice(b",\"after\":");
    out.extend_from_slice(after.unwrap_or(b"null"));
    out.extend_from_slice(b",\"op\":\"");
    out.extend_from_slice(op.as_bytes());
    out.extend_from_slice(b"\"}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(m: &str) -> Result<Vec<&'static str>, String> {
        row_images(m.as_bytes()).map(|v| v.into_iter().map(|(k, _)| k.as_str()).collect())
    }

    #[test]
    fn events_become_changelog_rows() {
        assert_eq!(
            kinds(r#"{"before":null,"after":{"id":1},"op":"c"}"#),
            Ok(vec!["+I"])
        );
        assert_eq!(
            kinds(r#"{"before":{"id":1},"after":{"id":1},"op":"u"}"#),
            Ok(vec!["-U", "+U"])
        );
        assert_eq!(
            kinds(r#"{"before":{"id":1},"after":null,"op":"d"}"#),
            Ok(vec!["-D"])
        );
        assert_eq!(
            kinds(r#"{"schema":{},"payload":{"after":{"id":1},"op":"r"}}"#),
            Ok(vec!["+I"])
        );
        assert_eq!(kinds(""), Ok(vec![]));
        assert_eq!(kinds("null"), Ok(vec![]));
        assert!(
            kinds(r#"{"after":{"id":1}}"#)
                .unwrap_err()
                .contains("no 'op'")
        );
        assert!(
            kinds(r#"{"before":null,"op":"d"}"#)
                .unwrap_err()
                .contains("REPLICA IDENTITY FULL")
        );
        assert!(
            kinds(r#"{"op":"x","after":{}}"#)
                .unwrap_err()
                .contains("op 'x'")
        );
    }

    #[test]
    fn envelopes_pair_updates() {
        let rows = vec![
            b"{\"id\":1}".to_vec(),
            b"{\"id\":1}".to_vec(),
            b"{\"id\":2}".to_vec(),
        ];
        let out = envelopes(rows, Some(vec!["-U", "+U", "-D"])).unwrap_or_default();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0], br#"{"before":{"id":1},"after":{"id":1},"op":"u"}"#);
        assert_eq!(out[1], br#"{"before":{"id":2},"after":null,"op":"d"}"#);
    }
}
