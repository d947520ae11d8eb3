//! "Did my PR break this?" (`citriage pr ORG/REPO#N`): the pull request's presubmit
//! runs in the store, the latest run of each job, and each failed test or failed build
//! step of those runs classified by `citriage_analysis::pr_risk` from the facts gathered
//! here: the job's flake signals over the window without this PR's runs, the same
//! failure pattern (the latest clustering run's stable id, else the normalized text) on
//! the base branch or other PRs' runs without this PR, the environment's signatures and
//! setup steps, and the files of the PR's diff (read through the GitHub client over the
//! store's cache). Every classification cites evidence recorded in the ledger.

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::records::GithubAccess;
use citriage_analysis::build_findings::build_evidence;
use citriage_analysis::metrics::corrected::{job_figures, Settings};
use citriage_analysis::pr_risk::{
    self, classify, failed_items, files_named, infra_reasons, pulls_of, Class, Elsewhere, Facts, FailedItem, FlakeFact,
    Rules, Verdict,
};
use citriage_analysis::AnalysisConfig;
use citriage_github::{GithubClient, GithubError, IssueRef, PrStatus, RepoRef};
use citriage_model::build::{prow_url, BuildRecord};
use citriage_model::time::DAY;
use citriage_model::{Day, Evidence, EvidenceKind};
use citriage_patterns::normalize::{normalize, Profile};
use citriage_patterns::signatures::Catalogue;
use citriage_store::{IndexedBuild, Store};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

/// A pull request as asked: `ORG/REPO#N` or its GitHub URL.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PrTarget {
    /// `org/repo`.
    pub repo: String,
    pub number: u64,
}

impl std::fmt::Display for PrTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.repo, self.number)
    }
}

impl PrTarget {
    /// Reads `ORG/REPO#N` or `https://github.com/ORG/REPO/pull/N`.
    pub fn parse(s: &str) -> Result<PrTarget> {
        let bad = || {
            Error::input(format!(
                "{s:?} is not a pull request: expected ORG/REPO#N (kubernetes/kubernetes#12345) or its GitHub URL"
            ))
        };
        let r = IssueRef::parse(s.trim()).ok_or_else(bad)?;
        if r.number == 0 {
            return Err(bad());
        }
        Ok(PrTarget { repo: format!("{}/{}", r.repo.owner, r.repo.name), number: r.number })
    }

    fn issue_ref(&self) -> IssueRef {
        let (o, n) = self.repo.split_once('/').unwrap_or((&self.repo, ""));
        IssueRef::new(RepoRef::new(o, n), self.number)
    }

    /// The folder of the PR's runs in a Prow bucket (`pr-logs/pull/[SEGMENT/]N/`):
    /// kubernetes/kubernetes has no segment, other kubernetes repositories their
    /// name, any other `org_repo`.
    pub fn pr_logs_prefix(&self) -> String {
        match self.repo.split_once('/') {
            Some(("kubernetes", "kubernetes")) => format!("pr-logs/pull/{}/", self.number),
            Some(("kubernetes", name)) => format!("pr-logs/pull/{name}/{}/", self.number),
            Some((org, name)) => format!("pr-logs/pull/{org}_{name}/{}/", self.number),
            None => format!("pr-logs/pull/{}/", self.number),
        }
    }
}

/// What `pr` is asked.
#[derive(Debug, Clone)]
pub struct PrOptions {
    /// The window's end (a date or Unix seconds); default: the newest stored build's day.
    pub as_of: Option<String>,
    /// Days before `as_of` searched for the same failures and flake signals.
    pub window_days: i64,
    /// Where the PR's state and diff are read; `None`: not asked (the store alone).
    pub github: Option<GithubAccess>,
    pub rules: Rules,
    /// How `fetch --pr` is spelled in the remedy when the PR has no stored runs (its
    /// source options), e.g. `--gcs https://storage.googleapis.com`.
    pub fetch_source: String,
    /// Record the evidence in the store's ledger (the dashboard, which writes nothing,
    /// does not: its page cites ids that `pr` and `pr_risk` record).
    pub record: bool,
}

impl Default for PrOptions {
    fn default() -> Self {
        PrOptions {
            as_of: None,
            window_days: 14,
            github: Some(GithubAccess::default()),
            rules: Rules::default(),
            fetch_source: "--gcs https://storage.googleapis.com".into(),
            record: true,
        }
    }
}

