//! Drafts from a payload analysis: a revert for a suspect at the revert band, bisect
//! experiments for suspects in the bisect band, a bug for a root cause, and the
//! evidence items each one rests on (for the store's ledger).
//!
//! The bands and actions are the analysis' own ([`citriage_payload::action`]): a
//! draft never re-scores a suspect. What it adds is the gate on evidence — the lines,
//! the diff line, the onset — without which nothing is drafted, and the exact text and
//! requests of the next step, following the payload agent's documented workflow
//! (draft revert PRs, `/payload-job` and `/payload-aggregate` comments, the
//! `<payload-tag>-bisect.yaml` tracking file).

use crate::request::{Capture, PlannedRequest};
use crate::{first_line, slug, ActionKind, Draft, Earned, PayloadJob, Refusal, SuspectPr, Target, FORMAT_VERSION};
use citriage_model::{Evidence, EvidenceKind};
use citriage_payload::action::{Band, CandidateAction};
use citriage_payload::analyze::page_url;
use citriage_payload::candidate::Candidate;
use citriage_payload::classify::FailureClass;
use citriage_payload::evidence::LogLine;
use citriage_payload::result::{FailedJob, FailureMode, OnsetBefore, PayloadAnalysis, RootCause, Suspect};
use citriage_payload::scoring::{CandidateScore, Signal};
use citriage_suspects::links::VerbatimMatch;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Suspects tried at once in a bisect; the rest are deferred (the payload agent's
/// throttle: "test only the top 5-8").
pub const MAX_EXPERIMENTS: usize = 8;

/// The GraphQL mutation behind GitHub's "Revert" button: it opens a PR that reverts a
/// merged PR's merge commit on its base branch.
pub const REVERT_MUTATION: &str = "mutation($pullRequestId: ID!, $title: String!, $body: String!, $draft: Boolean!) { revertPullRequest(input: {pullRequestId: $pullRequestId, title: $title, body: $body, draft: $draft}) { revertPullRequest { number url } } }";

/// Choices a payload draft takes from its caller.
#[derive(Debug, Clone, Default)]
pub struct PayloadOptions {
    /// The tracking ticket the revert's title names (`NO-JIRA` when none).
    pub jira: Option<String>,
    /// The merge commit of the suspect PR, when known (from a checkout or GitHub).
    pub merge_sha: Option<String>,
    /// The branch the revert goes onto, when known.
    pub base_branch: Option<String>,
    /// Bisect: suspects tried at once (default [`MAX_EXPERIMENTS`]).
    pub max_experiments: Option<usize>,
    /// Bug: the repository to file it in, overriding the routing.
    pub repo: Option<String>,
}

/// A row of the report that an action can be drafted from, with the draft it supports
/// or why none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// `suspect` or `root-cause`.
    pub row: String,
    /// The candidate id or the root cause id.
    pub id: String,
    pub root_cause: String,
    pub score: Option<u32>,
    pub band: Option<String>,
    /// The analysis' action for the row.
    pub action: String,
    /// The draft the evidence supports.
    pub draft: Option<ActionKind>,
    /// Why no draft, when none.
    pub refused: Option<String>,
    /// The command that writes the draft.
    pub command: Option<String>,
}

/// The evidence of a payload analysis an agent or a draft cites: every root cause's
/// lines, each failure mode's onset, the error matches' diff lines and the suspects'
/// changelog entries. Sorted by id.
pub fn payload_evidence(a: &PayloadAnalysis) -> Vec<Evidence> {
    let mut out: Vec<Evidence> = Vec::new();
    for rc in &a.root_causes {
        for (job, line) in &rc.evidence {
            out.push(line_evidence(a, failed_job(a, job), line));
        }
    }
    for j in &a.failed_jobs {
        for m in &j.modes {
            out.extend(onset_evidence(a, j, m));
        }
    }
    for s in &a.suspects {
        if let Some(c) = a.candidate(&s.candidate) {
            out.push(changelog_evidence(a, c));
            if let Some(m) = &s.score.error_match {
                out.push(line_evidence(a, failed_job(a, &s.score.job), &m.log));
                out.push(diff_evidence(a, c, m));
            }
        }
    }
    out.sort_by(|x, y| x.id.cmp(&y.id));
    out.dedup_by(|x, y| x.id == y.id);
    out
}

fn as_of(a: &PayloadAnalysis) -> String {
    a.payload
        .created
        .as_deref()
        .or(a.payload.as_of.as_deref())
        .map(|t| t.chars().take(10).collect())
        .unwrap_or_default()
}

fn cap(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

fn failed_job<'a>(a: &'a PayloadAnalysis, name: &str) -> Option<&'a FailedJob> {
    a.failed_jobs.iter().find(|j| j.name == name)
}

/// Where a cited line is: its file's URL (or the run's URL and the file) and line.
fn line_locator(job: Option<&FailedJob>, l: &LogLine) -> String {
    let base = match (&l.at.url, job.and_then(|j| j.url.as_deref())) {
        (Some(u), _) => u.clone(),
        (None, Some(run)) => format!("{}/{}", run.trim_end_matches('/'), l.at.file),
        (None, None) => l.at.file.clone(),
    };
    match l.at.line {
        Some(n) => format!("{base}:{n}"),
        None => base,
    }
}

/// Evidence for one cited line of a failed job (a JUnit case or a build-log line).
pub fn line_evidence(a: &PayloadAnalysis, job: Option<&FailedJob>, l: &LogLine) -> Evidence {
    let kind = if l.at.file.ends_with(".xml") || l.at.file.contains("junit") || l.at.file.ends_with("results.json") {
        EvidenceKind::JunitCase
    } else {
        EvidenceKind::BuildLogExcerpt
    };
    Evidence::new(kind, line_locator(job, l), cap(&l.text, 300), String::new(), as_of(a))
}

