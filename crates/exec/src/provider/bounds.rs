//! Queries that could never finish are refused before they start. A source that does not
//! end on its own (a Kafka topic, an unbounded generator) may only be read up to a bound:
//! a `LIMIT` that stops it (through operators that pass rows on as they come), or the
//! session's `preview.max_rows` / `preview.timeout`. An aggregate, a sort or a join's
//! build side reads its input to the end first, so a `LIMIT` above it bounds nothing.
//! The exceptions stream: an `INSERT INTO` moves rows as they come and runs until it is
//! cancelled, as a pipeline would, and so does a query whose result is handed on as it
//! arrives (the REPL, `POST /sql` asked to stream).

use super::exec::{ConnectionScanExec, ConnectionSinkExec};
use crate::preview_bounds::PreviewOptions;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::execution_plan::EmissionType;
use std::sync::Arc;
use tributary_types::{Diagnostic, Span};

/// What the operators above a node do with its rows.
#[derive(Debug, Clone)]
enum Above {
    /// A LIMIT takes what it needs as rows come, then stops the input.
    Limited,
    /// A sink writes rows as they come; the statement runs until cancelled.
    Streaming,
    /// Something must read the input to its end first (what, in words).
    ReadsToEnd(String),
}

/// Every unbounded read of `plan` that nothing bounds, as a diagnostic at `span`.
/// `streamed`: the result is handed on as it arrives, rather than gathered.
pub fn unbounded_reads(
    plan: &Arc<dyn ExecutionPlan>,
    preview: &PreviewOptions,
    span: Span,
    streamed: bool,
) -> Vec<Diagnostic> {
    if preview.bounds_reads() {
        return vec![];
    }
    let mut out = Vec::new();
    // A gathered result is shown when it is complete, so the query itself must end.
    let top = if streamed {
        Above::Streaming
    } else {
        Above::ReadsToEnd("the query's result is complete only when its sources end".into())
    };
    walk(plan, &top, span, &mut out);
    out
}

fn walk(plan: &Arc<dyn ExecutionPlan>, above: &Above, span: Span, out: &mut Vec<Diagnostic>) {
    if let Some(scan) = plan.downcast_ref::<ConnectionScanExec>() {
        if scan.unbounded() && scan.changelog() {
            // Its rows are known only when the read ends: only a preview bound ends it.
            let why = Above::ReadsToEnd(
                "a table of changes (debezium_json) is applied to its end before its rows are known".into(),
            );
            out.push(refusal(scan, &why, span, false));
            return;
        }
        let bounded = matches!(above, Above::Limited | Above::Streaming);
        if scan.unbounded() && scan.limit().is_none() && !bounded {
            out.push(refusal(scan, above, span, true));
        }
        return;
    }
    let blocking = matches!(
        plan.properties().emission_type,
        EmissionType::Final | EmissionType::Both
    );
    let mine = if plan.downcast_ref::<ConnectionSinkExec>().is_some() {
        Above::Streaming
    } else if blocking {
        Above::ReadsToEnd(format!(
            "{} reads its whole input before it answers",
            what(plan)
        ))
    } else if plan.fetch().is_some() {
        Above::Limited
    } else {
        above.clone()
    };
    for (i, child) in plan.children().into_iter().enumerate() {
        let reads = match plan.name() {
            // The build side (left) is read whole before the probe side streams.
            "HashJoinExec" if i == 0 => {
                Above::ReadsToEnd("a join reads one side whole before it matches the other".into())
            }
            "HashJoinExec" => mine.clone(),
            "NestedLoopJoinExec"
            | "CrossJoinExec"
            | "SortMergeJoinExec"
            | "SymmetricHashJoinExec" => Above::ReadsToEnd(
                "a join of two sources reads them whole before it can finish".into(),
            ),
            _ => mine.clone(),
        };
        walk(child, &reads, span, out);
    }
}

/// "an aggregate", "a sort", ...: the operator in words.
fn what(plan: &Arc<dyn ExecutionPlan>) -> String {
    let name = plan.name();
    let word = if name.contains("Aggregate") {
        "an aggregate (GROUP BY, count, sum, a window)"
    } else if name.contains("Sort") {
        "a sort (ORDER BY)"
    } else if name.contains("Window") {
        "a window function"
    } else if name.contains("Join") {
        "a join"
    } else {
        return format!("the {name} step");
    };
    word.to_string()
}

/// The refusal of an endless read; `limit_helps`: a LIMIT would end it.
fn refusal(scan: &ConnectionScanExec, above: &Above, span: Span, limit_helps: bool) -> Diagnostic {
    let why = match above {
        Above::ReadsToEnd(why) => why.clone(),
        Above::Limited | Above::Streaming => String::new(),
    };
    let help = if limit_helps {
        "Bound the read: add LIMIT n to a query that passes rows on as they come, or \
         bound every read of the session with SET preview.max_rows = 1000 or \
         SET preview.timeout = '10 seconds'."
    } else {
        "Bound every read of the session with SET preview.max_rows = 1000 or \
         SET preview.timeout = '10 seconds'."
    };
    Diagnostic::error(format!(
        "table '{}' (connector '{}') never ends, so this query would never finish",
        scan.table_name(),
        scan.connector()
    ))
    .with_span(span)
    .with_note(why)
    .with_help(help)
    .with_code(tributary_types::codes::UNBOUNDED_QUERY)
}
