//! Clustering the stored builds' failure texts for `cluster` and `demo`:
//! go.k8s.io/triage-compatible ids, stable citriage ids carried through the store,
//! known signatures, and the run recorded in the store (clusters, membership, daily
//! counts, sub-patterns) for the dashboard; pattern drift between two dates for
//! `cluster` and the triage report.

use crate::context::Failure;
use citriage_model::time::DAY;
use citriage_model::Day;
use citriage_patterns::cluster::{cluster, ClusterConfig, FailureRef};
use citriage_patterns::drift::{pattern_drift, DriftConfig, PatternDrift};
use citriage_patterns::export::{attach_sub_patterns, rich_export, BuildRecord as ExportBuild};
use citriage_patterns::normalize::Profile;
use citriage_patterns::signatures::Catalogue;
use citriage_patterns::stable::{CurrentCluster, PreviousCluster, StableIdAssigner};
use citriage_store::{ClusterDay, ClusterMember, ClusterRun, StoredCluster, StoredSubPattern};
use std::collections::BTreeMap;

/// What a clustering run computed (and recorded in the store).
pub struct ClusterOutcome {
    pub as_of: i64,
    /// (test, failure text, job, build path) per failure, in input order.
    pub rows: Vec<(String, String, String, String)>,
    pub builds: Vec<ExportBuild>,
    pub clustering: citriage_patterns::cluster::Clustering,
    pub rich: citriage_patterns::export::RichExport,
    /// Failures per cluster, day, job and test (as recorded).
    pub daily: Vec<ClusterDay>,
}

/// Clusters the stored failures of builds started in the window ending at `as_of`
/// (default: the newest build's day), carries stable ids through the store and
/// records the run (clusters, membership, daily counts).
#[allow(clippy::too_many_arguments)]
pub fn cluster_store(
    store: &mut citriage_store::Store,
    profile: Profile,
    window: i64,
    as_of: Option<&str>,
    jobs: &[String],
    catalogue: &Catalogue,
    owners: &BTreeMap<String, Vec<String>>,
    pb: &indicatif::ProgressBar,
) -> Result<ClusterOutcome, Failure> {
    let all = store.builds(None)?;
    if all.is_empty() {
        pb.finish_and_clear();
        return Err(Failure::input(format!(
            "the store {} has no builds: run `{} fetch` first",
            store.path(),
            crate::context::invocation()
        )));
    }
    let as_of = match as_of {
        Some(s) => crate::builds::parse_as_of(s)?,
        None => crate::builds::default_as_of(&all),
    };
    let since = as_of - window.max(1) * DAY;
    drop(all);
    // Failures as owned rows; builds for the export's columns; where each failure is
    // stored (bucket, path, position) and when its build started.
    let mut rows: Vec<(String, String, String, String)> = Vec::new(); // (test, text, job, build path)
    let mut places: Vec<(usize, u32)> = Vec::new(); // (index into `builds`, test position)
    let mut builds: Vec<ExportBuild> = Vec::new();
    let mut stored_at: Vec<(String, String)> = Vec::new(); // (bucket, path) per entry of `builds`
    for job_name in store.build_jobs()? {
        for b in store.job_builds_with_tests(&job_name, Some(since))? {
            let Some(started) = b.started.filter(|s| *s > since && *s <= as_of) else { continue };
            if !jobs.is_empty() && !jobs.contains(&b.dashboard_job()) {
                continue;
            }
            // Stored tests are in position order, so a test's index is its position.
            let failed: Vec<(u32, &citriage_model::build::StoredTest)> = b
                .tests
                .iter()
                .enumerate()
                .filter(|(_, t)| (t.status == "failed" || t.status == "error") && t.failure_text.is_some())
                .map(|(i, t)| (i as u32, t))
                .collect();
            let path = format!("gs://{}/{}", b.bucket, b.path);
            for (seq, t) in &failed {
                let test = match profile {
                    Profile::K8sTriage => t.kettle_name.clone().unwrap_or_else(|| t.name.clone()),
                    Profile::Default => t.name.clone(),
                };
                rows.push((test, t.failure_text.clone().unwrap_or_default(), b.dashboard_job(), path.clone()));
                places.push((builds.len(), *seq));
            }
            builds.push(ExportBuild {
                path,
                job: b.dashboard_job(),
                number: b.build_id.parse().unwrap_or(0),
                started,
                elapsed: b.duration.unwrap_or(0),
                tests_run: b.tests.len() as i64,
                tests_failed: failed.len() as i64,
                result: b.result.clone().unwrap_or_default(),
                executor: b.executor.clone().unwrap_or_default(),
                pr: b.pr.map(|p| p.to_string()).unwrap_or_default(),
            });
            stored_at.push((b.bucket.clone(), b.path.clone()));
        }
    }
    pb.set_message(format!("clustering {} failures", rows.len()));
    let refs: Vec<FailureRef<'_>> =
        rows.iter().map(|(t, x, j, b)| FailureRef { test: t, text: x, job: j, build: b }).collect();
    let clustering = cluster(&refs, &ClusterConfig::new(profile));
    // Stable ids carried through the store: an id follows the failures first seen under it.
    let prof = profile.name();
    let previous: Vec<PreviousCluster> =
        store.clusters(prof)?.into_iter().map(|c| PreviousCluster { stable_id: c.stable_id, key: c.key }).collect();
    let first: std::collections::HashMap<(String, String, u32), String> =
        store.cluster_first_ids(prof)?.into_iter().map(|f| ((f.bucket, f.path, f.seq), f.stable_id)).collect();
    let votes: Vec<Vec<(String, u64)>> = clustering
        .clusters
        .iter()
        .map(|c| {
            let mut v: BTreeMap<&str, u64> = BTreeMap::new();
            for &m in &c.members {
                let (bi, seq) = places[m as usize];
                let (bucket, path) = &stored_at[bi];
                if let Some(id) = first.get(&(bucket.clone(), path.clone(), seq)) {
                    *v.entry(id.as_str()).or_insert(0) += 1;
                }
            }
            v.into_iter().map(|(k, n)| (k.to_string(), n)).collect()
        })
        .collect();
    drop(first);
    let current: Vec<CurrentCluster<'_>> =
        clustering.clusters.iter().map(|c| CurrentCluster { key: &c.key, size: c.members.len() }).collect();
    let stable = StableIdAssigner::new(previous).assign_with_votes(&current, &votes);
    let mut rich = rich_export(&clustering, &refs, Some(&stable), Some(catalogue), owners);
    pb.set_message("sub-patterns");
    let started: Vec<i64> = places.iter().map(|&(bi, _)| builds[bi].started).collect();
    attach_sub_patterns(&mut rich, &clustering, &refs, &started, Some(catalogue));
    pb.set_message("recording clusters");
    let (stored, members, daily) =
        cluster_rows(&clustering, &rich, &stable, &rows, &places, &builds, &stored_at, as_of);
    let run = ClusterRun {
        profile: prof.to_string(),
        as_of,
        window_days: window.max(1),
        failures: rows.len() as u64,
        clusters: stored.len() as u64,
    };
    let missing = store.record_cluster_run(&run, &stored, &members, &daily)?;
    if missing > 0 {
        return Err(Failure::other(format!("{missing} clustered failures have no stored build")));
    }
    let subs: Vec<StoredSubPattern> = rich
        .clusters
        .iter()
        .zip(&stable)
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
        .collect();
    store.record_cluster_subpatterns(prof, &subs)?;
    drop(refs);
    Ok(ClusterOutcome { as_of, rows, builds, clustering, rich, daily })
}

