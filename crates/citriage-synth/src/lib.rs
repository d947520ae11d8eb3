//! `citriage-synth`: a deterministic generator of a synthetic CI world — a
//! Prow/GCS mirror with build logs and JUnit, Deck job history, `prowjobs.js`,
//! k8s-metrics dashboards computed the way kettle does, an OpenShift
//! release-controller payload stream with PR diffs, and a `truth.json` that
//! records every planted answer. Same seed and parameters, same bytes.
//!
//! The layout and the truth schema are documented in `docs/synthetic-world.md`.

mod build;
mod catalog;
mod culprits;
mod fixes;
mod jobs;
mod junit;
mod kettle;
mod logs;
mod out;
mod params;
mod payload;
mod pr_stories;
mod prow;
mod repos;
mod rng;
mod slice;
mod suites;
mod testgrid;
mod text;
mod truth;

use citriage_model::time;
use citriage_model::Day;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

pub use out::SynthError;
pub use params::{Summary, SynthParams, DEFAULT_END_DATE, PRESETS};
pub use slice::DaySlice;

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
    generate_world(params, None, out_dir, progress)
}

/// Generates one day slice of the world into `out_dir` (which must be missing or
/// empty): the folders of the builds started on the slice's days, byte-identical to
/// the whole world's, and, when the slice holds the world's last day, every other file
/// of the world too (job histories, `prowjobs.js`, dashboards, TestGrid, the payload
/// stream, truth), so that slices covering every day once make up the whole world.
/// The suspect stories (git histories) are a whole world's only.
pub fn generate_days(
    params: &SynthParams,
    slice: DaySlice,
    out_dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary, SynthError> {
    generate_world(params, Some(slice), out_dir, progress)
}

fn generate_world(
    params: &SynthParams,
    slice: Option<DaySlice>,
    out_dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary, SynthError> {
    params.validate()?;
    if let Some(s) = slice {
        s.validate(params.days)?;
        if params.suspect_stories {
            return Err(SynthError::Params(format!(
                "day slice {s}: the suspect stories' git histories are a whole world's (generate it whole)"
            )));
        }
    }
    ensure_empty(out_dir)?;
    let end_day = Day::parse(&params.end_date).map(|d| d.0).ok_or_else(|| SynthError::Params("end_date".into()))?;
    let start_day = end_day - i64::from(params.days) + 1;
    let aggregates = slice.is_none_or(|s| s.has_last_day(params.days));
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
        write_starts: slice.map_or((i64::MIN, i64::MAX), |s| s.starts(start_day, params.days)),
        aggregates,
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
    let planted = if params.suspect_stories {
        Some(culprits::plant(params.seed, start_day, end_day, &plan, out_dir)?)
    } else {
        None
    };
    plan.extend(planted.iter().flat_map(|p| p.stories.iter().flat_map(|s| s.jobs.iter().cloned())));
    let mut story_runs = fixes::Runs::default();

    let mut pool_builder = rayon::ThreadPoolBuilder::new();
    if params.threads > 0 {
        pool_builder = pool_builder.num_threads(params.threads);
    }
    let pool = pool_builder.build().map_err(|e| SynthError::Params(format!("cannot start worker threads: {e}")))?;
    let threads = pool.current_num_threads().max(1);

    let mut counter = out::Counter::default();
    let mut summary = Summary { jobs: plan.len() as u64, ..Summary::default() };
    let stream = |rel: &str| if aggregates { out::Stream::create(out_dir, rel) } else { Ok(out::Stream::discard()) };
    let mut builds_jsonl = stream("truth/builds.jsonl")?;
    let mut prowjobs = stream("prow/prowjobs.js")?;
    let mut written_builds = 0u64;
    // The job files a day slice counted (as the whole world's) but did not write.
    let mut unwritten = out::Counter::default();
    prowjobs.put(b"var allBuilds = {\"items\":[")?;
    let mut first_item = true;
    let mut job_truths: Vec<build::JobTruth> = Vec::with_capacity(plan.len());
    let mut flaky_truths: Vec<build::FlakyTruth> = Vec::new();
    let mut fail_maps: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); snapshots.len()];
    let mut flake_maps: Vec<BTreeMap<String, kettle::FlakeEntry>> = vec![BTreeMap::new(); snapshots.len()];
    let mut stats = build::JobStats::default();
    // Each TestGrid dashboard's tabs and their summary entries.
    let mut testgrid_tabs: BTreeMap<String, serde_json::Map<String, serde_json::Value>> = BTreeMap::new();

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
            for (dashboard, tab, entry) in o.testgrid {
                testgrid_tabs.entry(dashboard).or_default().insert(tab, entry);
            }
            counter.add(o.count);
            written_builds += o.written_builds;
            unwritten.add(o.count);
            unwritten.files -= o.written.files;
            unwritten.bytes -= o.written.bytes;
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
    if !aggregates {
        // A day slice before the last day: its build folders are all it writes.
        summary.builds = stats.builds;
        summary.slice_builds = Some(written_builds);
        summary.files = counter.files - unwritten.files;
        summary.bytes = counter.bytes - unwritten.bytes;
        progress(Progress { phase: Phase::Done, done: 1, total: 1, builds: stats.builds, bytes: summary.bytes });
        return Ok(summary);
    }

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

    if params.pr_stories {
        let mut sink = out::Sink::new(out_dir);
        pr_stories::generate(params.seed, world_end, &mut sink)?;
        counter.add(sink.count);
    }

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
    if let Some(p) = &planted {
        p.write_truth(&mut sink)?;
    }
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
    for (dashboard, tabs) in &testgrid_tabs {
        let mut body = serde_json::to_vec(tabs).unwrap_or_default();
        body.push(b'\n');
        sink.write(&format!("testgrid/{dashboard}/summary"), &body)?;
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
    if slice.is_some() {
        summary.slice_builds = Some(written_builds);
        summary.files -= unwritten.files;
        summary.bytes -= unwritten.bytes;
    }
    Ok(summary)
}
