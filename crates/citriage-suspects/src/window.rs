//! How specific a match is. A token found in the failure and in a change
//! proves something only when it is rare: a symbol every third diff of the
//! window touches (an API field, a flag, a repository name) matches innocent
//! changes as readily as the culprit. In the spirit of IDF, every token's
//! document frequency is counted over the window's candidates — their
//! product files only: vendored, generated, documentation and metadata files
//! are left out (see [`crate::paths`]) — and a match is *specific* when the
//! token appears in exactly one candidate.
//!
//! Each candidate's diff is indexed once: the distinct identifier-like runs of
//! its product lines (so most look-ups are hash probes), the added text for
//! phrases, the basenames and directories it modifies, and its title words.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::diff::ParsedDiff;
use crate::formats::{format_strings, FormatString, MAX_PER_CHANGE};
use crate::paths::{path_kind, PathKind};

/// Where a token was found in an added line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedHit {
    pub file: String,
    pub line: u32,
    pub text: String,
}

/// One candidate's diff, indexed.
#[derive(Debug, Default, Clone)]
pub struct CandidateIndex {
    /// Distinct runs of added lines of product files → first (file, line index).
    added_runs: HashMap<String, (usize, usize)>,
    /// Distinct runs of added and removed product lines.
    all_runs: HashSet<String>,
    /// Added product lines: (file index, new-side line, text).
    added: Vec<(usize, u32, String)>,
    /// Removed product lines joined (phrase look-ups on the old side).
    removed_text: String,
    /// Product file paths.
    pub files: Vec<String>,
    /// Basenames of modified product files.
    pub basenames: BTreeSet<String>,
    /// Lower-case title words.
    pub title_words: BTreeSet<String>,
    /// Files left out, by kind.
    pub ignored: BTreeMap<PathKind, u32>,
    /// Lower-case words of the product paths and lines the diff touches (camel
    /// case split, 4+ letters) → where first seen.
    code_words: HashMap<String, WordHit>,
    /// Format strings of added product lines: (added line index, format).
    formats: Vec<(usize, FormatString)>,
    /// SIGs owning the product paths it touches (`node` → the path and the
    /// OWNERS file that say so), when the caller read them ([`CandidateIndex::with_owners`]).
    pub owners: BTreeMap<String, String>,
}

/// Where a diff touches a word: a product file's path, or one of its added or removed lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordHit {
    pub file: String,
    /// The line (new side when added, old side when removed), none for the path itself.
    pub line: Option<u32>,
    /// The line's text, or the path.
    pub text: String,
    /// The line was added (false: removed, or the path).
    pub added: bool,
}

fn is_run_byte(b: u8, extra: &[u8]) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || extra.contains(&b)
}

/// The identifier-like runs of a line at three granularities: identifiers
/// (`[A-Za-z0-9_]+`), dotted names (`pkg.Func`) and hyphenated / file names
/// (`oc-mirror-tests-ext.gz`), trimmed of edge dots and dashes.
pub fn runs(line: &str) -> Vec<&str> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    for extra in [&b""[..], &b"."[..], &b".-"[..]] {
        let mut i = 0;
        while i < b.len() {
            if !is_run_byte(b[i], extra) {
                i += 1;
                continue;
            }
            let s = i;
            while i < b.len() && is_run_byte(b[i], extra) {
                i += 1;
            }
            let run = line[s..i].trim_matches(|c| c == '.' || c == '-');
            if run.len() >= 3 {
                out.push(run);
            }
        }
    }
    out
}

/// Lower-case words (letters only, 4+) of a text.
pub fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() >= 4).map(|w| w.to_ascii_lowercase()).collect()
}

