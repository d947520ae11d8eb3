//! Suspect scoring: a deterministic, itemized rubric per (failed job, failure
//! mode, candidate), capped at 100, whose bands are earned only with
//! corroborated, specific evidence.
//!
//! A *link* ties a candidate to a failure mode; each is quoted with what makes
//! it specific:
//!
//! | signal | points | fires when |
//! |---|---|---|
//! | `error_message_match` | +40 / +20 | a string, symbol, resource or file name taken from the lines that explain the failure appears in an **added** line of a product file of the diff; +40 when the token is specific (found in exactly one candidate of the window), +20 when 2-3 candidates carry it; tokens in 4+ candidates earn nothing |
//! | `code_path` | +20 / +10 | the diff modifies a file the evidence names (stack frame, log prefix), the source of the failing command (`oc adm release extract` → `…/release/extract.go`), or removes a line carrying an evidence token; +20 when specific |
//! | `test_binary` | +20 / +10 | test binaries could not be listed or extracted and the diff modifies that binary (+20) or other test-extension code (+10) |
//! | `ci_step` | +20 | a CI-configuration change modifies the failing step (`<ref>-commands.sh`, `<ref>-ref.yaml`) or the job's configuration |
//! | `title_match` | +15 / +10 | a word of the failure's subject appears in the candidate's title and in no other title of the window: +15 when an error line names it (a quoted resource, a `kind/name`, the failing command), +10 when only the failing test's name does |
//! | `component` | +20 / +10 | the candidate's repository or image owns the failing component: the test's owner, ClusterOperator or namespace (+20) or a component the failure names (+10) |
//! | `new_failure_mode` | +30 | the mode began with the payload that contains the candidate (the job passed, or failed differently, in the payload before) and the candidate has a link |
//! | `component_exclusivity` | +10 | the candidate is the only linked candidate of the mode |
//! | `multi_job_correlation` | +10 | the candidate has a code-path or stronger link with the same root cause in 2+ failed jobs |
//! | `presubmit_coverage_gap` | +10 | the candidate is linked, its presubmit jobs are known, and none covers the failing job's scenario |
//!
//! Bands need corroboration, not one token: a score of 85 or more (stage a
//! revert) requires a specific verbatim match, an established onset in the
//! candidate's payload and a second, independent link (component, code path,
//! title or test binary); 60-84 (bisect) requires an established onset, a
//! specific link and a second kind of link (a CI change modifying the failing
//! step suffices alone). A score that lacks them is capped below the band, and
//! the cap says what is missing.
//!
//! Infrastructure causes, flakes, informing-only failures and failures without
//! evidence give candidates nothing (each carries a zero-point note saying
//! why); a failure classified as a CI-configuration problem gives payload PRs
//! nothing unless they match the error verbatim and specifically.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::classify::FailureClass;
use crate::components::{self, ComponentRef};
use crate::diff::ParsedDiff;
use crate::evidence::LogLine;
use crate::specificity::{describe_df, CandidateIndex, WindowIndex};

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

/// Rubric signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Signal {
    NewFailureMode,
    ComponentExclusivity,
    ErrorMessageMatch,
    CodePath,
    TestBinary,
    CiStep,
    TitleMatch,
    Component,
    MultiJobCorrelation,
    PresubmitCoverageGap,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::NewFailureMode => "new_failure_mode",
            Signal::ComponentExclusivity => "component_exclusivity",
            Signal::ErrorMessageMatch => "error_message_match",
            Signal::CodePath => "code_path",
            Signal::TestBinary => "test_binary",
            Signal::CiStep => "ci_step",
            Signal::TitleMatch => "title_match",
            Signal::Component => "component",
            Signal::MultiJobCorrelation => "multi_job_correlation",
            Signal::PresubmitCoverageGap => "presubmit_coverage_gap",
        }
    }
}

/// One fired signal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScoreItem {
    pub signal: Signal,
    pub points: u32,
    pub evidence: String,
}

/// A verbatim match between failure evidence and an added diff line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorMatch {
    /// The string or symbol found in both.
    pub token: String,
    /// `phrase`, `quoted`, `symbol`, `name`, `file`, `flag`.
    pub token_kind: String,
    /// The evidence line, with its location.
    pub log: LogLine,
    /// The diff file and new-side line.
    pub diff_file: String,
    pub diff_line: u32,
    /// The added line, verbatim.
    pub diff_text: String,
    /// How many candidates of the window carry the token (1 = specific).
    #[serde(default)]
    pub df: u32,
    /// Why the match is (or is not) specific.
    #[serde(default)]
    pub why_specific: String,
}

/// How a candidate relates to a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Correlation {
    None,
    Subsystem,
    CodePath,
    Direct,
}

/// The score of one (job, mode, candidate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateScore {
    pub candidate: String,
    /// Short verification name of the failed job.
    pub job: String,
    /// Signature id of the failure mode.
    pub mode: String,
    pub root_cause: String,
    pub items: Vec<ScoreItem>,
    /// `min(100, sum of items)`, lowered below a band whose conditions are not met.
    pub total: u32,
    pub correlation: Correlation,
    pub error_match: Option<ErrorMatch>,
    /// Why nothing fired, when nothing did.
    pub note: Option<String>,
    /// Why the total is below the sum of its items (a band's missing condition).
    #[serde(default)]
    pub cap: Option<String>,
}

/// Kinds of evidence tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TokenKind {
    Symbol,
    Name,
    File,
    Flag,
    Quoted,
    Phrase,
}

impl TokenKind {
    fn name(self) -> &'static str {
        match self {
            TokenKind::Symbol => "symbol",
            TokenKind::Name => "name",
            TokenKind::File => "file",
            TokenKind::Flag => "flag",
            TokenKind::Quoted => "quoted",
            TokenKind::Phrase => "phrase",
        }
    }

    fn rank(self) -> u8 {
        match self {
            TokenKind::Phrase | TokenKind::Quoted | TokenKind::Flag => 4,
            TokenKind::Name | TokenKind::File => 3,
            TokenKind::Symbol => 1,
        }
    }
}

/// A distinctive string of the failure evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub kind: TokenKind,
    /// Index of the evidence line it came from.
    pub line: usize,
}

/// Code symbols and words too common in failure text to identify a change.
const GENERIC_SYMBOLS: &[&str] = &[
    "ClusterVersion",
    "ClusterOperator",
    "ClusterOperators",
    "ConfigMap",
    "DaemonSet",
    "StatefulSet",
    "ReplicaSet",
    "ServiceAccount",
    "CustomResourceDefinition",
    "MachineConfig",
    "MachineConfigPool",
    "FeatureGate",
    "KubeAPIServer",
    "HostedCluster",
    "HostedControlPlane",
    "NodePool",
    "OpenShift",
    "Kubernetes",
    "GitHub",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "InternalError",
    "StatusCode",
    "RetrievePayload",
    "NoSchedule",
    "NoExecute",
    "PreferNoSchedule",
    "Available",
    "Degraded",
    "Progressing",
    "Upgradeable",
    "NodeReady",
    "PodReady",
    "Running",
    "Pending",
    "Failed",
    "Succeeded",
    "Unknown",
    "Bootstrap",
    "ExitError",
    "ProcessState",
    "wrapError",
    "errorString",
    "StatusError",
    "ContainerFailed",
    "FallbackToLogsOnError",
];

