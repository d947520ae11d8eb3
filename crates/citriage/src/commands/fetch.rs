//! `citriage fetch`: ingest Prow build artifacts (from a local mirror or GCS over
//! HTTP, optionally listed through Deck) into the store; resumable.

use crate::context::{parse_dataset, print_json, Context, Failure};
use crate::outln;
use citriage_ingest::{discover_job_list, ingest_jobs, ingest_prowjobs, ExcerptLimits, IngestOptions, Progress};
use citriage_model::Dataset;
use citriage_sources::artifacts::{ArtifactSource, GcsHttp, LocalMirror};
use citriage_sources::HttpOptions;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// Ingest Prow build artifacts (started/finished/prowjob JSON, JUnit) from a GCS
/// bucket over HTTP or a local mirror into the store; resumable.
#[derive(Args, Debug)]
pub struct FetchArgs {
    /// A local folder laid out like the bucket (`<DIR>/logs/<job>/<id>/...`).
    /// Default: none (give --mirror or --gcs).
    #[arg(long, value_name = "DIR", conflicts_with = "gcs")]
    pub mirror: Option<PathBuf>,
    /// GCS base URL, e.g. https://storage.googleapis.com (the only host contacted).
    /// Default: none (give --mirror or --gcs).
    #[arg(long, value_name = "URL")]
    pub gcs: Option<String>,
    /// The bucket.
    #[arg(long, default_value = "kubernetes-ci-logs")]
    pub bucket: String,
    /// Jobs to fetch (dashboard naming; `pr:` for presubmits). Repeatable.
    #[arg(long = "job", value_name = "JOB")]
    pub jobs: Vec<String>,
    /// Fetch every job named in the latest stored snapshot of this dataset.
    /// Default: none.
    #[arg(long, value_parser = parse_dataset, value_name = "DATASET")]
    pub from_snapshot: Option<Dataset>,
    /// Fetch every job the source has.
    #[arg(long)]
    pub all: bool,
    /// Only the newest N builds of each job.
    /// Default: every build.
    #[arg(long, value_name = "N")]
    pub max_builds: Option<usize>,
    /// Builds fetched at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Prow's prowjobs.js (file or URL): stores state=error builds that have no GCS folder.
    /// Default: none.
    #[arg(long, value_name = "FILE|URL")]
    pub prowjobs: Option<String>,
    /// Cache folder for immutable artifacts fetched over HTTP.
    /// Default: no cache.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// List builds from Deck's job history (a Deck URL such as https://prow.k8s.io, or
    /// a folder of recorded pages) instead of listing the bucket.
    /// Default: none.
    #[arg(long, value_name = "URL|DIR")]
    pub deck: Option<String>,
    /// Job-history pages read per job with --deck (20 builds a page).
    #[arg(long, default_value_t = 5)]
    pub deck_pages: usize,
    /// Skip jobs whose latest-build.txt names a build already stored complete.
    #[arg(long)]
    pub incremental: bool,
    /// Do not store failure-line excerpts of failed builds' build-log.txt (stored by
    /// default: at most 20 excerpts and 64 KiB of text per build, from the log's last 16 MiB).
    #[arg(long)]
    pub no_log_excerpts: bool,
    /// HTTP timeout in seconds of each request; also the longest single wait a server
    /// may ask for (`Retry-After`). All waits share a 300 s retry budget.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

/// Why `--mirror DIR --all` found no job: DIR should be a bucket's folder (the one
/// holding `logs/`); the bucket folders found under it are named.
fn mirror_hint(dir: &std::path::Path) -> String {
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

/// Runs `citriage fetch`.
pub fn exec(ctx: &Context, a: &FetchArgs) -> Result<(), Failure> {
    let http = HttpOptions::per_request(Duration::from_secs(a.timeout.max(1)));
    let src: Box<dyn ArtifactSource> = match (&a.mirror, &a.gcs) {
        (Some(dir), _) => {
            if !dir.is_dir() {
                return Err(Failure::input(format!("{}: not a folder", dir.display())));
            }
            // A folder of buckets (a world's `gcs/`) is not a bucket: name the ones below
            // it before any store is created.
            let is_bucket = dir.join("logs").is_dir() || dir.join("pr-logs").is_dir();
            if !is_bucket
                && std::fs::read_dir(dir).is_ok_and(|rd| {
                    rd.flatten().any(|e| e.path().join("logs").is_dir() || e.path().join("pr-logs").is_dir())
                })
            {
                return Err(Failure::input(mirror_hint(dir)));
            }
            Box::new(LocalMirror::new(dir.clone(), a.bucket.clone()))
        }
        (None, Some(url)) => {
            if !citriage_sources::is_url(url) {
                return Err(Failure::input(format!("--gcs {url}: not an http(s) URL")));
            }
            Box::new(GcsHttp::new(url, &a.bucket, http.clone(), a.cache.clone()))
        }
        (None, None) => return Err(Failure::input("say where builds come from: --mirror DIR or --gcs URL")),
    };
    let mut store = ctx.open_store()?;
    let mut jobs = a.jobs.clone();
    if let Some(ds) = a.from_snapshot {
        let Some(s) = store.latest(ds)? else {
            return Err(Failure::input(format!("the store {} has no {ds} snapshot to take jobs from", store.path())));
        };
        jobs.extend(store.snapshot_job_names(s.id)?);
    }
    // Job folders the source listed but refused (unsafe or non-UTF-8 names, symlinks
    // out of a mirror): failures of the fetch, named, never left out silently.
    let mut refused_jobs = Vec::new();
    if a.all {
        let found = discover_job_list(src.as_ref()).map_err(|e| Failure::other(e.to_string()))?;
        jobs.extend(found.jobs);
        refused_jobs = found.refused;
    }
    jobs.sort();
    jobs.dedup();
    if jobs.is_empty() && a.prowjobs.is_none() {
        if let (true, Some(dir)) = (a.all, &a.mirror) {
            return Err(Failure::input(mirror_hint(dir)));
        }
        return Err(Failure::input("no jobs to fetch: give --job, --from-snapshot, --all or --prowjobs"));
    }
    let mut prowjob_errors = 0;
    if let Some(loc) = &a.prowjobs {
        let f = citriage_sources::read(loc, &http)?;
        let items = citriage_formats::prow::parse_prowjobs_js(&f.bytes, loc).map_err(Failure::input)?;
        prowjob_errors = ingest_prowjobs(&mut store, &a.bucket, &items)?;
    }
    // Jobs are listed while builds are fetched, so the total grows: counts and a
    // spinner, no bar that looks full from the start and no ETA.
    let bar = ctx.bar(
        "{spinner:.cyan} {msg}: {pos} done of {len} builds listed so far [{elapsed}]",
        "{spinner} {msg}: {pos} done of {len} builds listed so far [{elapsed}]",
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let started = std::time::Instant::now();
    bar.set_message(format!("fetching {} job(s) from {}", jobs.len(), src.describe()));
    let deck = a.deck.as_ref().map(|d| {
        std::sync::Arc::new(if citriage_sources::is_url(d) {
            citriage_sources::deck::DeckPages::http(d, http.clone())
        } else {
            citriage_sources::deck::DeckPages::local(d)
        })
    });
    let opts = IngestOptions {
        concurrency: a.concurrency.max(1),
        max_builds_per_job: a.max_builds,
        incremental: a.incremental,
        deck,
        deck_pages: a.deck_pages,
        log_excerpts: (!a.no_log_excerpts).then(ExcerptLimits::default),
        stop: None,
    };
    let progress = |p: Progress| match p {
        Progress::Discovered { builds, .. } => bar.inc_length(builds as u64),
        Progress::Build { .. } => bar.inc(1),
    };
    let mut summary =
        ingest_jobs(src.as_ref(), &mut store, &jobs, &opts, &progress).map_err(|e| Failure::other(e.to_string()))?;
    summary.failures.extend(refused_jobs.into_iter().map(|reason| citriage_ingest::FetchFailure {
        job: String::new(),
        path: String::new(),
        reason,
    }));
    bar.finish_and_clear();
    if ctx.json() {
        print_json(
            &json!({ "store": store.path(), "source": src.describe(), "summary": summary, "prowjob_errors_stored": prowjob_errors }),
        );
    } else {
        outln!(
            "{} job(s): {} build(s) found, {} stored, {} already complete, {} test result(s), {} log excerpt(s), {} with problems",
            summary.jobs,
            summary.builds_found,
            summary.builds_stored,
            summary.builds_skipped,
            summary.tests_stored,
            summary.excerpts_stored,
            summary.builds_with_problems
        );
        let secs = started.elapsed().as_secs_f64();
        if secs > 0.0 && summary.builds_stored > 0 {
            outln!(
                "{} build(s) stored in {secs:.1} s ({:.0} builds/s)",
                summary.builds_stored,
                summary.builds_stored as f64 / secs
            );
        }
        if summary.builds_with_problems > 0 {
            outln!(
                "builds with problems (malformed or missing files) keep each reason: see them on the dashboard's build pages (`{} serve`, /builds/JOB/ID)",
                crate::context::invocation()
            );
        }
        if a.prowjobs.is_some() {
            outln!("{prowjob_errors} state=error build(s) from prowjobs.js stored");
        }
        if !summary.failures.is_empty() {
            outln!("{} could not be fetched:", summary.failures.len());
            for f in &summary.failures {
                let at =
                    [f.job.as_str(), f.path.as_str()].iter().filter(|x| !x.is_empty()).copied().collect::<Vec<_>>();
                match at.is_empty() {
                    true => outln!("  {}", f.reason),
                    false => outln!("  {}: {}", at.join(" "), f.reason),
                }
            }
        }
    }
    if !summary.failures.is_empty() {
        return Err(Failure::other(format!(
            "{} build(s) or job(s) failed to fetch; rerun to resume",
            summary.failures.len()
        )));
    }
    Ok(())
}