/// A line's code: nothing of a comment line, no trailing `//` comment, no
/// quoted prose (a string with a space); quoted names stay.
fn code_of(line: &str) -> String {
    let t = line.trim_start();
    if ["//", "#", "*", "/*", "<!--", "--"].iter().any(|c| t.starts_with(c)) {
        return String::new();
    }
    let t = t.split(" //").next().unwrap_or(t);
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(open) = rest.find(['"', '\'', '`']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..open]);
        let inner = &rest[open + 1..];
        match inner.find(quote) {
            Some(close) => {
                let s = &inner[..close];
                if !s.contains(' ') {
                    out.push(' ');
                    out.push_str(s);
                    out.push(' ');
                }
                rest = &inner[close + 1..];
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Lower-case words of code (letters only, 4+), camel case split too
/// (`istioGatewayClass` → `istio`, `gateway`, `class`, and the whole run).
pub fn code_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in text.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() >= 4) {
        out.push(run.to_ascii_lowercase());
        let b = run.as_bytes();
        let mut start = 0;
        for i in 1..b.len() {
            if b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase() {
                if i - start >= 4 {
                    out.push(run[start..i].to_ascii_lowercase());
                }
                start = i;
            }
        }
        if start > 0 && b.len() - start >= 4 {
            out.push(run[start..].to_ascii_lowercase());
        }
    }
    out
}

impl CandidateIndex {
    /// Indexes a candidate's diff (when known) and title.
    pub fn new(diff: Option<&ParsedDiff>, title: &str) -> CandidateIndex {
        let mut ix = CandidateIndex { title_words: words(title), ..Default::default() };
        let Some(d) = diff else { return ix };
        for f in &d.files {
            let kind = path_kind(&f.path);
            if kind != PathKind::Product {
                *ix.ignored.entry(kind).or_default() += 1;
                continue;
            }
            let fi = ix.files.len();
            ix.files.push(f.path.clone());
            if let Some(b) = f.path.rsplit('/').next() {
                ix.basenames.insert(b.to_string());
            }
            ix.touch_words(&f.path, None, &f.path, false);
            for (n, text) in &f.added {
                let li = ix.added.len();
                for r in runs(text) {
                    if !ix.added_runs.contains_key(r) {
                        ix.added_runs.insert(r.to_string(), (fi, li));
                    }
                    if !ix.all_runs.contains(r) {
                        ix.all_runs.insert(r.to_string());
                    }
                }
                ix.touch_words(&f.path, Some(*n), text, true);
                if ix.formats.len() < MAX_PER_CHANGE && text.contains(['%', '{', '$']) {
                    ix.formats.extend(format_strings(&f.path, text).into_iter().map(|fs| (li, fs)));
                }
                ix.added.push((fi, *n, text.clone()));
            }
            for (n, text) in &f.removed {
                ix.touch_words(&f.path, Some(*n), text, false);
                for r in runs(text) {
                    if !ix.all_runs.contains(r) {
                        ix.all_runs.insert(r.to_string());
                    }
                }
                ix.removed_text.push_str(text);
                ix.removed_text.push('\n');
            }
        }
        ix
    }

    /// The index with the SIGs owning the paths it touches (`node` → where that is said).
    pub fn with_owners(mut self, owners: BTreeMap<String, String>) -> CandidateIndex {
        self.owners = owners;
        self
    }

    /// The added format string that renders this line best (the most literal
    /// text), with where it was added.
    pub fn format_rendering(&self, line: &str) -> Option<(AddedHit, &FormatString)> {
        let (li, f) = self
            .formats
            .iter()
            .filter(|(_, f)| f.renders(line))
            .max_by_key(|(li, f)| (f.covered(), std::cmp::Reverse(*li)))?;
        let (fi, n, text) = &self.added[*li];
        Some((AddedHit { file: self.files[*fi].clone(), line: *n, text: text.clone() }, f))
    }

    /// Records the words of a path or a line's code (its comments and prose
    /// strings left out), first occurrence kept.
    fn touch_words(&mut self, file: &str, line: Option<u32>, text: &str, added: bool) {
        let code = if line.is_some() { code_of(text) } else { text.to_string() };
        for w in code_words(&code) {
            self.code_words.entry(w).or_insert_with(|| WordHit {
                file: file.to_string(),
                line,
                text: text.chars().take(300).collect(),
                added,
            });
        }
    }

