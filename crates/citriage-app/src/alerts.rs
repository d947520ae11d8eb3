//! Alerting's use cases (issue: alerts people can trust): what the rules see of the
//! store ([`observe`]), a turn — the rules evaluated over the remembered states, every
//! alert checked with the report verifier's rules (held back, with why, when flagged),
//! and the alerts, the new states and the outbox messages committed in one transaction
//! ([`turn`]) — the outbox sent ([`send`]), its state ([`outbox`]), messages given up
//! re-queued ([`retry`]) and a day's alerts as one digest ([`digest`]). `citriage
//! alerts`, `citriage bench alerts` and the worker of `watch` run them.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::progress::Progress;
use citriage_alerts::observe::FailingRun;
use citriage_alerts::route::Routes;
use citriage_alerts::{
    evaluate, Alert, AlertKind, Change, JobRuns, Observation, PatternDay, PatternSeries, PayloadOutcome, PayloadPhase,
    RecordState, RecordTransition, Rules, Run, RunResult, State, StateKey,
};
use citriage_delivery::sender::Relay;
use citriage_delivery::{AlertsConfig, Delivered, DrainReport, Sender};
use citriage_model::time::DAY;
use citriage_model::{Day, Evidence, EvidenceKind};
use citriage_sources::HttpOptions;
use citriage_store::{AlertStates, AlertTurn, NewAlert, NewDelivery, OutboxRow, Store, TurnWritten};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What a turn looks at and how it decides.
#[derive(Debug, Clone)]
pub struct AlertOptions {
    pub rules: Rules,
    pub routes: Routes,
    /// Team → regular expressions of the jobs it owns (the configuration's owners).
    pub owners: Vec<(String, regex::Regex)>,
    /// The clustering profile whose patterns are watched.
    pub profile: String,
    /// Days of runs and payloads looked at.
    pub window_days: i64,
    /// GitHub for checking references (offline: the store's cache only).
    pub api: String,
    pub offline: bool,
    /// The instant the turn describes (default: the newest build's end).
    pub as_of: Option<i64>,
    /// Evaluate and check, write nothing.
    pub dry_run: bool,
    /// The time the evidence ledger records its items were read (default: now).
    pub read_at: Option<String>,
}

impl Default for AlertOptions {
    fn default() -> Self {
        AlertOptions {
            rules: Rules::default(),
            routes: Routes::default(),
            owners: Vec::new(),
            profile: "default".into(),
            window_days: 14,
            api: "https://api.github.com".into(),
            offline: true,
            as_of: None,
            dry_run: false,
            read_at: None,
        }
    }
}

impl AlertOptions {
    /// The rules, routes and owners of a configuration file (checked by
    /// [`Config::parse`]; a bad owner pattern is still refused by name here).
    pub fn from_config(cfg: &Config) -> Result<AlertOptions> {
        let mut owners = Vec::new();
        for (team, patterns) in &cfg.owners {
            for (i, p) in patterns.iter().enumerate() {
                let re = regex::Regex::new(p).map_err(|e| Error::input(format!("owners.{team}[{i}]: {e}")))?;
                owners.push((team.clone(), re));
            }
        }
        Ok(AlertOptions {
            rules: cfg.alerts.rules.clone(),
            routes: cfg.alerts.routes(),
            owners,
            ..AlertOptions::default()
        })
    }

    fn owner_of(&self, job: &str) -> String {
        let raw = job.strip_prefix("pr:").unwrap_or(job);
        self.owners
            .iter()
            .find(|(_, re)| re.is_match(raw))
            .map(|(t, _)| citriage_model::owner::canonical(t))
            .unwrap_or_default()
    }
}

fn run_of(b: &citriage_model::build::BuildRecord) -> Run {
    Run {
        build_id: b.build_id.clone(),
        url: citriage_analysis::build_findings::build_url(b),
        started: b.started.unwrap_or(0),
        result: RunResult::of_prow(b.result.as_deref()),
        evidence: citriage_analysis::build_findings::build_evidence(b),
    }
}

