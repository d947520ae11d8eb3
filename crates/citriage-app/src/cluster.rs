//! Clustering the stored builds' failure texts (`cluster`, `demo`, and `watch` after
//! new builds): go.k8s.io/triage-compatible ids, stable citriage ids carried through
//! the store, known signatures, and the run recorded in the store (clusters,
//! membership, daily counts, sub-patterns) for the dashboard; pattern drift between
//! two dates for `cluster` and the triage report; and `cluster`'s files
//! (`failure_data.json`, `clusters.json`, `pattern_drift.json`).

use crate::builds;
use crate::error::{Error, Result};
use crate::files;
use crate::progress::Progress;
use citriage_model::time::DAY;
use citriage_model::Day;
use citriage_patterns::cluster::{cluster_with_texts, ClusterConfig, Clustering, FailureRef};
use citriage_patterns::drift::{pattern_drift, DriftConfig, DriftKind, PatternDrift};
use citriage_patterns::export::{
    attach_sub_patterns, failure_data, rich_export, BuildRecord as ExportBuild, ExportOptions, RichExport,
};
use citriage_patterns::normalize::Profile;
use citriage_patterns::signatures::Catalogue;
use citriage_patterns::stable::{CurrentCluster, PreviousCluster, StableAssignment, StableIdAssigner};
use citriage_store::{ClusterDay, ClusterRun, MemberAt, Store, StoredCluster, StoredSubPattern, WindowFailure};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What is clustered, and how.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    pub profile: Profile,
    /// Days of failures before the as-of.
    pub window_days: i64,
    /// The window's end (`--as-of`: a date or Unix seconds); default: the newest build's day.
    pub as_of: Option<String>,
    /// Only these jobs (dashboard naming); all when empty.
    pub jobs: Vec<String>,
    pub catalogue: Catalogue,
    /// Owners by test-name prefix for tests without a `[sig-x]` tag.
    pub owners: BTreeMap<String, Vec<String>>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            profile: Profile::Default,
            window_days: 14,
            as_of: None,
            jobs: Vec::new(),
            catalogue: Catalogue::builtin(),
            owners: BTreeMap::new(),
        }
    }
}

/// What a clustering run computed (and recorded in the store).
pub struct ClusterOutcome {
    pub as_of: i64,
    pub profile: Profile,
    /// The window's failures, in input order (by build, then position), without their
    /// texts (empty: let go once clustered; each cluster carries its text).
    pub failures: Vec<WindowFailure>,
    /// The window's builds, as `failures` index them.
    pub builds: Vec<ExportBuild>,
    pub clustering: Clustering,
    pub rich: RichExport,
    /// Failures per cluster, day, job and test (as recorded).
    pub daily: Vec<ClusterDay>,
}

impl ClusterOutcome {
    /// The failures as clustered (test by the profile, job, build path; the text empty).
    pub fn refs(&self) -> Vec<FailureRef<'_>> {
        failure_refs(&self.failures, &self.builds, self.profile)
    }
}

/// The window's failures as read from the store.
struct Window {
    /// By build, then position.
    failures: Vec<WindowFailure>,
    builds: Vec<ExportBuild>,
    /// The store's row id of each entry of `builds`.
    build_ids: Vec<i64>,
}

/// Each failure as the clustering takes it: the test under the profile's name, the text,
/// and its build's job and path.
fn failure_refs<'a>(failures: &'a [WindowFailure], builds: &'a [ExportBuild], profile: Profile) -> Vec<FailureRef<'a>> {
    failures
        .iter()
        .map(|f| {
            let b = &builds[f.build as usize];
            FailureRef { test: test_of(f, profile), text: &f.text, job: &b.job, build: &b.path }
        })
        .collect()
}

/// A failure's test under the profile's name: kettle's for k8s-triage where known.
fn test_of(f: &WindowFailure, profile: Profile) -> &str {
    match (profile, &f.kettle_name) {
        (Profile::K8sTriage, Some(k)) => k,
        _ => &f.name,
    }
}

