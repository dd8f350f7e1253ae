//! Running recursive work on a grown stack.
//!
//! DataFusion's planner, its expression helpers and sqlparser recurse once per level of a
//! statement's nesting, and some of that recursion is not guarded. The parser bounds
//! nesting (`tributary_types::limits`), and work that recurses runs here on a stack large
//! enough for the deepest statement the limits let through, whatever thread the caller is
//! on: a Tokio worker has 2 MiB, which a debug build can exhaust at the limits.
//!
//! Taking a new stack costs a mapping, page faults as it is touched and an unmapping
//! (about as much as the rest of a table definition's checks), so work whose depth is
//! known to be small runs where it is when enough stack is left.

use std::future::Future;

/// When less than this much stack is left, a new stack is taken.
const RED_ZONE: usize = 4 * 1024 * 1024;

/// The size of a new stack. Only the pages used are ever touched.
const STACK_SIZE: usize = 64 * 1024 * 1024;

/// The deepest statement (as the parser's shape check measures depth) that counts as
/// shallow.
pub const SHALLOW_DEPTH: usize = 16;

/// What a shallow statement needs left. A debug build's planning of a table definition
/// nested [`SHALLOW_DEPTH`] deep fits in 256 KiB and overflows 128 KiB (measured by
/// shrinking the thread of `tributary-sql`'s `deep_stack` test, which plans in a
/// Session's state), so this leaves four times that.
pub const SHALLOW_RED_ZONE: usize = 1024 * 1024;

/// Run `f` with at least [`RED_ZONE`] of stack available.
pub fn on_deep_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, STACK_SIZE, f)
}

/// Run `f`, which recurses over a statement nested `depth` deep (the parser's measure),
/// with the stack that depth needs: a shallow statement runs on the caller's stack when
/// [`SHALLOW_RED_ZONE`] is left, anything deeper as [`on_deep_stack`] runs it.
pub fn for_depth<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    let red_zone = if depth <= SHALLOW_DEPTH {
        SHALLOW_RED_ZONE
    } else {
        RED_ZONE
    };
    stacker::maybe_grow(red_zone, STACK_SIZE, f)
}

/// Drive `fut` to completion on a grown stack. Only for futures that compute (planning
/// resolves tables from the catalog, which answers at once): nothing here lets the
/// caller's runtime make progress while it runs.
pub fn block_on_deep<F: Future>(fut: F) -> F::Output {
    on_deep_stack(|| futures::executor::block_on(fut))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where `f` ran: the stack left there, in bytes.
    fn left_inside(depth: usize) -> usize {
        for_depth(depth, stacker::remaining_stack).unwrap_or(0)
    }

    #[test]
    fn shallow_work_stays_on_the_callers_stack_and_deep_work_moves() {
        let left = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(|| (left_inside(3), left_inside(SHALLOW_DEPTH + 1)))
            .expect("spawn")
            .join()
            .expect("join");
        assert!(left.0 < 2 * 1024 * 1024, "shallow work moved: {left:?}");
        assert!(left.1 > RED_ZONE, "deep work stayed: {left:?}");
    }
}
