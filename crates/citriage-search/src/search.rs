//! Answering a regex from the index: plan it, evaluate the plan over the posting lists
//! as a tree of cursors that yields candidate ids in ascending order, verify each
//! candidate with the regex and hand the matches to the caller in ascending id order,
//! within a budget.
//!
//! Evaluation is lazy: an `And` leapfrogs its children (each seeks the smallest id at
//! or after the others' current one), an `Or` takes the smallest of its children's, and
//! lists are decoded only as far as the search goes, so a search stopped after its first
//! matches decodes only the start of each list. An `And` leaves out children far more
//! common than its rarest one (a decision made on list lengths alone, so deterministic):
//! leaving out a constraint only admits more candidates, never fewer.

use crate::index::{Postings, TextIndex};
use crate::plan::plan_pattern;
use crate::query::Query;
use crate::texts::TextId;
use regex::{Match, Regex};
use std::ops::ControlFlow;
use std::time::Instant;

/// An `And` child whose estimated size is more than this many times the rarest child's
/// is left out: decoding a posting costs a few nanoseconds, verifying a candidate some
/// hundreds, and the trigrams of one phrase are so correlated that the common ones
/// rarely eliminate a candidate the rare ones let through.
const COMMON_VS_RAREST: usize = 8;
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
    /// Candidates the plan yielded up to where the search ended: all it admits (every
    /// text when the index was not used) unless `stopped_early`.
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

impl TextIndex {
    /// Every text with a match of `re`, in ascending id order: `visit` gets the id, the
    /// text and the leftmost-first match (`re.find`), and may break to stop.
    ///
    /// The plan comes from `re.as_str()` parsed with the default syntax flags (see
    /// [`plan_pattern`]): options set on a `RegexBuilder` that change the syntax must be
    /// inline flags in the pattern.
    pub fn search(
        &self,
        re: &Regex,
        budget: SearchBudget,
        visit: impl for<'t> FnMut(TextId, &'t str, Match<'t>) -> ControlFlow<()>,
    ) -> SearchStats {
        self.search_planned(&plan_pattern(re.as_str()), re, budget, visit)
    }

    /// [`TextIndex::search`] with a plan the caller made (it must admit every text with a
    /// match of `re`, as plans from [`plan_pattern`] and [`crate::plan_hir`] do).
    pub fn search_planned(
        &self,
        plan: &Query,
        re: &Regex,
        budget: SearchBudget,
        mut visit: impl for<'t> FnMut(TextId, &'t str, Match<'t>) -> ControlFlow<()>,
    ) -> SearchStats {
        let mut cursor = self.cursor(plan);
        let mut texts = self.reader();
        let mut stats = SearchStats { used_index: !matches!(cursor, Cursor::All { .. }), ..SearchStats::default() };
        let mut from = 0u32;
        loop {
            if budget.max_candidates.is_some_and(|max| stats.verified >= max)
                || (stats.candidates.is_multiple_of(DEADLINE_STRIDE)
                    && budget.deadline.is_some_and(|d| Instant::now() >= d))
            {
                stats.stopped_early = cursor.seek(from).is_some();
                break;
            }
            let Some(id) = cursor.seek(from) else { break };
            stats.candidates += 1;
            // Ids are below u32::MAX (the builder's limit), so this cannot wrap.
            from = id + 1;
            let Some(text) = texts.get(TextId(id)) else { continue };
            stats.verified += 1;
            if let Some(m) = re.find(text) {
                stats.matched += 1;
                if visit(TextId(id), text, m).is_break() {
                    stats.stopped_early = cursor.seek(from).is_some();
                    break;
                }
            }
        }
        stats
    }

    /// The candidates `plan` admits, ascending; `None` when it admits every text.
    pub fn candidates(&self, plan: &Query) -> Option<Vec<TextId>> {
        let mut cursor = self.cursor(plan);
        if matches!(cursor, Cursor::All { .. }) {
            return None;
        }
        let mut out = Vec::new();
        let mut from = 0u32;
        while let Some(id) = cursor.seek(from) {
            out.push(TextId(id));
            from = id + 1;
        }
        Some(out)
    }