    /// How many distinct words the diff's paths and code touch.
    pub fn breadth(&self) -> usize {
        self.code_words.len()
    }

    /// Where the diff touches a word (lower case), if it does.
    pub fn touches(&self, word: &str) -> Option<&WordHit> {
        self.code_words.get(word)
    }

    fn single_run(token: &str) -> bool {
        let b = token.as_bytes();
        !b.is_empty() && b.iter().all(|c| is_run_byte(*c, b".-")) && !token.starts_with(['.', '-'])
    }

    /// True when the token occurs in a product line (added or removed) of the diff.
    pub fn contains(&self, token: &str) -> bool {
        if Self::single_run(token) {
            return self.all_runs.contains(token);
        }
        self.added.iter().any(|(_, _, t)| t.contains(token)) || self.removed_text.contains(token)
    }

    /// The first added product line carrying the token (bounded for names).
    pub fn added_hit(&self, token: &str) -> Option<AddedHit> {
        let li = if Self::single_run(token) {
            self.added_runs.get(token).map(|(_, li)| *li)
        } else {
            self.added.iter().position(|(_, _, t)| t.contains(token))
        }?;
        let (fi, n, text) = &self.added[li];
        Some(AddedHit { file: self.files[*fi].clone(), line: *n, text: text.clone() })
    }

    /// True when a removed product line carries the token.
    pub fn removed_has(&self, token: &str) -> bool {
        self.removed_text.contains(token)
    }

    /// Product files whose path has these consecutive components (`release/extract`).
    pub fn files_with_components(&self, comps: &[String]) -> Vec<&str> {
        let needle = comps.join("/");
        self.files
            .iter()
            .filter(|f| {
                let stem = f.rsplit_once('.').map(|(a, _)| a).unwrap_or(f);
                let with = format!("/{stem}/");
                with.contains(&format!("/{needle}/")) || with.contains(&format!("/{needle}_"))
            })
            .map(String::as_str)
            .collect()
    }

    /// True when the diff has any product file.
    pub fn has_product(&self) -> bool {
        !self.files.is_empty()
    }
}

/// The window's candidates, indexed, with memoized document frequencies.
#[derive(Debug, Default)]
pub struct WindowIndex {
    pub docs: BTreeMap<String, CandidateIndex>,
    /// The words of each failure of the window (its lines and tests): a word
    /// many failures share is about none of them.
    failure_words: Vec<BTreeSet<String>>,
    df_cache: std::sync::Mutex<HashMap<String, u32>>,
}

impl WindowIndex {
    /// Builds the index from (candidate id, index) pairs.
    pub fn new(docs: BTreeMap<String, CandidateIndex>) -> WindowIndex {
        WindowIndex { docs, failure_words: Vec::new(), df_cache: Default::default() }
    }

    /// The window with the texts of its failures (one text per failure: its
    /// lines and tests), for [`WindowIndex::failure_df`].
    pub fn with_failures(mut self, texts: &[String]) -> WindowIndex {
        self.failure_words = texts.iter().map(|t| code_words(t).into_iter().collect()).collect();
        self
    }

    /// How many failures of the window carry the word.
    pub fn failure_df(&self, word: &str) -> u32 {
        self.failure_words.iter().filter(|w| w.contains(word)).count() as u32
    }

    /// Candidates in the window.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// True when the window has no candidate.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// How many candidates' product lines carry the token.
    pub fn df(&self, token: &str) -> u32 {
        if let Some(n) = self.df_cache.lock().ok().and_then(|c| c.get(token).copied()) {
            return n;
        }
        let n = self.docs.values().filter(|d| d.contains(token)).count() as u32;
        if let Ok(mut c) = self.df_cache.lock() {
            c.insert(token.to_string(), n);
        }
        n
    }

