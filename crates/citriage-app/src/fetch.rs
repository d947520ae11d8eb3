//! Fetching Prow builds into the store (`fetch`): from a local mirror of a bucket or
//! from GCS over HTTP, optionally listed through Deck's job history, with Prow's
//! `prowjobs.js` for the builds that never reached GCS; resumable (complete builds are
//! skipped, one transaction per build).

use crate::error::{Error, Result};
use crate::progress::Progress;
use citriage_ingest::{discover_job_list, ingest_jobs, ingest_prowjobs, ExcerptLimits, IngestOptions, IngestSummary};
use citriage_model::Dataset;
use citriage_sources::artifacts::{ArtifactSource, GcsHttp, LocalMirror};
use citriage_sources::HttpOptions;
use citriage_store::Store;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `fetch` is asked.
#[derive(Debug, Clone)]
pub struct FetchRequest {
    /// A local folder laid out like the bucket; or `gcs`.
    pub mirror: Option<PathBuf>,
    /// A GCS base URL; or `mirror`.
    pub gcs: Option<String>,
    pub bucket: String,
    /// Jobs to fetch (dashboard naming; `pr:` for presubmits).
    pub jobs: Vec<String>,
    /// Also every job of the latest stored snapshot of this dataset.
    pub from_snapshot: Option<Dataset>,
    /// Also every job the source has.
    pub all: bool,
    /// Only the newest N builds of each job.
    pub max_builds: Option<usize>,
    /// Builds fetched at once.
    pub concurrency: usize,
    /// Prow's `prowjobs.js` (file or URL): state=error builds without a GCS folder.
    pub prowjobs: Option<String>,
    /// A cache folder for immutable artifacts fetched over HTTP.
    pub cache: Option<PathBuf>,
    /// List builds from Deck's job history (a Deck URL or a folder of recorded pages).
    pub deck: Option<String>,
    /// Job-history pages read per job with `deck`.
    pub deck_pages: usize,
    /// Skip jobs whose latest build is stored complete.
    pub incremental: bool,
    /// Store failure-line excerpts of failed builds' logs.
    pub log_excerpts: bool,
    /// Each request's timeout (also the longest single wait a server may ask for).
    pub timeout: Duration,
    /// Only this pull request's job folders (`pr-logs/pull/[SEGMENT/]N/`), instead of jobs.
    pub pr: Option<crate::pr::PrTarget>,
}

impl Default for FetchRequest {
    fn default() -> Self {
        FetchRequest {
            mirror: None,
            gcs: None,
            bucket: "kubernetes-ci-logs".into(),
            jobs: Vec::new(),
            from_snapshot: None,
            all: false,
            max_builds: None,
            concurrency: 8,
            prowjobs: None,
            cache: None,
            deck: None,
            deck_pages: 5,
            incremental: false,
            log_excerpts: true,
            timeout: Duration::from_secs(30),
            pr: None,
        }
    }
}

/// What a fetch did.
pub struct Fetched {
    /// The source, as it names itself.
    pub source: String,
    pub summary: IngestSummary,
    /// state=error builds stored from `prowjobs.js`.
    pub prowjob_errors: usize,
    /// Seconds the builds took to fetch and store.
    pub seconds: f64,
}

impl Fetched {
    /// A fetch fails when some build or job could not be fetched (what was fetched stays).
    pub fn outcome(&self) -> Result<()> {
        if !self.summary.failures.is_empty() {
            return Err(Error::failed(format!(
                "{} build(s) or job(s) failed to fetch; rerun to resume",
                self.summary.failures.len()
            )));
        }
        Ok(())
    }
}

/// Why `--mirror DIR --all` found no job: DIR should be a bucket's folder (the one
/// holding `logs/`); the bucket folders found under it are named.
fn mirror_hint(dir: &Path) -> String {
    let mut buckets: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("logs").is_dir() || e.path().join("pr-logs").is_dir())
                .map(|e| e.path().display().to_string())
                .collect()
        })
        .unwrap_or_default();
    buckets.sort();
    if buckets.is_empty() {
        format!("--mirror {}: no job found (a bucket's folder holds logs/JOB/BUILD/)", dir.display())
    } else {
        format!(
            "--mirror {}: no job found here, but bucket folders below it hold jobs: {}; pass one of them, e.g. --mirror {}",
            dir.display(),
            buckets.join(", "),
            buckets[0]
        )
    }
}

/// The source builds come from; checked before any store is opened (a folder of
/// buckets is not a bucket: the ones below it are named).
pub fn source(req: &FetchRequest) -> Result<Box<dyn ArtifactSource>> {
    match (&req.mirror, &req.gcs) {
        (Some(dir), _) => {
            if !dir.is_dir() {
                return Err(Error::input(format!("{}: not a folder", dir.display())));
            }
            let is_bucket = dir.join("logs").is_dir() || dir.join("pr-logs").is_dir();
            if !is_bucket
                && std::fs::read_dir(dir).is_ok_and(|rd| {
                    rd.flatten().any(|e| e.path().join("logs").is_dir() || e.path().join("pr-logs").is_dir())
                })
            {
                return Err(Error::input(mirror_hint(dir)));
            }
            Ok(Box::new(LocalMirror::new(dir.clone(), req.bucket.clone())))
        }
        (None, Some(url)) => {
            if !citriage_sources::is_url(url) {
                return Err(Error::input(format!("--gcs {url}: not an http(s) URL")));
            }
            Ok(Box::new(GcsHttp::new(url, &req.bucket, http(req), req.cache.clone())))
        }
        (None, None) => Err(Error::input("say where builds come from: --mirror DIR or --gcs URL")),
    }
}

