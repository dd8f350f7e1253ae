//! A saved plan (`plan --out F`, read by `apply --plan-file F`): the files' text as they
//! were planned, whether they were planned with `--prune`, the fingerprint of the
//! catalog they were planned against, and the plan itself. Applying it applies those
//! files, not whatever is on disk by then, and is refused if the catalog has changed.
//! It holds what the files hold and nothing from the catalog (the fingerprint is of ids
//! and update times), so no stored secret reaches it.

use super::{Plan, SourceFile, plan_from_json, plan_json};
use serde_json::{Value, json};

/// What a plan file's `format` says; a reader refuses any other.
const FORMAT: &str = "tributary-plan/1";

/// A saved plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanFile {
    /// The files, as they were planned.
    pub files: Vec<SourceFile>,
    /// Whether objects not in the files are dropped.
    pub prune: bool,
    /// The fingerprint of the catalog planned against.
    pub fingerprint: String,
    /// The plan, as it was shown.
    pub plan: Plan,
}

impl PlanFile {
    /// Its JSON form.
    pub fn to_json(&self) -> Value {
        json!({
            "format": FORMAT,
            "fingerprint": self.fingerprint,
            "prune": self.prune,
            "files": self.files.iter().map(|f| json!({"name": f.name, "sql": f.text})).collect::<Vec<_>>(),
            "plan": plan_json(&self.plan),
        })
    }

    /// Read one back from `text`; why not, in a sentence, when it is not a plan file.
    pub fn parse(text: &str) -> Result<PlanFile, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            format!(
                "not a plan file: {e} (line {}, column {})",
                e.line(),
                e.column()
            )
        })?;
        match value["format"].as_str() {
            Some(FORMAT) => {}
            Some(other) => {
                return Err(format!(
                    "a plan file of format '{other}', which this build does not read (it reads '{FORMAT}'); make the plan again with this build's `plan --out`"
                ));
            }
            None => {
                return Err(
                    "not a plan file: it has no 'format'; write one with `tributary plan --out FILE`"
                        .into(),
                );
            }
        }
        let missing = |what: &str| format!("the plan file has no valid '{what}'");
        let fingerprint = value["fingerprint"]
            .as_str()
            .ok_or_else(|| missing("fingerprint"))?
            .to_string();
        let prune = value["prune"].as_bool().ok_or_else(|| missing("prune"))?;
        let files = value["files"]
            .as_array()
            .ok_or_else(|| missing("files"))?
            .iter()
            .map(|f| {
                Some(SourceFile {
                    name: f["name"].as_str()?.to_string(),
                    text: f["sql"].as_str()?.to_string(),
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| missing("files"))?;
        let plan = plan_from_json(&value["plan"]).ok_or_else(|| missing("plan"))?;
        Ok(PlanFile {
            files,
            prune,
            fingerprint,
            plan,
        })
    }
}
