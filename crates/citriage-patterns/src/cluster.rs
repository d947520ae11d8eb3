//! Clustering of failure texts: locally within each test, then globally across tests and jobs.
//!
//! Semantics follow go.k8s.io/triage (see [`crate::similarity`]): a normalized text joins an
//! existing key when it is identical, or else the first key, in order of the histogram lower
//! bound, whose exact edit distance is below the 10% limit; otherwise it becomes a new key.
//! Local clustering runs per test; global clustering then folds every local cluster (largest
//! first, tests with most failures first) into the first matching global key.
//!
//! Differences from the reference, all deliberate:
//! * deterministic: inputs are put into a canonical order first (distinct normalized texts by
//!   count, then text; tests by failure count, then name; ties on the lower bound broken by key
//!   age), so shuffled input gives identical clusters;
//! * nothing is dropped and nothing bails out on time: [`Accounting`] proves every input
//!   failure is in exactly one cluster;
//! * candidate search is indexed ([`KeyIndex`]): keys are bucketed by length, their
//!   histograms stored contiguously as capped bytes (one packed sum of absolute differences
//!   per key, exact unless a count passed 255) in blocks of 16 whose bounding box (smallest
//!   and largest count per bucket) rejects a whole block when even the box is too far, and
//!   searched in two stages: near candidates
//!   (lower bound at most [`NEAR_LB`]) first, which needs only the narrow length window their
//!   small distance allows and settles most queries, then, only when needed, the rest of the
//!   length window the 10% rule allows. Valid lower bounds on the true distance (character
//!   counts, exact 4-gram multisets) discard impossible candidates, a line-aligned upper
//!   bound accepts likely ones, and only the rest run the bounded exact distance, cheapest
//!   bound first. None of these changes which key is chosen (a test compares the index with
//!   the reference's rule applied literally);
//! * the global stage runs in parallel batches: each query of a batch is searched in parallel
//!   against the keys that existed when the batch started, recording the candidates it
//!   verified; a sequential commit then merges that record, in candidate order and within
//!   the cap, with the keys created earlier in the same batch (verifying only those), so
//!   the first match is the one-by-one fold's; batch sizes adapt to how many keys batches
//!   create. A test compares it with the one-by-one fold on 1, 2 and 4 threads.

use std::collections::BTreeMap;

use crate::fxhash::{FxHashMap as HashMap, FxHashSet};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::normalize::{normalize, Profile};
use crate::similarity::{self, edit_distance_below, match_limit, Histogram, BUCKETS};

/// One input failure, borrowed from the caller's storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FailureRef<'a> {
    /// Test name.
    pub test: &'a str,
    /// Raw failure text (JUnit message + body, or an excerpt).
    pub text: &'a str,
    /// Job name (for grouping in exports; not used for matching).
    pub job: &'a str,
    /// Build identifier (number, id or path; not used for matching).
    pub build: &'a str,
}

/// Clustering options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterConfig {
    /// Normalization profile.
    pub profile: Profile,
    /// Global keys to seed before clustering (go.k8s.io/triage's `--previous`): keys that are
    /// not already normalized are ignored, like the reference does; seeds that attract no
    /// failure are dropped from the output.
    pub seed_keys: Vec<String>,
    /// Compute `commonSpans` for each cluster (costs one pass over its distinct texts).
    pub spans: bool,
    /// At most this many exact edit-distance checks per query, in candidate order (lower
    /// bound, then key text); None checks every candidate. Today's Go triage checks the
    /// first 8 candidates per worker with 7 workers in production: 56.
    #[serde(default)]
    pub max_precise_checks: Option<usize>,
}

/// Exact checks per query of today's go.k8s.io/triage (`maxPreciseChecksPerWorker` 8 × the
/// 7 workers of its production job).
pub const K8S_PRECISE_CHECKS: usize = 56;

impl ClusterConfig {
    /// Default options for `profile`.
    pub fn new(profile: Profile) -> Self {
        let max_precise_checks = match profile {
            Profile::K8sTriage => Some(K8S_PRECISE_CHECKS),
            Profile::Default => Some(64),
        };
        ClusterConfig { profile, seed_keys: Vec::new(), spans: true, max_precise_checks }
    }
}

/// The failures of one test inside a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestMembers {
    /// Test name.
    pub test: String,
    /// Indices into the input slice, ascending.
    pub members: Vec<u32>,
}

/// One global cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The normalized key text.
    pub key: String,
    /// go.k8s.io/triage id of the key (SHA-1 of its 4-gram histogram, 20 hex).
    pub k8s_id: String,
    /// A representative raw failure text (deterministic choice among members).
    pub text: String,
    /// `commonSpans` of the distinct raw texts, relative to `text` (empty when disabled).
    pub spans: Vec<usize>,
    /// All members: indices into the input slice, ascending.
    pub members: Vec<u32>,
    /// Members per test, most failures first, then by name.
    pub tests: Vec<TestMembers>,
    /// Number of distinct normalized texts merged into this cluster.
    pub distinct_normalized: usize,
}

/// Counts proving nothing was dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accounting {
    /// Input failures.
    pub input: usize,
    /// Failures placed in clusters (sum of cluster sizes).
    pub clustered: usize,
    /// Failures found in more than one cluster (must be 0).
    pub duplicated: usize,
    /// Failures in no cluster (must be 0).
    pub missing: usize,
    /// Distinct tests.
    pub tests: usize,
    /// Distinct raw texts.
    pub distinct_raw: usize,
    /// Distinct normalized texts.
    pub distinct_normalized: usize,
    /// Local (per-test) clusters.
    pub local_clusters: usize,
    /// Global clusters.
    pub clusters: usize,
    /// Global clusters with exactly one failure (go.k8s.io/triage hides these; we keep them).
    pub singleton_clusters: usize,
    /// Exact edit-distance computations run (local + global).
    pub exact_checks: u64,
    /// Of which in the global (cross-test) stage.
    pub global_exact_checks: u64,
    /// Candidates examined through the histogram bound.
    pub bound_checks: u64,
}

impl Accounting {
    /// True when every input failure is in exactly one cluster.
    pub fn is_complete(&self) -> bool {
        self.input == self.clustered && self.duplicated == 0 && self.missing == 0
    }
}

/// Result of [`cluster`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clustering {
    /// Profile used.
    pub profile: Profile,
    /// Clusters, largest first, then by key.
    pub clusters: Vec<Cluster>,
    /// For each input failure, the index of its cluster in `clusters`.
    pub assignment: Vec<u32>,
    /// No-drop accounting.
    pub accounting: Accounting,
}

/// Compact histogram used inside the index (normalized texts are at most ~10 KB).
type Hist16 = [u16; BUCKETS];
/// The histogram with every count capped at 255: its L1 distance never exceeds the exact one
/// and equals it when no count of either side was capped. Stored contiguously per length, so
/// screening a key is one sum of absolute byte differences over 64 bytes read in order.
type Hist8 = [u8; BUCKETS];

fn to_hist16(h: &Histogram) -> Hist16 {
    let mut o = [0u16; BUCKETS];
    for (d, s) in o.iter_mut().zip(h.iter()) {
        *d = (*s).min(u16::MAX as u32) as u16;
    }
    o
}

fn l1_16(a: &Hist16, b: &Hist16) -> u32 {
    a.iter().zip(b.iter()).map(|(x, y)| x.abs_diff(*y) as u32).sum()
}

