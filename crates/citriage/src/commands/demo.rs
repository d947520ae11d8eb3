//! `citriage demo`: the whole triage offline, on the bundled example dashboards and a
//! synthetic world (builds ingested, payload stream analysed, failures clustered,
//! reports verified), everything recorded in two stores.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use crate::render;
use citriage_app::demo::{DemoCheck, DemoOutcome, DemoRequest};
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Run the whole triage on the bundled example dashboards (no network):
/// import three days of failures and flakes snapshots into a fresh store and
/// write both reports; then the same over a synthetic world, with its payload
/// stream analysed and every report verified (all recorded in the stores).
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Where to write the store and the reports.
    #[arg(long, default_value = "demo-report")]
    pub out: PathBuf,
}

/// Runs `citriage demo`.
pub fn exec(ctx: &Context, a: &DemoArgs) -> Result<(), Failure> {
    let pb = ctx.spinner("importing the bundled snapshots");
    let req = DemoRequest { out: a.out.clone(), db: ctx.db.clone() };
    let DemoOutcome { db, world_db, world_builds, builds_stored, triages, payloads, clustered, checks } =
        citriage_app::demo::demo(&req, &pb)?;
    pb.clear();
    if ctx.json() {
        print_json(&json!({
            "store": db.display().to_string(),
            "world_store": world_db.display().to_string(),
            "world_builds": world_builds,
            "reports": triages.iter().map(|(t, f)| json!({"dataset": t.snapshot.dataset, "date": t.snapshot.date, "jobs": t.job_count, "jobs_with_builds": t.jobs_with_builds, "selected": t.selection.picks.len(), "misclassifications": t.misclassifications.len(), "files": f})).collect::<Vec<_>>(),
            "payloads": payloads.iter().map(|p| json!({"tag": p.payload.tag, "phase": p.payload.phase.as_str(), "verdict": p.decision.verdict.as_str()})).collect::<Vec<_>>(),
            "clusters": clustered.iter().map(|(p, f, c)| json!({"profile": p, "failures": f, "clusters": c})).collect::<Vec<_>>(),
            "verifications": checks.iter().map(|c| json!({"store": c.store, "key": c.key, "verdict": c.verdict, "findings": c.findings, "unchecked": c.unchecked})).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    for (t, files) in &triages {
        render::triage_summary(ctx, t, files);
        outln!();
    }
    match payloads.first() {
        Some(first) => outln!(
            "Payloads: {} of the world's {} stream analysed and recorded in {}",
            payloads.len(),
            first.payload.stream_name,
            world_db.display()
        ),
        None => outln!("Payloads: the world has no payload stream"),
    }
    for (p, f, c) in &clustered {
        outln!(
            "Clusters ({p} profile): {f} failures of the last 14 days in {c} clusters, recorded in {}",
            world_db.display()
        );
    }
    outln!();
    outln!("Report checks: the verifier read each report it wrote and checked its claims offline.");
    outln!("A report \"needs work\" when the verifier found something to improve in it; that is the");
    outln!("verifier's verdict on the report's content, not a failure of the demo.");
    for c in &checks {
        outln!("  {}", describe(c));
    }
    outln!();
    outln!(
        "The demo succeeded: {} reports written and checked, {} builds ingested, {} payloads analysed.",
        triages.len(),
        builds_stored,
        payloads.len()
    );
    outln!("Stores: {} (bundled dashboards), {} (synthetic world)", db.display(), world_db.display());
    outln!(
        "Read {} (or report.html beside it, in a browser)",
        Path::new(&a.out).join("failures").join("report.md").display()
    );
    outln!(
        "  and {} (the same triage backed by build data).",
        Path::new(&a.out).join("world-failures").join("report.md").display()
    );
    for line in next_steps(&crate::context::invocation(), &world_db) {
        outln!("{line}");
    }
    Ok(())
}

/// A demo report's verification, for the summary.
fn describe(c: &DemoCheck) -> String {
    let verdict = match c.verdict {
        "pass" => "passes: every claim checked holds",
        "incomplete" => "passes what could be checked; some claims need GitHub or a checkout",
        _ => "needs work",
    };
    let mut s = format!("{} in {}: {verdict} (verifier verdict: {})", c.key, c.store, c.verdict);
    for (rule, n) in &c.findings {
        let info = citriage_verify::rules::rule_info(rule);
        let why = if info.text.is_empty() { String::new() } else { format!(": {}", info.text) };
        s.push_str(&format!("\n      {n} {rule} finding(s){why}"));
        if rule == "pattern-depth" {
            s.push_str(" (expected here: the demo has no source checkout to cite file:line from)");
        }
    }
    if c.unchecked > 0 {
        s.push_str(&format!("\n      {} claim(s) not checked (offline, no checkout)", c.unchecked));
    }
    s
}

/// The commands to run next, printed so they work as printed: `invocation` is how this
/// program was started (`cargo run --`, `citriage`, or its path).
pub fn next_steps(invocation: &str, world_db: &Path) -> Vec<String> {
    let db = world_db.display();
    vec![
        "Next:".to_string(),
        format!("  {invocation} serve --db {db}      # the dashboard on http://127.0.0.1:8080"),
        format!("  {invocation} reports --db {db}    # the stored reports, payload analyses and checks"),
        format!("  {invocation} metrics --db {db}    # corrected pass rates and flake signals per job"),
        format!("  {invocation} cluster --db {db}    # failure patterns of the last 14 days"),
    ]
}
