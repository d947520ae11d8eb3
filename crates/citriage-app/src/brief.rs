//! Agent briefs from the latest triage of a dataset: for each selected cluster the
//! runbook's Phase 3 investigation brief filled with verified facts (jobs with their
//! figures, sampled builds, failure excerpts, each with its evidence id), and a Phase 4
//! cross-check brief of the highest-leverage claims. `brief` writes them to files;
//! the MCP server serves them as resources and as its `investigate` prompt.

use crate::error::Result;
use crate::{builds, files, snapshots, triage};
use citriage_analysis::build_findings::{build_evidence, build_url};
use citriage_analysis::misclass::{entry_evidence, entry_excerpt};
use citriage_model::{Dataset, Evidence};
use citriage_report::{figure, pattern_letter};
use citriage_store::Store;
use citriage_verify::brief::{
    crosscheck_brief, investigation_brief, BriefExcerpt, BriefJob, CheckClaim, ClaimKind, ClusterBrief,
    CrossCheckBrief, SampledBuild,
};

/// The briefs of one triage.
pub struct Written {
    /// The snapshot's date.
    pub date: citriage_model::Day,
    /// (file name, Markdown): `brief-<letter>-<category>.md` per selected cluster, then `crosscheck.md`.
    pub files: Vec<(String, String)>,
    /// The evidence the briefs cite (for the ledger).
    pub ledger: Vec<Evidence>,
}

/// Triages the latest snapshot of `ds` (with the stored builds) and writes its briefs.
pub fn briefs(store: &mut Store, ds: Dataset) -> Result<Written> {
    let latest = snapshots::latest(store, ds, "")?;
    let loaded = snapshots::load_with_history(store, latest.id)?;
    let settings = triage::Settings::default();
    let builds = builds::for_snapshot(store, &loaded.snapshot, &settings.rules, &settings.config)?;
    let t = triage::run_triage(&loaded, &settings, builds.as_ref(), &[]);
    let snap = citriage_model::Snapshot { meta: t.snapshot.clone(), jobs: Vec::new() };
    let mut ledger = Vec::new();
    let mut briefs = Vec::new();
    let mut claims = Vec::new();
    for (i, p) in t.selection.picks.iter().enumerate() {
        let Some(c) = t.categorized.get(&p.category) else { continue };
        let letter = pattern_letter(i);
        let field = match ds {
            Dataset::Failures => "failing_days",
            Dataset::Flakes => "consistency",
        };
        let jobs: Vec<BriefJob> = c
            .jobs
            .iter()
            .take(25)
            .map(|j| {
                let ev = entry_evidence(&snap, &j.entry.job, &[field], entry_excerpt(&j.entry.stats));
                let id = ev.id.clone();
                ledger.push(ev);
                BriefJob {
                    name: j.entry.job.clone(),
                    figure: figure(&j.entry.stats),
                    severity: j.severity.as_str().to_string(),
                    config: None,
                    alert_email: None,
                    evidence_ids: vec![id],
                }
            })
            .collect();
        // Sampled builds: the newest failing builds of the category's jobs.
        let names: std::collections::BTreeSet<&str> = c.jobs.iter().map(|j| j.entry.job.as_str()).collect();
        let mut sampled: Vec<&citriage_model::build::BuildRecord> = builds
            .iter()
            .flat_map(|tb| tb.builds())
            .filter(|b| names.contains(b.dashboard_job().as_str()) && b.result.as_deref() != Some("SUCCESS"))
            .collect();
        sampled.sort_by(|x, y| y.started.cmp(&x.started).then_with(|| x.path.cmp(&y.path)));
        let sampled: Vec<SampledBuild> = sampled
            .into_iter()
            .take(3)
            .map(|b| {
                let ev = build_evidence(b);
                let id = ev.id.clone();
                ledger.push(ev);
                SampledBuild {
                    job: b.dashboard_job(),
                    build_id: b.build_id.clone(),
                    url: build_url(b),
                    result: b.result.clone().unwrap_or_else(|| "PENDING".into()),
                    started: b
                        .started
                        .map(|s| citriage_model::Day::from_unix_seconds(s).to_string())
                        .unwrap_or_default(),
                    evidence_id: Some(id),
                }
            })
            .collect();
        let mut excerpts = Vec::new();
        if let Some(cp) = t.patterns.iter().find(|cp| cp.category == p.category) {
            for (k, sp) in cp.sub_patterns.iter().take(5).enumerate() {
                if let Some(ev) = sp.evidence.first() {
                    ledger.push(ev.clone());
                    excerpts.push(BriefExcerpt {
                        evidence_id: ev.id.clone(),
                        locator: ev.locator.clone(),
                        text: sp.text.clone(),
                    });
                    claims.push(CheckClaim {
                        id: format!("{letter}.{}-shared-cause", k + 1),
                        pattern: format!("Pattern {letter} — {}", p.category),
                        kind: ClaimKind::SharedCause,
                        text: format!(
                            "{} failure(s) in {} job(s) share one failure signature{}",
                            sp.failures,
                            sp.jobs.len(),
                            sp.signature.as_ref().map(|s| format!(" ({})", s.name)).unwrap_or_default()
                        ),
                        jobs_affected: sp.jobs.len(),
                        tier: Some(3),
                        evidence_ids: sp.evidence.iter().map(|e| e.id.clone()).collect(),
                        sources: sp.evidence.iter().map(|e| e.locator.clone()).collect(),
                    });
                }
            }
        }
        let top: Vec<&str> = c.jobs.iter().take(WINDOWED_JOBS).map(|j| j.entry.job.as_str()).collect();
        let windows = job_windows(store, &top)?;
        briefs.push((
            format!("brief-{letter}-{}.md", p.category.replace('/', "-")),
            investigation_brief(&ClusterBrief {
                id: letter.clone(),
                name: p.category.clone(),
                dataset: ds.as_str().to_string(),
                snapshot_date: t.snapshot.date.to_string(),
                jobs,
                builds: sampled,
                excerpts,
                refs: Vec::new(),
                checkouts: Vec::new(),
                prior_report: None,
                why_selected: p.reasons.join("; "),
                windows,
            }),
        ));
    }
    for f in &t.misclassifications {
        claims.push(CheckClaim {
            id: format!("not-real-{}", claims.len() + 1),
            pattern: f.kind.title().to_string(),
            kind: ClaimKind::NotReal,
            text: format!("{}: {}", f.subject, f.reality),
            jobs_affected: f.jobs.len(),
            tier: Some(4),
            evidence_ids: f.evidence.iter().map(|e| e.id.clone()).collect(),
            sources: f.evidence.iter().map(|e| e.locator.clone()).collect(),
        });
        ledger.extend(f.evidence.iter().cloned());
    }
    let cross = crosscheck_brief(&CrossCheckBrief {
        dataset: ds.as_str().to_string(),
        snapshot_date: t.snapshot.date.to_string(),
        clusters: briefs.len(),
        claims,
        top_n: 8,
        prior_report: None,
    });
    let mut files = briefs;
    files.push(("crosscheck.md".to_string(), cross));
    Ok(Written { date: t.snapshot.date, files, ledger })
}