/// Clusters the stored failures of builds started in the window ending at the as-of
/// (default: the newest build's day), carries stable ids through the store and
/// records the run (clusters, membership, daily counts, sub-patterns).
pub fn cluster_store(store: &mut Store, opts: &ClusterOptions, progress: &dyn Progress) -> Result<ClusterOutcome> {
    let as_of = builds::store_as_of(store, opts.as_of.as_deref())?;
    let since = as_of - opts.window_days.max(1) * DAY;
    let w = read_window(store, opts, since, as_of)?;
    // What the store cached for the read goes back before the clustering's peak.
    store.release_read_caches()?;
    progress.doing(&format!("clustering {} failures", w.failures.len()));
    let refs = failure_refs(&w.failures, &w.builds, opts.profile);
    let (clustering, normalized) = cluster_with_texts(&refs, &ClusterConfig::new(opts.profile));
    // The sub-patterns' templates are mined from default-profile texts: only that
    // profile's normalized texts are kept for them.
    let normalized = Some(normalized).filter(|n| n.profile == Profile::Default);
    let prof = opts.profile.name();
    let stable = stable_ids(store, prof, &clustering, &w)?;
    let mut rich = rich_export(&clustering, &refs, Some(&stable), Some(&opts.catalogue), &opts.owners);
    progress.doing("sub-patterns");
    let started: Vec<i64> = w.failures.iter().map(|f| w.builds[f.build as usize].started).collect();
    attach_sub_patterns(&mut rich, &clustering, &refs, &started, Some(&opts.catalogue), normalized.as_ref());
    drop((refs, normalized, started));
    // The failures' texts are let go once clustered: the clusters carry their texts, and
    // what follows (membership, daily counts, exports) reads each failure's build,
    // position and test only. The texts are the largest part of the window held.
    let mut w = w;
    let none: Arc<str> = Arc::from("");
    for f in &mut w.failures {
        f.text = none.clone();
    }
    progress.doing("recording clusters");
    let (stored, members, daily) = cluster_rows(&clustering, &rich, &stable, &w, opts.profile, as_of);
    let run = ClusterRun {
        profile: prof.to_string(),
        as_of,
        window_days: opts.window_days.max(1),
        failures: w.failures.len() as u64,
        clusters: stored.len() as u64,
    };
    let members: Vec<MemberAt<'_>> =
        members.iter().map(|&(ci, build, seq)| MemberAt { stable_id: &stable[ci].stable_id, build, seq }).collect();
    store.record_cluster_run_at(&run, &stored, &members, &daily)?;
    drop(members);
    store.record_cluster_subpatterns(prof, &sub_pattern_rows(&rich, &stable))?;
    let Window { failures, builds, .. } = w;
    Ok(ClusterOutcome { as_of, profile: opts.profile, failures, builds, clustering, rich, daily })
}

/// The failures of the builds started in `(since, as_of]`, in the order of every build
/// listing (job, start, build id, path): only the failed results with a text are read.
fn read_window(store: &mut Store, opts: &ClusterOptions, since: i64, as_of: i64) -> Result<Window> {
    let keep = |b: &citriage_model::build::BuildRecord| opts.jobs.is_empty() || opts.jobs.contains(&b.dashboard_job());
    let read = store.window_failures(since, as_of, &keep)?;
    let mut failed = vec![0i64; read.builds.len()];
    for f in &read.failures {
        failed[f.build as usize] += 1;
    }
    let mut build_ids = Vec::with_capacity(read.builds.len());
    let mut builds = Vec::with_capacity(read.builds.len());
    for (b, tests_failed) in read.builds.into_iter().zip(failed) {
        build_ids.push(b.id);
        builds.push(ExportBuild {
            path: format!("gs://{}/{}", b.bucket, b.path),
            job: b.dashboard_job(),
            number: b.build_id.parse().unwrap_or(0),
            started: b.started.unwrap_or(0),
            elapsed: b.duration.unwrap_or(0),
            tests_run: i64::from(b.stored_tests),
            tests_failed,
            result: b.result.as_deref().unwrap_or_default().to_string(),
            executor: b.executor.as_deref().unwrap_or_default().to_string(),
            pr: b.pr.map(|p| p.to_string()).unwrap_or_default(),
        });
    }
    Ok(Window { failures: read.failures, builds, build_ids })
}