/// The latest run of one job of the PR.
#[derive(Debug, Clone, Serialize)]
pub struct JobRun {
    pub job: String,
    pub build_id: String,
    pub path: String,
    pub url: String,
    /// `SUCCESS`, `FAILURE`, `ERROR`, `ABORTED`, or `PENDING` while running.
    pub result: String,
    pub started: Option<i64>,
    /// The PR head the run tested.
    pub head: Option<String>,
    /// Older runs of the job on this PR.
    pub earlier_runs: usize,
    pub failures: usize,
    pub evidence: String,
}

/// One failure of a latest run and its class.
#[derive(Debug, Clone, Serialize)]
pub struct PrFailure {
    pub job: String,
    pub build_path: String,
    pub url: String,
    /// The test's name, or `build` for a failed build step.
    pub test: String,
    pub classname: String,
    pub step: bool,
    /// The failure's first line (at most 300 characters).
    pub first_line: String,
    pub class: Class,
    pub strong: bool,
    pub reason: String,
    pub facts: Facts,
    /// Evidence ids (in [`PrRisk::evidence`] and the store's ledger).
    pub evidence: Vec<String>,
}

/// What GitHub said about the PR.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PrGithub {
    pub state: Option<String>,
    pub title: Option<String>,
    pub head_sha: Option<String>,
    pub base_ref: Option<String>,
    /// Files the diff changes; `None` when not read.
    pub changed_files: Option<Vec<String>>,
    /// Why something was not read (offline and not cached, GitHub not asked).
    pub note: Option<String>,
}

/// The PR's risk analysis.
#[derive(Debug, Clone, Serialize)]
pub struct PrRisk {
    pub pr: String,
    pub url: String,
    pub as_of: String,
    pub window_days: i64,
    pub github: PrGithub,
    pub runs: Vec<JobRun>,
    /// Latest runs still running.
    pub pending: Vec<String>,
    pub failures: Vec<PrFailure>,
    /// Failures per class.
    pub counts: BTreeMap<Class, usize>,
    pub verdict: Verdict,
    /// The pattern profile whose stable ids are cited (`default`), when clustered.
    pub profile: Option<String>,
    pub evidence: Vec<Evidence>,
}

/// The clustering profile whose stable ids the analysis cites.
const PROFILE: &str = "default";

/// A GitHub client whose cache is a second connection to the same store.
fn github_client(store: &Store, access: &GithubAccess) -> Result<GithubClient> {
    let cache = Rc::new(store.location().open()?);
    Ok(crate::github::client(cache, &access.api, access.offline))
}

fn gh_failed(e: GithubError) -> Error {
    match e {
        GithubError::Status { status: 404, .. } => Error::input(e.to_string()),
        other => Error::failed(other.to_string()),
    }
}

/// Whether `b` is one of the PR's own presubmit runs.
fn is_pr_run(b: &BuildRecord, t: &PrTarget) -> bool {
    if b.kind != "presubmit" || b.pr != Some(t.number) {
        return false;
    }
    match b.repos.as_deref() {
        Some(r) if r.contains(&t.repo) => pulls_of(Some(r), &t.repo).contains(&t.number),
        _ => b.path.starts_with(&t.pr_logs_prefix()),
    }
}

/// Whether `b` carries the PR's change (its own runs, and batches that merge it).
fn carries_pr(b: &BuildRecord, t: &PrTarget) -> bool {
    is_pr_run(b, t) || (b.kind == "batch" && pulls_of(b.repos.as_deref(), &t.repo).contains(&t.number))
}

