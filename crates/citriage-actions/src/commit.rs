//! The revert of a commit a failure pattern's regression window ranks (`suspects`):
//! drafted only for a *likely introducing change* (two independent kinds of link
//! quoted) of a pattern that is neither flaky before its onset nor infrastructure (a
//! known signature of an environment cause); below that band, or on such a pattern,
//! the answer is a [`Refusal`] saying why.

use crate::{slug, ActionKind, Draft, Earned, Refusal, Target, FORMAT_VERSION};
use citriage_model::evidence::sha256_hex;
use citriage_model::{Evidence, EvidenceKind};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The band word of a likely introducing change (`citriage-suspects`' `JobBand`).
pub const LIKELY: &str = "likely introducing change";

/// What a commit's revert is drafted from: the pattern's verdict and the commit's links.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitFacts {
    /// The pattern's stable id (or the job's name).
    pub target: String,
    /// `org/repo` of the commit.
    pub repo: String,
    pub sha: String,
    pub subject: String,
    pub pr: Option<u64>,
    /// The commit's band, as words.
    pub band: String,
    pub score: u32,
    /// Its rank and whether it shares it.
    pub rank: u32,
    pub tied: bool,
    /// The failure came and went before its onset.
    pub flaky_before: bool,
    /// Known signatures the pattern matches.
    pub signatures: Vec<String>,
    /// Each specific link, quoted (`file:line` of the diff and the failure line).
    pub links: Vec<String>,
    /// The window's ends: (job, last passing build, first failing build).
    pub windows: Vec<String>,
}

/// The revert of `f`'s commit, or why not.
pub fn revert_commit(f: &CommitFacts) -> Result<Draft, Refusal> {
    let what = format!("{} {}@{}", f.target, f.repo, &f.sha[..f.sha.len().min(12)]);
    if f.flaky_before {
        return Err(Refusal::NotEligible {
            what,
            reason: "the failure came and went before its onset: no single change introduced it".into(),
        });
    }
    if !f.signatures.is_empty() {
        return Err(Refusal::NotEligible {
            what,
            reason: format!(
                "the pattern matches known signature(s) {} (an environment cause): no commit is reverted for it",
                f.signatures.join(", ")
            ),
        });
    }
    if f.band != LIKELY || f.tied {
        return Err(Refusal::BelowBand {
            what,
            score: f.score,
            band: if f.tied { format!("{} (tied at rank {})", f.band, f.rank) } else { f.band.clone() },
            needs: format!("{LIKELY}, alone at its rank"),
            reason: "a revert needs two independent kinds of link between the commit and the failure".into(),
            instead: Some("investigate the window's suspects (citriage suspects PATTERN --checkout ...)".into()),
        });
    }
    if f.links.is_empty() {
        return Err(Refusal::MissingEvidence {
            what,
            missing: "no link of the commit to the failure is quoted".into(),
        });
    }
    let short = &f.sha[..f.sha.len().min(12)];
    let mut body = String::new();
    let pr = f.pr.map(|n| format!(" (#{n})")).unwrap_or_default();
    let _ = writeln!(body, "Reverts {}@{}{pr}: \"{}\".\n", f.repo, f.sha, f.subject);
    let _ = writeln!(body, "Failure pattern `{}` started with this commit ({LIKELY}, score {}).\n", f.target, f.score);
    let _ = writeln!(body, "## Regression window\n");
    for w in &f.windows {
        let _ = writeln!(body, "- {w}");
    }
    let _ = writeln!(body, "\n## Evidence\n");
    for l in &f.links {
        let _ = writeln!(body, "- {l}");
    }
    let earned_by = f
        .links
        .iter()
        .map(|l| Earned {
            evidence: Evidence::new(
                EvidenceKind::GitCommit,
                format!("{}@{}", f.repo, f.sha),
                l.chars().take(300).collect::<String>(),
                sha256_hex(l.as_bytes()),
                "",
            ),
            shows: "a link of the commit to the failure".into(),
        })
        .collect();
    Ok(Draft {
        format_version: FORMAT_VERSION,
        kind: ActionKind::Revert,
        name: format!("revert-{}-{}", slug(&f.target), short),
        subject: format!("pattern {}, commit {}@{short}", f.target, f.repo),
        score: Some(f.score),
        band: Some(f.band.clone()),
        gate: format!("{LIKELY} alone at rank 1, on a pattern neither flaky before its onset nor infrastructure"),
        title: format!("Revert \"{}\"", f.subject),
        body,
        labels: Vec::new(),
        commands: vec![format!("git revert --no-edit {}", f.sha)],
        earned_by,
        would_change: vec![
            "a passing build that tested this commit".into(),
            "the failure seen before the window's last pass (flaky before the onset)".into(),
        ],
        target: Some(Target { repo: f.repo.clone(), number: f.pr, routed_by: "the commit's repository".into() }),
        suspect: None,
        payload_jobs: Vec::new(),
        merge_sha: Some(f.sha.clone()),
        conflict_check: None,
        requests: Vec::new(),
        apply_blocked: Some("a commit's revert is opened by hand: run the command above in a checkout".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> CommitFacts {
        CommitFacts {
            target: "3f2a9c1e0b7d".into(),
            repo: "kubernetes-sigs/kwok".into(),
            sha: "0123456789abcdef0123456789abcdef01234567".into(),
            subject: "Let workloads borrow".into(),
            pr: Some(912),
            band: LIKELY.into(),
            score: 60,
            rank: 1,
            tied: false,
            flaky_before: false,
            signatures: Vec::new(),
            links: vec!["pkg/quota/quota_reconciler.go:12 adds \"cohort borrowing limit exceeded\"".into()],
            windows: vec!["ci-kwok-e2e-quota: passed in 1, failed from 2".into()],
        }
    }

    #[test]
    fn a_likely_introducing_change_is_drafted() {
        let d = revert_commit(&facts()).unwrap();
        assert_eq!(d.kind, ActionKind::Revert);
        assert_eq!(d.commands, ["git revert --no-edit 0123456789abcdef0123456789abcdef01234567"]);
        assert!(d.body.contains("cohort borrowing limit exceeded"));
        assert_eq!(d.earned_by.len(), 1);
    }

    #[test]
    fn never_below_the_band_nor_on_flaky_or_infrastructure_patterns() {
        let mut f = facts();
        f.band = "suspect".into();
        assert!(matches!(revert_commit(&f), Err(Refusal::BelowBand { .. })));
        let mut f = facts();
        f.tied = true;
        assert!(matches!(revert_commit(&f), Err(Refusal::BelowBand { .. })));
        let mut f = facts();
        f.flaky_before = true;
        assert!(matches!(revert_commit(&f), Err(Refusal::NotEligible { .. })));
        let mut f = facts();
        f.signatures = vec!["image-pull-backoff".into()];
        assert!(matches!(revert_commit(&f), Err(Refusal::NotEligible { .. })));
        let mut f = facts();
        f.links.clear();
        assert!(matches!(revert_commit(&f), Err(Refusal::MissingEvidence { .. })));
    }
}
