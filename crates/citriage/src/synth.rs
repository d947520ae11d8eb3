//! The `synth` command: generates a synthetic CI world with a progress bar.

use crate::cli::{print_json, Cli, Format, SynthArgs};
use crate::outln;
use crate::pipeline::Failure;
use citriage_synth::{generate, Phase, SynthParams, PRESETS};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::time::Instant;

pub(crate) fn synth(cli: &Cli, a: &SynthArgs) -> Result<(), Failure> {
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
    let bar = if cli.quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    if let Ok(st) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} [{elapsed}]") {
        bar.set_style(st.progress_chars("=> "));
    }
    let t = Instant::now();
    let res = generate(&p, &a.out, &mut |pr| {
        bar.set_length(pr.total);
        bar.set_position(pr.done);
        bar.set_message(match pr.phase {
            Phase::Jobs => format!("jobs ({} builds, {} MiB)", pr.builds, pr.bytes >> 20),
            Phase::Payloads => "payloads".to_string(),
            Phase::Aggregates => "dashboards and truth".to_string(),
            Phase::Done => "done".to_string(),
        });
    });
    bar.finish_and_clear();
    let summary = res.map_err(|e| Failure::input(e.to_string()))?;
    let secs = t.elapsed().as_secs_f64();
    if cli.format == Format::Json {
        print_json(&json!({"out": a.out.display().to_string(), "params": p, "summary": summary, "seconds": secs}));
    } else {
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
    Ok(())
}
