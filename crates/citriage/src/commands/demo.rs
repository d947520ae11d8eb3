//! `citriage demo`: the whole triage offline, on the bundled example dashboards and a
//! synthetic world (builds ingested, payload stream analysed, failures clustered,
//! reports verified), everything recorded in two stores.

use crate::context::{print_json, Context, Failure};
use crate::example_data::BUNDLED;
use crate::outln;
use crate::pipeline;
use citriage_model::Dataset;
use citriage_store::Store;
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
    std::fs::create_dir_all(&a.out).map_err(|e| Failure::other(format!("{}: cannot create: {e}", a.out.display())))?;
    let db = ctx.db.clone().unwrap_or_else(|| a.out.join("citriage.db"));
    let mut store = Store::open(&db)?;
    let pb = ctx.spinner("importing the bundled snapshots");
    let mut latest = std::collections::BTreeMap::new();
    for (name, text) in BUNDLED {
        let loc = format!("examples/k8s/{name}");
        let (s, _) = pipeline::snapshot_from_bytes(text.as_bytes(), &loc, None, None)?;
        let r = pipeline::import(&mut store, &s)?;
        latest.insert(r.snapshot.dataset, r.snapshot.id);
    }
    let rules = pipeline::load_rules(None)?;
    let config = pipeline::load_config(None)?;
    let mut all_files = Vec::new();
    let mut triages = Vec::new();
    for (ds, id) in latest {
        pb.set_message(format!("triaging {ds}"));
        let loaded = pipeline::load_with_history(&store, id)?;
        let t = pipeline::run_triage(&loaded, &rules, &config, None, &[]);
        let files = pipeline::write_and_record(&mut store, &t, &a.out.join(ds.as_str()))?;
        pipeline::record_report_evidence(&mut store, &t)?;
        all_files.extend(files.clone());
        triages.push((t, files));
    }
    let bundled = triages.len();
    // The synthetic world: a Prow mirror with builds and JUnit, ingested for real.
    pb.set_message("generating the synthetic world (tiny preset)");
    let world = a.out.join("world");
    if !world.join("truth.json").exists() {
        let _ = std::fs::remove_dir_all(&world);
        let params = citriage_synth::SynthParams::preset("tiny").ok_or_else(|| Failure::other("no tiny preset"))?;
        citriage_synth::generate(&params, &world, &mut |_| {}).map_err(|e| Failure::other(e.to_string()))?;
    }
    let world_db = a.out.join("world.db");
    let mut wstore = Store::open(&world_db)?;
    pb.set_message("ingesting the world's builds");
    let src = citriage_sources::artifacts::LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = citriage_ingest::discover_jobs(&src).map_err(|e| Failure::other(e.to_string()))?;
    let ingest = citriage_ingest::ingest_jobs(&src, &mut wstore, &jobs, &Default::default(), &|_| {})
        .map_err(|e| Failure::other(e.to_string()))?;
    let mut wlatest = std::collections::BTreeMap::new();
    for ds in [Dataset::Failures, Dataset::Flakes] {
        let dir = world.join("k8s-metrics").join(ds.as_str());
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| Failure::other(format!("{}: {e}", dir.display())))?
            .flatten()
            .map(|e| e.path())
            .collect();
        names.sort();
        for p in names {
            let bytes = std::fs::read(&p).map_err(|e| Failure::other(format!("{}: {e}", p.display())))?;
            let loc =
                format!("world/k8s-metrics/{}/{}", ds.as_str(), p.file_name().unwrap_or_default().to_string_lossy());
            let (snap, _) = pipeline::snapshot_from_bytes(&bytes, &loc, Some(ds), None)?;
            let r = pipeline::import(&mut wstore, &snap)?;
            wlatest.insert(ds, r.snapshot.id);
        }
    }
    let builds = crate::builds::load_builds(&mut wstore)?;
    for (ds, id) in wlatest {
        pb.set_message(format!("triaging the world's {ds}"));
        let loaded = pipeline::load_with_history(&wstore, id)?;
        let t = pipeline::run_triage(&loaded, &rules, &config, Some(&builds), &[]);
        let files = pipeline::write_and_record(&mut wstore, &t, &a.out.join(format!("world-{ds}")))?;
        pipeline::record_report_evidence(&mut wstore, &t)?;
        triages.push((t, files));
    }
    // The world's payload stream, analysed as `payload TAG --from WORLD` would, so the
    // dashboard over the world store has payloads to show.
    pb.set_message("analysing the world's payloads");
    let payloads = crate::payloads::analyze_world_payloads(&world)?;
    for p in &payloads {
        crate::documents::record_payload(&mut wstore, p)?;
    }
    // The world's failures clustered with both profiles, so the dashboard over the world
    // store has patterns to show.
    pb.set_message("clustering the world's failures");
    let mut clustered = Vec::new();
    for profile in citriage_patterns::normalize::Profile::ALL {
        let c = crate::clustering::cluster_store(
            &mut wstore,
            profile,
            14,
            None,
            &[],
            &citriage_patterns::signatures::Catalogue::builtin(),
            &Default::default(),
            &pb,
        )?;
        clustered.push((profile.name(), c.rows.len(), c.clustering.clusters.len()));
    }
    // Each report verified as stored, the result recorded beside it. Findings are
    // reported below; they do not fail the demo.
    pb.set_message("verifying the reports");
    let mut checks = Vec::new();
    for (t, _) in &triages[..bundled] {
        let (s, c) = verify_demo_report(store, t, &db)?;
        store = s;
        checks.push(c);
    }
    for (t, _) in &triages[bundled..] {
        let (s, c) = verify_demo_report(wstore, t, &world_db)?;
        wstore = s;
        checks.push(c);
    }
    drop((store, wstore));
    pb.finish_and_clear();
    if ctx.json() {
        print_json(&json!({
            "store": db.display().to_string(),
            "world_store": world_db.display().to_string(),
            "world_builds": ingest.builds_found,
            "reports": triages.iter().map(|(t, f)| json!({"dataset": t.snapshot.dataset, "date": t.snapshot.date, "jobs": t.job_count, "jobs_with_builds": t.jobs_with_builds, "selected": t.selection.picks.len(), "misclassifications": t.misclassifications.len(), "files": f})).collect::<Vec<_>>(),
            "payloads": payloads.iter().map(|p| json!({"tag": p.payload.tag, "phase": p.payload.phase.as_str(), "verdict": p.decision.verdict.as_str()})).collect::<Vec<_>>(),
            "clusters": clustered.iter().map(|(p, f, c)| json!({"profile": p, "failures": f, "clusters": c})).collect::<Vec<_>>(),
            "verifications": checks.iter().map(|c| json!({"store": c.store, "key": c.key, "verdict": c.verdict, "findings": c.findings, "unchecked": c.unchecked})).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    for (t, files) in &triages {
        pipeline::print_summary(ctx, t, files);
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
        outln!("  {}", c.describe());
    }
    outln!();
    outln!(
        "The demo succeeded: {} reports written and checked, {} builds ingested, {} payloads analysed.",
        triages.len(),
        builds.len(),
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
struct DemoCheck {
    store: String,
    key: String,
    verdict: &'static str,
    /// Findings per rule id.
    findings: std::collections::BTreeMap<String, usize>,
    unchecked: usize,
}

impl DemoCheck {
    fn describe(&self) -> String {
        let verdict = match self.verdict {
            "pass" => "passes: every claim checked holds",
            "incomplete" => "passes what could be checked; some claims need GitHub or a checkout",
            _ => "needs work",
        };
        let mut s = format!("{} in {}: {verdict} (verifier verdict: {})", self.key, self.store, self.verdict);
        for (rule, n) in &self.findings {
            let info = citriage_verify::rules::rule_info(rule);
            let why = if info.text.is_empty() { String::new() } else { format!(": {}", info.text) };
            s.push_str(&format!("\n      {n} {rule} finding(s){why}"));
            if rule == "pattern-depth" {
                s.push_str(" (expected here: the demo has no source checkout to cite file:line from)");
            }
        }
        if self.unchecked > 0 {
            s.push_str(&format!("\n      {} claim(s) not checked (offline, no checkout)", self.unchecked));
        }
        s
    }
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

/// Verifies a demo report as stored (offline, no checkouts) and records the result.
fn verify_demo_report(store: Store, t: &citriage_analysis::Triage, db: &Path) -> Result<(Store, DemoCheck), Failure> {
    let key = crate::documents::triage_key(t);
    let header = store
        .documents(Some("triage"))?
        .into_iter()
        .find(|h| h.key == key && h.media_type == crate::documents::MARKDOWN)
        .ok_or_else(|| Failure::other(format!("the report triage/{key} was not recorded in {}", store.path())))?;
    let text = store
        .document("triage", &key, crate::documents::MARKDOWN)?
        .map(|d| d.body)
        .ok_or_else(|| Failure::other(format!("the report triage/{key} was not recorded in {}", store.path())))?;
    let name = format!("triage/{key}");
    let verified = crate::documents::Verified { document: Some(&header), file_name: &name, text: &text };
    let setup = crate::verification::VerifySetup::offline();
    let (store, c) = crate::verification::check_report(store, &text, &name, &verified, &setup, true)?;
    let mut findings = std::collections::BTreeMap::new();
    for f in &c.verification.findings {
        *findings.entry(f.rule_id.clone()).or_insert(0) += 1;
    }
    let check = DemoCheck {
        store: db.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| db.display().to_string()),
        key: c.recorded.unwrap_or(name),
        verdict: c.verification.verdict(),
        findings,
        unchecked: c.verification.unchecked.len(),
    };
    Ok((store, check))
}