/// Evidence for the added diff line an error match found.
pub fn diff_evidence(a: &PayloadAnalysis, c: &Candidate, m: &VerbatimMatch) -> Evidence {
    let pr = c.url.clone().unwrap_or_else(|| c.short());
    Evidence::new(
        EvidenceKind::SourceLine,
        format!("{pr}/files :: {}:{}", m.diff_file, m.diff_line),
        cap(&m.diff_text, 300),
        String::new(),
        as_of(a),
    )
}

/// Evidence that a candidate is in a payload's changelog.
pub fn changelog_evidence(a: &PayloadAnalysis, c: &Candidate) -> Evidence {
    let tag = c.payload.as_deref().unwrap_or(&a.payload.tag);
    Evidence::new(
        EvidenceKind::ReleaseInfo,
        format!("{}#changelog", page_url(a, tag)),
        cap(&format!("{}: {}", c.short(), c.title), 300),
        String::new(),
        as_of(a),
    )
}

/// Evidence of a failure mode's onset: the job failing in the onset payload, and what
/// the payload before showed (when it passed or failed differently).
pub fn onset_evidence(a: &PayloadAnalysis, j: &FailedJob, m: &FailureMode) -> Vec<Evidence> {
    let ev = |tag: &str, text: String| {
        Evidence::new(
            EvidenceKind::ReleaseInfo,
            format!("{}#/results/blockingJobs/{}", page_url(a, tag), j.name),
            text,
            String::new(),
            as_of(a),
        )
    };
    let mut out = vec![ev(
        &m.first_failed_in,
        format!(
            "{}: failed in {} with signature {} ({} consecutive payload(s) failing it)",
            j.name, m.first_failed_in, m.signature.id, m.payloads_failing
        ),
    )];
    match &m.before {
        OnsetBefore::Passed(t) => out.push(ev(t, format!("{}: succeeded in {t}", j.name))),
        OnsetBefore::DifferentFailure(t, s) => {
            out.push(ev(t, format!("{}: failed in {t} with a different signature ({s})", j.name)))
        }
        OnsetBefore::Unknown(..) | OnsetBefore::ChainEnd => {}
    }
    out
}

/// The candidate id a user's name means: `pr:org/repo#n`, `org/repo#n`, a PR URL, or
/// any candidate id as the analysis writes it; a change of another kind (a CI
/// configuration PR) by the `org/repo#n` its rows show, when that names one change.
pub fn candidate_id(a: &PayloadAnalysis, name: &str) -> Option<String> {
    let name = name.trim();
    if a.candidate(name).is_some() {
        return Some(name.to_string());
    }
    let short = if let Some(rest) = name.strip_prefix("https://github.com/") {
        let p: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        (p.len() >= 4 && p[2] == "pull").then(|| format!("{}/{}#{}", p[0], p[1], p[3]))?
    } else {
        name.to_string()
    };
    let id = format!("pr:{short}");
    if let Some(c) = a.candidate(&id) {
        return Some(c.id.clone());
    }
    // Other kinds of change (a CI configuration PR, `ci:…`) by the name the rows show.
    let mut by_short = a.candidates.iter().filter(|c| c.short() == short);
    match (by_short.next(), by_short.next()) {
        (Some(c), None) => Some(c.id.clone()),
        _ => None,
    }
}

fn suspect_names(a: &PayloadAnalysis) -> Vec<String> {
    let mut v: Vec<String> = a
        .suspects
        .iter()
        .map(|s| a.candidate(&s.candidate).map(|c| c.short()).unwrap_or(s.candidate.clone()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The best suspect row of a candidate (highest score, then rank, then root cause).
fn best_suspect<'a>(a: &'a PayloadAnalysis, id: &str) -> Option<&'a Suspect> {
    a.suspects.iter().filter(|s| s.candidate == id).min_by(|x, y| {
        y.score.total.cmp(&x.score.total).then(x.rank.cmp(&y.rank)).then(x.root_cause.cmp(&y.root_cause))
    })
}

/// The failure mode a score is about.
fn mode_of<'a>(a: &'a PayloadAnalysis, s: &CandidateScore) -> Option<(&'a FailedJob, &'a FailureMode)> {
    let j = failed_job(a, &s.job)?;
    let m = j.modes.iter().find(|m| m.signature.id == s.mode)?;
    Some((j, m))
}

/// The candidate's best score in one job of a root cause.
fn job_score<'a>(a: &'a PayloadAnalysis, cid: &str, rc: &str, job: &str) -> Option<&'a CandidateScore> {
    a.scores
        .iter()
        .filter(|s| s.candidate == cid && s.root_cause == rc && s.job == job && s.total > 0)
        .max_by(|x, y| x.total.cmp(&y.total).then(y.mode.cmp(&x.mode)))
}

/// The payload test commands for a failed job, or why none can be written.
pub fn payload_jobs(j: &FailedJob) -> Result<Vec<PayloadJob>, String> {
    let prow = j.prow_job.clone().ok_or_else(|| format!("{}: no Prow job name in the release info", j.name))?;
    let aggregated = j.aggregated.is_some() || prow.starts_with("aggregated-") || j.name.starts_with("aggregated-");
    if !aggregated {
        return Ok(vec![PayloadJob {
            failing_job: prow.clone(),
            job_name: prow.clone(),
            kind: "non-aggregated".into(),
            command: format!("/payload-job {prow}"),
        }]);
    }
    let agg = j.aggregated.as_ref().ok_or_else(|| {
        format!("{}: an aggregated job whose underlying job is unknown (no aggregated JUnit or results.json)", j.name)
    })?;
    if agg.underlying_jobs.is_empty() {
        return Err(format!("{}: the aggregated results name no underlying job", j.name));
    }
    let mut out = Vec::new();
    for u in &agg.underlying_jobs {
        let runs: BTreeSet<&str> = agg
            .failed_tests
            .iter()
            .flat_map(|t| t.passes.iter().chain(&t.failures).chain(&t.skips).chain(&t.incomplete))
            .filter(|r| r.job.as_deref() == Some(u.as_str()))
            .map(|r| r.job_run_id.as_str())
            .collect();
        if runs.is_empty() {
            return Err(format!("{}: no run of {u} is listed, so the aggregation count is unknown", j.name));
        }
        out.push(PayloadJob {
            failing_job: prow.clone(),
            job_name: u.clone(),
            kind: "aggregated".into(),
            command: format!("/payload-aggregate {u} {}", runs.len()),
        });
    }
    Ok(out)
}

