//! The `cluster` and `extract` commands: failure clustering over the stored builds
//! (go.k8s.io/triage-compatible ids and `failure_data.json`, stable citriage ids carried
//! in the store, known signatures), and failure-line extraction from one build's log
//! and JUnit with line-level evidence.

use crate::cli::{open_store, print_json, spinner, Cli, ClusterArgs, ExtractArgs, Format};
use crate::outln;
use crate::pipeline::Failure;
use citriage_model::Day;
use citriage_patterns::cluster::{cluster, ClusterConfig, FailureRef};
use citriage_patterns::drift::{pattern_drift, DriftConfig, PatternDrift};
use citriage_patterns::export::{
    attach_sub_patterns, failure_data, rich_export, BuildRecord as ExportBuild, ExportOptions,
};
use citriage_patterns::extract::{extract_junit, extract_log, Excerpt, ExtractConfig};
use citriage_patterns::normalize::Profile;
use citriage_patterns::signatures::Catalogue;
use citriage_patterns::stable::{CurrentCluster, PreviousCluster, StableIdAssigner};
use citriage_store::{ClusterDay, ClusterMember, ClusterRun, StoredCluster, StoredSubPattern};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) fn profile_name(p: Profile) -> &'static str {
    match p {
        Profile::Default => "default",
        Profile::K8sTriage => "k8s-triage",
    }
}

pub(crate) fn cluster_cmd(cli: &Cli, a: &ClusterArgs) -> Result<(), Failure> {
    let profile = match a.profile.as_str() {
        "default" => Profile::Default,
        "k8s-triage" => Profile::K8sTriage,
        other => return Err(Failure::input(format!("--profile {other:?}: expected default or k8s-triage"))),
    };
    let catalogue = match &a.signatures {
        None => Catalogue::builtin(),
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| Failure::input(format!("{}: cannot read: {e}", p.display())))?;
            Catalogue::builtin_with(&text).map_err(|e| Failure::input(format!("{}: {e}", p.display())))?
        }
    };
    let owners: BTreeMap<String, Vec<String>> = match &a.owners {
        None => BTreeMap::new(),
        Some(p) => {
            let text = std::fs::read(p).map_err(|e| Failure::input(format!("{}: cannot read: {e}", p.display())))?;
            serde_json::from_slice(&text).map_err(|e| {
                Failure::input(format!("{}: expected {{\"sig-x\": [\"prefix\", ...]}}: {e}", p.display()))
            })?
        }
    };
    let mut store = open_store(cli)?;
    let pb = spinner(cli.quiet, "loading failures");
    let out = cluster_store(&mut store, profile, a.window, a.as_of.as_deref(), &a.jobs, &catalogue, &owners, &pb)?;
    let ClusterOutcome { as_of, rows, builds, clustering, rich, daily } = out;
    let prof = profile_name(profile);
    let refs: Vec<FailureRef<'_>> =
        rows.iter().map(|(t, x, j, b)| FailureRef { test: t, text: x, job: j, build: b }).collect();
    // Every cluster is exported, so every failure is in exactly one `clustered[]` entry.
    let fd = failure_data(&clustering, &refs, &builds, &ExportOptions::complete(owners.clone()));
    // Pattern drift between two dates, from the run's failures per cluster and day.
    let day_of = |s: &str, flag: &str| {
        Day::parse(s).map(|d| d.0).ok_or_else(|| Failure::input(format!("{flag} {s:?}: expected YYYY-MM-DD")))
    };
    let to_day = match &a.drift_to {
        Some(s) => day_of(s, "--drift-to")?,
        None => as_of.div_euclid(86_400),
    };
    let from_day = match &a.drift_from {
        Some(s) => day_of(s, "--drift-from")?,
        None => to_day - 7,
    };
    if a.drift_span < 1 {
        return Err(Failure::input(format!("--drift-span {}: expected at least 1 day", a.drift_span)));
    }
    let dcfg = DriftConfig { span: a.drift_span, ..DriftConfig::default() };
    let drift = cluster_drift(&daily, from_day, to_day, &dcfg);
    std::fs::create_dir_all(&a.out).map_err(|e| Failure::other(format!("{}: {e}", a.out.display())))?;
    let write = |name: &str, v: String| -> Result<PathBuf, Failure> {
        let p = a.out.join(name);
        std::fs::write(&p, v).map_err(|e| Failure::other(format!("{}: {e}", p.display())))?;
        Ok(p)
    };
    let f1 = write("failure_data.json", serde_json::to_string(&fd).unwrap_or_default())?;
    let f2 = write("clusters.json", serde_json::to_string_pretty(&rich).unwrap_or_default() + "\n")?;
    let drift_json = json!({
        "from": Day(from_day).to_string(), "to": Day(to_day).to_string(), "span_days": dcfg.span,
        "min_change": dcfg.min_change, "patterns": drift,
    });
    let f3 = write("pattern_drift.json", serde_json::to_string_pretty(&drift_json).unwrap_or_default() + "\n")?;
    pb.finish_and_clear();
    let acc = &clustering.accounting;
    if cli.format == Format::Json {
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
        let jobs: std::collections::BTreeSet<&str> = c.members.iter().map(|&m| rows[m as usize].2.as_str()).collect();
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
            .map(|s| format!("{} ({})", s.label, s.members.len()))
            .collect();
        if !subs.is_empty() {
            outln!("{:<14} job families: {}", "", subs.join(", "));
        }
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
    outln!("Wrote {}, {} and {}", f1.display(), f2.display(), f3.display());
    Ok(())
}

