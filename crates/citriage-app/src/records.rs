//! Triage records: linking an issue or pull request to a pattern (by stable id), a job
//! or a payload root cause, unlinking it, listing the records, and refreshing their
//! states from the evidence (the stored builds, the links and what GitHub says about
//! them, read through the client over the store's cache, so offline runs answer from
//! the cache). The states are decided by `citriage_analysis::resolution`; the store
//! keeps them with conditional writes, so two writers at once lose nothing: the one
//! that lost re-reads and decides again.
//!
//! Sources of links: by hand ([`link`]), the `--links` file of `triage` (each entry's
//! regex over the latest clustering run's pattern texts), GitHub cross-references
//! ([`MentionOptions`]: issues and pull requests that name a pattern, found by
//! [`refresh`] through the GitHub client, so offline from the cache), filed `act bug`
//! drafts ([`link_filed_bug`]), and whatever else calls [`link`] with its own
//! [`LinkSource`].

use crate::error::{Error, Result};
use crate::progress::Progress;
use citriage_analysis::resolution::digest::{digest, Digest, LinkSummary, RecordSummary};
use citriage_analysis::resolution::{
    evaluate, ByTime, Evaluation, Facts, LinkFact, Outcome, RefKind, RefStatus, Run, State,
};
use citriage_github::mentions::{summarize, RefSummary};
use citriage_github::IssueRef;
use citriage_model::time::{utc, DAY};
use citriage_model::{Evidence, EvidenceKind};
use citriage_patterns::normalize::Profile;
use citriage_store::Store;
use citriage_store::{
    LinkSource, LinkWrite, NewLink, NewTransition, PatternRun, RecordWrite, RefFacts, StoredLink, StoredRecord,
    StoredTransition, Subject,
};
use serde::Serialize;
use std::rc::Rc;

use crate::containment::{Checkouts, FixCommit};
pub use crate::mentions::{MentionOptions, MentionsRead};

/// How GitHub is read: the API base, and whether to answer from the store's cache only.
#[derive(Debug, Clone)]
pub struct GithubAccess {
    pub api: String,
    pub offline: bool,
}

impl Default for GithubAccess {
    fn default() -> Self {
        GithubAccess { api: citriage_github::DEFAULT_API_BASE.to_string(), offline: false }
    }
}

/// How many times a record's transitions are decided again after another writer
/// changed it first.
const RETRIES: usize = 8;

/// What [`link`] is asked.
#[derive(Debug, Clone)]
pub struct LinkOptions {
    /// A pattern's stable id (in any profile's latest clustering), `pattern:PROFILE/ID`,
    /// `job:NAME` or `payload:CAUSE`.
    pub subject: String,
    /// `owner/repo#N` or a `https://github.com/owner/repo/(pull|issues)/N` URL.
    pub reference: String,
    /// Who links it (a person's name, `links-file`, ...).
    pub by: String,
    pub note: String,
    pub source: LinkSource,
    pub github: GithubAccess,
    /// When (Unix seconds; default: now).
    pub at: Option<i64>,
}

impl Default for LinkOptions {
    fn default() -> Self {
        LinkOptions {
            subject: String::new(),
            reference: String::new(),
            by: String::new(),
            note: String::new(),
            source: LinkSource::Hand,
            github: GithubAccess::default(),
            at: None,
        }
    }
}

/// A record with its links and transitions, and where confirmation stands.
#[derive(Debug, Clone, Serialize)]
pub struct RecordView {
    #[serde(flatten)]
    pub record: StoredRecord,
    /// Seconds in its state (at the time it was read).
    pub age: i64,
    pub links: Vec<StoredLink>,
    pub transitions: Vec<StoredTransition>,
    /// The summary reports and pages show (fix, confirmation plan, reason).
    pub summary: RecordSummary,
}

/// What [`link`] or [`unlink`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Linked {
    pub subject: String,
    pub reference: String,
    /// `linked`, `already linked`, `unlinked`.
    pub action: String,
    /// What GitHub said about the reference (link only).
    pub github: Option<String>,
    /// The transitions the link caused (`from → to: reason`).
    pub transitions: Vec<String>,
    pub record: RecordView,
    /// Why the reference does not count as the user meant (a 404, a pull request
    /// closed without merging): the link is recorded, and the front end fails with it.
    pub problem: Option<String>,
}