/// The repositories whose pull request `number` has stored presubmit runs, sorted
/// (the dashboard's `/prs/N` when a build names only the number).
pub fn repos_of(store: &Store, number: u64) -> Result<Vec<String>> {
    let mut out = BTreeSet::new();
    for b in store.build_index()? {
        let r = &b.record;
        if r.kind != "presubmit" || r.pr != Some(number) {
            continue;
        }
        if let Some(Ok(serde_json::Value::Object(m))) = r.repos.as_deref().map(serde_json::from_str) {
            for k in m.keys() {
                if pulls_of(r.repos.as_deref(), k).contains(&number) {
                    out.insert(k.clone());
                }
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// `pr`: the PR's latest runs and each failure's class (see the module's documentation).
pub fn analyse(store: &mut Store, target: &PrTarget, opts: &PrOptions, progress: &dyn Progress) -> Result<PrRisk> {
    progress.doing(&format!("reading the stored runs of {target}"));
    let index = store.build_index()?;
    let mine: Vec<&IndexedBuild> = index.iter().filter(|b| is_pr_run(&b.record, target)).collect();
    let gh = opts.github.as_ref().map(|a| github_client(store, a)).transpose()?;
    if mine.is_empty() {
        if let Some(gh) = &gh {
            check_exists(gh, target)?;
        }
        return Err(Error::remedy(
            format!("no stored runs of {target} in {}: fetch them with ", store.path()),
            &format!("fetch --pr {target} {}", opts.fetch_source),
            " (only that PR's job folders are read), then ask again",
        ));
    }
    let github = match &gh {
        Some(gh) => read_github(gh, target)?,
        None => PrGithub { note: Some("GitHub not asked: the diff is unknown".into()), ..PrGithub::default() },
    };
    drop(gh);
    let all: Vec<BuildRecord> = index.iter().map(|b| b.record.clone()).collect();
    let as_of = crate::builds::as_of(opts.as_of.as_deref(), &all)?;
    drop(all);
    let since = as_of - opts.window_days.max(1) * DAY;
    let mut ctx = Ctx::new(target, opts, as_of, since, &index, github.changed_files.clone().unwrap_or_default());
    // The latest run of each job.
    let mut latest: BTreeMap<&str, Vec<&IndexedBuild>> = BTreeMap::new();
    for b in &mine {
        latest.entry(b.record.job.as_str()).or_default().push(b);
    }
    let mut runs = Vec::new();
    let mut pending = Vec::new();
    let mut failures = Vec::new();
    progress.total(latest.len() as u64);
    for (job, mut v) in latest {
        v.sort_by(|a, b| (a.record.started, &a.record.build_id).cmp(&(b.record.started, &b.record.build_id)));
        let head = v[v.len() - 1];
        progress.doing(&format!("classifying the failures of {job}"));
        let (run, fails) = ctx.job_run(store, head, v.len() - 1)?;
        if run.result == "PENDING" {
            pending.push(run.job.clone());
        }
        runs.push(run);
        failures.extend(fails);
        progress.advance(1);
    }
    ctx.elsewhere_by_text(store, &mut failures)?;
    for f in &mut failures {
        let c = classify(&f.facts, &opts.rules);
        f.class = c.class;
        f.strong = c.strong;
        f.reason = c.reason;
        f.evidence.extend(ctx.facts_evidence(&f.facts));
        f.evidence.sort();
        f.evidence.dedup();
    }
    failures.sort_by(|a, b| (a.class, &a.job, &a.classname, &a.test).cmp(&(b.class, &b.job, &b.classname, &b.test)));
    let classes: Vec<Class> = failures.iter().map(|f| f.class).collect();
    let verdict = pr_risk::verdict(&classes, pending.len());
    let mut counts = BTreeMap::new();
    for c in &classes {
        *counts.entry(*c).or_insert(0) += 1;
    }
    let evidence: Vec<Evidence> = ctx.evidence.into_values().collect();
    if opts.record {
        store.record_evidence(&evidence, &crate::clock::now_rfc3339())?;
    }
    Ok(PrRisk {
        pr: target.to_string(),
        url: target.issue_ref().html_url(),
        as_of: Day::from_unix_seconds(as_of).to_string(),
        window_days: opts.window_days.max(1),
        github,
        runs,
        pending,
        failures,
        counts,
        verdict,
        profile: ctx.clustered.then(|| PROFILE.to_string()),
        evidence,
    })
}

/// A PR that has no stored runs: bad input GitHub can name (a fork, a number that does
/// not exist) before the remedy is offered.
fn check_exists(gh: &GithubClient, t: &PrTarget) -> Result<()> {
    let r = t.issue_ref();
    match gh.repository(&r.repo) {
        Ok(Some(facts)) => {
            if let Some(parent) = facts.fork_of {
                return Err(Error::input(format!(
                    "{} is a fork of {parent}: Prow tests the pull requests of {parent}, not of the fork; ask about {parent}#N",
                    t.repo
                )));
            }
        }
        Ok(None) => return Err(Error::input(format!("{}: no such repository on GitHub (404)", t.repo))),
        Err(GithubError::NotCached { .. }) => return Ok(()),
        Err(e) => return Err(gh_failed(e)),
    }
    match gh.pull(&r) {
        Ok(s) if s.status == PrStatus::NotFound => {
            Err(Error::input(format!("{t}: no such pull request on GitHub (404): check the number")))
        }
        Ok(_) => Ok(()),
        Err(e) => Err(gh_failed(e)),
    }
}

/// The PR's state and diff from GitHub (offline without an answer: said, not guessed).
fn read_github(gh: &GithubClient, t: &PrTarget) -> Result<PrGithub> {
    let r = t.issue_ref();
    let s = gh.pull(&r).map_err(gh_failed)?;
    if s.status == PrStatus::NotFound {
        return Err(Error::input(format!("{t}: no such pull request on GitHub (404), though runs of it are stored")));
    }
    let mut out = PrGithub {
        state: Some(s.state_text()),
        title: (!s.title.is_empty()).then(|| s.title.clone()),
        head_sha: s.head_sha.clone(),
        base_ref: s.base_ref.clone(),
        ..PrGithub::default()
    };
    match gh.pull_files(&r) {
        Ok(Some(f)) => out.changed_files = Some(f.files),
        Ok(None) => out.note = Some("GitHub has no file list for it (404)".into()),
        Err(GithubError::NotCached { .. }) => out.note = Some("offline and the diff is not cached".into()),
        Err(e) => return Err(gh_failed(e)),
    }
    Ok(out)
}

/// What one analysis gathers as it goes.
struct Ctx<'a> {
    target: &'a PrTarget,
    opts: &'a PrOptions,
    settings: Settings,
    harness: Vec<String>,
    signatures: Catalogue,
    changed: Vec<String>,
    since: i64,
    /// Builds by row id.
    by_id: HashMap<i64, &'a BuildRecord>,
    by_path: HashMap<&'a str, &'a BuildRecord>,
    clustered: bool,
    evidence: BTreeMap<String, Evidence>,
    /// The full texts of each failure by (build path, classname, test): the test's
    /// failure text, or a failed build step's log excerpts.
    texts: HashMap<(String, String, String), Vec<String>>,
}

impl<'a> Ctx<'a> {
    fn new(
        target: &'a PrTarget,
        opts: &'a PrOptions,
        as_of: i64,
        since: i64,
        index: &'a [IndexedBuild],
        changed: Vec<String>,
    ) -> Ctx<'a> {
        let harness = AnalysisConfig::default().harness_test_names;
        let mut settings = Settings::new(as_of, harness.clone());
        settings.window_days = opts.window_days.max(1);
        Ctx {
            target,
            opts,
            signatures: settings.signatures.clone(),
            settings,
            harness,
            changed,
            since,
            by_id: index.iter().map(|b| (b.id, &b.record)).collect(),
            by_path: index.iter().map(|b| (b.record.path.as_str(), &b.record)).collect(),
            clustered: false,
            evidence: BTreeMap::new(),
            texts: HashMap::new(),
        }
    }

    fn cite(&mut self, e: Evidence) -> String {
        let id = e.id.clone();
        self.evidence.insert(id.clone(), e);
        id
    }

    /// The job's latest run of the PR, its failures with their facts (the text route
    /// of "elsewhere" comes after, for all jobs at once).
    fn job_run(&mut self, store: &mut Store, head: &IndexedBuild, earlier: usize) -> Result<(JobRun, Vec<PrFailure>)> {
        let rec = &head.record;
        let tests_since = self.since.min(rec.started.unwrap_or(self.since) - 1);
        let builds = store.job_builds_with_tests(&rec.job, Some(tests_since))?;
        let run = builds.iter().find(|b| b.path == rec.path).cloned().unwrap_or_else(|| rec.clone());
        let others: Vec<BuildRecord> = builds.into_iter().filter(|b| !carries_pr(b, self.target)).collect();
        let figures = job_figures(&others, &self.settings);
        let harness: BTreeSet<&str> = self.harness.iter().map(String::as_str).collect();
        let finished = run.result.is_some();
        let items = if finished { failed_items(&run, &harness) } else { Vec::new() };
        let run_ev = self.cite(build_evidence(&run));
        let members = store.build_cluster_members(head.id)?;
        let mut out = Vec::new();
        for item in &items {
            let mut facts = Facts {
                infra: infra_reasons(&run, item, &self.signatures),
                changed_files_named: files_named(item, &self.changed),
                ..Facts::default()
            };
            for f in &figures {
                for t in f.tests.iter().filter(|t| t.classname == item.classname && t.name == item.name) {
                    for s in t.signals.iter().filter(|s| s.fired) {
                        facts.flake.push(FlakeFact {
                            job: f.job.clone(),
                            signal: s.kind.to_string(),
                            runs: s.runs,
                            builds: s.builds.clone(),
                        });
                    }
                }
            }
            let seq = run.tests.iter().position(|t| t.name == item.name && t.classname == item.classname);
            let cluster = seq.and_then(|i| {
                members.iter().find(|(p, _, s)| p == PROFILE && *s as usize == i).map(|(_, id, _)| id.clone())
            });
            if let Some(id) = cluster {
                facts.elsewhere = self.elsewhere_by_cluster(store, &id)?;
                self.clustered = true;
            }
            let ev = self.case_evidence(&run, item);
            let texts = if item.step && item.name == "build" && item.classname.is_empty() {
                run.excerpts.iter().map(|e| e.text.clone()).collect()
            } else {
                vec![item.text.clone()]
            };
            self.texts.insert((run.path.clone(), item.classname.clone(), item.name.clone()), texts);
            out.push(PrFailure {
                job: run.job.clone(),
                build_path: run.path.clone(),
                url: prow_url(&run.bucket, &run.path),
                test: item.name.clone(),
                classname: item.classname.clone(),
                step: item.step,
                first_line: first_line(&item.text),
                class: Class::NewWithPr,
                strong: false,
                reason: String::new(),
                facts,
                evidence: vec![run_ev.clone(), ev],
            });
        }
        let job = JobRun {
            job: run.job.clone(),
            build_id: run.build_id.clone(),
            path: run.path.clone(),
            url: prow_url(&run.bucket, &run.path),
            result: run.result.clone().unwrap_or_else(|| "PENDING".into()),
            started: run.started,
            head: citriage_analysis::metrics::kettle::pr_head(run.repos.as_deref().unwrap_or("")),
            earlier_runs: earlier,
            failures: out.len(),
            evidence: run_ev,
        };
        Ok((job, out))
    }

    fn case_evidence(&mut self, run: &BuildRecord, item: &FailedItem) -> String {
        let day = run.started.map(|s| Day::from_unix_seconds(s).to_string()).unwrap_or_default();
        let (kind, locator) = if item.name == "build" && item.classname.is_empty() {
            (EvidenceKind::BuildLogExcerpt, format!("{}/build-log.txt", prow_url(&run.bucket, &run.path)))
        } else {
            (EvidenceKind::JunitCase, format!("{} :: {}", prow_url(&run.bucket, &run.path), item.name))
        };
        self.cite(Evidence::new(
            kind,
            locator,
            first_line(&item.text),
            citriage_model::evidence::sha256_hex(item.text.as_bytes()),
            day,
        ))
    }

    /// The cluster's members on runs without this PR.
    fn elsewhere_by_cluster(&mut self, store: &Store, id: &str) -> Result<Option<Elsewhere>> {
        let rows = store.cluster_member_rows(PROFILE, id)?;
        let builds: Vec<&BuildRecord> = rows.iter().filter_map(|(b, _)| self.by_id.get(b).copied()).collect();
        let mut e = self.summarize(format!("{PROFILE}/{id}"), builds);
        if let Some(e) = e.as_mut() {
            if let Some(c) = store.cluster(PROFILE, id)? {
                e.since = Some(e.since.map_or(c.first_seen, |s| s.min(c.first_seen)));
            }
            if let Some(r) = store.record(&format!("pattern:{PROFILE}/{id}"))? {
                e.record = Some((r.subject, r.state));
            }
        }
        Ok(e)
    }

    /// The matching runs that do not carry this PR, within the window; `None` when none.
    fn summarize(&self, pattern: String, builds: Vec<&BuildRecord>) -> Option<Elsewhere> {
        let mut seen = BTreeSet::new();
        let mut hits: Vec<&BuildRecord> = builds
            .into_iter()
            .filter(|b| !carries_pr(b, self.target))
            .filter(|b| b.started.is_some_and(|s| s > self.since))
            .filter(|b| seen.insert(b.path.as_str()))
            .collect();
        if hits.is_empty() {
            return None;
        }
        hits.sort_by(|a, b| (b.started, &b.path).cmp(&(a.started, &a.path)));
        let base_runs = hits.iter().filter(|b| b.kind == "periodic" || b.kind == "postsubmit").count() as u64;
        let mut prs: BTreeSet<u64> = BTreeSet::new();
        for b in &hits {
            match b.kind.as_str() {
                "presubmit" => prs.extend(b.pr),
                "batch" => prs.extend(pulls_of(b.repos.as_deref(), &self.target.repo)),
                _ => {}
            }
        }
        prs.remove(&self.target.number);
        Some(Elsewhere {
            pattern,
            since: hits.iter().filter_map(|b| b.started).min(),
            base_runs,
            other_prs: prs.into_iter().collect(),
            builds: hits.iter().take(5).map(|b| b.path.clone()).collect(),
            record: None,
        })
    }

    /// For failures the clustering run did not see: the same normalized text on other
    /// runs of the window (failure texts, and log excerpts for failed build steps).
    fn elsewhere_by_text(&mut self, store: &mut Store, failures: &mut [PrFailure]) -> Result<()> {
        let want: Vec<usize> = (0..failures.len()).filter(|i| failures[*i].facts.elsewhere.is_none()).collect();
        if want.is_empty() {
            return Ok(());
        }
        let texts: Vec<(usize, String)> = want
            .iter()
            .flat_map(|i| {
                let f = &failures[*i];
                let key = (f.build_path.clone(), f.classname.clone(), f.test.clone());
                self.texts.get(&key).cloned().unwrap_or_default().into_iter().map(move |t| (*i, t))
            })
            .collect();
        let mut keys: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, t) in &texts {
            let k = normalize(t, Profile::Default);
            if !k.trim().is_empty() {
                keys.entry(k).or_default().push(*i);
            }
        }
        let mut hits: HashMap<usize, Vec<i64>> = HashMap::new();
        let since = Some(self.since);
        store.for_each_failure_text(since, |build, _, _, text| {
            if let Some(is) = keys.get(&normalize(text, Profile::Default)) {
                for i in is {
                    hits.entry(*i).or_default().push(build);
                }
            }
        })?;
        store.for_each_excerpt(since, |build, e| {
            if let Some(is) = keys.get(&normalize(&e.text, Profile::Default)) {
                for i in is {
                    hits.entry(*i).or_default().push(build);
                }
            }
        })?;
        for i in want {
            let Some(ids) = hits.get(&i) else { continue };
            let builds: Vec<&BuildRecord> = ids.iter().filter_map(|b| self.by_id.get(b).copied()).collect();
            let key = texts.iter().find(|(j, _)| *j == i).map(|(_, t)| normalize(t, Profile::Default));
            let hash = citriage_model::evidence::sha256_hex(key.unwrap_or_default().as_bytes());
            failures[i].facts.elsewhere = self.summarize(format!("text:{}", &hash[..12]), builds);
        }
        Ok(())
    }

    /// Evidence of the facts: up to three builds of each (flake signals, elsewhere).
    fn facts_evidence(&mut self, f: &Facts) -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        for s in &f.flake {
            paths.extend(s.builds.iter().take(3).cloned());
        }
        if let Some(e) = &f.elsewhere {
            paths.extend(e.builds.iter().take(3).cloned());
        }
        let mut ids = Vec::new();
        for p in paths {
            if let Some(b) = self.by_path.get(p.as_str()).copied() {
                ids.push(self.cite(build_evidence(b)));
            }
        }
        if !f.changed_files_named.is_empty() {
            let r = self.target.issue_ref();
            let api = self.opts.github.as_ref().map(|g| g.api.trim_end_matches('/').to_string()).unwrap_or_default();
            ids.push(self.cite(Evidence::new(
                EvidenceKind::PullRequestState,
                format!("{api}/repos/{}/{}/pulls/{}/files", r.repo.owner, r.repo.name, r.number),
                format!("changes {}", f.changed_files_named.join(", ")),
                String::new(),
                String::new(),
            )));
        }
        ids
    }
}

fn first_line(text: &str) -> String {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().chars().take(300).collect()
}
