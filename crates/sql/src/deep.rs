//! Running recursive work on a grown stack.
//!
//! DataFusion's planner, its expression helpers and sqlparser recurse once per level of a
//! statement's nesting, and some of that recursion is not guarded. The parser bounds
//! nesting (`tributary_types::limits`), and work that recurses runs here on a stack large
//! enough for the deepest statement the limits let through, whatever thread the caller is
//! on: a Tokio worker has 2 MiB, which a debug build can exhaust at the limits.

use std::future::Future;

/// When less than this much stack is left, a new stack is taken.
const RED_ZONE: usize = 4 * 1024 * 1024;

/// The size of a new stack. Only the pages used are ever touched.
const STACK_SIZE: usize = 64 * 1024 * 1024;

/// Run `f` with at least [`RED_ZONE`] of stack available.
pub(crate) fn on_deep_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, STACK_SIZE, f)
}

/// Drive `fut` to completion on a grown stack. Only for futures that compute (planning
/// resolves tables from the catalog, which answers at once): nothing here lets the
/// caller's runtime make progress while it runs.
pub(crate) fn block_on_deep<F: Future>(fut: F) -> F::Output {
    on_deep_stack(|| futures::executor::block_on(fut))
}