/// Pattern drift of a run's clusters from its daily rows.
pub(crate) fn cluster_drift(daily: &[ClusterDay], from_day: i64, to_day: i64, cfg: &DriftConfig) -> Vec<PatternDrift> {
    let rows: Vec<(String, i64, u64)> = daily.iter().map(|d| (d.stable_id.clone(), d.day, d.failures)).collect();
    pattern_drift(&rows, from_day, to_day, cfg)
}

/// What a clustering run computed (and recorded in the store).
pub(crate) struct ClusterOutcome {
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
pub(crate) fn cluster_store(
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
        return Err(Failure::input(format!("the store {} has no builds: run `citriage fetch` first", store.path())));
    }
    let as_of = match as_of {
        Some(s) => crate::fetch::parse_as_of(s)?,
        None => crate::fetch::default_as_of(&all),
    };
    let since = as_of - window.max(1) * 86_400;
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
    let prof = profile_name(profile);
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
            *per_day.entry((started.div_euclid(86_400), job.as_str(), test.as_str())).or_insert(0) += 1;
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

fn read_maybe(path: &Path) -> Result<Option<Vec<u8>>, Failure> {
    if !path.exists() {
        return Ok(None);
    }
    citriage_sources::read(&path.display().to_string(), &Default::default())
        .map(|f| Some(f.bytes))
        .map_err(|e| Failure::input(e.to_string()))
}

fn find_log(dir: &Path) -> Option<PathBuf> {
    ["build-log.txt", "build-log.txt.gz"].iter().map(|n| dir.join(n)).find(|p| p.exists())
}

pub(crate) fn extract_cmd(cli: &Cli, a: &ExtractArgs) -> Result<(), Failure> {
    let dir = match &a.mirror {
        Some(m) => m.join(a.build.trim_start_matches('/')),
        None => PathBuf::from(&a.build),
    };
    if !dir.exists() {
        return Err(Failure::input(format!("{}: no such build folder or log", dir.display())));
    }
    let (log_path, build_dir) = if dir.is_dir() {
        (find_log(&dir), dir.clone())
    } else {
        (Some(dir.clone()), dir.parent().map(Path::to_path_buf).unwrap_or_default())
    };
    let source = match &a.mirror {
        Some(_) => format!("https://prow.k8s.io/view/gs/{}/{}", a.bucket, a.build.trim_matches('/')),
        None => build_dir.display().to_string(),
    };
    let cfg = ExtractConfig::default();
    let fail = match &log_path {
        Some(p) => read_maybe(p)?,
        None => None,
    };
    // The passing log: given, or the newest passing build of the same job before this one.
    let mut pass_from = a.pass.clone();
    if pass_from.is_none() && a.mirror.is_some() {
        let parts: Vec<&str> = a.build.trim_matches('/').split('/').collect();
        if parts.len() >= 2 {
            let (job, id) = (parts[parts.len() - 2], parts[parts.len() - 1]);
            if let Ok(store) = open_store(cli) {
                if let Ok(bs) = store.builds(Some(job)) {
                    let mine = bs.iter().find(|b| b.build_id == id).and_then(|b| b.started);
                    if let Some(t) = mine {
                        if let Some(p) = bs
                            .iter()
                            .rev()
                            .find(|b| b.result.as_deref() == Some("SUCCESS") && b.started.is_some_and(|s| s < t))
                        {
                            pass_from = a.mirror.as_ref().map(|m| m.join(&p.path));
                        }
                    }
                }
            }
        }
    }
    let pass = match &pass_from {
        Some(p) if p.is_dir() => match find_log(p) {
            Some(l) => read_maybe(&l)?,
            None => None,
        },
        Some(p) => read_maybe(p)?,
        None => None,
    };
    let mut excerpts: Vec<Excerpt> = Vec::new();
    let mut used_pass = false;
    let mut first_failure = None;
    if let Some(f) = &fail {
        let x = extract_log(f, pass.as_deref(), &format!("{source}/build-log.txt"), &cfg);
        used_pass = x.used_pass_log;
        first_failure = x.first_failure_line;
        excerpts.extend(x.excerpts);
    }
    // JUnit failures under artifacts/.
    let mut junit_files = Vec::new();
    let mut stack = vec![build_dir.join("artifacts")];
    while let Some(d) = stack.pop() {
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("junit") && n.to_string_lossy().ends_with(".xml"))
                {
                    junit_files.push(p);
                }
            }
        }
    }
    junit_files.sort();
    let mut junit_failures = 0;
    for jf in &junit_files {
        let Some(bytes) = read_maybe(jf)? else { continue };
        let rel = jf.strip_prefix(&build_dir).unwrap_or(jf).display().to_string();
        let parsed = citriage_formats::junit::parse_junit(&bytes, &rel);
        for c in parsed.cases.iter().filter(|c| {
            matches!(c.status, citriage_formats::junit::Status::Failed | citriage_formats::junit::Status::Error)
        }) {
            junit_failures += 1;
            let text = c.failure_text.clone().unwrap_or_default();
            excerpts.extend(extract_junit(&text, "", &format!("{source}/{rel} :: {}", c.name), &cfg));
        }
    }
    if fail.is_none() && junit_files.is_empty() {
        return Err(Failure::input(format!("{}: no build-log.txt and no JUnit files", build_dir.display())));
    }
    if cli.format == Format::Json {
        print_json(&json!({
            "build": source, "log": log_path.map(|p| p.display().to_string()),
            "passing_log": pass_from.map(|p| p.display().to_string()), "used_passing_log": used_pass,
            "first_failure_line": first_failure, "junit_failures": junit_failures, "excerpts": excerpts,
        }));
        return Ok(());
    }
    outln!(
        "{}: {} excerpt(s){}; first failure at line {}",
        source,
        excerpts.len(),
        if used_pass { " (lines absent from the passing log preferred)" } else { " (no passing log)" },
        first_failure.map(|l| l.to_string()).unwrap_or_else(|| "?".into())
    );
    for e in &excerpts {
        outln!("\n{}:{}-{}  {}", e.source, e.line_start, e.line_end, e.hash);
        for l in e.text.lines().take(12) {
            outln!("    {l}");
        }
    }
    Ok(())
}

/// The triage report's pattern drift: the store's latest clustering run (default profile,
/// else k8s-triage), the 7 days to `date` (or to the run's as-of day when earlier) against
/// the 7 days before, each moving pattern with its newest failure as evidence. None when no
/// clustering run is stored.
pub(crate) fn drift_report(
    store: &citriage_store::Store,
    date: Day,
) -> Result<Option<citriage_analysis::triage::PatternDriftReport>, Failure> {
    use citriage_analysis::triage::{DriftingPattern, PatternDriftReport};
    use citriage_model::{Evidence, EvidenceKind};
    let mut run = None;
    for prof in ["default", "k8s-triage"] {
        if let Some(r) = store.cluster_run(prof)? {
            run = Some(r);
            break;
        }
    }
    let Some(run) = run else { return Ok(None) };
    let cfg = DriftConfig::default();
    let to_day = date.0.min(run.as_of.div_euclid(86_400));
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