/// Stable ids carried through the store: a cluster takes the id most of its failures
/// were first given.
fn stable_ids(store: &Store, prof: &str, clustering: &Clustering, w: &Window) -> Result<Vec<StableAssignment>> {
    let previous: Vec<PreviousCluster> =
        store.clusters(prof)?.into_iter().map(|c| PreviousCluster { stable_id: c.stable_id, key: c.key }).collect();
    // By build row id and position: looked up by binary search.
    let first = store.cluster_first_ids_at(prof)?;
    let first_id = |build: i64, seq: u32| {
        first.binary_search_by(|(b, s, _)| (*b, *s).cmp(&(build, seq))).ok().map(|i| &*first[i].2)
    };
    let votes: Vec<Vec<(String, u64)>> = clustering
        .clusters
        .iter()
        .map(|c| {
            let mut v: BTreeMap<&str, u64> = BTreeMap::new();
            for &m in &c.members {
                let f = &w.failures[m as usize];
                if let Some(id) = first_id(w.build_ids[f.build as usize], f.seq) {
                    *v.entry(id).or_insert(0) += 1;
                }
            }
            v.into_iter().map(|(k, n)| (k.to_string(), n)).collect()
        })
        .collect();
    let current: Vec<CurrentCluster<'_>> =
        clustering.clusters.iter().map(|c| CurrentCluster { key: &c.key, size: c.members.len() }).collect();
    Ok(StableIdAssigner::new(previous).assign_with_votes(&current, &votes))
}

/// The run's sub-patterns with one failure each as evidence.
fn sub_pattern_rows(rich: &RichExport, stable: &[StableAssignment]) -> Vec<StoredSubPattern> {
    rich.clusters
        .iter()
        .zip(stable)
        .flat_map(|(rc, s)| {
            rc.sub_patterns.iter().map(move |sp| StoredSubPattern {
                stable_id: s.stable_id.clone(),
                kind: sp.kind.name().to_string(),
                label: sp.label.clone(),
                failures: sp.members.len() as u64,
                first_seen: sp.first_seen,
                last_seen: sp.last_seen,
                job: sp.evidence.job.clone(),
                build: sp.evidence.build.clone(),
                test: sp.evidence.test.clone(),
                excerpt: sp.evidence.excerpt.clone(),
            })
        })
        .collect()
}

/// What the store keeps of a clustering run: each cluster with its representative
/// text, spans, owner and signatures; each failure's membership (cluster index, build
/// row id, position); and failures per cluster, day, job and test.
fn cluster_rows(
    clustering: &Clustering,
    rich: &RichExport,
    stable: &[StableAssignment],
    w: &Window,
    profile: Profile,
    as_of: i64,
) -> (Vec<StoredCluster>, Vec<Membership>, Vec<ClusterDay>) {
    let mut clusters = Vec::with_capacity(clustering.clusters.len());
    let mut members = Vec::with_capacity(w.failures.len());
    let mut daily = Vec::new();
    for (ci, ((c, rc), s)) in clustering.clusters.iter().zip(&rich.clusters).zip(stable).enumerate() {
        let mut times = Vec::with_capacity(c.members.len());
        let mut jobs = BTreeSet::new();
        let mut per_day: BTreeMap<(i64, &str, &str), u64> = BTreeMap::new();
        for &m in &c.members {
            let f = &w.failures[m as usize];
            let b = &w.builds[f.build as usize];
            times.push(b.started);
            jobs.insert(b.job.as_str());
            *per_day.entry((Day::from_unix_seconds(b.started).0, b.job.as_str(), test_of(f, profile))).or_insert(0) +=
                1;
            members.push((ci, w.build_ids[f.build as usize], f.seq));
        }
        daily.extend(per_day.into_iter().map(|((day, job, test), failures)| ClusterDay {
            stable_id: s.stable_id.clone(),
            day,
            job: job.to_string(),
            test: test.to_string(),
            failures,
        }));
        clusters.push(StoredCluster {
            stable_id: s.stable_id.clone(),
            key: c.key.clone(),
            k8s_id: c.k8s_id.clone(),
            size: c.members.len() as u64,
            first_seen: times.iter().copied().min().unwrap_or(as_of),
            last_seen: times.iter().copied().max().unwrap_or(as_of),
            text: c.text.clone(),
            spans: c.spans.clone(),
            owner: rc.owner.clone(),
            signatures: rc.signatures.iter().map(|m| m.id.clone()).collect(),
            tests: c.tests.len() as u64,
            jobs: jobs.len() as u64,
            run_as_of: as_of,
        });
    }
    (clusters, members, daily)
}