/// The sum of a histogram's byte buckets, in 16-byte chunks so it compiles to packed
/// sums of absolute differences.
#[inline]
fn byte_sum(d: &[u8; BUCKETS]) -> u32 {
    let mut s = 0u32;
    for c in d.chunks_exact(16) {
        let mut t = 0u16;
        for &x in c {
            t += x as u16;
        }
        s += t as u32;
    }
    s
}

/// L1 distance of two capped histograms, written so that it compiles to packed byte
/// operations (saturating differences, then sums of absolute differences against zero).
#[inline]
fn l1_8(a: &Hist8, b: &Hist8) -> u32 {
    let mut d = [0u8; BUCKETS];
    for i in 0..BUCKETS {
        d[i] = a[i].saturating_sub(b[i]) | b[i].saturating_sub(a[i]);
    }
    byte_sum(&d)
}

/// Screening features of one text: the 64-bucket 4-gram histogram (exact and capped) and the
/// 64-bin character histogram.
#[derive(Clone)]
struct Features {
    hist: Hist16,
    hist8: Hist8,
    /// Some count of `hist` is above 255 (`hist8` is then only a lower bound).
    capped: bool,
    chars: [u16; 64],
}

impl Features {
    fn of(text: &str) -> Features {
        let hist = to_hist16(&similarity::ngram_histogram(text.as_bytes()));
        let mut hist8 = [0u8; BUCKETS];
        for (d, s) in hist8.iter_mut().zip(hist.iter()) {
            *d = (*s).min(255) as u8;
        }
        let capped = hist.iter().any(|&c| c > 255);
        Features { hist, hist8, capped, chars: similarity::char_histogram(text.as_bytes()) }
    }

    /// The exact L1 distance of the two histograms when it is at most `max`, else None.
    #[inline]
    fn l1_within(&self, k8: &Hist8, k: &Features, max: u32) -> Option<u32> {
        let d = l1_8(&self.hist8, k8);
        if d > max {
            return None;
        }
        if !self.capped && !k.capped {
            return Some(d);
        }
        let d = l1_16(&self.hist, &k.hist);
        (d <= max).then_some(d)
    }
}

/// Keys of one text length: their capped histograms contiguously, and their insertion
/// sequences.
#[derive(Default)]
struct LenBucket {
    hists: Vec<Hist8>,
    seqs: Vec<u32>,
    /// Per block of [`BLOCK`] consecutive keys, the smallest and the largest count of each
    /// bucket: the block's box, whose distance to a query bounds every key's from below.
    lows: Vec<Hist8>,
    highs: Vec<Hist8>,
}

/// Keys per block of a [`LenBucket`].
const BLOCK: usize = 16;

impl LenBucket {
    fn push(&mut self, hist: Hist8, seq: u32) {
        if self.hists.len().is_multiple_of(BLOCK) {
            self.lows.push(hist);
            self.highs.push(hist);
        } else if let (Some(lo), Some(hi)) = (self.lows.last_mut(), self.highs.last_mut()) {
            for i in 0..BUCKETS {
                lo[i] = lo[i].min(hist[i]);
                hi[i] = hi[i].max(hist[i]);
            }
        }
        self.hists.push(hist);
        self.seqs.push(seq);
    }
}

/// L1 distance from a capped histogram to a box of them: at most the distance to any
/// histogram inside the box.
#[inline]
fn box_l1(q: &Hist8, lo: &Hist8, hi: &Hist8) -> u32 {
    let mut d = [0u8; BUCKETS];
    for i in 0..BUCKETS {
        d[i] = lo[i].saturating_sub(q[i]) | q[i].saturating_sub(hi[i]);
    }
    byte_sum(&d)
}

/// Interned texts addressed by `u32` ids (features are computed on demand and kept only for
/// cluster keys, inside the [`KeyIndex`]).
pub struct TextTable<'a> {
    texts: Vec<&'a str>,
}

impl<'a> TextTable<'a> {
    /// Build the table.
    pub fn new(texts: Vec<&'a str>) -> Self {
        TextTable { texts }
    }

    /// Add a text; returns its id.
    pub fn push(&mut self, text: &'a str) -> u32 {
        self.texts.push(text);
        (self.texts.len() - 1) as u32
    }

    /// Text of id `i`.
    pub fn text(&self, i: u32) -> &'a str {
        self.texts[i as usize]
    }

    /// Number of texts.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

/// The edit-distance limit a [`KeyIndex`] applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MatchRule {
    /// go.k8s.io/triage: `int(float32(la + lb) / 2 * 0.10)`.
    K8s,
    /// The same shape with another fraction of the mean length (e.g. 0.2 for id drift).
    Fraction(f32),
}

impl MatchRule {
    /// Limit for two texts of byte lengths `la`, `lb`; a match needs distance < limit.
    pub fn limit(self, la: usize, lb: usize) -> usize {
        match self {
            MatchRule::K8s => match_limit(la, lb),
            MatchRule::Fraction(f) => (((la + lb) as f32) / 2.0 * f) as usize,
        }
    }

    fn fraction(self) -> f64 {
        match self {
            MatchRule::K8s => 0.1,
            MatchRule::Fraction(f) => f as f64,
        }
    }
}

/// Texts at least this long get exact q-gram profiles for a tighter lower bound.
const QGRAM_MIN_LEN: usize = 512;

/// Candidates whose histogram lower bound is at most this are searched first, in the narrow
/// length window their small L1 distance allows (see [`KeyIndex::search`]).
const NEAR_LB: u32 = 8;

/// Index of cluster keys answering "first matching key" queries under a [`MatchRule`].
pub struct KeyIndex {
    rule: MatchRule,
    /// Key text length → the keys of that length, in insertion order.
    by_len: BTreeMap<u32, LenBucket>,
    exact: HashMap<u32, u32>,
    removed: FxHashSet<u32>,
    /// Exact 4-gram profiles of long keys (for the q-gram lower bound).
    profiles: HashMap<u32, Vec<u32>>,
    /// Screening features of the keys, by insertion sequence.
    feats: Vec<Features>,
    next_seq: u32,
    /// Key text id by insertion sequence.
    order: Vec<u32>,
    /// At most this many candidates verified per query (None: all).
    cap: Option<usize>,
    /// Exact edit-distance computations run.
    pub exact_checks: u64,
    /// Keys whose histogram distance to a query was computed.
    pub bound_checks: u64,
}

impl Default for KeyIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyIndex {
    /// Empty index with go.k8s.io/triage's rule.
    pub fn new() -> Self {
        Self::with_rule(MatchRule::K8s)
    }

    /// Empty index with `rule`.
    pub fn with_rule(rule: MatchRule) -> Self {
        KeyIndex {
            rule,
            by_len: BTreeMap::new(),
            exact: HashMap::default(),
            removed: FxHashSet::default(),
            profiles: HashMap::default(),
            feats: Vec::new(),
            next_seq: 0,
            order: Vec::new(),
            cap: None,
            exact_checks: 0,
            bound_checks: 0,
        }
    }

    /// Verify at most `cap` candidates per query, in order (None: all).
    pub fn with_cap(mut self, cap: Option<usize>) -> Self {
        self.cap = cap;
        self
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.exact.len() - self.removed.len()
    }

