//! CI-configuration changes: commits to an `openshift/release`-like repository
//! (step registry, ci-operator configs) that never appear in a payload changelog
//! but break payload jobs. Read from a recorded list (JSON) or from a local git
//! checkout (`git log -p` over a path, bounded by dates).

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diff::{self, ParsedDiff};
use crate::error::PayloadError;
use citriage_model::time::{self, Epoch};

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

/// Parses a recorded list. Accepted per entry: `{sha|id|pr, date|merged_at,
/// message|title, url|html_url, pr_url?, pr_number?, repo?, files: [{filename,
/// patch}] | [path...], diff}` or GitHub's commit shape (`commit.message`,
/// `commit.committer.date`). `diff` is the unified diff text, or the path of a
/// `.diff` file relative to `base`.
pub fn parse_recorded(bytes: &[u8], origin: &str) -> Result<Vec<CiConfigChange>, PayloadError> {
    parse_recorded_in(bytes, origin, None)
}

/// [`parse_recorded`], resolving `diff` file paths under `base`.
pub fn parse_recorded_in(bytes: &[u8], origin: &str, base: Option<&Path>) -> Result<Vec<CiConfigChange>, PayloadError> {
    let bases: Vec<&Path> = base.into_iter().collect();
    parse_recorded_under(bytes, origin, &bases)
}

/// Reads a recorded list from a file given on its own (`payload --ci-config FILE`):
/// its `diff` file paths are resolved beside the file, else in the nearest folder
/// above it that holds them (a recorded world keeps `openshift/ci-config-changes.json`
/// with paths relative to the world's root).
pub fn read_recorded_file(path: &Path) -> Result<Vec<CiConfigChange>, PayloadError> {
    let bytes = crate::error::read_file(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let bases: Vec<&Path> = dir.ancestors().filter(|d| !d.as_os_str().is_empty()).collect();
    parse_recorded_under(&bytes, &path.display().to_string(), &bases)
}

/// [`parse_recorded`], resolving each `diff` file path under the first of `bases`
/// that holds it.
fn parse_recorded_under(bytes: &[u8], origin: &str, bases: &[&Path]) -> Result<Vec<CiConfigChange>, PayloadError> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| PayloadError::invalid(origin, format!("malformed JSON: {e}")))?;
    let arr = match &v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o.get("changes").and_then(|c| c.as_array()).cloned().unwrap_or_default(),
        _ => return Err(PayloadError::invalid(origin, "expected an array of changes")),
    };
    let mut out = Vec::new();
    for (i, e) in arr.iter().enumerate() {
        let pr_field = e.get("pr").and_then(|n| n.as_u64());
        let id = s(e, &["sha"])
            .or_else(|| s(e, &["id"]))
            .or_else(|| pr_field.map(|n| format!("pr-{n}")))
            .ok_or_else(|| PayloadError::invalid(origin, format!("[{i}]: missing sha (or pr)")))?;
        let date = s(e, &["date"])
            .or_else(|| s(e, &["commit", "committer", "date"]))
            .or_else(|| s(e, &["merged_at"]))
            .or_else(|| s(e, &["merged"]))
            .ok_or_else(|| PayloadError::invalid(origin, format!("[{i}]: missing date")))?;
        if time::parse_rfc3339(&date).is_none() {
            return Err(PayloadError::invalid(origin, format!("[{i}]: date {date:?} is not an RFC 3339 time")));
        }
        let message = s(e, &["title"])
            .or_else(|| s(e, &["message"]))
            .or_else(|| s(e, &["commit", "message"]))
            .unwrap_or_default();
        let title = message.lines().next().unwrap_or("").to_string();
        let pr_url = s(e, &["pr_url"]);
        let pr_number = e.get("pr_number").and_then(|n| n.as_u64()).or(pr_field).or_else(|| {
            // "... (#12345)" at the end of a squash-merge subject.
            let t = title.trim_end();
            let open = t.rfind("(#")?;
            t[open + 2..].trim_end_matches(')').parse().ok()
        });
        let repo = s(e, &["repo"]).unwrap_or_else(|| "openshift/release".to_string());
        let url = pr_url
            .or_else(|| pr_number.map(|n| format!("https://github.com/{repo}/pull/{n}")))
            .or_else(|| s(e, &["url"]).filter(|u| u.contains("github.com")))
            .or_else(|| s(e, &["html_url"]));
        let mut files = Vec::new();
        if let Some(fs) = e.get("files").and_then(|f| f.as_array()) {
            for f in fs {
                if f.is_string() {
                    continue; // A bare path list; the diff comes from `diff`.
                }
                let name = s(f, &["filename"]).unwrap_or_default();
                let patch = s(f, &["patch"]).unwrap_or_default();
                files.extend(diff::parse_patch(&name, &patch).files);
            }
        }
        if let Some(d) = s(e, &["diff"]) {
            let text = if !d.contains('\n') && d.ends_with(".diff") {
                if bases.is_empty() {
                    return Err(PayloadError::invalid(
                        origin,
                        format!("[{i}]: diff {d:?} is a path but no base directory is known"),
                    ));
                }
                if d.split('/').any(|c| c == ".." || c.is_empty()) || d.starts_with('/') || d.contains('\\') {
                    return Err(PayloadError::invalid(origin, format!("[{i}]: diff path {d:?} leaves the directory")));
                }
                let under = |base: &Path| d.split('/').fold(base.to_path_buf(), |a, c| a.join(c));
                let p = bases.iter().map(|b| under(b)).find(|p| p.is_file()).unwrap_or_else(|| under(bases[0]));
                String::from_utf8_lossy(&crate::error::read_file(&p)?).into_owned()
            } else {
                d
            };
            files.extend(diff::parse_unified(&text).files);
        }
        out.push(CiConfigChange { id, title, date, url, pr_number, repo, diff: ParsedDiff { files } });
    }
    out.sort_by(|a, b| (a.epoch(), &a.id).cmp(&(b.epoch(), &b.id)));
    Ok(out)
}

