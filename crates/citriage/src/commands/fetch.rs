//! `citriage fetch`: ingest Prow build artifacts (from a local mirror or GCS over
//! HTTP, optionally listed through Deck) into the store; resumable. Or TestGrid's
//! tables (`--testgrid URL`, `--testgrid-file FILE`): see [`TestgridArgs`].

use crate::context::{parse_dataset, print_json, Context, Failure};
use crate::outln;
use citriage_app::fetch::FetchRequest;
use citriage_model::Dataset;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// Ingest Prow build artifacts (started/finished/prowjob JSON, JUnit) from a GCS
/// bucket over HTTP or a local mirror into the store; resumable. Or read TestGrid:
/// `--testgrid URL` (a dashboard's every tab, or one tab) or `--testgrid-file FILE` (a
/// saved table answer, offline): each run a build, each cell a test result, merged
/// with the builds other sources stored.
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
    /// Fetch only one pull request's runs (ORG/REPO#N): its job folders under
    /// `pr-logs/pull/[SEGMENT/]N/`, every build of each, for `citriage pr`.
    /// Default: none.
    #[arg(long, value_name = "ORG/REPO#N", conflicts_with_all = ["jobs", "all", "from_snapshot", "deck"])]
    pub pr: Option<String>,
    #[command(flatten)]
    pub testgrid: TestgridArgs,
}

/// Runs `citriage fetch`.
pub fn exec(ctx: &Context, a: &FetchArgs) -> Result<(), Failure> {
    if a.testgrid.url.is_some() || a.testgrid.file.is_some() {
        return exec_testgrid(ctx, &a.testgrid, a.timeout);
    }
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
        pr: a.pr.as_deref().map(citriage_app::pr::PrTarget::parse).transpose()?,
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

/// Where TestGrid is read from (instead of a bucket).
#[derive(Args, Debug)]
pub struct TestgridArgs {
    /// A TestGrid URL as copied from the browser: `https://testgrid.k8s.io/DASHBOARD`
    /// (every tab of the dashboard), `.../DASHBOARD#TAB` or `.../DASHBOARD/table?tab=TAB`
    /// (that tab). Only that host is contacted. A tab that cannot be read is named and
    /// skipped; the others are stored (exit code 2 when a tab's answer was refused, 1 when the network failed).
    /// Default: none.
    #[arg(
        long = "testgrid",
        value_name = "URL",
        conflicts_with_all = ["mirror", "gcs", "jobs", "all", "from_snapshot", "prowjobs", "deck", "file"]
    )]
    pub url: Option<String>,
    /// A saved TestGrid table answer (the JSON of `DASHBOARD/table?tab=TAB`; a file,
    /// or a URL of one), read offline and stored as a tab of --testgrid-dashboard.
    /// Default: none.
    #[arg(
        long = "testgrid-file",
        value_name = "FILE|URL",
        conflicts_with_all = ["mirror", "gcs", "jobs", "all", "from_snapshot", "prowjobs", "deck"]
    )]
    pub file: Option<String>,
    /// The dashboard a saved table is stored under.
    /// Default: `saved`.
    #[arg(long = "testgrid-dashboard", value_name = "NAME", requires = "file")]
    pub dashboard: Option<String>,
    /// The tab a saved table is stored as.
    /// Default: the file's name without `.json` and `.table`.
    #[arg(long = "testgrid-tab", value_name = "NAME", requires = "file")]
    pub tab: Option<String>,
}

/// `fetch --testgrid URL` / `--testgrid-file FILE`.
fn exec_testgrid(ctx: &Context, a: &TestgridArgs, timeout: u64) -> Result<(), Failure> {
    use citriage_app::testgrid::{fetch_testgrid, plan, TestgridRequest};
    let req = TestgridRequest {
        url: a.url.clone(),
        file: a.file.clone(),
        dashboard: a.dashboard.clone(),
        tab: a.tab.clone(),
        timeout: Duration::from_secs(timeout),
        ..TestgridRequest::default()
    };
    let plan = plan(&req)?;
    let mut store = ctx.open_store()?;
    let bar = ctx.bar(
        "{spinner:.cyan} {msg}: {pos} of {len} tab(s) [{elapsed}]",
        "{spinner} {msg}: {pos} of {len} tab(s) [{elapsed}]",
    );
    bar.tick_every(200);
    let fetched = fetch_testgrid(&mut store, &plan, &req, &bar)?;
    bar.clear();
    let s = &fetched.summary;
    // Names and reasons come from TestGrid's answers: shown on one line, control
    // characters escaped.
    let text = citriage_model::escape::one_line;
    if ctx.json() {
        print_json(&json!({ "store": store.path(), "source": fetched.source, "testgrid": s }));
    } else {
        for t in &s.tabs {
            let cells: Vec<String> = t.cells.iter().filter(|(_, n)| **n > 0).map(|(k, n)| format!("{k} {n}")).collect();
            outln!(
                "{}/{} (job {}): {} run(s) × {} row(s); {} build(s) written, {} unchanged, {} merged with other sources; {} test result(s); cells: {}",
                text(&t.dashboard),
                text(&t.tab),
                text(&t.job),
                t.columns,
                t.rows,
                t.builds_written,
                t.builds_unchanged,
                t.builds_merged,
                t.results,
                cells.join(", ")
            );
        }
        outln!("{} tab(s) stored, {} build(s) written in {:.1} s", s.tabs.len(), s.builds_written(), fetched.seconds);
        if !s.failures.is_empty() {
            outln!("{} tab(s) not stored:", s.failures.len());
            for f in &s.failures {
                outln!("  {}/{}: {}", text(&f.dashboard), text(&f.tab), text(&f.reason));
            }
        }
    }
    Ok(fetched.outcome()?)
}
