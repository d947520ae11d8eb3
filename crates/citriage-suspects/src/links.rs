//! Links between a failure and a change of the window, each quoted with what
//! makes it specific in the window:
//!
//! | kind | points | fires when |
//! |---|---|---|
//! | `Verbatim` | +40 / +20 | a token of the failure's explaining lines (string, symbol, resource or file name, flag) is in an **added** product line of the diff, or a format string the diff adds renders a failure line by its literal pieces ([`crate::formats`]); +40 when exactly one change of the window does, +20 in 2-3; 4+ earn nothing |
//! | `StackFile` | +20 / +10 | the diff modifies a file the failure's stack or log prefixes name (`file.go:NNN`); +20 when no other change of the window modifies a file of that name |
//! | `Command` | +20 / +10 | the diff modifies the source of the failing command (`oc adm release extract` → `…/release/extract.go`) |
//! | `Removed` | +20 | the diff removes a product line carrying a failure token no other change carries |
//! | `Subject` | +20 | the diff touches a word of the failure's subject (the failing test's name, the strings its error lines quote) in a product path or in the code of a product line (comments and prose strings aside), and no other change of the window does — the change touches what the failing test exercises |
//! | `Title` | +15 / +10 | a word of the failure's subject is in the change's title and in no other title of the window, is no generic English or CI word, no word of the component the failure names (the component link says that), and few diffs of the window carry it: +15 when an error line names it, +10 when only a test name does |
//! | `Component` | +20 / +10 | the change's repository or images own a component the failure is about (+20) or names (+10) |
//! | `Owners` | +10 / +5 | the diff touches a path whose nearest `OWNERS` labels the failing test's SIG ([`crate::owners`]); +10 (specific) when no other change of the window touches a path of that SIG, +5 in 2-3; 4+ earn nothing |
//!
//! A user adds its own kinds of links beside these (the payload analysis: test
//! binaries, CI steps, RPM changelogs, the onset) and maps the whole to its
//! actions; [`Family`] says which links are independent of each other.

use serde::{Deserialize, Serialize};

use crate::failure::{ComponentRef, Failure};
use crate::lines::LogLine;
use crate::tokens::TokenKind;
use crate::window::{describe_df, CandidateIndex, WindowIndex};
use crate::words::generic_word;

/// The kinds of link the engine draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LinkKind {
    Verbatim,
    StackFile,
    Command,
    Removed,
    Subject,
    Title,
    Component,
    Owners,
}

/// Independent families of evidence: two links of one family say the same thing twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Family {
    /// What the diff adds or removes matches the failure's text.
    DiffContent,
    /// The diff touches the code the failure names or runs.
    CodeLocation,
    /// The change's description names the failure's subject.
    Description,
    /// The change belongs to the failing component or owner.
    Ownership,
    /// The failure began with the change (given by the user: the engine sees no time).
    Onset,
}

impl LinkKind {
    /// The family of evidence the link belongs to.
    pub fn family(self) -> Family {
        match self {
            LinkKind::Verbatim | LinkKind::Removed => Family::DiffContent,
            LinkKind::StackFile | LinkKind::Command | LinkKind::Subject => Family::CodeLocation,
            LinkKind::Title => Family::Description,
            LinkKind::Component | LinkKind::Owners => Family::Ownership,
        }
    }
}

/// A link between a change and a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub kind: LinkKind,
    pub points: u32,
    /// The link is specific (rare in the window, or structural).
    pub specific: bool,
    /// What was found, quoted, and why it is specific.
    pub evidence: String,
}

/// A verbatim match between a failure line and an added diff line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerbatimMatch {
    /// The string or symbol found in both.
    pub token: String,
    /// `phrase`, `quoted`, `symbol`, `name`, `file`, `flag`.
    pub token_kind: String,
    /// The failure line, with its location.
    pub log: LogLine,
    /// The diff file and new-side line.
    pub diff_file: String,
    pub diff_line: u32,
    /// The added line, verbatim.
    pub diff_text: String,
    /// How many changes of the window carry the token (1 = specific).
    #[serde(default)]
    pub df: u32,
    /// Why the match is (or is not) specific.
    #[serde(default)]
    pub why_specific: String,
}

