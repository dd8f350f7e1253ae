//! The rules of streaming SQL that Arroyo's planner applies and DataFusion's batch
//! planner does not know: over an unbounded input, aggregates are windowed (or updating),
//! window functions (`OVER`) need windowed input, `tumble`/`hop`/`session` appear only
//! in GROUP BY, nested windows match, updating results feed no join or window function
//! and reach only Debezium sinks, and joins of two unwindowed streams are equijoins.
//!
//! The plan is walked bottom-up once, with views and script tables inlined, computing
//! for each node whether its output is unbounded, windowed (and in which columns) or
//! updating. Each broken rule is a diagnostic naming the rule and pointing at the
//! keyword or call in the statement.

use super::table::ConnectionTableProvider;
use datafusion::common::tree_node::TreeNode;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{Expr, LogicalPlan, WriteOp};
use tributary_types::{ConnectionType, Diagnostic, Location, Span, codes};

/// The window calls.
const WINDOW_CALLS: [&str; 3] = ["tumble", "hop", "session"];

/// Where a statement is and what it says, to point diagnostics at words in it.
#[derive(Debug, Clone, Copy)]
pub struct StatementText<'a> {
    pub text: &'a str,
    pub span: Span,
    /// Judge the statement as a pipeline, which reads forever: every source table is a
    /// stream, a bounded file included (`check`, `validate_query`). A preview judges a
    /// finite source as a finite table.
    pub pipeline: bool,
}

impl StatementText<'_> {
    /// The span of the first `word` (case-insensitive, as a whole word) in the statement,
    /// or the whole statement.
    fn locate(&self, word: &str) -> Span {
        let lower = self.text.to_ascii_lowercase();
        let word = word.to_ascii_lowercase();
        let bytes = lower.as_bytes();
        let mut from = 0;
        while let Some(i) = lower[from..].find(&word).map(|i| i + from) {
            let before = i.checked_sub(1).map(|b| bytes[b]);
            let after = bytes.get(i + word.len()).copied();
            let boundary =
                |c: Option<u8>| c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == b'_'));
            if boundary(before) && boundary(after) {
                return self.span_of(i, word.len());
            }
            from = i + word.len();
        }
        self.span
    }

    fn span_of(&self, offset: usize, len: usize) -> Span {
        let at = |offset: usize| {
            let head = &self.text[..offset];
            let line = head.matches('\n').count() as u64;
            let column = match head.rfind('\n') {
                Some(nl) => head[nl + 1..].chars().count() as u64 + 1,
                None => head.chars().count() as u64 + self.span.start.column,
            };
            Location::new(self.span.start.line + line, column)
        };
        let end = offset + len.saturating_sub(1);
        Span::new(at(offset), at(end.max(offset)))
    }
}

/// What a node's output is, as a stream.
#[derive(Debug, Clone, Default)]
struct Stream {
    /// It reads a source that never ends.
    unbounded: bool,
    /// Its window, when an aggregate grouped it by one.
    window: Option<Window>,
    /// Its rows are updates (a non-windowed aggregate, a changelog).
    updating: bool,
}

#[derive(Debug, Clone)]
struct Window {
    /// The window call as written in the plan, to compare nested windows.
    call: String,
    /// The output columns holding the window.
    columns: Vec<String>,
}

/// Check `plan` against the streaming rules; every problem found.
pub fn streaming_violations(plan: &LogicalPlan, at: &StatementText<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    tributary_dialect::deep_stack::on_deep_stack(|| stream_of(plan, at, &mut out, 0));
    if at.pipeline {
        for p in &mut out {
            p.notes.push(PIPELINE_NOTE.into());
        }
    }
    out
}

/// Why `check` refuses what a preview would run.
const PIPELINE_NOTE: &str = "check judges the query as a pipeline, which reads every source, files included, as a stream that never ends; run previews a file as a finite table";

fn rule(at: Span, message: String, rule: &str, help: &str) -> Diagnostic {
    Diagnostic::error(message)
        .with_span(at)
        .with_code(codes::STREAMING_RULE)
        .with_note(format!("streaming rule: {rule}"))
        .with_help(help.to_string())
}

/// The most views and script tables inlined into one another; the catalog keeps views
/// far shallower, so this only guards the walk.
const MAX_INLINE: usize = 64;