/// What the draft of one suspect rests on, checked: the jobs attributed to it with
/// their failure modes and lines, the onset, and the evidence items.
struct SuspectCase<'a> {
    c: &'a Candidate,
    s: &'a Suspect,
    repo: String,
    number: u64,
    /// (failed job, its mode, the candidate's score there)
    jobs: Vec<(&'a FailedJob, &'a FailureMode, &'a CandidateScore)>,
    earned: Vec<Earned>,
    payload_jobs: Vec<PayloadJob>,
    untriggered: Vec<String>,
}

fn gather<'a>(a: &'a PayloadAnalysis, s: &'a Suspect, what: &str) -> Result<SuspectCase<'a>, Refusal> {
    let c = a.candidate(&s.candidate).ok_or_else(|| Refusal::MissingEvidence {
        what: what.into(),
        missing: "the candidate is not in the analysis".into(),
    })?;
    let (Some(repo), Some(number)) = (c.repo.clone(), c.number) else {
        return Err(Refusal::NotEligible {
            what: what.into(),
            reason: format!("{} is not a pull request: there is no PR to revert through GitHub", c.id),
        });
    };
    let mut jobs = Vec::new();
    let mut earned = Vec::new();
    let mut payload_jobs = Vec::new();
    let mut untriggered = Vec::new();
    for name in &s.jobs {
        let Some(sc) = job_score(a, &s.candidate, &s.root_cause, name) else { continue };
        let Some((j, m)) = mode_of(a, sc) else {
            return Err(Refusal::MissingEvidence {
                what: what.into(),
                missing: format!("the failure mode {} of {name} is not in the analysis", sc.mode),
            });
        };
        let Some(line) = m.lines.first() else {
            return Err(Refusal::MissingEvidence {
                what: what.into(),
                missing: format!("{name}: the failure mode cites no line"),
            });
        };
        if !m.before.established() {
            return Err(Refusal::MissingEvidence {
                what: what.into(),
                missing: format!("{name}: the onset is not established ({})", m.before.describe()),
            });
        }
        earned.push(Earned {
            evidence: line_evidence(a, Some(j), line),
            shows: format!("the line that explains {name}'s failure"),
        });
        for (k, e) in onset_evidence(a, j, m).into_iter().enumerate() {
            let shows = if k == 0 {
                format!("{name} started failing in {}", m.first_failed_in)
            } else {
                format!("{name} before the onset: {}", m.before.describe())
            };
            earned.push(Earned { evidence: e, shows });
        }
        match self::payload_jobs(j) {
            Ok(p) => payload_jobs.extend(p),
            Err(why) => untriggered.push(why),
        }
        jobs.push((j, m, sc));
    }
    if jobs.is_empty() {
        return Err(Refusal::MissingEvidence {
            what: what.into(),
            missing: format!("no failed job of {} carries a score for {}", s.root_cause, c.short()),
        });
    }
    earned.push(Earned {
        evidence: changelog_evidence(a, c),
        shows: format!("{} is in payload {}", c.short(), c.payload.as_deref().unwrap_or(&a.payload.tag)),
    });
    if let Some(m) = &s.score.error_match {
        earned.push(Earned {
            evidence: line_evidence(a, failed_job(a, &s.score.job), &m.log),
            shows: format!("the failing line naming `{}`", m.token),
        });
        earned.push(Earned {
            evidence: diff_evidence(a, c, m),
            shows: format!("the line of {} adding `{}`", c.short(), m.token),
        });
    }
    earned.sort_by(|x, y| x.evidence.id.cmp(&y.evidence.id));
    earned.dedup_by(|x, y| x.evidence.id == y.evidence.id);
    payload_jobs.sort_by(|x, y| x.command.cmp(&y.command));
    payload_jobs.dedup();
    Ok(SuspectCase { c, s, repo, number, jobs, earned, payload_jobs, untriggered })
}

impl SuspectCase<'_> {
    fn suspect_pr(&self) -> SuspectPr {
        SuspectPr {
            url: self.c.url.clone().unwrap_or_else(|| format!("https://github.com/{}/pull/{}", self.repo, self.number)),
            repo: self.repo.clone(),
            number: self.number,
            component: self.c.component.clone(),
            title: self.c.title.clone(),
            confidence_score: self.s.score.total,
        }
    }
}

fn ev_ids(earned: &[Earned], pred: impl Fn(&Earned) -> bool) -> String {
    let ids: Vec<String> = earned.iter().filter(|e| pred(e)).map(|e| format!("[{}]", e.evidence.id)).collect();
    ids.join(" ")
}

fn id_of(e: &Evidence) -> String {
    format!("[{}]", e.id)
}