fn http(req: &FetchRequest) -> HttpOptions {
    HttpOptions::per_request(req.timeout.max(Duration::from_secs(1)))
}

/// `fetch`: the jobs asked for (given, from a stored snapshot, or all the source has)
/// ingested from `src` (see [`source`]) into the store, job folders the listing
/// refused counted as failures; progress counts builds as they are listed and done.
pub fn fetch(
    store: &mut Store,
    src: &dyn ArtifactSource,
    req: &FetchRequest,
    progress: &dyn Progress,
) -> Result<Fetched> {
    let http = http(req);
    if let Some(pr) = &req.pr {
        return fetch_pr(store, src, req, pr, progress);
    }
    let mut jobs = req.jobs.clone();
    if let Some(ds) = req.from_snapshot {
        let s = crate::snapshots::latest(store, ds, " to take jobs from")?;
        jobs.extend(store.snapshot_job_names(s.id)?);
    }
    // Job folders the source listed but refused (unsafe or non-UTF-8 names, symlinks
    // out of a mirror): failures of the fetch, named, never left out silently.
    let mut refused_jobs = Vec::new();
    if req.all {
        let found = discover_job_list(src).map_err(|e| Error::failed(e.to_string()))?;
        jobs.extend(found.jobs);
        refused_jobs = found.refused;
    }
    jobs.sort();
    jobs.dedup();
    if jobs.is_empty() && req.prowjobs.is_none() {
        if let (true, Some(dir)) = (req.all, &req.mirror) {
            return Err(Error::input(mirror_hint(dir)));
        }
        return Err(Error::input("no jobs to fetch: give --job, --from-snapshot, --all or --prowjobs"));
    }
    let mut prowjob_errors = 0;
    if let Some(loc) = &req.prowjobs {
        let f = citriage_sources::read(loc, &http)?;
        let items = citriage_formats::prow::parse_prowjobs_js(&f.bytes, loc).map_err(Error::input)?;
        prowjob_errors = ingest_prowjobs(store, &req.bucket, &items)?;
    }
    let started = std::time::Instant::now();
    progress.doing(&format!("fetching {} job(s) from {}", jobs.len(), src.describe()));
    let opts = ingest_options(req, &http);
    let on_progress = |p: citriage_ingest::Progress| match p {
        citriage_ingest::Progress::Discovered { builds, .. } => progress.found(builds as u64),
        citriage_ingest::Progress::Build { .. } => progress.advance(1),
    };
    let mut summary = ingest_jobs(src, store, &jobs, &opts, &on_progress)?;
    summary.failures.extend(refused_jobs.into_iter().map(|reason| citriage_ingest::FetchFailure {
        job: String::new(),
        path: String::new(),
        reason,
    }));
    Ok(Fetched { source: src.describe(), summary, prowjob_errors, seconds: started.elapsed().as_secs_f64() })
}

/// `fetch --pr`: only the pull request's job folders; none found is bad input.
fn fetch_pr(
    store: &mut Store,
    src: &dyn ArtifactSource,
    req: &FetchRequest,
    pr: &crate::pr::PrTarget,
    progress: &dyn Progress,
) -> Result<Fetched> {
    let started = std::time::Instant::now();
    let prefix = pr.pr_logs_prefix();
    progress.doing(&format!("fetching the runs of {pr} from {}", src.describe()));
    let opts = ingest_options(req, &http(req));
    let on_progress = |p: citriage_ingest::Progress| match p {
        citriage_ingest::Progress::Discovered { builds, .. } => progress.found(builds as u64),
        citriage_ingest::Progress::Build { .. } => progress.advance(1),
    };
    let summary = citriage_ingest::ingest_pr(src, store, &prefix, &opts, &on_progress)?;
    if summary.jobs == 0 && summary.failures.is_empty() {
        return Err(Error::input(format!(
            "{pr}: no job folder under {} (is the bucket right, and has Prow run on the PR?)",
            src.locator(&prefix)
        )));
    }
    Ok(Fetched { source: src.describe(), summary, prowjob_errors: 0, seconds: started.elapsed().as_secs_f64() })
}

fn ingest_options(req: &FetchRequest, http: &HttpOptions) -> IngestOptions {
    let deck = req.deck.as_ref().map(|d| {
        std::sync::Arc::new(if citriage_sources::is_url(d) {
            citriage_sources::deck::DeckPages::http(d, http.clone())
        } else {
            citriage_sources::deck::DeckPages::local(d)
        })
    });
    IngestOptions {
        concurrency: req.concurrency.max(1),
        max_builds_per_job: req.max_builds,
        incremental: req.incremental,
        deck,
        deck_pages: req.deck_pages,
        log_excerpts: req.log_excerpts.then(ExcerptLimits::default),
        stop: None,
    }
}