fn stream_of(
    plan: &LogicalPlan,
    at: &StatementText<'_>,
    out: &mut Vec<Diagnostic>,
    inlined: usize,
) -> Stream {
    let inputs: Vec<Stream> = plan
        .inputs()
        .into_iter()
        .map(|i| stream_of(i, at, out, inlined))
        .collect();
    let first = inputs.first().cloned().unwrap_or_default();
    match plan {
        LogicalPlan::TableScan(scan) => {
            let Ok(provider) = source_as_provider(&scan.source) else {
                return Stream::default();
            };
            if let Some(t) = provider.downcast_ref::<ConnectionTableProvider>() {
                let t = t.table();
                let source = t.connection_type == ConnectionType::Source;
                let bounded = tributary_connectors::registry()
                    .get(&t.connector)
                    .is_some_and(|e| e.connector.bounded(&t.config));
                return Stream {
                    unbounded: source && (at.pipeline || !bounded),
                    window: None,
                    updating: source && t.schema.format.as_ref().is_some_and(|f| f.is_updating()),
                };
            }
            // A view or a written script table: its query, inlined.
            match provider.get_logical_plan() {
                Some(inner) if inlined < MAX_INLINE => stream_of(&inner, at, out, inlined + 1),
                _ => Stream::default(),
            }
        }
        LogicalPlan::Aggregate(agg) => {
            if !first.unbounded {
                return Stream::default();
            }
            let names: Vec<String> = agg
                .schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            let mut window: Option<Window> = None;
            for (i, g) in agg.group_expr.iter().enumerate() {
                let g = unaliased(g);
                if let Some((slide, width)) = crate::windows::hop_slide_width(g)
                    && (slide <= 0 || width % slide != 0)
                {
                    out.push(rule(
                        at.locate("hop"),
                        format!(
                            "a hop's width must be a whole multiple of its slide, but {} is not a multiple of {}",
                            describe_nanos(width),
                            describe_nanos(slide)
                        ),
                        "a hop's width is a whole multiple of its slide",
                        "Pick a slide that divides the width (hop(INTERVAL '10' SECOND, INTERVAL '1' MINUTE)).",
                    ));
                }
                if let Some(call) = window_call(g) {
                    if let Some(input) = &first.window
                        && input.call != call
                    {
                        out.push(rule(
                            at.locate(call_name(g)),
                            format!(
                                "this aggregate windows rows that are already windowed, by a different window: {call} over {}",
                                input.call
                            ),
                            "nested windows must match",
                            "Group by the input's window column, or window the source once with the window you need.",
                        ));
                    }
                    window = Some(Window {
                        call,
                        columns: names.get(i).cloned().into_iter().collect(),
                    });
                } else if let (Expr::Column(c), Some(input)) = (g, &first.window)
                    && input.columns.contains(&c.name)
                {
                    window = Some(Window {
                        call: input.call.clone(),
                        columns: names.get(i).cloned().into_iter().collect(),
                    });
                }
            }
            match (&window, &first.window) {
                (Some(_), _) => Stream {
                    unbounded: true,
                    window,
                    updating: false,
                },
                (None, Some(input)) => {
                    out.push(rule(
                        at.locate("group"),
                        format!(
                            "this aggregate reads windowed rows but does not keep their window ({})",
                            input.call
                        ),
                        "a second aggregate must keep the first one's window",
                        "Add the input's window column to its GROUP BY.",
                    ));
                    Stream {
                        unbounded: true,
                        window: None,
                        updating: false,
                    }
                }
                (None, None) => Stream {
                    unbounded: true,
                    window: None,
                    updating: true,
                },
            }
        }
        LogicalPlan::Distinct(_) if first.unbounded && first.window.is_none() => Stream {
            unbounded: true,
            window: None,
            updating: true,
        },
        LogicalPlan::Projection(p) => {
            if first.unbounded {
                refuse_window_calls(&p.expr, at, out);
            }
            let window = first.window.as_ref().map(|w| Window {
                call: w.call.clone(),
                columns: p
                    .expr
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| matches!(unaliased(e), Expr::Column(c) if w.columns.contains(&c.name)))
                    .filter_map(|(i, _)| p.schema.fields().get(i).map(|f| f.name().clone()))
                    .collect(),
            });
            Stream { window, ..first }
        }
        LogicalPlan::Filter(f) => {
            if first.unbounded {
                refuse_window_calls(std::slice::from_ref(&f.predicate), at, out);
            }
            first
        }
        LogicalPlan::Window(_) => {
            if first.updating {
                out.push(rule(
                    at.locate("over"),
                    "a window function (OVER) reads an updating input (a non-windowed aggregate)"
                        .into(),
                    "an updating input cannot feed a window function",
                    "Window the aggregate below it with tumble, hop or session.",
                ));
            } else if first.unbounded && first.window.is_none() {
                out.push(rule(
                    at.locate("over"),
                    "a window function (OVER) reads an unbounded input that is not windowed".into(),
                    "a window function needs windowed input",
                    "Aggregate the input by a window first (GROUP BY tumble(...)), then apply OVER (PARTITION BY window ...).",
                ));
            }
            first
        }
        LogicalPlan::Join(join) => {
            let left = first;
            let right = inputs.get(1).cloned().unwrap_or_default();
            if left.updating || right.updating {
                out.push(rule(
                    at.locate("join"),
                    "a join reads an updating input (a non-windowed aggregate)".into(),
                    "an updating input cannot feed either side of a join",
                    "Window the aggregate with tumble, hop or session before joining it.",
                ));
                return Stream {
                    unbounded: left.unbounded || right.unbounded,
                    window: None,
                    updating: true,
                };
            }
            match (left.unbounded, right.unbounded) {
                (true, true) if left.window.is_some() && right.window.is_some() => left,
                (true, true) => {
                    if join.on.is_empty() && !has_equijoin_filter(join) {
                        out.push(rule(
                            at.locate("join"),
                            "a join of two unbounded, unwindowed inputs has no equality condition".into(),
                            "updating joins need an equijoin condition",
                            "Join on equal keys (ON a.id = b.id), or window both sides by the same window.",
                        ));
                    }
                    Stream {
                        unbounded: true,
                        window: None,
                        updating: true,
                    }
                }
                (true, false) => left,
                (false, true) => right,
                (false, false) => Stream::default(),
            }
        }
        LogicalPlan::Union(_) => Stream {
            unbounded: inputs.iter().any(|s| s.unbounded),
            window: inputs.iter().find_map(|s| s.window.clone()),
            updating: inputs.iter().any(|s| s.updating),
        },
        LogicalPlan::Dml(dml) => {
            if let (WriteOp::Insert(_), true) = (&dml.op, first.updating)
                && let Ok(provider) = source_as_provider(&dml.target)
                && let Some(t) = provider.downcast_ref::<ConnectionTableProvider>()
            {
                let t = t.table();
                // A sink without a format (blackhole) takes whatever it is given.
                let appends = t.schema.format.as_ref().is_some_and(|f| !f.is_updating());
                if appends {
                    out.push(rule(
                        at.span,
                        format!(
                            "INSERT INTO '{}' writes an updating result (a non-windowed aggregate), but its format appends rows",
                            t.name
                        ),
                        "an updating result reaches only a sink whose format is debezium_json",
                        "Window the aggregate with tumble, hop or session, or write to a sink with format = 'debezium_json'.",
                    ));
                }
            }
            first
        }
        _ => first,
    }
}