const GENERIC_PHRASES: &[&str] = &[
    "timed out waiting for the condition",
    "context deadline exceeded",
    "connection refused",
    "the server could not find the requested resource",
    "an error on the server",
    "unexpected error",
    "no such host",
    "i/o timeout",
    "exit status 1",
    "process did not finish before",
    "expected an error to have occurred",
    "unexpected error occurred",
];

/// Words of a failure that say nothing about which change caused it.
const STOP_WORDS: &[&str] = &[
    "about",
    "above",
    "adds",
    "added",
    "adding",
    "after",
    "again",
    "against",
    "allow",
    "allows",
    "also",
    "always",
    "apis",
    "available",
    "been",
    "before",
    "being",
    "between",
    "both",
    "bump",
    "bumps",
    "call",
    "cannot",
    "change",
    "changes",
    "check",
    "checks",
    "client",
    "cluster",
    "clusters",
    "code",
    "condition",
    "conditions",
    "config",
    "configuration",
    "could",
    "create",
    "created",
    "creating",
    "default",
    "delete",
    "deleted",
    "does",
    "done",
    "down",
    "during",
    "each",
    "enable",
    "enabled",
    "ensure",
    "error",
    "errors",
    "even",
    "every",
    "exist",
    "exists",
    "expected",
    "fail",
    "failed",
    "failing",
    "fails",
    "failure",
    "failures",
    "false",
    "field",
    "fields",
    "find",
    "fixes",
    "fixed",
    "from",
    "further",
    "gets",
    "handle",
    "have",
    "having",
    "into",
    "issue",
    "jira",
    "just",
    "keep",
    "kube",
    "kubernetes",
    "like",
    "list",
    "lists",
    "make",
    "makes",
    "many",
    "merge",
    "missing",
    "more",
    "most",
    "must",
    "name",
    "names",
    "namespace",
    "namespaces",
    "need",
    "needs",
    "never",
    "node",
    "nodes",
    "none",
    "only",
    "openshift",
    "operator",
    "operators",
    "other",
    "over",
    "pass",
    "passed",
    "passes",
    "payload",
    "pods",
    "release",
    "remove",
    "removed",
    "removes",
    "resource",
    "resources",
    "retry",
    "same",
    "server",
    "should",
    "since",
    "some",
    "stay",
    "still",
    "support",
    "supports",
    "sure",
    "sync",
    "test",
    "tests",
    "testing",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "time",
    "timed",
    "timeout",
    "times",
    "true",
    "type",
    "types",
    "under",
    "unexpected",
    "unit",
    "until",
    "update",
    "updated",
    "updates",
    "upgrade",
    "upgrades",
    "upstream",
    "downstream",
    "used",
    "uses",
    "using",
    "value",
    "values",
    "version",
    "versions",
    "wait",
    "waiting",
    "want",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "will",
    "with",
    "within",
    "without",
    "work",
    "would",
    "yaml",
    "json",
    "suite",
    "feature",
    "serial",
    "parallel",
    "conformance",
    "disruptive",
    "slow",
    "early",
    "late",
    "monitor",
    "invariants",
    "legacy",
    "status",
    "state",
    "start",
    "started",
    "running",
    "ready",
    "image",
    "images",
    "container",
    "containers",
    "controller",
    "controllers",
    "object",
    "objects",
    "request",
    "requests",
    "response",
    "found",
    "occurred",
    "apigroup",
    "openshiftio",
    "techpreview",
    "ocpfeaturegate",
    "install",
    "installer",
    "network",
    "networking",
    "storage",
    "apiserver",
    "machine",
    "machines",
    "route",
    "routes",
    "service",
    "services",
    "deployment",
    "deployments",
    "daemonset",
    "secret",
    "secrets",
    "event",
    "events",
    "metric",
    "metrics",
    "alert",
    "alerts",
    "rule",
    "rules",
    "policy",
    "policies",
    "pull",
    "push",
    "build",
    "builds",
    "task",
    "tasks",
    "step",
    "steps",
    "phase",
    "host",
    "hosts",
    "port",
    "ports",
    "watch",
    "cache",
    "level",
    "info",
    "debug",
    "warn",
    "deleted",
    "recreated",
    "accepted",
    "enabled",
    "disabled",
    "reachable",
    "correctly",
    "properly",
    "successfully",
    "minutes",
    "seconds",
    "repeat",
    "pathologically",
    "happened",
    "frequently",
    "something",
    "wrong",
    "clusteroperator",
    "clusteroperators",
    "endpoint",
    "endpoints",
    "valid",
    "proper",
    "expect",
    "object",
    "initial",
    "final",
    "complete",
    "completed",
    "collect",
    "collection",
    "cleanup",
    "annotation",
    "annotations",
    "label",
    "labels",
    "workload",
    "workloads",
    "default",
    "given",
    "match",
    "matches",
];

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("built-in pattern"))
}

fn generic_phrase(p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    GENERIC_PHRASES.iter().any(|g| l.contains(g) && l.replacen(g, " ", 1).split_whitespace().count() < 4)
}

/// A code symbol worth matching: 6+ characters, camel case or snake case (or a
/// dotted code path), not an everyday API word.
pub fn distinctive_symbol(s: &str) -> bool {
    let core = s.trim_matches(|c: char| c == '(' || c == ')' || c == '*' || c == '.');
    if core.len() < 6 || GENERIC_SYMBOLS.contains(&core) {
        return false;
    }
    let has_dot = core.contains('.');
    let has_us = core.contains('_') && core.chars().any(|c| c.is_ascii_alphabetic());
    let inner_upper =
        core.chars().skip(1).any(|c| c.is_ascii_uppercase()) && core.chars().any(|c| c.is_ascii_lowercase());
    if has_dot {
        let parts: Vec<&str> = core.split('.').collect();
        let code_like = parts.iter().any(|p| p.chars().skip(1).any(|c| c.is_ascii_uppercase())) || core.contains("(*");
        return code_like && parts.iter().all(|p| !p.is_empty());
    }
    (inner_upper || has_us) && !core.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
}