/// The change side as links see it (its diff is in the window's index).
#[derive(Debug, Clone)]
pub struct Change<'a> {
    pub id: &'a str,
    pub title: &'a str,
    /// The description (a PR's body, a commit message past its subject), when known.
    pub body: Option<&'a str>,
    /// Who wrote it, when known.
    pub author: Option<&'a str>,
    /// How the change is named in evidence (`org/repo#123`).
    pub label: String,
    /// What it ships, named in evidence (its images, or its repository).
    pub ships: String,
    /// The component keys it owns (repository and image names reduced to their core).
    pub owns: std::collections::BTreeSet<String>,
}

/// What the engine's users may tune.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights {
    /// Points of a subject link no other change shares (half when one other does).
    pub subject: u32,
    /// A title word counts only when at most this many changes' diffs touch it.
    pub title_max_code_df: u32,
    /// A diff touching more distinct words than this is too broad for a subject
    /// link: it touches any subject by chance.
    pub subject_max_breadth: usize,
}

impl Default for Weights {
    fn default() -> Self {
        Weights { subject: 20, title_max_code_df: 3, subject_max_breadth: usize::MAX }
    }
}

/// Every link of one change to one failure.
#[derive(Debug, Clone, Default)]
pub struct Links {
    pub links: Vec<Link>,
    /// The verbatim match, when there is one.
    pub verbatim: Option<VerbatimMatch>,
}

impl Links {
    /// True when a link of this kind exists.
    pub fn has(&self, kind: LinkKind) -> bool {
        self.links.iter().any(|l| l.kind == kind)
    }
}

/// Links a change to a failure: the verbatim match, the code path (the best of
/// a named file and the failing command's source, else a removed token), the
/// subject the diff touches, the title and the component.
pub fn link(
    failure: &Failure,
    change: &Change,
    index: &CandidateIndex,
    window: &WindowIndex,
    weights: &Weights,
) -> Links {
    let mut out = Links::default();
    if let Some((link, verbatim)) = verbatim_link(failure, index, window) {
        out.links.push(link);
        out.verbatim = Some(verbatim);
    }
    out.links.extend(code_path_link(failure, index, window));
    let said = out.verbatim.as_ref().map(|m| m.token.to_ascii_lowercase()).unwrap_or_default();
    out.links.extend(subject_link(failure, index, window, weights, &said));
    out.links.extend(title_link(failure, change, index, window, weights));
    out.links.extend(component_link(failure, change));
    out.links.extend(owners_link(failure, index, window));
    out
}

/// True for a word that names nothing of its own here: a generic English or CI
/// word, a word of a component the failure names (the component link says
/// that), or a word several failures of the window share (about none of them).
fn says_nothing(failure: &Failure, word: &str, w: &WindowIndex) -> bool {
    generic_word(word)
        || failure.components.iter().any(|c| c.key.split('-').any(|k| k == word))
        || w.failure_df(word) > 2
}

/// The diff touches a word of the failure's subject that no other change of
/// the window touches. A word the verbatim token (`said`) or the change's
/// title already carries is not counted twice: one word is one piece of
/// evidence. A diff broader than the weights allow touches any subject by chance.
fn subject_link(
    failure: &Failure,
    ix: &CandidateIndex,
    w: &WindowIndex,
    weights: &Weights,
    said: &str,
) -> Option<Link> {
    if weights.subject == 0 || ix.breadth() > weights.subject_max_breadth {
        return None;
    }
    // Only a word no other diff of the window touches: windows are sparse
    // (many changes come without a diff), so a shared word is chance.
    let candidates = failure.words.iter().filter(|(word, _)| {
        !(says_nothing(failure, word, w)
            || said.contains(word.as_str())
            || ix.title_words.contains(*word)
            || w.title_df(word) > 2
            || ix.touches(word).is_none()
            || w.code_word_df(word) > 1)
    });
    // An error line's word before a test name's, then the first in order.
    let (word, (from, strong)) = candidates.max_by_key(|(word, (_, strong))| (*strong, std::cmp::Reverse(*word)))?;
    let hit = ix.touches(word)?;
    let at = match hit.line {
        Some(n) => format!("{} line {}{n}: {}", hit.file, if hit.added { "+" } else { "-" }, hit.text.trim()),
        None => format!("its path {}", hit.file),
    };
    Some(Link {
        kind: LinkKind::Subject,
        points: weights.subject,
        specific: true,
        evidence: format!(
            "the failure's {} names `{word}` ({}); the diff touches it ({at}); no other candidate of the window touches it",
            if *strong { "error" } else { "test" },
            from.chars().take(200).collect::<String>()
        ),
    })
}