impl Linked {
    /// `Err` (bad input) when the reference was a 404 or a pull request closed
    /// without merging: recorded, shown, and the command fails.
    pub fn outcome(&self) -> Result<()> {
        match &self.problem {
            Some(p) => Err(Error::input(p.clone())),
            None => Ok(()),
        }
    }
}

/// Reads a subject as the user wrote it: a full key, or a bare stable id looked up in
/// every profile's clusters; the title shown for it and when it was first seen.
pub fn resolve_subject(store: &Store, spelled: &str) -> Result<(Subject, String, Option<i64>)> {
    let s = spelled.trim();
    if s.is_empty() || s.len() > 300 || s.chars().any(char::is_control) {
        return Err(Error::input(format!(
            "{spelled:?} is not a pattern id, pattern:PROFILE/ID, job:NAME or payload:CAUSE"
        )));
    }
    if let Some(subject) = Subject::parse(s) {
        return match &subject {
            Subject::Pattern { profile, id } => {
                let c = store.cluster(profile, id)?.ok_or_else(|| unknown_pattern(store, s))?;
                Ok((subject.clone(), title_of(&c.text), Some(c.first_seen)))
            }
            Subject::Job { job } => {
                if store.build_jobs()?.iter().any(|j| j == job) {
                    Ok((subject.clone(), job.clone(), None))
                } else {
                    Err(Error::input(format!("job {job:?} has no stored build in {}", store.path())))
                }
            }
            Subject::Payload { cause } => Ok((subject.clone(), cause.clone(), None)),
        };
    }
    if s.contains(':') {
        return Err(Error::input(format!(
            "{s:?}: expected a pattern's stable id, pattern:PROFILE/ID, job:NAME or payload:CAUSE"
        )));
    }
    let mut found = Vec::new();
    for p in Profile::ALL {
        if let Some(c) = store.cluster(p.name(), s)? {
            found.push((Subject::Pattern { profile: p.name().into(), id: s.into() }, title_of(&c.text), c.first_seen));
        }
    }
    match found.len() {
        0 => Err(unknown_pattern(store, s)),
        1 => {
            let (sub, title, first) = found.remove(0);
            Ok((sub, title, Some(first)))
        }
        _ => Err(Error::input(format!(
            "pattern {s} is stored under several profiles ({}): say which as pattern:PROFILE/{s}",
            found.iter().map(|f| f.0.key()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

fn unknown_pattern(store: &Store, s: &str) -> Error {
    Error::remedy(
        format!(
            "pattern {s} is not stored in {} (no clustering run has given that id): check the id, or run ",
            store.path()
        ),
        "cluster",
        " first",
    )
}

fn title_of(text: &str) -> String {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().chars().take(120).collect()
}

/// The facts a link keeps from GitHub's answer.
fn facts_of(s: &RefSummary) -> RefFacts {
    RefFacts {
        ref_kind: s.kind.to_string(),
        ref_state: s.state.to_string(),
        merged_at: s.merged_at,
        merge_commit: s.merge_commit.clone(),
        base_branch: s.base.clone(),
        read_at: s.read_at,
    }
}

fn parse_reference(r: &str) -> Result<IssueRef> {
    IssueRef::parse(r).ok_or_else(|| {
        Error::input(format!(
            "{r:?} is not a GitHub reference: expected owner/repo#N or https://github.com/owner/repo/pull/N"
        ))
    })
}

/// A GitHub client whose cache is a second connection to the same store.
pub(crate) fn github(store: &Store, access: &GithubAccess) -> Result<citriage_github::GithubClient> {
    let cache = Rc::new(store.location().open()?);
    Ok(crate::github::client(cache, &access.api, access.offline))
}

/// Links a reference to a record (created when missing), reading what GitHub says
/// about it first, then refreshes the record's state. A 404 or a pull request closed
/// without merging is linked (kept, shown) and reported in [`Linked::problem`].
pub fn link(store: &mut Store, opts: &LinkOptions, progress: &dyn Progress) -> Result<Linked> {
    let (subject, title, first_seen) = resolve_subject(store, &opts.subject)?;
    let r = parse_reference(&opts.reference)?;
    if opts.by.trim().is_empty() {
        return Err(Error::input("who links it is missing (--by NAME)"));
    }
    progress.doing("reading the reference from GitHub");
    let gh = github(store, &opts.github)?;
    let summary = summarize(&gh, &r);
    drop(gh);
    link_known(store, opts, (subject, title, first_seen), summary, progress)
}

/// [`link`] with what GitHub said about the reference already known.
fn link_known(
    store: &mut Store,
    opts: &LinkOptions,
    (subject, title, first_seen): (Subject, String, Option<i64>),
    summary: RefSummary,
    progress: &dyn Progress,
) -> Result<Linked> {
    let r = &summary.reference;
    let at = opts.at.unwrap_or_else(crate::clock::now);
    let key = subject.key();
    store.ensure_record(&subject, &title, first_seen.unwrap_or(at).min(at))?;
    let new = NewLink {
        reference: r.to_string(),
        source: opts.source,
        linked_by: opts.by.trim().to_string(),
        linked_at: at,
        facts: facts_of(&summary),
        note: opts.note.clone(),
    };
    if let Some(ev) = &summary.evidence {
        store.record_evidence(std::slice::from_ref(ev), &crate::clock::now_rfc3339())?;
    }
    let action = match store.link_record(&key, &new)? {
        LinkWrite::Done { .. } => "linked",
        LinkWrite::Unchanged { .. } => "already linked",
        LinkWrite::Missing => return Err(Error::failed(format!("record {key} vanished while linking"))),
    };
    let problem = match summary.state {
        "not-found" => Some(format!(
            "{r} does not exist (GitHub answered 404): the link is kept on {key} and shown, but it does not count"
        )),
        "closed-unmerged" => Some(format!(
            "{r} is a pull request closed without merging: linked to {key}, it counts as triage, never as a fix"
        )),
        _ => None,
    };
    progress.doing("deciding the record's state");
    let steps = refresh_one(store, &key, at)?;
    Ok(Linked {
        subject: key.clone(),
        reference: r.to_string(),
        action: action.into(),
        github: Some(summary.describe()),
        transitions: steps,
        record: view(store, &key, at)?,
        problem,
    })
}

/// A bug draft of `act bug` that was filed: what it was about and what GitHub answered.
#[derive(Debug, Clone, Default)]
pub struct FiledBug {
    /// The record's subject: `pattern:PROFILE/ID` (or a stable id), `payload:TAG/RC`.
    pub subject: String,
    /// The draft's name (kept in the link's note).
    pub draft: String,
    /// The requests sent and GitHub's answers (`citriage_actions::apply`).
    pub sent: Vec<citriage_actions::Sent>,
    /// When (Unix seconds; default: now).
    pub at: Option<i64>,
}

/// The issue a filed bug opened (`POST /repos/{o}/{r}/issues` answered with its number).
fn filed_issue(sent: &[citriage_actions::Sent]) -> Option<(IssueRef, &citriage_actions::Sent)> {
    sent.iter().find_map(|s| {
        let parts: Vec<&str> = s.path.trim_start_matches('/').split('/').collect();
        match (s.method.as_str(), parts.as_slice()) {
            ("POST", ["repos", o, r, "issues"]) => {
                let n = s.answer.get("number")?.as_u64()?;
                Some((IssueRef::parse(&format!("{o}/{r}#{n}"))?, s))
            }
            _ => None,
        }
    })
}

/// Links the issue a filed `act bug` draft opened to the record of what the bug is
/// about (source `bug-draft`, by `act bug`): an open issue, as GitHub's answer to the
/// filing says, so nothing more is asked. `None` when no issue was opened.
pub fn link_filed_bug(store: &mut Store, bug: &FiledBug) -> Result<Option<Linked>> {
    let Some((r, sent)) = filed_issue(&bug.sent) else { return Ok(None) };
    let resolved = resolve_subject(store, &bug.subject)?;
    let at = bug.at.unwrap_or_else(crate::clock::now);
    let url = sent.answer.get("html_url").and_then(|u| u.as_str()).unwrap_or("").to_string();
    let summary = RefSummary {
        reference: r.clone(),
        kind: "issue",
        state: "open",
        title: sent.body.as_ref().and_then(|b| b.get("title")).and_then(|t| t.as_str()).unwrap_or("").to_string(),
        merged_at: None,
        merge_commit: None,
        base: None,
        read_at: Some(at),
        why: None,
        evidence: Some(Evidence::new(
            EvidenceKind::IssueState,
            if url.is_empty() { format!("POST {}", sent.path) } else { url },
            format!("issue {r} opened by filing {}", bug.draft),
            "",
            utc(at).to_string(),
        )),
    };
    let opts = LinkOptions {
        subject: bug.subject.clone(),
        reference: r.to_string(),
        by: "act bug".into(),
        note: format!("filed from the bug draft {}", bug.draft),
        source: LinkSource::BugDraft,
        at: Some(at),
        ..LinkOptions::default()
    };
    link_known(store, &opts, resolved, summary, &crate::progress::Silent).map(Some)
}

/// What [`unlink`] is asked.
#[derive(Debug, Clone, Default)]
pub struct UnlinkOptions {
    pub subject: String,
    pub reference: String,
    pub by: String,
    /// When (Unix seconds; default: now).
    pub at: Option<i64>,
}

/// Unlinks a reference (the link stays, stamped) and refreshes the record's state.
pub fn unlink(store: &mut Store, opts: &UnlinkOptions, progress: &dyn Progress) -> Result<Linked> {
    let (subject, _, _) = resolve_subject(store, &opts.subject)?;
    let r = parse_reference(&opts.reference)?;
    if opts.by.trim().is_empty() {
        return Err(Error::input("who unlinks it is missing (--by NAME)"));
    }
    let key = subject.key();
    let at = opts.at.unwrap_or_else(crate::clock::now);
    match store.unlink_record(&key, &r.to_string(), opts.by.trim(), at)? {
        LinkWrite::Done { .. } => {}
        LinkWrite::Unchanged { .. } => return Err(Error::input(format!("{r} is not linked to {key}"))),
        LinkWrite::Missing => return Err(Error::input(format!("{key} has no triage record: nothing is linked to it"))),
    }
    progress.doing("deciding the record's state");
    let steps = refresh_one(store, &key, at)?;
    Ok(Linked {
        subject: key.clone(),
        reference: r.to_string(),
        action: "unlinked".into(),
        github: None,
        transitions: steps,
        record: view(store, &key, at)?,
        problem: None,
    })
}

/// What [`refresh`] is asked.
#[derive(Debug, Clone, Default)]
pub struct RefreshOptions {
    /// Read the linked references' states from GitHub again (`None`: use the stored
    /// ones).
    pub github: Option<GithubAccess>,
    /// Evaluate as of this instant (Unix seconds; default: now): builds started and
    /// links made after it are not known yet.
    pub as_of: Option<i64>,
    /// A links file (`triage --links`): each entry is linked to the patterns of the
    /// latest clustering runs whose failure text its regex matches.
    pub links: Option<std::path::PathBuf>,
    /// Search GitHub for issues and pull requests that name the patterns, and link
    /// them (`None`: no search).
    pub mentions: Option<MentionOptions>,
    /// Local checkouts (`OWNER/REPO=PATH`, as `--checkout` spells them): a fix's
    /// containment in a build is read from git ancestry of the build's tested commit
    /// where the fix's repository has one, else from time.
    pub checkouts: Vec<String>,
}

/// What [`refresh`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Refreshed {
    pub records: usize,
    /// Links whose GitHub state changed.
    pub links_updated: usize,
    /// `subject: from → to: reason`, in order.
    pub transitions: Vec<String>,
    /// References whose state could not be read (offline and not cached, an error).
    pub unread: Vec<String>,
    /// Links made from the links file and from GitHub cross-references (`subject ←
    /// reference`), and their problems.
    pub linked: Vec<String>,
    pub problems: Vec<String>,
    /// The search for GitHub cross-references (when asked).
    pub mentions: Option<MentionsRead>,
}

/// Links each entry of a links file to the patterns of the latest clustering runs whose
/// failure text its regex matches (source `links-file`).
fn link_file(
    store: &mut Store,
    path: &std::path::Path,
    access: &GithubAccess,
    now: i64,
    out: &mut Refreshed,
) -> Result<()> {
    let entries = crate::links::read_entries(path)?;
    let mut targets = Vec::new();
    for p in Profile::ALL {
        let Some(run) = store.cluster_run(p.name())? else { continue };
        for c in store.clusters(p.name())?.into_iter().filter(|c| c.run_as_of == run.as_of) {
            for e in &entries {
                if e.matches.is_match(&c.text) {
                    targets.push((
                        format!("pattern:{}/{}", p.name(), c.stable_id),
                        e.reference.to_string(),
                        e.note.clone(),
                    ));
                }
            }
        }
    }
    targets.sort();
    targets.dedup();
    for (subject, reference, note) in targets {
        let opts = LinkOptions {
            subject: subject.clone(),
            reference: reference.clone(),
            by: format!("links-file {}", path.display()),
            note,
            source: LinkSource::LinksFile,
            github: access.clone(),
            at: Some(now),
        };
        let l = link(store, &opts, &crate::progress::Silent)?;
        if l.action == "linked" {
            out.linked.push(format!("{subject} ← {reference}"));
        }
        out.problems.extend(l.problem);
    }
    Ok(())
}

/// Links the issues and pull requests that name the patterns (source `github`, by
/// `github mention`, the query and when its answer was read in the note); a mention
/// someone unlinked is not linked again.
fn link_mentions(
    store: &mut Store,
    m: &MentionOptions,
    access: &GithubAccess,
    now: i64,
    out: &mut Refreshed,
) -> Result<()> {
    let gh = github(store, access)?;
    let (found, mut read) = crate::mentions::search(store, m, &gh)?;
    drop(gh);
    read.offline = access.offline;
    for f in found {
        let previous = store.record_links(&f.subject)?;
        if let Some(p) = previous.iter().rev().find(|l| l.reference == f.reference) {
            if !p.active() {
                read.kept_unlinked.push(format!(
                    "{} ← {}: unlinked by {} {}",
                    f.subject,
                    f.reference,
                    p.unlinked_by.as_deref().unwrap_or("someone"),
                    p.unlinked_at.map(|t| utc(t).to_string()).unwrap_or_default()
                ));
            }
            continue;
        }
        let opts = LinkOptions {
            subject: f.subject.clone(),
            reference: f.reference.clone(),
            by: "github mention".into(),
            note: f.note,
            source: LinkSource::Github,
            github: access.clone(),
            at: Some(now),
        };
        let l = link(store, &opts, &crate::progress::Silent)?;
        if l.action == "linked" {
            out.linked.push(format!("{} ← {} (github mention)", f.subject, f.reference));
        }
        out.problems.extend(l.problem);
    }
    out.mentions = Some(read);
    Ok(())
}

/// Refreshes every record: the linked references' states from GitHub (when asked),
/// then the transitions the evidence calls for, written conditionally.
pub fn refresh(store: &mut Store, opts: &RefreshOptions, progress: &dyn Progress) -> Result<Refreshed> {
    let now = opts.as_of.unwrap_or_else(crate::clock::now);
    let mut out = Refreshed::default();
    if let Some(path) = &opts.links {
        progress.doing("linking from the links file");
        let access = opts.github.clone().unwrap_or(GithubAccess { offline: true, ..GithubAccess::default() });
        link_file(store, path, &access, now, &mut out)?;
    }
    if let Some(m) = &opts.mentions {
        progress.doing("searching GitHub for issues and pull requests that name the patterns");
        let access = opts.github.clone().unwrap_or(GithubAccess { offline: true, ..GithubAccess::default() });
        link_mentions(store, m, &access, now, &mut out)?;
    }
    let records = store.records(None)?;
    out.records = records.len();
    if let Some(access) = &opts.github {
        progress.doing("reading linked references from GitHub");
        let links: Vec<StoredLink> = store.all_record_links()?.into_iter().filter(StoredLink::active).collect();
        if !links.is_empty() {
            let gh = github(store, access)?;
            let mut read = Vec::new();
            for l in &links {
                let Some(r) = IssueRef::parse(&l.reference) else { continue };
                let s = summarize(&gh, &r);
                if s.state == "unknown" {
                    out.unread.push(format!("{}: {}", l.reference, s.why.as_deref().unwrap_or("not read")));
                    continue;
                }
                read.push((l.subject.clone(), l.reference.clone(), facts_of(&s), s.evidence));
            }
            drop(gh);
            let evidence: Vec<Evidence> = read.iter().filter_map(|x| x.3.clone()).collect();
            store.record_evidence(&evidence, &crate::clock::now_rfc3339())?;
            for (subject, reference, facts, _) in read {
                if matches!(store.set_link_facts(&subject, &reference, &facts)?, LinkWrite::Done { .. }) {
                    out.links_updated += 1;
                }
            }
            out.unread.sort();
            out.unread.dedup();
        }
    }
    progress.doing("deciding the records' states");
    let checkouts = Checkouts::open(&opts.checkouts)?;
    for r in &records {
        for t in refresh_with(store, &r.subject, now, &checkouts)? {
            out.transitions.push(format!("{}: {t}", r.subject));
        }
    }
    out.problems.extend(checkouts.unanswered());
    Ok(out)
}

/// Decides one record's transitions as of `now` and writes them if nobody changed the
/// record meanwhile (else reads it again and decides again).
fn refresh_one(store: &mut Store, subject: &str, now: i64) -> Result<Vec<String>> {
    refresh_with(store, subject, now, &Checkouts::default())
}

/// [`refresh_one`] with checkouts to read the builds' containment of a fix from.
fn refresh_with(store: &mut Store, subject: &str, now: i64, checkouts: &Checkouts) -> Result<Vec<String>> {
    for _ in 0..RETRIES {
        let Some(rec) = store.record(subject)? else {
            return Err(Error::input(format!("{subject} has no triage record")));
        };
        let e = evaluation(store, &rec, now, checkouts)?;
        if e.steps.is_empty() {
            return Ok(Vec::new());
        }
        let new: Vec<NewTransition> = e
            .steps
            .iter()
            .map(|s| NewTransition {
                from: s.from.as_str().into(),
                to: s.to.as_str().into(),
                at: s.at,
                evidence: s.evidence.clone(),
                reason: s.reason.clone(),
            })
            .collect();
        match store.apply_record_transitions(subject, rec.version, &new, crate::clock::now())? {
            RecordWrite::Applied { .. } => {
                return Ok(e
                    .steps
                    .iter()
                    .map(|s| format!("{} → {}: {}", s.from.label(), s.to.label(), s.reason))
                    .collect())
            }
            RecordWrite::Conflict { .. } => continue,
            RecordWrite::Missing => return Err(Error::input(format!("{subject} has no triage record"))),
        }
    }
    Err(Error::failed(format!(
        "{subject}: another writer changed the record {RETRIES} times while its state was decided; nothing was lost, run again"
    )))
}

fn state_of(s: &str) -> Result<State> {
    State::parse(s)
        .ok_or_else(|| Error::failed(format!("the store holds a record state {s:?} this build does not know")))
}

/// The resolution's view of a stored link.
fn link_fact(l: &StoredLink) -> LinkFact {
    let kind = match l.facts.ref_kind.as_str() {
        "pr" => RefKind::Pr,
        "issue" => RefKind::Issue,
        _ => RefKind::Unknown,
    };
    let status = match (l.facts.ref_state.as_str(), l.facts.merged_at) {
        ("open", _) => RefStatus::Open,
        ("merged", Some(at)) => {
            RefStatus::Merged { at, commit: l.facts.merge_commit.clone(), base: l.facts.base_branch.clone() }
        }
        ("closed-unmerged", _) => RefStatus::ClosedUnmerged,
        ("closed", _) => RefStatus::Closed,
        ("not-found", _) => RefStatus::NotFound,
        _ => RefStatus::Unknown,
    };
    let kind_ev = if kind == RefKind::Pr { EvidenceKind::PullRequestState } else { EvidenceKind::IssueState };
    let read = l.facts.read_at.or(Some(l.linked_at)).map(|t| utc(t).to_string()).unwrap_or_default();
    let evidence = vec![Evidence::new(
        kind_ev,
        format!("{} (linked by {} via {})", l.reference, l.linked_by, l.source.as_str()),
        format!("{} {}", l.facts.ref_kind, l.facts.ref_state),
        "",
        read,
    )];
    LinkFact {
        reference: l.reference.clone(),
        kind,
        status,
        linked_at: l.linked_at,
        unlinked_at: l.unlinked_at,
        evidence,
    }
}

/// The branch a build tested, from its `started.json` repos (`{"org/repo": "branch:sha,..."}`).
fn branch_of(repos: Option<&str>) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(repos?).ok()?;
    let map = v.as_object()?;
    let refs = map
        .iter()
        .find(|(k, _)| k.ends_with("kubernetes/kubernetes"))
        .or_else(|| (map.len() == 1).then(|| map.iter().next()).flatten())?
        .1
        .as_str()?;
    let b = refs.split([':', ',']).next()?.trim();
    (!b.is_empty()).then(|| b.to_string())
}

/// A build of an affected job as the resolution sees it.
pub fn run_of(r: &PatternRun) -> Run {
    let outcome = match (r.hit, r.result.as_deref()) {
        (true, _) => Outcome::Pattern,
        (false, Some("SUCCESS")) => Outcome::Clean,
        // failed with test results, none of them the pattern's: the pattern had its chance
        (false, Some("FAILURE")) if r.failed_tests > 0 => Outcome::Clean,
        _ => Outcome::Other,
    };
    let build = crate::containment::build_of(r);
    Run {
        job: r.job.clone(),
        build: build.clone(),
        started: r.started,
        outcome,
        tested: r.repo_commit.clone(),
        branch: branch_of(r.repos.as_deref()),
        evidence: Evidence::new(
            EvidenceKind::BuildResult,
            format!("{}/finished.json", citriage_model::build::prow_url(&r.bucket, &r.path)),
            r.result.clone().unwrap_or_else(|| "running".into()),
            "",
            citriage_model::Day::from_unix_seconds(r.started).to_string(),
        ),
    }
}

/// Evaluates a record as of `now` from the store (runs started and links made by then),
/// the builds' containment of a fix from the checkouts where they can tell.
fn evaluation(store: &Store, rec: &StoredRecord, now: i64, checkouts: &Checkouts) -> Result<Evaluation> {
    let history: Vec<(State, State, i64)> = store
        .record_transitions(&rec.subject)?
        .iter()
        .map(|t| Ok((state_of(&t.from)?, state_of(&t.to)?, t.at)))
        .collect::<Result<_>>()?;
    let stored: Vec<StoredLink> =
        store.record_links(&rec.subject)?.into_iter().filter(|l| l.linked_at <= now).collect();
    let links: Vec<LinkFact> = stored.iter().map(link_fact).collect();
    let pattern_runs: Vec<PatternRun> = if rec.kind == "pattern" {
        store.pattern_runs(&rec.profile, &rec.key, 0)?.into_iter().filter(|r| r.started <= now).collect()
    } else {
        Vec::new()
    };
    let runs: Vec<Run> = pattern_runs.iter().map(run_of).collect();
    let facts =
        Facts { state: state_of(&rec.state)?, since: rec.since, history: &history, links: &links, runs: &runs, now };
    if checkouts.is_empty() || runs.is_empty() {
        return Ok(evaluate(&facts, &ByTime));
    }
    let mut fixes: Vec<FixCommit> = stored
        .iter()
        .filter(|l| l.facts.ref_state == "merged")
        .filter_map(|l| {
            let r = IssueRef::parse(&l.reference)?;
            Some(FixCommit { repo: r.repo.to_string(), commit: l.facts.merge_commit.clone()? })
        })
        .collect();
    fixes.sort();
    fixes.dedup();
    Ok(evaluate(&facts, &checkouts.answers(&fixes, &pattern_runs)))
}

/// A record as reports and pages show it, evaluated as of `now` (its fix and
/// confirmation plan) without writing anything.
fn summary(
    store: &Store,
    rec: &StoredRecord,
    now: i64,
) -> Result<(RecordSummary, Vec<StoredLink>, Vec<StoredTransition>)> {
    let e = evaluation(store, rec, now, &Checkouts::default())?;
    let links = store.record_links(&rec.subject)?;
    let transitions = store.record_transitions(&rec.subject)?;
    let last = transitions.last();
    let s = RecordSummary {
        subject: rec.subject.clone(),
        title: rec.title.clone(),
        state: state_of(&rec.state)?,
        since: rec.since,
        reason: last.map(|t| t.reason.clone()).unwrap_or_default(),
        evidence: last.map(|t| t.evidence.clone()).unwrap_or_default(),
        links: links
            .iter()
            .map(|l| LinkSummary {
                reference: l.reference.clone(),
                kind: l.facts.ref_kind.clone(),
                state: l.facts.ref_state.clone(),
                source: l.source.as_str().into(),
                active: l.active(),
            })
            .collect(),
        fix: e.fix,
        confirmation: e.confirmation,
    };
    Ok((s, links, transitions))
}

fn view(store: &Store, subject: &str, now: i64) -> Result<RecordView> {
    let rec = store.record(subject)?.ok_or_else(|| Error::input(format!("{subject} has no triage record")))?;
    let (summary, links, transitions) = summary(store, &rec, now)?;
    Ok(RecordView { age: (now - rec.since).max(0), record: rec, links, transitions, summary })
}

/// One record with its links and timeline (`None` when the subject has none).
pub fn record(store: &Store, subject: &str) -> Result<Option<RecordView>> {
    match store.record(subject)? {
        Some(_) => Ok(Some(view(store, subject, crate::clock::now())?)),
        None => Ok(None),
    }
}

/// What [`list`] is asked.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// Only records in this state (`new`, `triaged`, `fix-merged`, `fix-confirmed`,
    /// `failed-after-fix`).
    pub state: Option<String>,
    /// Only records in their state for at least this long (seconds).
    pub min_age: Option<i64>,
    /// Only open records (not *fix confirmed*).
    pub open_only: bool,
}

/// The records, loudest state first (failed after fix, fix merged, new, triaged, fix
/// confirmed), then longest in their state, then by subject.
pub fn list(store: &Store, opts: &ListOptions) -> Result<Vec<RecordView>> {
    if let Some(s) = &opts.state {
        if State::parse(s).is_none() {
            return Err(Error::input(format!(
                "--state {s:?}: expected one of {}",
                citriage_store::RECORD_STATES.join(", ")
            )));
        }
    }
    let now = crate::clock::now();
    let mut out = Vec::new();
    for r in store.records(opts.state.as_deref())? {
        let state = state_of(&r.state)?;
        if (opts.open_only && !state.is_open()) || opts.min_age.is_some_and(|a| now - r.since < a) {
            continue;
        }
        out.push(view(store, &r.subject, now)?);
    }
    let rank = |s: State| State::LOUDEST_FIRST.iter().position(|x| *x == s).unwrap_or(usize::MAX);
    out.sort_by(|a, b| {
        (rank(a.summary.state), a.record.since, &a.record.subject).cmp(&(
            rank(b.summary.state),
            b.record.since,
            &b.record.subject,
        ))
    });
    Ok(out)
}

/// The records' digest for a report dated `day` (as of its last second), with the
/// report before dated `prior` (`None` when the store has no record).
pub fn report_digest(
    store: &Store,
    prior: Option<citriage_model::Day>,
    day: citriage_model::Day,
) -> Result<Option<Digest>> {
    let records = store.records(None)?;
    if records.is_empty() {
        return Ok(None);
    }
    let as_of = (day.0 + 1) * DAY - 1;
    let mut summaries = Vec::with_capacity(records.len());
    for r in &records {
        summaries.push(summary(store, r, as_of)?.0);
    }
    Ok(Some(digest(&summaries, prior.map(|p| (p.0 + 1) * DAY - 1), as_of)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_branch_comes_from_the_started_repos() {
        assert_eq!(branch_of(Some(r#"{"k8s.io/kubernetes": "release-1.35:abc"}"#)).as_deref(), Some("release-1.35"));
        assert_eq!(branch_of(Some(r#"{"kubernetes/kubernetes": "master:1a2b,123:ffff"}"#)).as_deref(), Some("master"));
        assert_eq!(branch_of(Some(r#"{"a/b": "x", "c/d": "y"}"#)), None, "two repos, none the main one");
        assert_eq!(branch_of(Some("not json")), None);
        assert_eq!(branch_of(None), None);
    }
}
