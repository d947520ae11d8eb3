//! `citriage cluster`: cluster the stored builds' failure texts and write
//! failure_data.json (go.k8s.io/triage's format) and clusters.json.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::cluster::{self, ClusterFiles, ClusterOptions, ClusterOutcome, ClusterReport};
use citriage_model::Day;
use citriage_patterns::drift::PatternDrift;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

/// Cluster the stored builds' failure texts (go.k8s.io/triage-compatible ids, stable
/// citriage ids carried in the store, known signatures, sub-patterns by template, job
/// family and signature); writes failure_data.json, clusters.json and pattern_drift.json
/// (patterns new, growing, shrinking or gone between two dates).
#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// Days of failures before --as-of.
    #[arg(long, default_value_t = 14)]
    pub window: i64,
    /// End of the window: a date (its end, UTC) or Unix seconds. Default: the newest build's day.
    #[arg(long, value_name = "DATE|SECONDS")]
    pub as_of: Option<String>,
    /// Normalization: `default` (citriage) or `k8s-triage` (go.k8s.io/triage exactly).
    #[arg(long, default_value = "default")]
    pub profile: String,
    /// Extra known signatures (TOML) merged over the built-in catalogue.
    /// Default: the built-in catalogue.
    #[arg(long, value_name = "FILE")]
    pub signatures: Option<PathBuf>,
    /// Owners by test-name prefix for tests without a `[sig-x]` tag:
    /// JSON `{"sig-node": ["Kubelet", "NodeProblemDetector"], ...}`.
    /// Default: the built-in owners.
    #[arg(long, value_name = "FILE")]
    pub owners: Option<PathBuf>,
    /// Only these jobs (dashboard naming). Repeatable.
    #[arg(long = "job", value_name = "JOB")]
    pub jobs: Vec<String>,
    /// Output folder.
    #[arg(long, default_value = "clusters")]
    pub out: PathBuf,
    /// Clusters listed on stdout.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Pattern drift from this date (the end of its window, YYYY-MM-DD). Default: 7 days
    /// before --drift-to.
    #[arg(long, value_name = "DATE")]
    pub drift_from: Option<String>,
    /// Pattern drift to this date (the end of its window, YYYY-MM-DD). Default: the as-of day.
    #[arg(long, value_name = "DATE")]
    pub drift_to: Option<String>,
    /// Days in each pattern-drift window.
    #[arg(long, default_value_t = 7)]
    pub drift_span: i64,
}

/// Runs `citriage cluster`.
pub fn exec(ctx: &Context, a: &ClusterArgs) -> Result<(), Failure> {
    let opts = ClusterOptions {
        profile: cluster::parse_profile(&a.profile)?,
        window_days: a.window,
        as_of: a.as_of.clone(),
        jobs: a.jobs.clone(),
        catalogue: cluster::catalogue(a.signatures.as_deref())?,
        owners: cluster::owners(a.owners.as_deref())?,
    };
    let mut store = ctx.open_existing_store()?;
    let files = ClusterFiles {
        out: a.out.clone(),
        drift_from: a.drift_from.clone(),
        drift_to: a.drift_to.clone(),
        drift_span: a.drift_span,
    };
    let pb = ctx.spinner("loading failures");
    let report = cluster::cluster_to_files(&mut store, &opts, &files, &pb)?;
    pb.clear();
    let ClusterReport { outcome, drift, drift_config: dcfg, from_day, to_day, drift_json, files: [f1, f2, f3] } =
        report;
    let ClusterOutcome { as_of, failures, builds, clustering, rich, .. } = outcome;
    let prof = opts.profile.name();
    let catalogue = &opts.catalogue;
    let acc = &clustering.accounting;
    if ctx.json() {
        print_json(&json!({
            "as_of": as_of, "window_days": a.window, "profile": prof, "failures": acc.input,
            "clusters": clustering.clusters.len(), "accounting": acc,
            "files": [f1.display().to_string(), f2.display().to_string(), f3.display().to_string()],
            "pattern_drift": drift_json,
        }));
        return Ok(());
    }
    outln!(
        "{} failures from {} builds in {} days → {} clusters ({} profile); every failure in exactly one cluster: {}",
        acc.input,
        builds.len(),
        a.window,
        clustering.clusters.len(),
        prof,
        acc.is_complete()
    );
    outln!("{:<14} {:<21} {:>7} {:>5} {:>5}  signature / text", "stable id", "k8s id", "fails", "jobs", "tests");
    for (rc, c) in rich.clusters.iter().zip(&clustering.clusters).take(a.top) {
        let jobs: std::collections::BTreeSet<&str> =
            c.members.iter().map(|&m| builds[failures[m as usize].build as usize].job.as_str()).collect();
        let sig = catalogue.match_text(&c.text).into_iter().next().map(|m| format!("[{}] ", m.id)).unwrap_or_default();
        let first: String = c.text.lines().next().unwrap_or("").chars().take(80).collect();
        outln!(
            "{:<14} {:<21} {:>7} {:>5} {:>5}  {sig}{first}",
            rc.stable_id.clone().unwrap_or_default(),
            c.k8s_id,
            c.members.len(),
            jobs.len(),
            c.tests.len()
        );
        let subs: Vec<String> = rc
            .sub_patterns
            .iter()
            .filter(|s| s.kind == citriage_patterns::hierarchy::SubKind::JobFamily)
            .take(3)
            .map(|s| format!("{} ({})", citriage_model::escape::one_line(&s.label), s.members.len()))
            .collect();
        if !subs.is_empty() {
            outln!("{:<14} job families: {}", "", subs.join(", "));
        }
    }
    if clustering.clusters.len() > a.top {
        outln!(
            "showing {} of {} clusters (--top N shows more; all are in {})",
            a.top,
            clustering.clusters.len(),
            f2.display()
        );
    }
    let moving: Vec<&PatternDrift> =
        drift.iter().filter(|d| d.kind != citriage_patterns::drift::DriftKind::Steady).collect();
    outln!(
        "\nPattern drift {} → {} ({}-day windows): {} new, {} growing, {} shrinking, {} gone",
        Day(from_day),
        Day(to_day),
        dcfg.span,
        moving.iter().filter(|d| d.kind == citriage_patterns::drift::DriftKind::New).count(),
        moving.iter().filter(|d| d.kind == citriage_patterns::drift::DriftKind::Growing).count(),
        moving.iter().filter(|d| d.kind == citriage_patterns::drift::DriftKind::Shrinking).count(),
        moving.iter().filter(|d| d.kind == citriage_patterns::drift::DriftKind::Gone).count(),
    );
    for d in moving.iter().take(a.top) {
        let text = rich
            .clusters
            .iter()
            .find(|c| c.stable_id.as_deref() == Some(d.id.as_str()))
            .map(|c| c.text.lines().next().unwrap_or("").chars().take(70).collect::<String>())
            .unwrap_or_default();
        let days: Vec<String> = d.per_day.iter().map(|(_, n)| n.to_string()).collect();
        outln!("{:<10} {:<14} {:>5} → {:<5} [{}]  {text}", d.kind.name(), d.id, d.before, d.after, days.join(" "));
    }
    if moving.len() > a.top {
        outln!(
            "showing {} of {} moving patterns (--top N shows more; all are in {})",
            a.top,
            moving.len(),
            f3.display()
        );
    }
    outln!("Wrote {}, {} and {}", f1.display(), f2.display(), f3.display());
    Ok(())
}