/// Refuse window calls outside GROUP BY over an unbounded input.
fn refuse_window_calls(exprs: &[Expr], at: &StatementText<'_>, out: &mut Vec<Diagnostic>) {
    for e in exprs {
        let mut found: Option<&'static str> = None;
        let _ = e.apply(|e| {
            if found.is_none()
                && let Expr::ScalarFunction(f) = e
            {
                found = WINDOW_CALLS
                    .into_iter()
                    .find(|w| f.func.name().eq_ignore_ascii_case(w));
            }
            Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
        });
        if let Some(name) = found {
            out.push(rule(
                at.locate(name),
                format!("{name}(...) appears outside GROUP BY over an unbounded input"),
                "window functions such as tumble, hop and session appear only in GROUP BY",
                "GROUP BY the window (and select it, or its start and end, by the same expression or its alias).",
            ));
        }
    }
}

/// Whether a join's condition (before the optimizer moves equalities into `on`) equates
/// a column of each side.
fn has_equijoin_filter(join: &datafusion::logical_expr::Join) -> bool {
    use datafusion::logical_expr::utils::split_conjunction;
    use datafusion::logical_expr::{BinaryExpr, Operator};
    let Some(filter) = &join.filter else {
        return false;
    };
    let side = |e: &Expr| {
        let columns = e.column_refs();
        let left = !columns.is_empty() && columns.iter().all(|c| join.left.schema().has_column(c));
        let right =
            !columns.is_empty() && columns.iter().all(|c| join.right.schema().has_column(c));
        (left, right)
    };
    split_conjunction(filter).into_iter().any(|c| match c {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) => {
            let (l, r) = (side(left), side(right));
            (l.0 && r.1) || (l.1 && r.0)
        }
        _ => false,
    })
}

/// A length of time as a person writes it: `90 s`, `1500 ms`.
fn describe_nanos(nanos: i64) -> String {
    if nanos % 1_000_000_000 == 0 {
        format!("{} s", nanos / 1_000_000_000)
    } else if nanos % 1_000_000 == 0 {
        format!("{} ms", nanos / 1_000_000)
    } else {
        format!("{nanos} ns")
    }
}

fn unaliased(e: &Expr) -> &Expr {
    match e {
        Expr::Alias(a) => unaliased(&a.expr),
        e => e,
    }
}

/// The window a GROUP BY expression calls, as text to compare.
fn window_call(e: &Expr) -> Option<String> {
    let Expr::ScalarFunction(f) = e else {
        return None;
    };
    WINDOW_CALLS
        .iter()
        .any(|w| f.func.name().eq_ignore_ascii_case(w))
        .then(|| e.to_string())
}

fn call_name(e: &Expr) -> &str {
    match e {
        Expr::ScalarFunction(f) => f.func.name(),
        _ => "group",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> StatementText<'_> {
        StatementText {
            text,
            span: Span::new(Location::new(3, 5), Location::new(4, 20)),
            pipeline: false,
        }
    }

    #[test]
    fn words_are_found_whole_and_counted_in_characters_from_the_statement() {
        // Non-ASCII text before the word: columns count characters, and nothing panics.
        let s = at("SELECT 'İstanbul ü', x\nFROM t JOIN u ON true");
        assert_eq!(s.locate("join").start, Location::new(4, 8));
        // On the first line, columns continue from where the statement starts.
        assert_eq!(s.locate("select").start, Location::new(3, 5));
        // A word inside another is not the word.
        let s = at("SELECT rejoin FROM t");
        assert_eq!(s.locate("join"), s.span);
    }
}