/// Reads the changes of a local checkout under `paths` between two times with
/// `git log -p` (the only process this crate starts). `repo` names the repository
/// in URLs (`openshift/release`).
pub fn from_checkout(
    checkout: &Path,
    paths: &[String],
    since: Epoch,
    until: Epoch,
    repo: &str,
) -> Result<Vec<CiConfigChange>, PayloadError> {
    let origin = checkout.display().to_string();
    let out = Command::new("git")
        .arg("-C")
        .arg(checkout)
        .args([
            "log",
            "--no-color",
            "--no-merges",
            "--first-parent",
            &format!("--since={}", time::rfc3339(since)),
            &format!("--until={}", time::rfc3339(until)),
            "--format=%x00commit %H%n%cI%n%s",
            "-p",
            "--",
        ])
        .args(paths)
        .output()
        .map_err(|e| PayloadError::invalid(&origin, format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(PayloadError::invalid(
            &origin,
            format!("git log failed: {}", String::from_utf8_lossy(&out.stderr).trim()),
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut changes = Vec::new();
    for chunk in text.split('\0').filter(|c| c.starts_with("commit ")) {
        let mut lines = chunk.splitn(4, '\n');
        let sha = lines.next().unwrap_or("").trim_start_matches("commit ").trim().to_string();
        let date = lines.next().unwrap_or("").trim().to_string();
        let title = lines.next().unwrap_or("").trim().to_string();
        let body = lines.next().unwrap_or("");
        let pr_number = title.rfind("(#").and_then(|i| title[i + 2..].trim_end_matches(')').parse().ok());
        changes.push(CiConfigChange {
            url: Some(match pr_number {
                Some(n) => format!("https://github.com/{repo}/pull/{n}"),
                None => format!("https://github.com/{repo}/commit/{sha}"),
            }),
            id: sha,
            title,
            date,
            pr_number,
            repo: repo.to_string(),
            diff: diff::parse_unified(body),
        });
    }
    changes.sort_by(|a, b| (a.epoch(), &a.id).cmp(&(b.epoch(), &b.id)));
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_list() {
        let j = br#"[{"sha":"abc","date":"2026-03-03T10:00:00Z","message":"Switch installer flag (#777)\n\nbody","files":[{"filename":"ci-operator/step-registry/ipi/install/ipi-install-commands.sh","patch":"@@ -1 +1 @@\n-openshift-install --old\n+openshift-install --log-level-v2=debug"}]}]"#;
        let c = parse_recorded(j, "ci.json").unwrap();
        assert_eq!(c[0].pr_number, Some(777));
        assert_eq!(c[0].url.as_deref(), Some("https://github.com/openshift/release/pull/777"));
        assert_eq!(c[0].diff.files[0].added[0].1, "openshift-install --log-level-v2=debug");
        assert!(parse_recorded(br#"[{"sha":"x","date":"soon"}]"#, "ci.json")
            .unwrap_err()
            .to_string()
            .contains("ci.json"));
    }
}
