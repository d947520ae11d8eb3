//! Query planning: from a regex (its `regex-syntax` HIR) to a trigram [`Query`] that every
//! text containing a match satisfies.
//!
//! Each HIR node is summarised by what is known about the (ASCII-lowercased) strings it
//! can match: either the exact set of them, when small, or a set of possible prefixes, a
//! set of possible suffixes and a query every match satisfies. Literals and small
//! classes give exact sets (`(?i)a` is `{"a"}` after folding; `(?i)k` is
//! `{"k", "\u{212A}"}`, the Kelvin sign, which Unicode case folding also matches);
//! concatenations take cross products while they stay small and otherwise AND their
//! parts plus the trigrams that span the boundary between them; alternations take
//! unions or OR their branches; a repetition with a minimum of at least one keeps its
//! sub-expression's knowledge, one that may repeat zero times knows nothing; large
//! classes, `.` and anything else know nothing; look-arounds match the empty string.
//!
//! Every summary is a sound over-approximation, and the sets, strings and queries are
//! capped: when a cap is hit the planner forgets (falls back towards `All`), it never
//! guesses. The plan may admit texts without a match (the regex verifies them); it never
//! excludes a text with one.

use crate::query::{trigrams_of, Query};
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::BTreeSet;

/// Most strings in an exact set.
const MAX_EXACT: usize = 16;
/// Most bytes over all strings of an exact set.
const MAX_EXACT_BYTES: usize = 2048;
/// Most characters of a class expanded into an exact set.
const MAX_CLASS: usize = 8;
/// Most strings in a prefix or suffix set.
const MAX_AFFIX: usize = 32;
/// Most (suffix, prefix) pairs whose boundary trigrams are ORed.
const MAX_BOUNDARY_PAIRS: usize = 64;
/// Most branches of an alternation that is not a small exact set; more know nothing.
const MAX_BRANCHES: usize = 64;
/// Most trigram leaves in the query of one node and in a final plan.
pub const MAX_PLAN_TRIGRAMS: usize = 128;

type Set = BTreeSet<Vec<u8>>;

/// The plan for `pattern`, parsed as `regex::Regex::new` parses it (default syntax
/// flags). A pattern that does not parse gives `All`.
///
/// A `Regex` built with `RegexBuilder` options that change the syntax (case
/// insensitivity, ignore-whitespace, octal, Unicode off, ...) must carry them as inline
/// flags (`(?i)`, `(?x)`, ...) in its pattern, because the plan is derived from the
/// pattern text alone.
pub fn plan_pattern(pattern: &str) -> Query {
    match regex_syntax::Parser::new().parse(pattern) {
        Ok(hir) => plan_hir(&hir),
        Err(_) => Query::All,
    }
}

/// The plan for a parsed regex.
pub fn plan_hir(hir: &Hir) -> Query {
    info(hir).into_inexact().query.bound(MAX_PLAN_TRIGRAMS)
}

/// What is known about the lowercased strings a node matches.
#[derive(Debug, Clone)]
struct Info {
    /// Every match is one of these (when `Some`); `prefix` and `suffix` are then unused.
    exact: Option<Set>,
    /// Every match starts with one of these (first bytes only; `""` = unknown).
    prefix: Set,
    /// Every match ends with one of these (last bytes only; `""` = unknown).
    suffix: Set,
    /// Every match satisfies this.
    query: Query,
}

impl Info {
    /// Nothing known (any string, the empty one included).
    fn any() -> Info {
        Info { exact: None, prefix: empty_only(), suffix: empty_only(), query: Query::All }
    }

    /// Matches exactly the strings of `set`.
    fn exact(set: Set, query: Query) -> Info {
        if set.is_empty() {
            // Matches nothing; knowing nothing is a safe over-approximation.
            return Info::any();
        }
        let info = Info { exact: Some(set), prefix: Set::new(), suffix: Set::new(), query };
        info.capped()
    }

    /// The empty string (empty regex, look-arounds).
    fn empty() -> Info {
        Info::exact(empty_only(), Query::All)
    }

    /// Turns an exact set over the caps into its inexact form.
    fn capped(self) -> Info {
        match &self.exact {
            Some(s) if s.len() > MAX_EXACT || bytes(s) > MAX_EXACT_BYTES => self.into_inexact(),
            _ => self,
        }
    }

    /// The inexact form: an exact set moves into the query and the affixes.
    fn into_inexact(self) -> Info {
        match self.exact {
            None => self,
            Some(s) => {
                let query = Query::and([self.query, or_strings(&s)]);
                Info::inexact(query, s.clone(), s)
            }
        }
    }

