//! `docs/connectors.md` must match what the registry renders today.

use std::path::Path;

#[test]
fn connector_docs_are_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/connectors.md");
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    let rendered = tributary_connectors::connectors_markdown();
    assert!(
        on_disk == rendered,
        "docs/connectors.md is out of date: run `cargo run -p tributary-connectors --example connector-docs`"
    );
    for id in tributary_connectors::registry().ids() {
        assert!(
            rendered.contains(&format!("\n## {id}\n")),
            "no section for {id}"
        );
    }
}
