//! The failure side: the lines that explain a failure (messages, failure lines,
//! stack traces), the failing tests, and the components the failure is about or
//! names; with what links are drawn from, extracted once: distinctive tokens,
//! the source files its stack names (`file.go:NNN`), failing commands, the
//! words of its subject.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::lines::LogLine;
use crate::tokens::{Matcher, Token};

/// A component (or owner) named by a failure.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ComponentRef {
    /// Core name (`cloud-credential`, `ingress`, `sig-network`).
    pub key: String,
    /// How the failure names it (`test owner [bz-Insights Operator]`).
    pub how: String,
    /// True when the component is the subject of the failure (the failing
    /// test's owner or object), not merely mentioned.
    pub subject: bool,
}

/// One failure, as links see it.
#[derive(Debug, Clone, Default)]
pub struct Failure {
    /// The lines that explain the failure.
    pub lines: Vec<LogLine>,
    /// The failing tests.
    pub tests: Vec<String>,
    pub tokens: Vec<Token>,
    /// Source files the evidence names → line index.
    pub files: BTreeMap<String, usize>,
    /// Failing `oc` sub-command paths.
    pub commands: Vec<(Vec<String>, usize)>,
    /// Subject words → where they came from, and whether an error line (not
    /// only a test name) names them.
    pub words: BTreeMap<String, (String, bool)>,
    /// Components the failure is about or names.
    pub components: Vec<ComponentRef>,
}

impl Failure {
    /// The failure of these lines and tests, about these components.
    pub fn new(lines: Vec<LogLine>, tests: Vec<String>, components: Vec<ComponentRef>) -> Failure {
        let m = Matcher;
        Failure {
            tokens: m.tokens(&lines),
            files: m.evidence_files(&lines),
            commands: m.commands(&lines),
            words: m.subject_words(&tests, &lines),
            components,
            lines,
            tests,
        }
    }
}
