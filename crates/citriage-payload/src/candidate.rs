//! Candidate causes of a payload's failures: pull requests of its components,
//! CI-configuration changes and RHCOS RPM changes, with their diffs when known.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use citriage_suspects::diff::ParsedDiff;

/// What kind of change a candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CandidateKind {
    /// A pull request of a payload component.
    Pr,
    /// A change to the CI configuration (step registry...).
    CiConfig,
    /// An RHCOS RPM package change.
    RhcosRpm,
}

/// An RHCOS RPM change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpmChange {
    pub variant_tag: String,
    pub variant_name: String,
    pub package: String,
    pub old_version: String,
    pub new_version: String,
    /// Changelog entries the new version added, when available.
    pub changelog: Option<String>,
}

/// A candidate cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// `pr:org/repo#n`, `ci:org/repo@sha`, `rpm:<variant>/<package>`.
    pub id: String,
    pub kind: CandidateKind,
    pub title: String,
    pub url: Option<String>,
    /// Repository name, `step registry`, or RHCOS variant.
    pub component: String,
    /// `org/repo`.
    pub repo: Option<String>,
    pub number: Option<u64>,
    pub images: Vec<String>,
    /// The payload whose changelog introduced it.
    pub payload: Option<String>,
    /// Commit time (CI-configuration changes).
    pub date: Option<String>,
    pub rpm: Option<RpmChange>,
    /// The diff, when available (not serialized).
    #[serde(skip)]
    pub diff: Option<ParsedDiff>,
    pub diff_available: bool,
    /// Presubmit job names, when known.
    pub presubmits: Option<Vec<String>>,
    /// A Kubernetes rebase of `openshift/kubernetes`.
    pub is_rebase: bool,
}

impl Candidate {
    /// The key that defines "the same component" for exclusivity.
    pub fn component_key(&self) -> String {
        match self.kind {
            CandidateKind::Pr => self.repo.clone().unwrap_or_else(|| self.component.clone()),
            CandidateKind::RhcosRpm => self.rpm.as_ref().map(|r| format!("rpm:{}", r.package)).unwrap_or_default(),
            CandidateKind::CiConfig => {
                let dirs: BTreeSet<String> = self
                    .diff
                    .iter()
                    .flat_map(|d| d.paths())
                    .map(|p| {
                        let parts: Vec<&str> = p.split('/').collect();
                        parts[..parts.len().saturating_sub(1).min(4)].join("/")
                    })
                    .collect();
                format!("ci:{}", dirs.into_iter().next().unwrap_or_default())
            }
        }
    }

    /// `#123` / `abc1234` / `systemd 1 → 2`.
    pub fn short(&self) -> String {
        match (&self.kind, self.number, &self.rpm) {
            (CandidateKind::RhcosRpm, _, Some(r)) => format!("{} {} → {}", r.package, r.old_version, r.new_version),
            (_, Some(n), _) => format!("{}#{n}", self.repo.as_deref().unwrap_or(&self.component)),
            _ => self.id.trim_start_matches("ci:").to_string(),
        }
    }
}