/// Periodic and postsubmit jobs' finished runs in the window, oldest first.
fn job_runs(builds: &[citriage_store::IndexedBuild], s: &AlertOptions, as_of: i64) -> Vec<JobRuns> {
    let since = as_of - s.window_days * DAY;
    let mut by_job: BTreeMap<&str, Vec<&citriage_model::build::BuildRecord>> = BTreeMap::new();
    for b in builds.iter().map(|b| &b.record) {
        let finished = b.finished.is_some_and(|f| f <= as_of);
        let started = b.started.is_some_and(|t| t > since && t <= as_of);
        if matches!(b.kind.as_str(), "periodic" | "postsubmit") && b.complete && finished && started {
            by_job.entry(b.job.as_str()).or_default().push(b);
        }
    }
    by_job
        .into_iter()
        .map(|(job, mut v)| {
            v.sort_by(|a, b| (a.started, &a.build_id).cmp(&(b.started, &b.build_id)));
            JobRuns { job: job.to_string(), owner: s.owner_of(job), runs: v.into_iter().map(run_of).collect() }
        })
        .collect()
}

/// The latest clustering run's patterns with their daily failures.
fn patterns(store: &Store, s: &AlertOptions) -> Result<Vec<PatternSeries>> {
    if store.cluster_run(&s.profile)?.is_none() {
        return Ok(Vec::new());
    }
    let mut daily: BTreeMap<String, Vec<PatternDay>> = BTreeMap::new();
    for d in store.cluster_daily(&s.profile)? {
        daily.entry(d.stable_id).or_default().push(PatternDay {
            day: Day(d.day),
            job: d.job,
            test: d.test,
            failures: d.failures,
        });
    }
    let mut out = Vec::new();
    for c in store.clusters(&s.profile)? {
        let Some(days) = daily.remove(&c.stable_id) else { continue };
        out.push(PatternSeries {
            id: c.stable_id,
            owner: citriage_model::owner::canonical(&c.owner),
            text: c.text,
            first_seen: c.first_seen,
            daily: days,
            recent: Vec::new(),
        });
    }
    Ok(out)
}

/// Stored payload analyses created by `as_of`, with their verdicts.
fn payloads(store: &Store, as_of: i64) -> Result<Vec<PayloadOutcome>> {
    let mut out = Vec::new();
    for h in store.documents(Some("payload"))?.into_iter().filter(|h| h.media_type == "application/json") {
        let Some(doc) = store.document("payload", &h.key, &h.media_type)? else { continue };
        // An analysis this version cannot read is not alerted on (`payload` rewrites it).
        let Ok(a) = serde_json::from_str::<citriage_payload::PayloadAnalysis>(&doc.body) else { continue };
        let created = a
            .payload
            .created
            .as_deref()
            .and_then(citriage_model::time::parse_rfc3339)
            .or_else(|| citriage_model::time::tag_timestamp(&a.payload.tag));
        let Some(created) = created.filter(|c| *c <= as_of) else { continue };
        let phase = match a.payload.phase {
            citriage_payload::release::Phase::Accepted => PayloadPhase::Accepted,
            citriage_payload::release::Phase::Rejected => PayloadPhase::Rejected,
            _ => PayloadPhase::Pending,
        };
        let excerpt = format!("phase={:?} verdict={:?}", a.payload.phase, a.decision.verdict);
        let ev = Evidence::new(
            EvidenceKind::ReleaseInfo,
            a.payload.release_url.clone(),
            excerpt,
            "",
            Day::from_unix_seconds(created).to_string(),
        );
        out.push(PayloadOutcome {
            stream: a.payload.stream_name.clone(),
            tag: a.payload.tag.clone(),
            created,
            phase,
            verdict: a.decision.summary.clone(),
            root_causes: a.root_causes.iter().map(|r| r.title.clone()).collect(),
            suspect: a.suspects.first().map(|s| s.candidate.clone()),
            owner: String::new(),
            url: a.payload.release_url.clone(),
            evidence: vec![ev],
        });
    }
    Ok(out)
}

