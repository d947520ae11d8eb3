//! `citriage metrics`: job and test metrics from the stored builds — kettle's
//! dashboards reproduced (`--emit kettle`), or corrected figures with flake signals
//! and bias flags.

use crate::context::{print_json, print_json_with_list, Context, Failure};
use crate::outln;
use citriage_analysis::metrics::corrected::JobFigures;
use citriage_app::metrics::{Metrics, MetricsRequest};
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
    let req = MetricsRequest {
        as_of: a.as_of.clone(),
        window: a.window,
        jobs: a.jobs.clone(),
        kettle_to: a.emit.map(|Emit::Kettle| a.out.clone()),
    };
    let pb = ctx.spinner("loading builds");
    let computed = citriage_app::metrics::metrics(&mut store, &req, &pb)?;
    pb.clear();
    let (as_of, window_days, figs) = match computed {
        Metrics::Kettle { as_of, files: [fp, kp] } => {
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
        Metrics::Figures { as_of, window_days, jobs } => (as_of, window_days, jobs),
    };
    if ctx.json() {
        let head = serde_json::Map::from_iter([
            ("as_of".to_string(), json!(as_of)),
            ("window_days".into(), json!(window_days)),
        ]);
        print_json_with_list(head, "jobs", &figs);
        return Ok(());
    }
    print_jobs(&figs, as_of, window_days);
    print_contradicted(&figs);
    print_flaky(&figs, as_of, window_days);
    Ok(())
}

/// One line per job with its figures and flags.
fn print_jobs(figs: &[JobFigures], as_of: i64, window_days: i64) {
    outln!("as of {} (window {} days): {} job(s)", Day::from_unix_seconds(as_of), window_days, figs.len());
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
    for f in figs {
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
}

/// The ratings the builds contradict.
fn print_contradicted(figs: &[JobFigures]) {
    let one_line = citriage_model::escape::one_line;
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
}

/// The flaky tests, most actionable first (at most 20).
fn print_flaky(figs: &[JobFigures], as_of: i64, window_days: i64) {
    let one_line = citriage_model::escape::one_line;
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
            window_days,
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
}
