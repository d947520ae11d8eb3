//! `citriage fetch`: ingest Prow build artifacts (from a local mirror or GCS over
//! HTTP, optionally listed through Deck) into the store; resumable.

use crate::context::{parse_dataset, print_json, Context, Failure};
use crate::outln;
use citriage_app::fetch::FetchRequest;
use citriage_model::Dataset;
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

/// Runs `citriage fetch`.
pub fn exec(ctx: &Context, a: &FetchArgs) -> Result<(), Failure> {
    let req = FetchRequest {
        mirror: a.mirror.clone(),
        gcs: a.gcs.clone(),
        bucket: a.bucket.clone(),
        jobs: a.jobs.clone(),
        from_snapshot: a.from_snapshot,
        all: a.all,
        max_builds: a.max_builds,
        concurrency: a.concurrency,
        prowjobs: a.prowjobs.clone(),
        cache: a.cache.clone(),
        deck: a.deck.clone(),
        deck_pages: a.deck_pages,
        incremental: a.incremental,
        log_excerpts: !a.no_log_excerpts,
        timeout: Duration::from_secs(a.timeout),
    };
    let src = citriage_app::fetch::source(&req)?;
    let mut store = ctx.open_store()?;
    // Jobs are listed while builds are fetched, so the total grows: counts and a
    // spinner, no bar that looks full from the start and no ETA.
    let bar = ctx.bar(
        "{spinner:.cyan} {msg}: {pos} done of {len} builds listed so far [{elapsed}]",
        "{spinner} {msg}: {pos} done of {len} builds listed so far [{elapsed}]",
    );
    bar.tick_every(200);
    let fetched = citriage_app::fetch::fetch(&mut store, src.as_ref(), &req, &bar)?;
    let summary = &fetched.summary;
    let prowjob_errors = fetched.prowjob_errors;
    bar.clear();
    if ctx.json() {
        print_json(
            &json!({ "store": store.path(), "source": fetched.source, "summary": summary, "prowjob_errors_stored": prowjob_errors }),
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
        let secs = fetched.seconds;
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
    Ok(fetched.outcome()?)
}