/// The sections every revert or bisect body shares: what failed, the evidence, the
/// payloads affected.
fn failure_sections(a: &PayloadAnalysis, k: &SuspectCase<'_>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "### What failed\n");
    let _ = writeln!(
        o,
        "Blocking job(s) of the {} {} payload [{}]({}) ({}):\n",
        a.payload.stream,
        a.payload.architecture,
        a.payload.tag,
        a.payload.release_url,
        a.payload.phase.as_str()
    );
    for (j, m, _) in &k.jobs {
        let line = m.lines.first().map(|l| line_evidence(a, Some(j), l));
        let _ = writeln!(
            o,
            "- **{}**{}: `{}` ({}) {}",
            j.name,
            j.prow_job.as_deref().map(|p| format!(" (`{p}`)")).unwrap_or_default(),
            first_line(&m.summary, 200).replace('`', "'"),
            m.class.class.as_str(),
            line.map(|e| id_of(&e)).unwrap_or_default()
        );
    }
    let onsets: BTreeSet<&str> = k.jobs.iter().map(|(_, m, _)| m.first_failed_in.as_str()).collect();
    let befores: BTreeSet<String> = k.jobs.iter().map(|(_, m, _)| m.before.describe()).collect();
    let _ = writeln!(
        o,
        "\nThe job(s) started failing in {} ({}), the payload that brought {}.\n",
        onsets.into_iter().collect::<Vec<_>>().join(", "),
        befores.into_iter().collect::<Vec<_>>().join("; "),
        k.c.short()
    );
    let _ = writeln!(o, "### Evidence\n");
    if let Some(m) = &k.s.score.error_match {
        let _ = writeln!(
            o,
            "- The failing line `{}` ({}) {} names `{}`, which this PR adds in `{}:{}`: `{}` {}. {}",
            cap(&m.log.text, 200).replace('`', "'"),
            m.log.at.cite(),
            id_of(&line_evidence(a, failed_job(a, &k.s.score.job), &m.log)),
            m.token,
            m.diff_file,
            m.diff_line,
            cap(&m.diff_text, 200).replace('`', "'"),
            id_of(&diff_evidence(a, k.c, m)),
            m.why_specific
        );
    }
    let _ = writeln!(
        o,
        "- Onset: {} {}",
        k.jobs.iter().map(|(j, m, _)| format!("{}: {}", j.name, m.before.describe())).collect::<Vec<_>>().join("; "),
        ev_ids(&k.earned, |e| e.evidence.kind == EvidenceKind::ReleaseInfo && e.evidence.locator.contains("/results/"))
    );
    let _ = writeln!(o, "- In the payload's changelog: {} {}", k.c.short(), id_of(&changelog_evidence(a, k.c)));
    for it in &k.s.score.items {
        let _ = writeln!(o, "- {} (+{}): {}", it.signal.name(), it.points, it.evidence.replace('\n', " "));
    }
    let _ = writeln!(
        o,
        "\nScore {} ({}), rank {} of root cause {}{}.\n",
        k.s.score.total,
        k.s.band.as_str(),
        k.s.rank,
        k.s.root_cause,
        k.s.score.cap.as_deref().map(|c| format!("; {c}")).unwrap_or_default()
    );
    let _ = writeln!(o, "### Payloads affected\n");
    let oldest: BTreeSet<&str> = k.jobs.iter().map(|(_, m, _)| m.first_failed_in.as_str()).collect();
    let _ = writeln!(o, "| payload | phase | blocking jobs |\n|---|---|---|");
    for row in &a.history {
        let _ = writeln!(
            o,
            "| [{}]({}) | {} | {} |",
            row.tag,
            page_url(a, &row.tag),
            row.phase.as_str(),
            row.blocking.describe()
        );
        if oldest.contains(row.tag.as_str()) {
            break;
        }
    }
    o.push('\n');
    o
}

fn revert_title(o: &PayloadOptions, k: &SuspectCase<'_>) -> String {
    format!(
        "{}: Revert #{} \"{}\"",
        o.jira.as_deref().filter(|j| !j.trim().is_empty()).unwrap_or("NO-JIRA"),
        k.number,
        k.c.title.replace('"', "'")
    )
}

fn git_commands(o: &PayloadOptions, k: &SuspectCase<'_>) -> Vec<String> {
    let base = o.base_branch.clone().unwrap_or_else(|| format!("<base branch of #{}>", k.number));
    let sha = o.merge_sha.clone().unwrap_or_else(|| format!("<merge commit of #{}>", k.number));
    vec![
        format!("git fetch origin {base}"),
        format!("git checkout -b revert-{}-{} FETCH_HEAD", slug(&k.repo.replace('/', "-")), k.number),
        format!("git revert -m1 {sha}"),
    ]
}

fn requests(k: &SuspectCase<'_>, title: &str, body: &str, draft: bool) -> Vec<PlannedRequest> {
    let mut v = vec![
        PlannedRequest {
            method: "GET".into(),
            path: format!("/repos/{}/pulls/{}", k.repo, k.number),
            body: None,
            captures: vec![Capture { name: "pull_node_id".into(), pointer: "/node_id".into() }],
            require: vec![("/merged".into(), json!(true))],
            purpose: format!("read the node id of {}#{} (and check that it is merged)", k.repo, k.number),
        },
        PlannedRequest {
            method: "POST".into(),
            path: "/graphql".into(),
            body: Some(json!({
                "query": REVERT_MUTATION,
                "variables": {"pullRequestId": "{{pull_node_id}}", "title": title, "body": body, "draft": draft},
            })),
            captures: vec![
                Capture {
                    name: "revert_number".into(),
                    pointer: "/data/revertPullRequest/revertPullRequest/number".into(),
                },
                Capture { name: "revert_url".into(), pointer: "/data/revertPullRequest/revertPullRequest/url".into() },
            ],
            require: Vec::new(),
            purpose: format!("open the {}revert PR of #{}", if draft { "draft " } else { "" }, k.number),
        },
    ];
    if !k.payload_jobs.is_empty() {
        let comment: Vec<&str> = k.payload_jobs.iter().map(|p| p.command.as_str()).collect();
        v.push(PlannedRequest {
            method: "POST".into(),
            path: format!("/repos/{}/issues/{{{{revert_number}}}}/comments", k.repo),
            body: Some(json!({ "body": comment.join("\n") })),
            captures: Vec::new(),
            require: Vec::new(),
            purpose: "ask for the payload jobs on the revert PR".into(),
        });
    }
    v
}

