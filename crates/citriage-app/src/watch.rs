//! Continuous ingestion (`citriage watch`): on each tick, every configured source
//! that is due (or every source, for a single forced tick) is claimed through the
//! store's lease, fetched with the same code as `fetch` and `import`
//! (`citriage_ingest`, [`crate::snapshots`]), and its status recorded in the store
//! (last success, last error, backoff) for the dashboard's status page and metrics.
//! After a tick that stored complete builds, the window's failures are re-clustered (stable
//! ids are kept from run to run), then the alert rules run over the store and the
//! alerts' outbox is sent ([`crate::alerts`]). A shutdown request stops before the next build:
//! the build being stored is finished, the rest waits for the next run. The caller
//! sets the stop flag (the CLI on SIGINT/SIGTERM).

use crate::clock::now as unix_now;
pub use crate::config::default_worker_name;
use crate::config::{BucketSource, Config, DashboardSource, GithubSource, ReleaseStream, TestgridSource, Timing};
use crate::error::{Error, Result};
use citriage_ingest::{discover_job_list, ingest_jobs, ExcerptLimits, IngestOptions, Progress};
use citriage_model::Dataset;
use citriage_sources::artifacts::{ArtifactSource, GcsHttp, LocalMirror};
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
    /// Post the comments of the configuration's pull requests (`watch --apply`; a
    /// GitHub token is needed too). Off: they are analysed and logged only.
    pub apply_pr_comments: bool,
}

/// What one source's turn in a tick did.
#[derive(Debug, Clone, Serialize)]
pub struct SourceTick {
    pub source: String,
    /// `bucket`, `dashboard`, `release-stream`, `github`, `testgrid`.
    pub kind: String,
    /// `fetched`, `failed`, `not due`, `held by another worker`, `stopped`.
    pub outcome: String,
    pub builds_stored: usize,
    /// Of those, builds stored complete (new data for clustering).
    pub complete_stored: usize,
    pub builds_skipped: usize,
    /// A release stream: payloads analysed and recorded, and those already recorded
    /// in the phase the stream lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payloads_analysed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payloads_unchanged: Option<usize>,
    /// A GitHub repository: pull requests and issues whose state was read again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refs_refreshed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What fetching one source did (any kind).
#[derive(Debug, Default)]
struct Fetched {
    /// Items stored: builds, payload analyses or refreshed references.
    stored: usize,
    complete: usize,
    skipped: usize,
    stopped: bool,
    newest_started: Option<i64>,
    /// Some items failed while others were stored: what to record as the error.
    partial_error: Option<String>,
}

/// Where a source comes in a tick: its name, kind and interval.
struct Turn<'a> {
    name: &'a str,
    kind: &'static str,
    interval: i64,
}

/// A failed attempt at a source, as recorded: when, after how many failures in a
/// row, why, and what was stored all the same.
struct FailedAttempt<'a> {
    now: i64,
    previous_failures: i64,
    error: &'a str,
    stored: usize,
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
    /// Triage records' transitions the tick's evidence called for (`subject: from →
    /// to: reason`); none when the store keeps no record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<Vec<String>>,
    /// The alert turn after the tick and the outbox sent (`schedule.alerts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alerts: Option<AlertsTick>,
    /// The configuration's pull requests analysed after the tick (`prs`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prs: Vec<crate::pr_comment::PrTick>,
}

/// What the alerts did after a tick.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AlertsTick {
    /// Alerts raised or withdrawn by the turn (none when no new data was stored).
    pub said: usize,
    /// Of those, held back by the verifier's rules.
    pub held: usize,
    /// Messages queued by the turn.
    pub queued: u64,
    pub sent: u64,
    pub retried: u64,
    pub failed: u64,
    /// The turn or the sending could not run (the tick's data is kept; tried again next tick).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl TickReport {
    pub fn builds_stored(&self) -> usize {
        self.sources.iter().map(|s| s.builds_stored).sum()
    }
}