/// The best token of the failure found in an added product line, when it is
/// carried by at most 3 changes: specific (+40) in one, +20 in 2-3.
fn verbatim_link(failure: &Failure, ix: &CandidateIndex, w: &WindowIndex) -> Option<(Link, VerbatimMatch)> {
    let n = w.len().max(1);
    let mut best: Option<((bool, u8, usize, usize), VerbatimMatch)> = None;
    for t in &failure.tokens {
        let Some(hit) = ix.added_hit(&t.text) else { continue };
        let df = w.df(&t.text).max(1);
        if df > 3 {
            continue;
        }
        let key = (df == 1, t.kind.rank(), t.text.len(), usize::MAX - t.line);
        if best.as_ref().is_some_and(|(k, _)| *k >= key) {
            continue;
        }
        let why = format!("{} `{}` is {}", t.kind.name(), t.text, describe_df(df, n));
        let m = VerbatimMatch {
            token: t.text.clone(),
            token_kind: t.kind.name().to_string(),
            log: failure.lines[t.line].clone(),
            diff_file: hit.file,
            diff_line: hit.line,
            diff_text: hit.text,
            df,
            why_specific: why,
        };
        best = Some((key, m));
    }
    for (i, line) in failure.rendered.iter().enumerate() {
        let Some((hit, f)) = ix.format_rendering(line) else { continue };
        let df = w.format_df(line).max(1);
        if df > 3 {
            continue;
        }
        let key = (df == 1, 4, f.covered(), usize::MAX - i);
        if best.as_ref().is_some_and(|(k, _)| *k >= key) {
            continue;
        }
        let pieces: Vec<String> = f.pieces.iter().map(|p| format!("`{p}`")).collect();
        let why = format!(
            "its literal pieces {} are in the failure line in order; {}",
            pieces.join(", "),
            others(df, "no other candidate of the window adds a format that renders it", "add one that renders it")
        );
        let m = VerbatimMatch {
            token: f.text.clone(),
            token_kind: "format".to_string(),
            log: failure.lines[i].clone(),
            diff_file: hit.file,
            diff_line: hit.line,
            diff_text: hit.text,
            df,
            why_specific: why,
        };
        best = Some((key, m));
    }
    let ((specific, ..), m) = best?;
    let evidence = if m.token_kind == "format" {
        format!(
            "the format string `{}` added at {}:{} renders the failure line {}; {}",
            m.token,
            m.diff_file,
            m.diff_line,
            m.log.at.cite(),
            m.why_specific
        )
    } else {
        format!(
            "{} `{}` from {} appears in the added line {}:{}; {}",
            m.token_kind,
            m.token,
            m.log.at.cite(),
            m.diff_file,
            m.diff_line,
            m.why_specific
        )
    };
    let link = Link { kind: LinkKind::Verbatim, points: if specific { 40 } else { 20 }, specific, evidence };
    Some((link, m))
}

/// How many of the window's changes do it, in words.
fn others(df: u32, alone: &str, several: &str) -> String {
    if df == 1 {
        alone.to_string()
    } else {
        format!("{df} candidates {several}")
    }
}

/// Code path: a file the failure names, the failing command's source (the
/// best of those), else a removed line carrying a failure token.
fn code_path_link(failure: &Failure, ix: &CandidateIndex, w: &WindowIndex) -> Option<Link> {
    let mut code: Option<Link> = None;
    let named = failure.files.iter().filter_map(|(f, li)| named_file_link(failure, ix, w, f, *li));
    let commands = failure.commands.iter().filter_map(|(comps, li)| command_link(failure, ix, w, comps, *li));
    for l in named.chain(commands) {
        if code.as_ref().is_none_or(|c| c.points < l.points) {
            code = Some(l);
        }
    }
    code.or_else(|| removed_token_link(failure, ix, w))
}

/// The failure names a file the diff modifies.
fn named_file_link(failure: &Failure, ix: &CandidateIndex, w: &WindowIndex, f: &str, li: usize) -> Option<Link> {
    if !ix.basenames.contains(f) {
        return None;
    }
    let df = w.basename_df(f).max(1);
    if df > 3 {
        return None;
    }
    let path = ix.files.iter().find(|p| p.ends_with(&format!("/{f}")) || *p == f).cloned().unwrap_or_default();
    Some(Link {
        kind: LinkKind::StackFile,
        points: if df == 1 { 20 } else { 10 },
        specific: df == 1,
        evidence: format!(
            "the evidence names `{f}` ({}), which the diff modifies ({path}); {}",
            failure.lines[li].at.cite(),
            others(df, "no other candidate of the window modifies a file of that name", "modify one of that name")
        ),
    })
}

