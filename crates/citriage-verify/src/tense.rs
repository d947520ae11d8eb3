//! When a sentence puts what it cites: at the report's date, or before a change.
//!
//! "Commit X removed the skip that sat at `a.go:41`", "restore the skip at `a.go:41`
//! (removed by X)", "before X, `a.go:41` read …" and "`a.go:41` used to read …" describe
//! the code as it was before a change; checked against the code of the report's date
//! (after the change) they would accuse a true sentence. The wording decides: a verb of
//! change in the past tense whose object is the citation, a past state (`used to`,
//! `previously`, `sat at`), or a change named right after the citation (`(removed by
//! X)`, `until X`). Words that put the citation after the change (`now`, `still`,
//! `added`, `to`, `on the report's date`) win over them. Pure text: nothing here reads
//! code.

use crate::report::code_spans;
use regex::Regex;
use std::sync::OnceLock;

/// When a citation's sentence puts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum When {
    /// The report's date (or the commit the citation itself names).
    Now,
    /// Before a change. `commit`: the change's SHA when the sentence names one (else
    /// any earlier version of the file will do); `changed_by`: the sentence says that
    /// commit made the change (so it must have changed the cited lines).
    Before { commit: Option<String>, changed_by: bool },
}

fn re(cell: &'static OnceLock<Regex>, p: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(p).expect("static regex"))
}

/// Verbs of change in the past tense: what they act on is gone or different after.
fn change_verb_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"\b(removed|deleted|dropped|reverted|replaced|renamed|rewrote|rewritten|swapped|stripped|commented out|ripped out|took out|taken out|changed|bumped|moved)\b",
    )
}

/// A past state of the code, without a change named.
fn past_state_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b(used to|previously|originally|formerly|no longer|sat|stood|lived|had been|were once|was once)\b")
}

/// Words that put what follows after the change (or at the report's date).
fn after_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b(now|currently|still|today|added|adds|introduced|inserted|to|into|moved to|instead)\b")
}

/// Words between a change and the citation that start another statement (`X removed
/// the skip, so the test at a.go:12 …`).
fn breaker_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b(so|and|but|because|when|while|leaving|making|thus|then|hence|meaning|therefore|whereas|although)\b")
}

/// A past state right after the citation (`a.go:41 used to read`).
fn state_after_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s*(?:[a-z]+\s+){0,2}?(used to|previously|originally|formerly|no longer)\b")
}

/// Explicit dates of the claim anywhere in the clause: the report's date rules.
fn dated_now_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b(on the report's date|as of|at head|on master today|in the current tree|today)\b")
}

/// A change named right after the citation: `(removed by X)`, `— dropped in X`,
/// `until X`, `before X`.
fn after_citation_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"^[\s(\[,;:—–-]*(?:which was |that was |was |were |and was |since )?(?:(removed|deleted|dropped|reverted|replaced|renamed|rewritten|changed|bumped|gone) (?:by|in|with)|(until|before|prior to|up to))\s",
    )
}

/// `before X`, `until X`, `prior to X` before the citation, X a commit or reference.
fn before_commit_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b(before|until|prior to|up to)\s+(?:commit\s+|pr\s+)?([0-9a-f]{7,40}\b|[a-z0-9/_.-]*#[0-9]+)")
}

/// Commit SHAs of a text: hex tokens of 7 to 40 characters with a digit and a letter,
/// standing alone. Returns (start, sha).
fn shas(text: &str) -> Vec<(usize, String)> {
    static R: OnceLock<Regex> = OnceLock::new();
    let r = re(&R, r"[0-9a-f]{7,40}");
    r.find_iter(text)
        .filter(|m| {
            let t = m.as_str();
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            let alone =
                |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '/' | '-' | '.')));
            let after_ok = alone(after)
                || (after == Some('.') && text[m.end() + 1..].chars().next().is_none_or(char::is_whitespace));
            (alone(before) || before == Some('@'))
                && after_ok
                && t.bytes().any(|b| b.is_ascii_digit())
                && t.bytes().any(|b| b.is_ascii_alphabetic())
        })
        .map(|m| (m.start(), m.as_str().to_string()))
        .collect()
}