/// Triage records' transitions into the states that alert (failed after fix, fix
/// confirmed) whose evidence time falls in the window: read from the records' history,
/// never derived again. Each names the record's merged fix (its first merged pull
/// request still linked) and cites the evidence the transition rests on.
fn record_transitions(store: &Store, s: &AlertOptions, as_of: i64) -> Result<Vec<RecordTransition>> {
    let since = as_of - s.window_days * DAY;
    let mut out = Vec::new();
    for t in store.record_history(0)? {
        let state = match t.to.as_str() {
            "failed-after-fix" => RecordState::FailedAfterFix,
            "fix-confirmed" => RecordState::FixConfirmed,
            _ => continue,
        };
        if t.at <= since || t.at > as_of {
            continue;
        }
        let Some(record) = store.record(&t.subject)? else { continue };
        let owner = match record.kind.as_str() {
            "pattern" => {
                store.cluster(&record.profile, &record.key)?.map(|c| citriage_model::owner::canonical(&c.owner))
            }
            "job" => Some(s.owner_of(&record.key)),
            _ => None,
        }
        .unwrap_or_default();
        let mut merged: Vec<_> = store
            .record_links(&t.subject)?
            .into_iter()
            .filter(|l| l.active() && l.facts.ref_state == "merged")
            .collect();
        merged.sort_by_key(|l| (l.facts.merged_at, l.reference.clone()));
        let mut evidence = Vec::new();
        for id in &t.evidence {
            if let Some(e) = store.evidence(id)? {
                evidence.push(e.evidence);
            }
        }
        out.push(RecordTransition {
            record: t.subject.clone(),
            subject: record.key.clone(),
            owner,
            state,
            at: t.at,
            summary: t.reason.clone(),
            fix: merged.first().map(|l| l.reference.clone()),
            runs: Vec::new(),
            evidence,
        });
    }
    Ok(out)
}

/// The instant a turn describes: the end of the newest finished build (robust to a
/// build dated far off).
pub fn default_as_of(builds: &[citriage_store::IndexedBuild]) -> Option<i64> {
    citriage_model::time::robust_newest(builds.iter().filter_map(|b| b.record.finished.or(b.record.started)))
}

/// What the rules see of the store as of `as_of` (default: the newest build's end).
/// Flaky tests and the patterns' cited runs are filled in by [`turn`] for the patterns
/// that would alert.
pub fn observe(store: &Store, s: &AlertOptions, as_of: Option<i64>) -> Result<Observation> {
    let builds = store.build_index()?;
    let as_of = as_of.or_else(|| default_as_of(&builds)).unwrap_or(0);
    let history_start = builds.iter().filter_map(|b| b.record.started).min();
    Ok(Observation {
        as_of,
        history_start,
        jobs: job_runs(&builds, s, as_of),
        patterns: patterns(store, s)?,
        flaky: BTreeSet::new(),
        payloads: payloads(store, as_of)?,
        records: record_transitions(store, s, as_of)?,
    })
}

/// The (job, test) pairs of `jobs` the flake signals flag as of `as_of`.
fn flaky_tests(store: &mut Store, jobs: &BTreeSet<String>, as_of: i64) -> Result<BTreeSet<(String, String)>> {
    let settings = citriage_analysis::metrics::corrected::Settings::new(as_of, Vec::new());
    let since = as_of - (settings.window_days + 1) * DAY;
    let mut out = BTreeSet::new();
    let raw: BTreeSet<&str> = jobs.iter().map(|j| j.strip_prefix("pr:").unwrap_or(j)).collect();
    for job in raw {
        let builds = store.job_builds_with_tests(job, Some(since))?;
        for f in citriage_analysis::metrics::corrected::job_figures(&builds, &settings) {
            for t in f.tests.iter().filter(|t| t.is_flaky()) {
                out.insert((f.job.clone(), t.name.clone()));
            }
        }
    }
    Ok(out)
}

/// The newest failing runs of `pattern` to cite.
fn recent_failures(store: &Store, s: &AlertOptions, pattern: &str) -> Result<Vec<FailingRun>> {
    let mut out = Vec::new();
    for f in store.cluster_failures(&s.profile, pattern, 12)? {
        let builds = store.builds(Some(&f.job))?;
        let Some(b) = builds.iter().find(|b| b.build_id == f.build_id && b.path == f.path) else { continue };
        out.push(FailingRun { job: b.dashboard_job(), test: f.test.clone(), run: run_of(b) });
    }
    Ok(out)
}

