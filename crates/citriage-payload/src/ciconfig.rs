//! CI-configuration changes: commits to an `openshift/release`-like repository
//! (step registry, ci-operator configs) that never appear in a payload changelog
//! but break payload jobs. Parsed here from a recorded list (JSON) or from the
//! output of `git log -p`; reading them (files, the git checkout) is the
//! source's ([`crate::source::ci_config`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::PayloadError;
use citriage_model::time::{self, Epoch};
use citriage_suspects::diff::{self, ParsedDiff};

/// One CI-configuration change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CiConfigChange {
    /// Commit SHA (or another stable id).
    pub id: String,
    /// First line of the commit message (or the PR title).
    pub title: String,
    /// RFC 3339 commit (merge) time.
    pub date: String,
    /// The PR URL when known, else the commit URL.
    pub url: Option<String>,
    /// PR number when known.
    pub pr_number: Option<u64>,
    /// `org/repo` of the configuration repository.
    pub repo: String,
    /// The change.
    pub diff: ParsedDiff,
}

impl CiConfigChange {
    /// The commit time.
    pub fn epoch(&self) -> Option<Epoch> {
        time::parse_rfc3339(&self.date)
    }
}

fn s(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str().map(str::to_string)
}

/// Resolves the `diff` file path of a recorded entry to the diff text (the
/// reading side is the caller's: see [`crate::source`]).
pub type DiffResolver<'a> = &'a dyn Fn(&str) -> Result<String, PayloadError>;

/// Parses a recorded list. Accepted per entry: `{sha|id|pr, date|merged_at,
/// message|title, url|html_url, pr_url?, pr_number?, repo?, files: [{filename,
/// patch}] | [path...], diff}` or GitHub's commit shape (`commit.message`,
/// `commit.committer.date`). `diff` is the unified diff text, or the path of a
/// `.diff` file, which `resolve` reads (`None`: a path is an error).
pub fn parse_recorded(
    bytes: &[u8],
    origin: &str,
    resolve: Option<DiffResolver>,
) -> Result<Vec<CiConfigChange>, PayloadError> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| PayloadError::invalid(origin, format!("malformed JSON: {e}")))?;
    let entries = match &v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o.get("changes").and_then(|c| c.as_array()).cloned().unwrap_or_default(),
        _ => return Err(PayloadError::invalid(origin, "expected an array of changes")),
    };
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        out.push(parse_entry(entry, i, origin, resolve)?);
    }
    out.sort_by(|a, b| (a.epoch(), &a.id).cmp(&(b.epoch(), &b.id)));
    Ok(out)
}