    /// How many candidates add a format string that renders this line.
    pub fn format_df(&self, line: &str) -> u32 {
        let key = format!("\u{0}format\u{0}{line}");
        if let Some(n) = self.df_cache.lock().ok().and_then(|c| c.get(&key).copied()) {
            return n;
        }
        let n = self.docs.values().filter(|d| d.formats.iter().any(|(_, f)| f.renders(line))).count() as u32;
        if let Ok(mut c) = self.df_cache.lock() {
            c.insert(key, n);
        }
        n
    }

    /// How many candidates touch a path the SIG owns.
    pub fn owners_df(&self, sig: &str) -> u32 {
        self.docs.values().filter(|d| d.owners.contains_key(sig)).count() as u32
    }

    /// How many candidates modify a product file with this basename.
    pub fn basename_df(&self, base: &str) -> u32 {
        self.docs.values().filter(|d| d.basenames.contains(base)).count() as u32
    }

    /// How many candidates' diffs touch the word (paths, added or removed product lines).
    pub fn code_word_df(&self, word: &str) -> u32 {
        self.docs.values().filter(|d| d.code_words.contains_key(word)).count() as u32
    }

    /// How many candidates' titles carry the word.
    pub fn title_df(&self, word: &str) -> u32 {
        self.docs.values().filter(|d| d.title_words.contains(word)).count() as u32
    }

    /// How many candidates modify paths with these consecutive components.
    pub fn components_df(&self, comps: &[String]) -> u32 {
        self.docs.values().filter(|d| !d.files_with_components(comps).is_empty()).count() as u32
    }
}

/// How rare a document frequency is, in words.
pub fn describe_df(df: u32, n: usize) -> String {
    match df {
        0 | 1 => format!("found in 1 of the {n} candidate changes of the window"),
        k => format!("found in {k} of the {n} candidate changes of the window"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::parse_unified;

    #[test]
    fn runs_and_hits() {
        let r = runs(r#"		binaryPath: "/usr/bin/oc-mirror-tests-ext.gz","#);
        assert!(r.contains(&"oc-mirror-tests-ext.gz") && r.contains(&"binaryPath"), "{r:?}");
        let d = parse_unified(
            "--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1,1 +1,1 @@\n-old\n+\tName: \"control-plane-metrics-forwarder\",\n--- a/vendor/y/z.go\n+++ b/vendor/y/z.go\n@@ -1,0 +1,1 @@\n+clusterNetwork := 1\n",
        );
        let ix = CandidateIndex::new(Some(&d), "feat: add metrics forwarder");
        assert!(ix.contains("control-plane-metrics-forwarder"));
        assert!(!ix.contains("clusterNetwork"), "vendored lines are not indexed");
        assert_eq!(ix.ignored.get(&PathKind::Vendored), Some(&1));
        let h = ix.added_hit("control-plane-metrics-forwarder").unwrap();
        assert_eq!((h.file.as_str(), h.line), ("pkg/x.go", 1));
        assert!(ix.title_words.contains("forwarder"));
        let mut docs = BTreeMap::new();
        docs.insert("a".to_string(), ix);
        docs.insert("b".to_string(), CandidateIndex::new(None, "other"));
        let w = WindowIndex::new(docs);
        assert_eq!(w.df("control-plane-metrics-forwarder"), 1);
        assert_eq!(w.title_df("forwarder"), 1);
    }

    #[test]
    fn path_components() {
        let d = parse_unified(
            "--- a/pkg/cli/admin/release/extract.go\n+++ b/pkg/cli/admin/release/extract.go\n@@ -1,1 +1,1 @@\n-a\n+b\n",
        );
        let ix = CandidateIndex::new(Some(&d), "");
        assert_eq!(ix.files_with_components(&["release".into(), "extract".into()]).len(), 1);
        assert!(ix.files_with_components(&["release".into(), "info".into()]).is_empty());
    }
}
