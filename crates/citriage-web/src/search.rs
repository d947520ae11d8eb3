//! Regex search over stored failure texts and build-log excerpts, like
//! search.ci.openshift.org: max age, job include and exclude, context lines, max
//! matches, grouping by job. Answered from [`SearchIndex`]: every distinct text is
//! kept once with the places it occurs (a failed test of a build, or an excerpt of a
//! build's log), so a search runs the regex over distinct texts only and the
//! matches are expanded to their occurrences afterwards.
//!
//! Bounded in every direction: the pattern's length and compiled size, the number of
//! matches returned and the time spent.

use crate::error::WebError;
use citriage_store::Store;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_LEN: usize = 500;
/// Compiled-program and lazy-DFA budget of one regex, in bytes.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Most matches one search may ask for.
pub const MAX_MATCHES: usize = 1000;
/// Most context lines either side of a match.
pub const MAX_CONTEXT: usize = 20;
/// Time budget of one search.
pub const SEARCH_DEADLINE: Duration = Duration::from_secs(3);
/// Matching occurrences gathered before ordering (beyond it the answer says `truncated`).
pub(crate) const GATHER_LIMIT: usize = 50_000;
/// Bytes of one excerpt line shown.
const LINE_CAP: usize = 400;

/// Compiles a user's regex within the size bounds; errors are a 400 naming `what`.
pub fn bounded_regex(what: &str, pattern: &str) -> Result<regex::Regex, WebError> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(WebError::BadRequest(format!(
            "{what}: pattern is {} bytes, the limit is {MAX_PATTERN_LEN}",
            pattern.len()
        )));
    }
    regex::RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| WebError::BadRequest(format!("{what}: {e}")))
}

/// Where a text occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A failed test of a build: the test name's index in [`SearchIndex::names`].
    Test { name: u32 },
    /// An excerpt of a build's log: the log's name in [`SearchIndex::names`] and the
    /// excerpt's first line in the log.
    Excerpt { source: u32, line_start: u32 },
}

/// One occurrence of a distinct text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    /// Position of the build in the view's builds ([`crate::index::WebIndex::builds`]).
    pub build: u32,
    pub place: Place,
}

/// Distinct texts (in a trigram index) with their occurrences.
#[derive(Debug)]
pub struct SearchIndex {
    pub(crate) texts: citriage_search::TextIndex,
    /// Occurrences of text `i`: `occurrences[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    occurrences: Vec<Occurrence>,
    /// Test names and log names.
    pub names: Vec<String>,
    /// Failure texts and excerpts indexed (occurrences).
    pub entries: u64,
}

impl SearchIndex {
    /// Reads the failure texts and log excerpts of the builds started after `since`
    /// (all when `None`) that are in `positions` (store row id → position in the view's builds).
    pub fn build(
        store: &mut Store,
        positions: &HashMap<i64, u32>,
        since: Option<i64>,
    ) -> Result<SearchIndex, WebError> {
        // Distinct texts are kept once, with dense ids in first-seen order.
        let mut texts = citriage_search::IndexBuilder::new();
        let mut name_ids: HashMap<String, u32> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        let mut raw: Vec<(u32, Occurrence)> = Vec::new();
        let mut intern_name = |n: &str| -> u32 {
            if let Some(&i) = name_ids.get(n) {
                return i;
            }
            let i = names.len() as u32;
            names.push(n.to_string());
            name_ids.insert(n.to_string(), i);
            i
        };
        store.for_each_failure_text(since, |build, _seq, name, text| {
            let Some(&b) = positions.get(&build) else { return };
            let t = texts.add(text).as_u32();
            raw.push((t, Occurrence { build: b, place: Place::Test { name: intern_name(name) } }));
        })?;
        store.for_each_excerpt(since, |build, e| {
            let Some(&b) = positions.get(&build) else { return };
            let t = texts.add(&e.text).as_u32();
            raw.push((
                t,
                Occurrence {
                    build: b,
                    place: Place::Excerpt { source: intern_name(&e.source), line_start: e.line_start },
                },
            ));
        })?;
        let entries = raw.len() as u64;
        let texts = texts.finish();
        // Group occurrences by text (stable: store order within a text).
        raw.sort_by_key(|(t, _)| *t);
        let mut starts = Vec::with_capacity(texts.len() + 1);
        let mut occurrences = Vec::with_capacity(raw.len());
        let mut next = 0usize;
        for t in 0..texts.len() as u32 {
            starts.push(occurrences.len() as u32);
            while next < raw.len() && raw[next].0 == t {
                occurrences.push(raw[next].1);
                next += 1;
            }
        }
        starts.push(occurrences.len() as u32);
        Ok(SearchIndex { texts, starts, occurrences, names, entries })
    }

