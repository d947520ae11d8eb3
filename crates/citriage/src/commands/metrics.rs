//! `citriage metrics`: job and test metrics from the stored builds — kettle's
//! dashboards reproduced (`--emit kettle`), or corrected figures with flake signals
//! and bias flags.

use crate::builds::{default_as_of, parse_as_of};
use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_analysis::metrics::corrected::{job_figures, Settings};
use citriage_analysis::metrics::kettle;
use citriage_analysis::AnalysisConfig;
use citriage_model::time::DAY;
use citriage_model::Day;
use clap::{Args, ValueEnum};
use serde_json::json;
use std::path::PathBuf;

/// Job and test metrics from the stored builds: kettle's dashboard figures
/// reproduced, and corrected figures with flake signals and bias flags.
#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// End of the window: a date (its end, UTC) or Unix seconds. Default: the end of
    /// the day of the newest stored build.
    #[arg(long, value_name = "DATE|SECONDS")]
    pub as_of: Option<String>,
    /// Window length in days for the corrected figures.
    #[arg(long, default_value_t = 7)]
    pub window: i64,
    /// Only these jobs (dashboard naming). Repeatable.
    #[arg(long = "job", value_name = "JOB")]
    pub jobs: Vec<String>,
    /// Write the dashboards' JSON (`failures-latest.json`, `flakes-latest.json`) as
    /// kettle would compute them from the stored builds.
    /// Default: print the corrected figures, write nothing.
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// Where `--emit` writes.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Kettle,
}

/// Runs `citriage metrics`.
pub fn exec(ctx: &Context, a: &MetricsArgs) -> Result<(), Failure> {
    let mut store = ctx.open_existing_store()?;
    let pb = ctx.spinner("loading builds");
    let all = store.builds(None)?;
    if all.is_empty() {
        pb.finish_and_clear();
        return Err(Failure::input(format!(
            "the store {} has no builds: run `{} fetch` first",
            store.path(),
            crate::context::invocation()
        )));
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
    let tests_since = as_of - window.max(7) * DAY - DAY;
    let failures_rows = kettle::failures_rows(&all, as_of);
    drop(all);
    let mut flakes_rows = Vec::new();
    let mut figs = Vec::new();
    let jobs = store.build_jobs()?;
    pb.set_message(format!("computing metrics for {} jobs", jobs.len()));
    for job in &jobs {
        let builds = store.job_builds_with_tests_opts(job, Some(tests_since), a.emit.is_none())?;
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
        if ctx.json() {
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
    if ctx.json() {
        print_json(&json!({"as_of": as_of, "window_days": settings.window_days, "jobs": figs}));
        return Ok(());
    }
    outln!("as of {} (window {} days): {} job(s)", Day::from_unix_seconds(as_of), settings.window_days, figs.len());
    // Job names are printed whole, so they can be copied: the column is as wide as the
    // longest. Each on one line: a line break in a name is shown as `\n`.
    let one_line = citriage_model::escape::one_line;
    let w = figs.iter().map(|f| one_line(&f.job).chars().count()).max().unwrap_or(0).max(3);
    outln!(
        "{:<w$} {:>9} {:>6} {:>4} {:>4} {:>7} {:>10} {:>7}  flags",
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
            "{:<w$} {:>9} {:>6} {:>4} {:>4} {:>7} {:>10} {:>7}  {}",
            one_line(&f.job),
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
    let contradicted: Vec<(&str, &str)> = figs
        .iter()
        .flat_map(|f| {
            f.flags.iter().filter(|x| x.kind == "contradicted-rating").map(|x| (f.job.as_str(), x.detail.as_str()))
        })
        .collect();
    if !contradicted.is_empty() {
        outln!();
        outln!("ratings the builds contradict ({}):", contradicted.len());
        for (job, detail) in &contradicted {
            outln!("  {}: {}", one_line(job), one_line(detail));
        }
    }
    let mut flaky: Vec<(&str, &citriage_analysis::metrics::corrected::TestFigures)> =
        figs.iter().flat_map(|f| f.tests.iter().filter(|t| t.is_flaky()).map(move |t| (f.job.as_str(), t))).collect();
    flaky.sort_by(|a, b| {
        b.1.actionability.total_cmp(&a.1.actionability).then_with(|| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)))
    });
    if !flaky.is_empty() {
        outln!();
        outln!(
            "flaky tests, most actionable first ({}; window {} days to {}; environment events and shared causes left out):",
            flaky.len(),
            settings.window_days,
            Day::from_unix_seconds(as_of)
        );
        for (job, t) in flaky.iter().take(20) {
            let fired: Vec<String> =
                t.signals.iter().filter(|x| x.fired).map(|x| format!("{} ({} runs)", x.kind, x.runs)).collect();
            outln!(
                "  {} :: {}  failed {} of {} runs; {}",
                one_line(job),
                one_line(&t.name),
                t.failed_runs,
                t.runs,
                fired.join(", ")
            );
            if let Some(b) = t.signals.iter().filter(|x| x.fired).flat_map(|x| x.builds.first()).next() {
                outln!("      e.g. {}", one_line(b));
            }
        }
        if flaky.len() > 20 {
            outln!("  … {} more (`--format json` lists every test with its signals and builds)", flaky.len() - 20);
        }
    }
    Ok(())
}