    /// Remove `key` (later queries skip it).
    pub fn remove(&mut self, key: u32) {
        if self.exact.contains_key(&key) {
            self.removed.insert(key);
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Add text id `key` (no-op when present).
    pub fn insert(&mut self, table: &TextTable<'_>, key: u32) {
        if self.exact.contains_key(&key) {
            self.removed.remove(&key);
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.order.push(key);
        self.exact.insert(key, seq);
        let f = Features::of(table.text(key));
        let len = table.text(key).len() as u32;
        if len as usize >= QGRAM_MIN_LEN {
            self.profiles.insert(key, similarity::qgram_profile(table.text(key).as_bytes()));
        }
        let b = self.by_len.entry(len).or_default();
        b.push(f.hist8, seq);
        self.feats.push(f);
    }

    /// True when `key` is itself a key.
    pub fn contains(&self, key: u32) -> bool {
        self.exact.contains_key(&key) && !self.removed.contains(&key)
    }

    /// The key `q` joins: itself when it is a key, else the first key (by lower bound, then
    /// age) within the 10% edit-distance limit, else None.
    pub fn find(&mut self, table: &TextTable<'_>, q: u32) -> Option<u32> {
        let r = self.search(table, q, true);
        self.exact_checks += r.exact_checks;
        self.bound_checks += r.bound_checks;
        r.hit.map(|h| h.key)
    }

    /// Candidates for a query (features `qf`, length `la`) among keys whose length is in
    /// `lens` and whose histogram L1 distance `d` satisfies `min_l1 <= d` and
    /// `d <= min(4 * limit + 3, max_l1)` (the reference's rule `d / 4 <= limit` capped).
    fn collect(
        &self,
        qf: &Features,
        la: usize,
        lens: std::ops::RangeInclusive<u32>,
        min_l1: u32,
        max_l1: u32,
        cands: &mut Vec<Candidate>,
    ) -> u64 {
        let mut screened = 0u64;
        for (&lk, bucket) in self.by_len.range(lens) {
            let limit = self.rule.limit(la, lk as usize);
            if limit <= 1 {
                continue; // only identical texts match, handled by the caller
            }
            let len_bound = (la.saturating_sub(3)).abs_diff((lk as usize).saturating_sub(3)) as u32;
            let max = ((limit as u32) * 4 + 3).min(max_l1);
            if len_bound > max {
                continue;
            }
            // a block whose box is farther than `max` holds no key within `max`
            for (block, (lo, hi)) in bucket.lows.iter().zip(&bucket.highs).enumerate() {
                if box_l1(&qf.hist8, lo, hi) > max {
                    continue;
                }
                let keys = block * BLOCK..((block + 1) * BLOCK).min(bucket.seqs.len());
                screened += keys.len() as u64;
                for (h, &seq) in bucket.hists[keys.clone()].iter().zip(&bucket.seqs[keys]) {
                    if l1_8(&qf.hist8, h) > max {
                        continue;
                    }
                    let kf = &self.feats[seq as usize];
                    let Some(d) = qf.l1_within(h, kf, max) else { continue };
                    if d < min_l1 {
                        continue;
                    }
                    let key = self.order[seq as usize];
                    if !self.removed.is_empty() && self.removed.contains(&key) {
                        continue;
                    }
                    let hopeless = similarity::char_lower_bound(&qf.chars, &kf.chars) >= limit;
                    cands.push(Candidate { lb: d / 4, key, limit, hopeless });
                }
            }
        }
        screened
    }

    /// Read-only [`KeyIndex::find`] with its statistics; `parallel` verifies long candidate
    /// lists in parallel chunks (the result is the same).
    ///
    /// Candidates are the keys passing the reference's histogram rule, taken in its order
    /// (lower bound, then key text) up to the cap. They are found in two exact stages: first
    /// those with lower bound at most [`NEAR_LB`] — their L1 distance, hence their length
    /// difference, is at most `4 * NEAR_LB + 3`, so only a narrow length window is read —
    /// which are the first candidates in the reference's order; only when none of them
    /// matches and they do not fill the cap are the remaining candidates (lower bound above
    /// [`NEAR_LB`], the whole length window the rule allows) gathered and verified next.
    pub fn search(&self, table: &TextTable<'_>, q: u32, parallel: bool) -> SearchResult {
        self.search_with(table, q, parallel, None)
    }

    /// [`KeyIndex::search`], recording in `trail` (when given; the search is then
    /// sequential) every candidate it verified, in order: non-matches, then the hit if any.
    fn search_with(
        &self,
        table: &TextTable<'_>,
        q: u32,
        parallel: bool,
        mut trail: Option<&mut Vec<Candidate>>,
    ) -> SearchResult {
        let parallel = parallel && trail.is_none();
        let mut res = SearchResult::default();
        if self.exact.contains_key(&q) && !self.removed.contains(&q) {
            res.hit = Some(Hit { key: q, lb: 0 });
            return res;
        }
        let la = table.text(q).len();
        let qf = Features::of(table.text(q));
        let verifier = Verifier::new(table, q, &self.profiles);
        let mut budget = self.cap.unwrap_or(usize::MAX);
        let mut cands: Vec<Candidate> = Vec::new();

        // Stage 1: lower bound at most NEAR_LB. |Σa − Σb| ≤ L1 with Σ = max(len − 3, 0).
        let near = NEAR_LB * 4 + 3;
        let sq = la.saturating_sub(3) as u32;
        let lo1 = if sq > near { sq - near + 3 } else { 0 };
        let hi1 = sq.saturating_add(near).saturating_add(3);
        res.bound_checks += self.collect(&qf, la, lo1..=hi1, 0, near, &mut cands);
        let n1 = cands.len();
        if let Some(hit) = Self::verify(&verifier, &mut cands, budget, parallel, &mut res, trail.as_deref_mut()) {
            res.hit = Some(hit);
            return res;
        }
        if n1 >= budget {
            return res;
        }
        budget -= n1;

        // Stage 2: the rest of the rule's length window: L1/4 ≤ limit ≈ f·(la + lk)/2 bounds lk.
        let f2 = 2.0 * self.rule.fraction();
        let lo = ((la as f64 * (1.0 - f2) - 16.0) / (1.0 + f2)).floor().max(0.0) as u32;
        let hi = if f2 < 1.0 {
            ((la as f64 * (1.0 + f2) + 16.0) / (1.0 - f2)).ceil().min(u32::MAX as f64) as u32
        } else {
            u32::MAX
        };
        cands.clear();
        res.bound_checks += self.collect(&qf, la, lo..=hi, near + 1, u32::MAX, &mut cands);
        res.hit = Self::verify(&verifier, &mut cands, budget, parallel, &mut res, trail);
        res
    }

    /// Verify the first `budget` of `cands` in candidate order; the first match.
    fn verify(
        verifier: &Verifier<'_, '_>,
        cands: &mut Vec<Candidate>,
        budget: usize,
        parallel: bool,
        res: &mut SearchResult,
        mut trail: Option<&mut Vec<Candidate>>,
    ) -> Option<Hit> {
        if cands.len() > budget {
            cands.select_nth_unstable(budget);
            cands.truncate(budget);
        }
        cands.sort_unstable();
        // Cheapest bound first; long lists in parallel chunks, still the first match in order.
        const SEQ_PREFIX: usize = 8;
        let head = if parallel { cands.len().min(SEQ_PREFIX) } else { cands.len() };
        for c in &cands[..head] {
            res.exact_checks += 1;
            if let Some(t) = trail.as_deref_mut() {
                t.push(*c);
            }
            if verifier.matches(c) {
                return Some(Hit { key: c.key, lb: c.lb });
            }
        }
        let rest = &cands[head..];
        if rest.is_empty() {
            return None;
        }
        let found = rest.par_iter().with_min_len(16).position_first(|c| verifier.matches(c));
        res.exact_checks += found.map_or(rest.len(), |p| p + 1) as u64;
        found.map(|p| Hit { key: rest[p].key, lb: rest[p].lb })
    }

    /// Sequence number of `key` (its age), if it is a key.
    fn seq_of(&self, key: u32) -> Option<u32> {
        self.exact.get(&key).copied()
    }

    /// Keys inserted so far (removals do not count): a version for memoized answers.
    pub fn version(&self) -> usize {
        self.order.len()
    }

    /// Would any key inserted since `version` be a candidate for `q`? When none would, an
    /// answer found at `version` still stands (the candidate order is unchanged).
    pub fn any_candidate_since(&self, table: &TextTable<'_>, q: u32, version: usize) -> bool {
        let qf = Features::of(table.text(q));
        self.order[version.min(self.order.len())..]
            .iter()
            .any(|&k| !self.removed.contains(&k) && self.qualifies(table, &qf, q, k))
    }

    /// Would `key` be a candidate (pass the reference's histogram rule) for `q`?
    fn qualifies(&self, table: &TextTable<'_>, qf: &Features, q: u32, key: u32) -> bool {
        let limit = self.rule.limit(table.text(q).len(), table.text(key).len());
        if limit <= 1 {
            return false;
        }
        match self.seq_of(key) {
            Some(seq) => {
                let kf = &self.feats[seq as usize];
                qf.l1_within(&kf.hist8, kf, (limit as u32) * 4 + 3).is_some()
            }
            None => false,
        }
    }

    /// `key` as a candidate for `q` (features `qf`) when it passes the reference's
    /// histogram rule, exactly as [`KeyIndex::collect`] would list it.
    fn candidate_for(&self, table: &TextTable<'_>, qf: &Features, la: usize, key: u32) -> Option<Candidate> {
        let lk = table.text(key).len();
        let limit = self.rule.limit(la, lk);
        if limit <= 1 || self.removed.contains(&key) {
            return None;
        }
        let max = (limit as u32) * 4 + 3;
        if (la.saturating_sub(3)).abs_diff(lk.saturating_sub(3)) as u32 > max {
            return None;
        }
        let kf = &self.feats[self.seq_of(key)? as usize];
        let d = qf.l1_within(&kf.hist8, kf, max)?;
        let hopeless = similarity::char_lower_bound(&qf.chars, &kf.chars) >= limit;
        Some(Candidate { lb: d / 4, key, limit, hopeless })
    }

    /// The key `q` joins, given `trail` — the candidates a search of `q` verified among the
    /// keys that existed before `fresh` were inserted (in order, ending with its hit when
    /// `trail_hit`) — and the keys `fresh` inserted since. Walks the merge of both candidate
    /// lists in the reference's order (lower bound, then key text) within the cap, verifying
    /// only fresh candidates, so the answer is the one a search of all current keys gives.
    fn merge_walk(
        &mut self,
        table: &TextTable<'_>,
        q: u32,
        trail: &[Candidate],
        trail_hit: bool,
        fresh: &[u32],
    ) -> Option<u32> {
        let old_hit = || trail_hit.then(|| trail.last().map(|c| c.key)).flatten();
        if fresh.is_empty() {
            return old_hit();
        }
        let text = table.text(q);
        let qf = Features::of(text);
        self.bound_checks += fresh.len() as u64;
        let mut new: Vec<Candidate> =
            fresh.iter().filter_map(|&k| self.candidate_for(table, &qf, text.len(), k)).collect();
        if new.is_empty() {
            return old_hit();
        }
        new.sort_unstable();
        let verifier = Verifier::new(table, q, &self.profiles);
        let (mut i, mut j) = (0usize, 0usize);
        for _ in 0..self.cap.unwrap_or(usize::MAX) {
            let take_old = match (trail.get(i), new.get(j)) {
                (Some(o), Some(n)) => (o.lb, o.key) < (n.lb, n.key),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if take_old {
                if trail_hit && i + 1 == trail.len() {
                    return Some(trail[i].key);
                }
                i += 1;
            } else {
                self.exact_checks += 1;
                if verifier.matches(&new[j]) {
                    return Some(new[j].key);
                }
                j += 1;
            }
        }
        None
    }
}

/// A candidate key that passed the reference's histogram rule, ordered like the reference
/// orders them: lower bound, then key text (text ids are in text order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    lb: u32,
    key: u32,
    limit: usize,
    /// A valid lower bound already rules the match out (the candidate still takes its
    /// place in the order, so a cap on checks counts it like the reference does).
    hopeless: bool,
}

/// The key a search found, with its order position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Key text id.
    pub key: u32,
    /// Its histogram lower bound against the query.
    pub lb: u32,
}

/// Outcome of [`KeyIndex::search`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchResult {
    /// The first matching key, if any.
    pub hit: Option<Hit>,
    /// Exact verifications run.
    pub exact_checks: u64,
    /// Keys screened with the bounds.
    pub bound_checks: u64,
}

/// Exact verification of candidates for one query.
struct Verifier<'t, 'a> {
    table: &'t TextTable<'a>,
    qt: &'a [u8],
    /// The query's q-gram profile, computed when a candidate first needs it.
    qprofile: std::sync::OnceLock<Vec<u32>>,
    profiles: &'t HashMap<u32, Vec<u32>>,
}

impl<'t, 'a> Verifier<'t, 'a> {
    fn new(table: &'t TextTable<'a>, q: u32, profiles: &'t HashMap<u32, Vec<u32>>) -> Self {
        let qt = table.text(q).as_bytes();
        Verifier { table, qt, qprofile: std::sync::OnceLock::new(), profiles }
    }