    fn cursor(&self, q: &Query) -> Cursor<'_> {
        match q {
            Query::All => Cursor::All { end: self.len() as u32 },
            Query::Trigram(t) => Cursor::List { list: self.postings(*t), head: None },
            Query::Or(children) => {
                let mut cs = Vec::with_capacity(children.len());
                for c in children {
                    let c = self.cursor(c);
                    if matches!(c, Cursor::All { .. }) {
                        return c;
                    }
                    cs.push(c);
                }
                Cursor::Or(cs)
            }
            Query::And(children) => {
                let mut parts: Vec<(usize, &Query)> = children.iter().map(|c| (self.estimate(c), c)).collect();
                // Rarest first; ties keep the plan's canonical order.
                parts.sort_by_key(|&(est, _)| est);
                let rarest = parts.first().map_or(0, |p| p.0);
                let mut cs: Vec<Cursor<'_>> = parts
                    .into_iter()
                    .filter(|&(est, _)| est <= rarest.saturating_mul(COMMON_VS_RAREST))
                    .map(|(_, c)| self.cursor(c))
                    .filter(|c| !matches!(c, Cursor::All { .. }))
                    .collect();
                match cs.len() {
                    0 => Cursor::All { end: self.len() as u32 },
                    1 => cs.pop().unwrap_or(Cursor::All { end: self.len() as u32 }),
                    _ => Cursor::And(cs),
                }
            }
        }
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

/// A lazily evaluated candidate set.
enum Cursor<'a> {
    /// Every id below `end`.
    All {
        end: u32,
    },
    /// One posting list; `head` is the last id decoded (`None` before the first).
    List {
        list: Postings<'a>,
        head: Option<u32>,
    },
    And(Vec<Cursor<'a>>),
    Or(Vec<Cursor<'a>>),
}

impl Cursor<'_> {
    /// The smallest id at or after `target` in the set, if any. Targets must not
    /// decrease from one call to the next; the same target gives the same answer.
    fn seek(&mut self, target: u32) -> Option<u32> {
        match self {
            Cursor::All { end } => (target < *end).then_some(target),
            Cursor::List { list, head } => loop {
                if let Some(h) = *head {
                    if h >= target {
                        return Some(h);
                    }
                }
                *head = Some(list.next()?.as_u32());
            },
            Cursor::And(children) => {
                let mut x = target;
                'again: loop {
                    for c in children.iter_mut() {
                        let y = c.seek(x)?;
                        if y > x {
                            x = y;
                            continue 'again;
                        }
                    }
                    return Some(x);
                }
            }
            Cursor::Or(children) => children.iter_mut().filter_map(|c| c.seek(target)).min(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(ids: &[u32]) -> (Vec<u8>, u32) {
        let mut buf = Vec::new();
        let mut prev = 0;
        for &id in ids {
            crate::index::write_varint(&mut buf, id - prev);
            prev = id;
        }
        (buf, ids.len() as u32)
    }

    fn drain(mut c: Cursor<'_>) -> Vec<u32> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(id) = c.seek(from) {
            out.push(id);
            from = id + 1;
        }
        out
    }

    #[test]
    fn cursors_intersect_unite_and_seek() {
        let (a, na) = list(&[1, 3, 5, 7, 9]);
        let (b, nb) = list(&[0, 3, 4, 5, 9, 12]);
        let (c, nc) = list(&[5, 12]);
        fn cur(bytes: &[u8], n: u32) -> Cursor<'_> {
            Cursor::List { list: Postings::new(bytes, n), head: None }
        }
        assert_eq!(drain(cur(&a, na)), vec![1, 3, 5, 7, 9]);
        assert_eq!(drain(Cursor::And(vec![cur(&a, na), cur(&b, nb)])), vec![3, 5, 9]);
        assert_eq!(drain(Cursor::Or(vec![cur(&a, na), cur(&c, nc)])), vec![1, 3, 5, 7, 9, 12]);
        assert_eq!(
            drain(Cursor::And(vec![Cursor::Or(vec![cur(&a, na), cur(&c, nc)]), cur(&b, nb)])),
            vec![3, 5, 9, 12]
        );
        assert_eq!(drain(Cursor::And(vec![cur(&a, na), cur(&c, nc), cur(&b, nb)])), vec![5]);
        assert_eq!(drain(Cursor::All { end: 3 }), vec![0, 1, 2]);
        assert_eq!(drain(Cursor::And(vec![cur(&[], 0), cur(&a, na)])), Vec::<u32>::new());
        // Seeking is idempotent and skips ahead.
        let mut s = cur(&b, nb);
        assert_eq!(s.seek(4), Some(4));
        assert_eq!(s.seek(4), Some(4));
        assert_eq!(s.seek(6), Some(9));
        assert_eq!(s.seek(13), None);
    }
}