/// A run-specific piece: random suffixes (`wc4jk`, `7f9c2`), numbers, hashes.
fn random_piece(p: &str) -> bool {
    let digits = p.chars().filter(|c| c.is_ascii_digit()).count();
    let letters = p.chars().filter(|c| c.is_ascii_alphabetic()).count();
    (digits > 0 && letters > 0 && p.len() >= 4 && !p.starts_with('v') && !p.ends_with("ext"))
        || (digits >= 4 && letters == 0)
        || (p.len() >= 7 && digits > 0 && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// A resource or component name: lower case, 2+ hyphens, 12+ characters, no
/// run-specific piece (`control-plane-metrics-forwarder`).
fn distinctive_name(s: &str) -> bool {
    let pieces: Vec<&str> = s.split('-').collect();
    s.len() >= 12
        && pieces.len() >= 3
        && pieces.iter().all(|p| !p.is_empty() && !random_piece(p))
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A file basename worth matching: a name with an extension, 8+ characters,
/// no run-specific piece.
fn distinctive_file(s: &str) -> bool {
    let Some((stem, ext)) = s.rsplit_once('.') else { return false };
    s.len() >= 8
        && !stem.is_empty()
        && (1..=5).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && stem.split(['-', '_', '.']).all(|p| !random_piece(p))
}

/// File basenames too common to point at a change.
const GENERIC_FILES: &[&str] = &[
    "main.go",
    "util.go",
    "utils.go",
    "types.go",
    "doc.go",
    "helpers.go",
    "helper.go",
    "const.go",
    "constants.go",
    "options.go",
    "config.go",
    "run.go",
    "root.go",
    "errors.go",
    "log.go",
    "logging.go",
    "wait.go",
    "client.go",
    "framework.go",
    "suite_test.go",
    "commands.sh",
    "entrypoint.sh",
    "Makefile",
];

/// Stems that name a file's role, not its subject (`common.sh`, `setup.py`,
/// `install.yaml`): every repository has files so named, so a match on one says
/// nothing about which change broke a job, however few diffs of a window show it.
const GENERIC_STEMS: &[&str] = &[
    "common",
    "util",
    "utils",
    "helper",
    "helpers",
    "lib",
    "libs",
    "functions",
    "main",
    "config",
    "configs",
    "settings",
    "defaults",
    "vars",
    "variables",
    "env",
    "environment",
    "constants",
    "const",
    "types",
    "options",
    "errors",
    "log",
    "logging",
    "run",
    "root",
    "setup",
    "install",
    "uninstall",
    "init",
    "start",
    "stop",
    "build",
    "deploy",
    "test",
    "tests",
    "script",
    "scripts",
    "commands",
    "entrypoint",
    "wait",
    "client",
    "server",
    "framework",
    "index",
    "readme",
    "changelog",
    "values",
    "kustomization",
];

/// A basename too common to point at a change: a listed file, or one whose stem
/// (before the first dot) only names a role.
fn generic_file(f: &str) -> bool {
    let stem = f.split('.').next().unwrap_or(f).to_ascii_lowercase();
    GENERIC_FILES.contains(&f) || GENERIC_STEMS.contains(&stem.as_str())
}

/// Extracts tokens, files, commands and words from a failure mode's evidence.
#[derive(Default)]
pub struct Matcher;

impl Matcher {
    /// Distinctive tokens of the evidence lines: quoted strings, phrases between
    /// `: ` separators (4+ words, 20+ characters), code symbols, resource names,
    /// file basenames, and flags (only from lines complaining about a flag).
    pub fn tokens(&self, lines: &[LogLine]) -> Vec<Token> {
        static QUOTED: OnceLock<Regex> = OnceLock::new();
        static SYMBOL: OnceLock<Regex> = OnceLock::new();
        static FLAG: OnceLock<Regex> = OnceLock::new();
        static FLAG_LINE: OnceLock<Regex> = OnceLock::new();
        static KLOG: OnceLock<Regex> = OnceLock::new();
        static NAME: OnceLock<Regex> = OnceLock::new();
        static FILE: OnceLock<Regex> = OnceLock::new();
        let quoted = re(&QUOTED, r#""([^"\n]{6,200})"|`([^`\n]{6,200})`|'([^'\n]{6,200})'"#);
        let symbol = re(&SYMBOL, r"\(?\*?[A-Za-z_][A-Za-z0-9_]*\)?(?:\.\(?\*?[A-Za-z_][A-Za-z0-9_]*\)?)*");
        let flag = re(&FLAG, r"--[a-z][a-z0-9]*(?:-[a-z0-9]+)+|--[a-z][a-z0-9]{3,}");
        let flag_line = re(
            &FLAG_LINE,
            r"(?i)(unknown (shorthand )?flag|flag provided but not defined|invalid argument .* for .*flag|unrecognized (option|argument)|no such option)",
        );
        let klog = re(&KLOG, r"^[IWEF]\d{4} \d\d:\d\d:\d\d(\.\d+)?\s+\d+\s+");
        let name = re(&NAME, r"[a-z][a-z0-9]*(?:-[a-z0-9]+){2,}");
        let file = re(&FILE, r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.[A-Za-z0-9]{1,5}\b");
        let mut out: Vec<Token> = Vec::new();
        let mut seen = BTreeSet::new();
        let mut push = |out: &mut Vec<Token>, text: String, kind: TokenKind, line: usize| {
            if seen.insert(text.clone()) {
                out.push(Token { text, kind, line });
            }
        };
        for (i, l) in lines.iter().enumerate() {
            let text = klog.replace(&l.text, "");
            let text = crate::lines::strip_source_prefix(&text).to_string();
            for c in quoted.captures_iter(&text) {
                let q = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)).map(|m| m.as_str().trim()).unwrap_or("");
                let letters = q.chars().filter(|c| c.is_ascii_alphabetic()).count();
                if q.contains('/') && !q.contains(' ') {
                    // A path: its basename may be what a change added.
                    let base = q.rsplit('/').next().unwrap_or("");
                    if distinctive_file(base) {
                        push(&mut out, base.to_string(), TokenKind::File, i);
                    }
                    continue;
                }
                if q.len() >= 6
                    && letters >= 4
                    && !generic_phrase(q)
                    && q.split(['-', '_', ' ', '.', '/']).all(|p| !random_piece(p))
                    && (q.contains(' ') || distinctive_symbol(q) || distinctive_name(q) || q.len() >= 12)
                {
                    push(&mut out, q.to_string(), TokenKind::Quoted, i);
                }
            }
            for seg in text.split(": ") {
                let seg = seg.trim().trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c == ',' || c == '`');
                let words = seg.split_whitespace().count();
                if words >= 4
                    && seg.len() >= 20
                    && seg.len() <= 200
                    && !generic_phrase(seg)
                    && seg
                        .split_whitespace()
                        .all(|w| !random_piece(w.trim_matches(|c: char| !c.is_ascii_alphanumeric())))
                {
                    push(&mut out, seg.to_string(), TokenKind::Phrase, i);
                }
            }
            if flag_line.is_match(&text) {
                for m in flag.find_iter(&text) {
                    push(&mut out, m.as_str().to_string(), TokenKind::Flag, i);
                }
            }
            for m in name.find_iter(&text) {
                let flagged = text[..m.start()].ends_with('-');
                if !flagged && distinctive_name(m.as_str()) {
                    push(&mut out, m.as_str().to_string(), TokenKind::Name, i);
                }
            }
            for m in file.find_iter(&text) {
                let f = m.as_str().rsplit('/').next().unwrap_or("");
                if distinctive_file(f) && !generic_file(f) && !f.ends_with(".go") && !f.contains("..") {
                    push(&mut out, f.to_string(), TokenKind::File, i);
                }
            }
            for m in symbol.find_iter(&text) {
                let s = m.as_str().trim_start_matches('(').trim_end_matches(')').trim_end_matches('.');
                if distinctive_symbol(s) {
                    push(&mut out, s.to_string(), TokenKind::Symbol, i);
                }
            }
        }
        out
    }

    /// Source files named by the evidence (stack frames, klog and Go test
    /// prefixes), with the index of the line naming them.
    pub fn evidence_files(&self, lines: &[LogLine]) -> BTreeMap<String, usize> {
        static FRAME: OnceLock<Regex> = OnceLock::new();
        let frame = re(&FRAME, r"([A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:go|py|sh|rs|java|ts|js))(?::\d+)");
        let mut out = BTreeMap::new();
        for (i, l) in lines.iter().enumerate() {
            for c in frame.captures_iter(&l.text) {
                let f = c[1].to_string();
                if f.len() >= 5 && !generic_file(&f) {
                    out.entry(f).or_insert(i);
                }
            }
        }
        out
    }

    /// Sub-command paths of failing `oc` commands (`oc adm release extract` →
    /// `["release", "extract"]`), with the line index.
    pub fn commands(&self, lines: &[LogLine]) -> Vec<(Vec<String>, usize)> {
        static OC: OnceLock<Regex> = OnceLock::new();
        let oc = re(&OC, r"(?:^|[\s:>])oc (?:adm )?((?:[a-z][a-z-]+ ){1,2}[a-z][a-z-]+|[a-z][a-z-]+ [a-z][a-z-]+)");
        let mut out: Vec<(Vec<String>, usize)> = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            for c in oc.captures_iter(&l.text) {
                let words: Vec<String> =
                    c[1].split_whitespace().take_while(|w| !w.starts_with('-')).map(str::to_string).collect();
                // Two words at least, the last two are the path (`release extract`).
                if words.len() >= 2 {
                    let tail = words[words.len() - 2..].to_vec();
                    if !matches!(tail[0].as_str(), "get" | "create" | "apply" | "delete" | "patch" | "wait" | "logs")
                        && !out.iter().any(|(w, _)| *w == tail)
                    {
                        out.push((tail, i));
                    }
                }
            }
        }
        out
    }

    /// Words of the failure's subject for title matching, lower case, 5+
    /// letters, no stop words, with where they came from: the failing tests'
    /// names (owner tags dropped, `kind/name` references reduced to their
    /// kind), the quoted strings and `kind/name` kinds of the explaining lines,
    /// and the failing `oc` sub-commands. Paths and URLs say nothing of the subject.
    pub fn subject_words(&self, tests: &[String], lines: &[LogLine]) -> BTreeMap<String, (String, bool)> {
        static TAG: OnceLock<Regex> = OnceLock::new();
        static REF: OnceLock<Regex> = OnceLock::new();
        static QUOTED: OnceLock<Regex> = OnceLock::new();
        let tag = re(&TAG, r"\[[^\]]*\]");
        let rref = re(&REF, r"\b([A-Za-z][A-Za-z.]*)/[A-Za-z0-9][\w.-]*");
        let quoted = re(&QUOTED, r#""([^"\n]{3,120})"|'([^'\n]{3,120})'"#);
        let mut out = BTreeMap::new();
        let add = |text: &str, from: &str, strong: bool, out: &mut BTreeMap<String, (String, bool)>| {
            for w in crate::specificity::words(text) {
                if w.len() >= 5 && !STOP_WORDS.contains(&w.as_str()) {
                    let e = out.entry(w).or_insert_with(|| (from.to_string(), strong));
                    if strong && !e.1 {
                        *e = (from.to_string(), true);
                    }
                }
            }
        };
        for t in tests {
            let name = tag.replace_all(t, " ");
            let name = rref.replace_all(&name, "$1");
            add(&name, &format!("test {t}"), false, &mut out);
        }
        for l in lines {
            let from = format!("{}: {}", l.at.cite(), l.text);
            for c in quoted.captures_iter(&l.text) {
                let q = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str()).unwrap_or("");
                if !q.contains('/') && !q.contains("://") {
                    add(q, &from, true, &mut out);
                }
            }
            for c in rref.captures_iter(&l.text) {
                let start = c.get(0).map(|m| m.start()).unwrap_or(0);
                let before = l.text[..start].chars().next_back();
                if !before.is_some_and(|b| b == '/' || b == '.' || b == ':' || b.is_ascii_alphanumeric()) {
                    add(&c[1], &from, true, &mut out);
                }
            }
        }
        for (comps, li) in self.commands(lines) {
            let l = &lines[li];
            add(&comps.join(" "), &format!("{}: {}", l.at.cite(), l.text), true, &mut out);
        }
        out
    }
}

/// Everything about one failure mode the links are drawn from.
#[derive(Debug, Clone, Default)]
pub struct ModeEvidence {
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
    pub components: Vec<ComponentRef>,
    /// Test binaries a test-binary failure names (true: named by the error line itself).
    pub binaries: Vec<(String, bool)>,
    /// Test binaries could not be listed or extracted.
    pub test_binary_failure: bool,
    /// Step-registry references of the failing CI step.
    pub step_refs: Vec<String>,
    /// CI configuration files of the failing job.
    pub ci_paths: Vec<String>,
    /// The failing CI step (`e2e-aws-ovn-fips-ipi-install-install`).
    pub failed_step: Option<String>,
    /// The Prow job name of the failed run.
    pub prow_job: String,
}

impl ModeEvidence {
    /// Builds the evidence of a mode from its explaining lines, failing tests and
    /// (for test-binary failures) the binaries named; the CI-step fields
    /// (`step_refs`, `ci_paths`, `failed_step`, `prow_job`) are set by the caller.
    pub fn new(
        m: &Matcher,
        lines: Vec<LogLine>,
        tests: Vec<String>,
        binaries: Vec<(String, bool)>,
        test_binary_failure: bool,
    ) -> ModeEvidence {
        let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        let components = components::failure_components(&tests, &texts, &binaries, test_binary_failure);
        ModeEvidence {
            tokens: m.tokens(&lines),
            files: m.evidence_files(&lines),
            commands: m.commands(&lines),
            words: m.subject_words(&tests, &lines),
            components,
            lines,
            tests,
            binaries,
            test_binary_failure,
            step_refs: Vec::new(),
            ci_paths: Vec::new(),
            failed_step: None,
            prow_job: String::new(),
        }
    }

    /// True when this job runs the tests of `org/repo`: the job is the
    /// repository's own, or the failure cites the repository's code.
    pub fn runs_tests_of(&self, repo: &str) -> bool {
        let Some((org, name)) = repo.split_once('/') else { return false };
        self.prow_job.contains(&format!("-{org}-{name}-"))
            || self.lines.iter().any(|l| l.text.contains(&format!("github.com/{org}/{name}/")))
    }
}

/// True for test code that ships nowhere: unit tests, e2e suites and test
/// utilities of a repository. Test-extension binaries (`*-tests-ext`,
/// `tests-extension/`) run in payload jobs and are not counted here.
pub fn is_test_path(path: &str) -> bool {
    let l = path.to_ascii_lowercase();
    if l.contains("tests-ext") || l.contains("test-ext") || l.contains("tests-extension") {
        return false;
    }
    let base = l.rsplit('/').next().unwrap_or(&l);
    base.ends_with("_test.go")
        || base.ends_with(".test.ts")
        || base.ends_with(".spec.ts")
        || base.ends_with(".test.tsx")
        || base.ends_with("_test.py")
        || l.split('/').any(|s| {
            matches!(
                s,
                "test"
                    | "tests"
                    | "e2e"
                    | "testing"
                    | "testutil"
                    | "testutils"
                    | "integration"
                    | "cypress"
                    | "__tests__"
            )
        })
}

/// A link between a candidate and a failure mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub signal: Signal,
    pub points: u32,
    /// The link is specific (rare in the window, or structural).
    pub specific: bool,
    /// What was found, quoted, and why it is specific.
    pub evidence: String,
}