fn subject(a: &PayloadAnalysis, c: &Candidate) -> String {
    format!("payload {}, suspect {}", a.payload.tag, c.short())
}

fn signals(s: &CandidateScore) -> String {
    let v: Vec<&str> = s
        .items
        .iter()
        .filter(|i| !matches!(i.signal, Signal::NewFailureMode | Signal::ComponentExclusivity))
        .map(|i| i.signal.name())
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn resolve<'a>(a: &'a PayloadAnalysis, who: &str) -> Result<(&'a Candidate, &'a Suspect), Refusal> {
    let what = format!("payload {}, suspect {who}", a.payload.tag);
    let id = candidate_id(a, who).ok_or_else(|| Refusal::Unknown { what: what.clone(), known: suspect_names(a) })?;
    let c = a.candidate(&id).ok_or_else(|| Refusal::Unknown { what: what.clone(), known: suspect_names(a) })?;
    let s = best_suspect(a, &id).ok_or_else(|| Refusal::NotEligible {
        what: subject(a, c),
        reason: format!("{} scored 0 against every root cause: it is not a suspect", c.short()),
    })?;
    Ok((c, s))
}

/// The revert draft for a suspect at the revert band. A suspect below it is refused
/// with its score, band and what it lacks.
pub fn revert(a: &PayloadAnalysis, who: &str, o: &PayloadOptions) -> Result<Draft, Refusal> {
    let (c, s) = resolve(a, who)?;
    let what = subject(a, c);
    match s.action {
        CandidateAction::StageRevert => {}
        CandidateAction::Bisect => {
            return Err(Refusal::BelowBand {
                what,
                score: s.score.total,
                band: s.band.as_str().into(),
                needs: "≥ 85 (HIGH)".into(),
                reason: s.score.cap.clone().unwrap_or_else(|| s.action_reason.clone()),
                instead: Some(format!(
                    "its band calls for a bisect: citriage act bisect {} --suspect {}",
                    a.payload.tag,
                    c.short()
                )),
            })
        }
        CandidateAction::ReportOnly if s.band == Band::Low => {
            return Err(Refusal::BelowBand {
                what,
                score: s.score.total,
                band: s.band.as_str().into(),
                needs: "≥ 85 (HIGH)".into(),
                reason: s.score.cap.clone().unwrap_or_else(|| s.action_reason.clone()),
                instead: None,
            })
        }
        _ => {
            return Err(Refusal::NotEligible {
                what,
                reason: format!("the analysis says {}: {}", s.action.as_str(), s.action_reason),
            })
        }
    }
    let Some(m) = &s.score.error_match else {
        return Err(Refusal::MissingEvidence {
            what,
            missing: "the revert band needs a verbatim match and none is recorded".into(),
        });
    };
    if m.log.text.trim().is_empty() || m.diff_text.trim().is_empty() {
        return Err(Refusal::MissingEvidence { what, missing: "the verbatim match has an empty line".into() });
    }
    let k = gather(a, s, &what)?;
    let title = revert_title(o, &k);
    let mut body = String::new();
    let _ = writeln!(
        body,
        "Reverts {}#{} (\"{}\"){}.\n",
        k.repo,
        k.number,
        c.title,
        o.merge_sha.as_deref().map(|x| format!(", merge commit {x}")).unwrap_or_default()
    );
    let _ = writeln!(
        body,
        "Per OCP policy, PRs that break payloads must be reverted. This PR is the cause of the blocking job failures below with high confidence; a fix can re-land in a follow-up PR once the revert restores payload health.\n"
    );
    body.push_str(&failure_sections(a, &k));
    let _ = writeln!(body, "### How to verify\n");
    if k.payload_jobs.is_empty() {
        let _ = writeln!(body, "- No payload job can be asked for on this PR: {}", k.untriggered.join("; "));
    } else {
        let _ = writeln!(
            body,
            "- On this PR, the payload jobs below (asked for in a comment) should pass with the revert applied:"
        );
        for p in &k.payload_jobs {
            let _ = writeln!(body, "  - `{}`", p.command);
        }
    }
    let _ = writeln!(
        body,
        "- After it merges, the next {} payload's blocking jobs {} should pass.",
        a.payload.stream_name,
        k.jobs.iter().map(|(j, _, _)| j.name.as_str()).collect::<Vec<_>>().join(", ")
    );
    let _ = writeln!(
        body,
        "\nEvidence ids resolve with `citriage evidence ID` against the store this analysis was recorded in."
    );
    let mut commands = git_commands(o, &k);
    commands.extend(k.payload_jobs.iter().map(|p| p.command.clone()));
    let first_onset = k.jobs.first().map(|(_, m, _)| m).expect("gathered jobs are not empty");
    let mut would_change = vec![
        format!(
            "Withdrawn if {} failed the same way in a payload built before {} (the onset in {} would not hold; today: {}).",
            k.jobs.iter().map(|(j, _, _)| j.name.as_str()).collect::<Vec<_>>().join(", "),
            c.short(),
            first_onset.first_failed_in,
            first_onset.before.describe()
        ),
        format!(
            "Withdrawn if another change of the window adds `{}` too: the match would no longer be specific (now: {}) and the score would fall below 85.",
            m.token, m.why_specific
        ),
        format!("Falls to the bisect band if its second link ({}) is disproved.", signals(&s.score)),
        "Confirmed when the payload jobs pass on the revert PR; disproved when they fail the same way with the revert applied.".into(),
    ];
    if !k.untriggered.is_empty() {
        would_change.push(format!("Not checkable through payload jobs: {}", k.untriggered.join("; ")));
    }
    let requests = requests(&k, &title, &body, false);
    Ok(Draft {
        format_version: FORMAT_VERSION,
        kind: ActionKind::Revert,
        name: format!("revert-{}-{}", slug(&a.payload.tag), slug(&c.short())),
        subject: what,
        score: Some(s.score.total),
        band: Some(s.band.as_str().into()),
        gate: "revert band (score ≥ 85): a specific verbatim match, an established onset in the PR's payload and a second, independent link".into(),
        title,
        body,
        labels: Vec::new(),
        commands,
        earned_by: k.earned.clone(),
        would_change,
        target: Some(Target { repo: k.repo.clone(), number: Some(k.number), routed_by: "the suspect PR's repository".into() }),
        suspect: Some(k.suspect_pr()),
        payload_jobs: k.payload_jobs.clone(),
        merge_sha: o.merge_sha.clone(),
        conflict_check: None,
        requests,
        apply_blocked: None,
    })
}

