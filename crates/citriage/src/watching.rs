//! Continuous ingestion (`citriage watch`): on each tick, every configured source
//! that is due (or every source, for a single forced tick) is claimed through the
//! store's lease, fetched with the same library code as `fetch` and `import`
//! (`citriage_ingest`, [`crate::pipeline`]), and its status recorded in the store
//! (last success, last error, backoff) for the dashboard's status page and metrics.
//! After a tick that stored complete builds, the window's failures are re-clustered (stable
//! ids are kept from run to run). A shutdown request stops before the next build:
//! the build being stored is finished, the rest waits for the next run.

use crate::config::{BucketSource, Config, DashboardSource, Timing};
use crate::context::Failure;
use citriage_ingest::{discover_jobs, ingest_jobs, ExcerptLimits, IngestOptions, Progress};
use citriage_model::Dataset;
use citriage_sources::artifacts::{ArtifactSource, GcsHttp, LocalMirror};
use citriage_sources::http::unix_now;
use citriage_sources::HttpOptions;
use citriage_store::{Attempt, Location, Store};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A worker: the configuration, its name (the lease holder) and its store.
pub struct Worker {
    pub config: Config,
    pub timing: Timing,
    /// The lease holder's name: `--worker`, else host and process id.
    pub name: String,
    pub location: Location,
    /// Set when a shutdown was asked for.
    pub stop: Arc<AtomicBool>,
    pub http: HttpOptions,
}

/// What one source's turn in a tick did.
#[derive(Debug, Clone, Serialize)]
pub struct SourceTick {
    pub source: String,
    /// `fetched`, `failed`, `not due`, `held by another worker`, `stopped`.
    pub outcome: String,
    pub builds_stored: usize,
    /// Of those, builds stored complete (new data for clustering).
    pub complete_stored: usize,
    pub builds_skipped: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a tick did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TickReport {
    pub sources: Vec<SourceTick>,
    /// Failures re-clustered after the tick (none when nothing new was stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reclustered: Option<usize>,
    /// Builds and log excerpts removed by retention (counted back from the newest build).
    pub pruned_builds: u64,
    pub pruned_excerpts: u64,
}

impl TickReport {
    pub fn builds_stored(&self) -> usize {
        self.sources.iter().map(|s| s.builds_stored).sum()
    }
}

/// A default worker name: host name and process id.
pub fn default_worker_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
    format!("{}:{}", host.unwrap_or_else(|| "localhost".into()), std::process::id())
}

impl Worker {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// The wait after `failures` consecutive failures: `backoff` doubled each further
    /// failure, at most `backoff_max`.
    pub fn backoff(&self, failures: i64) -> i64 {
        let shift = (failures.max(1) - 1).min(30) as u32;
        self.timing.backoff.saturating_mul(1i64 << shift).min(self.timing.backoff_max)
    }