/// A failure's membership: (cluster index, build row id, position).
type Membership = (usize, i64, u32);

/// Pattern drift of a run's clusters from its daily rows.
pub fn cluster_drift(daily: &[ClusterDay], from_day: i64, to_day: i64, cfg: &DriftConfig) -> Vec<PatternDrift> {
    let rows: Vec<(String, i64, u64)> = daily.iter().map(|d| (d.stable_id.clone(), d.day, d.failures)).collect();
    pattern_drift(&rows, from_day, to_day, cfg)
}

/// The triage report's pattern drift: the store's latest clustering run (default profile,
/// else k8s-triage), the 7 days to `date` (or to the run's as-of day when earlier) against
/// the 7 days before, each moving pattern with its newest failure as evidence. None when no
/// clustering run is stored.
pub fn drift_report(store: &Store, date: Day) -> Result<Option<citriage_analysis::triage::PatternDriftReport>> {
    use citriage_analysis::triage::{DriftingPattern, PatternDriftReport};
    use citriage_model::{Evidence, EvidenceKind};
    let mut run = None;
    for prof in Profile::ALL {
        if let Some(r) = store.cluster_run(prof.name())? {
            run = Some(r);
            break;
        }
    }
    let Some(run) = run else { return Ok(None) };
    let cfg = DriftConfig::default();
    let to_day = date.0.min(Day::from_unix_seconds(run.as_of).0);
    let from_day = to_day - cfg.span;
    let daily = store.cluster_daily(&run.profile)?;
    let mut patterns = Vec::new();
    for d in cluster_drift(&daily, from_day, to_day, &cfg) {
        if d.kind == DriftKind::Steady {
            continue;
        }
        let text = store
            .cluster(&run.profile, &d.id)?
            .map(|c| c.text.lines().next().unwrap_or("").chars().take(160).collect())
            .unwrap_or_default();
        let evidence = store.cluster_failures(&run.profile, &d.id, 1)?.into_iter().next().map(|f| {
            let body = f.failure_text.unwrap_or_default();
            let first: String = body.lines().next().unwrap_or("").chars().take(300).collect();
            Evidence::new(
                EvidenceKind::JunitCase,
                format!("{} :: {}", citriage_model::build::prow_url(&f.bucket, &f.path), f.test),
                first,
                citriage_model::evidence::sha256_hex(body.as_bytes()),
                f.started.map(|s| Day::from_unix_seconds(s).to_string()).unwrap_or_default(),
            )
        });
        patterns.push(DriftingPattern {
            stable_id: d.id,
            kind: d.kind,
            before: d.before,
            after: d.after,
            per_day: d.per_day.iter().map(|(_, n)| *n).collect(),
            text,
            evidence,
        });
    }
    Ok(Some(PatternDriftReport {
        profile: run.profile,
        from: Day(from_day),
        to: Day(to_day),
        span_days: cfg.span,
        patterns,
    }))
}

/// A normalization profile by its name (`default`, `k8s-triage`, or the short `k8s`).
pub fn parse_profile(name: &str) -> Result<Profile> {
    Profile::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        Error::input(format!("--profile {name:?}: expected {}", names.join(" or ")))
    })
}

/// The catalogue of known signatures: the built-in one, with a user file (TOML) merged
/// over it when given.
pub fn catalogue(user: Option<&Path>) -> Result<Catalogue> {
    match user {
        None => Ok(Catalogue::builtin()),
        Some(p) => {
            let text = files::read_input(p)?;
            Catalogue::builtin_with(&text).map_err(|e| Error::input(format!("{}: {e}", p.display())))
        }
    }
}