/// A bisect: one draft revert PR per suspect in the bisect band (the best
/// [`MAX_EXPERIMENTS`] by score; the rest deferred) and the tracking file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bisect {
    pub payload_tag: String,
    pub drafts: Vec<Draft>,
    /// Bisect-band suspects not tried now: (candidate, score).
    pub deferred: Vec<Deferred>,
    /// `<payload-tag>-bisect.yaml`.
    pub tracking_name: String,
}

/// A suspect left for later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deferred {
    pub url: String,
    pub number: Option<u64>,
    pub component: String,
    pub confidence_score: u32,
}

/// What an applied experiment became (the revert PR GitHub opened).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opened {
    pub url: String,
    pub number: u64,
}

/// Bisect drafts for the payload's suspects in the bisect band, or for one of them.
pub fn bisect(a: &PayloadAnalysis, who: Option<&str>, o: &PayloadOptions) -> Result<Bisect, Refusal> {
    let mut chosen: Vec<&Suspect> = Vec::new();
    if let Some(who) = who {
        let (c, s) = resolve(a, who)?;
        let what = subject(a, c);
        match s.action {
            CandidateAction::Bisect => chosen.push(s),
            CandidateAction::StageRevert => {
                return Err(Refusal::NotEligible {
                    what,
                    reason: format!(
                    "score {} is in the revert band: draft the revert instead (citriage act revert {} --suspect {})",
                    s.score.total,
                    a.payload.tag,
                    c.short()
                ),
                })
            }
            CandidateAction::ReportOnly if s.band == Band::Low => {
                return Err(Refusal::BelowBand {
                    what,
                    score: s.score.total,
                    band: s.band.as_str().into(),
                    needs: "60-84 (MEDIUM)".into(),
                    reason: s.score.cap.clone().unwrap_or_else(|| s.action_reason.clone()),
                    instead: None,
                })
            }
            _ => {
                return Err(Refusal::NotEligible {
                    what,
                    reason: format!("the analysis says {}: {}", s.action.as_str(), s.action_reason),
                })
            }
        }
    } else {
        let mut seen = BTreeSet::new();
        let mut all: Vec<&Suspect> = a.suspects.iter().filter(|s| s.action == CandidateAction::Bisect).collect();
        all.sort_by(|x, y| {
            y.score.total.cmp(&x.score.total).then(x.rank.cmp(&y.rank)).then(x.candidate.cmp(&y.candidate))
        });
        for s in all {
            if seen.insert(s.candidate.as_str()) {
                chosen.push(s);
            }
        }
        if chosen.is_empty() {
            return Err(Refusal::NotEligible {
                what: format!("payload {}", a.payload.tag),
                reason: format!("no suspect is in the bisect band (verdict: {})", a.decision.verdict.as_str()),
            });
        }
    }
    let limit = o.max_experiments.unwrap_or(MAX_EXPERIMENTS).max(1);
    let mut drafts = Vec::new();
    let mut deferred = Vec::new();
    let mut refusals = Vec::new();
    for s in chosen {
        let Some(c) = a.candidate(&s.candidate) else { continue };
        if drafts.len() >= limit {
            deferred.push(Deferred {
                url: c.url.clone().unwrap_or_default(),
                number: c.number,
                component: c.component.clone(),
                confidence_score: s.score.total,
            });
            continue;
        }
        match bisect_one(a, c, s, o) {
            Ok(d) => drafts.push(d),
            Err(r) => refusals.push(r),
        }
    }
    if drafts.is_empty() {
        return Err(refusals.into_iter().next().unwrap_or(Refusal::NotEligible {
            what: format!("payload {}", a.payload.tag),
            reason: "no bisect-band suspect could be drafted".into(),
        }));
    }
    Ok(Bisect {
        payload_tag: a.payload.tag.clone(),
        drafts,
        deferred,
        tracking_name: format!("{}-bisect.yaml", slug(&a.payload.tag)),
    })
}

