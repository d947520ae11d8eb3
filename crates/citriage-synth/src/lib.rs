//! `citriage-synth`: a deterministic generator of a synthetic CI world — a
//! Prow/GCS mirror with build logs and JUnit, Deck job history, `prowjobs.js`,
//! k8s-metrics dashboards computed the way kettle does, an OpenShift
//! release-controller payload stream with PR diffs, and a `truth.json` that
//! records every planted answer. Same seed and parameters, same bytes.
//!
//! The layout and the truth schema are documented in `docs/synthetic-world.md`.

mod build;
mod catalog;
mod fixes;
mod jobs;
mod junit;
mod kettle;
mod logs;
mod out;
mod payload;
mod prow;
mod repos;
mod rng;
mod suites;
mod text;
mod truth;

use citriage_model::time;
use citriage_model::Day;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use out::SynthError;

/// Generation parameters. Every field influences the output; nothing else
/// does (no wall clock, no environment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthParams {
    /// World seed.
    pub seed: u64,
    /// Number of Kubernetes Prow jobs.
    pub jobs: usize,
    /// Mean builds per job over the history.
    pub builds_per_job: usize,
    /// Days of history, ending at `end_date`.
    pub days: u32,
    /// Last day of the world (`YYYY-MM-DD`, UTC); the world ends at 23:59:59.
    pub end_date: String,
    /// Base rate of environment failures in healthy periods (0..1).
    pub failure_rate: f64,
    /// Mean lines per build log.
    pub log_lines: usize,
    /// Mean test cases per build.
    pub tests_per_build: usize,
    /// Consecutive daily dashboard snapshots ending at `end_date`.
    pub dashboard_days: u32,
    /// Hours of builds listed in `prowjobs.js` (Prow keeps recent ProwJobs only).
    pub prowjobs_hours: u32,
    /// OpenShift nightly payloads in the release stream (0 disables it).
    pub payloads: usize,
    /// Worker threads (0 = all cores). Does not change the output.
    pub threads: usize,
    /// Plant the fix stories (`fixes` in the truth): three patterns, an issue and a
    /// fix pull request each; one fix works, one does not, one fixes only master.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fix_stories: bool,
}

impl Default for SynthParams {
    fn default() -> Self {
        SynthParams::preset("demo").unwrap_or(SynthParams {
            seed: 1,
            jobs: 1,
            builds_per_job: 1,
            days: 45,
            end_date: DEFAULT_END_DATE.to_string(),
            failure_rate: 0.05,
            log_lines: 100,
            tests_per_build: 10,
            dashboard_days: 3,
            prowjobs_hours: 48,
            payloads: 0,
            threads: 0,
            fix_stories: false,
        })
    }
}

/// The default last day of the world.
pub const DEFAULT_END_DATE: &str = "2026-11-21";

/// Names accepted by [`SynthParams::preset`].
pub const PRESETS: &[&str] = &["tiny", "demo", "k8s"];

impl SynthParams {
    /// `tiny` (tests, well under a second in release), `demo` (the README's
    /// first command, seconds), `k8s` (1,500 jobs, ~100k builds, ~1M failed
    /// tests, GBs of logs; benchmarks only).
    pub fn preset(name: &str) -> Option<SynthParams> {
        let base = SynthParams {
            seed: 20_261_121,
            jobs: 0,
            builds_per_job: 0,
            days: 0,
            end_date: DEFAULT_END_DATE.to_string(),
            failure_rate: 0.05,
            log_lines: 0,
            tests_per_build: 0,
            dashboard_days: 0,
            prowjobs_hours: 48,
            payloads: 0,
            threads: 0,
            fix_stories: false,
        };
        match name {
            "tiny" => Some(SynthParams {
                jobs: 28,
                builds_per_job: 12,
                days: 45,
                log_lines: 60,
                tests_per_build: 10,
                dashboard_days: 3,
                payloads: 11,
                ..base
            }),
            "demo" => Some(SynthParams {
                jobs: 150,
                builds_per_job: 24,
                days: 60,
                log_lines: 200,
                tests_per_build: 30,
                dashboard_days: 7,
                payloads: 24,
                ..base
            }),
            "k8s" => Some(SynthParams {
                jobs: 1500,
                builds_per_job: 50,
                days: 90,
                failure_rate: 0.12,
                log_lines: 200,
                tests_per_build: 170,
                dashboard_days: 7,
                payloads: 60,
                ..base
            }),
            _ => None,
        }
    }