/// Owners by test-name prefix from a JSON file (`{"sig-node": ["Kubelet", ...]}`), or none.
pub fn owners(file: Option<&Path>) -> Result<BTreeMap<String, Vec<String>>> {
    let Some(p) = file else { return Ok(BTreeMap::new()) };
    let text = std::fs::read(p).map_err(|e| Error::input(format!("{}: cannot read: {e}", p.display())))?;
    serde_json::from_slice(&text)
        .map_err(|e| Error::input(format!("{}: expected {{\"sig-x\": [\"prefix\", ...]}}: {e}", p.display())))
}

/// Where `cluster` writes and which pattern drift it computes.
#[derive(Debug, Clone)]
pub struct ClusterFiles {
    /// The output folder.
    pub out: PathBuf,
    /// Drift from this date (the end of its window, YYYY-MM-DD); default: 7 days before `drift_to`.
    pub drift_from: Option<String>,
    /// Drift to this date; default: the as-of day.
    pub drift_to: Option<String>,
    /// Days in each drift window.
    pub drift_span: i64,
}

impl Default for ClusterFiles {
    fn default() -> Self {
        ClusterFiles { out: PathBuf::from("clusters"), drift_from: None, drift_to: None, drift_span: 7 }
    }
}

/// `cluster`'s result: the run, its pattern drift and the files written.
pub struct ClusterReport {
    pub outcome: ClusterOutcome,
    pub drift: Vec<PatternDrift>,
    pub drift_config: DriftConfig,
    pub from_day: i64,
    pub to_day: i64,
    /// `pattern_drift.json`'s content.
    pub drift_json: Value,
    /// `failure_data.json`, `clusters.json`, `pattern_drift.json`.
    pub files: [PathBuf; 3],
}

/// Clusters the store ([`cluster_store`]) and writes `failure_data.json`
/// (go.k8s.io/triage's format), `clusters.json` and `pattern_drift.json`.
pub fn cluster_to_files(
    store: &mut Store,
    opts: &ClusterOptions,
    out: &ClusterFiles,
    progress: &dyn Progress,
) -> Result<ClusterReport> {
    let outcome = cluster_store(store, opts, progress)?;
    let refs = outcome.refs();
    // Every cluster is exported, so every failure is in exactly one `clustered[]` entry.
    let fd = failure_data(&outcome.clustering, &refs, &outcome.builds, &ExportOptions::complete(opts.owners.clone()));
    drop(refs);
    // Pattern drift between two dates, from the run's failures per cluster and day.
    let day_of = |s: &str, flag: &str| {
        Day::parse(s).map(|d| d.0).ok_or_else(|| Error::input(format!("{flag} {s:?}: expected YYYY-MM-DD")))
    };
    let to_day = match &out.drift_to {
        Some(s) => day_of(s, "--drift-to")?,
        None => Day::from_unix_seconds(outcome.as_of).0,
    };
    let from_day = match &out.drift_from {
        Some(s) => day_of(s, "--drift-from")?,
        None => to_day - 7,
    };
    if out.drift_span < 1 {
        return Err(Error::input(format!("--drift-span {}: expected at least 1 day", out.drift_span)));
    }
    let drift_config = DriftConfig { span: out.drift_span, ..DriftConfig::default() };
    let drift = cluster_drift(&outcome.daily, from_day, to_day, &drift_config);
    files::create_dir(&out.out)?;
    let f1 = out.out.join("failure_data.json");
    files::write_json(&f1, &fd, false)?;
    drop(fd);
    let f2 = out.out.join("clusters.json");
    files::write_json(&f2, &outcome.rich, true)?;
    let write = |name: &str, v: String| -> Result<PathBuf> {
        let p = out.out.join(name);
        files::write_plain(&p, v)?;
        Ok(p)
    };
    let drift_json = json!({
        "from": Day(from_day).to_string(), "to": Day(to_day).to_string(), "span_days": drift_config.span,
        "min_change": drift_config.min_change, "patterns": drift,
    });
    let f3 = write("pattern_drift.json", serde_json::to_string_pretty(&drift_json).unwrap_or_default() + "\n")?;
    Ok(ClusterReport { outcome, drift, drift_config, from_day, to_day, drift_json, files: [f1, f2, f3] })
}
