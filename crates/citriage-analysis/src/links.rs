//! Fix PRs linked to patterns, for the tiered action plan: the user names which PRs
//! address which failures (a regex over category names, test names and failure text),
//! citriage reads each PR's state from GitHub (or its cache), and the plan places it —
//! merged in the window → Tier 0 with what it fixed, open → Tier 1 with what blocks it,
//! closed unmerged → Tier 1 as a fix that needs redoing. Pure: states come in as data.

use citriage_model::{Day, Evidence};
use serde::Serialize;

/// A PR's state as read (the CLI fills this from GitHub).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum LinkState {
    Merged {
        at: Day,
    },
    Open {
        draft: bool,
        blocking: Vec<String>,
    },
    ClosedUnmerged,
    /// Not found or not checked; says why.
    Unknown {
        why: String,
    },
}

/// One user-declared link and what GitHub said about the PR.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrLink {
    /// `owner/repo#N`.
    pub reference: String,
    pub url: String,
    pub title: String,
    /// Regex over category names, test names and failure texts of the selected patterns.
    pub matches: String,
    pub note: String,
    pub state: LinkState,
    /// The PR state evidence (absent when it was not read).
    pub evidence: Option<Evidence>,
}

/// A link placed against the patterns it matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacedLink {
    pub link: PrLink,
    /// `Pattern A.1 (category)`-style labels of the matched sub-patterns or patterns.
    pub patterns: Vec<String>,
    /// Jobs of the matched patterns (what merging clears).
    pub jobs: usize,
}