    /// Checks the parameters; returns a description of the first problem.
    pub fn validate(&self) -> Result<(), SynthError> {
        let bad = |m: &str| Err(SynthError::Params(m.to_string()));
        match Day::parse(&self.end_date) {
            // Prow's snowflake build ids cover 2011..2100 comfortably.
            Some(d) if Day::from_ymd(2011, 1, 1) <= Some(d) && Some(d) <= Day::from_ymd(2100, 12, 31) => {}
            Some(_) => return bad("end_date must be between 2011-01-01 and 2100-12-31"),
            None => return bad("end_date must be a valid YYYY-MM-DD date"),
        }
        if self.jobs == 0 {
            return bad("jobs must be at least 1");
        }
        if self.builds_per_job == 0 {
            return bad("builds_per_job must be at least 1");
        }
        if self.days < 2 || self.days > 3650 {
            return bad("days must be between 2 and 3650");
        }
        if !(0.0..=1.0).contains(&self.failure_rate) {
            return bad("failure_rate must be within 0..1");
        }
        if self.dashboard_days == 0 || self.dashboard_days > self.days {
            return bad("dashboard_days must be between 1 and days");
        }
        if self.jobs > 100_000
            || self.builds_per_job > 100_000
            || self.log_lines > 100_000
            || self.tests_per_build > 100_000
        {
            return bad("jobs, builds_per_job, log_lines and tests_per_build are limited to 100,000 each");
        }
        if self.payloads > 10_000 {
            return bad("payloads is limited to 10,000");
        }
        if self.fix_stories && self.days < fixes::MIN_DAYS {
            return bad("the fix stories need at least 30 days of history");
        }
        Ok(())
    }
}

/// Which stage a progress report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Kubernetes jobs: `done`/`total` count jobs.
    Jobs,
    /// OpenShift payloads: `done`/`total` count payloads.
    Payloads,
    /// Dashboards, history and truth files.
    Aggregates,
    /// Finished.
    Done,
}

/// A progress report (the library prints nothing; the caller draws).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Progress {
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
    /// Builds generated so far (all phases).
    pub builds: u64,
    /// Bytes written so far.
    pub bytes: u64,
}

/// What was generated (no timings: they are not part of the world).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Summary {
    pub jobs: u64,
    pub builds: u64,
    pub gcs_builds: u64,
    pub success_builds: u64,
    pub failed_builds: u64,
    pub aborted_builds: u64,
    pub error_builds: u64,
    pub pending_builds: u64,
    pub failed_tests: u64,
    pub flaky_tests: u64,
    pub payloads: u64,
    pub payload_job_runs: u64,
    pub pull_request_diffs: u64,
    pub files: u64,
    pub bytes: u64,
}

