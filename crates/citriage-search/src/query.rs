//! The boolean trigram query a regex is planned into: `All`, one trigram, or an `And` /
//! `Or` of sub-queries. Owns the smart constructors (flattening, sorting, deduplication,
//! absorption, factoring of common conjuncts), `bound` (weakening a query to a size
//! budget, never excluding a text the original admits) and evaluation against any
//! trigram-membership predicate.
//!
//! Trigrams are three bytes of ASCII-lowercased text: the index folds ASCII case, and
//! so does the planner.

use std::collections::BTreeSet;
use std::fmt;

/// Three consecutive bytes of ASCII-lowercased text.
pub type Trigram = [u8; 3];

/// A monotone boolean query over trigram presence.
///
/// A text satisfies `Trigram(t)` when its ASCII-lowercased bytes contain `t`; `All` is
/// satisfied by every text. Queries built with [`Query::and`] and [`Query::or`] are kept
/// in a canonical form: children flattened, sorted and deduplicated, so equal
/// constraints compare equal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Query {
    /// No constraint: every text is a candidate.
    All,
    /// Texts containing this trigram (after ASCII lowercasing).
    Trigram(Trigram),
    /// Texts satisfying every child (at least two children when canonical).
    And(Vec<Query>),
    /// Texts satisfying at least one child (at least two children when canonical).
    Or(Vec<Query>),
}

impl Query {
    /// The trigram query for `t`, lowercasing ASCII letters.
    pub fn trigram(t: [u8; 3]) -> Query {
        Query::Trigram([t[0].to_ascii_lowercase(), t[1].to_ascii_lowercase(), t[2].to_ascii_lowercase()])
    }

