//! The failure side's lines: each quoted with where it is (the artifact file,
//! its URL when known, a 1-based line), so every link can cite the failure line
//! it matched.

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Where a piece of evidence is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Location {
    /// Artifact path relative to the run (`build-log.txt`, `artifacts/.../junit.xml`).
    pub file: String,
    /// Browsable URL of the file, when known.
    pub url: Option<String>,
    /// 1-based line.
    pub line: Option<u32>,
}

impl Location {
    /// `file:line` (or `file`).
    pub fn cite(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.clone(),
        }
    }
}

/// One cited line of a log or failure text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LogLine {
    pub text: String,
    pub at: Location,
}

/// The line without a Go test log prefix (`    util.go:4275: `).
pub fn strip_source_prefix(text: &str) -> &str {
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    let t = text.trim_start();
    let prefix = PREFIX.get_or_init(|| Regex::new(r"^[A-Za-z0-9_.-]+\.go:\d+: ").expect("built-in pattern"));
    match prefix.find(t) {
        Some(m) => &t[m.end()..],
        None => t,
    }
}
