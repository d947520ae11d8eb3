//! The failure side: the lines that explain a failure (messages, failure lines,
//! stack traces), the failing tests, and the components the failure is about or
//! names; with what links are drawn from, extracted once: distinctive tokens,
//! the source files its stack names (`file.go:NNN`), failing commands, the
//! words of its subject.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use std::sync::OnceLock;

use regex::Regex;

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
    /// The explaining lines as a program printed them (log prefixes and the
    /// tests' names left out), one per line: what a format string renders.
    pub rendered: Vec<String>,
    /// The failing tests' SIGs (`node`) → how the failure says so (a test's
    /// `[sig-node]` tag, its file's folder or `OWNERS`).
    pub sigs: BTreeMap<String, String>,
}

impl Failure {
    /// The failure of these lines and tests, about these components. Tokens,
    /// files and commands come from the lines without the failing tests' names
    /// and tags a line may repeat (an aggregator's "TEST: Failed: Passed 3
    /// times..."): a test's name says what failed, not why.
    pub fn new(lines: Vec<LogLine>, tests: Vec<String>, components: Vec<ComponentRef>) -> Failure {
        let m = Matcher;
        let explaining = without_tests(&lines, &tests);
        let mut sigs = BTreeMap::new();
        for t in &tests {
            for sig in crate::owners::sigs_of_test(t) {
                sigs.entry(sig).or_insert_with(|| format!("test {t}"));
            }
        }
        Failure {
            rendered: explaining.iter().map(|l| crate::tokens::printed(&l.text)).collect(),
            sigs,
            tokens: m.tokens(&explaining),
            files: m.evidence_files(&explaining),
            commands: m.commands(&explaining),
            words: m.subject_words(&tests, &lines),
            components,
            lines,
            tests,
        }
    }
}

impl Failure {
    /// The failure with more SIGs of its failing tests (`node` → how it is
    /// known: the test's file and its `OWNERS`); those it knows stay as they are.
    pub fn with_sigs(mut self, sigs: BTreeMap<String, String>) -> Failure {
        for (sig, how) in sigs {
            self.sigs.entry(sig).or_insert(how);
        }
        self
    }
}

/// The lines with the tests' names and their bracketed tags (`[sig-network]`,
/// `[Jira:"Networking"]`) blanked, at the same places (one line each).
fn without_tests(lines: &[LogLine], tests: &[String]) -> Vec<LogLine> {
    static TAG: OnceLock<Regex> = OnceLock::new();
    let tag = TAG.get_or_init(|| Regex::new(r"\[[^\]\n]*\]").expect("built-in pattern"));
    lines
        .iter()
        .map(|l| {
            let mut text = l.text.clone();
            for t in tests.iter().filter(|t| t.len() >= 8) {
                text = text.replace(t.as_str(), " ");
            }
            LogLine { text: tag.replace_all(&text, " ").into_owned(), at: l.at.clone() }
        })
        .collect()
}
