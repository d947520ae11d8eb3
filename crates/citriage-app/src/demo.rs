//! The whole triage offline (`demo`): the bundled example dashboards imported and
//! triaged into one store; then a synthetic world (builds ingested, dashboards
//! imported and triaged with the builds, payload stream analysed, failures clustered
//! with both profiles) into a second; every report verified as stored, the result
//! recorded beside it.

use crate::error::{Error, Result};
use crate::example_data::BUNDLED;
use crate::progress::Progress;
use crate::triage::Settings;
use crate::verify::{check_report, VerifySetup};
use crate::{builds, cluster, documents, payload, snapshots, triage};
use citriage_analysis::Triage;
use citriage_model::Dataset;
use citriage_patterns::normalize::Profile;
use citriage_payload::PayloadAnalysis;
use citriage_store::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the demo writes.
#[derive(Debug, Clone)]
pub struct DemoRequest {
    /// The reports, the world and the world's store.
    pub out: PathBuf,
    /// The bundled dashboards' store (default: `citriage.db` in `out`).
    pub db: Option<PathBuf>,
}

/// A demo report's verification.
#[derive(Debug, Clone)]
pub struct DemoCheck {
    /// The store's file name.
    pub store: String,
    /// The key the result was recorded under.
    pub key: String,
    /// The verifier's verdict: `pass`, `incomplete` or `needs-work`.
    pub verdict: &'static str,
    /// Findings per rule id.
    pub findings: BTreeMap<String, usize>,
    /// Claims not checked (offline, no checkout).
    pub unchecked: usize,
}

/// A triage with the files its report was written to.
pub type Published = (Triage, Vec<String>);

