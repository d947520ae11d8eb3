//! Answering a regex from the index: plan it, evaluate the plan over the posting lists
//! to get candidate ids (ascending), verify each candidate with the regex and hand the
//! matches to the caller in ascending id order, within a budget.
//!
//! Evaluation intersects an `And`'s children rarest first and stops intersecting when
//! the candidates left are so few that verifying them is cheaper than decoding the next
//! list (a decision made on list lengths alone, so it is deterministic); skipping a
//! constraint only admits more candidates, never fewer.

use crate::index::{TextId, TextIndex};
use crate::plan::plan_pattern;
use crate::query::Query;
use regex::{Match, Regex};
use std::ops::ControlFlow;
use std::time::Instant;

/// Stop intersecting once the candidates times this is below the next list's length:
/// decoding a posting costs a few nanoseconds, verifying a candidate some hundreds, and
/// the trigrams of one phrase are so correlated that the common ones left after the
/// rare ones rarely eliminate anything.
const VERIFY_VS_DECODE: usize = 16;
/// How many candidates are verified between two looks at the deadline.
const DEADLINE_STRIDE: usize = 64;

/// How much work one search may do.
///
/// `max_candidates` caps the candidates verified with the regex (deterministic: the
/// same index and regex stop at the same id). `deadline` is an instant chosen by the
/// caller, who owns the clock; it is compared with `Instant::now()` before the first
/// verification and then every 64 verifications, so results cut by a deadline depend
/// on timing. Both unset means no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchBudget {
    pub max_candidates: Option<usize>,
    pub deadline: Option<Instant>,
}

impl SearchBudget {
    /// No limit.
    pub fn unlimited() -> SearchBudget {
        SearchBudget::default()
    }

    /// At most `n` candidates verified.
    pub fn max_candidates(n: usize) -> SearchBudget {
        SearchBudget { max_candidates: Some(n), deadline: None }
    }

    /// The same budget, also stopping at `deadline`.
    pub fn with_deadline(self, deadline: Instant) -> SearchBudget {
        SearchBudget { deadline: Some(deadline), ..self }
    }
}

/// What one search did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Candidates the plan admitted (every text when the index was not used).
    pub candidates: usize,
    /// Candidates run through the regex.
    pub verified: usize,
    /// Verified candidates with a match (each passed to the visitor).
    pub matched: usize,
    /// Whether the plan narrowed the texts (false when the plan is `All`: a scan).
    pub used_index: bool,
    /// Whether the search ended before verifying every candidate: the budget ran out or
    /// the visitor broke.
    pub stopped_early: bool,
}

/// A candidate set: every text, or these ids ascending.
enum Ids {
    All,
    Some(Vec<u32>),
}