/// The failing `oc` command is implemented in a file the diff modifies.
fn command_link(failure: &Failure, ix: &CandidateIndex, w: &WindowIndex, comps: &[String], li: usize) -> Option<Link> {
    let files = ix.files_with_components(comps);
    let path = files.first()?;
    let df = w.components_df(comps).max(1);
    if df > 3 {
        return None;
    }
    Some(Link {
        kind: LinkKind::Command,
        points: if df == 1 { 20 } else { 10 },
        specific: df == 1,
        evidence: format!(
            "the failing command `oc … {}` ({}) is implemented in {path}, which the diff modifies; {}",
            comps.join(" "),
            failure.lines[li].at.cite(),
            others(df, "no other candidate of the window modifies it", "do")
        ),
    })
}

/// The diff removes a line carrying a specific failure token.
fn removed_token_link(failure: &Failure, ix: &CandidateIndex, w: &WindowIndex) -> Option<Link> {
    let t = failure
        .tokens
        .iter()
        .filter(|t| t.kind != TokenKind::Symbol || t.text.len() >= 8)
        .find(|t| ix.removed_has(&t.text) && w.df(&t.text) == 1)?;
    Some(Link {
        kind: LinkKind::Removed,
        points: 20,
        specific: true,
        evidence: format!(
            "the diff removes `{}` (from {}); no other candidate of the window carries it",
            t.text,
            failure.lines[t.line].at.cite()
        ),
    })
}

/// A word of the failure's subject in this change's title and no other title of
/// the window, that says something (no generic word, no component name) and
/// that few diffs of the window touch.
fn title_link(
    failure: &Failure,
    change: &Change,
    ix: &CandidateIndex,
    w: &WindowIndex,
    weights: &Weights,
) -> Option<Link> {
    let n = w.len().max(1);
    let mut hits: Vec<(&String, &(String, bool))> = failure
        .words
        .iter()
        .filter(|(word, _)| {
            ix.title_words.contains(*word)
                && w.title_df(word) == 1
                && !says_nothing(failure, word, w)
                && w.code_word_df(word) <= weights.title_max_code_df
        })
        .collect();
    hits.sort_by_key(|(word, (_, strong))| (!*strong, (*word).clone()));
    let (word, (from, strong)) = hits.first()?;
    Some(Link {
        kind: LinkKind::Title,
        points: if *strong { 15 } else { 10 },
        specific: *strong,
        evidence: format!(
            "the title \"{}\" names `{word}`, which the failure's {} names ({}); no other title of the window's {n} candidates does",
            change.title,
            if *strong { "error" } else { "test name" },
            from.chars().take(200).collect::<String>()
        ),
    })
}

/// The diff touches a path owned by the failing test's SIG: +10 and specific when
/// no other change of the window touches a path of that SIG, +5 when 2-3 do. Weak
/// on its own (one family, like a component): it never makes the likely
/// introducing change without a link of another family.
fn owners_link(failure: &Failure, ix: &CandidateIndex, w: &WindowIndex) -> Option<Link> {
    let n = w.len().max(1);
    let (df, sig, how, touched) = failure
        .sigs
        .iter()
        .filter_map(|(sig, how)| Some((w.owners_df(sig).max(1), sig, how, ix.owners.get(sig)?)))
        .filter(|(df, ..)| *df <= 3)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))?;
    Some(Link {
        kind: LinkKind::Owners,
        points: if df == 1 { 10 } else { 5 },
        specific: df == 1,
        evidence: format!(
            "the failing test is sig-{sig}'s ({how}); the diff touches {touched}; {}",
            others(
                df,
                &format!("no other of the window's {n} candidates touches a path sig-{sig} owns"),
                &format!("of the window's {n} touch a path sig-{sig} owns")
            )
        ),
    })
}

/// The change owns a component the failure is about (+20) or names (+10).
fn component_link(failure: &Failure, change: &Change) -> Option<Link> {
    let mut best: Option<&ComponentRef> = None;
    for cr in &failure.components {
        if change.owns.contains(&cr.key) && best.is_none_or(|b| !b.subject && cr.subject) {
            best = Some(cr);
        }
    }
    let cr = best?;
    Some(Link {
        kind: LinkKind::Component,
        points: if cr.subject { 20 } else { 10 },
        specific: cr.subject,
        evidence: format!("{} ({}) belongs to component `{}`: {}", change.label, change.ships, cr.key, cr.how),
    })
}