    /// Distinct texts.
    pub fn distinct(&self) -> usize {
        self.texts.len()
    }

    /// Bytes the texts and their trigram postings hold.
    pub fn heap_bytes(&self) -> usize {
        self.texts.heap_bytes()
    }

    /// The occurrences of distinct text `t`.
    pub(crate) fn occurrences_of(&self, t: usize) -> &[Occurrence] {
        &self.occurrences[self.starts[t] as usize..self.starts[t + 1] as usize]
    }
}

/// A parsed search request.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    pub pattern: regex::Regex,
    pub job: Option<regex::Regex>,
    pub exclude_job: Option<regex::Regex>,
    /// Only builds started within this many days of the newest stored build.
    pub max_age_days: Option<u32>,
    pub max_matches: usize,
    /// Lines of context either side of the matching lines.
    pub context: usize,
    pub group_by_job: bool,
    /// `all`, `tests` (failure texts) or `logs` (log excerpts).
    pub within: Within,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Within {
    All,
    Tests,
    Logs,
}

impl SearchQuery {
    /// Reads `q`, `job`, `exclude_job`, `max_age_days`, `max`, `context`, `group`
    /// (`job` or `none`) and `within` (`all`, `tests`, `logs`); `Ok(None)` when no
    /// `q` was given (the search form alone).
    pub fn parse(p: &BTreeMap<String, String>) -> Result<Option<SearchQuery>, WebError> {
        let get = |k: &str| p.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let Some(q) = p.get("q").filter(|v| !v.is_empty()) else { return Ok(None) };
        let number = |k: &str, max: usize| -> Result<Option<usize>, WebError> {
            match get(k) {
                None => Ok(None),
                Some(v) => match v.parse::<usize>() {
                    Ok(n) if n <= max => Ok(Some(n)),
                    _ => Err(WebError::BadRequest(format!("{k} must be 0 to {max}, not {v:?}"))),
                },
            }
        };
        let max_age_days = number("max_age_days", 3650)?.map(|n| n as u32);
        let max_matches = match get("max") {
            None => 100,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=MAX_MATCHES).contains(&n) => n,
                _ => return Err(WebError::BadRequest(format!("max must be 1 to {MAX_MATCHES}, not {v:?}"))),
            },
        };
        let context = number("context", MAX_CONTEXT)?.unwrap_or(2);
        let group_by_job = match get("group") {
            None | Some("none") => false,
            Some("job") => true,
            Some(v) => return Err(WebError::BadRequest(format!("group must be job or none, not {v:?}"))),
        };
        let within = match get("within") {
            None | Some("all") => Within::All,
            Some("tests") => Within::Tests,
            Some("logs") => Within::Logs,
            Some(v) => return Err(WebError::BadRequest(format!("within must be all, tests or logs, not {v:?}"))),
        };
        Ok(Some(SearchQuery {
            pattern: bounded_regex("q", q)?,
            job: get("job").map(|v| bounded_regex("job", v)).transpose()?,
            exclude_job: get("exclude_job").map(|v| bounded_regex("exclude_job", v)).transpose()?,
            max_age_days,
            max_matches,
            context,
            group_by_job,
            within,
        }))
    }
}