    /// An inexact summary: the full affixes are ANDed into the query (as far as they
    /// carry trigrams), then trimmed to the bytes that matter at a boundary.
    fn inexact(query: Query, prefix: Set, suffix: Set) -> Info {
        let query = Query::and([query, or_strings(&prefix), or_strings(&suffix)]).bound(MAX_PLAN_TRIGRAMS);
        Info { exact: None, prefix: trim(prefix, Side::Front), suffix: trim(suffix, Side::Back), query }
    }
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::empty(),
        HirKind::Literal(lit) => Info::exact(BTreeSet::from([lower(&lit.0)]), Query::All),
        HirKind::Class(class) => class_info(class),
        HirKind::Capture(cap) => info(&cap.sub),
        HirKind::Repetition(rep) => repetition(rep.min, rep.max, info(&rep.sub)),
        HirKind::Concat(subs) => {
            let mut acc = Info::empty();
            for sub in subs {
                acc = concat(acc, info(sub));
            }
            acc
        }
        HirKind::Alternation(subs) => alternate(subs.iter().map(info).collect()),
    }
}

/// A class of at most `MAX_CLASS` characters is the exact set of their (lowercased)
/// encodings; a larger class is one unknown character.
fn class_info(class: &Class) -> Info {
    let mut set = Set::new();
    let mut n = 0usize;
    match class {
        Class::Unicode(c) => {
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    n += 1;
                    if n > MAX_CLASS {
                        return Info::any();
                    }
                    let mut buf = [0u8; 4];
                    set.insert(lower(ch.encode_utf8(&mut buf).as_bytes()));
                }
            }
        }
        Class::Bytes(c) => {
            for r in c.ranges() {
                for b in r.start()..=r.end() {
                    n += 1;
                    if n > MAX_CLASS {
                        return Info::any();
                    }
                    set.insert(vec![b.to_ascii_lowercase()]);
                }
            }
        }
    }
    Info::exact(set, Query::All)
}

fn concat(x: Info, y: Info) -> Info {
    if let (Some(a), Some(b)) = (&x.exact, &y.exact) {
        if a.len() * b.len() <= MAX_EXACT {
            let set = cross(a, b);
            if bytes(&set) <= MAX_EXACT_BYTES {
                return Info::exact(set, Query::and([x.query, y.query]));
            }
        }
    }
    let (xs, ys) = (x.exact.clone(), y.exact.clone());
    let (xv, yv) = (x.into_inexact(), y.into_inexact());
    // Every match of xy starts with a match of x: with x exact, with one of its strings
    // followed by a prefix of y.
    let prefix = match xs {
        Some(a) if a.len() * yv.prefix.len() <= MAX_AFFIX => cross(&a, &yv.prefix),
        Some(a) => a,
        None => xv.prefix.clone(),
    };
    let suffix = match ys {
        Some(b) if xv.suffix.len() * b.len() <= MAX_AFFIX => cross(&xv.suffix, &b),
        Some(b) => b,
        None => yv.suffix.clone(),
    };
    let query = Query::and([xv.query, yv.query, boundary(&xv.suffix, &yv.prefix)]);
    Info::inexact(query, prefix, suffix)
}

fn alternate(infos: Vec<Info>) -> Info {
    if infos.iter().all(|i| i.exact.is_some()) {
        let mut union = Set::new();
        let mut queries = Vec::with_capacity(infos.len());
        for i in &infos {
            union.extend(i.exact.iter().flatten().cloned());
            queries.push(i.query.clone());
        }
        if union.len() <= MAX_EXACT && bytes(&union) <= MAX_EXACT_BYTES {
            return Info::exact(union, Query::or(queries));
        }
    }
    if infos.len() > MAX_BRANCHES {
        return Info::any();
    }
    let mut prefix = Set::new();
    let mut suffix = Set::new();
    let mut queries = Vec::with_capacity(infos.len());
    for i in infos {
        let v = i.into_inexact();
        prefix.extend(v.prefix);
        suffix.extend(v.suffix);
        queries.push(v.query);
    }
    Info::inexact(Query::or(queries), prefix, suffix)
}

fn repetition(min: u32, max: Option<u32>, sub: Info) -> Info {
    match (min, max) {
        (0, Some(0)) => Info::empty(),
        (0, Some(1)) => alternate(vec![Info::empty(), sub]),
        (0, _) => Info::any(),
        _ => {
            // A match is sub^k with k >= min: it starts with sub^min (we use at most three
            // copies) and ends with a match of sub.
            let copies = min.min(3);
            let mut r = sub.clone();
            for _ in 1..copies {
                r = concat(r, sub.clone());
            }
            if max == Some(min) && min == copies {
                return r;
            }
            let sub_suffix = sub.into_inexact().suffix;
            let rv = r.into_inexact();
            Info::inexact(rv.query, rv.prefix, sub_suffix)
        }
    }
}

