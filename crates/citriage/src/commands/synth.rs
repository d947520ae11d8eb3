//! `citriage synth`: generate a synthetic CI world with a progress bar.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::Progress;
use citriage_synth::{generate, generate_days, DaySlice, Phase, SynthParams, PRESETS};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Generate a synthetic CI world (Prow/GCS mirror, dashboards, payload stream and
/// truth.json) into a folder; same seed and parameters, same bytes.
#[derive(Args, Debug)]
pub struct SynthArgs {
    /// Size preset: tiny (tests), demo, k8s (1,500 jobs, ~100k builds; benchmarks).
    #[arg(long, default_value = "demo")]
    pub preset: String,
    /// Output folder (must be missing or empty).
    #[arg(long)]
    pub out: PathBuf,
    /// World seed (same seed and parameters, byte-identical world). Default: the preset's.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of Kubernetes Prow jobs. Default: the preset's (tiny 28, demo 150, k8s 1,500).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Mean builds per job over the history. Default: the preset's.
    #[arg(long)]
    pub builds_per_job: Option<usize>,
    /// Days of history ending at --end-date. Default: the preset's.
    #[arg(long)]
    pub days: Option<u32>,
    /// Last day of the world (YYYY-MM-DD). Default: the preset's (2026-11-21).
    #[arg(long)]
    pub end_date: Option<String>,
    /// Rate of environment failures in otherwise healthy periods (0 to 1). Default: the preset's.
    #[arg(long)]
    pub failure_rate: Option<f64>,
    /// Mean lines per build log. Default: the preset's.
    #[arg(long)]
    pub log_lines: Option<usize>,
    /// OpenShift nightly payloads (0: no OpenShift part). Default: the preset's.
    #[arg(long)]
    pub payloads: Option<usize>,
    /// Worker threads (0 = all cores); does not change the output.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Also plant the suspect stories: git histories of a tested repository and of a
    /// job-configuration repository under `git/` (bare repositories to give `suspects
    /// --checkout`), jobs failing from onsets some of their commits introduced or
    /// exposed, and `truth/suspects.json`. Needs git.
    #[arg(long)]
    pub suspect_stories: bool,
    /// Also plant the pull-request stories (`truth/prs.json`, for `citriage pr` and
    /// `bench pr`): PRs that break a test, PRs hit only by flaky tests, by an ongoing
    /// base-branch pattern or by an infrastructure event.
    #[arg(long)]
    pub pr_stories: bool,
    /// Only a slice of the world's days: `N` or `A..B` (both included), day 1 being
    /// the first of the window (--end-date minus --days plus one). Writes the build
    /// folders of the builds started on those days, byte-identical to the whole
    /// world's (every build is still planned, so the same seed gives the same builds);
    /// the world's other files (job histories and latest-build.txt, prowjobs.js,
    /// k8s-metrics dashboards, TestGrid, the OpenShift payload stream, truth) are
    /// written only by the slice holding the last day, which renders every build to
    /// compute them. Slices covering every day once, in separate folders, make up the
    /// whole world; fetching them one after the other gives the store fetching the
    /// whole world gives. Not with --suspect-stories. Default: the whole world.
    #[arg(long, value_name = "N|A..B", value_parser = DaySlice::parse)]
    pub day_slice: Option<DaySlice>,
}

/// Runs `citriage synth`.
pub fn exec(ctx: &Context, a: &SynthArgs) -> Result<(), Failure> {
    let Some(mut p) = SynthParams::preset(&a.preset) else {
        return Err(Failure::input(format!("unknown preset {:?} (one of {})", a.preset, PRESETS.join(", "))));
    };
    if let Some(v) = a.seed {
        p.seed = v;
    }
    if let Some(v) = a.jobs {
        p.jobs = v;
    }
    if let Some(v) = a.builds_per_job {
        p.builds_per_job = v;
    }
    if let Some(v) = a.days {
        p.days = v;
    }
    if let Some(v) = &a.end_date {
        p.end_date = v.clone();
    }
    if let Some(v) = a.failure_rate {
        p.failure_rate = v;
    }
    if let Some(v) = a.log_lines {
        p.log_lines = v;
    }
    if let Some(v) = a.payloads {
        p.payloads = v;
    }
    p.threads = a.threads;
    p.suspect_stories = a.suspect_stories;
    p.pr_stories = a.pr_stories;
    let template = "{msg} [{bar:30}] {pos}/{len} [{elapsed}]";
    let bar = ctx.bar(template, template);
    let t = Instant::now();
    let res = match a.day_slice {
        Some(s) => generate_days(&p, s, &a.out, &mut |pr| draw(&bar, pr)),
        None => generate(&p, &a.out, &mut |pr| draw(&bar, pr)),
    };
    bar.clear();
    let summary = res.map_err(|e| Failure::input(e.to_string()))?;
    let secs = t.elapsed().as_secs_f64();
    if ctx.json() {
        let mut doc = json!({"out": a.out.display().to_string(), "params": p, "summary": summary, "seconds": secs});
        if let Some(s) = a.day_slice {
            doc["day_slice"] = json!(s.to_string());
        }
        print_json(&doc);
    } else if let (Some(s), Some(n)) = (a.day_slice, summary.slice_builds) {
        outln!(
            "{}: days {s} of {}: {n} build folders, {} files, {:.1} MiB in {:.1}s{}",
            a.out.display(),
            p.days,
            summary.files,
            summary.bytes as f64 / 1048576.0,
            secs,
            if s.has_last_day(p.days) { " (with the world's dashboards, histories and truth)" } else { "" }
        );
    } else {
        print_summary(a, &summary, secs);
    }
    Ok(())
}

fn draw(bar: &crate::context::Bar, pr: citriage_synth::Progress) {
    bar.total(pr.total);
    bar.position(pr.done);
    bar.doing(&match pr.phase {
        Phase::Jobs => format!("jobs ({} builds, {} MiB)", pr.builds, pr.bytes >> 20),
        Phase::Payloads => "payloads".to_string(),
        Phase::Aggregates => "dashboards and truth".to_string(),
        Phase::Done => "done".to_string(),
    });
}

fn print_summary(a: &SynthArgs, summary: &citriage_synth::Summary, secs: f64) {
    outln!(
        "{}: {} jobs, {} builds ({} failed, {} errored), {} failed tests, {} payloads, {} files, {:.1} MiB in {:.1}s ({:.0} builds/s)",
        a.out.display(),
        summary.jobs,
        summary.builds,
        summary.failed_builds,
        summary.error_builds,
        summary.failed_tests,
        summary.payloads,
        summary.files,
        summary.bytes as f64 / 1048576.0,
        secs,
        summary.builds as f64 / secs.max(1e-9)
    );
}