    /// True when the candidate's exact edit distance is below its limit.
    fn matches(&self, c: &Candidate) -> bool {
        if c.hopeless {
            return false;
        }
        let limit = c.limit;
        let kt = self.table.text(c.key).as_bytes();
        if limit >= 48 && self.qt.len() >= QGRAM_MIN_LEN {
            let kp;
            let kp = match self.profiles.get(&c.key) {
                Some(p) => Some(p),
                None if kt.len() >= QGRAM_MIN_LEN => {
                    kp = similarity::qgram_profile(kt);
                    Some(&kp)
                }
                None => None,
            };
            if let Some(kp) = kp {
                let qp = self.qprofile.get_or_init(|| similarity::qgram_profile(self.qt));
                if similarity::qgram_lower_bound(qp, kp) >= limit {
                    return false;
                }
            }
        }
        // A cheap line-aligned upper bound settles likely matches without the full search.
        if limit >= 32
            && (c.lb as usize) * 2 < limit
            && similarity::line_upper_bound_below(self.qt, kt, limit).is_some()
        {
            return true;
        }
        edit_distance_below(self.qt, kt, limit).is_some()
    }
}

/// Global stage: fold queries (in order) into keys — each query joins the first matching key
/// or becomes a key — with the result of processing them one by one, in parallel batches.
///
/// The queries of a batch are first searched in parallel against the keys that existed when
/// the batch started, each recording the candidates it verified (in the reference's order, up
/// to its first match or the cap). Then, in order, each query merges that record with the
/// keys created earlier in the same batch (screened and verified then, in the same order and
/// within the same cap), so the first match is exactly the one-by-one fold's. Batches grow
/// while they create few keys and shrink while they create many, which keeps the sequential
/// share (verifying keys of the same batch) small.
fn global_fold(table: &TextTable<'_>, index: &mut KeyIndex, queries: &[u32]) -> Vec<u32> {
    const MIN_BATCH: usize = 32;
    const MAX_BATCH: usize = 4096;
    let mut out = Vec::with_capacity(queries.len());
    let mut size = MIN_BATCH;
    let mut at = 0;
    while at < queries.len() {
        let batch = &queries[at..(at + size).min(queries.len())];
        at += batch.len();
        let spec: Vec<(SearchResult, Vec<Candidate>)> = batch
            .par_iter()
            .map(|&q| {
                let mut trail = Vec::new();
                let r = index.search_with(table, q, false, Some(&mut trail));
                (r, trail)
            })
            .collect();
        let mut fresh: Vec<u32> = Vec::new();
        for (&q, (sr, trail)) in batch.iter().zip(spec) {
            index.exact_checks += sr.exact_checks;
            index.bound_checks += sr.bound_checks;
            if index.contains(q) {
                out.push(q);
                continue;
            }
            let key = match index.merge_walk(table, q, &trail, sr.hit.is_some(), &fresh) {
                Some(k) => k,
                None => {
                    index.insert(table, q);
                    fresh.push(q);
                    q
                }
            };
            out.push(key);
        }
        if fresh.len() * 16 <= batch.len() {
            size = (size * 2).min(MAX_BATCH);
        } else if fresh.len() * 4 > batch.len() {
            size = (size / 2).max(MIN_BATCH);
        }
    }
    out
}

/// The global fold one query at a time (the definition [`global_fold`] reproduces).
#[cfg(test)]
fn sequential_fold(table: &TextTable<'_>, index: &mut KeyIndex, queries: &[u32]) -> Vec<u32> {
    queries
        .iter()
        .map(|&q| match index.find(table, q) {
            Some(k) => k,
            None => {
                index.insert(table, q);
                q
            }
        })
        .collect()
}

/// One local cluster: its key and how many failures joined it.
struct LocalCluster {
    key: u32,
    size: u64,
}

/// The key of a default-profile text: its name template, else itself.
fn default_key(norm: &str) -> Option<String> {
    crate::normalize::name_template(norm)
}

/// The hash of a text, computed apart (in parallel) from the interning that uses it.
fn str_hash(s: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::fxhash::FxHasher::default();
    h.write(s.as_bytes());
    h.finish()
}

/// Distinct items numbered by first appearance, keyed by their precomputed hashes: the
/// sequential part is one probe of a `u64` per item and a comparison when the hash was seen
/// (items with colliding hashes are told apart by the comparison, on a slower path).
struct Interner<T> {
    first: HashMap<u64, u32>,
    collided: HashMap<u64, Vec<u32>>,
    items: Vec<T>,
}

impl<T: PartialEq> Interner<T> {
    fn with_capacity(n: usize) -> Self {
        let mut first = HashMap::default();
        first.reserve(n);
        Interner { first, collided: HashMap::default(), items: Vec::new() }
    }

