//! Action drafts (`act`, the MCP server's `apply_action`): a revert, bisect
//! experiments or a bug drafted from a payload analysis (read from a file or the
//! store) with a suspect's merge commit found in a checkout and the revert tried in a
//! scratch worktree of it; the drafts written as files (Markdown and JSON, and a
//! bisect's tracking file) with their evidence recorded in the ledger; and a draft's
//! requests sent through the GitHub API after saying exactly what will be sent.

use crate::error::{Error, Result};
use crate::files;
use citriage_actions::payload::{Bisect, Opened, PayloadOptions};
use citriage_actions::{ConflictCheck, Draft, PlannedRequest, Refusal, Sent};
use citriage_git::{Git, GitError};
use citriage_github::{ClientConfig, GithubClient, NoCache, Token};
use citriage_payload::PayloadAnalysis;
use citriage_store::Store;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The checkout at `dir` as a git repository: a missing git program is a failure,
/// a folder that is not a repository bad input.
fn open_checkout(dir: &Path) -> Result<Git> {
    Git::open(dir).map_err(|e| match e {
        GitError::Missing { .. } => Error::failed(e.to_string()),
        e => Error::input(e.to_string()),
    })
}

/// The merge commit of pull request `number` in a checkout's history: GitHub's
/// `Merge pull request #N from …` merge, else a squashed commit whose subject ends in
/// `(#N)`. `None` when neither is there.
pub fn merge_sha_in_checkout(checkout: &Path, number: u64) -> Result<Option<String>> {
    let git = open_checkout(checkout)?;
    let found = git.find_pr_commit("HEAD", number).map_err(|e| Error::input(e.to_string()))?;
    Ok(found.map(|c| c.sha))
}

/// Tries `git revert [-m1] --no-commit SHA` on the checkout's HEAD in a scratch
/// worktree (the checkout itself is left as it was) and reports the conflicting paths.
pub fn precheck(checkout: &Path, sha: &str) -> ConflictCheck {
    let mut c = ConflictCheck {
        checkout: checkout.display().to_string(),
        base: String::new(),
        merge_sha: sha.to_string(),
        clean: false,
        conflicts: Vec::new(),
        error: None,
    };
    if !sha.chars().all(|ch| ch.is_ascii_hexdigit()) || sha.len() < 7 {
        c.error = Some(format!("{sha:?} is not a commit id"));
        return c;
    }
    match Git::open(checkout).and_then(|g| g.revert_check(sha)) {
        Ok(r) => {
            c.base = r.base;
            c.clean = r.clean;
            c.conflicts = r.conflicts;
            c.error = r.refused;
        }
        Err(e) => c.error = Some(e.to_string()),
    }
    c
}

/// The branch a checkout is on (`None` when detached or not a repository).
fn current_branch(dir: &Path) -> Option<String> {
    Git::open(dir).ok()?.current_branch().ok().flatten()
}

/// A payload analysis read from a file (`citriage payload --format json`, or the
/// `payload-analysis-<tag>.json` it writes), which must be of payload `tag`.
pub fn analysis_file(path: &Path, tag: &str) -> Result<PayloadAnalysis> {
    let text = files::read_input(path)?;
    let a: PayloadAnalysis = serde_json::from_str(&text)
        .map_err(|e| Error::input(format!("{}: not a payload analysis: {e}", path.display())))?;
    if a.payload.tag != tag {
        return Err(Error::input(format!("{}: analyses payload {}, not {tag}", path.display(), a.payload.tag)));
    }
    Ok(a)
}

/// What is known of a suspect PR beyond the analysis: where its repository is checked
/// out, its merge commit, the ticket a revert names.
#[derive(Debug, Clone, Default)]
pub struct PrFacts {
    /// A local checkout of the suspect's repository: the merge commit is looked up
    /// there and the revert tried in a scratch worktree.
    pub checkout: Option<PathBuf>,
    /// The suspect PR's merge commit (default: found in the checkout).
    pub merge_sha: Option<String>,
    /// The ticket the revert's title names (default NO-JIRA).
    pub jira: Option<String>,
}

/// The draft options of a suspect (`who`) from what is known of its PR: the merge
/// commit given or found in the checkout, and the branch the checkout is on.
pub fn suspect_options(a: &PayloadAnalysis, who: &str, pr: &PrFacts) -> Result<PayloadOptions> {
    let mut o = PayloadOptions { jira: pr.jira.clone(), merge_sha: pr.merge_sha.clone(), ..PayloadOptions::default() };
    if let Some(sha) = &o.merge_sha {
        if sha.len() < 7 || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(Error::input(format!("--merge-sha {sha:?}: not a commit id")));
        }
    }
    if let Some(dir) = &pr.checkout {
        let number =
            citriage_actions::payload::candidate_id(a, who).and_then(|id| a.candidate(&id)).and_then(|c| c.number);
        if o.merge_sha.is_none() {
            if let Some(n) = number {
                o.merge_sha = merge_sha_in_checkout(dir, n)?;
            }
        }
        o.base_branch = current_branch(dir);
    }
    Ok(o)
}

