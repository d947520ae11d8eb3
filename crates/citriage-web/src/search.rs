//! Regex search over stored failure texts, bounded in every direction: the pattern's
//! length and compiled size, the number of matches returned and the time spent
//! scanning. Builds are scanned job by job (sorted), newest build first.

use crate::data::spyglass_url;
use crate::WebError;
use citriage_store::Store;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_LEN: usize = 500;
/// Compiled-program and lazy-DFA budget of one regex, in bytes.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Most matches one search may ask for.
pub const MAX_MATCHES: usize = 1000;
/// Time budget of one search's scan.
pub const SEARCH_DEADLINE: Duration = Duration::from_secs(3);
/// Characters of context kept either side of a match.
const CONTEXT: usize = 120;

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

/// A parsed search request.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    pub pattern: regex::Regex,
    pub job: Option<regex::Regex>,
    pub exclude_job: Option<regex::Regex>,
    /// Only builds started within this many days of the newest stored build.
    pub max_age_days: Option<u32>,
    pub max_matches: usize,
    pub group_by_job: bool,
}

impl SearchQuery {
    /// Reads `q`, `job`, `exclude_job`, `max_age_days`, `max` and `group` (`job`);
    /// `Ok(None)` when no `q` was given (the search form alone).
    pub fn parse(p: &BTreeMap<String, String>) -> Result<Option<SearchQuery>, WebError> {
        let get = |k: &str| p.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let Some(q) = p.get("q").filter(|v| !v.is_empty()) else { return Ok(None) };
        let max_age_days = match get("max_age_days") {
            None => None,
            Some(v) => match v.parse::<u32>() {
                Ok(n) if n <= 3650 => Some(n),
                _ => return Err(WebError::BadRequest(format!("max_age_days must be 0 to 3650, not {v:?}"))),
            },
        };
        let max_matches = match get("max") {
            None => 100,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=MAX_MATCHES).contains(&n) => n,
                _ => return Err(WebError::BadRequest(format!("max must be 1 to {MAX_MATCHES}, not {v:?}"))),
            },
        };
        let group_by_job = match get("group") {
            None | Some("none") => false,
            Some("job") => true,
            Some(v) => return Err(WebError::BadRequest(format!("group must be job or none, not {v:?}"))),
        };
        Ok(Some(SearchQuery {
            pattern: bounded_regex("q", q)?,
            job: get("job").map(|v| bounded_regex("job", v)).transpose()?,
            exclude_job: get("exclude_job").map(|v| bounded_regex("exclude_job", v)).transpose()?,
            max_age_days,
            max_matches,
            group_by_job,
        }))
    }
}

/// One matching failure.
#[derive(Debug, Clone, Serialize)]
pub struct SearchMatch {
    pub job: String,
    pub build_id: String,
    pub started: Option<i64>,
    pub test: String,
    /// The text around the first match (at most a few hundred characters).
    pub excerpt: String,
    /// Byte range of the match inside `excerpt`.
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
    /// Failure texts scanned.
    pub scanned: usize,
    /// True when more matches existed than were returned.
    pub truncated: bool,
    /// True when the scan stopped at the time budget.
    pub timed_out: bool,
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The excerpt around `start..end` of `text` and the match's range inside it.
fn excerpt(text: &str, start: usize, end: usize) -> (String, usize, usize) {
    let end = ceil_boundary(text, end.min(start + 4 * CONTEXT));
    let from = floor_boundary(text, start.saturating_sub(CONTEXT));
    let to = ceil_boundary(text, end + CONTEXT);
    (text[from..to].to_string(), start - from, end - from)
}

/// Runs a search over the store.
pub fn search(store: &mut Store, q: &SearchQuery) -> Result<SearchResult, WebError> {
    let deadline = Instant::now() + SEARCH_DEADLINE;
    let since = match q.max_age_days {
        None => None,
        Some(days) => {
            let newest = store.builds(None)?.iter().filter_map(|b| b.started).max();
            newest.map(|n| n - i64::from(days) * 86_400)
        }
    };
    let mut out = SearchResult {
        pattern: q.pattern.as_str().to_string(),
        matches: Vec::new(),
        groups: None,
        scanned: 0,
        truncated: false,
        timed_out: false,
    };
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    'jobs: for job in store.build_jobs()? {
        if q.job.as_ref().is_some_and(|r| !r.is_match(&job)) || q.exclude_job.as_ref().is_some_and(|r| r.is_match(&job))
        {
            continue;
        }
        // `since` keeps the tests of newer builds only; older builds come back without tests.
        let builds = store.job_builds_with_tests(&job, since.map(|s| s - 1))?;
        for b in builds.iter().rev() {
            if Instant::now() > deadline {
                out.timed_out = true;
                break 'jobs;
            }
            for t in &b.tests {
                let Some(text) = t.failure_text.as_deref() else { continue };
                out.scanned += 1;
                let Some(m) = q.pattern.find(text) else { continue };
                *groups.entry(job.clone()).or_insert(0) += 1;
                if out.matches.len() >= q.max_matches {
                    out.truncated = true;
                    if !q.group_by_job {
                        break 'jobs;
                    }
                    continue;
                }
                let (excerpt, match_start, match_end) = excerpt(text, m.start(), m.end());
                out.matches.push(SearchMatch {
                    job: job.clone(),
                    build_id: b.build_id.clone(),
                    started: b.started,
                    test: t.name.clone(),
                    excerpt,
                    match_start,
                    match_end,
                    url: spyglass_url(b),
                });
            }
        }
    }
    if q.group_by_job {
        out.groups = Some(groups.into_iter().map(|(job, matches)| JobCount { job, matches }).collect());
    }
    Ok(out)
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
    fn excerpts_respect_char_boundaries() {
        let text = format!("{}é match é{}", "ü".repeat(200), "ö".repeat(200));
        let start = text.find("match").unwrap_or(0);
        let (ex, s, e) = excerpt(&text, start, start + 5);
        assert_eq!(&ex[s..e], "match");
        assert!(ex.len() < text.len());
    }
}