/// The line with code spans and "quoted text" blanked (same byte positions): the
/// report's own words only.
fn own_words(line: &str, markdown: bool) -> String {
    let mut out: Vec<u8> = line.as_bytes().to_vec();
    let mut blank = |a: usize, b: usize| {
        for x in out.iter_mut().take(b).skip(a) {
            *x = b' ';
        }
    };
    if markdown {
        for (a, b) in code_spans(line) {
            blank(a, b);
        }
    }
    for (a, b) in crate::prose::quoted_ranges(line) {
        if line[a..].starts_with('"') || line[a..].starts_with('“') {
            blank(a, b);
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// When the citation at `span` of `line` is put, reading the clause `clause` (byte
/// range) that holds it.
pub(crate) fn when_cited(line: &str, clause: (usize, usize), span: (usize, usize), markdown: bool) -> When {
    let (lo, hi) = clause;
    if span.0 < lo || span.1 > hi || hi > line.len() {
        return When::Now;
    }
    let words = own_words(line, markdown).to_ascii_lowercase();
    let before = &words[lo..span.0];
    let after = &words[span.1..hi];
    if dated_now_re().is_match(&words[lo..hi]) {
        return When::Now;
    }
    let clause_shas = shas(&line[lo..hi]);
    // A change named right after the citation.
    if let Some(c) = after_citation_re().captures(after) {
        let rest_at = span.1 + c.get(0).map_or(0, |m| m.end());
        let head: String = line[rest_at..hi].chars().take(48).collect();
        let named = shas(&head).into_iter().next().map(|(_, s)| s);
        let by_ref =
            head.trim_start().starts_with('#') || head.split_whitespace().next().is_some_and(|w| w.contains('#'));
        if named.is_some() || by_ref || c.get(1).is_some() {
            return When::Before { commit: named, changed_by: c.get(1).is_some() };
        }
    }
    // Words right after the citation that put it now (`a.go:12 now reads`).
    if after
        .split_whitespace()
        .take(3)
        .any(|w| matches!(w.trim_matches(|c: char| !c.is_alphanumeric()), "now" | "still" | "currently"))
    {
        return When::Now;
    }
    // A cue before the citation counts when nothing after it puts the citation now or
    // starts another statement.
    let clean = |end: usize| !after_re().is_match(&before[end..]) && !breaker_re().is_match(&before[end..]);
    let outside = |p: &usize| lo + *p < span.0 || lo + *p >= span.1;
    // A change whose object the citation is (`removed the skip that sat at`): the commit
    // that made it is the SHA nearest the verb.
    if let Some(verb) = change_verb_re().find_iter(before).last().filter(|m| clean(m.end())) {
        let at = lo + verb.start();
        let commit = clause_shas
            .iter()
            .filter(|(p, _)| outside(p))
            .min_by_key(|(p, _)| ((lo + *p) as i64 - at as i64).abs())
            .map(|(_, s)| s.clone());
        let changed_by = commit.is_some();
        return When::Before { commit, changed_by };
    }
    // `before X, a.go:41 read …`.
    if let Some(c) =
        before_commit_re().captures_iter(before).last().filter(|c| c.get(0).is_some_and(|m| clean(m.end())))
    {
        let named = c.get(2).map(|m| m.as_str()).filter(|t| !t.contains('#'));
        let commit = named.and_then(|t| clause_shas.iter().find(|(_, s)| s == t).map(|(_, s)| s.clone()));
        return When::Before { commit, changed_by: false };
    }
    // `before X` / `until X` later in the clause, X a commit or reference.
    if let Some(c) = before_commit_re().captures(after) {
        let t = c.get(2).map_or("", |m| m.as_str());
        let commit = (!t.contains('#')).then(|| t.to_string()).filter(|t| clause_shas.iter().any(|(_, s)| s == t));
        return When::Before { commit, changed_by: false };
    }
    if state_after_re().is_match(after) {
        let commit = clause_shas.iter().find(|(p, _)| lo + *p >= span.1).map(|(_, s)| s.clone());
        return When::Before { commit, changed_by: false };
    }
    // A past state: before the commit the clause names, if any.
    if past_state_re().find_iter(before).last().is_some_and(|m| clean(m.end())) {
        let commit = clause_shas.iter().find(|(p, _)| outside(p)).map(|(_, s)| s.clone());
        return When::Before { commit, changed_by: false };
    }
    When::Now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn when(line: &str, cited: &str) -> When {
        let a = line.find(cited).expect("citation on the line");
        when_cited(line, (0, line.len()), (a, a + cited.len()), true)
    }

    fn before(commit: Option<&str>, changed_by: bool) -> When {
        When::Before { commit: commit.map(str::to_string), changed_by }
    }

    #[test]
    fn changes_put_their_object_before_them() {
        let c = "`provisioning.go:41-43`";
        assert_eq!(
            when("commit 1a2b3c4d5e removed the skip that sat at `provisioning.go:41-43`", c),
            before(Some("1a2b3c4d5e"), true)
        );
        assert_eq!(
            when("1a2b3c4d5e (2025-11-26) REMOVED a Windows skip from `provisioning.go:41-43`", c),
            before(Some("1a2b3c4d5e"), true)
        );
        assert_eq!(
            when("restore the Windows skip at `provisioning.go:41-43` (removed by 1a2b3c4d5e)", c),
            before(Some("1a2b3c4d5e"), true)
        );
        assert_eq!(when("the skip at `provisioning.go:41-43` was removed in #138001", c), before(None, true));
        assert_eq!(
            when("before 1a2b3c4d5e, `provisioning.go:41-43` read `Skipf`", c),
            before(Some("1a2b3c4d5e"), false)
        );
        assert_eq!(when("`provisioning.go:41-43` used to skip Windows", c), before(None, false));
        assert_eq!(
            when("`provisioning.go:41-43` read `Skipf` before 1a2b3c4d5e", c),
            before(Some("1a2b3c4d5e"), false)
        );
        assert_eq!(
            when("the skip that sat at `provisioning.go:41-43` until 1a2b3c4d5e", c),
            before(Some("1a2b3c4d5e"), false)
        );
    }

    #[test]
    fn words_of_the_present_win() {
        let c = "`provisioning.go:1400`";
        assert_eq!(when("1a2b3c4d5e removed the skip, and `provisioning.go:1400` now errors", c), When::Now);
        assert_eq!(when("1a2b3c4d5e removed the skip; now `provisioning.go:1400` errors", c), When::Now);
        assert_eq!(when("1a2b3c4d5e removed `a` and added `b` at `provisioning.go:1400`", c), When::Now);
        assert_eq!(when("1a2b3c4d5e moved the call to `provisioning.go:1400`", c), When::Now);
        assert_eq!(when("on the report's date the same call sat at `provisioning.go:1400`", c), When::Now);
        assert_eq!(when("`provisioning.go:1400` reads `x` before the queue pop is recorded", c), When::Now);
        assert_eq!(
            when("1a2b3c4d5e removed the skip, so the test at `provisioning.go:1400` runs on Windows", c),
            When::Now
        );
        assert_eq!(when("the fallback at `provisioning.go:1400` errors", c), When::Now);
        // A quoted sentence is someone else's words.
        assert_eq!(when("the commit says \"removed the skip\" and `provisioning.go:1400` errors", c), When::Now);
    }
}