/// The revert of a commit a failure pattern's suspects rank (`act revert-commit`),
/// found by its id or a prefix of it: drafted only for a *likely introducing change*
/// alone at its rank, on a pattern neither flaky before its onset nor infrastructure.
pub fn revert_commit(s: &crate::suspects::Suspects, sha: &str) -> Result<std::result::Result<Draft, Refusal>> {
    use citriage_actions::commit::{revert_commit, CommitFacts};
    let found = s.windows.iter().find_map(|w| {
        let c = w.commits.as_ref()?.iter().find(|c| !sha.is_empty() && c.sha.starts_with(sha))?;
        Some((w, c))
    });
    let Some((w, c)) = found else {
        return Ok(Err(Refusal::Unknown {
            what: format!("commit {sha} in the windows of {}", s.target),
            known: s.top().iter().take(10).map(|c| c.sha[..c.sha.len().min(12)].to_string()).collect(),
        }));
    };
    let facts = CommitFacts {
        target: s.target.clone(),
        repo: w.window.repo.clone(),
        sha: c.sha.clone(),
        subject: c.subject.clone(),
        pr: c.pr,
        band: c.band.as_str().to_string(),
        score: c.score,
        rank: c.rank,
        tied: c.tied,
        flaky_before: s.flaky_before,
        signatures: s.signatures.clone(),
        links: c.links.iter().filter(|l| l.specific).map(|l| l.evidence.clone()).collect(),
        windows: s
            .jobs
            .iter()
            .map(|j| {
                format!(
                    "{}: last pass {}, first failure {}",
                    j.job,
                    j.last_pass.as_ref().map_or("none stored", |p| p.build_id.as_str()),
                    j.first_fail.build_id
                )
            })
            .collect(),
    };
    Ok(revert_commit(&facts))
}

/// Tries a draft's revert in the checkout, when there is one and a merge commit.
fn with_precheck(mut d: Draft, pr: &PrFacts) -> Draft {
    if let (Some(dir), Some(sha)) = (&pr.checkout, d.merge_sha.clone()) {
        d.conflict_check = Some(precheck(dir, &sha));
    }
    d
}

/// The revert of a suspect at the revert band, pre-checked in the checkout; or why not.
pub fn revert(a: &PayloadAnalysis, suspect: &str, pr: &PrFacts) -> Result<Result<Draft, Refusal>> {
    let opts = suspect_options(a, suspect, pr)?;
    Ok(citriage_actions::payload::revert(a, suspect, &opts).map(|d| with_precheck(d, pr)))
}

/// Bisect experiments for the suspects in the bisect band (or one of them), each
/// revert pre-checked in the checkout; or why not. At most `max` tried at once.
pub fn bisect(a: &PayloadAnalysis, suspect: Option<&str>, max: usize, pr: &PrFacts) -> Result<Result<Bisect, Refusal>> {
    let opts = match suspect {
        Some(w) => suspect_options(a, w, pr)?,
        None => {
            if pr.checkout.is_some() || pr.merge_sha.is_some() {
                return Err(Error::input("--checkout and --merge-sha need --suspect (one repository, one PR)"));
            }
            PayloadOptions { jira: pr.jira.clone(), ..PayloadOptions::default() }
        }
    };
    let opts = PayloadOptions { max_experiments: Some(max.max(1)), ..opts };
    Ok(citriage_actions::payload::bisect(a, suspect, &opts).map(|mut plan| {
        plan.drafts = std::mem::take(&mut plan.drafts).into_iter().map(|d| with_precheck(d, pr)).collect();
        plan
    }))
}

/// A repository named as `OWNER/NAME` (`what` is the option that named it).
pub fn check_repo(r: &str, what: &str) -> Result<()> {
    let parts: Vec<&str> = r.split('/').collect();
    let ok = parts.len() == 2
        && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)));
    if ok {
        Ok(())
    } else {
        Err(Error::input(format!("{what} {r:?}: expected OWNER/NAME")))
    }
}