    /// The conjunction of `parts`, canonical: nested `And`s flattened, `All` dropped,
    /// children sorted and deduplicated, an `Or` dropped when one of its alternatives is
    /// already implied by the other children. No parts gives `All`.
    pub fn and(parts: impl IntoIterator<Item = Query>) -> Query {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Query::All => {}
                Query::And(children) => out.extend(children),
                other => out.push(other),
            }
        }
        out.sort();
        out.dedup();
        // Absorption: x AND (x OR y) = x.
        let implied: Vec<bool> = out
            .iter()
            .map(|c| match c {
                Query::Or(alts) => alts.iter().any(|a| conjuncts(a).iter().all(|x| out.contains(x))),
                _ => false,
            })
            .collect();
        let mut kept: Vec<Query> = out.into_iter().zip(implied).filter(|(_, drop)| !drop).map(|(q, _)| q).collect();
        match kept.len() {
            0 => Query::All,
            1 => kept.pop().unwrap_or(Query::All),
            _ => Query::And(kept),
        }
    }

    /// The disjunction of `parts`, canonical: nested `Or`s flattened, children sorted and
    /// deduplicated, any `All` child making the whole `All`, an alternative dropped when
    /// a weaker one is present (`x OR (x AND y)` = `x`), and conjuncts common to every
    /// alternative factored out (`(a AND b) OR (a AND c)` = `a AND (b OR c)`).
    ///
    /// No parts also gives `All`: an empty disjunction would exclude everything, and a
    /// plan must never exclude a match, so the planner never relies on it.
    pub fn or(parts: impl IntoIterator<Item = Query>) -> Query {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Query::All => return Query::All,
                Query::Or(children) => out.extend(children),
                other => out.push(other),
            }
        }
        out.sort();
        out.dedup();
        match out.len() {
            0 => return Query::All,
            1 => return out.pop().unwrap_or(Query::All),
            _ => {}
        }
        // Factor conjuncts common to every alternative.
        let sets: Vec<BTreeSet<Query>> = out.iter().map(|q| conjuncts(q).into_iter().collect()).collect();
        let mut common = sets[0].clone();
        for s in &sets[1..] {
            common.retain(|q| s.contains(q));
        }
        if !common.is_empty() {
            let mut rests = Vec::with_capacity(sets.len());
            for s in &sets {
                let rest: Vec<Query> = s.iter().filter(|q| !common.contains(*q)).cloned().collect();
                if rest.is_empty() {
                    // One alternative is exactly the common part: the disjunction is it.
                    return Query::and(common);
                }
                rests.push(Query::and(rest));
            }
            return Query::and(common.into_iter().chain([Query::or(rests)]));
        }
        // Absorption: drop an alternative that implies another one.
        let mut keep = vec![true; out.len()];
        for i in 0..out.len() {
            for j in 0..out.len() {
                if i != j && keep[j] && sets[j].is_subset(&sets[i]) && sets[i].len() > sets[j].len() {
                    keep[i] = false;
                    break;
                }
            }
        }
        let mut kept: Vec<Query> = out.into_iter().zip(keep).filter(|(_, k)| *k).map(|(q, _)| q).collect();
        if kept.len() == 1 {
            return kept.pop().unwrap_or(Query::All);
        }
        Query::Or(kept)
    }

    /// Number of trigram leaves.
    pub fn leaves(&self) -> usize {
        match self {
            Query::All => 0,
            Query::Trigram(_) => 1,
            Query::And(c) | Query::Or(c) => c.iter().map(Query::leaves).sum(),
        }
    }

    /// A weaker query with at most `max_leaves` trigram leaves: an `And` keeps a prefix
    /// of its children (trigrams first, in sorted order), an `Or` too large to bound
    /// becomes `All`. Everything the original admits, the result admits.
    pub fn bound(self, max_leaves: usize) -> Query {
        if self.leaves() <= max_leaves {
            return self;
        }
        match self {
            Query::All | Query::Trigram(_) => Query::All,
            Query::And(children) => {
                let mut left = max_leaves;
                let mut kept = Vec::new();
                for c in children {
                    if left == 0 {
                        break;
                    }
                    let c = c.bound(left);
                    left -= c.leaves();
                    kept.push(c);
                }
                Query::and(kept)
            }
            Query::Or(children) => {
                let share = max_leaves / children.len();
                let mut kept = Vec::with_capacity(children.len());
                for c in children {
                    let c = c.bound(share);
                    if c == Query::All {
                        return Query::All;
                    }
                    kept.push(c);
                }
                Query::or(kept)
            }
        }
    }

    /// Whether a text whose trigram set is described by `has` satisfies the query.
    pub fn eval(&self, has: &impl Fn(Trigram) -> bool) -> bool {
        match self {
            Query::All => true,
            Query::Trigram(t) => has(*t),
            Query::And(c) => c.iter().all(|q| q.eval(has)),
            Query::Or(c) => c.iter().any(|q| q.eval(has)),
        }
    }
}

/// The direct conjuncts of `q`: its children when it is an `And`, else itself.
fn conjuncts(q: &Query) -> Vec<Query> {
    match q {
        Query::And(c) => c.clone(),
        other => vec![other.clone()],
    }
}

/// The distinct trigrams of `bytes` after ASCII lowercasing, in order of first
/// appearance.
pub fn trigrams_of(bytes: &[u8]) -> Vec<Trigram> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for w in bytes.windows(3) {
        let t = [w[0].to_ascii_lowercase(), w[1].to_ascii_lowercase(), w[2].to_ascii_lowercase()];
        if seen.insert(t) {
            out.push(t);
        }
    }
    out
}

impl fmt::Display for Query {
    /// `all`, `"abc"` (bytes outside printable ASCII as `\xNN`), `and(... ...)`,
    /// `or(... ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Query::All => f.write_str("all"),
            Query::Trigram(t) => {
                f.write_str("\"")?;
                for &b in t {
                    match b {
                        b'"' | b'\\' => write!(f, "\\{}", b as char)?,
                        0x20..=0x7e => write!(f, "{}", b as char)?,
                        _ => write!(f, "\\x{b:02x}")?,
                    }
                }
                f.write_str("\"")
            }
            Query::And(c) | Query::Or(c) => {
                f.write_str(if matches!(self, Query::And(_)) { "and(" } else { "or(" })?;
                for (i, q) in c.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{q}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Trigram([b[0], b[1], b[2]])
    }

