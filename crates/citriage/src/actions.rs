//! Action drafts for `act` and the MCP server: writing them as files (Markdown and
//! JSON, and a bisect's tracking file), finding a pull request's merge commit in a
//! checkout, the revert pre-check in a scratch worktree of that checkout, and sending
//! a draft's requests through the GitHub API after printing exactly what will be sent.

use crate::context::Failure;
use citriage_actions::{ConflictCheck, Draft, PlannedRequest, Sent};
use citriage_git::{Git, GitError};
use citriage_github::{ClientConfig, GithubClient, NoCache, Token};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The checkout at `dir` as a git repository: a missing git program is a failure,
/// a folder that is not a repository bad input.
fn open_checkout(dir: &Path) -> Result<Git, Failure> {
    Git::open(dir).map_err(|e| match e {
        GitError::Missing { .. } => Failure::other(e.to_string()),
        e => Failure::input(e.to_string()),
    })
}

/// The merge commit of pull request `number` in a checkout's history: GitHub's
/// `Merge pull request #N from …` merge, else a squashed commit whose subject ends in
/// `(#N)`. `None` when neither is there.
pub fn merge_sha_in_checkout(checkout: &Path, number: u64) -> Result<Option<String>, Failure> {
    let git = open_checkout(checkout)?;
    let found = git.find_pr_commit("HEAD", number).map_err(|e| Failure::input(e.to_string()))?;
    Ok(found.map(|c| c.sha))
}

/// The branch a checkout is on (`None` when detached or not a repository).
pub fn checkout_branch(checkout: &Path) -> Option<String> {
    Git::open(checkout).ok()?.current_branch().ok().flatten()
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

/// Writes each draft as `<name>.md` and `<name>.json` into `out` (created when
/// missing); returns the paths written.
pub fn write_drafts(out: &Path, drafts: &[Draft]) -> Result<Vec<PathBuf>, Failure> {
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::other(format!("{}: cannot create the output folder: {e}", out.display())))?;
    let mut written = Vec::new();
    for d in drafts {
        for (ext, body) in [("md", d.markdown()), ("json", d.json())] {
            written.push(write_file(out, &format!("{}.{ext}", d.name), &body)?);
        }
    }
    Ok(written)
}

/// Writes one file in `out` through a temporary name, so a crash never leaves half a file.
pub fn write_file(out: &Path, name: &str, body: &str) -> Result<PathBuf, Failure> {
    let p = out.join(name);
    let tmp = out.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, body).map_err(|e| Failure::other(format!("{}: cannot write: {e}", tmp.display())))?;
    std::fs::rename(&tmp, &p).map_err(|e| Failure::other(format!("{}: cannot write: {e}", p.display())))?;
    Ok(p)
}

/// The token `--apply` sends with: `GITHUB_TOKEN`, else `GH_TOKEN`, read as every
/// GitHub client of the CLI reads it.
pub fn token_from_env() -> Option<Token> {
    Token::from_env(crate::github::TOKEN_VARS)
}

/// Sends a draft's requests through the GitHub API at `api`: first prints every
/// request exactly as it will be sent (placeholders say which earlier answer fills
/// them), then sends them in order, printing each one with its placeholders filled.
/// Nothing is sent without a token or when the draft cannot be applied.
pub fn apply(draft: &Draft, api: &str, out: &mut dyn Write) -> Result<Vec<Sent>, Failure> {
    if let Some(why) = &draft.apply_blocked {
        return Err(Failure::input(format!("{}: not applied: {why}", draft.name)));
    }
    if let Some(c) = &draft.conflict_check {
        if !c.clean && c.error.is_none() {
            return Err(Failure::other(format!(
                "{}: not applied: the revert conflicts in {} (pre-check in {})",
                draft.name,
                c.conflicts.join(", "),
                c.checkout
            )));
        }
    }
    if draft.requests.is_empty() {
        return Err(Failure::input(format!("{}: nothing to send", draft.name)));
    }
    let Some(token) = token_from_env() else {
        return Err(Failure::input(format!(
            "{}: --apply needs a GitHub token in GITHUB_TOKEN (or GH_TOKEN); nothing was sent",
            draft.name
        )));
    };
    let api = api.trim_end_matches('/');
    let _ = writeln!(out, "{}: sending {} request(s) to {api}:", draft.name, draft.requests.len());
    let _ = write!(out, "{}", citriage_actions::request::describe(&draft.requests, api));
    let client = GithubClient::new(
        ClientConfig { api_base: api.to_string(), token: Some(token), ..ClientConfig::default() },
        Box::new(NoCache),
    );
    let mut step = 0;
    let total = draft.requests.len();
    let result = citriage_actions::apply(&draft.requests, &mut |m, p, b| {
        step += 1;
        let _ = writeln!(out, "sending {step}/{total}: {m} {api}{p}");
        if let Some(b) = b {
            let template = draft.requests.get(step - 1).and_then(|r: &PlannedRequest| r.body.as_ref());
            if template != Some(b) {
                let _ = writeln!(out, "  with the placeholders filled: {b}");
            }
        }
        client.send_json(m, p, b).map_err(|e| e.to_string())
    });
    match result {
        Ok(sent) => {
            let _ = writeln!(out, "{}: {} request(s) sent", draft.name, sent.len());
            Ok(sent)
        }
        Err((sent, e)) => {
            Err(Failure::other(format!("{}: stopped after {} of {total} request(s): {e}", draft.name, sent.len())))
        }
    }
}