/// One alert of a turn: sent (to its destinations) or held back (why).
#[derive(Debug, Clone, Serialize)]
pub struct TurnAlert {
    #[serde(flatten)]
    pub alert: Alert,
    pub text: String,
    /// Why the verifier's rules held it back (nothing is sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    pub destinations: Vec<String>,
}

/// What a turn found (and, unless a dry run, committed).
#[derive(Debug, Clone, Serialize)]
pub struct TurnReport {
    pub as_of: i64,
    pub alerts: Vec<TurnAlert>,
    /// What was written (`None`: a dry run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<TurnWritten>,
}

fn parse_states(raw: &AlertStates) -> Result<BTreeMap<StateKey, State>> {
    let mut out = BTreeMap::new();
    for ((kind, subject), json) in raw {
        let k = AlertKind::parse(kind)
            .ok_or_else(|| Error::failed(format!("the store's alert states hold an unknown kind {kind:?}")))?;
        let st: State = serde_json::from_str(json)
            .map_err(|e| Error::failed(format!("the store's alert state of {kind} {subject:?} is unreadable: {e}")))?;
        out.insert((k, subject.clone()), st);
    }
    Ok(out)
}

/// The verifier's rules over each alert: why each held one is held. A withdrawal of an
/// alert that was held is held too (nobody heard the alert).
fn check_alerts(store: Rc<Store>, s: &AlertOptions, alerts: &[Alert]) -> Result<BTreeMap<String, String>> {
    let gh = crate::github::client(store.clone(), &s.api, s.offline);
    let builds = crate::verify::StoreBuilds::new(store.clone());
    let code = citriage_verify::NoCode;
    let resolvers = citriage_verify::Resolvers { refs: &gh, code: &code, builds: &builds };
    let opts = citriage_verify::VerifyOptions::default();
    let mut held = BTreeMap::new();
    for a in alerts {
        let findings = citriage_alerts::check::check(a, &resolvers, &opts);
        if !findings.is_empty() {
            held.insert(a.key.clone(), citriage_alerts::check::describe(&findings));
        }
    }
    for a in alerts {
        let Some(w) = &a.withdraws else { continue };
        let earlier = match held.get(w) {
            Some(_) => true,
            None => store.alert(w)?.is_some_and(|x| x.held.is_some()),
        };
        if earlier && !held.contains_key(&a.key) {
            held.insert(a.key.clone(), format!("the alert it withdraws ({w}) was held back"));
        }
    }
    Ok(held)
}

/// The turn's alerts evaluated with flaky tests and cited runs filled in for the
/// patterns that would alert.
fn evaluate_full(
    store: &mut Store,
    s: &AlertOptions,
    prev: &BTreeMap<StateKey, State>,
    mut obs: Observation,
) -> Result<citriage_alerts::Outcome> {
    let first = evaluate(&s.rules, prev, &obs);
    let candidates: BTreeSet<String> = first
        .alerts
        .iter()
        .filter(|a| a.change == Change::Raised && matches!(a.kind, AlertKind::PatternNew | AlertKind::PatternGrowing))
        .map(|a| a.subject.clone())
        .collect();
    if candidates.is_empty() {
        return Ok(first);
    }
    let jobs: BTreeSet<String> = obs
        .patterns
        .iter()
        .filter(|p| candidates.contains(&p.id))
        .flat_map(|p| p.daily.iter().map(|d| d.job.clone()))
        .collect();
    obs.flaky = flaky_tests(store, &jobs, obs.as_of)?;
    for p in obs.patterns.iter_mut().filter(|p| candidates.contains(&p.id)) {
        p.recent = recent_failures(store, s, &p.id)?;
    }
    Ok(evaluate(&s.rules, prev, &obs))
}