/// The jobs of a brief whose regression windows are given (most severe first).
const WINDOWED_JOBS: usize = 3;

/// Each job's window and its best commits, one line each (`suspects` on the job; its
/// dashboard name without the `pr:` prefix). A job without a window says nothing.
/// Each job's builds are read alone: a job target's answer needs no other job's.
fn job_windows(store: &mut Store, jobs: &[&str]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for job in jobs {
        let name = job.strip_prefix("pr:").unwrap_or(job);
        let index = store.job_build_index(name)?;
        if index.is_empty() {
            continue;
        }
        let opts = crate::suspects::SuspectsOptions { target: name.to_string(), ..Default::default() };
        let s = crate::suspects::suspects_in(store, &index, &opts, &crate::progress::Silent)?;
        if s.jobs.is_empty() {
            continue;
        }
        out.push(format!("{name}: {}", s.verdict));
        for w in &s.windows {
            out.push(format!("{name}: {}", crate::suspects::window_line(w)));
        }
        for c in s.top().into_iter().take(3) {
            out.push(format!(
                "{name}: rank {}{} {} {} ({})",
                c.rank,
                if c.tied { "=" } else { "" },
                citriage_analysis::windows::short(&c.sha),
                c.subject,
                c.band.as_str()
            ));
        }
    }
    Ok(out)
}

/// `brief`: the briefs of the latest triage of `ds` written to `out` (their evidence
/// recorded in the ledger); returns them with the paths written.
pub fn write_briefs(store: &mut Store, ds: Dataset, out: &std::path::Path) -> Result<(Written, Vec<String>)> {
    let w = briefs(store, ds)?;
    store.record_evidence(&w.ledger, &crate::clock::now_rfc3339())?;
    files::create_dir(out)?;
    let mut written = Vec::new();
    for (name, text) in &w.files {
        let p = out.join(name);
        files::write_plain(&p, text)?;
        written.push(p.display().to_string());
    }
    Ok((w, written))
}
