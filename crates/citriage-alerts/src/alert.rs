//! An alert: one state change of one subject (a job turned red, a pattern appeared, a
//! payload was rejected…), the evidence that shows it, what would withdraw it, and the
//! key every copy of it carries. Text is kept in pieces — prose the rules wrote apart
//! from names and text that came from CI — so each sink escapes CI text its own way.

use citriage_model::Evidence;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlertKind {
    /// A job failed N runs in a row (TestGrid's rule); withdrawn after M passes in a row.
    JobRed,
    /// A failure pattern first seen lately passed the threshold; withdrawn when quiet.
    PatternNew,
    /// A known pattern's failures grew by the factor; withdrawn when they fall back.
    PatternGrowing,
    /// A release stream rejected a payload; withdrawn when it accepts one again.
    PayloadRejected,
    /// A pattern failed in a build that already contained its fix.
    FailedAfterFix,
    /// A fix held long enough to be confirmed (closes a failed-after-fix alert).
    FixConfirmed,
}

impl AlertKind {
    pub const ALL: [AlertKind; 6] = [
        AlertKind::JobRed,
        AlertKind::PatternNew,
        AlertKind::PatternGrowing,
        AlertKind::PayloadRejected,
        AlertKind::FailedAfterFix,
        AlertKind::FixConfirmed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::JobRed => "job-red",
            AlertKind::PatternNew => "pattern-new",
            AlertKind::PatternGrowing => "pattern-growing",
            AlertKind::PayloadRejected => "payload-rejected",
            AlertKind::FailedAfterFix => "failed-after-fix",
            AlertKind::FixConfirmed => "fix-confirmed",
        }
    }

    pub fn parse(s: &str) -> Option<AlertKind> {
        AlertKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Whether the alert says a state began or ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    Raised,
    /// The state an earlier alert raised no longer holds (said once).
    Withdrawn,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Raised => "raised",
            Change::Withdrawn => "withdrawn",
        }
    }
}

/// A piece of an alert's sentence.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "t", content = "v", rename_all = "kebab-case")]
pub enum Piece {
    /// Prose the rules wrote (never CI text).
    Text(String),
    /// A name from CI or the store (job, test, pattern id, payload tag, evidence id):
    /// shown as code.
    Name(String),
    /// Text from CI (a failure line, a verdict's summary): shown quoted on one line.
    Quote(String),
    /// A URL (a build, a release page): shown as a link when it is a plain http(s) URL,
    /// else as a name.
    Link(String),
}

/// One sentence or list item.
pub type Line = Vec<Piece>;

/// Builds a [`Line`]: `line![t("failed "), name(job)]`.
pub fn t(s: impl Into<String>) -> Piece {
    Piece::Text(s.into())
}

pub fn name(s: impl Into<String>) -> Piece {
    Piece::Name(s.into())
}

pub fn quote(s: impl Into<String>) -> Piece {
    Piece::Quote(s.into())
}

pub fn link(s: impl Into<String>) -> Piece {
    Piece::Link(s.into())
}

/// One alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alert {
    /// The idempotency key (`al-` + 16 hex): derived from what changed, so whoever
    /// evaluates the same data gives the same key, and every copy sent carries it.
    pub key: String,
    pub kind: AlertKind,
    pub change: Change,
    /// What it is about: a job, a pattern's stable id, a release stream, a record.
    pub subject: String,
    /// The owner (canonical spelling, `citriage_model::owner`); empty when unknown.
    pub owner: String,
    /// When the state changed (the data's time, Unix seconds).
    pub at: i64,
    pub title: Line,
    pub lines: Vec<Line>,
    /// The ledger items that show it (recorded in the store's evidence ledger with the
    /// alert, so every id resolves).
    pub evidence: Vec<Evidence>,
    /// Other ids it names that resolve in the store: build URLs, a cluster id, a
    /// payload tag, a record id.
    pub refs: Vec<String>,
    /// What would withdraw it (raised alerts); empty for a withdrawal.
    pub withdraw_when: Line,
    /// The key of the alert this one withdraws or closes.
    pub withdraws: Option<String>,
}

/// The key of the alert for `kind`/`change` of `subject` at `anchor` (what fixes the
/// state change: the first failing build of a streak, the first rejected payload…).
pub fn key(kind: AlertKind, change: Change, subject: &str, anchor: &str) -> String {
    let mut h = Sha256::new();
    // Each field with its length first: no two field lists hash the same bytes.
    for f in [kind.as_str(), change.as_str(), subject, anchor] {
        h.update((f.len() as u64).to_be_bytes());
        h.update(f.as_bytes());
    }
    format!("al-{}", citriage_model::evidence::hex(&h.finalize()[..8]))
}

impl Alert {
    /// The day the alert belongs to (its digest's day).
    pub fn day(&self) -> citriage_model::Day {
        citriage_model::Day::from_unix_seconds(self.at)
    }

    /// Every id the alert names: evidence ids, then its other references.
    pub fn cited_ids(&self) -> Vec<String> {
        self.evidence.iter().map(|e| e.id.clone()).chain(self.refs.iter().cloned()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_distinct() {
        let a = key(AlertKind::JobRed, Change::Raised, "ci-x", "100");
        assert_eq!(a, key(AlertKind::JobRed, Change::Raised, "ci-x", "100"));
        assert!(a.starts_with("al-") && a.len() == 19, "{a}");
        assert_ne!(a, key(AlertKind::JobRed, Change::Withdrawn, "ci-x", "100"));
        assert_ne!(a, key(AlertKind::JobRed, Change::Raised, "ci-x", "101"));
        // The separator keeps subject and anchor apart.
        assert_ne!(
            key(AlertKind::JobRed, Change::Raised, "a", "b\0c"),
            key(AlertKind::JobRed, Change::Raised, "a\0b", "c")
        );
        for k in AlertKind::ALL {
            assert_eq!(AlertKind::parse(k.as_str()), Some(k));
        }
    }
}