/// What the store keeps of a clustering run: each cluster with its representative
/// text, spans, owner and signatures; each failure's membership; and failures per
/// cluster, day, job and test.
#[allow(clippy::too_many_arguments)]
fn cluster_rows(
    clustering: &citriage_patterns::cluster::Clustering,
    rich: &citriage_patterns::export::RichExport,
    stable: &[citriage_patterns::stable::StableAssignment],
    rows: &[(String, String, String, String)],
    places: &[(usize, u32)],
    builds: &[ExportBuild],
    stored_at: &[(String, String)],
    as_of: i64,
) -> (Vec<StoredCluster>, Vec<ClusterMember>, Vec<ClusterDay>) {
    let mut clusters = Vec::with_capacity(clustering.clusters.len());
    let mut members = Vec::with_capacity(rows.len());
    let mut daily = Vec::new();
    for ((c, rc), s) in clustering.clusters.iter().zip(&rich.clusters).zip(stable) {
        let mut times = Vec::with_capacity(c.members.len());
        let mut jobs = std::collections::BTreeSet::new();
        let mut per_day: BTreeMap<(i64, &str, &str), u64> = BTreeMap::new();
        for &m in &c.members {
            let (test, _, job, _) = &rows[m as usize];
            let (bi, seq) = places[m as usize];
            let started = builds[bi].started;
            times.push(started);
            jobs.insert(job.as_str());
            *per_day.entry((Day::from_unix_seconds(started).0, job.as_str(), test.as_str())).or_insert(0) += 1;
            let (bucket, path) = &stored_at[bi];
            members.push(ClusterMember {
                stable_id: s.stable_id.clone(),
                bucket: bucket.clone(),
                path: path.clone(),
                seq,
            });
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

/// Pattern drift of a run's clusters from its daily rows.
pub fn cluster_drift(daily: &[ClusterDay], from_day: i64, to_day: i64, cfg: &DriftConfig) -> Vec<PatternDrift> {
    let rows: Vec<(String, i64, u64)> = daily.iter().map(|d| (d.stable_id.clone(), d.day, d.failures)).collect();
    pattern_drift(&rows, from_day, to_day, cfg)
}

/// The triage report's pattern drift: the store's latest clustering run (default profile,
/// else k8s-triage), the 7 days to `date` (or to the run's as-of day when earlier) against
/// the 7 days before, each moving pattern with its newest failure as evidence. None when no
/// clustering run is stored.
pub fn drift_report(
    store: &citriage_store::Store,
    date: Day,
) -> Result<Option<citriage_analysis::triage::PatternDriftReport>, Failure> {
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
        if d.kind == citriage_patterns::drift::DriftKind::Steady {
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
                format!("https://prow.k8s.io/view/gs/{}/{} :: {}", f.bucket, f.path, f.test),
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
