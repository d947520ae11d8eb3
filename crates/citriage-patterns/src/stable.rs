//! Cluster ids that stay stable across days.
//!
//! go.k8s.io/triage ids are hashes of the key text, so a cluster whose key drifts (a new
//! representative, a changed line) gets a new id every day. [`StableIdAssigner`] takes the
//! previous day's `(stable id, key)` list as plain data and maps today's clusters onto it:
//!
//! 0. when the caller knows which id each member failure was first given (its votes), the
//!    id most of its failures carry: an id follows its failures whatever window or as-of a
//!    run used (largest vote first, then larger cluster, then key, then id);
//! 1. identical key → same id;
//! 2. otherwise the previous key that matches under go.k8s.io/triage's 10% rule, then under
//!    a looser drift rule (default 20%), cheapest lower bound first;
//! 3. otherwise a new id derived from the key (`c` + 12 hex of SHA-1), suffixed on collision.
//!
//! Each previous id is given to at most one cluster; larger clusters choose first, ties by
//! key text, so the result is deterministic. Storage is the caller's business.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::cluster::{KeyIndex, MatchRule, TextTable};

/// A cluster of a previous run, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviousCluster {
    /// The stable id it carried.
    pub stable_id: String,
    /// Its key text (normalized, same profile).
    pub key: String,
}

/// A cluster of the current run to be named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CurrentCluster<'a> {
    /// Key text.
    pub key: &'a str,
    /// Number of failures (larger clusters choose first).
    pub size: usize,
}

/// How a stable id was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdOrigin {
    /// Most of its failures were first seen under this id.
    Members,
    /// The key is unchanged.
    Exact,
    /// The key drifted within go.k8s.io/triage's 10% rule.
    Similar,
    /// The key drifted within the looser drift rule.
    Drifted,
    /// No previous cluster matched: a new id.
    New,
}

/// The id given to one current cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StableAssignment {
    /// Stable id.
    pub stable_id: String,
    /// How it was obtained.
    pub origin: IdOrigin,
    /// The previous key it was carried from (None for new ids).
    pub previous_key: Option<String>,
}

/// Assigns stable ids from a previous run's list (see the module docs).
#[derive(Debug, Clone)]
pub struct StableIdAssigner {
    previous: Vec<PreviousCluster>,
    drift: f32,
}

impl StableIdAssigner {
    /// Assigner over the previous run's clusters (20% drift rule).
    pub fn new(previous: Vec<PreviousCluster>) -> Self {
        StableIdAssigner { previous, drift: 0.2 }
    }

    /// Set the drift fraction (0 disables the drift step).
    pub fn with_drift(mut self, fraction: f32) -> Self {
        self.drift = fraction;
        self
    }

    /// New id for a key: `c` + the first 12 hex chars of SHA-1 of the key.
    pub fn new_id(key: &str) -> String {
        let d = sha1_smol::Sha1::from(key).digest().to_string();
        format!("c{}", &d[..12])
    }

