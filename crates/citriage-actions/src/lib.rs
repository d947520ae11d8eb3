//! Evidence-gated action drafts: the exact next step a release engineer takes for a
//! verdict, written out so a person (or an agent) can check it before anything is sent.
//!
//! - *revert* ([`payload::revert`]): for a payload suspect at the revert band, the
//!   revert PR's title and body (what failed, the evidence quoted with its ids, the
//!   payloads affected, how to verify), the `git revert -m1` command for the merge
//!   commit, and the GitHub requests that open it and ask for the payload jobs;
//! - *bisect* ([`payload::bisect`]): for suspects in the bisect band, the draft revert
//!   PR's text plus the payload test commands of every failing blocking job
//!   attributed to the suspect (`/payload-job <job>`, `/payload-aggregate <job>
//!   <count>`), and the tracking file in the payload agent's documented shape;
//! - *revert* of a commit ([`commit::revert_commit`]): for a failure pattern's likely
//!   introducing change (never below that band, never on a flaky or infrastructure
//!   pattern), the revert's title, body with the links quoted, and `git revert`;
//! - *bug* ([`payload::root_cause_bug`], [`pattern::bug`]): a bug text for a payload
//!   root cause or a failure pattern, routed by its owner;
//! - *comment* ([`pr_comment::draft`]): the comment on a pull request saying whether
//!   its red presubmits are its own doing, each failure with its class and evidence.
//!
//! Gates: a draft is made only when the evidence meets the action's band; otherwise
//! the answer is a [`Refusal`] saying why. A draft never rests on missing evidence:
//! every draft lists the evidence that earned it ([`Earned`], each an item for the
//! store's ledger) and what would change the verdict.
//!
//! The crate is pure: it reads analyses and facts handed to it and returns drafts.
//! Sending is the caller's ([`request::apply`] takes a send function), so the
//! requests a draft lists are exactly the requests that are sent.

use citriage_model::Evidence;
use serde::{Deserialize, Serialize};

pub mod commit;
pub mod pattern;
pub mod payload;
pub mod pr_comment;
mod render;
pub mod request;
mod tracking;

pub use request::{apply, ApplyError, Capture, PlannedRequest, Sent};

/// Version of the draft's JSON shape.
pub const FORMAT_VERSION: u32 = 1;

/// What a draft proposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionKind {
    Revert,
    Bisect,
    Bug,
    /// A comment on a pull request (`pr_comment`).
    Comment,
}

impl ActionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Revert => "revert",
            ActionKind::Bisect => "bisect",
            ActionKind::Bug => "bug",
            ActionKind::Comment => "comment",
        }
    }
}

/// One evidence item that earned a draft, and what it shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Earned {
    pub evidence: Evidence,
    /// What this item shows, in words (`the failing line`, `the added line`...).
    pub shows: String,
}

/// The result of the revert pre-check in a local checkout (`git revert -m1
/// --no-commit` in a scratch worktree; the checkout itself is never touched).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictCheck {
    /// The checkout (as given).
    pub checkout: String,
    /// The commit the revert was tried on.
    pub base: String,
    pub merge_sha: String,
    /// True when the revert applies without conflicts.
    pub clean: bool,
    /// Conflicting paths, sorted.
    pub conflicts: Vec<String>,
    /// What git said when it could not try at all.
    pub error: Option<String>,
}

/// Where a draft would be posted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// `owner/name`.
    pub repo: String,
    /// The pull request a revert or bisect reverts; `None` for a new issue.
    pub number: Option<u64>,
    /// Why this repository (the routing rule that chose it).
    pub routed_by: String,
}

/// The pull request a revert or bisect is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuspectPr {
    pub url: String,
    pub repo: String,
    pub number: u64,
    pub component: String,
    pub title: String,
    pub confidence_score: u32,
}