    /// The id of `item`, whose hash is `h`.
    fn id(&mut self, h: u64, item: T) -> u32 {
        let next = self.items.len() as u32;
        match self.first.get(&h) {
            None => {
                self.first.insert(h, next);
            }
            Some(&id) if self.items[id as usize] == item => return id,
            Some(_) => {
                let others = self.collided.entry(h).or_default();
                if let Some(&id) = others.iter().find(|&&id| self.items[id as usize] == item) {
                    return id;
                }
                others.push(next);
            }
        }
        self.items.push(item);
        next
    }
}

/// The normalized texts a clustering computed: each distinct one once, and each input
/// failure's (so what comes after the clustering, such as the sub-patterns, need not
/// normalize the same texts again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalizedTexts {
    /// The profile they were normalized under.
    pub profile: Profile,
    /// The distinct normalized texts, in text order.
    pub texts: Vec<Box<str>>,
    /// For each input failure, the index of its normalized text in `texts`.
    pub of_failure: Vec<u32>,
}

impl NormalizedTexts {
    /// The normalized text of input failure `m`.
    pub fn of(&self, m: u32) -> &str {
        &self.texts[self.of_failure[m as usize] as usize]
    }
}

/// Cluster `failures` under `cfg` (see the module docs).
pub fn cluster(failures: &[FailureRef<'_>], cfg: &ClusterConfig) -> Clustering {
    cluster_with_texts(failures, cfg).0
}

/// [`cluster`], also returning the normalized texts it computed.
pub fn cluster_with_texts(failures: &[FailureRef<'_>], cfg: &ClusterConfig) -> (Clustering, NormalizedTexts) {
    let n = failures.len();

    // 1. Distinct raw texts, normalized once each.
    let (fail_raw, raw_texts) = {
        let hashes: Vec<u64> = failures.par_iter().map(|f| str_hash(f.text)).collect();
        let mut ids = Interner::with_capacity(n);
        let fail_raw: Vec<u32> = failures.iter().zip(&hashes).map(|(f, &h)| ids.id(h, f.text)).collect();
        (fail_raw, ids.items)
    };
    let profile = cfg.profile;
    // Normalize in chunks and intern at once, so only distinct normalized texts are kept.
    let mut interned: Interner<Box<str>> = Interner::with_capacity(raw_texts.len());
    let mut raw_tmp: Vec<u32> = Vec::with_capacity(raw_texts.len());
    for chunk in raw_texts.chunks(1 << 15) {
        let normed: Vec<(String, u64)> = chunk
            .par_iter()
            .map(|t| {
                let s = normalize(t, profile);
                let h = str_hash(&s);
                (s, h)
            })
            .collect();
        for (s, h) in normed {
            raw_tmp.push(interned.id(h, s.into_boxed_str()));
        }
    }
    let strings = interned.items;

    // 2. Distinct normalized texts in canonical (sorted) order.
    let mut text_order: Vec<u32> = (0..strings.len() as u32).collect();
    text_order.par_sort_unstable_by(|&a, &b| strings[a as usize].cmp(&strings[b as usize]));
    let mut canon = vec![0u32; strings.len()];
    for (new, &old) in text_order.iter().enumerate() {
        canon[old as usize] = new as u32;
    }
    let uniq: Vec<&str> = text_order.iter().map(|&o| &*strings[o as usize]).collect();
    let distinct_normalized = uniq.len();
    let raw_norm: Vec<u32> = raw_tmp.iter().map(|&t| canon[t as usize]).collect();
    drop(raw_tmp);
    let fail_norm: Vec<u32> = fail_raw.iter().map(|&r| raw_norm[r as usize]).collect();

    // 3. Tests in canonical order.
    let mut test_names: Vec<&str> = failures.iter().map(|f| f.test).collect();
    test_names.par_sort_unstable();
    test_names.dedup();
    let test_id: HashMap<&str, u32> = test_names.iter().enumerate().map(|(i, s)| (*s, i as u32)).collect();
    let fail_test: Vec<u32> = failures.iter().map(|f| test_id[f.test]).collect();
    drop(test_id);
    let mut acc = Accounting {
        input: n,
        tests: test_names.len(),
        distinct_raw: raw_texts.len(),
        distinct_normalized,
        ..Accounting::default()
    };

    // 4. The key text of every failure, by profile.
    let templates: Vec<Option<String>> = match profile {
        Profile::Default => uniq.par_iter().map(|t| default_key(t)).collect(),
        Profile::K8sTriage => Vec::new(),
    };
    let (texts, fail_key) = match profile {
        Profile::K8sTriage => {
            let mut texts = uniq.clone();
            let seed_ids = seed_ids(&cfg.seed_keys, &mut texts, |s| normalize(s, profile) == s);
            let table = TextTable::new(texts);
            let fk = k8s_keys(failures, &table, &fail_norm, &fail_test, test_names.len(), &seed_ids, cfg, &mut acc);
            (table, fk)
        }
        Profile::Default => {
            // Distinct keys (templates, else the normalized text) in text order.
            let mut keys: Vec<&str> = uniq.iter().zip(&templates).map(|(u, t)| t.as_deref().unwrap_or(u)).collect();
            keys.par_sort_unstable();
            keys.dedup();
            let norm_key: Vec<u32> = uniq
                .par_iter()
                .zip(&templates)
                .map(|(u, t)| keys.binary_search(&t.as_deref().unwrap_or(u)).unwrap_or(0) as u32)
                .collect();
            let mut texts = keys;
            let seed_ids = seed_ids(&cfg.seed_keys, &mut texts, |s| {
                let n = normalize(s, profile);
                default_key(&n).unwrap_or(n) == s
            });
            let table = TextTable::new(texts);
            // Keys by failures (most first), then text: the fold's canonical order.
            let mut count = vec![0u64; table.len()];
            for &m in &fail_norm {
                count[norm_key[m as usize] as usize] += 1;
            }
            let mut queries: Vec<u32> = (0..table.len() as u32).filter(|&k| count[k as usize] > 0).collect();
            queries.sort_by(|&a, &b| count[b as usize].cmp(&count[a as usize]).then(a.cmp(&b)));
            acc.local_clusters = queries.len();
            let mut index = KeyIndex::new().with_cap(cfg.max_precise_checks);
            for &s in &seed_ids {
                index.insert(&table, s);
            }
            let folded = global_fold(&table, &mut index, &queries);
            let mut key_of = vec![u32::MAX; table.len()];
            for (&q, &k) in queries.iter().zip(&folded) {
                key_of[q as usize] = k;
            }
            acc.exact_checks += index.exact_checks;
            acc.global_exact_checks = index.exact_checks;
            acc.bound_checks += index.bound_checks;
            let fk = fail_norm.iter().map(|&m| key_of[norm_key[m as usize] as usize]).collect();
            (table, fk)
        }
    };
    let table = texts;

    // 5. Members per key.
    let mut global_of_key: HashMap<u32, u32> = HashMap::default();
    let mut global_keys: Vec<u32> = Vec::new();
    let mut raw_assign: Vec<u32> = Vec::with_capacity(n);
    for &k in &fail_key {
        let g = *global_of_key.entry(k).or_insert_with(|| {
            global_keys.push(k);
            (global_keys.len() - 1) as u32
        });
        raw_assign.push(g);
    }
    drop(global_of_key);
    let ng = global_keys.len();
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); ng];
    for (i, &g) in raw_assign.iter().enumerate() {
        members[g as usize].push(i as u32);
    }
    let mut distinct_per_global = vec![0usize; ng];
    {
        let mut seen: FxHashSet<(u32, u32)> = FxHashSet::default();
        for i in 0..n {
            if seen.insert((raw_assign[i], fail_norm[i])) {
                distinct_per_global[raw_assign[i] as usize] += 1;
            }
        }
    }

    // 6. Order clusters: largest first, then by key text.
    let mut order: Vec<u32> = (0..ng as u32).filter(|&g| !members[g as usize].is_empty()).collect();
    order.sort_by(|&a, &b| {
        members[b as usize]
            .len()
            .cmp(&members[a as usize].len())
            .then_with(|| table.text(global_keys[a as usize]).cmp(table.text(global_keys[b as usize])))
    });
    let mut remap = vec![u32::MAX; ng];
    for (new, &g) in order.iter().enumerate() {
        remap[g as usize] = new as u32;
    }
    let assignment: Vec<u32> = raw_assign.iter().map(|&g| remap[g as usize]).collect();

    let want_spans = cfg.spans;
    let raw = RawTexts { texts: &raw_texts, fail_raw: &fail_raw };
    let clusters: Vec<Cluster> = order
        .par_iter()
        .map(|&g| {
            build_cluster(
                failures,
                &raw,
                &fail_test,
                &test_names,
                &table,
                global_keys[g as usize],
                &members[g as usize],
                distinct_per_global[g as usize],
                want_spans,
            )
        })
        .collect();

    acc.clusters = clusters.len();
    acc.singleton_clusters = clusters.iter().filter(|c| c.members.len() == 1).count();
    acc.clustered = clusters.iter().map(|c| c.members.len()).sum();
    let mut seen = vec![false; n];
    for c in &clusters {
        for &m in &c.members {
            if std::mem::replace(&mut seen[m as usize], true) {
                acc.duplicated += 1;
            }
        }
    }
    acc.missing = seen.iter().filter(|s| !**s).count();

    // The distinct normalized texts moved (not copied) into their canonical order.
    drop((uniq, table, raw));
    let mut slots: Vec<Option<Box<str>>> = strings.into_iter().map(Some).collect();
    let texts = text_order.iter().map(|&o| slots[o as usize].take().unwrap_or_default()).collect();
    let normalized = NormalizedTexts { profile, texts, of_failure: fail_norm };
    (Clustering { profile, clusters, assignment, accounting: acc }, normalized)
}

