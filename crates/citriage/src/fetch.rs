//! The `fetch` and `metrics` commands: ingest Prow build artifacts into the store,
//! and compute kettle and corrected metrics from the stored builds.

use crate::cli::{open_store, print_json, spinner, Cli, Emit, FetchArgs, Format, MetricsArgs};
use crate::outln;
use crate::pipeline::Failure;
use citriage_analysis::metrics::corrected::{job_figures, Settings};
use citriage_analysis::metrics::kettle;
use citriage_analysis::AnalysisConfig;
use citriage_ingest::{discover_jobs, ingest_jobs, ingest_prowjobs, ExcerptLimits, IngestOptions, Progress};
use citriage_model::build::BuildRecord;
use citriage_model::Day;
use citriage_sources::artifacts::{ArtifactSource, GcsHttp, LocalMirror};
use citriage_sources::HttpOptions;
use citriage_store::Store;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::time::Duration;

pub(crate) fn fetch(cli: &Cli, a: &FetchArgs) -> Result<(), Failure> {
    let http = HttpOptions { timeout: Duration::from_secs(a.timeout.max(1)), ..HttpOptions::default() };
    let src: Box<dyn ArtifactSource> = match (&a.mirror, &a.gcs) {
        (Some(dir), _) => {
            if !dir.is_dir() {
                return Err(Failure::input(format!("{}: not a folder", dir.display())));
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
    let mut store = open_store(cli)?;
    let mut jobs = a.jobs.clone();
    if let Some(ds) = a.from_snapshot {
        let Some(s) = store.latest(ds)? else {
            return Err(Failure::input(format!("the store {} has no {ds} snapshot to take jobs from", store.path())));
        };
        jobs.extend(store.snapshot_job_names(s.id)?);
    }
    if a.all {
        jobs.extend(discover_jobs(src.as_ref()).map_err(|e| Failure::other(e.to_string()))?);
    }
    jobs.sort();
    jobs.dedup();
    if jobs.is_empty() && a.prowjobs.is_none() {
        return Err(Failure::input("no jobs to fetch: give --job, --from-snapshot, --all or --prowjobs"));
    }
    let mut prowjob_errors = 0;
    if let Some(loc) = &a.prowjobs {
        let f = citriage_sources::read(loc, &http).map_err(|e| {
            if e.is_bad_input() {
                Failure::input(e.to_string())
            } else {
                Failure::other(e.to_string())
            }
        })?;
        let items = citriage_formats::prow::parse_prowjobs_js(&f.bytes, loc).map_err(Failure::input)?;
        prowjob_errors = ingest_prowjobs(&mut store, &a.bucket, &items)?;
    }
    let bar = if cli.quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    let tpl = if std::env::var_os("NO_COLOR").is_some() {
        "{msg} [{bar:30}] {pos}/{len} builds ({per_sec}, eta {eta})"
    } else {
        "{msg} [{bar:30.cyan/blue}] {pos}/{len} builds ({per_sec}, eta {eta})"
    };
    if let Ok(st) = ProgressStyle::with_template(tpl) {
        bar.set_style(st.progress_chars("=> "));
    }
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
    };
    let progress = |p: Progress| match p {
        Progress::Discovered { builds, .. } => bar.inc_length(builds as u64),
        Progress::Build { .. } => bar.inc(1),
    };
    let summary =
        ingest_jobs(src.as_ref(), &mut store, &jobs, &opts, &progress).map_err(|e| Failure::other(e.to_string()))?;
    bar.finish_and_clear();
    if cli.format == Format::Json {
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
        if a.prowjobs.is_some() {
            outln!("{prowjob_errors} state=error build(s) from prowjobs.js stored");
        }
        if !summary.failures.is_empty() {
            outln!("{} could not be fetched:", summary.failures.len());
            for f in &summary.failures {
                outln!("  {} {}: {}", f.job, f.path, f.reason);
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

/// Loads stored builds job by job, with test results only for builds started after
/// `tests_since` (all when `None`), and only for `jobs` (dashboard names) when given.
pub fn load_builds_filtered(
    store: &mut Store,
    tests_since: Option<i64>,
    jobs: Option<&std::collections::BTreeSet<String>>,
) -> Result<Vec<BuildRecord>, Failure> {
    let mut out = Vec::new();
    for job in store.build_jobs()? {
        if let Some(set) = jobs {
            if !set.contains(&job) && !set.contains(&format!("pr:{job}")) {
                continue;
            }
        }
        out.extend(store.job_builds_with_tests(&job, tests_since)?);
    }
    Ok(out)
}

/// Loads every stored build with all its tests (small stores and tests).
pub fn load_builds(store: &mut Store) -> Result<Vec<BuildRecord>, Failure> {
    load_builds_filtered(store, None, None)
}

/// Parses `--as-of`: a date (its last second, UTC) or Unix seconds.
pub fn parse_as_of(s: &str) -> Result<i64, Failure> {
    if let Some(d) = Day::parse(s) {
        return Ok(d.0 * 86_400 + 86_399);
    }
    s.parse::<i64>().map_err(|_| Failure::input(format!("--as-of {s:?}: expected YYYY-MM-DD or Unix seconds")))
}

/// The default as-of: the end of the day of the newest stored build.
pub fn default_as_of(builds: &[BuildRecord]) -> i64 {
    let newest = builds.iter().filter_map(|b| b.started).max().unwrap_or(0);
    Day::from_unix_seconds(newest).0 * 86_400 + 86_399
}

pub(crate) fn metrics(cli: &Cli, a: &MetricsArgs) -> Result<(), Failure> {
    let mut store = open_store(cli)?;
    let pb = spinner(cli.quiet, "loading builds");
    let all = store.builds(None)?;
    if all.is_empty() {
        pb.finish_and_clear();
        return Err(Failure::input(format!("the store {} has no builds: run `citriage fetch` first", store.path())));
    }
    let as_of = match &a.as_of {
        Some(s) => parse_as_of(s)?,
        None => default_as_of(&all),
    };
    let window = a.window.max(1);
    let mut settings = Settings::new(as_of, AnalysisConfig::default().harness_test_names);
    settings.window_days = window;
    // Job by job, with tests only inside the longest window needed: memory stays
    // bounded by one job's recent history.
    let tests_since = as_of - window.max(7) * 86_400 - 86_400;
    let failures_rows = kettle::failures_rows(&all, as_of);
    drop(all);
    let mut flakes_rows = Vec::new();
    let mut figs = Vec::new();
    let jobs = store.build_jobs()?;
    pb.set_message(format!("computing metrics for {} jobs", jobs.len()));
    for job in &jobs {
        let builds = store.job_builds_with_tests_opts(job, Some(tests_since), false)?;
        if a.emit.is_some() {
            flakes_rows.extend(kettle::flakes_rows(&builds, as_of));
        } else {
            figs.extend(job_figures(&builds, &settings));
        }
    }
    if let Some(Emit::Kettle) = a.emit {
        flakes_rows.sort_by(|x, y| x.job.cmp(&y.job));
        std::fs::create_dir_all(&a.out).map_err(|e| Failure::other(format!("{}: {e}", a.out.display())))?;
        let f = kettle::failures_json(&failures_rows);
        let k = kettle::flakes_json(&flakes_rows);
        let fp = a.out.join("failures-latest.json");
        let kp = a.out.join("flakes-latest.json");
        std::fs::write(&fp, f).map_err(|e| Failure::other(format!("{}: {e}", fp.display())))?;
        std::fs::write(&kp, k).map_err(|e| Failure::other(format!("{}: {e}", kp.display())))?;
        pb.finish_and_clear();
        if cli.format == Format::Json {
            print_json(&json!({"as_of": as_of, "files": [fp.display().to_string(), kp.display().to_string()]}));
        } else {
            outln!(
                "kettle dashboards as of {} written: {} {}",
                Day::from_unix_seconds(as_of),
                fp.display(),
                kp.display()
            );
        }
        return Ok(());
    }
    figs.sort_by(|x, y| x.job.cmp(&y.job));
    if !a.jobs.is_empty() {
        figs.retain(|f| a.jobs.contains(&f.job));
    }
    pb.finish_and_clear();
    if cli.format == Format::Json {
        print_json(&json!({"as_of": as_of, "window_days": settings.window_days, "jobs": figs}));
        return Ok(());
    }
    outln!("as of {} (window {} days): {} job(s)", Day::from_unix_seconds(as_of), settings.window_days, figs.len());
    outln!(
        "{:<52} {:>9} {:>6} {:>4} {:>4} {:>7} {:>10} {:>7}  flags",
        "job",
        "pass rate",
        "n",
        "err",
        "abrt",
        "streak",
        "last pass",
        "k.cons"
    );
    for f in &figs {
        let flaky = f.tests.iter().filter(|t| t.is_flaky()).count();
        let mut flags: Vec<String> = f.flags.iter().map(|x| x.kind.clone()).collect();
        if flaky > 0 {
            flags.push(format!("{flaky} flaky test(s)"));
        }
        outln!(
            "{:<52} {:>9} {:>6} {:>4} {:>4} {:>7} {:>10} {:>7}  {}",
            truncate(&f.job, 52),
            f.pass_rate.map(|r| format!("{:.1}%", r * 100.0)).unwrap_or_else(|| "-".into()),
            f.sample,
            f.errors,
            f.aborted,
            f.streak_builds,
            f.last_pass.map(|d| d.to_string()).unwrap_or_else(|| "never".into()),
            f.kettle_consistency.map(|c| format!("{c:.3}")).unwrap_or_else(|| "-".into()),
            flags.join(", ")
        );
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}