    /// One tick. `force`: fetch every source whether due or not (`--once`).
    pub fn tick(&self, store: &mut Store, force: bool) -> Result<TickReport, Failure> {
        let mut report = TickReport::default();
        let statuses = store.source_statuses()?;
        let status = |name: &str| statuses.iter().find(|s| s.source == name);
        for b in &self.config.sources.buckets {
            if self.stopped() {
                break;
            }
            let now = unix_now();
            let st = status(&b.name);
            if !force && st.is_some_and(|s| s.next_due > now) {
                report.sources.push(skipped(&b.name, "not due"));
                continue;
            }
            if !store.claim_source(&b.name, "bucket", &self.name, now, self.timing.lease)? {
                report.sources.push(skipped(&b.name, "held by another worker"));
                continue;
            }
            let previous_failures = st.map_or(0, |s| s.failures);
            let result = self.fetch_bucket(store, b);
            let now = unix_now();
            let interval = self.config.bucket_interval(b);
            let tick = match result {
                Ok(s) if s.failures.is_empty() => {
                    let outcome = if s.stopped { "stopped" } else { "fetched" };
                    let next_due = if s.stopped { now } else { now + interval };
                    let newest_started = store.newest_build_started(Some(&b.bucket))?;
                    let a = Attempt::Ok { builds_stored: s.builds_stored as i64, newest_started, next_due };
                    store.finish_source(&b.name, &self.name, now, &a)?;
                    SourceTick {
                        source: b.name.clone(),
                        outcome: outcome.into(),
                        builds_stored: s.builds_stored,
                        complete_stored: s.complete_stored,
                        builds_skipped: s.builds_skipped,
                        error: None,
                    }
                }
                Ok(s) => {
                    let f = &s.failures[0];
                    let error = format!(
                        "{} build(s) or job(s) failed; first: {} {}: {}",
                        s.failures.len(),
                        f.job,
                        f.path,
                        f.reason
                    );
                    self.failed(store, &b.name, now, previous_failures, &error, s.builds_stored)?;
                    SourceTick {
                        source: b.name.clone(),
                        outcome: "failed".into(),
                        builds_stored: s.builds_stored,
                        complete_stored: s.complete_stored,
                        builds_skipped: s.builds_skipped,
                        error: Some(error),
                    }
                }
                Err(e) => {
                    let error = e.to_string();
                    self.failed(store, &b.name, now, previous_failures, &error, 0)?;
                    SourceTick {
                        source: b.name.clone(),
                        outcome: "failed".into(),
                        builds_stored: 0,
                        complete_stored: 0,
                        builds_skipped: 0,
                        error: Some(error),
                    }
                }
            };
            report.sources.push(tick);
        }
        for d in &self.config.sources.dashboards {
            if self.stopped() {
                break;
            }
            let now = unix_now();
            let st = status(&d.name);
            if !force && st.is_some_and(|s| s.next_due > now) {
                report.sources.push(skipped(&d.name, "not due"));
                continue;
            }
            if !store.claim_source(&d.name, "dashboard", &self.name, now, self.timing.lease)? {
                report.sources.push(skipped(&d.name, "held by another worker"));
                continue;
            }
            let previous_failures = st.map_or(0, |s| s.failures);
            let result = self.import_dashboard(store, d);
            let now = unix_now();
            let interval =
                d.interval.as_deref().and_then(citriage_model::time::parse_duration).unwrap_or(self.timing.interval);
            match result {
                Ok(()) => {
                    let a = Attempt::Ok { builds_stored: 0, newest_started: None, next_due: now + interval };
                    store.finish_source(&d.name, &self.name, now, &a)?;
                    report.sources.push(skipped(&d.name, "fetched"));
                }
                Err(e) => {
                    let error = e.to_string();
                    self.failed(store, &d.name, now, previous_failures, &error, 0)?;
                    let mut t = skipped(&d.name, "failed");
                    t.error = Some(error);
                    report.sources.push(t);
                }
            }
        }
        if report.builds_stored() > 0 && !self.stopped() {
            // Retention counts back from the newest build, so it depends on the data,
            // not on when the worker runs.
            if let Some(newest) = store.newest_build_started(None)? {
                let day = citriage_model::time::DAY;
                let r = &self.config.retention;
                let (b, e) = store.prune(newest - r.window_days * day, newest - r.log_days * day)?;
                report.pruned_builds = b;
                report.pruned_excerpts = e;
            }
        }
        // Re-cluster when complete builds arrived (a build still running is stored
        // again each tick until it finishes; that alone does not re-cluster).
        let complete: usize = report.sources.iter().map(|s| s.complete_stored).sum();
        if complete > 0 && self.config.schedule.recluster && !self.stopped() {
            let pb = indicatif::ProgressBar::hidden();
            let out = crate::clustering::cluster_store(
                store,
                citriage_patterns::normalize::Profile::Default,
                self.config.server.window_days,
                None,
                &[],
                &citriage_patterns::signatures::Catalogue::builtin(),
                &Default::default(),
                &pb,
            )?;
            report.reclustered = Some(out.rows.len());
        }
        Ok(report)
    }

    fn failed(
        &self,
        store: &mut Store,
        source: &str,
        now: i64,
        previous_failures: i64,
        error: &str,
        builds_stored: usize,
    ) -> Result<(), Failure> {
        let wait = self.backoff(previous_failures + 1);
        let a = Attempt::Failed { error: error.to_string(), builds_stored: builds_stored as i64, next_due: now + wait };
        store.finish_source(source, &self.name, now, &a)?;
        Ok(())
    }