/// What correlating one candidate with one failure mode found.
#[derive(Debug, Clone, Default)]
pub struct CorrelationResult {
    pub level: Option<Correlation>,
    pub error_match: Option<ErrorMatch>,
    pub links: Vec<Link>,
    /// Why the candidate was ruled out before looking for links.
    pub excluded: Option<String>,
}

impl CorrelationResult {
    /// The strongest correlation.
    pub fn level(&self) -> Correlation {
        self.level.unwrap_or(Correlation::None)
    }

    fn add(&mut self, l: Link, level: Correlation) {
        if self.level.is_none_or(|x| x < level) {
            self.level = Some(level);
        }
        self.links.push(l);
    }

    /// True when a link of this signal exists.
    pub fn has(&self, s: Signal) -> bool {
        self.links.iter().any(|l| l.signal == s)
    }
}

/// Stems of step-registry files (`ipi-install-install-commands.sh` → `ipi-install-install`).
pub fn step_stem(path: &str) -> Option<&str> {
    let base = path.rsplit('/').next().unwrap_or(path);
    ["-commands.sh", "-ref.yaml", "-chain.yaml", "-workflow.yaml", "-ref.metadata.json", "-chain.metadata.json"]
        .iter()
        .find_map(|s| base.strip_suffix(s))
        .filter(|s| s.len() >= 4)
}

