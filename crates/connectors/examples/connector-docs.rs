//! Regenerate `docs/connectors.md` from the connector registry:
//! `cargo run -p tributary-connectors --example connector-docs`.

use std::path::Path;

fn main() -> std::io::Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/connectors.md");
    std::fs::write(&path, tributary_connectors::connectors_markdown())?;
    println!("wrote {}", path.display());
    Ok(())
}