    fn import_dashboard(&self, store: &mut Store, d: &DashboardSource) -> Result<(), Failure> {
        let dataset = match d.dataset.as_str() {
            "flakes" => Dataset::Flakes,
            _ => Dataset::Failures,
        };
        let (snap, _warnings) = crate::pipeline::read_snapshot(&d.location, Some(dataset), None, &self.http)?;
        crate::pipeline::import(store, &snap)?;
        Ok(())
    }

    fn fetch_bucket(&self, store: &mut Store, b: &BucketSource) -> Result<citriage_ingest::IngestSummary, Failure> {
        let src: Box<dyn ArtifactSource> = match (&b.mirror, &b.gcs) {
            (Some(dir), _) => {
                if !dir.is_dir() {
                    return Err(Failure::input(format!("{}: not a folder", dir.display())));
                }
                Box::new(LocalMirror::new(dir.clone(), b.bucket.clone()))
            }
            (None, Some(url)) => Box::new(GcsHttp::new(url, &b.bucket, self.http.clone(), None)),
            (None, None) => return Err(Failure::input(format!("source {}: no gcs or mirror", b.name))),
        };
        let mut jobs = b.jobs.clone();
        if let Some(r) = &b.job_regex {
            let re = regex::Regex::new(r).map_err(|e| Failure::input(format!("{}.job_regex: {e}", b.name)))?;
            let all = discover_jobs(src.as_ref()).map_err(|e| Failure::other(e.to_string()))?;
            jobs.extend(all.into_iter().filter(|j| re.is_match(j)));
        }
        jobs.sort();
        jobs.dedup();
        let opts = IngestOptions {
            concurrency: b.concurrency.max(1),
            max_builds_per_job: b.max_builds,
            log_excerpts: b.log_excerpts.then(ExcerptLimits::default),
            stop: Some(self.stop.clone()),
            ..IngestOptions::default()
        };
        // The lease is renewed on a connection of its own while the source is fetched.
        let renewer = Mutex::new((self.location.open().ok(), unix_now()));
        let lease = self.timing.lease;
        let progress = |p: Progress| {
            if let Progress::Build { .. } = p {
                let mut g = renewer.lock().unwrap_or_else(|e| e.into_inner());
                let now = unix_now();
                if now - g.1 >= (lease / 3).max(1) {
                    g.1 = now;
                    if let Some(st) = g.0.as_mut() {
                        let _ = st.claim_source(&b.name, "bucket", &self.name, now, lease);
                    }
                }
            }
        };
        ingest_jobs(src.as_ref(), store, &jobs, &opts, &progress).map_err(|e| Failure::other(e.to_string()))
    }

    /// Seconds until the next source is due (at least 1, at most 60 so a shutdown
    /// request or a configuration's shorter interval is noticed).
    pub fn until_next(&self, store: &Store) -> i64 {
        let now = unix_now();
        let next = store.source_statuses().ok().and_then(|s| s.iter().map(|s| s.next_due).min()).unwrap_or(now + 60);
        (next - now).clamp(1, 60)
    }
}

fn skipped(source: &str, outcome: &str) -> SourceTick {
    SourceTick {
        source: source.into(),
        outcome: outcome.into(),
        builds_stored: 0,
        complete_stored: 0,
        builds_skipped: 0,
        error: None,
    }
}

/// Sets `flag` on SIGINT or SIGTERM (on a thread of its own).
pub fn stop_on_signals(flag: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
            return;
        };
        rt.block_on(async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                match signal(SignalKind::terminate()) {
                    Ok(mut term) => {
                        tokio::select! {
                            _ = tokio::signal::ctrl_c() => {}
                            _ = term.recv() => {}
                        }
                    }
                    Err(_) => {
                        let _ = tokio::signal::ctrl_c().await;
                    }
                }
            }
            #[cfg(not(unix))]
            {
                let _ = tokio::signal::ctrl_c().await;
            }
        });
        flag.store(true, Ordering::SeqCst);
    });
}