    #[test]
    fn and_flattens_drops_all_sorts_and_dedups() {
        let q = Query::and([t("xyz"), Query::All, Query::And(vec![t("abc"), t("xyz")]), t("abc")]);
        assert_eq!(q, Query::And(vec![t("abc"), t("xyz")]));
        assert_eq!(Query::and([]), Query::All);
        assert_eq!(Query::and([Query::All, t("abc")]), t("abc"));
    }

    #[test]
    fn or_with_all_is_all_and_empty_or_is_all() {
        assert_eq!(Query::or([t("abc"), Query::All]), Query::All);
        assert_eq!(Query::or([]), Query::All);
        assert_eq!(Query::or([t("abc"), t("abc")]), t("abc"));
    }

    #[test]
    fn or_factors_common_conjuncts() {
        let q = Query::or([Query::and([t("abc"), t("bcd")]), Query::and([t("abc"), t("bce")])]);
        assert_eq!(q, Query::And(vec![t("abc"), Query::Or(vec![t("bcd"), t("bce")])]));
        // One alternative equal to the common part: the disjunction is that part.
        let q = Query::or([t("abc"), Query::and([t("abc"), t("xyz")])]);
        assert_eq!(q, t("abc"));
    }

    #[test]
    fn or_drops_an_alternative_that_implies_another() {
        let q = Query::or([
            Query::and([t("aaa"), t("bbb")]),
            Query::and([t("aaa"), t("bbb"), t("ccc")]),
            Query::and([t("ddd"), t("eee")]),
        ]);
        assert_eq!(q, Query::Or(vec![Query::And(vec![t("aaa"), t("bbb")]), Query::And(vec![t("ddd"), t("eee")])]));
    }

    #[test]
    fn and_absorbs_an_implied_disjunction() {
        let q = Query::and([t("abc"), Query::Or(vec![t("abc"), t("xyz")])]);
        assert_eq!(q, t("abc"));
    }

    #[test]
    fn trigram_lowercases() {
        assert_eq!(Query::trigram(*b"AbC"), t("abc"));
    }

    #[test]
    fn bound_weakens_and_never_strengthens() {
        let big = Query::and(["aaa", "bbb", "ccc", "ddd"].map(t));
        let b = big.clone().bound(2);
        assert_eq!(b, Query::And(vec![t("aaa"), t("bbb")]));
        let or = Query::Or(vec![big.clone(), Query::and(["eee", "fff"].map(t))]);
        // Each alternative gets half the budget; weakening an alternative is fine.
        assert_eq!(
            or.clone().bound(4),
            Query::Or(vec![Query::And(vec![t("aaa"), t("bbb")]), Query::and(["eee", "fff"].map(t))])
        );
        // An Or that cannot give each alternative a leaf becomes All.
        assert_eq!(or.bound(1), Query::All);
        assert_eq!(t("abc").bound(0), Query::All);
        assert_eq!(big.clone().bound(10), big);
    }

    #[test]
    fn eval_follows_the_boolean_structure() {
        let q = Query::and([t("abc"), Query::Or(vec![t("xyz"), t("uvw")])]);
        let has = |set: &'static [&'static str]| move |tri: Trigram| set.iter().any(|s| s.as_bytes() == tri);
        assert!(q.eval(&has(&["abc", "uvw"])));
        assert!(!q.eval(&has(&["abc"])));
        assert!(!q.eval(&has(&["xyz", "uvw"])));
        assert!(Query::All.eval(&has(&[])));
    }

    #[test]
    fn trigrams_of_lowercases_dedups_and_skips_short() {
        assert_eq!(trigrams_of(b"AbAbA"), vec![*b"aba", *b"bab"]);
        assert!(trigrams_of(b"ab").is_empty());
    }

    #[test]
    fn display_escapes_bytes() {
        let q = Query::and([t("a\"b"), Query::Trigram([0xe2, 0x84, 0xaa])]);
        assert_eq!(q.to_string(), r#"and("a\"b" "\xe2\x84\xaa")"#);
        assert_eq!(Query::or([t("abc"), t("xyz")]).to_string(), r#"or("abc" "xyz")"#);
        assert_eq!(Query::All.to_string(), "all");
    }
}
