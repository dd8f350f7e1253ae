//! A script's catalog writes made durable together: a statement that only changes the
//! catalog waits until its change is visible, not flushed, so the next statement runs
//! while it is flushed and consecutive statements share flushes (the store's group
//! commit). Each outcome is still handed out only once its writes are durable, in
//! statement order; a flush that fails fails the statement it covered.

use super::outcome::{Mode, Outcome, ScriptSummary, StatementError};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::ops::ControlFlow;
use tributary_catalog::{CatalogStore, PendingWrite};
use tributary_dialect::parser::ast::Statement;
use tributary_types::OptionValue;

tokio::task_local! {
    /// The writes of the statement being run that are visible but not yet known durable.
    static UNFLUSHED: RefCell<Vec<PendingWrite>>;
}

/// Whether the running statement may leave its writes' durability to be collected later
/// (it runs inside [`collecting`]).
pub(super) fn deferring() -> bool {
    UNFLUSHED.try_with(|_| ()).is_ok()
}

/// Leave `write` to be collected once the statement is done; `Err` gives it back when
/// no statement is collecting (it must be awaited now).
pub(super) fn defer(write: PendingWrite) -> Result<(), PendingWrite> {
    let mut write = Some(write);
    let _ = UNFLUSHED.try_with(|w| w.borrow_mut().extend(write.take()));
    write.map_or(Ok(()), Err)
}

/// Run a statement, collecting the writes it deferred.
pub(super) async fn collecting<F: Future<Output = Outcome>>(
    statement: F,
) -> (Outcome, Vec<PendingWrite>) {
    UNFLUSHED
        .scope(RefCell::new(Vec::new()), async {
            let outcome = statement.await;
            (outcome, UNFLUSHED.with(|w| w.take()))
        })
        .await
}

/// Whether a statement's outcome may wait for its writes' durability while the next
/// statement runs: those that only change the catalog. A statement that reads or writes
/// other systems, streams rows or reports progress as it goes (a query, a connection
/// test) runs only once every earlier outcome is out, so what is shown stays in order.
pub(super) fn may_defer(statement: &Statement) -> bool {
    match statement {
        Statement::CreateTable(create) => {
            create.has_with
                && create
                    .options
                    .iter()
                    .all(|o| o.key != "validate" || o.value == OptionValue::Bool(false))
        }
        Statement::DropTable { .. }
        | Statement::CreateView(_)
        | Statement::DropView { .. }
        | Statement::DropProfile { .. }
        | Statement::CreateFunction(_)
        | Statement::DropFunction { .. } => true,
        _ => false,
    }
}

/// The outcomes run but not yet handed out, in statement order, each with the writes it
/// waits for.
#[derive(Default)]
pub(super) struct Unconfirmed {
    queue: VecDeque<(Outcome, Vec<PendingWrite>)>,
}

/// Where outcomes go once confirmed: the caller's `each`, after the script's budget and
/// summary have seen them.
pub(super) struct Handout<'a, F> {
    pub each: F,
    pub budget: &'a mut super::boundary::ScriptBudget,
    pub summary: &'a mut ScriptSummary,
    pub mode: Mode,
}

impl<F: FnMut(Outcome) -> ControlFlow<()>> Handout<'_, F> {
    /// Hand out one outcome; `Break` when the script stops here.
    fn deliver(&mut self, mut outcome: Outcome) -> ControlFlow<()> {
        self.budget.admit(&mut outcome);
        let failed = outcome.is_err();
        self.summary.statements += 1;
        self.summary.failed += usize::from(failed);
        if (self.each)(outcome).is_break() || (failed && self.mode == Mode::Run) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

impl Unconfirmed {
    pub(super) fn push(&mut self, outcome: Outcome, writes: Vec<PendingWrite>) {
        self.queue.push_back((outcome, writes));
    }

    /// Hand out the leading outcomes whose writes are durable, without waiting.
    pub(super) fn deliver_ready<F>(&mut self, to: &mut Handout<'_, F>) -> ControlFlow<()>
    where
        F: FnMut(Outcome) -> ControlFlow<()>,
    {
        while let Some((_, writes)) = self.queue.front_mut() {
            let mut failure = None;
            let mut i = 0;
            while i < writes.len() {
                match writes[i].outcome_now() {
                    None => break,
                    Some(Ok(())) => i += 1,
                    Some(Err(e)) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            writes.drain(..i);
            if failure.is_none() && !writes.is_empty() {
                return ControlFlow::Continue(());
            }
            let Some((outcome, _)) = self.queue.pop_front() else {
                break;
            };
            to.deliver(confirmed(outcome, failure))?;
        }
        ControlFlow::Continue(())
    }

    /// Hand out every outcome, waiting for each one's writes in turn (first written
    /// down, where the store keeps staged writes back).
    pub(super) async fn deliver_all<F>(
        &mut self,
        store: &dyn CatalogStore,
        to: &mut Handout<'_, F>,
    ) -> ControlFlow<()>
    where
        F: FnMut(Outcome) -> ControlFlow<()>,
    {
        if !self.queue.is_empty() {
            store.write_staged(true);
        }
        while let Some((outcome, writes)) = self.queue.pop_front() {
            let mut failure = None;
            for write in writes {
                if let Err(e) = write.await {
                    failure = Some(e);
                    break;
                }
            }
            to.deliver(confirmed(outcome, failure))?;
        }
        ControlFlow::Continue(())
    }
}

/// A statement's outcome once its writes are known durable, or failed: a flush that
/// failed fails the statement (its change may not survive a restart).
fn confirmed(outcome: Outcome, failure: Option<tributary_catalog::CatalogError>) -> Outcome {
    match (outcome, failure) {
        (Ok(result), Some(e)) => {
            let mut diagnostics = vec![super::catalog_diagnostic(e, result.span)];
            // A storage error names paths, not the statement's values; it is still
            // bounded and scrubbed like every diagnostic that leaves.
            super::boundary::seal_diagnostics(&mut diagnostics, "");
            Err(StatementError {
                span: result.span,
                diagnostics,
            })
        }
        (outcome, _) => outcome,
    }
}
