//! `citriage evidence`: look up the evidence ledger by id or locator prefix.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use clap::Args;

/// Look up the evidence ledger: one item by id (`ev-…`), or every item whose locator
/// starts with a prefix (a build URL, a snapshot file).
#[derive(Args, Debug)]
pub struct EvidenceArgs {
    /// Evidence ids as cited in reports.
    pub ids: Vec<String>,
    /// Every item whose locator starts with this.
    /// Default: none.
    #[arg(long, value_name = "PREFIX")]
    pub locator: Option<String>,
}

/// Runs `citriage evidence`.
pub fn exec(ctx: &Context, a: &EvidenceArgs) -> Result<(), Failure> {
    let store = ctx.open_existing_store()?;
    let found = citriage_app::evidence::lookup(&store, &a.ids, a.locator.as_deref())?;
    if ctx.json() {
        print_json(&serde_json::to_value(&found).unwrap_or_default());
        return Ok(());
    }
    for e in &found {
        let ev = &e.evidence;
        outln!("{}  {:?}  read {}  (describes {})", ev.id, ev.kind, e.read_at, ev.as_of);
        outln!("  at:   {}", ev.locator);
        outln!("  says: {}", ev.excerpt);
        if !ev.source_sha256.is_empty() {
            outln!("  source sha256: {}", ev.source_sha256);
        }
    }
    Ok(())
}