    /// Assign ids to `current` (returned in the same order as `current`).
    pub fn assign(&self, current: &[CurrentCluster<'_>]) -> Vec<StableAssignment> {
        self.assign_with_votes(current, &[])
    }

    /// Assign ids to `current`, first by `votes`: for each current cluster (same order), the
    /// ids its member failures were first given, with how many failures carry each.
    pub fn assign_with_votes(
        &self,
        current: &[CurrentCluster<'_>],
        votes: &[Vec<(String, u64)>],
    ) -> Vec<StableAssignment> {
        let mut out: Vec<Option<StableAssignment>> = vec![None; current.len()];
        // 0. ids follow their failures
        let mut triples: Vec<(u64, usize, &str)> = Vec::new();
        for (i, v) in votes.iter().enumerate().take(current.len()) {
            for (id, n) in v {
                if *n > 0 {
                    triples.push((*n, i, id.as_str()));
                }
            }
        }
        triples.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then_with(|| current[b.1].size.cmp(&current[a.1].size))
                .then_with(|| current[a.1].key.cmp(current[b.1].key))
                .then_with(|| a.2.cmp(b.2))
        });
        let mut voted: HashSet<&str> = HashSet::new();
        for (_, i, id) in triples {
            if out[i].is_some() || voted.contains(id) {
                continue;
            }
            voted.insert(id);
            let previous_key = self.previous.iter().find(|p| p.stable_id == id).map(|p| p.key.clone());
            out[i] = Some(StableAssignment { stable_id: id.to_string(), origin: IdOrigin::Members, previous_key });
        }
        let mut order: Vec<usize> = (0..current.len()).collect();
        order.sort_by(|&a, &b| {
            current[b].size.cmp(&current[a].size).then_with(|| current[a].key.cmp(current[b].key)).then(a.cmp(&b))
        });

        // Previous clusters: the first occurrence of each key and of each id wins.
        let mut seen_ids: HashSet<&str> = HashSet::new();
        let mut prev: Vec<&PreviousCluster> = Vec::new();
        let mut by_key: HashMap<&str, usize> = HashMap::new();
        for p in &self.previous {
            if seen_ids.insert(p.stable_id.as_str()) && !by_key.contains_key(p.key.as_str()) {
                by_key.insert(p.key.as_str(), prev.len());
                prev.push(p);
            }
        }
        let mut used: Vec<bool> = prev.iter().map(|p| voted.contains(p.stable_id.as_str())).collect();
        let mut taken: HashSet<String> = self.previous.iter().map(|p| p.stable_id.clone()).collect();
        taken.extend(voted.iter().map(|s| s.to_string()));

        // 1. exact keys
        for &i in &order {
            if out[i].is_some() {
                continue;
            }
            if let Some(&p) = by_key.get(current[i].key) {
                if !used[p] {
                    used[p] = true;
                    out[i] = Some(StableAssignment {
                        stable_id: prev[p].stable_id.clone(),
                        origin: IdOrigin::Exact,
                        previous_key: Some(prev[p].key.clone()),
                    });
                }
            }
        }

        // 2. similar, then drifted keys
        let mut table = TextTable::new(prev.iter().map(|p| p.key.as_str()).collect());
        let cur_ids: Vec<u32> = current.iter().map(|c| table.push(c.key)).collect();
        let mut rules = vec![(MatchRule::K8s, IdOrigin::Similar)];
        if self.drift > 0.0 {
            rules.push((MatchRule::Fraction(self.drift), IdOrigin::Drifted));
        }
        for (rule, origin) in rules {
            let mut index = KeyIndex::with_rule(rule);
            for (p, u) in used.iter().enumerate() {
                if !*u {
                    index.insert(&table, p as u32);
                }
            }
            for &i in &order {
                if out[i].is_some() || index.is_empty() {
                    continue;
                }
                if let Some(p) = index.find(&table, cur_ids[i]) {
                    let p = p as usize;
                    used[p] = true;
                    index.remove(p as u32);
                    out[i] = Some(StableAssignment {
                        stable_id: prev[p].stable_id.clone(),
                        origin,
                        previous_key: Some(prev[p].key.clone()),
                    });
                }
            }
        }

        // 3. new ids
        for &i in &order {
            if out[i].is_some() {
                continue;
            }
            let base = Self::new_id(current[i].key);
            let mut id = base.clone();
            let mut n = 2;
            while taken.contains(&id) {
                id = format!("{base}-{n}");
                n += 1;
            }
            taken.insert(id.clone());
            out[i] = Some(StableAssignment { stable_id: id, origin: IdOrigin::New, previous_key: None });
        }
        out.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carries_ids_through_drift() {
        let prev = vec![
            PreviousCluster {
                stable_id: "c-old-1".into(),
                key: "some long failure message that changes occasionally foo".into(),
            },
            PreviousCluster { stable_id: "c-old-2".into(), key: "exit 1".into() },
        ];
        let a = StableIdAssigner::new(prev);
        let cur = [
            CurrentCluster { key: "some long failure message that changes occasionally bar", size: 3 },
            CurrentCluster { key: "exit 1", size: 1 },
            CurrentCluster { key: "exit 2", size: 1 },
        ];
        let r = a.assign(&cur);
        assert_eq!(r[0].stable_id, "c-old-1");
        assert_eq!(r[0].origin, IdOrigin::Similar);
        assert_eq!(r[1].stable_id, "c-old-2");
        assert_eq!(r[1].origin, IdOrigin::Exact);
        assert_eq!(r[2].origin, IdOrigin::New);
        assert_eq!(r[2].stable_id, StableIdAssigner::new_id("exit 2"));
    }

    #[test]
    fn ids_follow_their_failures() {
        let prev = vec![
            PreviousCluster { stable_id: "c-a".into(), key: "alpha failure message here".into() },
            PreviousCluster { stable_id: "c-b".into(), key: "beta failure message here".into() },
        ];
        let a = StableIdAssigner::new(prev);
        // keys changed completely, but the members remember their ids
        let cur = [CurrentCluster { key: "x", size: 5 }, CurrentCluster { key: "y", size: 3 }];
        let votes = vec![vec![("c-b".to_string(), 4), ("c-a".to_string(), 1)], vec![("c-a".to_string(), 3)]];
        let r = a.assign_with_votes(&cur, &votes);
        assert_eq!((r[0].stable_id.as_str(), r[0].origin), ("c-b", IdOrigin::Members));
        assert_eq!((r[1].stable_id.as_str(), r[1].origin), ("c-a", IdOrigin::Members));
        // an id goes to one cluster only: the larger vote wins, the other gets a new id
        let votes = vec![vec![("c-a".to_string(), 4)], vec![("c-a".to_string(), 3)]];
        let r = a.assign_with_votes(&cur, &votes);
        assert_eq!(r[0].stable_id, "c-a");
        assert_ne!(r[1].stable_id, "c-a");
    }
}