fn bisect_one(a: &PayloadAnalysis, c: &Candidate, s: &Suspect, o: &PayloadOptions) -> Result<Draft, Refusal> {
    let what = subject(a, c);
    let k = gather(a, s, &what)?;
    if k.payload_jobs.is_empty() {
        return Err(Refusal::MissingEvidence {
            what,
            missing: format!(
                "no failing job attributed to {} can be asked for: {}",
                c.short(),
                k.untriggered.join("; ")
            ),
        });
    }
    let title = format!("NO-JIRA: Revert #{} \"{}\"", k.number, c.title.replace('"', "'"));
    let mut body = String::new();
    let _ = writeln!(
        body,
        "Bisect experiment for {} {} payload {}. Testing whether reverting this PR resolves blocking job failures.\n",
        a.payload.stream, a.payload.architecture, a.payload.tag
    );
    let _ = writeln!(
        body,
        "Draft revert of {}#{} (\"{}\"), suspect in the bisect band: the evidence links it to the failures below but does not reach the revert band. Do not merge on this evidence alone.\n",
        k.repo, k.number, c.title
    );
    body.push_str(&failure_sections(a, &k));
    let _ = writeln!(body, "### How to read the result\n");
    let _ = writeln!(body, "The payload jobs below are asked for in a comment on this PR:\n");
    for p in &k.payload_jobs {
        let _ = writeln!(body, "- `{}`", p.command);
    }
    let _ = writeln!(
        body,
        "\n- They pass with the revert applied: {} is the cause; a bug is filed and this PR is promoted.\n- They still fail the same way: {} is innocent; this draft is closed.",
        c.short(),
        c.short()
    );
    let _ = writeln!(
        body,
        "\nEvidence ids resolve with `citriage evidence ID` against the store this analysis was recorded in."
    );
    let mut commands = vec![format!(
        "git revert -m1 --no-commit {} && git status --porcelain && git revert --abort",
        o.merge_sha.clone().unwrap_or_else(|| format!("<merge commit of #{}>", k.number))
    )];
    commands.extend(git_commands(o, &k));
    commands.extend(k.payload_jobs.iter().map(|p| p.command.clone()));
    let mut would_change = vec![
        match &s.score.cap {
            Some(cap) => format!("Becomes a revert (score ≥ 85) with what it lacks now: {cap}."),
            None => format!(
                "Becomes a revert at score ≥ 85 (now {}): a specific verbatim match in an added line, with the onset and a second link.",
                s.score.total
            ),
        },
        format!(
            "Drops to report only if the onset in {} does not hold or its link ({}) turns out not specific.",
            k.jobs.iter().map(|(_, m, _)| m.first_failed_in.as_str()).collect::<BTreeSet<_>>().into_iter().collect::<Vec<_>>().join(", "),
            signals(&s.score)
        ),
        "The experiment decides: the jobs passing with the revert applied confirm the suspect; failing the same way clears it.".into(),
    ];
    if !k.untriggered.is_empty() {
        would_change.push(format!("Not covered by the experiment: {}", k.untriggered.join("; ")));
    }
    let requests = requests(&k, &title, &body, true);
    Ok(Draft {
        format_version: FORMAT_VERSION,
        kind: ActionKind::Bisect,
        name: format!("bisect-{}-{}", slug(&a.payload.tag), slug(&c.short())),
        subject: what,
        score: Some(s.score.total),
        band: Some(s.band.as_str().into()),
        gate: "bisect band (score 60-84): an established onset, a specific link and a second kind of link".into(),
        title,
        body,
        labels: Vec::new(),
        commands,
        earned_by: k.earned.clone(),
        would_change,
        target: Some(Target {
            repo: k.repo.clone(),
            number: Some(k.number),
            routed_by: "the suspect PR's repository".into(),
        }),
        suspect: Some(k.suspect_pr()),
        payload_jobs: k.payload_jobs.clone(),
        merge_sha: o.merge_sha.clone(),
        conflict_check: None,
        requests,
        apply_blocked: None,
    })
}

fn root_cause<'a>(a: &'a PayloadAnalysis, id: &str) -> Result<&'a RootCause, Refusal> {
    a.root_causes.iter().find(|r| r.id.eq_ignore_ascii_case(id.trim())).ok_or_else(|| Refusal::Unknown {
        what: format!("payload {}, root cause {id}", a.payload.tag),
        known: a.root_causes.iter().map(|r| r.id.clone()).collect(),
    })
}

