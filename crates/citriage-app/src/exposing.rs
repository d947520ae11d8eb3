//! Exposing changes, for `suspects`: a job's own configuration that changed between its
//! last pass and its first failure. A job-configuration checkout (one no window of the
//! tested repositories reads, e.g. `--checkout kubernetes/test-infra=PATH`) is read with
//! one `git log -p` per job window over `config/jobs` and `ci-operator/jobs`, bounded by
//! the two builds' start times; a commit is kept when the lines it adds fall in the
//! block of the job (`- name: JOB` up to the next entry of the list) or name the job.
//! Each kept commit quotes the added lines as `file:line`.

use citriage_analysis::windows::JobWindow;
use citriage_git::{Git, LogQuery};
use citriage_suspects::diff::parse_unified;
use serde::Serialize;

/// The configuration paths read.
const CONFIG_PATHS: [&str; 2] = ["config/jobs", "ci-operator/jobs"];
/// At most this many added lines are quoted per commit.
const QUOTED: usize = 4;

/// A change of a job's configuration between its last pass and its first failure.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ExposingChange {
    pub job: String,
    /// The checkout's repository (`kubernetes/test-infra`).
    pub repo: String,
    pub sha: String,
    pub author: String,
    pub date: String,
    pub subject: String,
    /// The added lines of the job's block, each `file:line: text`.
    pub lines: Vec<String>,
}

/// The changes of `git`'s job configuration that touch a job between the ends of its
/// window; problems (an unreadable history) are returned as notes.
pub fn exposing_changes(repo: &str, git: &Git, w: &JobWindow, notes: &mut Vec<String>) -> Vec<ExposingChange> {
    let Some(pass) = &w.last_pass else { return Vec::new() };
    let q = LogQuery { since: Some(pass.started), until: Some(w.first_fail.started), ..LogQuery::of("HEAD") }
        .paths(&CONFIG_PATHS)
        .with_patches();
    let commits = match git.log(&q) {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("the job configuration of {} could not be read: {e}", w.job));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for c in &commits {
        let diff = parse_unified(&c.patch);
        let mut lines = Vec::new();
        for f in &diff.files {
            let block = match git.file_lines(&c.sha, &f.path) {
                Ok(Some(text)) => job_block(&text, &w.job),
                _ => None,
            };
            for (n, text) in &f.added {
                let inside = block.is_some_and(|(a, b)| (a..=b).contains(n));
                if inside || names_job(text, &w.job) {
                    lines.push(format!("{}:{n}: {}", f.path, text.trim()));
                }
            }
        }
        if !lines.is_empty() {
            lines.truncate(QUOTED);
            out.push(ExposingChange {
                job: w.job.clone(),
                repo: repo.to_string(),
                sha: c.sha.clone(),
                author: c.author.clone(),
                date: c.author_date.clone(),
                subject: c.subject.clone(),
                lines,
            });
        }
    }
    out
}

/// The job's name as a whole word of a line.
fn names_job(text: &str, job: &str) -> bool {
    text.match_indices(job).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + job.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        !word(before) && !word(after)
    })
}

/// The 1-based first and last line of the list entry that names the job
/// (`- name: JOB`, or `name: JOB` as the entry's first key), up to the next entry at
/// the same indentation.
fn job_block(lines: &[String], job: &str) -> Option<(u32, u32)> {
    let start = lines.iter().position(|l| {
        let t = l.trim_start().trim_start_matches("- ").trim();
        t.strip_prefix("name:").is_some_and(|v| v.trim().trim_matches(['"', '\'']) == job)
    })?;
    let indent = |l: &str| l.len() - l.trim_start().len();
    let head = &lines[start];
    let dash = head.find('-').filter(|d| head[..*d].trim().is_empty()).unwrap_or(indent(head));
    let end = lines[start + 1..]
        .iter()
        .position(|l| {
            !l.trim().is_empty() && (indent(l) < dash || (indent(l) == dash && l.trim_start().starts_with("- ")))
        })
        .map_or(lines.len(), |k| start + 1 + k);
    Some((start as u32 + 1, end as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn the_block_of_a_job_ends_at_the_next_entry() {
        let text = lines("periodics:\n- name: ci-a\n  spec:\n    args:\n    - --x\n- name: ci-b\n  interval: 2h\n");
        assert_eq!(job_block(&text, "ci-a"), Some((2, 5)));
        assert_eq!(job_block(&text, "ci-b"), Some((6, 7)));
        assert_eq!(job_block(&text, "ci"), None);
    }

    #[test]
    fn a_job_is_named_as_a_whole_word() {
        assert!(names_job("  - --job=ci-kwok-e2e", "ci-kwok-e2e"));
        assert!(!names_job("  - --job=ci-kwok-e2e-ipv6", "ci-kwok-e2e"));
    }
}
