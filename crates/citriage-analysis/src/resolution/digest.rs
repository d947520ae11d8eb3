//! What the daily report says about triage records: fixes that failed after they
//! merged (first: the loudest news), fixes confirmed since the last report, fixes
//! merged and awaiting confirmation with the runs still needed, and the open records
//! by state. Pure: the caller hands in each record's summary.

use super::stats::Confirmation;
use super::{Fix, State};
use citriage_model::time::utc;
use serde::Serialize;
use std::collections::BTreeMap;

/// A linked reference as a record shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkSummary {
    /// `owner/repo#N`.
    pub reference: String,
    /// `pr`, `issue`, `unknown`.
    pub kind: String,
    /// `open`, `merged`, `closed-unmerged`, `closed`, `not-found`, `unknown`.
    pub state: String,
    /// `links-file`, `bug-draft`, `github`, `hand`.
    pub source: String,
    pub active: bool,
}

/// One record as reports and pages show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordSummary {
    /// `pattern:PROFILE/ID`, `job:NAME`, `payload:CAUSE`.
    pub subject: String,
    pub title: String,
    pub state: State,
    /// When it entered its state.
    pub since: i64,
    /// Why (the reason of the transition into the state; empty for a new record).
    pub reason: String,
    /// The evidence ids of that transition.
    pub evidence: Vec<String>,
    pub links: Vec<LinkSummary>,
    pub fix: Option<Fix>,
    pub confirmation: Option<Confirmation>,
}

/// The records' news for a report dated `as_of`, since the report before (`since`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Digest {
    pub as_of: i64,
    pub since: Option<i64>,
    /// Every record in *failed after fix*, most recent first.
    pub failed_after_fix: Vec<RecordSummary>,
    /// Records confirmed since the report before (all confirmed ones without one),
    /// most recent first.
    pub confirmed: Vec<RecordSummary>,
    /// Records in *fix merged*, awaiting confirmation, most recent first.
    pub awaiting: Vec<RecordSummary>,
    /// Open records per state.
    pub open: BTreeMap<State, usize>,
}

fn newest_first(v: &mut [RecordSummary]) {
    v.sort_by(|a, b| b.since.cmp(&a.since).then_with(|| a.subject.cmp(&b.subject)));
}

/// The digest of `records` for a report dated `as_of` whose previous report was at
/// `since`. Records whose state began after `as_of` are left out (a report tells what
/// was known at its date).
pub fn digest(records: &[RecordSummary], since: Option<i64>, as_of: i64) -> Digest {
    let known: Vec<&RecordSummary> = records.iter().filter(|r| r.since <= as_of).collect();
    let pick = |s: State, f: &dyn Fn(&RecordSummary) -> bool| {
        let mut v: Vec<RecordSummary> = known.iter().filter(|r| r.state == s && f(r)).map(|r| (*r).clone()).collect();
        newest_first(&mut v);
        v
    };
    let mut open = BTreeMap::new();
    for r in known.iter().filter(|r| r.state.is_open()) {
        *open.entry(r.state).or_insert(0) += 1;
    }
    Digest {
        as_of,
        since,
        failed_after_fix: pick(State::FailedAfterFix, &|_| true),
        confirmed: pick(State::FixConfirmed, &|r| since.is_none_or(|s| r.since > s)),
        awaiting: pick(State::FixMerged, &|_| true),
        open,
    }
}

/// A record's name in a sentence: its title, else its subject.
pub fn name(r: &RecordSummary) -> &str {
    if r.title.is_empty() {
        &r.subject
    } else {
        &r.title
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Digest {
    /// The status banner's sentences (plain text: the sink escapes), loudest first.
    pub fn banner(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.failed_after_fix.is_empty() {
            let which: Vec<String> = self
                .failed_after_fix
                .iter()
                .map(|r| match &r.fix {
                    Some(f) => format!("{} ({})", name(r), f.reference),
                    None => name(r).to_string(),
                })
                .collect();
            out.push(format!(
                "{} FAILED AFTER FIX: {}.",
                plural(self.failed_after_fix.len(), "fix", "fixes"),
                which.join("; ")
            ));
        }
        if !self.confirmed.is_empty() {
            let when = self.since.map(|s| format!(" since {}", utc(s))).unwrap_or_default();
            out.push(format!("{} confirmed{when}.", plural(self.confirmed.len(), "fix", "fixes")));
        }
        if !self.awaiting.is_empty() {
            out.push(format!("{} merged, awaiting confirmation.", plural(self.awaiting.len(), "fix", "fixes")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(subject: &str, state: State, since: i64) -> RecordSummary {
        RecordSummary {
            subject: subject.into(),
            title: String::new(),
            state,
            since,
            reason: String::new(),
            evidence: Vec::new(),
            links: Vec::new(),
            fix: None,
            confirmation: None,
        }
    }

    #[test]
    fn the_digest_puts_failed_fixes_first_and_counts_confirmations_since_the_last_report() {
        let records = [
            rec("pattern:p/a", State::FixConfirmed, 100),
            rec("pattern:p/b", State::FixConfirmed, 300),
            rec("pattern:p/c", State::FailedAfterFix, 250),
            rec("pattern:p/d", State::FixMerged, 260),
            rec("pattern:p/e", State::New, 50),
            rec("pattern:p/f", State::FailedAfterFix, 900),
        ];
        let d = digest(&records, Some(200), 500);
        assert_eq!(d.failed_after_fix.iter().map(|r| r.subject.as_str()).collect::<Vec<_>>(), ["pattern:p/c"]);
        assert_eq!(d.confirmed.iter().map(|r| r.subject.as_str()).collect::<Vec<_>>(), ["pattern:p/b"]);
        assert_eq!(d.awaiting.len(), 1);
        assert_eq!(d.open, BTreeMap::from([(State::New, 1), (State::FixMerged, 1), (State::FailedAfterFix, 1)]));
        let b = d.banner();
        assert_eq!(b.len(), 3);
        assert!(b[0].starts_with("1 fix FAILED AFTER FIX: pattern:p/c"), "{b:?}");
        assert!(b[1].starts_with("1 fix confirmed since 1970-01-01"), "{b:?}");
        assert_eq!(b[2], "1 fix merged, awaiting confirmation.");
        // Without a report before: every confirmed record.
        assert_eq!(digest(&records, None, 500).confirmed.len(), 2);
        assert!(digest(&[], None, 500).banner().is_empty());
    }
}