impl TextIndex {
    /// Every text with a match of `re`, in ascending id order: `visit` gets the id, the
    /// text and the leftmost-first match (`re.find`), and may break to stop.
    ///
    /// The plan comes from `re.as_str()` parsed with the default syntax flags (see
    /// [`plan_pattern`]): options set on a `RegexBuilder` that change the syntax must be
    /// inline flags in the pattern.
    pub fn search<'a>(
        &'a self,
        re: &Regex,
        budget: SearchBudget,
        visit: impl FnMut(TextId, &'a str, Match<'a>) -> ControlFlow<()>,
    ) -> SearchStats {
        self.search_planned(&plan_pattern(re.as_str()), re, budget, visit)
    }

    /// [`TextIndex::search`] with a plan the caller made (it must admit every text with a
    /// match of `re`, as plans from [`plan_pattern`] and [`crate::plan_hir`] do).
    pub fn search_planned<'a>(
        &'a self,
        plan: &Query,
        re: &Regex,
        budget: SearchBudget,
        mut visit: impl FnMut(TextId, &'a str, Match<'a>) -> ControlFlow<()>,
    ) -> SearchStats {
        let ids = self.eval(plan);
        let (total, used_index) = match &ids {
            Ids::All => (self.len(), false),
            Ids::Some(v) => (v.len(), true),
        };
        let mut stats = SearchStats { candidates: total, used_index, ..SearchStats::default() };
        let mut next = 0usize;
        while next < total {
            if budget.max_candidates.is_some_and(|max| stats.verified >= max)
                || (next % DEADLINE_STRIDE == 0 && budget.deadline.is_some_and(|d| Instant::now() >= d))
            {
                break;
            }
            let id = match &ids {
                Ids::All => TextId(next as u32),
                Ids::Some(v) => TextId(v[next]),
            };
            next += 1;
            let Some(text) = self.get(id) else { continue };
            stats.verified += 1;
            if let Some(m) = re.find(text) {
                stats.matched += 1;
                if visit(id, text, m).is_break() {
                    break;
                }
            }
        }
        stats.stopped_early = next < total;
        stats
    }

    /// The candidates `plan` admits, ascending; `None` when it admits every text.
    pub fn candidates(&self, plan: &Query) -> Option<Vec<TextId>> {
        match self.eval(plan) {
            Ids::All => None,
            Ids::Some(v) => Some(v.into_iter().map(TextId).collect()),
        }
    }

    fn eval(&self, q: &Query) -> Ids {
        match q {
            Query::All => Ids::All,
            Query::Trigram(t) => Ids::Some(self.postings(*t).map(|id| id.0).collect()),
            Query::Or(children) => {
                let mut acc: Vec<u32> = Vec::new();
                for c in children {
                    match self.eval(c) {
                        Ids::All => return Ids::All,
                        Ids::Some(v) => acc = union(&acc, &v),
                    }
                }
                Ids::Some(acc)
            }
            Query::And(children) => self.eval_and(children),
        }
    }

    fn eval_and(&self, children: &[Query]) -> Ids {
        let mut parts: Vec<(usize, &Query)> = children.iter().map(|c| (self.estimate(c), c)).collect();
        // Rarest first; ties keep the plan's canonical order.
        parts.sort_by_key(|&(est, _)| est);
        let mut cur: Option<Vec<u32>> = None;
        for (est, c) in parts {
            if let Some(ids) = &cur {
                if ids.is_empty() || ids.len().saturating_mul(VERIFY_VS_DECODE) < est {
                    break;
                }
            }
            cur = match (cur, c) {
                (Some(ids), Query::Trigram(t)) => Some(intersect_stream(&ids, self.postings(*t).map(|id| id.0))),
                (cur, c) => match (cur, self.eval(c)) {
                    (cur, Ids::All) => cur,
                    (None, Ids::Some(v)) => Some(v),
                    (Some(ids), Ids::Some(v)) => Some(intersect_stream(&ids, v.into_iter())),
                },
            };
        }
        cur.map_or(Ids::All, Ids::Some)
    }

    /// An upper bound on the candidates `q` admits, used as its cost.
    fn estimate(&self, q: &Query) -> usize {
        match q {
            Query::All => self.len(),
            Query::Trigram(t) => self.trigram_frequency(*t) as usize,
            Query::And(c) => c.iter().map(|q| self.estimate(q)).min().unwrap_or(self.len()),
            Query::Or(c) => c.iter().map(|q| self.estimate(q)).fold(0usize, usize::saturating_add).min(self.len()),
        }
    }
}

/// The ids of `small` that `list` (ascending) also yields; stops reading `list` once
/// `small` is exhausted.
fn intersect_stream(small: &[u32], list: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut out = Vec::with_capacity(small.len());
    let mut i = 0;
    for id in list {
        while i < small.len() && small[i] < id {
            i += 1;
        }
        if i == small.len() {
            break;
        }
        if small[i] == id {
            out.push(id);
            i += 1;
        }
    }
    out
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersect_and_union_of_sorted_lists() {
        assert_eq!(intersect_stream(&[1, 3, 5, 7], [0, 3, 4, 5, 8].into_iter()), vec![3, 5]);
        assert_eq!(intersect_stream(&[], [1, 2].into_iter()), Vec::<u32>::new());
        assert_eq!(intersect_stream(&[9], [1, 2].into_iter()), Vec::<u32>::new());
        assert_eq!(union(&[1, 4, 6], &[2, 4, 9]), vec![1, 2, 4, 6, 9]);
        assert_eq!(union(&[], &[2]), vec![2]);
    }
}