/// Correlates a candidate with a failure mode's evidence.
pub fn correlate(ev: &ModeEvidence, c: &Candidate, ix: &CandidateIndex, w: &WindowIndex) -> CorrelationResult {
    let mut r = CorrelationResult::default();
    let n = w.len().max(1);
    // A change confined to a repository's own tests breaks only jobs that run them.
    if c.kind == CandidateKind::Pr
        && ix.has_product()
        && ix.files.iter().all(|p| is_test_path(p))
        && !c.repo.as_deref().is_some_and(|repo| ev.runs_tests_of(repo))
        // The test framework itself (listing or extracting test binaries) is the exception.
        && !(ev.test_binary_failure
            && ev
                .components
                .iter()
                .any(|cr| cr.subject && components::candidate_keys(c.repo.as_deref(), &c.images).contains(&cr.key)))
    {
        r.excluded = Some("the change touches only its repository's own tests, which this job does not run".into());
        return r;
    }
    // 1. Verbatim: the best token in an added product line.
    let mut best: Option<(bool, u8, usize, usize, ErrorMatch)> = None;
    for t in &ev.tokens {
        let Some(hit) = ix.added_hit(&t.text) else { continue };
        let df = w.df(&t.text).max(1);
        if df > 3 {
            continue;
        }
        let key = (df == 1, t.kind.rank(), t.text.len(), usize::MAX - t.line);
        if best.as_ref().is_some_and(|(s, k, len, li, _)| (*s, *k, *len, *li) >= key) {
            continue;
        }
        let why = format!("{} `{}` is {}", t.kind.name(), t.text, describe_df(df, n));
        best = Some((
            key.0,
            key.1,
            key.2,
            key.3,
            ErrorMatch {
                token: t.text.clone(),
                token_kind: t.kind.name().to_string(),
                log: ev.lines[t.line].clone(),
                diff_file: hit.file,
                diff_line: hit.line,
                diff_text: hit.text,
                df,
                why_specific: why,
            },
        ));
    }
    if let Some((specific, _, _, _, em)) = best {
        let evidence = format!(
            "{} `{}` from {} appears in the added line {}:{}; {}",
            em.token_kind,
            em.token,
            em.log.at.cite(),
            em.diff_file,
            em.diff_line,
            em.why_specific
        );
        r.add(
            Link { signal: Signal::ErrorMessageMatch, points: if specific { 40 } else { 20 }, specific, evidence },
            Correlation::Direct,
        );
        r.error_match = Some(em);
    }
    // 2. Code path: files the evidence names, the failing command's source,
    //    a removed line carrying an evidence token.
    let mut code: Option<Link> = None;
    for (f, li) in &ev.files {
        if !ix.basenames.contains(f) {
            continue;
        }
        let df = w.basename_df(f).max(1);
        if df > 3 {
            continue;
        }
        let path = ix.files.iter().find(|p| p.ends_with(&format!("/{f}")) || *p == f).cloned().unwrap_or_default();
        let l = Link {
            signal: Signal::CodePath,
            points: if df == 1 { 20 } else { 10 },
            specific: df == 1,
            evidence: format!(
                "the evidence names `{f}` ({}), which the diff modifies ({path}); {} modify a file of that name",
                ev.lines[*li].at.cite(),
                if df == 1 { "no other candidate of the window does".to_string() } else { format!("{df} candidates") }
            ),
        };
        if code.as_ref().is_none_or(|c| c.points < l.points) {
            code = Some(l);
        }
    }
    for (comps, li) in &ev.commands {
        let files = ix.files_with_components(comps);
        let Some(path) = files.first() else { continue };
        let df = w.components_df(comps).max(1);
        if df > 3 {
            continue;
        }
        let l = Link {
            signal: Signal::CodePath,
            points: if df == 1 { 20 } else { 10 },
            specific: df == 1,
            evidence: format!(
                "the failing command `oc … {}` ({}) is implemented in {path}, which the diff modifies; {}",
                comps.join(" "),
                ev.lines[*li].at.cite(),
                if df == 1 {
                    "no other candidate of the window modifies it".to_string()
                } else {
                    format!("{df} candidates do")
                }
            ),
        };
        if code.as_ref().is_none_or(|c| c.points < l.points) {
            code = Some(l);
        }
    }
    if code.is_none() {
        for t in ev.tokens.iter().filter(|t| t.kind != TokenKind::Symbol || t.text.len() >= 8) {
            if ix.removed_has(&t.text) && w.df(&t.text) == 1 {
                code = Some(Link {
                    signal: Signal::CodePath,
                    points: 20,
                    specific: true,
                    evidence: format!(
                        "the diff removes `{}` (from {}); no other candidate of the window carries it",
                        t.text,
                        ev.lines[t.line].at.cite()
                    ),
                });
                break;
            }
        }
    }
    if let Some(l) = code {
        r.add(l, Correlation::CodePath);
    }
    // 3. Test binaries that could not be listed or extracted.
    if ev.test_binary_failure && ix.has_product() {
        let mut found: Option<Link> = None;
        for (b, _) in &ev.binaries {
            let comps = vec![b.clone()];
            let direct: Vec<&str> = ix
                .files
                .iter()
                .filter(|p| p.split('/').any(|s| s == b || s.strip_suffix(".go") == Some(b.as_str())))
                .map(String::as_str)
                .collect();
            if let Some(p) = direct.first() {
                let df = w.docs.values().filter(|d| d.files.iter().any(|p| p.split('/').any(|s| s == b))).count().max(1)
                    as u32;
                let _ = comps;
                found = Some(Link {
                    signal: Signal::TestBinary,
                    points: if df == 1 { 20 } else { 10 },
                    specific: df == 1,
                    evidence: format!(
                        "test binaries could not be listed or extracted, and the diff modifies the test binary `{b}` ({p}); {}",
                        if df == 1 { "no other candidate of the window does".to_string() } else { format!("{df} candidates do") }
                    ),
                });
                break;
            }
        }
        if found.is_none() {
            if let Some(p) = ix
                .files
                .iter()
                .find(|p| p.contains("tests-ext") || p.contains("test-ext") || p.contains("tests-extension"))
            {
                found = Some(Link {
                    signal: Signal::TestBinary,
                    points: 10,
                    specific: false,
                    evidence: format!("test binaries could not be listed or extracted, and the diff modifies test-extension code ({p})"),
                });
            }
        }
        if let Some(l) = found {
            r.add(l, Correlation::CodePath);
        }
    }
    // 4. CI configuration: the failing step or the job's configuration.
    if c.kind == CandidateKind::CiConfig {
        if let Some(d) = &c.diff {
            for p in d.paths() {
                let hit = step_stem(p).and_then(|stem| {
                    if ev.step_refs.iter().any(|r| r == stem) {
                        return Some(format!("the failing step runs `{stem}`, which the change modifies ({p})"));
                    }
                    ev.failed_step
                        .as_deref()
                        .filter(|s| *s == stem || s.ends_with(&format!("-{stem}")))
                        .map(|step| format!("the failing step `{step}` runs `{stem}`, which the change modifies ({p})"))
                });
                let hit = hit.or_else(|| {
                    ev.ci_paths
                        .iter()
                        .any(|cp| cp == p)
                        .then(|| format!("the change modifies the failing job's configuration ({p})"))
                });
                if let Some(e) = hit {
                    r.add(
                        Link { signal: Signal::CiStep, points: 20, specific: true, evidence: e },
                        Correlation::CodePath,
                    );
                    break;
                }
            }
        }
    }
    // 5. Title words of the failure's subject.
    if c.kind != CandidateKind::RhcosRpm {
        let mut hits: Vec<(&String, &(String, bool))> =
            ev.words.iter().filter(|(word, _)| ix.title_words.contains(*word) && w.title_df(word) == 1).collect();
        hits.sort_by_key(|(word, (_, strong))| (!*strong, (*word).clone()));
        if let Some((word, (from, strong))) = hits.first() {
            r.add(
                Link {
                    signal: Signal::TitleMatch,
                    points: if *strong { 15 } else { 10 },
                    specific: *strong,
                    evidence: format!(
                        "the title \"{}\" names `{word}`, which the failure's {} names ({}); no other title of the window's {n} candidates does",
                        c.title,
                        if *strong { "error" } else { "test name" },
                        from.chars().take(200).collect::<String>()
                    ),
                },
                Correlation::Subsystem,
            );
        }
    }
    // 6. Component ownership.
    if c.kind != CandidateKind::RhcosRpm {
        let keys = components::candidate_keys(c.repo.as_deref(), &c.images);
        let mut best: Option<&ComponentRef> = None;
        for cr in &ev.components {
            if keys.contains(&cr.key) && best.is_none_or(|b| !b.subject && cr.subject) {
                best = Some(cr);
            }
        }
        if let Some(cr) = best {
            r.add(
                Link {
                    signal: Signal::Component,
                    points: if cr.subject { 20 } else { 10 },
                    specific: cr.subject,
                    evidence: format!(
                        "{} ({}) belongs to component `{}`: {}",
                        c.short(),
                        if c.images.is_empty() { c.component.clone() } else { c.images.join(", ") },
                        cr.key,
                        cr.how
                    ),
                },
                Correlation::Subsystem,
            );
        }
    }
    // 7. RHCOS RPM changes: their changelog verbatim, or the package named.
    if let Some(rpm) = &c.rpm {
        if let Some(cl) = &rpm.changelog {
            for t in &ev.tokens {
                if let Some(line) = cl.lines().find(|l| l.contains(&t.text)) {
                    let em = ErrorMatch {
                        token: t.text.clone(),
                        token_kind: t.kind.name().to_string(),
                        log: ev.lines[t.line].clone(),
                        diff_file: format!("{} changelog", rpm.package),
                        diff_line: cl.lines().position(|l| l.contains(&t.text)).map(|p| p as u32 + 1).unwrap_or(0),
                        diff_text: line.to_string(),
                        df: 1,
                        why_specific: format!("the RPM changelog of {} carries it", rpm.package),
                    };
                    r.add(
                        Link {
                            signal: Signal::ErrorMessageMatch,
                            points: 40,
                            specific: true,
                            evidence: format!(
                                "{} `{}` from {} appears in the {} changelog",
                                em.token_kind,
                                em.token,
                                em.log.at.cite(),
                                rpm.package
                            ),
                        },
                        Correlation::Direct,
                    );
                    r.error_match = Some(em);
                    break;
                }
            }
        }
        if r.error_match.is_none() {
            let pkg = rpm.package.to_ascii_lowercase();
            if pkg.len() >= 4 {
                if let Some(l) = ev.lines.iter().find(|l| {
                    crate::specificity::words(&l.text).contains(&pkg)
                        || l.text.to_ascii_lowercase().contains(&format!("{pkg}:"))
                        || l.text.to_ascii_lowercase().contains(&format!("{pkg}-"))
                }) {
                    r.add(
                        Link {
                            signal: Signal::Component,
                            points: 20,
                            specific: true,
                            evidence: format!(
                                "the evidence names `{}` ({}), the changed package of {}",
                                rpm.package,
                                l.at.cite(),
                                rpm.variant_tag
                            ),
                        },
                        Correlation::Subsystem,
                    );
                }
            }
        }
    }
    r
}

