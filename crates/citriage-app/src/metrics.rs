//! Job and test metrics from the stored builds (`metrics`): kettle's dashboards
//! reproduced as files, or corrected figures with flake signals and bias flags. Builds
//! are read job by job, with tests only inside the longest window needed, so memory
//! stays bounded by one job's recent history (plus the figures or dashboard rows, one
//! per job); the window's end is computed from the builds' start times alone.

use crate::builds;
use crate::error::Result;
use crate::files;
use crate::progress::Progress;
use citriage_analysis::metrics::corrected::{job_figures, JobFigures, Settings};
use citriage_analysis::metrics::kettle;
use citriage_analysis::AnalysisConfig;
use citriage_model::time::DAY;
use citriage_store::Store;
use std::path::PathBuf;

/// What `metrics` is asked.
#[derive(Debug, Clone)]
pub struct MetricsRequest {
    /// The window's end (`--as-of`: a date or Unix seconds); default: the newest build's day.
    pub as_of: Option<String>,
    /// Days of the corrected figures' window.
    pub window: i64,
    /// Only these jobs (dashboard naming); all when empty.
    pub jobs: Vec<String>,
    /// Write kettle's dashboards (`failures-latest.json`, `flakes-latest.json`) to this
    /// folder instead of computing the corrected figures.
    pub kettle_to: Option<PathBuf>,
}

impl Default for MetricsRequest {
    fn default() -> Self {
        MetricsRequest { as_of: None, window: 7, jobs: Vec::new(), kettle_to: None }
    }
}

/// What `metrics` computed.
pub enum Metrics {
    /// Kettle's dashboards, written.
    Kettle { as_of: i64, files: [PathBuf; 2] },
    /// The corrected figures, by job name.
    Figures { as_of: i64, window_days: i64, jobs: Vec<JobFigures> },
}

/// `metrics`: the corrected figures of the window's jobs, or kettle's dashboards.
pub fn metrics(store: &mut Store, req: &MetricsRequest, progress: &dyn Progress) -> Result<Metrics> {
    let as_of = builds::store_as_of(store, req.as_of.as_deref())?;
    let window = req.window.max(1);
    let mut settings = Settings::new(as_of, AnalysisConfig::default().harness_test_names);
    settings.window_days = window;
    let tests_since = as_of - window.max(7) * DAY - DAY;
    let mut failures_rows = Vec::new();
    let mut flakes_rows = Vec::new();
    let mut figs = Vec::new();
    let jobs = store.build_jobs()?;
    progress.doing(&format!("computing metrics for {} jobs", jobs.len()));
    let kettle_mode = req.kettle_to.is_some();
    // One job at a time: its builds, with tests only inside the window; every figure
    // and dashboard row is a job's own, so nothing of a job is kept past its turn.
    for job in &jobs {
        let builds = store.job_builds_with_tests_opts(job, Some(tests_since), !kettle_mode)?;
        if kettle_mode {
            failures_rows.extend(kettle::failures_rows(&builds, as_of));
            flakes_rows.extend(kettle::flakes_rows(&builds, as_of));
        } else {
            figs.extend(job_figures(&builds, &settings));
        }
    }
    if let Some(out) = &req.kettle_to {
        failures_rows.sort_by(|x, y| x.job.cmp(&y.job));
        flakes_rows.sort_by(|x, y| x.job.cmp(&y.job));
        files::create_dir(out)?;
        let fp = out.join("failures-latest.json");
        let kp = out.join("flakes-latest.json");
        files::write_plain(&fp, kettle::failures_json(&failures_rows))?;
        files::write_plain(&kp, kettle::flakes_json(&flakes_rows))?;
        return Ok(Metrics::Kettle { as_of, files: [fp, kp] });
    }
    figs.sort_by(|x, y| x.job.cmp(&y.job));
    if !req.jobs.is_empty() {
        figs.retain(|f| req.jobs.contains(&f.job));
    }
    Ok(Metrics::Figures { as_of, window_days: settings.window_days, jobs: figs })
}
