//! Ranking with ties. Changes with the same standing (the same score from
//! equally strong evidence) are one tied group: the input order says nothing,
//! so no member is put before another. Groups are ranked by score, then by the
//! strength of their strongest link; a group's members share its rank and are
//! listed by id, a listing order, not a rank.

use std::collections::BTreeMap;

/// What ranks a change: its score and the strength of its strongest link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Standing {
    pub score: u32,
    /// The strength of its strongest link (higher is stronger).
    pub strength: u8,
}

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
    let mut by_standing: BTreeMap<std::cmp::Reverse<Standing>, Vec<(String, T)>> = BTreeMap::new();
    for item in items {
        by_standing.entry(std::cmp::Reverse(standing(&item))).or_default().push((id(&item), item));
    }
    let mut out = Vec::new();
    let mut above = 0u32;
    for (std::cmp::Reverse(standing), mut members) in by_standing {
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let n = members.len() as u32;
        out.push(TieGroup { rank: above + 1, standing, members: members.into_iter().map(|(_, m)| m).collect() });
        above += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_standings_are_one_group_whatever_the_input_order() {
        let items = vec![
            ("b", Standing { score: 50, strength: 1 }),
            ("c", Standing { score: 70, strength: 1 }),
            ("a", Standing { score: 50, strength: 1 }),
            ("d", Standing { score: 50, strength: 2 }),
        ];
        let mut reversed = items.clone();
        reversed.reverse();
        for input in [items, reversed] {
            let g = tie_groups(input, |i| i.1, |i| i.0.to_string());
            let shape: Vec<(u32, Vec<&str>)> =
                g.iter().map(|g| (g.rank, g.members.iter().map(|m| m.0).collect())).collect();
            // The same score from stronger evidence ranks first; equal standings share rank 3.
            assert_eq!(shape, vec![(1, vec!["c"]), (2, vec!["d"]), (3, vec!["a", "b"])], "{shape:?}");
            assert!(g[2].tied() && !g[0].tied());
        }
    }
}