/// Everything needed to score one (job, mode, candidate) once correlations are known.
pub struct ScoreContext<'a> {
    pub job: &'a str,
    pub mode: &'a str,
    pub root_cause: &'a str,
    pub class: FailureClass,
    /// The mode began in the candidate's payload: description of the onset evidence.
    pub onset_here: Option<String>,
    /// The candidate is the only one linked to this mode.
    pub sole_linked: bool,
    pub payload: &'a str,
    /// Jobs (other than this one) where the candidate has a code-path or stronger link with this root cause.
    pub other_jobs: Vec<String>,
    /// A presubmit coverage gap, described, when the presubmits are known and miss the scenario.
    pub presubmit_gap: Option<String>,
    /// The mode failed in a CI step (CI-configuration changes may explain it).
    pub in_ci_step: bool,
}

/// Applies the rubric and the band conditions.
pub fn score(ctx: &ScoreContext, c: &Candidate, corr: &CorrelationResult) -> CandidateScore {
    let mut s = CandidateScore {
        candidate: c.id.clone(),
        job: ctx.job.to_string(),
        mode: ctx.mode.to_string(),
        root_cause: ctx.root_cause.to_string(),
        items: Vec::new(),
        total: 0,
        correlation: corr.level(),
        error_match: corr.error_match.clone(),
        note: None,
        cap: None,
    };
    let specific_verbatim = corr.links.iter().any(|l| l.signal == Signal::ErrorMessageMatch && l.specific);
    let excluded = match ctx.class {
        FailureClass::Infrastructure => {
            Some("infrastructure cause: a payload change cannot explain it, so no signal applies")
        }
        FailureClass::InformingOnly => Some("only informing tests failed: they cannot reject the payload"),
        FailureClass::Flake if !specific_verbatim => {
            Some("flake: the failure predates this candidate or passed on retry")
        }
        FailureClass::CiConfiguration if c.kind != CandidateKind::CiConfig && !specific_verbatim => {
            Some("CI-configuration cause: payload changes without a specific verbatim match do not explain it")
        }
        FailureClass::Unknown if !(c.kind == CandidateKind::CiConfig && ctx.in_ci_step) => {
            Some("insufficient evidence: nothing of the failure is known to correlate")
        }
        _ => None,
    };
    if let Some(n) = excluded {
        s.note = Some(n.to_string());
        return s;
    }
    if corr.links.is_empty() {
        s.note = Some(
            corr.excluded
                .clone()
                .unwrap_or_else(|| "no error-message, code-path, title or component link to this failure".into()),
        );
        return s;
    }
    for l in &corr.links {
        s.items.push(ScoreItem { signal: l.signal, points: l.points, evidence: l.evidence.clone() });
    }
    if let Some(onset) = &ctx.onset_here {
        s.items.push(ScoreItem { signal: Signal::NewFailureMode, points: 30, evidence: onset.clone() });
    }
    if ctx.sole_linked {
        s.items.push(ScoreItem {
            signal: Signal::ComponentExclusivity,
            points: 10,
            evidence: format!("the only candidate of the window linked to this failure ({})", ctx.payload),
        });
    }
    if !ctx.other_jobs.is_empty() && corr.level() >= Correlation::CodePath {
        s.items.push(ScoreItem {
            signal: Signal::MultiJobCorrelation,
            points: 10,
            evidence: format!(
                "the same link holds in {} other failed job(s): {}",
                ctx.other_jobs.len(),
                ctx.other_jobs.join(", ")
            ),
        });
    }
    if let Some(g) = &ctx.presubmit_gap {
        if c.kind != CandidateKind::RhcosRpm {
            s.items.push(ScoreItem { signal: Signal::PresubmitCoverageGap, points: 10, evidence: g.clone() });
        }
    }
    s.items.sort_by_key(|i| i.signal);
    s.total = s.items.iter().map(|i| i.points).sum::<u32>().min(100);
    // Band conditions.
    let onset = ctx.onset_here.is_some();
    let kinds: BTreeSet<Signal> = corr.links.iter().map(|l| l.signal).collect();
    let any_specific = corr.links.iter().any(|l| l.specific);
    let ci_step = corr.has(Signal::CiStep);
    let second = kinds.iter().any(|k| *k != Signal::ErrorMessageMatch);
    if c.kind != CandidateKind::RhcosRpm {
        if s.total >= 85 {
            let mut missing = Vec::new();
            if !specific_verbatim {
                missing.push("a specific verbatim match");
            }
            if !onset {
                missing.push("an established onset in its payload");
            }
            if !second {
                missing.push("a second, independent link (component, code path, title or test binary)");
            }
            if !missing.is_empty() {
                s.total = 84;
                s.cap = Some(format!("not a revert: it lacks {}", missing.join(" and ")));
            }
        }
        if s.total >= 60 {
            let mut missing = Vec::new();
            if !onset {
                missing.push("an established onset in its payload");
            }
            if !any_specific {
                missing.push("a specific link");
            }
            if kinds.len() < 2 && !ci_step {
                missing.push("a second kind of link");
            }
            if !missing.is_empty() {
                s.total = 59;
                s.cap = Some(format!("not a bisect: it lacks {}", missing.join(" and ")));
            }
        }
    }
    s
}

