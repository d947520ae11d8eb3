//! Ranking with ties. Changes whose evidence is identical (the same score from
//! the same kinds of links) are one tied group: the input order says nothing,
//! so no member is put before another. Groups are ranked by score, then by the
//! strength of their strongest link; members are listed by id, which is a
//! listing order, not a rank.

use std::collections::BTreeMap;

/// What ranks a change: its score and the evidence behind it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Standing {
    pub score: u32,
    /// The strength of its strongest link (higher is stronger).
    pub strength: u8,
    /// The kinds of link behind the score, each with its points, sorted: two
    /// changes with equal standings have the same evidence.
    pub evidence: Vec<(String, u32)>,
}

/// A standing as an ordered key: score, strength, evidence.
type StandingKey = (u32, u8, Vec<(String, u32)>);

/// Changes with the same standing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TieGroup<T> {
    /// 1-based rank of the group (members share it).
    pub rank: u32,
    pub standing: Standing,
    /// The members, by id.
    pub members: Vec<T>,
}

impl<T> TieGroup<T> {
    /// True when more than one change shares the rank.
    pub fn tied(&self) -> bool {
        self.members.len() > 1
    }
}

/// Groups `items` by standing, best first; a group's rank is one more than the
/// number of changes ranked above it (competition ranking: 1, 1, 3).
pub fn tie_groups<T>(items: Vec<T>, standing: impl Fn(&T) -> Standing, id: impl Fn(&T) -> String) -> Vec<TieGroup<T>> {
    let mut by_standing: BTreeMap<std::cmp::Reverse<StandingKey>, Vec<(String, T)>> = BTreeMap::new();
    for item in items {
        let s = standing(&item);
        by_standing.entry(std::cmp::Reverse((s.score, s.strength, s.evidence))).or_default().push((id(&item), item));
    }
    let mut out = Vec::new();
    let mut above = 0u32;
    for (std::cmp::Reverse((score, strength, evidence)), mut members) in by_standing {
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let n = members.len() as u32;
        out.push(TieGroup {
            rank: above + 1,
            standing: Standing { score, strength, evidence },
            members: members.into_iter().map(|(_, m)| m).collect(),
        });
        above += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standing(score: u32, kinds: &[(&str, u32)]) -> Standing {
        Standing { score, strength: 1, evidence: kinds.iter().map(|(k, p)| (k.to_string(), *p)).collect() }
    }

    #[test]
    fn equal_evidence_is_one_group_whatever_the_input_order() {
        let items = vec![
            ("b", standing(50, &[("component", 20), ("onset", 30)])),
            ("c", standing(70, &[("onset", 30), ("verbatim", 40)])),
            ("a", standing(50, &[("component", 20), ("onset", 30)])),
            ("d", standing(50, &[("onset", 30), ("title", 20)])),
        ];
        let mut reversed = items.clone();
        reversed.reverse();
        for input in [items, reversed] {
            let g = tie_groups(input, |i| i.1.clone(), |i| i.0.to_string());
            let shape: Vec<(u32, Vec<&str>)> =
                g.iter().map(|g| (g.rank, g.members.iter().map(|m| m.0).collect())).collect();
            // Same score, other evidence: a group of its own, ranked after (evidence sorts, never the id).
            assert_eq!(shape, vec![(1, vec!["c"]), (2, vec!["d"]), (3, vec!["a", "b"])], "{shape:?}");
            assert!(g[2].tied() && !g[0].tied());
        }
    }
}