/// Whether a tick stored anything the alert rules read (builds, payload analyses,
/// pull-request and issue states).
fn new_data(r: &TickReport) -> bool {
    r.sources
        .iter()
        .any(|s| s.builds_stored > 0 || s.payloads_analysed.unwrap_or(0) > 0 || s.refs_refreshed.unwrap_or(0) > 0)
}

/// "N item(s) failed; first: ...".
fn first_of(n: usize, what: &str, first: &str) -> String {
    format!("{n} {what} failed; first: {first}")
}

impl Worker {
    /// A worker named `name` (the lease holder) over the store at `location`; its
    /// schedule's durations checked. `stop` is set when a shutdown is asked for.
    pub fn new(
        config: Config,
        name: String,
        location: Location,
        stop: Arc<AtomicBool>,
        http: HttpOptions,
    ) -> Result<Worker> {
        let timing = config.timing().map_err(Error::input)?;
        Ok(Worker { config, timing, name, location, stop, http, apply_pr_comments: false })
    }

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
    pub fn tick(&self, store: &mut Store, force: bool) -> Result<TickReport> {
        let mut report = TickReport::default();
        let statuses = store.source_statuses()?;
        let cfg = &self.config;
        for b in &cfg.sources.buckets {
            let turn = Turn { name: &b.name, kind: "bucket", interval: cfg.bucket_interval(b) };
            self.turn(store, &mut report, &statuses, force, &turn, &mut |w, st| w.fetch_bucket(st, b))?;
        }
        for d in &cfg.sources.dashboards {
            let turn = Turn { name: &d.name, kind: "dashboard", interval: cfg.interval(d.interval.as_deref()) };
            self.turn(store, &mut report, &statuses, force, &turn, &mut |w, st| {
                w.import_dashboard(st, d).map(|()| Fetched::default())
            })?;
        }
        for r in &cfg.sources.release_streams {
            let turn = Turn { name: &r.name, kind: "release-stream", interval: cfg.interval(r.interval.as_deref()) };
            self.turn(store, &mut report, &statuses, force, &turn, &mut |w, st| w.follow_stream(st, r))?;
        }
        for g in &cfg.sources.github {
            let turn = Turn { name: g.name(), kind: "github", interval: cfg.interval(g.interval()) };
            self.turn(store, &mut report, &statuses, force, &turn, &mut |w, st| w.refresh_github(st, g))?;
        }
        for t in &cfg.sources.testgrid {
            let turn = Turn { name: &t.name, kind: "testgrid", interval: cfg.interval(t.interval.as_deref()) };
            self.turn(store, &mut report, &statuses, force, &turn, &mut |w, st| w.read_testgrid(st, t))?;
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
                if b + e > 0 {
                    tracing::info!(builds = b, excerpts_of = e, "retention removed old builds and log excerpts");
                }
            }
        }
        // Re-cluster when complete builds arrived (a build still running is stored
        // again each tick until it finishes; that alone does not re-cluster).
        let complete: usize = report.sources.iter().map(|s| s.complete_stored).sum();
        if complete > 0 && self.config.schedule.recluster && !self.stopped() {
            let opts = crate::cluster::ClusterOptions {
                window_days: self.config.server.window_days,
                ..crate::cluster::ClusterOptions::default()
            };
            let out = crate::cluster::cluster_store(store, &opts, &crate::progress::Silent)?;
            report.reclustered = Some(out.failures.len());
            tracing::info!(failures = out.failures.len(), complete_builds = complete, "re-clustered the window");
        }
        if !self.stopped() {
            report.records = self.refresh_records(store)?;
        }
        if self.config.watch_alerts() && !self.stopped() {
            report.alerts = Some(self.alerts(store, new_data(&report)));
        }
        if !self.config.prs.is_empty() && !self.stopped() {
            let api = self.config.sources.github.first().map_or(citriage_github::DEFAULT_API_BASE, |g| g.api());
            report.prs = crate::pr_comment::watch_turn(store, &self.config.prs, api, self.apply_pr_comments);
        }
        Ok(report)
    }

    /// Triage records follow the tick's evidence: the stored builds and clustering, and
    /// the linked references' states from the store's cache (which the GitHub sources'
    /// turns keep fresh).
    fn refresh_records(&self, store: &mut Store) -> Result<Option<Vec<String>>> {
        if store.records(None)?.is_empty() {
            return Ok(None);
        }
        let api = self.config.sources.github.first().map_or(citriage_github::DEFAULT_API_BASE, |g| g.api());
        let opts = crate::records::RefreshOptions {
            github: Some(crate::records::GithubAccess { api: api.to_string(), offline: true }),
            // The configuration's checkouts tell a fix's containment by git ancestry.
            checkouts: self.config.checkouts.clone(),
            ..Default::default()
        };
        let r = crate::records::refresh(store, &opts, &crate::progress::Silent)?;
        for t in &r.transitions {
            tracing::info!(transition = t.as_str(), "triage record moved");
        }
        Ok(Some(r.transitions))
    }

    /// An alert turn when the tick stored new data, then the outbox sent. A failure is
    /// reported (and logged), never the tick's: ingestion goes on.
    fn alerts(&self, store: &mut Store, turn: bool) -> AlertsTick {
        let mut t = AlertsTick::default();
        let run = |store: &mut Store, t: &mut AlertsTick| -> Result<()> {
            if turn {
                let opts = crate::alerts::AlertOptions::from_config(&self.config)?;
                let r = crate::alerts::turn(store, &opts, &crate::progress::Silent)?;
                t.said = r.alerts.len();
                t.held = r.alerts.iter().filter(|a| a.held.is_some()).count();
                t.queued = r.written.map_or(0, |w| w.messages);
            }
            let send = crate::alerts::SendOptions {
                alerts: self.config.alerts.clone(),
                worker: self.name.clone(),
                limit: None,
                stop: Some(self.stop.clone()),
                http: self.http.clone(),
            };
            let d = crate::alerts::send(store, &send, &crate::progress::Silent)?;
            (t.sent, t.retried, t.failed) = (d.sent, d.retried, d.failed);
            for m in d.messages.iter().filter(|m| m.error.is_some()) {
                let error = m.error.as_deref().unwrap_or_default();
                tracing::warn!(message = m.message.as_str(), outcome = m.outcome, error, "alert not delivered");
            }
            Ok(())
        };
        if let Err(e) = run(store, &mut t) {
            tracing::warn!(error = %e, "alerts");
            t.error = Some(e.to_string());
        }
        tracing::info!(said = t.said, held = t.held, queued = t.queued, sent = t.sent, failed = t.failed, "alerts");
        t
    }

    /// One source's turn: skipped when not due or held by another worker; otherwise
    /// claimed, fetched, and its attempt recorded (success, or the error and the
    /// backoff before the next try).
    fn turn(
        &self,
        store: &mut Store,
        report: &mut TickReport,
        statuses: &[citriage_store::SourceStatus],
        force: bool,
        t: &Turn<'_>,
        fetch: &mut dyn FnMut(&Self, &mut Store) -> Result<Fetched>,
    ) -> Result<()> {
        if self.stopped() {
            return Ok(());
        }
        let now = unix_now();
        let st = statuses.iter().find(|s| s.source == t.name);
        if !force && st.is_some_and(|s| s.next_due > now) {
            tracing::debug!(source = t.name, kind = t.kind, next_due = st.map_or(0, |s| s.next_due), "not due");
            report.sources.push(skipped(t, "not due"));
            return Ok(());
        }
        if !store.claim_source(t.name, t.kind, &self.name, now, self.timing.lease)? {
            tracing::info!(source = t.name, kind = t.kind, "held by another worker");
            report.sources.push(skipped(t, "held by another worker"));
            return Ok(());
        }
        let previous_failures = st.map_or(0, |s| s.failures);
        let started = std::time::Instant::now();
        let result = fetch(self, store);
        let seconds = started.elapsed().as_secs_f64();
        let now = unix_now();
        let mut tick = skipped(t, "fetched");
        match result {
            Ok(f) => {
                fill(&mut tick, t.kind, &f);
                match &f.partial_error {
                    None => {
                        tick.outcome = if f.stopped { "stopped" } else { "fetched" }.into();
                        let next_due = if f.stopped { now } else { now + t.interval };
                        let a =
                            Attempt::Ok { builds_stored: f.stored as i64, newest_started: f.newest_started, next_due };
                        store.finish_source(t.name, &self.name, now, &a)?;
                        tracing::info!(
                            source = t.name,
                            kind = t.kind,
                            outcome = tick.outcome.as_str(),
                            stored = f.stored,
                            complete = f.complete,
                            skipped = f.skipped,
                            seconds,
                            next_due,
                            "source fetched"
                        );
                    }
                    Some(error) => {
                        let a = FailedAttempt { now, previous_failures, error, stored: f.stored };
                        self.failed(store, t, &a)?;
                        tick.outcome = "failed".into();
                        tick.error = Some(error.clone());
                    }
                }
            }
            Err(e) => {
                let error = e.to_string();
                self.failed(store, t, &FailedAttempt { now, previous_failures, error: &error, stored: 0 })?;
                fill(&mut tick, t.kind, &Fetched::default());
                tick.outcome = "failed".into();
                tick.error = Some(error);
            }
        }
        report.sources.push(tick);
        Ok(())
    }

    /// Records a failed attempt: the error, and the backoff before the next try.
    fn failed(&self, store: &mut Store, t: &Turn<'_>, f: &FailedAttempt<'_>) -> Result<()> {
        let wait = self.backoff(f.previous_failures + 1);
        tracing::warn!(
            source = t.name,
            kind = t.kind,
            error = f.error,
            stored = f.stored,
            failures = f.previous_failures + 1,
            backoff_seconds = wait,
            "source failed"
        );
        let a = Attempt::Failed { error: f.error.to_string(), builds_stored: f.stored as i64, next_due: f.now + wait };
        store.finish_source(t.name, &self.name, f.now, &a)?;
        Ok(())
    }

    fn import_dashboard(&self, store: &mut Store, d: &DashboardSource) -> Result<()> {
        let dataset = match d.dataset.as_str() {
            "flakes" => Dataset::Flakes,
            _ => Dataset::Failures,
        };
        let read = crate::snapshots::read(&d.location, Some(dataset), None, &self.http)?;
        crate::snapshots::store(store, &read.snapshot)?;
        Ok(())
    }

    fn fetch_bucket(&self, store: &mut Store, b: &BucketSource) -> Result<Fetched> {
        let src: Box<dyn ArtifactSource> = match (&b.mirror, &b.gcs) {
            (Some(dir), _) => {
                if !dir.is_dir() {
                    return Err(Error::input(format!("{}: not a folder", dir.display())));
                }
                Box::new(LocalMirror::new(dir.clone(), b.bucket.clone()))
            }
            (None, Some(url)) => Box::new(GcsHttp::new(url, &b.bucket, self.http.clone(), None)),
            (None, None) => return Err(Error::input(format!("source {}: no gcs or mirror", b.name))),
        };
        let mut jobs = b.jobs.clone();
        // Job folders the listing refused fail the source's turn, named.
        let mut refused_jobs = Vec::new();
        if let Some(r) = &b.job_regex {
            let re = regex::Regex::new(r).map_err(|e| Error::input(format!("{}.job_regex: {e}", b.name)))?;
            let all = discover_job_list(src.as_ref()).map_err(|e| Error::failed(e.to_string()))?;
            jobs.extend(all.jobs.into_iter().filter(|j| re.is_match(j)));
            refused_jobs = all.refused;
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
        let mut s = ingest_jobs(src.as_ref(), store, &jobs, &opts, &progress)?;
        s.failures.extend(refused_jobs.into_iter().map(|reason| citriage_ingest::FetchFailure {
            job: String::new(),
            path: String::new(),
            reason,
        }));
        tracing::info!(
            source = b.name.as_str(),
            bucket = b.bucket.as_str(),
            jobs = jobs.len(),
            builds_stored = s.builds_stored,
            complete = s.complete_stored,
            already_complete = s.builds_skipped,
            failed = s.failures.len(),
            "builds ingested"
        );
        let partial_error = s.failures.first().map(|f| {
            let at: Vec<&str> = [f.job.as_str(), f.path.as_str()].into_iter().filter(|x| !x.is_empty()).collect();
            let what = if at.is_empty() { f.reason.clone() } else { format!("{}: {}", at.join(" "), f.reason) };
            first_of(s.failures.len(), "build(s) or job(s)", &what)
        });
        let newest_started = if partial_error.is_none() { store.newest_build_started(Some(&b.bucket))? } else { None };
        Ok(Fetched {
            stored: s.builds_stored,
            complete: s.complete_stored,
            skipped: s.builds_skipped,
            stopped: s.stopped,
            newest_started,
            partial_error,
        })
    }

    /// A TestGrid source's turn: its dashboard's tabs (or its tab) read as `fetch
    /// --testgrid` reads them ([`crate::testgrid`]); the lease renewed as tabs are
    /// read; a refused tab fails the source (named), the other tabs stay stored.
    fn read_testgrid(&self, store: &mut Store, t: &TestgridSource) -> Result<Fetched> {
        use crate::testgrid::{fetch_testgrid, plan, TestgridRequest};
        let req = TestgridRequest {
            url: Some(t.url.clone()),
            timeout: self.http.timeout,
            stop: Some(self.stop.clone()),
            ..TestgridRequest::default()
        };
        let plan = plan(&req)?;
        let renewer = LeaseRenewer {
            store: Mutex::new((self.location.open().ok(), unix_now())),
            source: &t.name,
            kind: "testgrid",
            worker: &self.name,
            lease: self.timing.lease,
        };
        let got = fetch_testgrid(store, &plan, &req, &renewer)?;
        let s = &got.summary;
        let partial_error = got.outcome().err().map(|e| e.to_string());
        tracing::info!(
            source = t.name.as_str(),
            tabs = s.tabs.len(),
            builds_written = s.builds_written(),
            refused = s.failures.len(),
            "TestGrid read"
        );
        Ok(Fetched {
            stored: s.builds_written(),
            complete: s.builds_written(),
            skipped: s.tabs.iter().map(|t| t.builds_unchanged).sum(),
            stopped: s.stopped,
            newest_started: if partial_error.is_none() { s.newest_started() } else { None },
            partial_error,
        })
    }

    /// A release stream's turn: the newest `max_payloads` payloads the release
    /// controller lists are analysed (the payload crate's analysis over HTTP, with the
    /// artifacts of the mirror or of GCS over HTTP as evidence) and recorded in the store as `payload` does,
    /// unless an analysis of the payload in the phase the stream lists is stored
    /// already. A payload that cannot be analysed fails the source; the others are
    /// still recorded.
    fn follow_stream(&self, store: &mut Store, r: &ReleaseStream) -> Result<Fetched> {
        use citriage_payload::{
            analyze, AnalyzeOptions, EvidenceProvider, GcsMirror, HttpConfig, HttpSource, NoEvidence, PayloadSource,
        };
        let http = HttpConfig { timeout: self.http.timeout, ..HttpConfig::default() };
        let mut src = HttpSource::new(&r.controller, http)?;
        if let Some(g) = &r.github_diffs {
            src = src.with_github_diffs(g)?;
        }
        // The failed jobs' evidence: a local mirror, or GCS over HTTP (with the
        // worker's HTTP options, so their retry budget is shared).
        let gcs = match (&r.mirror, &r.gcs) {
            (None, Some(g)) => Some(
                crate::gcs_evidence::GcsEvidence::new(g, self.http.clone())
                    .map_err(|e| Error::input(format!("source {}: gcs {e}", r.name)))?,
            ),
            _ => None,
        };
        let mirror = r.mirror.as_ref().map(|m| GcsMirror::new(m.clone()));
        let evidence: &dyn EvidenceProvider = match (&mirror, &gcs) {
            (Some(m), _) => m,
            (None, Some(g)) => g,
            (None, None) => &NoEvidence,
        };
        let tags = src.tags(&r.stream)?;
        let mut out = Fetched::default();
        let mut failed: Vec<String> = Vec::new();
        for t in tags.tags.iter().take(r.max_payloads) {
            if self.stopped() {
                out.stopped = true;
                break;
            }
            let stored = store.document("payload", &t.name, crate::documents::JSON)?;
            let stored_phase = stored
                .and_then(|d| serde_json::from_str::<serde_json::Value>(&d.body).ok())
                .map(|v| v["payload"]["phase"].clone());
            if stored_phase.is_some() && stored_phase == serde_json::to_value(&t.phase).ok() {
                out.skipped += 1;
                continue;
            }
            // Each analysis may take a while: the lease is renewed before it.
            store.claim_source(&r.name, "release-stream", &self.name, unix_now(), self.timing.lease)?;
            let mut opts = AnalyzeOptions::new(&t.name);
            opts.stream = Some(r.stream.clone());
            opts.release_controller_url = Some(r.controller.trim_end_matches('/').to_string());
            let analysis = analyze(&src, evidence, &opts);
            // An analysis that could not read some run's artifacts for a transient
            // reason is not recorded (it would stand for the payload's phase): the
            // payload is analysed again at the source's next turn.
            let analysis = match (analysis, gcs.as_ref().and_then(|g| g.take_transient())) {
                (Ok(_), Some(e)) => Err(citriage_payload::PayloadError::Transport {
                    url: r.gcs.clone().unwrap_or_default(),
                    detail: format!("the jobs' artifacts could not all be read ({e}); not recorded"),
                }),
                (a, _) => a,
            };
            match analysis {
                Ok(a) => {
                    crate::documents::record_payload(store, &a)?;
                    out.stored += 1;
                    tracing::info!(
                        source = r.name.as_str(),
                        tag = t.name.as_str(),
                        phase = t.phase.as_str(),
                        verdict = a.decision.verdict.as_str(),
                        "payload analysed"
                    );
                }
                Err(e) => {
                    tracing::warn!(source = r.name.as_str(), tag = t.name.as_str(), error = %e, "payload not analysed");
                    failed.push(format!("{}: {e}", t.name));
                }
            }
        }
        if let Some(first) = failed.first() {
            out.partial_error = Some(first_of(failed.len(), "payload(s)", first));
        }
        Ok(out)
    }

    /// A GitHub repository's turn: the state of every pull request and issue of the
    /// repository the store knows of (named in a stored Markdown document, or already
    /// in the store's cache of GitHub answers) is read again through the GitHub client,
    /// which revalidates cached answers by ETag; `gh sweep --offline`, `triage --links`
    /// and the MCP server then answer with the fresh state. Newest numbers first, at
    /// most `max_refs`.
    fn refresh_github(&self, store: &mut Store, g: &GithubSource) -> Result<Fetched> {
        use citriage_github::{extract_refs, unique_refs, RefContext, RefState, RepoRef};
        let repo = RepoRef::parse(g.repo()).ok_or_else(|| Error::input(format!("{:?} is not OWNER/NAME", g.repo())))?;
        let same = |r: &RepoRef| r.owner.eq_ignore_ascii_case(&repo.owner) && r.name.eq_ignore_ascii_case(&repo.name);
        let mut refs = std::collections::BTreeSet::new();
        let ctx = RefContext::kubernetes();
        for h in store.documents(None)?.iter().filter(|h| h.media_type == crate::documents::MARKDOWN) {
            if let Some(d) = store.document(&h.kind, &h.key, &h.media_type)? {
                refs.extend(unique_refs(&extract_refs(&d.body, &ctx)).into_iter().filter(|r| same(&r.repo)));
            }
        }
        let api = g.api().trim_end_matches('/');
        let prefix = format!("{api}/repos/{}/{}/", repo.owner, repo.name);
        for url in store.http_cache_urls(&prefix)? {
            let rest = &url[prefix.len()..];
            let n = rest.strip_prefix("issues/").or_else(|| rest.strip_prefix("pulls/"));
            if let Some(n) = n.filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
                if let Ok(n) = n.parse::<u64>() {
                    refs.insert(citriage_github::IssueRef::new(repo.clone(), n));
                }
            }
        }
        let mut refs: Vec<_> = refs.into_iter().collect();
        refs.sort_by_key(|r| std::cmp::Reverse(r.number));
        refs.truncate(g.max_refs());
        let cache = std::rc::Rc::new(self.location.open()?);
        let client = crate::github::client(cache, api, false);
        let mut out = Fetched::default();
        let mut failed: Vec<String> = Vec::new();
        for (i, r) in refs.iter().enumerate() {
            if self.stopped() {
                out.stopped = true;
                break;
            }
            if i % 50 == 49 {
                store.claim_source(g.name(), "github", &self.name, unix_now(), self.timing.lease)?;
            }
            match client.lookup(r) {
                RefState::Unknown { why, .. } => {
                    tracing::warn!(source = g.name(), reference = %r, error = why.as_str(), "reference not refreshed");
                    failed.push(format!("{r}: {why}"));
                }
                _ => {
                    tracing::debug!(source = g.name(), reference = %r, "reference refreshed");
                    out.stored += 1;
                }
            }
        }
        if let Some(first) = failed.first() {
            out.partial_error = Some(first_of(failed.len(), "reference(s)", first));
        }
        Ok(out)
    }

    /// Seconds until the next source is due (at least 1, at most 60 so a shutdown
    /// request or a configuration's shorter interval is noticed).
    pub fn until_next(&self, store: &Store) -> i64 {
        let now = unix_now();
        let next = store.source_statuses().ok().and_then(|s| s.iter().map(|s| s.next_due).min()).unwrap_or(now + 60);
        (next - now).clamp(1, 60)
    }
}