/// One entry of a recorded list.
fn parse_entry(
    entry: &Value,
    index: usize,
    origin: &str,
    resolve: Option<DiffResolver>,
) -> Result<CiConfigChange, PayloadError> {
    let pr_field = entry.get("pr").and_then(|n| n.as_u64());
    let id = s(entry, &["sha"])
        .or_else(|| s(entry, &["id"]))
        .or_else(|| pr_field.map(|n| format!("pr-{n}")))
        .ok_or_else(|| PayloadError::invalid(origin, format!("[{index}]: missing sha (or pr)")))?;
    let date = s(entry, &["date"])
        .or_else(|| s(entry, &["commit", "committer", "date"]))
        .or_else(|| s(entry, &["merged_at"]))
        .or_else(|| s(entry, &["merged"]))
        .ok_or_else(|| PayloadError::invalid(origin, format!("[{index}]: missing date")))?;
    if time::parse_rfc3339(&date).is_none() {
        return Err(PayloadError::invalid(origin, format!("[{index}]: date {date:?} is not an RFC 3339 time")));
    }
    let message = s(entry, &["title"])
        .or_else(|| s(entry, &["message"]))
        .or_else(|| s(entry, &["commit", "message"]))
        .unwrap_or_default();
    let title = message.lines().next().unwrap_or("").to_string();
    let pr_url = s(entry, &["pr_url"]);
    let pr_number = entry.get("pr_number").and_then(|n| n.as_u64()).or(pr_field).or_else(|| squash_pr_number(&title));
    let repo = s(entry, &["repo"]).unwrap_or_else(|| "openshift/release".to_string());
    let url = pr_url
        .or_else(|| pr_number.map(|n| format!("https://github.com/{repo}/pull/{n}")))
        .or_else(|| s(entry, &["url"]).filter(|u| u.contains("github.com")))
        .or_else(|| s(entry, &["html_url"]));
    let mut files = Vec::new();
    if let Some(listed) = entry.get("files").and_then(|f| f.as_array()) {
        for f in listed {
            if f.is_string() {
                continue; // A bare path list; the diff comes from `diff`.
            }
            let name = s(f, &["filename"]).unwrap_or_default();
            let patch = s(f, &["patch"]).unwrap_or_default();
            files.extend(diff::parse_patch(&name, &patch).files);
        }
    }
    if let Some(d) = s(entry, &["diff"]) {
        let text = if !d.contains('\n') && d.ends_with(".diff") {
            let Some(resolve) = resolve else {
                return Err(PayloadError::invalid(
                    origin,
                    format!("[{index}]: diff {d:?} is a path but no base directory is known"),
                ));
            };
            if d.split('/').any(|c| c == ".." || c.is_empty()) || d.starts_with('/') || d.contains('\\') {
                return Err(PayloadError::invalid(origin, format!("[{index}]: diff path {d:?} leaves the directory")));
            }
            resolve(&d)?
        } else {
            d
        };
        files.extend(diff::parse_unified(&text).files);
    }
    Ok(CiConfigChange { id, title, date, url, pr_number, repo, diff: ParsedDiff { files } })
}

/// The PR number of a squash-merge subject ending in `(#12345)`.
fn squash_pr_number(title: &str) -> Option<u64> {
    let t = title.trim_end();
    let open = t.rfind("(#")?;
    t[open + 2..].trim_end_matches(')').parse().ok()
}

/// The changes of commits read from a checkout (`git log -p`, through `citriage-git`),
/// oldest first; `repo` names the repository in URLs (`openshift/release`).
pub fn from_commits(commits: &[citriage_git::Commit], repo: &str) -> Vec<CiConfigChange> {
    let mut changes: Vec<CiConfigChange> =
        commits.iter().map(|c| change(&c.sha, time::rfc3339(c.commit_time), &c.subject, &c.patch, repo)).collect();
    changes.sort_by(|a, b| (a.epoch(), &a.id).cmp(&(b.epoch(), &b.id)));
    changes
}

/// One change: its PR number read from a squash subject's `(#N)`.
fn change(sha: &str, date: String, title: &str, patch: &str, repo: &str) -> CiConfigChange {
    let pr_number = squash_pr_number(title);
    CiConfigChange {
        url: Some(match pr_number {
            Some(n) => format!("https://github.com/{repo}/pull/{n}"),
            None => format!("https://github.com/{repo}/commit/{sha}"),
        }),
        id: sha.to_string(),
        title: title.to_string(),
        date,
        pr_number,
        repo: repo.to_string(),
        diff: diff::parse_unified(patch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_list() {
        let j = br#"[{"sha":"abc","date":"2026-03-03T10:00:00Z","message":"Switch installer flag (#777)\n\nbody","files":[{"filename":"ci-operator/step-registry/ipi/install/ipi-install-commands.sh","patch":"@@ -1 +1 @@\n-openshift-install --old\n+openshift-install --log-level-v2=debug"}]}]"#;
        let c = parse_recorded(j, "ci.json", None).unwrap();
        assert_eq!(c[0].pr_number, Some(777));
        assert_eq!(c[0].url.as_deref(), Some("https://github.com/openshift/release/pull/777"));
        assert_eq!(c[0].diff.files[0].added[0].1, "openshift-install --log-level-v2=debug");
        assert!(parse_recorded(br#"[{"sha":"x","date":"soon"}]"#, "ci.json", None)
            .unwrap_err()
            .to_string()
            .contains("ci.json"));
    }
}