fn find_bounded_ci(hay_lower: &str, w: &str) -> bool {
    let hb = hay_lower.as_bytes();
    let mut start = 0;
    while let Some(i) = hay_lower[start..].find(w) {
        let s = start + i;
        let e = s + w.len();
        let ok_l = s == 0 || !(hb[s - 1].is_ascii_alphanumeric());
        let ok_r = e >= hb.len() || !(hb[e].is_ascii_alphanumeric());
        if ok_l && ok_r {
            return true;
        }
        start = s + hay_lower[s..].chars().next().map(char::len_utf8).unwrap_or(1);
        if start >= hay_lower.len() {
            break;
        }
    }
    false
}

/// Scenario words of a job name that a presubmit must share to cover it.
pub fn scenario_words(job: &str) -> BTreeSet<String> {
    const WORDS: &[&str] = &[
        "techpreview",
        "serial",
        "upgrade",
        "fips",
        "ipv6",
        "dualstack",
        "single-node",
        "sno",
        "proxy",
        "disconnected",
        "hypershift",
        "microshift",
        "rt",
        "cgroupsv1",
        "arm64",
        "multi",
        "aws",
        "gcp",
        "azure",
        "metal",
        "vsphere",
        "openstack",
        "ibmcloud",
        "nutanix",
        "ovn",
        "sdn",
    ];
    let lower = job.to_ascii_lowercase();
    WORDS.iter().filter(|w| find_bounded_ci(&lower, w)).map(|w| w.to_string()).collect()
}

