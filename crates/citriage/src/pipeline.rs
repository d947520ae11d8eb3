//! Runs the snapshot pipeline for the commands: read a snapshot from a path or URL,
//! validate it, store it, load the prior one, triage, and write the artifacts (and
//! record the report in the store's documents).
//! Errors say whether the input was at fault (exit code 2) or something else (1).
//! The triage summary `triage` and `demo` print is here too.

use crate::context::{print_json, Context, Failure, Format};
use crate::outln;
use citriage_analysis::{triage, AnalysisConfig, RuleSet, Triage, TriageInput};
use citriage_formats::parse_snapshot;
use citriage_model::evidence::sha256_hex;
use citriage_model::{Dataset, Day, Snapshot, SnapshotMeta};
use citriage_report::{render_all, Artifact};
use citriage_sources::HttpOptions;
use citriage_store::{ImportOutcome, Store};
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;

/// Today's date (UTC) from the wall clock; used only when a snapshot's date is not
/// given and cannot be read from its name.
pub fn today() -> Day {
    Day::from_unix_seconds(citriage_sources::http::unix_now())
}

/// The wall-clock time as RFC 3339 (UTC), recorded as a store row's import time.
pub fn now_rfc3339() -> String {
    citriage_model::time::rfc3339(citriage_sources::http::unix_now())
}

/// Reads and validates a snapshot from bytes already in hand.
pub fn snapshot_from_bytes(
    bytes: &[u8],
    location: &str,
    dataset: Option<Dataset>,
    date: Option<Day>,
) -> Result<(Snapshot, Vec<String>), Failure> {
    let parsed = parse_snapshot(bytes, location, dataset).map_err(|e| Failure::input(e.to_string()))?;
    let name = location.rsplit('/').next().unwrap_or(location);
    let date = date.or_else(|| Day::find_in(name)).unwrap_or_else(today);
    let meta = SnapshotMeta { dataset: parsed.dataset, date, source: location.to_string(), sha256: sha256_hex(bytes) };
    Ok((Snapshot::new(meta, parsed.jobs), parsed.warnings))
}

/// Reads and validates a snapshot from a path or URL.
pub fn read_snapshot(
    location: &str,
    dataset: Option<Dataset>,
    date: Option<Day>,
    http: &HttpOptions,
) -> Result<(Snapshot, Vec<String>), Failure> {
    let fetched = citriage_sources::read(location, http)?;
    snapshot_from_bytes(&fetched.bytes, location, dataset, date)
}

/// Imports a snapshot into the store.
pub fn import(store: &mut Store, snap: &Snapshot) -> Result<ImportOutcome, Failure> {
    Ok(store.import_snapshot(snap, &now_rfc3339())?)
}

/// Loads the rules (built-in or a file).
pub fn load_rules(path: Option<&Path>) -> Result<RuleSet, Failure> {
    match path {
        None => Ok(RuleSet::builtin()),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::input(format!("{}: cannot read rules: {e}", p.display())))?;
            RuleSet::from_toml(&text, &p.display().to_string()).map_err(|e| Failure::input(e.to_string()))
        }
    }
}

/// Loads the analysis config (defaults or a file).
pub fn load_config(path: Option<&Path>) -> Result<AnalysisConfig, Failure> {
    match path {
        None => Ok(AnalysisConfig::default()),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::input(format!("{}: cannot read config: {e}", p.display())))?;
            AnalysisConfig::from_toml(&text).map_err(|e| Failure::input(format!("{}: {e}", p.display())))
        }
    }
}

/// What to triage: the stored snapshot of interest and its prior.
pub struct Loaded {
    pub snapshot: Snapshot,
    pub prior: Option<Snapshot>,
    pub older: Vec<(Day, BTreeSet<String>)>,
}

/// Loads a stored snapshot with its prior and older job sets from the store.
pub fn load_with_history(store: &Store, id: i64) -> Result<Loaded, Failure> {
    let snapshot = store.load_snapshot(id)?;
    let all = store.list_snapshots(Some(snapshot.meta.dataset))?;
    let before: Vec<_> = all.into_iter().filter(|s| s.date < snapshot.meta.date).collect();
    // One snapshot per day: the last imported for that date.
    let mut per_day: Vec<citriage_store::StoredSnapshot> = Vec::new();
    for s in before {
        if per_day.last().is_some_and(|l| l.date == s.date) {
            per_day.pop();
        }
        per_day.push(s);
    }
    let prior = match per_day.last() {
        Some(p) => Some(store.load_snapshot(p.id)?),
        None => None,
    };
    let mut older = Vec::new();
    for s in per_day.iter().rev().skip(1) {
        older.push((s.date, store.snapshot_job_names(s.id)?));
    }
    Ok(Loaded { snapshot, prior, older })
}

/// Runs the triage on loaded snapshots.
pub fn run_triage(
    loaded: &Loaded,
    rules: &RuleSet,
    config: &AnalysisConfig,
    builds: Option<&[citriage_model::build::BuildRecord]>,
    links: &[citriage_analysis::links::PrLink],
) -> Triage {
    triage(&TriageInput {
        snapshot: &loaded.snapshot,
        prior: loaded.prior.as_ref(),
        older: &loaded.older,
        rules,
        config,
        builds,
        links,
    })
}

