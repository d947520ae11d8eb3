//! Pull-request and issue states through the GitHub client over the store's cache: the
//! runbook's Phase 5 sweep (`gh sweep`, answers recorded in the evidence ledger) and
//! the states the MCP server's `pr_state` tool answers with.

use crate::error::{Error, Result};
use crate::github::{client, client_bounded, ref_context};
use crate::progress::Progress;
use citriage_github::{extract_refs, render_ambiguous, sweep_with_evidence, unique_refs, IssueRef, Mark, RefState};
use citriage_github::{SweepOptions, SweepRow};
use citriage_model::Evidence;
use citriage_sources::http::{Wait, WaitKind};
use citriage_store::Store;
use serde::Serialize;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

/// What `gh sweep` is asked.
#[derive(Debug, Clone)]
pub struct SweepRequest {
    /// `owner/repo#N`, GitHub PR/issue URLs, or `#N` with `repo`.
    pub refs: Vec<String>,
    /// A Markdown report whose every ref is checked too.
    pub report: Option<PathBuf>,
    /// The repository of bare `#N` refs.
    pub repo: Option<String>,
    /// Answer only from the store's cache.
    pub offline: bool,
    pub api: String,
    /// Walk issue timelines for fix PRs.
    pub walk_timelines: bool,
    /// A bound on the whole sweep's waiting, in seconds (default: the client's own).
    pub timeout: Option<u64>,
}

impl Default for SweepRequest {
    fn default() -> Self {
        SweepRequest {
            refs: Vec::new(),
            report: None,
            repo: None,
            offline: false,
            api: citriage_github::DEFAULT_API_BASE.to_string(),
            walk_timelines: true,
            timeout: None,
        }
    }
}

/// A sweep's answer.
pub struct Swept {
    pub rows: Vec<SweepRow>,
    /// The instant the answers' ages are counted to.
    pub now: i64,
    /// The refs of the report that were not checked (ambiguous), as Markdown; empty when none.
    pub ambiguous: String,
}

impl Swept {
    /// The sweep failed when every lookup did.
    pub fn outcome(&self) -> Result<()> {
        if !self.rows.is_empty() && self.rows.iter().all(|r| matches!(r.mark, Mark::NotChecked)) {
            return Err(Error::failed(format!(
                "every lookup failed ({} ref(s) not checked): see the table for why",
                self.rows.len()
            )));
        }
        Ok(())
    }
}

/// `gh sweep`: each distinct reference asked once; what was read goes into the evidence
/// ledger. GitHub may ask to wait (`Retry-After`, a rate limit's reset): `on_wait` gets
/// a line saying so before each wait.
pub fn sweep(
    store: Store,
    req: &SweepRequest,
    progress: &dyn Progress,
    on_wait: impl Fn(&str) + 'static,
) -> Result<Swept> {
    let store = Rc::new(store);
    let refctx = ref_context(req.repo.as_deref())?;
    let mut wanted: Vec<IssueRef> = Vec::new();
    for r in &req.refs {
        let parsed = IssueRef::parse(r).or_else(|| {
            r.strip_prefix('#')
                .and_then(|n| n.parse::<u64>().ok())
                .and_then(|n| refctx.default_repo.clone().map(|repo| IssueRef::new(repo, n)))
        });
        wanted.push(parsed.ok_or_else(|| {
            Error::input(format!("{r:?}: expected owner/repo#N, a GitHub PR/issue URL, or #N with --repo"))
        })?);
    }
    let mut ambiguous = String::new();
    if let Some(path) = &req.report {
        let text = crate::files::read_input(path)?;
        let found = extract_refs(&text, &refctx);
        wanted.extend(unique_refs(&found));
        ambiguous = render_ambiguous(&found);
    }
    if wanted.is_empty() {
        return Err(Error::input("no refs to check: give refs or --report FILE"));
    }
    let c = match req.timeout {
        Some(t) => client_bounded(store.clone(), &req.api, req.offline, Duration::from_secs(t.max(1))),
        None => client(store.clone(), &req.api, req.offline),
    };
    progress.doing(&format!("looking up {} ref(s) on GitHub", wanted.len()));
    let c = c.with_wait_notice(move |w| on_wait(&wait_line(w)));
    let (rows, items) = sweep_with_evidence(&c, &wanted, SweepOptions { walk_timelines: req.walk_timelines });
    let now = c.now();
    drop(c);
    if let Ok(mut st) = Rc::try_unwrap(store) {
        st.record_evidence(&items, &crate::clock::now_rfc3339())?;
    }
    Ok(Swept { rows, now, ambiguous })
}