/// A presubmit coverage gap: the PR's presubmits are known and none carries all
/// the scenario words of the failing job.
pub fn presubmit_gap(failing_job: &str, presubmits: &[String]) -> Option<String> {
    let need = scenario_words(failing_job);
    if need.is_empty() || presubmits.is_empty() {
        return None;
    }
    let covered = presubmits.iter().any(|p| {
        let have = scenario_words(p);
        need.iter().all(|w| have.contains(w))
    });
    (!covered).then(|| {
        format!(
            "none of the PR's {} presubmit jobs covers the scenario [{}] of {failing_job}",
            presubmits.len(),
            need.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::parse_unified;
    use crate::evidence::Location;

    fn ll(t: &str, line: u32) -> LogLine {
        LogLine { text: t.into(), at: Location { file: "build-log.txt".into(), url: None, line: Some(line) } }
    }

    fn cand(id: &str, repo: &str, title: &str, diff: &str) -> Candidate {
        Candidate {
            id: id.into(),
            kind: CandidateKind::Pr,
            title: title.into(),
            url: None,
            component: repo.rsplit('/').next().unwrap().into(),
            repo: Some(repo.into()),
            number: Some(1),
            images: vec![repo.rsplit('/').next().unwrap().into()],
            payload: Some("p".into()),
            date: None,
            rpm: None,
            diff_available: true,
            diff: Some(parse_unified(diff)),
            presubmits: None,
            is_rebase: false,
        }
    }

    fn window(cs: &[&Candidate]) -> WindowIndex {
        WindowIndex::new(cs.iter().map(|c| (c.id.clone(), CandidateIndex::new(c.diff.as_ref(), &c.title))).collect())
    }

    fn evidence(lines: Vec<LogLine>, tests: Vec<String>) -> ModeEvidence {
        ModeEvidence::new(&Matcher, lines, tests, vec![], false)
    }

    #[test]
    fn tokens() {
        let m = Matcher;
        let lines = vec![ll("E0510 12:00:00.000000 1 reconcile.go:214] failed to reconcile: nil pointer in reconcileNodeLabels while syncing", 12)];
        let toks = m.tokens(&lines);
        assert!(toks.iter().any(|t| t.text == "reconcileNodeLabels" && t.kind == TokenKind::Symbol), "{toks:?}");
        assert!(toks.iter().any(|t| t.text == "nil pointer in reconcileNodeLabels while syncing"), "{toks:?}");
        let toks = m.tokens(&[ll(r#"extracted binary at path "/tmp/c/oc-mirror-tests-ext.gz" does not exist"#, 1)]);
        assert!(toks.iter().any(|t| t.text == "oc-mirror-tests-ext.gz" && t.kind == TokenKind::File), "{toks:?}");
        let toks = m.tokens(&[ll(r#"Failed to get deployment e2e-clusters-wc4jk-create/x: deployments.apps "control-plane-metrics-forwarder" not found"#, 1)]);
        assert!(toks.iter().any(|t| t.text == "control-plane-metrics-forwarder"), "{toks:?}");
        assert!(!toks.iter().any(|t| t.text.contains("wc4jk")), "{toks:?}");
        // Flags only from lines complaining about flags.
        assert!(m
            .tokens(&[ll("running oc --kubeconfig=/tmp/k get pods failed", 1)])
            .iter()
            .all(|t| t.kind != TokenKind::Flag));
        assert!(m.tokens(&[ll("Error: unknown flag: --log-level-v2", 1)]).iter().any(|t| t.text == "--log-level-v2"));
        assert!(m.tokens(&[ll("error: timed out waiting for the condition on ClusterVersion", 1)]).is_empty());
        // A file named for its role (common.sh, setup.py) is in every repository: never a token.
        let toks = m.tokens(&[ll("/home/ci/dev-scripts/common.sh: line 42: failed to mirror release image", 1)]);
        assert!(toks.iter().all(|t| t.kind != TokenKind::File), "{toks:?}");
        assert!(generic_file("common.sh") && generic_file("Setup.py") && generic_file("util.go"));
        assert!(!generic_file("gather_nfd.sh") && !generic_file("oc-mirror-tests-ext.gz"));
        let files = m.evidence_files(&[ll("common.sh:42: error", 1), ll("mirror_release.sh:7: error", 2)]);
        assert_eq!(files.keys().collect::<Vec<_>>(), ["mirror_release.sh"]);
    }

    #[test]
    fn specific_match_beats_common_symbol() {
        let lines = vec![ll("E0510 1 x.go:2] failed: reconcileNodeLabels returned clusterNetworkConfig error", 3)];
        let culprit = cand(
            "pr:a/op#1",
            "a/op",
            "Label nodes",
            "--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1,0 +1,1 @@\n+func reconcileNodeLabels() {}\n",
        );
        let common = "--- a/pkg/y.go\n+++ b/pkg/y.go\n@@ -1,0 +1,1 @@\n+var clusterNetworkConfig = 1\n";
        let others: Vec<Candidate> =
            (2..7).map(|i| cand(&format!("pr:a/o{i}#{i}"), &format!("a/o{i}"), "Tidy", common)).collect();
        let vendored = cand(
            "pr:a/v#9",
            "a/v",
            "Bump deps",
            "--- a/vendor/k/x.go\n+++ b/vendor/k/x.go\n@@ -1,0 +1,1 @@\n+func reconcileNodeLabels() {}\n",
        );
        let mut all: Vec<&Candidate> = others.iter().collect();
        all.push(&culprit);
        all.push(&vendored);
        let w = window(&all);
        let ev = evidence(lines, vec![]);
        let r = correlate(&ev, &culprit, &w.docs["pr:a/op#1"], &w);
        let em = r.error_match.unwrap();
        assert_eq!((em.token.as_str(), em.df), ("reconcileNodeLabels", 1));
        let r = correlate(&ev, &others[0], &w.docs[&others[0].id], &w);
        assert!(r.error_match.is_none(), "a token in 5 candidates earns nothing");
        let r = correlate(&ev, &vendored, &w.docs[&vendored.id], &w);
        assert!(r.links.is_empty(), "vendored lines are ignored: {:?}", r.links);
    }

    #[test]
    fn one_token_is_not_a_revert() {
        let c = cand(
            "pr:a/op#1",
            "a/op",
            "Label nodes",
            "--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1,0 +1,1 @@\n+func reconcileNodeLabels() {}\n",
        );
        let w = window(&[&c]);
        let ev = evidence(vec![ll("failed: reconcileNodeLabels returned an error", 3)], vec![]);
        let r = correlate(&ev, &c, &w.docs[&c.id], &w);
        let ctx = ScoreContext {
            job: "j",
            mode: "m",
            root_cause: "RC1",
            class: FailureClass::ProductRegression,
            onset_here: Some("began here".into()),
            sole_linked: true,
            payload: "p",
            other_jobs: vec!["k".into()],
            presubmit_gap: None,
            in_ci_step: false,
        };
        let s = score(&ctx, &c, &r);
        // 40 + 30 + 10 + 10 = 90, but only one kind of link: capped below both bands.
        assert_eq!(s.total, 59, "{s:?}");
        assert!(s.cap.as_deref().unwrap().contains("second"), "{:?}", s.cap);
    }

    #[test]
    fn title_and_component() {
        let c = cand(
            "pr:openshift/cluster-ingress-operator#1354",
            "openshift/cluster-ingress-operator",
            "Replace OLM-based Istio install with Sail Library",
            "",
        );
        let o = cand("pr:openshift/console#1", "openshift/console", "Fix topology labels", "");
        let w = window(&[&c, &o]);
        let ev = evidence(
            vec![ll(
                r#"Error running oc get -n openshift-ingress istio/openshift-gateway: error: the server doesn't have a resource type "istio""#,
                9,
            )],
            vec!["[sig-network-edge][Feature:Router] Ensure istiod deployment and the istio could be deleted".into()],
        );
        let r = correlate(&ev, &c, &w.docs[&c.id], &w);
        assert!(r.has(Signal::TitleMatch) && r.has(Signal::Component), "{:?}", r.links);
        assert!(correlate(&ev, &o, &w.docs[&o.id], &w).links.is_empty());
    }

    #[test]
    fn presubmit_gaps() {
        let job = "periodic-ci-openshift-release-main-ci-4.22-e2e-aws-ovn-techpreview";
        assert!(presubmit_gap(job, &["pull-ci-openshift-installer-main-e2e-aws-ovn".into()]).is_some());
        assert!(presubmit_gap(job, &["pull-ci-openshift-installer-main-e2e-aws-ovn-techpreview".into()]).is_none());
        assert!(presubmit_gap(job, &[]).is_none());
    }
}
