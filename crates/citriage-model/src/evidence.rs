//! Evidence: the pointer behind every claim citriage prints. An evidence item names
//! what was read (kind, locator), what it said (excerpt), a content hash, and the day
//! it describes. Ids are derived from the content so identical inputs give identical ids.

use serde::{Deserialize, Serialize};

/// What kind of source an evidence item points into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceKind {
    /// One job's entry in a dashboard snapshot (`failures-latest.json` / `flakes-latest.json`).
    SnapshotEntry,
    /// A build-log excerpt.
    BuildLogExcerpt,
    /// A JUnit test case.
    JunitCase,
    /// A prowjob's state.
    ProwjobState,
    /// A build's result from its `finished.json` (with its start time and PR).
    BuildResult,
    /// A pull request's state as GitHub answered it.
    PullRequestState,
    /// An issue's state as GitHub answered it.
    IssueState,
    /// A Prow job's configuration (file:line in a test-infra checkout).
    JobConfig,
    /// An OWNERS file (approvers, reviewers, labels).
    OwnersFile,
    /// A line of a source file in a local checkout.
    SourceLine,
    /// A commit found in a checkout's history.
    GitCommit,
    /// A release-controller answer (payload info, changelog).
    ReleaseInfo,
}

/// One checkable piece of evidence.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Evidence {
    /// Stable id (`ev-` + 12 hex of the hash of kind, locator and excerpt).
    pub id: String,
    pub kind: EvidenceKind,
    /// Where it was read: a URL or path plus a JSON pointer or line range.
    pub locator: String,
    /// The exact text read.
    pub excerpt: String,
    /// SHA-256 (hex) of the whole source document the excerpt came from.
    pub source_sha256: String,
    /// The day the source describes (snapshot date), never the wall clock of the run.
    pub as_of: String,
}

impl Evidence {
    /// Builds an evidence item whose id is derived from its content.
    pub fn new(
        kind: EvidenceKind,
        locator: impl Into<String>,
        excerpt: impl Into<String>,
        source_sha256: impl Into<String>,
        as_of: impl Into<String>,
    ) -> Evidence {
        use sha2::{Digest, Sha256};
        let locator = locator.into();
        let excerpt = excerpt.into();
        let source_sha256 = source_sha256.into();
        let mut h = Sha256::new();
        h.update(format!("{kind:?}\0{locator}\0{excerpt}\0{source_sha256}"));
        let digest = h.finalize();
        let id = format!("ev-{}", hex(&digest[..6]));
        Evidence { id, kind, locator, excerpt, source_sha256, as_of: as_of.into() }
    }
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(H[(b >> 4) as usize] as char);
        s.push(H[(b & 15) as usize] as char);
    }
    s
}

/// SHA-256 of bytes as lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_content_derived() {
        let a = Evidence::new(EvidenceKind::SnapshotEntry, "f.json#/a", "x", "00", "2026-01-01");
        let b = Evidence::new(EvidenceKind::SnapshotEntry, "f.json#/a", "x", "00", "2026-01-02");
        let c = Evidence::new(EvidenceKind::SnapshotEntry, "f.json#/a", "y", "00", "2026-01-01");
        assert_eq!(a.id, b.id, "as_of is not part of the identity");
        assert_ne!(a.id, c.id);
        assert!(a.id.starts_with("ev-") && a.id.len() == 15);
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