/// One matching failure text or log excerpt.
#[derive(Debug, Clone, Serialize)]
pub struct SearchMatch {
    pub job: String,
    pub build_id: String,
    pub started: Option<i64>,
    /// `test` or `log`.
    pub kind: &'static str,
    /// The failed test's name, or the log's name (`build-log.txt`).
    pub name: String,
    /// For a log excerpt: the log line of the match (1-based).
    pub line: Option<u32>,
    /// The matching lines with their context, each line capped at a few hundred bytes.
    pub excerpt: String,
    /// Byte range of the (first) match inside `excerpt`.
    pub match_start: usize,
    pub match_end: usize,
    pub url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobCount {
    pub job: String,
    pub matches: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResult {
    pub pattern: String,
    pub matches: Vec<SearchMatch>,
    /// Matches per job, by job name (only when grouped by job).
    pub groups: Option<Vec<JobCount>>,
    /// Failure texts and excerpts in the index, and distinct texts the regex ran over
    /// (the trigram index's candidates).
    pub indexed: u64,
    pub scanned: usize,
    /// False when the pattern had no literal the trigram index could use (every
    /// distinct text was scanned).
    pub used_index: bool,
    /// Matching occurrences found (within the filters).
    pub found: usize,
    /// True when more matches existed than were returned.
    pub truncated: bool,
    /// True when the search stopped at its time budget.
    pub timed_out: bool,
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The lines around `start..end` of `text` with `context` lines either side (each
/// line capped), the match's range inside it, and the match's line (0-based).
pub(crate) fn excerpt(text: &str, start: usize, end: usize, context: usize) -> (String, usize, usize, usize) {
    let line_of = |i: usize| text[..i].bytes().filter(|&b| b == b'\n').count();
    let (first, last) = (line_of(start), line_of(end.max(start)));
    let lines: Vec<&str> = text.split('\n').collect();
    let from = first.saturating_sub(context);
    let to = (last + context).min(lines.len().saturating_sub(1));
    let mut out = String::new();
    let (mut ms, mut me) = (0, 0);
    let mut offset = lines[..from].iter().map(|l| l.len() + 1).sum::<usize>();
    for (i, line) in lines.iter().enumerate().take(to + 1).skip(from) {
        if i > from {
            out.push('\n');
        }
        let shown_from = if i == first && start - offset > LINE_CAP / 2 {
            // A long line: keep the text around the match.
            floor_boundary(line, start - offset - LINE_CAP / 4)
        } else {
            0
        };
        let shown_to = floor_boundary(line, shown_from + LINE_CAP);
        let base = out.len();
        if shown_from > 0 {
            out.push('…');
        }
        let prefix = out.len() - base;
        out.push_str(&line[shown_from..shown_to]);
        if i == first {
            ms = base + prefix + (start - offset - shown_from).min(shown_to - shown_from);
        }
        if i == last {
            let at = end.max(start) - offset;
            me = if at <= shown_to && at >= shown_from { base + prefix + at - shown_from } else { out.len() };
        }
        if shown_to < line.len() {
            out.push('…');
        }
        offset += line.len() + 1;
    }
    let me = me.max(ms);
    (out, ms, me, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_long_and_huge_patterns() {
        assert!(matches!(bounded_regex("q", &"a".repeat(MAX_PATTERN_LEN + 1)), Err(WebError::BadRequest(_))));
        // Small to write, large to compile: over the size limit.
        assert!(matches!(bounded_regex("q", r"\w{1000}\w{1000}"), Err(WebError::BadRequest(_))));
        assert!(matches!(bounded_regex("q", "(unclosed"), Err(WebError::BadRequest(_))));
        assert!(bounded_regex("q", "timed? out").is_ok());
    }

    #[test]
    fn excerpts_keep_context_lines_and_the_match() {
        let text = "l1\nl2\nl3 the match here\nl4\nl5\nl6";
        let start = text.find("match").unwrap_or(0);
        let (ex, s, e, line) = excerpt(text, start, start + 5, 1);
        assert_eq!(ex, "l2\nl3 the match here\nl4");
        assert_eq!(&ex[s..e], "match");
        assert_eq!(line, 2);
        let (ex, s, e, _) = excerpt(text, start, start + 5, 0);
        assert_eq!((ex.as_str(), &ex[s..e]), ("l3 the match here", "match"));
        // The first line: no context before it.
        let (ex, s, e, line) = excerpt(text, 0, 2, 2);
        assert_eq!((ex.as_str(), &ex[s..e], line), ("l1\nl2\nl3 the match here", "l1", 0));
    }

    #[test]
    fn long_lines_are_cut_around_the_match_on_char_boundaries() {
        let text = format!("{}é match é{}", "ü".repeat(600), "ö".repeat(600));
        let start = text.find("match").unwrap_or(0);
        let (ex, s, e, _) = excerpt(&text, start, start + 5, 2);
        assert_eq!(&ex[s..e], "match");
        assert!(ex.len() < LINE_CAP + 8, "{}", ex.len());
        assert!(ex.starts_with('…') && ex.ends_with('…'));
    }
}
