//! Planning on the caller's stack: a table definition as deep as `deep_stack` lets run
//! where it is must fit in the red zone it leaves, when planned in a Session's state.

use std::sync::Arc;
use tributary_catalog::{CatalogStore, OverlayStore};
use tributary_dialect::ddl::build_table;
use tributary_dialect::deep_stack::{SHALLOW_DEPTH, SHALLOW_RED_ZONE};
use tributary_dialect::parser::ast::Statement;
use tributary_dialect::parser::parse_script;
use tributary_sql::Session;

/// A table definition as deep as "shallow" allows builds in a debug build on a thread
/// with only [`SHALLOW_RED_ZONE`] of stack, straight on that stack: if shallow work
/// needed more, this test would overflow its stack and abort.
#[test]
fn the_deepest_shallow_table_definition_fits_in_the_shallow_red_zone() {
    // The column list is one level and `AS (...)` another; the rest are nested
    // parentheses around a sum, and the watermark's subtraction.
    let mut expr = "a + 1".to_string();
    for _ in 0..SHALLOW_DEPTH - 3 {
        expr = format!("({expr}) * 2");
    }
    let sql = format!(
        "CREATE TABLE t (a BIGINT, b BIGINT GENERATED ALWAYS AS ({expr}), \
         c STRUCT<x STRUCT<y BIGINT>>, ts TIMESTAMP NOT NULL, \
         WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) \
         WITH (connector = 'kafka', bootstrap_servers = 'b:1', topic = 't', type = 'source', format = 'json')"
    );
    let Some(Ok(parsed)) = parse_script(&sql).into_iter().next() else {
        panic!("the statement does not parse: {sql}");
    };
    let Statement::CreateTable(create) = parsed.statement else {
        panic!("not a CREATE TABLE");
    };
    assert_eq!(create.depth, SHALLOW_DEPTH, "{sql}");
    let store: Arc<dyn CatalogStore> = Arc::new(OverlayStore::in_memory());
    let state = Session::new(Arc::clone(&store)).offline().context().state();
    let built = std::thread::Builder::new()
        .stack_size(SHALLOW_RED_ZONE)
        .spawn(move || {
            build_table(
                store.as_ref(),
                &state,
                &create,
                None,
                false,
                &tributary_types::access::Access::unrestricted(),
            )
            .map(|(t, _)| t.schema.fields.len())
        })
        .expect("spawn")
        .join()
        .expect("join");
    assert_eq!(built.map_err(|d| format!("{d:?}")), Ok(3));
}
