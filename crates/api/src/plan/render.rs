//! A plan as text for a reader (one line per object, its differences indented below,
//! a summary last) and as JSON for CI.

use super::{Action, Detail, ObjectKind, Plan, PlannedChange};
use serde_json::{Value, json};

/// The plan as a reader sees it:
///
/// ```text
/// + table clicks
/// ~ table orders
///     option 'topic': 'orders' -> 'orders_v2'
///     column "note": (none) -> TEXT
///
/// Plan: 1 to create, 1 to change, 0 to replace, 0 to drop; 2 kept (not in the files).
/// ```
pub fn plan_text(plan: &Plan) -> String {
    let mut out = String::new();
    for c in plan.changes.iter().filter(|c| c.action != Action::Keep) {
        out.push_str(&format!("{} {} {}\n", c.action.mark(), c.kind, c.name));
        for d in &c.details {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
            out.push_str(&format!(
                "    {}: {} -> {}\n",
                d.what,
                show(&d.before),
                show(&d.after)
            ));
        }
    }
    if plan.is_empty() {
        out.push_str("No changes: the catalog matches the files.");
    } else {
        out.push('\n');
        out.push_str(&format!(
            "Plan: {} to create, {} to change, {} to replace, {} to drop",
            plan.count(Action::Create),
            plan.count(Action::Change),
            plan.count(Action::Replace),
            plan.count(Action::Drop),
        ));
    }
    let kept = plan.count(Action::Keep);
    if kept > 0 {
        out.push_str(&format!(
            "; {kept} kept (in the catalog, not in the files; --prune drops them)"
        ));
    }
    out.push('\n');
    out
}

/// The plan as one JSON document: `{"changes": [{"action", "kind", "name", "details":
/// [{"what", "before", "after"}]}], "summary": {"create", "change", "replace", "drop",
/// "keep"}}`.
pub fn plan_json(plan: &Plan) -> Value {
    let changes: Vec<Value> = plan
        .changes
        .iter()
        .map(|c| {
            json!({
                "action": c.action.word(),
                "kind": c.kind.to_string(),
                "name": c.name,
                "details": c.details.iter().map(|d| json!({
                    "what": d.what, "before": d.before, "after": d.after,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "changes": changes,
        "summary": {
            "create": plan.count(Action::Create),
            "change": plan.count(Action::Change),
            "replace": plan.count(Action::Replace),
            "drop": plan.count(Action::Drop),
            "keep": plan.count(Action::Keep),
        },
    })
}

/// A plan from its JSON form ([`plan_json`]), as a server answers `POST /plan`; `None`
/// when `value` is not one.
pub fn plan_from_json(value: &Value) -> Option<Plan> {
    let action = |w: &str| match w {
        "create" => Some(Action::Create),
        "change" => Some(Action::Change),
        "replace" => Some(Action::Replace),
        "drop" => Some(Action::Drop),
        "keep" => Some(Action::Keep),
        _ => None,
    };
    let kind = |w: &str| match w {
        "function" => Some(ObjectKind::Function),
        "profile" => Some(ObjectKind::Profile),
        "table" => Some(ObjectKind::Table),
        "view" => Some(ObjectKind::View),
        _ => None,
    };
    let text = |v: &Value| v.as_str().map(str::to_string);
    let changes = value["changes"]
        .as_array()?
        .iter()
        .map(|c| {
            Some(PlannedChange {
                action: action(c["action"].as_str()?)?,
                kind: kind(c["kind"].as_str()?)?,
                name: c["name"].as_str()?.to_string(),
                details: c["details"]
                    .as_array()?
                    .iter()
                    .map(|d| {
                        Some(Detail {
                            what: d["what"].as_str()?.to_string(),
                            before: text(&d["before"]),
                            after: text(&d["after"]),
                        })
                    })
                    .collect::<Option<Vec<_>>>()?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Plan { changes })
}