/// Records the drafts' evidence in the ledger and writes each draft as `<name>.md` and
/// `<name>.json` into `out` (created when missing), then the `extra` files (name,
/// body); returns the paths written.
pub fn record_and_write(
    store: &mut Store,
    drafts: &[Draft],
    out: &Path,
    extra: Vec<(String, String)>,
) -> Result<Vec<PathBuf>> {
    let evidence: Vec<citriage_model::Evidence> = drafts.iter().flat_map(|d| d.evidence()).collect();
    store.record_evidence(&evidence, &crate::clock::now_rfc3339())?;
    files::create_folder(out)?;
    let mut written = Vec::new();
    for d in drafts {
        for (ext, body) in [("md", d.markdown()), ("json", d.json())] {
            written.push(files::write_whole(out, &format!("{}.{ext}", d.name), body.as_bytes())?);
        }
    }
    for (name, body) in extra {
        written.push(files::write_whole(out, &name, body.as_bytes())?);
    }
    Ok(written)
}

/// The token `--apply` sends with: `GITHUB_TOKEN`, else `GH_TOKEN`, read as every
/// GitHub client reads it.
pub fn token_from_env() -> Option<Token> {
    Token::from_env(crate::github::TOKEN_VARS)
}

/// Sends a draft's requests through the GitHub API at `api`: first writes to `log`
/// every request exactly as it will be sent (placeholders say which earlier answer fills
/// them), then sends them in order, writing each one with its placeholders filled.
/// Nothing is sent without a token or when the draft cannot be applied.
pub fn apply(draft: &Draft, api: &str, log: &mut dyn Write) -> Result<Vec<Sent>> {
    if let Some(why) = &draft.apply_blocked {
        return Err(Error::input(format!("{}: not applied: {why}", draft.name)));
    }
    if let Some(c) = &draft.conflict_check {
        if !c.clean && c.error.is_none() {
            return Err(Error::failed(format!(
                "{}: not applied: the revert conflicts in {} (pre-check in {})",
                draft.name,
                c.conflicts.join(", "),
                c.checkout
            )));
        }
    }
    if draft.requests.is_empty() {
        return Err(Error::input(format!("{}: nothing to send", draft.name)));
    }
    let Some(token) = token_from_env() else {
        return Err(Error::input(format!(
            "{}: --apply needs a GitHub token in GITHUB_TOKEN (or GH_TOKEN); nothing was sent",
            draft.name
        )));
    };
    let api = api.trim_end_matches('/');
    let _ = writeln!(log, "{}: sending {} request(s) to {api}:", draft.name, draft.requests.len());
    let _ = write!(log, "{}", citriage_actions::request::describe(&draft.requests, api));
    let client = GithubClient::new(
        ClientConfig { api_base: api.to_string(), token: Some(token), ..ClientConfig::default() },
        Box::new(NoCache),
    );
    let mut step = 0;
    let total = draft.requests.len();
    let result = citriage_actions::apply(&draft.requests, &mut |m, p, b| {
        step += 1;
        let _ = writeln!(log, "sending {step}/{total}: {m} {api}{p}");
        if let Some(b) = b {
            let template = draft.requests.get(step - 1).and_then(|r: &PlannedRequest| r.body.as_ref());
            if template != Some(b) {
                let _ = writeln!(log, "  with the placeholders filled: {b}");
            }
        }
        client.send_json(m, p, b).map_err(|e| e.to_string())
    });
    match result {
        Ok(sent) => {
            let _ = writeln!(log, "{}: {} request(s) sent", draft.name, sent.len());
            Ok(sent)
        }
        Err((sent, e)) => {
            Err(Error::failed(format!("{}: stopped after {} of {total} request(s): {e}", draft.name, sent.len())))
        }
    }
}

/// Sends every draft's requests in order ([`apply`]); returns what each sent, by name.
pub fn apply_all(drafts: &[Draft], api: &str, log: &mut dyn Write) -> Result<Vec<(String, Vec<Sent>)>> {
    let mut done = Vec::new();
    for d in drafts {
        done.push((d.name.clone(), apply(d, api, log)?));
    }
    Ok(done)
}

/// The revert PRs GitHub opened for applied bisect drafts, by draft name (from the
/// answers to the GraphQL requests).
pub fn opened(done: &[(String, Vec<Sent>)]) -> BTreeMap<String, Opened> {
    let mut open = BTreeMap::new();
    for (name, sent) in done {
        let pr = sent.iter().find(|s| s.path == "/graphql").and_then(|s| {
            let pr = s.answer.pointer("/data/revertPullRequest/revertPullRequest")?;
            Some(Opened { url: pr["url"].as_str()?.to_string(), number: pr["number"].as_u64()? })
        });
        if let Some(o) = pr {
            open.insert(name.clone(), o);
        }
    }
    open
}