fn new_alert(a: &Alert, held: Option<String>) -> NewAlert {
    NewAlert {
        key: a.key.clone(),
        kind: a.kind.as_str().into(),
        change: a.change.as_str().into(),
        subject: a.subject.clone(),
        owner: a.owner.clone(),
        at: a.at,
        title: citriage_alerts::text::title(a),
        text: citriage_alerts::text::plain(a),
        body: serde_json::to_string(a).unwrap_or_default(),
        held,
        evidence: a.evidence.clone(),
    }
}

/// Runs `f` with the store shared (the verifier's resolvers read it through an `Rc`),
/// then puts it back.
fn shared<T>(store: &mut Store, f: impl FnOnce(Rc<Store>) -> T) -> Result<T> {
    let placeholder = Store::open_in_memory()?;
    let rc = Rc::new(std::mem::replace(store, placeholder));
    let out = f(rc.clone());
    *store = Rc::try_unwrap(rc).map_err(|_| Error::failed("the store is still in use"))?;
    Ok(out)
}

/// The turn's alerts with their destinations and why any was held.
fn report_of(
    as_of: i64,
    alerts: &[Alert],
    held: &BTreeMap<String, String>,
    planned: &[citriage_alerts::route::Planned],
) -> TurnReport {
    let mut report = TurnReport { as_of, alerts: Vec::new(), written: None };
    for a in alerts {
        let destinations = planned.iter().filter(|p| p.alert == a.key).map(|p| p.destination.clone()).collect();
        report.alerts.push(TurnAlert {
            alert: a.clone(),
            text: citriage_alerts::text::markdown(a),
            held: held.get(&a.key).cloned(),
            destinations,
        });
    }
    report
}

/// What a turn writes: the changed states, the alerts, the outbox's rows.
fn turn_rows(
    as_of: i64,
    out: &citriage_alerts::Outcome,
    held: &BTreeMap<String, String>,
    planned: &[citriage_alerts::route::Planned],
) -> AlertTurn {
    AlertTurn {
        as_of,
        states: out
            .states
            .iter()
            .map(|((k, subject), st)| {
                (k.as_str().to_string(), subject.clone(), serde_json::to_string(st).unwrap_or_default())
            })
            .collect(),
        alerts: out.alerts.iter().map(|a| new_alert(a, held.get(&a.key).cloned())).collect(),
        deliveries: planned
            .iter()
            .map(|p| NewDelivery {
                message: p.message.clone(),
                destination: p.destination.clone(),
                alert: p.alert.clone(),
                digest_day: p.digest_day.map(|d| d.0),
            })
            .collect(),
        close_digests_before: Some(Day::from_unix_seconds(as_of).0),
    }
}

/// A turn: observe, evaluate over the remembered states, check, and (unless
/// `dry_run`) commit the alerts, states and outbox messages in one transaction. When
/// another worker committed a turn meanwhile, evaluates again.
pub fn turn(store: &mut Store, opts: &AlertOptions, progress: &dyn Progress) -> Result<TurnReport> {
    let read_at = opts.read_at.clone().unwrap_or_else(crate::clock::now_rfc3339);
    for _ in 0..8 {
        progress.doing("evaluating the alert rules");
        let raw = store.alert_states()?;
        let prev = parse_states(&raw)?;
        let obs = observe(store, opts, opts.as_of)?;
        let as_of = obs.as_of;
        let out = evaluate_full(store, opts, &prev, obs)?;
        progress.doing("checking the alerts with the verifier's rules");
        let held = shared(store, |rc| check_alerts(rc, opts, &out.alerts))??;
        let sendable: Vec<Alert> = out.alerts.iter().filter(|a| !held.contains_key(&a.key)).cloned().collect();
        let planned = citriage_alerts::route::plan(&sendable, &opts.routes, Day::from_unix_seconds(as_of));
        let mut report = report_of(as_of, &out.alerts, &held, &planned);
        if opts.dry_run {
            return Ok(report);
        }
        let rows = turn_rows(as_of, &out, &held, &planned);
        if let Some(w) = store.commit_alerts(&raw, &rows, &read_at)? {
            report.written = Some(w);
            return Ok(report);
        }
        progress.note("another worker committed an alert turn meanwhile: evaluating again");
    }
    Err(Error::failed("the alert states kept changing under this turn (other workers): try again"))
}