/// The trigrams spanning the boundary between a match ending in one of `suffixes` and
/// one starting with one of `prefixes`: the OR over the pairs of the AND of each joined
/// string's trigrams (`All` when a pair joins to fewer than three bytes, or when there
/// are too many pairs).
fn boundary(suffixes: &Set, prefixes: &Set) -> Query {
    if suffixes.len() * prefixes.len() > MAX_BOUNDARY_PAIRS {
        return Query::All;
    }
    let joined: Set = cross(suffixes, prefixes);
    or_strings(&joined)
}

/// Texts containing one of `set`'s strings: the OR of the AND of each string's
/// trigrams; `All` if any string is shorter than three bytes.
fn or_strings(set: &Set) -> Query {
    if set.is_empty() || set.iter().any(|s| s.len() < 3) {
        return Query::All;
    }
    Query::or(set.iter().map(|s| Query::and(trigrams_of(s).into_iter().map(Query::Trigram))))
}

#[derive(Clone, Copy)]
enum Side {
    Front,
    Back,
}

/// Keeps the first (`Front`) or last (`Back`) two bytes of each string, then one, then
/// none, until the set fits `MAX_AFFIX`.
fn trim(set: Set, side: Side) -> Set {
    let cut = |set: &Set, n: usize| -> Set {
        set.iter()
            .map(|s| match side {
                Side::Front => s[..s.len().min(n)].to_vec(),
                Side::Back => s[s.len() - s.len().min(n)..].to_vec(),
            })
            .collect()
    };
    for n in [2, 1] {
        let t = cut(&set, n);
        if t.len() <= MAX_AFFIX {
            return t;
        }
    }
    empty_only()
}

fn cross(a: &Set, b: &Set) -> Set {
    let mut out = Set::new();
    for x in a {
        for y in b {
            let mut s = Vec::with_capacity(x.len() + y.len());
            s.extend_from_slice(x);
            s.extend_from_slice(y);
            out.insert(s);
        }
    }
    out
}

fn bytes(set: &Set) -> usize {
    set.iter().map(Vec::len).sum()
}

fn empty_only() -> Set {
    BTreeSet::from([Vec::new()])
}