/// An action draft: the text to post, the commands to run, the evidence that earned
/// it, what would change the verdict, and the requests `--apply` would send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    pub format_version: u32,
    pub kind: ActionKind,
    /// A file-name stem, unique per subject (`revert-<tag>-<org>-<repo>-<n>`).
    pub name: String,
    /// What the draft is about (`payload <tag>, suspect <org/repo#n>`).
    pub subject: String,
    /// The suspect's score and band, for revert and bisect drafts.
    pub score: Option<u32>,
    pub band: Option<String>,
    /// The gate the evidence passed, in words.
    pub gate: String,
    pub title: String,
    /// The PR or issue body, Markdown, exactly as it would be posted.
    pub body: String,
    /// Labels of an issue.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Shell and chat commands, in order (`git revert -m1 ...`, `/payload-job ...`).
    pub commands: Vec<String>,
    pub earned_by: Vec<Earned>,
    /// What would change the verdict (withdraw the draft or move it to another band).
    pub would_change: Vec<String>,
    pub target: Option<Target>,
    /// Revert and bisect: the suspect pull request.
    pub suspect: Option<SuspectPr>,
    /// Revert and bisect: the payload test commands asked for on the revert PR, one
    /// per failing blocking job attributed to the suspect.
    #[serde(default)]
    pub payload_jobs: Vec<PayloadJob>,
    /// The merge commit a revert undoes, when known.
    pub merge_sha: Option<String>,
    pub conflict_check: Option<ConflictCheck>,
    /// Exactly the requests `--apply` sends, in order.
    pub requests: Vec<PlannedRequest>,
    /// Why nothing can be applied yet, when so (an unknown repository, a conflict).
    pub apply_blocked: Option<String>,
}

impl Draft {
    /// The evidence items of the draft, for the store's ledger (sorted by id, deduplicated).
    pub fn evidence(&self) -> Vec<Evidence> {
        let mut v: Vec<Evidence> = self.earned_by.iter().map(|e| e.evidence.clone()).collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v.dedup_by(|a, b| a.id == b.id);
        v
    }

    /// The draft as pretty JSON (with a trailing newline).
    pub fn json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// Why no draft was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "refused", rename_all = "kebab-case")]
pub enum Refusal {
    /// The subject (suspect, root cause, pattern) is not in the data.
    Unknown { what: String, known: Vec<String> },
    /// The evidence does not reach the action's band.
    BelowBand { what: String, score: u32, band: String, needs: String, reason: String, instead: Option<String> },
    /// The action is not one for this kind of failure or candidate.
    NotEligible { what: String, reason: String },
    /// The evidence the action rests on is missing.
    MissingEvidence { what: String, missing: String },
}

impl Refusal {
    /// One paragraph: what was refused and why.
    pub fn message(&self) -> String {
        match self {
            Refusal::Unknown { what, known } => {
                if known.is_empty() {
                    format!("{what}: not found, and there is nothing to choose from")
                } else {
                    format!("{what}: not found; known: {}", known.join(", "))
                }
            }
            Refusal::BelowBand { what, score, band, needs, reason, instead } => {
                let mut s = format!(
                    "{what}: refused: score {score} ({band}) is below the band this action needs ({needs}): {reason}"
                );
                if let Some(i) = instead {
                    s.push_str("; ");
                    s.push_str(i);
                }
                s
            }
            Refusal::NotEligible { what, reason } => format!("{what}: refused: {reason}"),
            Refusal::MissingEvidence { what, missing } => {
                format!("{what}: refused: never drafted from missing evidence: {missing}")
            }
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// A file-name-safe form of a name: ASCII letters, digits, `.`, `_` and `-`; every
/// other run of characters becomes one `-`.
pub fn slug(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut dash = false;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
            dash = false;
        } else if !dash && !out.is_empty() {
            out.push('-');
            dash = true;
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.len() > 120 {
        out.truncate(120);
    }
    out
}

/// The first `n` characters of a text's first line.
pub(crate) fn first_line(s: &str, n: usize) -> String {
    s.lines().next().unwrap_or("").chars().take(n).collect()
}

/// A payload test command for one failing blocking job, per the payload agent's
/// workflow: `/payload-aggregate <underlying job> <count>` for an aggregated job
/// (the count is the number of underlying runs its evidence names), `/payload-job
/// <job>` otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayloadJob {
    /// The failing blocking job's Prow job name.
    pub failing_job: String,
    /// The job the command triggers (the underlying job of an aggregated one).
    pub job_name: String,
    /// `aggregated` or `non-aggregated`.
    pub kind: String,
    pub command: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(slug("openshift/cluster-network-operator#1234"), "openshift-cluster-network-operator-1234");
        assert_eq!(slug("../../etc/passwd"), "..-..-etc-passwd");
        assert_eq!(slug("a b\u{e9}c"), "a-b-c");
        assert!(!slug("x/../y").contains('/'));
    }
}