/// Renews a source's lease on a connection of its own as a use case reports progress
/// (at most every third of the lease).
struct LeaseRenewer<'a> {
    store: Mutex<(Option<Store>, i64)>,
    source: &'a str,
    kind: &'a str,
    worker: &'a str,
    lease: i64,
}

impl crate::progress::Progress for LeaseRenewer<'_> {
    fn found(&self, _n: u64) {
        let mut g = self.store.lock().unwrap_or_else(|e| e.into_inner());
        let now = unix_now();
        if now - g.1 >= (self.lease / 3).max(1) {
            g.1 = now;
            if let Some(st) = g.0.as_mut() {
                let _ = st.claim_source(self.source, self.kind, self.worker, now, self.lease);
            }
        }
    }
    fn warning(&self, text: &str) {
        tracing::warn!(source = self.source, warning = text, "TestGrid table");
    }
}

fn skipped(t: &Turn<'_>, outcome: &str) -> SourceTick {
    SourceTick {
        source: t.name.into(),
        kind: t.kind.into(),
        outcome: outcome.into(),
        builds_stored: 0,
        complete_stored: 0,
        builds_skipped: 0,
        payloads_analysed: None,
        payloads_unchanged: None,
        refs_refreshed: None,
        error: None,
    }
}

/// A source's figures in its tick, in its kind's words.
fn fill(tick: &mut SourceTick, kind: &str, f: &Fetched) {
    match kind {
        "bucket" | "testgrid" => {
            tick.builds_stored = f.stored;
            tick.complete_stored = f.complete;
            tick.builds_skipped = f.skipped;
        }
        "release-stream" => {
            tick.payloads_analysed = Some(f.stored);
            tick.payloads_unchanged = Some(f.skipped);
        }
        "github" => tick.refs_refreshed = Some(f.stored),
        _ => {}
    }
}