/// Writes the artifacts of a triage to a folder; returns their paths.
pub fn write_artifacts(t: &Triage, out: &Path) -> Result<Vec<String>, Failure> {
    write_rendered(&render_all(t), out)
}

/// Writes the artifacts of a triage to a folder and records its report (`report.md`
/// and `report.json`, the same bytes) in the store's documents; returns the paths.
/// The report gains the pattern drift of the store's latest clustering run, when there is one.
pub fn write_and_record(store: &mut Store, t: &Triage, out: &Path) -> Result<Vec<String>, Failure> {
    let mut with_drift;
    let t = if t.pattern_drift.is_none() && t.jobs_with_builds > 0 {
        with_drift = t.clone();
        with_drift.pattern_drift = crate::clustering::drift_report(store, t.snapshot.date)?;
        // the evidence it cites goes to the ledger like the rest of the report's
        if let Some(pd) = &with_drift.pattern_drift {
            let ev: Vec<citriage_model::Evidence> = pd.patterns.iter().filter_map(|p| p.evidence.clone()).collect();
            store.record_evidence(&ev, &now_rfc3339())?;
        }
        &with_drift
    } else {
        t
    };
    let mut arts = render_all(t);
    // report.html beside report.md: the same content, self-contained, the dashboard's look.
    if let Some(md) = arts.iter().find(|a| a.name == "report.md") {
        let title = format!("{} triage {}", t.snapshot.dataset, t.snapshot.date);
        let html = citriage_web::standalone_page(&title, &md.contents);
        let at = arts.iter().position(|a| a.name == "report.json").map(|i| i + 1).unwrap_or(arts.len());
        arts.insert(at, Artifact { name: "report.html".to_string(), contents: html });
    }
    let written = write_rendered(&arts, out)?;
    let body = |name: &str| {
        arts.iter()
            .find(|a| a.name == name)
            .map(|a| a.contents.as_str())
            .ok_or_else(|| Failure::other(format!("the report renderer produced no {name}")))
    };
    crate::documents::record_triage(store, t, body("report.md")?, body("report.json")?)?;
    Ok(written)
}

fn write_rendered(arts: &[Artifact], out: &Path) -> Result<Vec<String>, Failure> {
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::other(format!("{}: cannot create the output folder: {e}", out.display())))?;
    let mut written = Vec::new();
    for a in arts {
        let p = out.join(&a.name);
        // Write to a temporary name and rename, so a crash never leaves half a file.
        let tmp = out.join(format!(".{}.tmp", a.name));
        std::fs::write(&tmp, a.contents.as_bytes())
            .map_err(|e| Failure::other(format!("{}: cannot write: {e}", tmp.display())))?;
        std::fs::rename(&tmp, &p).map_err(|e| Failure::other(format!("{}: cannot write: {e}", p.display())))?;
        written.push(p.display().to_string());
    }
    Ok(written)
}

/// Records the evidence a triage report cites in the store's ledger; returns how many
/// items were new.
pub fn record_report_evidence(store: &mut Store, t: &Triage) -> Result<usize, Failure> {
    let (_, evidence) = citriage_report::render_markdown(t);
    Ok(store.record_evidence(&evidence, &now_rfc3339())?)
}

/// Prints the summary of a triage and the files written (text or JSON).
pub fn print_summary(ctx: &Context, t: &citriage_analysis::Triage, files: &[String]) {
    if ctx.format == Format::Json {
        print_json(&json!({
            "dataset": t.snapshot.dataset,
            "date": t.snapshot.date,
            "source": t.snapshot.source,
            "jobs": t.job_count,
            "categories": t.categorized.categories.len(),
            "selected": t.selection.picks,
            "misclassifications": t.misclassifications.iter().map(|f| json!({"kind": f.kind, "subject": f.subject, "jobs": f.jobs.len()})).collect::<Vec<_>>(),
            "drift": t.drift.as_ref().map(|d| json!({"prior": d.prior_date, "added": d.added.len(), "removed": d.removed.len(), "reappeared": d.reappeared.len(), "integrity_violations": d.integrity.as_ref().map(|i| i.violations.len())})),
            "files": files,
        }));
        return;
    }
    outln!(
        "{} snapshot of {}: {} jobs in {} categories",
        t.snapshot.dataset.title(),
        t.snapshot.date,
        t.job_count,
        t.categorized.categories.len()
    );
    outln!("Selected {} clusters:", t.selection.picks.len());
    for (i, p) in t.selection.picks.iter().enumerate() {
        outln!(
            "  {:>2}. {:<28} {:>5} jobs  score {:>6.3}  {}",
            i + 1,
            p.category,
            p.count,
            p.score,
            p.reasons.first().map(String::as_str).unwrap_or("")
        );
    }
    outln!("Misclassifications: {}", t.misclassifications.len());
    for f in &t.misclassifications {
        outln!("  - {}: {} ({} jobs)", f.kind.title(), f.subject, f.jobs.len());
    }
    match &t.drift {
        Some(d) => outln!(
            "Drift since {}: {} added, {} removed, {} reappeared{}",
            d.prior_date,
            d.added.len(),
            d.removed.len(),
            d.reappeared.len(),
            d.integrity
                .as_ref()
                .map(|i| format!(", {} integrity violation(s)", i.violations.len()))
                .unwrap_or_default()
        ),
        None => outln!("Drift: no prior snapshot"),
    }
    outln!("Wrote:");
    for f in files {
        outln!("  {f}");
    }
}