fn lower(b: &[u8]) -> Vec<u8> {
    b.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trigram leaf written as a string (three bytes).
    fn t(s: &str) -> Query {
        let b = s.as_bytes();
        assert_eq!(b.len(), 3, "{s:?} is not a trigram");
        Query::Trigram([b[0], b[1], b[2]])
    }

    /// An `And` with its children in canonical (sorted) order.
    fn and(mut v: Vec<Query>) -> Query {
        v.sort();
        Query::And(v)
    }

    fn or(mut v: Vec<Query>) -> Query {
        v.sort();
        Query::Or(v)
    }

    fn ands(trigrams: &[&str]) -> Query {
        and(trigrams.iter().map(|s| t(s)).collect())
    }

    #[test]
    fn literal_is_the_and_of_its_trigrams() {
        assert_eq!(plan_pattern("i/o timeout"), ands(&["i/o", "/o ", "o t", " ti", "tim", "ime", "meo", "eou", "out"]));
    }

    #[test]
    fn literal_trigrams_are_lowercased() {
        assert_eq!(plan_pattern("Pod XY"), ands(&["pod", "od ", "d x", " xy"]));
    }

    #[test]
    fn case_insensitive_ascii_folds_to_the_literal() {
        // (?i) turns each letter into a class like [Dd]; each folds to one lowercase
        // byte, so the plan is the literal's.
        assert_eq!(plan_pattern("(?i)dead"), ands(&["dea", "ead"]));
        assert_eq!(plan_pattern("(?i)DEAD"), plan_pattern("dead"));
    }

    #[test]
    fn case_insensitive_keeps_unicode_folds_of_s() {
        // Unicode (?i)s also matches U+017F (long s, bytes C5 BF): both spellings stay
        // possible, the trigrams common to both are factored out.
        let raw = |a: &[u8]| Query::Trigram([a[0], a[1], a[2]]);
        let expected = and(vec![
            t("ref"),
            t("efu"),
            or(vec![
                ands(&["fus", "use", "sed"]),
                and(vec![raw(b"fu\xc5"), raw(b"u\xc5\xbf"), raw(b"\xc5\xbfe"), raw(b"\xbfed")]),
            ]),
        ]);
        assert_eq!(plan_pattern("(?i)refused"), expected);
    }

    #[test]
    fn concatenation_joins_pieces_so_spanning_trigrams_count() {
        // `ab` then `c` as separate HIR pieces (a capture forces the split).
        assert_eq!(plan_pattern("ab(c)d"), ands(&["abc", "bcd"]));
        // A one-character class between literals stays exact: [x] is the literal x.
        assert_eq!(plan_pattern("ab[x]de"), ands(&["abx", "bxd", "xde"]));
    }

    #[test]
    fn alternation_ors_its_branches() {
        assert_eq!(plan_pattern("foo|bar"), or(vec![t("foo"), t("bar")]));
        // Both branches stay exact: {foobaz, barbaz}, with the shared "baz" factored out.
        assert_eq!(
            plan_pattern("(?:foo|bar)baz"),
            and(vec![t("baz"), or(vec![ands(&["foo", "oob", "oba"]), ands(&["bar", "arb", "rba"])])])
        );
    }

    #[test]
    fn alternation_with_an_unconstrained_branch_is_all() {
        assert_eq!(plan_pattern("foo|x"), Query::All);
        assert_eq!(plan_pattern("foo|.*"), Query::All);
    }

    #[test]
    fn optional_suffix_gives_both_spellings() {
        // pods? "<anything>" not found
        let q = plan_pattern(r#"pods? ".*" not found"#);
        let mut expected: Vec<Query> =
            ["pod", "\" n", " no", "not", "ot ", "t f", " fo", "fou", "oun", "und"].iter().map(|s| t(s)).collect();
        expected.push(or(vec![ands(&["od ", "d \""]), ands(&["ods", "ds ", "s \""])]));
        assert_eq!(q, and(expected));
    }

    #[test]
    fn repetition_min_one_keeps_the_sub_query() {
        assert_eq!(plan_pattern("(?:abc)+"), t("abc"));
        assert_eq!(plan_pattern("x(?:abc){2,}"), ands(&["xab", "abc", "bca", "cab"]));
        assert_eq!(plan_pattern("(?:abc){2}"), ands(&["abc", "bca", "cab"]));
    }

    #[test]
    fn repetition_min_zero_is_all() {
        assert_eq!(plan_pattern("(?:abc)*"), Query::All);
        assert_eq!(plan_pattern("(?:abcdef){0,3}"), Query::All);
        // ... but its neighbours still count.
        assert_eq!(plan_pattern("abc(?:xyz)*def"), ands(&["abc", "def"]));
    }

    #[test]
    fn large_classes_and_dot_are_unconstrained() {
        assert_eq!(plan_pattern("."), Query::All);
        assert_eq!(plan_pattern(r"\d+"), Query::All);
        assert_eq!(plan_pattern(r"\d+\.\d+\.\d+\.\d+:6443"), ands(&[":64", "644", "443"]));
        assert_eq!(plan_pattern("[a-z]bc"), Query::All);
    }

    #[test]
    fn small_classes_expand() {
        assert_eq!(plan_pattern("[ab]cd"), or(vec![t("acd"), t("bcd")]));
    }

    #[test]
    fn look_arounds_match_empty() {
        assert_eq!(plan_pattern(r"^abc\b$"), t("abc"));
        assert_eq!(plan_pattern(r"ab\bcd"), ands(&["abc", "bcd"]));
    }

    #[test]
    fn empty_and_invalid_patterns_are_all() {
        assert_eq!(plan_pattern(""), Query::All);
        assert_eq!(plan_pattern("ab"), Query::All);
        assert_eq!(plan_pattern("(unclosed"), Query::All);
    }

    #[test]
    fn plans_are_bounded() {
        // A long literal: capped at MAX_PLAN_TRIGRAMS leaves.
        let mut x: u32 = 1;
        let long: String = (0..400)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'a' + ((x >> 16) % 26) as u8)
            })
            .collect();
        let q = plan_pattern(&long);
        assert!(q.leaves() <= MAX_PLAN_TRIGRAMS, "{} leaves", q.leaves());
        assert_ne!(q, Query::All);
        // Exponentially many case spellings: still bounded, still not All.
        let q = plan_pattern("(?i)ssssssssssssssssssssssss");
        assert!(q.leaves() <= MAX_PLAN_TRIGRAMS, "{} leaves", q.leaves());
        assert_ne!(q, Query::All);
        // Many alternatives: too many to OR, the plan gives up (a scan).
        let alts: Vec<String> = (0..300).map(|i| format!("w{i:04}x")).collect();
        assert_eq!(plan_pattern(&alts.join("|")), Query::All);
        // A few dozen: ORed, within the bound.
        let q = plan_pattern(&alts[..40].join("|"));
        assert!(q.leaves() <= MAX_PLAN_TRIGRAMS, "{} leaves", q.leaves());
        assert_ne!(q, Query::All);
    }
}