/// The line before a wait: what is waited for, how long and the URL (without its
/// query; the token is a header and never shown).
fn wait_line(w: &Wait) -> String {
    let why = match w.kind {
        WaitKind::RetryAfter => "GitHub's Retry-After",
        WaitKind::RateLimitReset => "GitHub's rate limit to reset",
        WaitKind::Backoff => "a backoff before retrying",
    };
    let status = w.status.map(|s| format!(" (HTTP {s})")).unwrap_or_default();
    format!("waiting {} s for {why}{status}: {}", w.duration.as_secs_f64().ceil() as u64, w.url)
}

/// A reference as `org/repo#n` or a GitHub pull-request or issue URL.
pub fn parse_ref(s: &str) -> Option<IssueRef> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix("https://github.com/") {
        let p: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        if p.len() >= 4 && (p[2] == "pull" || p[2] == "issues") {
            return IssueRef::parse(&format!("{}/{}#{}", p[0], p[1], p[3]));
        }
        return None;
    }
    IssueRef::parse(s)
}

/// One reference's state as the store's cache (or GitHub) answers it.
#[derive(Debug, Clone, Serialize)]
pub struct PrState {
    #[serde(rename = "ref")]
    pub reference: String,
    pub url: String,
    /// `pull request`, `issue`, `not found` or `unknown`.
    pub kind: &'static str,
    pub title: String,
    pub state: String,
    pub why_unknown: Option<String>,
    /// When and how the answer was read, with its age.
    pub read: Option<String>,
    /// The evidence id of the answer, when there is one.
    pub evidence: Vec<String>,
}

/// The states of pull requests and issues (`org/repo#n` or their URLs) through the
/// store's cache, or GitHub when `online` (answers then cached in the store); with the
/// evidence each answer rests on. What `gh sweep --offline` reads.
pub fn pr_states(store: Store, refs: &[String], api: &str, online: bool) -> Result<(Vec<PrState>, Vec<Evidence>)> {
    let gh = client(Rc::new(store), api, !online);
    let mut rows = Vec::new();
    let mut evidence = Vec::new();
    for r in refs {
        let Some(ir) = parse_ref(r) else {
            return Err(Error::input(format!("{r:?} is not org/repo#N or a GitHub pull-request or issue URL")));
        };
        let state = gh.lookup(&ir);
        let ev = state.evidence();
        let (kind, title) = match &state {
            RefState::Pr(p) => ("pull request", p.title.clone()),
            RefState::Issue(i) => ("issue", i.title.clone()),
            RefState::NotFound { .. } => ("not found", String::new()),
            RefState::Unknown { .. } => ("unknown", String::new()),
        };
        rows.push(PrState {
            reference: format!("{}/{}#{}", ir.repo.owner, ir.repo.name, ir.number),
            url: ir.html_url(),
            kind,
            title,
            state: state.state_text(),
            why_unknown: state.unknown_reason().map(str::to_string),
            read: state.read().map(|r| r.describe(gh.now())),
            evidence: ev.as_ref().map(|e| vec![e.id.clone()]).unwrap_or_default(),
        });
        evidence.extend(ev);
    }
    Ok((rows, evidence))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_read_as_names_or_urls() {
        let r = parse_ref("https://github.com/kubernetes/kubernetes/pull/123/files").unwrap();
        assert_eq!((r.repo.owner.as_str(), r.repo.name.as_str(), r.number), ("kubernetes", "kubernetes", 123));
        assert_eq!(parse_ref(" openshift/origin#7 ").unwrap().number, 7);
        assert!(parse_ref("https://github.com/kubernetes/kubernetes").is_none());
        assert!(parse_ref("not a ref").is_none());
    }

    #[test]
    fn states_from_an_empty_cache_are_unknown_offline_and_bad_refs_are_bad_input() {
        let store = Store::open_in_memory().unwrap();
        let (rows, ev) = pr_states(store, &["a/b#1".to_string()], "https://api.github.invalid", false).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].reference.as_str(), rows[0].kind), ("a/b#1", "unknown"));
        assert!(rows[0].why_unknown.is_some() && ev.is_empty(), "{rows:?}");
        let store = Store::open_in_memory().unwrap();
        let e = pr_states(store, &["nope".to_string()], "https://api.github.invalid", false).unwrap_err();
        assert!(e.is_bad_input(), "{e}");
    }
}