/// Seed keys (go.k8s.io/triage's `--previous`) as text ids, appended to `texts` when new;
/// keys that `accept` refuses (not normalized under this profile) are ignored like the
/// reference ignores them.
fn seed_ids<'a>(seeds: &'a [String], texts: &mut Vec<&'a str>, accept: impl Fn(&str) -> bool) -> Vec<u32> {
    let sorted_len = texts.len();
    let mut extra: HashMap<&str, u32> = HashMap::default();
    let mut out = Vec::new();
    for s in seeds {
        if !accept(s) {
            continue;
        }
        let id = match texts[..sorted_len].binary_search(&s.as_str()) {
            Ok(i) => i as u32,
            Err(_) => *extra.entry(s.as_str()).or_insert_with(|| {
                texts.push(s.as_str());
                (texts.len() - 1) as u32
            }),
        };
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// go.k8s.io/triage's two stages: per test, failures in build order join the first matching
/// key (`clusterTest`); then tests by most failures, and their local clusters by most
/// failures, fold into global keys (`clusterGlobal`). Returns the global key of every failure.
#[allow(clippy::too_many_arguments)]
fn k8s_keys(
    failures: &[FailureRef<'_>],
    table: &TextTable<'_>,
    fail_norm: &[u32],
    fail_test: &[u32],
    tests: usize,
    seed_ids: &[u32],
    cfg: &ClusterConfig,
    acc: &mut Accounting,
) -> Vec<u32> {
    // Failures of each test in the reference's order: by build, ties by normalized text.
    let mut per_test: Vec<Vec<u32>> = vec![Vec::new(); tests];
    for (i, &t) in fail_test.iter().enumerate() {
        per_test[t as usize].push(i as u32);
    }
    per_test.par_iter_mut().for_each(|v| {
        v.sort_by(|&a, &b| {
            failures[a as usize]
                .build
                .cmp(failures[b as usize].build)
                .then(fail_norm[a as usize].cmp(&fail_norm[b as usize]))
                .then(a.cmp(&b))
        })
    });
    let cap = cfg.max_precise_checks;
    // Local clustering per test (parallel; each test independent): the key of each failure.
    let locals: Vec<(Vec<u32>, Vec<LocalCluster>, u64, u64)> = per_test
        .par_iter()
        .map(|fs| {
            let seq: Vec<u32> = fs.iter().map(|&i| fail_norm[i as usize]).collect();
            local_cluster(table, &seq, cap)
        })
        .collect();
    for (_, lc, e, b) in &locals {
        acc.local_clusters += lc.len();
        acc.exact_checks += e;
        acc.bound_checks += b;
    }
    // Global: tests by most failures (ties by name), local clusters by most failures (ties
    // by key text).
    let mut test_order: Vec<u32> = (0..tests as u32).collect();
    test_order.sort_by(|&a, &b| per_test[b as usize].len().cmp(&per_test[a as usize].len()).then(a.cmp(&b)));
    let mut index = KeyIndex::new().with_cap(cap);
    for &s in seed_ids {
        index.insert(table, s);
    }
    let mut order_lc: Vec<(u32, u32)> = Vec::new(); // (test, local key)
    for &t in &test_order {
        for lc in &locals[t as usize].1 {
            order_lc.push((t, lc.key));
        }
    }
    let queries: Vec<u32> = order_lc.iter().map(|&(_, k)| k).collect();
    let keys = global_fold(table, &mut index, &queries);
    let global: HashMap<(u32, u32), u32> = order_lc.into_iter().zip(keys).collect();
    acc.exact_checks += index.exact_checks;
    acc.global_exact_checks = index.exact_checks;
    acc.bound_checks += index.bound_checks;
    let mut out = vec![0u32; failures.len()];
    for (t, fs) in per_test.iter().enumerate() {
        for (&i, &lk) in fs.iter().zip(&locals[t].0) {
            out[i as usize] = global[&(t as u32, lk)];
        }
    }
    out
}

/// Local clustering of one test's normalized texts, in the order given: a text joins itself
/// when it is a key, else the first matching key, else becomes a key. Returns the key of
/// every entry and the local clusters, largest first (ties by key text).
fn local_cluster(table: &TextTable<'_>, seq: &[u32], cap: Option<usize>) -> (Vec<u32>, Vec<LocalCluster>, u64, u64) {
    let mut index = KeyIndex::new().with_cap(cap);
    // A repeated text keeps the answer of its last search unless a key added since would be
    // one of its candidates.
    let mut memo: HashMap<u32, (u32, usize)> = HashMap::default();
    let mut size: HashMap<u32, u64> = HashMap::default();
    let mut keys = Vec::with_capacity(seq.len());
    for &m in seq {
        let key = if index.contains(m) {
            m
        } else {
            match memo.get(&m).copied() {
                Some((k, at)) if at == index.version() || !index.any_candidate_since(table, m, at) => {
                    memo.insert(m, (k, index.version()));
                    k
                }
                _ => {
                    let k = match index.find(table, m) {
                        Some(k) => k,
                        None => {
                            index.insert(table, m);
                            m
                        }
                    };
                    memo.insert(m, (k, index.version()));
                    k
                }
            }
        };
        *size.entry(key).or_insert(0) += 1;
        keys.push(key);
    }
    let mut clusters: Vec<LocalCluster> = size.into_iter().map(|(key, size)| LocalCluster { key, size }).collect();
    clusters.sort_by(|a, b| b.size.cmp(&a.size).then(a.key.cmp(&b.key)));
    (keys, clusters, index.exact_checks, index.bound_checks)
}

/// The distinct raw texts of the input and each failure's.
struct RawTexts<'r, 'a> {
    texts: &'r [&'a str],
    fail_raw: &'r [u32],
}

#[allow(clippy::too_many_arguments)]
fn build_cluster(
    failures: &[FailureRef<'_>],
    raw: &RawTexts<'_, '_>,
    fail_test: &[u32],
    test_names: &[&str],
    table: &TextTable<'_>,
    key: u32,
    members: &[u32],
    distinct_normalized: usize,
    want_spans: bool,
) -> Cluster {
    let key_text = table.text(key);
    let mut by_test: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &m in members {
        by_test.entry(fail_test[m as usize]).or_default().push(m);
    }
    let mut tests: Vec<TestMembers> = by_test
        .into_iter()
        .map(|(t, ms)| TestMembers { test: test_names[t as usize].to_string(), members: ms })
        .collect();
    tests.sort_by(|a, b| b.members.len().cmp(&a.members.len()).then_with(|| a.test.cmp(&b.test)));
    // Representative: the smallest raw text among the first test's members.
    let text = tests
        .first()
        .and_then(|t| t.members.iter().map(|&m| failures[m as usize].text).min())
        .unwrap_or("")
        .to_string();
    let spans = if want_spans {
        // distinct texts by raw id (the intersection does not depend on order)
        let mut distinct: Vec<u32> = members.iter().map(|&m| raw.fail_raw[m as usize]).collect();
        distinct.par_sort_unstable();
        distinct.dedup();
        let mut list: Vec<&str> = Vec::with_capacity(distinct.len());
        list.push(text.as_str());
        list.extend(distinct.into_iter().map(|r| raw.texts[r as usize]).filter(|t| *t != text));
        similarity::common_spans(&list)
    } else {
        Vec::new()
    };
    Cluster {
        key: key_text.to_string(),
        k8s_id: similarity::k8s_id_of(key_text),
        text,
        spans,
        members: members.to_vec(),
        tests,
        distinct_normalized,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similarity::{edit_distance_below, lower_bound, ngram_histogram};

    /// The reference's search, literally: every key passing the histogram rule, ordered by
    /// lower bound then key text, the first `cap` verified in order.
    fn brute_force(
        texts: &[String],
        hists: &[Histogram],
        keys: &[u32],
        q: u32,
        rule: MatchRule,
        cap: Option<usize>,
    ) -> Option<u32> {
        if keys.contains(&q) {
            return Some(q);
        }
        let qt = texts[q as usize].as_bytes();
        let hq = hists[q as usize];
        let mut cands: Vec<(u32, u32, usize)> = keys
            .iter()
            .filter_map(|&k| {
                let kt = texts[k as usize].as_bytes();
                let limit = rule.limit(qt.len(), kt.len());
                let lb = lower_bound(&hq, &hists[k as usize]);
                (limit > 1 && lb as usize <= limit).then_some((lb, k, limit))
            })
            .collect();
        cands.sort_unstable();
        cands.truncate(cap.unwrap_or(usize::MAX));
        cands
            .into_iter()
            .find(|&(_, k, limit)| edit_distance_below(qt, texts[k as usize].as_bytes(), limit).is_some())
            .map(|(_, k, _)| k)
    }

    /// A deterministic generator (xorshift) of numbers below its argument.
    fn below(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed | 1;
        move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m.max(1)
        }
    }

    /// Texts of a few shapes with volatile parts of varying size, so that near duplicates,
    /// far candidates and non-candidates of all lengths occur (some with more than 255
    /// windows in one histogram bucket).
    fn texts(n: usize, seed: u64) -> Vec<String> {
        let mut rnd = below(seed);
        let word = |r: &mut dyn FnMut(u64) -> u64, len: usize| -> String {
            (0..len).map(|_| (b'a' + r(6) as u8) as char).collect()
        };
        // a long text edited in a few to many places (matches with lower bounds of all
        // sizes), and another one behind runs of `x` of many lengths (length differences)
        let base: Vec<u8> = (0..900u64).map(|i| b"abcdefghij klmnop\n"[((i * 7 + i / 13) % 18) as usize]).collect();
        let base2: Vec<u8> = (0..900u64).map(|i| b"qrstuvw ,;:"[((i * 5 + i / 7) % 11) as usize]).collect();
        let mut out: Vec<String> = (0..n)
            .map(|_| {
                let shape = rnd(7);
                if shape == 5 {
                    let mut t = base.clone();
                    for _ in 0..rnd(70) {
                        let at = rnd(t.len() as u64) as usize;
                        t[at] = b'0' + rnd(10) as u8;
                    }
                    return String::from_utf8(t).unwrap_or_default();
                }
                if shape == 6 {
                    let mut t = vec![b'x'; 30 + rnd(100) as usize];
                    t.extend_from_slice(&base2);
                    return String::from_utf8(t).unwrap_or_default();
                }
                let vary = rnd(30) as usize;
                let mut s = match shape {
                    0 => format!("error creating disk {} in zone {}", word(&mut rnd, vary), word(&mut rnd, 3)),
                    1 => format!("Timed out after {}s: pod {} never became Ready", rnd(1000), word(&mut rnd, vary)),
                    2 => "x".repeat(150 + rnd(60) as usize) + &word(&mut rnd, 4),
                    3 => format!(
                        "{}\n{}",
                        "panic: runtime error\n\tat frame.go".repeat(1 + vary / 4),
                        word(&mut rnd, vary)
                    ),
                    _ => word(&mut rnd, 2 + vary),
                };
                match rnd(20) {
                    0 => s = s.repeat(2 + rnd(4) as usize),
                    1 => s.push_str(&"y".repeat(250 + rnd(20) as usize)), // a count above 255
                    _ => {}
                }
                s
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    #[test]
    fn index_search_equals_the_reference_rule() {
        for (rule, cap) in [
            (MatchRule::K8s, None),
            (MatchRule::K8s, Some(K8S_PRECISE_CHECKS)),
            (MatchRule::K8s, Some(3)),
            (MatchRule::Fraction(0.2), Some(2)),
            (MatchRule::Fraction(0.2), None),
        ] {
            let texts = texts(700, 7 + cap.unwrap_or(0) as u64);
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let hists: Vec<Histogram> = texts.iter().map(|t| ngram_histogram(t.as_bytes())).collect();
            let table = TextTable::new(refs);
            let mut index = KeyIndex::with_rule(rule).with_cap(cap);
            let mut keys: Vec<u32> = Vec::new();
            let mut joined = 0;
            // fold every text in a scrambled order, like the clustering stages do
            for i in 0..texts.len() as u32 {
                let q = (i * 389) % texts.len() as u32;
                let want = brute_force(&texts, &hists, &keys, q, rule, cap);
                let got = index.search(&table, q, i % 2 == 0).hit.map(|h| h.key);
                assert_eq!(got, want, "query {q} {:?} (rule {rule:?}, cap {cap:?})", texts[q as usize]);
                if got.is_none() {
                    index.insert(&table, q);
                    keys.push(q);
                } else {
                    joined += 1;
                }
            }
            assert!(
                joined > 50 && keys.len() > 50,
                "the corpus exercises both outcomes: {joined} joined, {} keys",
                keys.len()
            );
        }
    }

    /// Queries for the fold: every text of [`texts`] once or several times, in a scrambled
    /// order (repeats find their own text as a key), with runs of near misses of one text.
    fn fold_queries(n: u32, seed: u32) -> Vec<u32> {
        let mut qs: Vec<u32> = (0..3 * n).map(|i| (i.wrapping_mul(389).wrapping_add(seed * 7)) % n).collect();
        // a long stretch of distinct texts first: many keys are created inside one batch
        let mut head: Vec<u32> = (0..n).map(|i| (i * 211 + seed) % n).collect();
        head.dedup();
        head.append(&mut qs);
        head
    }

    /// Variants of a few base texts, each edited in up to twice as many places as the 10%
    /// rule allows: many pairs match, many just miss, and a query often matches several keys
    /// that do not match each other (so the order of candidates decides).
    fn near_misses(n: usize, seed: u64) -> Vec<String> {
        let mut rnd = below(seed);
        let bases: Vec<Vec<u8>> = [180u64, 420, 900]
            .iter()
            .map(|&len| (0..len).map(|i| b"abcdefgh ijklmnop\n"[((i * 7 + i / 11) % 18) as usize]).collect())
            .collect();
        let mut out: Vec<String> = (0..n)
            .map(|_| {
                let mut t = bases[rnd(3) as usize].clone();
                let limit = t.len() as u64 / 10;
                for _ in 0..rnd(2 * limit) {
                    let at = rnd(t.len() as u64) as usize;
                    t[at] = b'0' + rnd(10) as u8;
                }
                if rnd(4) == 0 {
                    t.truncate(t.len() - rnd(limit) as usize);
                }
                String::from_utf8(t).unwrap_or_default()
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn fold_with(threads: usize, f: impl FnOnce() -> Vec<u32> + Send) -> Vec<u32> {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool").install(f)
    }

    #[test]
    fn batched_fold_equals_the_sequential_fold() {
        let mut cases = 0;
        for (rule, cap, seed) in [
            (MatchRule::K8s, Some(K8S_PRECISE_CHECKS), 3u64),
            (MatchRule::K8s, Some(3), 5),
            (MatchRule::K8s, Some(1), 9),
            (MatchRule::K8s, None, 11),
            (MatchRule::Fraction(0.2), Some(2), 13),
        ] {
            let mut texts = texts(500, seed);
            texts.extend(near_misses(500, seed));
            texts.sort();
            texts.dedup();
            let table = TextTable::new(texts.iter().map(String::as_str).collect());
            let n = texts.len() as u32;
            let queries = fold_queries(n, seed as u32);
            // a few seed keys, as `--previous` gives
            let seeds: Vec<u32> = (0..n).step_by(97).collect();
            let fresh = || {
                let mut ix = KeyIndex::with_rule(rule).with_cap(cap);
                for &s in &seeds {
                    ix.insert(&table, s);
                }
                ix
            };
            let mut seq_index = fresh();
            let want = sequential_fold(&table, &mut seq_index, &queries);
            let keys = want.iter().collect::<FxHashSet<_>>().len();
            let joined = want.iter().zip(&queries).filter(|(k, q)| k != q).count();
            assert!(
                keys > 100 && joined > 300,
                "the input exercises both outcomes: {keys} keys, {joined} joins (rule {rule:?}, cap {cap:?})"
            );
            for threads in [1, 2, 4] {
                let mut index = fresh();
                let got = fold_with(threads, || global_fold(&table, &mut index, &queries));
                assert_eq!(got, want, "rule {rule:?}, cap {cap:?}, {threads} threads");
                assert_eq!(index.order, seq_index.order, "keys in creation order ({threads} threads)");
                cases += 1;
            }
        }
        assert_eq!(cases, 15);
    }
}