fn ensure_empty(dir: &Path) -> Result<(), SynthError> {
    match fs::read_dir(dir) {
        Ok(mut it) => {
            if it.next().is_some() {
                return Err(SynthError::NotEmpty(dir.to_path_buf()));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => fs::create_dir_all(dir).map_err(|e| out::io_err(dir, e)),
        Err(e) => Err(out::io_err(dir, e)),
    }
}

/// Generates the world into `out_dir` (which must be missing or empty).
pub fn generate(
    params: &SynthParams,
    out_dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary, SynthError> {
    params.validate()?;
    ensure_empty(out_dir)?;
    let end_day = Day::parse(&params.end_date).map(|d| d.0).ok_or_else(|| SynthError::Params("end_date".into()))?;
    let start_day = end_day - i64::from(params.days) + 1;
    let world_end = (end_day + 1) * time::DAY - 1;
    let snapshots: Vec<kettle::Snapshot> = (0..i64::from(params.dashboard_days))
        .rev()
        .map(|k| kettle::Snapshot { day: end_day - k, at: (end_day - k) * time::DAY + 12 * time::HOUR })
        .collect();
    let flakes_from = snapshots.first().map_or(world_end, |s| s.at) - 7 * time::DAY;
    let ctx = build::Ctx {
        seed: params.seed,
        start_day,
        end_day,
        world_end,
        log_lines: params.log_lines,
        prowjobs_from: world_end - i64::from(params.prowjobs_hours) * time::HOUR,
        snapshots: snapshots.clone(),
        flakes_from,
        gcs_root: "gcs/kubernetes-ci-logs",
    };
    let mut plan = jobs::plan(&jobs::PlanParams {
        seed: params.seed,
        jobs: params.jobs,
        builds_per_job: params.builds_per_job,
        start_day,
        end_day,
        failure_rate: params.failure_rate,
        tests_per_build: params.tests_per_build,
        dashboard_days: params.dashboard_days,
    });
    let stories = if params.fix_stories { fixes::plan(params.seed, start_day, end_day, &plan) } else { Vec::new() };
    plan.extend(stories.iter().flat_map(|s| s.jobs.iter().cloned()));
    let mut story_runs = fixes::Runs::default();

    let mut pool_builder = rayon::ThreadPoolBuilder::new();
    if params.threads > 0 {
        pool_builder = pool_builder.num_threads(params.threads);
    }
    let pool = pool_builder.build().map_err(|e| SynthError::Params(format!("cannot start worker threads: {e}")))?;
    let threads = pool.current_num_threads().max(1);

    let mut counter = out::Counter::default();
    let mut summary = Summary { jobs: plan.len() as u64, ..Summary::default() };
    let mut builds_jsonl = out::Stream::create(out_dir, "truth/builds.jsonl")?;
    let mut prowjobs = out::Stream::create(out_dir, "prow/prowjobs.js")?;
    prowjobs.put(b"var allBuilds = {\"items\":[")?;
    let mut first_item = true;
    let mut job_truths: Vec<build::JobTruth> = Vec::with_capacity(plan.len());
    let mut flaky_truths: Vec<build::FlakyTruth> = Vec::new();
    let mut fail_maps: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); snapshots.len()];
    let mut flake_maps: Vec<BTreeMap<String, kettle::FlakeEntry>> = vec![BTreeMap::new(); snapshots.len()];
    let mut stats = build::JobStats::default();

    let total = plan.len() as u64;
    let mut done = 0u64;
    progress(Progress { phase: Phase::Jobs, done: 0, total, builds: 0, bytes: 0 });
    for chunk in plan.chunks(threads * 4) {
        let outputs: Vec<Result<build::JobOutput, SynthError>> = pool.install(|| {
            chunk
                .par_iter()
                .map(|job| {
                    let mut sink = out::Sink::new(out_dir);
                    build::run_job(job, &ctx, &mut sink)
                })
                .collect()
        });
        for o in outputs {
            let o = o?;
            builds_jsonl.put(&o.truth_lines)?;
            story_runs.collect(&stories, &o.truth.name, &o.runs, &o.truth_lines);
            for item in &o.prowjobs {
                if !first_item {
                    prowjobs.put(b",")?;
                }
                first_item = false;
                prowjobs.put(item)?;
            }
            for (i, f) in o.failures.iter().enumerate() {
                if let Some(d) = f {
                    fail_maps[i].insert(o.truth.kettle_name.clone(), *d);
                }
            }
            for (i, f) in o.flakes.into_iter().enumerate() {
                if let Some(e) = f {
                    flake_maps[i].insert(o.truth.kettle_name.clone(), e);
                }
            }
            counter.add(o.count);
            stats.add(&o.stats);
            job_truths.push(o.truth);
            flaky_truths.extend(o.flaky);
            done += 1;
        }
        progress(Progress {
            phase: Phase::Jobs,
            done,
            total,
            builds: stats.builds,
            bytes: counter.bytes + builds_jsonl.bytes + prowjobs.bytes,
        });
    }
    prowjobs.put(b"]};")?;
    counter.add(prowjobs.finish()?);

    // OpenShift payload stream.
    let mut payload_builds = 0u64;
    let payload_truth = if params.payloads > 0 {
        let mut sink = out::Sink::new(out_dir);
        let base_builds = stats.builds;
        let base_bytes = counter.bytes + builds_jsonl.bytes;
        let res = payload::generate(
            params.seed,
            params.payloads,
            end_day,
            world_end,
            params.log_lines,
            &mut sink,
            &mut |d, t, b| {
                progress(Progress {
                    phase: Phase::Payloads,
                    done: d,
                    total: t,
                    builds: base_builds + b,
                    bytes: base_bytes,
                })
            },
        )?;
        counter.add(sink.count);
        payload_builds = res.job_runs;
        summary.payloads = res.tags.len() as u64;
        summary.payload_job_runs = res.job_runs;
        summary.pull_request_diffs = res.diffs;
        Some(res)
    } else {
        None
    };

    progress(Progress {
        phase: Phase::Aggregates,
        done: 0,
        total: 1,
        builds: stats.builds + payload_builds,
        bytes: counter.bytes + builds_jsonl.bytes,
    });
    // Dashboards.
    let mut sink = out::Sink::new(out_dir);
    let fix_truth = if stories.is_empty() { None } else { Some(fixes::finish(&stories, &story_runs, &mut sink)?) };
    let mut dashboard_files = Vec::new();
    for (i, s) in snapshots.iter().enumerate() {
        let date = Day(s.day).to_string();
        let fj = kettle::failures_json(&fail_maps[i]);
        let kj = kettle::flakes_json(&flake_maps[i]);
        let fp = format!("k8s-metrics/failures/failures-{date}.json");
        let kp = format!("k8s-metrics/flakes/flakes-{date}.json");
        sink.write(&fp, &fj)?;
        sink.write(&kp, &kj)?;
        dashboard_files.push(truth::DashboardFile {
            date: date.clone(),
            snapshot_time: time::rfc3339(s.at),
            failures: fp,
            flakes: kp,
        });
        if i + 1 == snapshots.len() {
            sink.write("k8s-metrics/failures-latest.json", &fj)?;
            sink.write("k8s-metrics/flakes-latest.json", &kj)?;
        }
    }
    counter.add(sink.count);
    counter.add(builds_jsonl.finish()?);

    summary.builds = stats.builds + payload_builds;
    summary.gcs_builds = stats.gcs_builds;
    summary.success_builds = stats.success;
    summary.failed_builds = stats.failure;
    summary.aborted_builds = stats.aborted;
    summary.error_builds = stats.error;
    summary.pending_builds = stats.pending;
    summary.failed_tests = stats.failed_tests;
    summary.flaky_tests = flaky_truths.len() as u64;

    // truth.json (the index; per-build records are in truth/builds.jsonl).
    // Its summary counts every file except truth.json itself; the returned
    // summary includes it.
    summary.files = counter.files;
    summary.bytes = counter.bytes;
    let mut sink = out::Sink::new(out_dir);
    let index = truth::Index::new(
        params,
        start_day,
        end_day,
        world_end,
        &summary,
        job_truths,
        flaky_truths,
        dashboard_files,
        payload_truth,
        fix_truth,
    );
    let bytes = truth::to_bytes(&index);
    sink.write("truth.json", &bytes)?;
    progress(Progress {
        phase: Phase::Done,
        done: 1,
        total: 1,
        builds: summary.builds,
        bytes: summary.bytes + bytes.len() as u64,
    });
    summary.files += 1;
    summary.bytes += bytes.len() as u64;
    Ok(summary)
}