/// A bug text for a payload root cause, routed to the repository of its best suspect
/// at the bisect band or above (or the one given). A root cause without evidence
/// (unknown: insufficient evidence) is refused.
pub fn root_cause_bug(a: &PayloadAnalysis, id: &str, o: &PayloadOptions) -> Result<Draft, Refusal> {
    let rc = root_cause(a, id)?;
    let what = format!("payload {}, root cause {}", a.payload.tag, rc.id);
    if rc.class.class == FailureClass::Unknown {
        return Err(Refusal::MissingEvidence { what, missing: format!("insufficient evidence: {}", rc.class.reason) });
    }
    if rc.evidence.is_empty() {
        return Err(Refusal::MissingEvidence { what, missing: "the root cause cites no failing line".into() });
    }
    let mut earned: Vec<Earned> = rc
        .evidence
        .iter()
        .map(|(job, l)| Earned {
            evidence: line_evidence(a, failed_job(a, job), l),
            shows: format!("{job} fails with this line"),
        })
        .collect();
    for job in &rc.jobs {
        if let Some(j) = failed_job(a, job) {
            if let Some(m) = j.modes.iter().find(|m| m.root_cause == rc.id) {
                for e in onset_evidence(a, j, m).into_iter().take(1) {
                    earned.push(Earned { evidence: e, shows: format!("{job} first failed in {}", m.first_failed_in) });
                }
            }
        }
    }
    earned.sort_by(|x, y| x.evidence.id.cmp(&y.evidence.id));
    earned.dedup_by(|x, y| x.evidence.id == y.evidence.id);
    let top = a
        .suspects
        .iter()
        .filter(|s| s.root_cause == rc.id && s.band >= Band::Medium)
        .min_by(|x, y| y.score.total.cmp(&x.score.total).then(x.rank.cmp(&y.rank)))
        .and_then(|s| a.candidate(&s.candidate).map(|c| (s, c)));
    let component = top.map(|(_, c)| c.component.clone()).unwrap_or_else(|| "unknown".into());
    let target = match (&o.repo, top) {
        (Some(r), _) => Some(Target { repo: r.clone(), number: None, routed_by: "given with --repo".into() }),
        (None, Some((s, c))) => c.repo.clone().map(|r| Target {
            repo: r,
            number: None,
            routed_by: format!(
                "the repository of the best suspect, {} (score {}, {})",
                c.short(),
                s.score.total,
                s.band.as_str()
            ),
        }),
        (None, None) => None,
    };
    let title = format!("{}: {} blocking job(s) fail: {}", a.payload.tag, rc.jobs.len(), first_line(&rc.title, 120));
    let mut body = String::new();
    let _ = writeln!(body, "**Component**: {component}");
    let _ = writeln!(body, "**Class**: {} ({})", rc.class.class.as_str(), rc.class.reason);
    let _ = writeln!(body, "**First seen**: payload {}", rc.first_failed_in);
    let _ =
        writeln!(body, "**Payload**: [{}]({}) ({})\n", a.payload.tag, a.payload.release_url, a.payload.phase.as_str());
    let _ = writeln!(body, "### Affected jobs\n");
    for job in &rc.jobs {
        let j = failed_job(a, job);
        let _ = writeln!(
            body,
            "- {}{}",
            job,
            j.and_then(|j| j.url.as_deref()).map(|u| format!(": {u}")).unwrap_or_default()
        );
    }
    let _ = writeln!(body, "\n### Failure lines\n");
    for (job, l) in &rc.evidence {
        let e = line_evidence(a, failed_job(a, job), l);
        let _ = writeln!(body, "- {job} `{}`: `{}` [{}]", l.at.cite(), cap(&l.text, 300).replace('`', "'"), e.id);
    }
    let _ = writeln!(body, "\n### Known signature\n");
    let _ = writeln!(body, "Signature `{}`: `{}`", rc.signature.id, cap(&rc.signature.text, 200).replace('`', "'"));
    if rc.is_systemic {
        let _ = writeln!(body, "\nSystemic: the same signature shows in {} other job(s).", rc.systemic.len());
    }
    let sus: Vec<&Suspect> = a.suspects.iter().filter(|s| s.root_cause == rc.id).take(5).collect();
    if !sus.is_empty() {
        let _ = writeln!(body, "\n### Suspects\n\n| change | score | band | action |\n|---|---|---|---|");
        for s in sus {
            let name = a.candidate(&s.candidate).map(|c| c.short()).unwrap_or(s.candidate.clone());
            let _ = writeln!(body, "| {name} | {} | {} | {} |", s.score.total, s.band.as_str(), s.action.as_str());
        }
    }
    let _ = writeln!(
        body,
        "\nEvidence ids resolve with `citriage evidence ID` against the store this analysis was recorded in."
    );
    let mut would_change = vec![
        format!("Closed if {} pass again in a later payload with no change to {component}.", rc.jobs.join(", ")),
        format!(
            "Reclassified if the line that fired the classifier is explained otherwise (now: {}).",
            rc.class.reason
        ),
    ];
    if let Some((_, c)) = top {
        would_change.push(format!("Re-routed if a bisect clears {} (its revert does not fix the jobs).", c.short()));
    }
    let apply_blocked =
        target.is_none().then(|| "no owner: no suspect reaches the bisect band; give --repo OWNER/NAME".to_string());
    let requests = target
        .as_ref()
        .map(|t| {
            vec![PlannedRequest {
                method: "POST".into(),
                path: format!("/repos/{}/issues", t.repo),
                body: Some(json!({"title": title, "body": body, "labels": Vec::<String>::new()})),
                captures: vec![Capture { name: "issue_url".into(), pointer: "/html_url".into() }],
                require: Vec::new(),
                purpose: format!("file the bug in {}", t.repo),
            }]
        })
        .unwrap_or_default();
    Ok(Draft {
        format_version: FORMAT_VERSION,
        kind: ActionKind::Bug,
        name: format!("bug-{}-{}", slug(&a.payload.tag), slug(&rc.id)),
        subject: what,
        score: None,
        band: None,
        gate: "a classified root cause (not insufficient evidence) with its failing lines".into(),
        title,
        body,
        labels: Vec::new(),
        commands: Vec::new(),
        earned_by: earned,
        would_change,
        target,
        suspect: None,
        payload_jobs: Vec::new(),
        merge_sha: None,
        conflict_check: None,
        requests,
        apply_blocked,
    })
}

/// Every row an action can be drafted from — each suspect row and each root cause —
/// with the draft its evidence supports or why none.
pub fn rows(a: &PayloadAnalysis) -> Vec<Row> {
    let o = PayloadOptions::default();
    let mut out = Vec::new();
    for s in &a.suspects {
        let name = a.candidate(&s.candidate).map(|c| c.short()).unwrap_or(s.candidate.clone());
        let (draft, refused, command) = match s.action {
            CandidateAction::StageRevert => match revert(a, &s.candidate, &o) {
                Ok(_) => (
                    Some(ActionKind::Revert),
                    None,
                    Some(format!("citriage act revert {} --suspect {name}", a.payload.tag)),
                ),
                Err(r) => (None, Some(r.message()), None),
            },
            CandidateAction::Bisect => match bisect(a, Some(&s.candidate), &o) {
                Ok(_) => (
                    Some(ActionKind::Bisect),
                    None,
                    Some(format!("citriage act bisect {} --suspect {name}", a.payload.tag)),
                ),
                Err(r) => (None, Some(r.message()), None),
            },
            _ => (None, Some(format!("{}: {}", s.action.as_str(), s.action_reason)), None),
        };
        out.push(Row {
            row: "suspect".into(),
            id: name,
            root_cause: s.root_cause.clone(),
            score: Some(s.score.total),
            band: Some(s.band.as_str().into()),
            action: s.action.as_str().into(),
            draft,
            refused,
            command,
        });
    }
    for rc in &a.root_causes {
        let (draft, refused, command) = match root_cause_bug(a, &rc.id, &o) {
            Ok(_) => (
                Some(ActionKind::Bug),
                None,
                Some(format!("citriage act bug {} --root-cause {}", a.payload.tag, rc.id)),
            ),
            Err(r) => (None, Some(r.message()), None),
        };
        out.push(Row {
            row: "root-cause".into(),
            id: rc.id.clone(),
            root_cause: rc.id.clone(),
            score: None,
            band: None,
            action: format!("bug ({})", rc.class.class.as_str()),
            draft,
            refused,
            command,
        });
    }
    out
}