/// How the outbox is sent.
#[derive(Debug, Clone)]
pub struct SendOptions {
    /// Destinations, the SMTP relay, lease and backoff (`[alerts]`).
    pub alerts: AlertsConfig,
    /// This sender's name in the outbox's leases.
    pub worker: String,
    /// The most messages sent (default: until nothing is due).
    pub limit: Option<usize>,
    /// Stops between messages when set (SIGINT/SIGTERM).
    pub stop: Option<Arc<AtomicBool>>,
    pub http: HttpOptions,
}

impl Default for SendOptions {
    fn default() -> Self {
        SendOptions {
            alerts: AlertsConfig::default(),
            worker: crate::config::default_worker_name(),
            limit: None,
            stop: None,
            http: HttpOptions::default(),
        }
    }
}

/// Reads the environment: webhook URLs named by `url_env`, the SMTP user and password.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Sends the outbox's due messages, one at a time under a lease; each recorded as sent
/// only after its receiver accepted it. Secrets come from the environment and are in
/// no error.
pub fn send(store: &mut Store, opts: &SendOptions, progress: &dyn Progress) -> Result<DrainReport> {
    let env = env_var;
    let now = crate::clock::now;
    let relay = opts.alerts.smtp.as_ref().map(|c| Relay { settings: c.settings(&env), from: c.from.clone() });
    let http = citriage_sources::http::HttpClient::new(opts.http.clone());
    let sender = Sender {
        worker: opts.worker.clone(),
        lease_secs: opts.alerts.lease_secs(),
        backoff: opts.alerts.backoff(),
        destinations: opts.alerts.destinations_by_name(),
        relay,
        http,
        env: &env,
        now: &now,
        stop: opts.stop.as_deref(),
        limit: opts.limit,
    };
    progress.doing("sending the alerts' outbox");
    let mut shown = |d: &Delivered| {
        progress.advance(1);
        match &d.error {
            Some(e) => progress.note(&format!("{} to {}: {}: {e}", d.message, d.destination, d.outcome)),
            None => progress.note(&format!("{} to {}: {}", d.message, d.destination, d.outcome)),
        }
    };
    Ok(sender.drain_with(store, &mut shown)?)
}

/// The outbox as it stands, each message with its state, attempts and last error.
pub fn outbox(store: &Store) -> Result<Vec<OutboxRow>> {
    Ok(store.outbox()?)
}

/// Re-queues the messages given up (of one destination, or all); how many.
pub fn retry(store: &mut Store, destination: Option<&str>) -> Result<u64> {
    Ok(store.retry_failed_messages(destination)?)
}

/// A day's alerts as one message, as a destination in digest mode receives it.
#[derive(Debug, Clone, Serialize)]
pub struct Digest {
    pub day: String,
    /// The alerts raised or withdrawn that day and not held, in order (time, then key).
    pub alerts: Vec<Alert>,
    /// The digest's plain text (an e-mail's body).
    pub text: String,
}

/// The stored alerts of `day` (default: the day of the newest stored alert) batched
/// into one digest.
pub fn digest(store: &Store, day: Option<Day>) -> Result<Digest> {
    let stored = store.alerts(None, None)?;
    let Some(day) = day.or_else(|| stored.iter().map(|a| Day::from_unix_seconds(a.at)).max()) else {
        return Err(Error::remedy("the store holds no alerts: run ", "alerts", " first"));
    };
    let mut alerts = Vec::new();
    for a in stored.iter().filter(|a| a.held.is_none() && Day::from_unix_seconds(a.at) == day) {
        let alert: Alert = serde_json::from_str(&a.body)
            .map_err(|e| Error::failed(format!("the store's alert {} is unreadable: {e}", a.key)))?;
        alerts.push(alert);
    }
    alerts.sort_by(|a, b| (a.at, &a.key).cmp(&(b.at, &b.key)));
    let text = citriage_alerts::message::digest_text(day, &alerts);
    Ok(Digest { day: day.to_string(), alerts, text })
}