/// What the demo did.
pub struct DemoOutcome {
    /// The bundled dashboards' store and the world's.
    pub db: PathBuf,
    pub world_db: PathBuf,
    /// Builds the world's mirror holds.
    pub world_builds: usize,
    /// Builds the world's store holds.
    pub builds_stored: usize,
    /// Each triage with the files its report was written to: the bundled dashboards'
    /// first, then the world's.
    pub triages: Vec<Published>,
    pub payloads: Vec<PayloadAnalysis>,
    /// (profile, failures, clusters) per clustering run.
    pub clustered: Vec<(&'static str, usize, usize)>,
    pub checks: Vec<DemoCheck>,
}

/// Runs the demo.
pub fn demo(req: &DemoRequest, progress: &dyn Progress) -> Result<DemoOutcome> {
    let out = &req.out;
    std::fs::create_dir_all(out).map_err(|e| Error::failed(format!("{}: cannot create: {e}", out.display())))?;
    let db = req.db.clone().unwrap_or_else(|| out.join("citriage.db"));
    let mut store = Store::open(&db)?;
    progress.doing("importing the bundled snapshots");
    let mut latest = BTreeMap::new();
    for (name, text) in BUNDLED {
        let loc = format!("examples/k8s/{name}");
        let read = snapshots::from_bytes(text.as_bytes(), &loc, None, None)?;
        let r = snapshots::store(&mut store, &read.snapshot)?;
        latest.insert(r.snapshot.dataset, r.snapshot.id);
    }
    let settings = Settings::default();
    let mut triages = Vec::new();
    for (ds, id) in latest {
        progress.doing(&format!("triaging {ds}"));
        let loaded = snapshots::load_with_history(&store, id)?;
        let t = triage::run_triage(&loaded, &settings, None, &[]);
        let files = triage::publish(&mut store, &t, &out.join(ds.as_str()))?;
        triages.push((t, files));
    }
    let bundled = triages.len();
    let world = out.join("world");
    let world_db = out.join("world.db");
    let (mut wstore, world_builds) = world_store(&world, &world_db, progress)?;
    let (world_triages, builds_stored) = triage_world(&world, &mut wstore, &settings, out, progress)?;
    triages.extend(world_triages);
    // The world's payload stream, analysed as `payload TAG --from WORLD` would, so the
    // dashboard over the world store has payloads to show.
    progress.doing("analysing the world's payloads");
    let payloads = payload::analyze_world_payloads(&world)?;
    for p in &payloads {
        documents::record_payload(&mut wstore, p)?;
    }
    // The world's failures clustered with both profiles, so the dashboard over the world
    // store has patterns to show.
    progress.doing("clustering the world's failures");
    let mut clustered = Vec::new();
    for profile in Profile::ALL {
        let opts = cluster::ClusterOptions { profile, ..cluster::ClusterOptions::default() };
        let c = cluster::cluster_store(&mut wstore, &opts, progress)?;
        clustered.push((profile.name(), c.failures.len(), c.clustering.clusters.len()));
    }
    // Each report verified as stored, the result recorded beside it. Findings are
    // reported; they do not fail the demo.
    progress.doing("verifying the reports");
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
    Ok(DemoOutcome { db, world_db, world_builds, builds_stored, triages, payloads, clustered, checks })
}

/// The synthetic world (a Prow mirror with builds and JUnit, generated unless there)
/// ingested for real into the store at `db`; returns it and the builds found.
fn world_store(world: &Path, db: &Path, progress: &dyn Progress) -> Result<(Store, usize)> {
    progress.doing("generating the synthetic world (tiny preset)");
    if !world.join("truth.json").exists() {
        let _ = std::fs::remove_dir_all(world);
        let params = citriage_synth::SynthParams::preset("tiny").ok_or_else(|| Error::failed("no tiny preset"))?;
        citriage_synth::generate(&params, world, &mut |_| {}).map_err(|e| Error::failed(e.to_string()))?;
    }
    let mut wstore = Store::open(db)?;
    progress.doing("ingesting the world's builds");
    let src = citriage_sources::artifacts::LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = citriage_ingest::discover_jobs(&src).map_err(|e| Error::failed(e.to_string()))?;
    let ingest = citriage_ingest::ingest_jobs(&src, &mut wstore, &jobs, &Default::default(), &|_| {})?;
    Ok((wstore, ingest.builds_found))
}

/// The world's dashboards imported day by day and the latest of each triaged with the
/// stored builds; returns the triages and how many builds the store holds.
fn triage_world(
    world: &Path,
    wstore: &mut Store,
    settings: &Settings,
    out: &Path,
    progress: &dyn Progress,
) -> Result<(Vec<Published>, usize)> {
    let mut wlatest = BTreeMap::new();
    for ds in [Dataset::Failures, Dataset::Flakes] {
        let dir = world.join("k8s-metrics").join(ds.as_str());
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| Error::failed(format!("{}: {e}", dir.display())))?
            .flatten()
            .map(|e| e.path())
            .collect();
        names.sort();
        for p in names {
            let bytes = std::fs::read(&p).map_err(|e| Error::failed(format!("{}: {e}", p.display())))?;
            let loc =
                format!("world/k8s-metrics/{}/{}", ds.as_str(), p.file_name().unwrap_or_default().to_string_lossy());
            let read = snapshots::from_bytes(&bytes, &loc, Some(ds), None)?;
            let r = snapshots::store(wstore, &read.snapshot)?;
            wlatest.insert(ds, r.snapshot.id);
        }
    }
    let builds = builds::load_builds(wstore)?;
    let mut triages = Vec::new();
    for (ds, id) in wlatest {
        progress.doing(&format!("triaging the world's {ds}"));
        let loaded = snapshots::load_with_history(wstore, id)?;
        let tb =
            citriage_analysis::TriageBuilds::from_builds(&loaded.snapshot, &settings.rules, &settings.config, &builds);
        let t = triage::run_triage(&loaded, settings, Some(&tb), &[]);
        let files = triage::publish(wstore, &t, &out.join(format!("world-{ds}")))?;
        triages.push((t, files));
    }
    Ok((triages, builds.len()))
}

/// Verifies a demo report as stored (offline, no checkouts) and records the result.
fn verify_demo_report(store: Store, t: &Triage, db: &Path) -> Result<(Store, DemoCheck)> {
    let key = documents::triage_key(t);
    let missing = || Error::failed(format!("the report triage/{key} was not recorded in {}", store.path()));
    let header = store
        .documents(Some("triage"))?
        .into_iter()
        .find(|h| h.key == key && h.media_type == documents::MARKDOWN)
        .ok_or_else(missing)?;
    let text = store.document("triage", &key, documents::MARKDOWN)?.map(|d| d.body).ok_or_else(missing)?;
    let name = format!("triage/{key}");
    let verified = documents::Verified { document: Some(&header), file_name: &name, text: &text };
    let (store, c) = check_report(store, &text, &name, &verified, &VerifySetup::offline(), true)?;
    let mut findings = BTreeMap::new();
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
