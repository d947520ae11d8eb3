//! The go.k8s.io/triage similarity measure and cluster id.
//!
//! * A 64-bucket histogram of all 4-byte windows of a text, each window hashed with
//!   CRC32-IEEE and reduced `& 63` ([`ngram_histogram`]).
//! * A cheap lower bound on the edit distance: `Σ|a_i − b_i| / 4` ([`lower_bound`]), since one
//!   edit changes at most four windows.
//! * The match rule: `limit = int((len a + len b) / 2 × 0.10)` computed in `float32`; a pair
//!   matches when the lower bound is at most `limit`, the exact Levenshtein distance over bytes
//!   is strictly below `limit`, and when `limit ≤ 1` only identical texts match
//!   ([`k8s_match`]).
//! * A bounded exact edit distance by diagonal transitions (Ukkonen/Landau–Vishkin) that stops
//!   as soon as the distance reaches the limit ([`edit_distance_below`]); it costs
//!   O(n + d²) for distance d, so near-duplicates are cheap.
//! * The cluster id: the first 20 hex chars of SHA-1 over the counts printed like a Python
//!   list, `"[a, b, c, ...]"` ([`k8s_id`]).
//! * `commonSpans`: alternating lengths of the parts of the first text whose `\w+|\W+` tokens
//!   occur in every text and the parts that do not ([`common_spans`]).

use std::sync::LazyLock;

/// Number of histogram buckets.
pub const BUCKETS: usize = 64;

/// A 4-gram histogram.
pub type Histogram = [u32; BUCKETS];

/// Low 6 bits of CRC32-IEEE of any 4-byte window, decomposed into per-position tables:
/// CRC is affine over GF(2), so crc(b0 b1 b2 b3) = c ⊕ T0[b0] ⊕ T1[b1] ⊕ T2[b2] ⊕ T3[b3].
struct WindowTables {
    base: u8,
    t: [[u8; 256]; 4],
}

static TABLES: LazyLock<WindowTables> = LazyLock::new(|| {
    let crc = |w: [u8; 4]| (crc32fast::hash(&w) & 63) as u8;
    let base = crc([0; 4]);
    let mut t = [[0u8; 256]; 4];
    for (pos, table) in t.iter_mut().enumerate() {
        for (x, slot) in table.iter_mut().enumerate() {
            let mut w = [0u8; 4];
            w[pos] = x as u8;
            *slot = crc(w) ^ base;
        }
    }
    WindowTables { base, t }
});

/// 64-bucket histogram of the CRC32-IEEE of every 4-byte window of `s`.
pub fn ngram_histogram(s: &[u8]) -> Histogram {
    let mut counts = [0u32; BUCKETS];
    if s.len() < 4 {
        return counts;
    }
    let tb = &*TABLES;
    for w in s.windows(4) {
        let b =
            tb.base ^ tb.t[0][w[0] as usize] ^ tb.t[1][w[1] as usize] ^ tb.t[2][w[2] as usize] ^ tb.t[3][w[3] as usize];
        counts[b as usize] += 1;
    }
    counts
}

/// Σ|a_i − b_i| over the buckets (the L1 distance of two histograms).
pub fn l1(a: &Histogram, b: &Histogram) -> u32 {
    a.iter().zip(b.iter()).map(|(x, y)| x.abs_diff(*y)).sum()
}

/// go.k8s.io/triage's lower bound on the edit distance: `Σ|a_i − b_i| / 4` (integer division).
pub fn lower_bound(a: &Histogram, b: &Histogram) -> u32 {
    l1(a, b) / 4
}

/// The 10% limit of go.k8s.io/triage for texts of byte lengths `la` and `lb`, computed in
/// `float32` exactly as the reference does.
pub fn match_limit(la: usize, lb: usize) -> usize {
    let v = ((la + lb) as f32) / 2.0f32 * 0.10f32;
    v as usize
}

/// Python-list rendering of the counts, e.g. `[0, 1, 2]`.
pub fn histogram_repr(h: &Histogram) -> String {
    let mut s = String::with_capacity(BUCKETS * 3 + 2);
    s.push('[');
    for (i, c) in h.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&c.to_string());
    }
    s.push(']');
    s
}

/// go.k8s.io/triage cluster id of a histogram: first 20 hex chars of SHA-1 of its repr.
pub fn k8s_id(h: &Histogram) -> String {
    let digest = sha1_smol::Sha1::from(histogram_repr(h)).digest().to_string();
    digest[..20].to_string()
}

/// go.k8s.io/triage cluster id of a (normalized) key text.
pub fn k8s_id_of(text: &str) -> String {
    k8s_id(&ngram_histogram(text.as_bytes()))
}

/// Exact Levenshtein distance (unit costs, over bytes) if it is strictly below `limit`,
/// otherwise `None`. Diagonal-transition algorithm with early exit.
pub fn edit_distance_below(a: &[u8], b: &[u8], limit: usize) -> Option<usize> {
    if limit == 0 {
        return None;
    }
    let max_d = limit - 1;
    // Strip common prefix and suffix: they never change the distance.
    let pre = common_prefix(a, b);
    let (a, b) = (&a[pre..], &b[pre..]);
    let suf = common_suffix(a, b);
    let (a, b) = (&a[..a.len() - suf], &b[..b.len() - suf]);
    let (n, m) = (a.len(), b.len());
    if n.abs_diff(m) > max_d {
        return None;
    }
    if n == 0 || m == 0 {
        return Some(n.max(m));
    }
    // The distance is at most max(n, m): a larger budget never changes the answer, only the
    // size of the buffers (callers pass large limits for short lines).
    let max_d = max_d.min(n.max(m));
    // Diagonal k = j - i (offset by max_d+1); fr[k] = furthest row i reached on diagonal k.
    // Buffers start at -inf and every level writes its whole band, so no reset is needed.
    let width = 2 * max_d + 3;
    let off = max_d as isize + 1;
    let target = m as isize - n as isize;
    const NEG: isize = isize::MIN / 2;
    let mut prev = vec![NEG; width];
    let mut cur = vec![NEG; width];
    // d = 0
    let slide0 = common_prefix(a, b) as isize;
    prev[off as usize] = slide0;
    if target == 0 && slide0 as usize >= n {
        return Some(0);
    }
    let max_d = max_d as isize;
    for d in 1..=max_d {
        // From diagonal k at least |k - target| more edits are needed: only diagonals within
        // the remaining budget of the target can still finish below the limit.
        let budget = max_d - d;
        let lo = (-d).max(-(n as isize)).max(target - budget);
        let hi = d.min(m as isize).min(target + budget);
        // clear the cells just outside this level's band that the next level may read
        for k in [lo - 1, hi + 1] {
            let idx = k + off;
            if idx >= 0 && (idx as usize) < width {
                cur[idx as usize] = NEG;
            }
        }
        if lo > hi {
            return None;
        }
        for k in lo..=hi {
            let idx = (k + off) as usize;
            // substitution: same diagonal, row+1; deletion: from k+1 with row+1;
            // insertion: from k-1, same row.
            let mut row = prev[idx] + 1;
            row = row.max(prev[idx + 1] + 1);
            row = row.max(prev[idx - 1]);
            let max_row = (n as isize).min(m as isize - k);
            if row > max_row {
                row = max_row;
            }
            if row < 0 || row + k < 0 {
                cur[idx] = NEG;
                continue;
            }
            let i = row as usize;
            let j = (row + k) as usize;
            // most slides are empty when the texts differ: test one byte before the call
            let row = if i < n && j < m && a[i] == b[j] {
                row + 1 + common_prefix(&a[i + 1..], &b[j + 1..]) as isize
            } else {
                row
            };
            cur[idx] = row;
            if k == target && row as usize >= n {
                return Some(d as usize);
            }
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    None
}

/// An upper bound on the edit distance of two multi-line texts from a line alignment: lines
/// are aligned by the longest common subsequence of their shapes (digits ignored), aligned
/// lines cost their own edit distance, lines between anchors are paired in order and the
/// surplus is inserted or deleted whole. Any such script is a valid edit script, so its cost
/// bounds the distance from above. Returns the bound when it is below `limit`, else None.
pub fn line_upper_bound_below(a: &[u8], b: &[u8], limit: usize) -> Option<usize> {
    let la: Vec<&[u8]> = a.split(|&c| c == b'\n').collect();
    let lb: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
    if la.len() < 2 || lb.len() < 2 || la.len() * lb.len() > 1 << 20 {
        return None;
    }
    let shape = |l: &[u8]| -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &c in l {
            if !c.is_ascii_digit() {
                h ^= c as u64;
                h = h.wrapping_mul(0x100_0000_01b3);
            }
        }
        h
    };
    let sa: Vec<u64> = la.iter().map(|l| shape(l)).collect();
    let sb: Vec<u64> = lb.iter().map(|l| shape(l)).collect();
    // LCS table over shapes (lines are few: at most a few hundred each).
    let (n, m) = (sa.len(), sb.len());
    let mut dp = vec![0u32; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            dp[i * (m + 1) + j] = if sa[i] == sb[j] {
                dp[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                dp[(i + 1) * (m + 1) + j].max(dp[i * (m + 1) + j + 1])
            };
        }
    }
    let mut total = 0usize;
    let (mut i, mut j) = (0usize, 0usize);
    let (mut gi, mut gj) = (0usize, 0usize); // start of the current unaligned gap
    let pay = |x: &[&[u8]], y: &[&[u8]], total: &mut usize| -> bool {
        // pair lines in order, insert/delete the rest (with their newline)
        for k in 0..x.len().max(y.len()) {
            let cost = match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => match edit_distance_below(p, q, limit - *total) {
                    Some(d) => d,
                    None => return false,
                },
                (Some(p), None) | (None, Some(p)) => p.len() + 1,
                (None, None) => 0,
            };
            *total += cost;
            if *total >= limit {
                return false;
            }
        }
        true
    };
    while i < n && j < m {
        if sa[i] == sb[j] && dp[i * (m + 1) + j] == dp[(i + 1) * (m + 1) + j + 1] + 1 {
            if !pay(&la[gi..i], &lb[gj..j], &mut total) {
                return None;
            }
            if la[i] != lb[j] {
                match edit_distance_below(la[i], lb[j], limit - total) {
                    Some(d) => total += d,
                    None => return None,
                }
                if total >= limit {
                    return None;
                }
            }
            i += 1;
            j += 1;
            gi = i;
            gj = j;
        } else if dp[(i + 1) * (m + 1) + j] >= dp[i * (m + 1) + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    if !pay(&la[gi..], &lb[gj..], &mut total) {
        return None;
    }
    Some(total)
}

/// Exact Levenshtein distance over bytes (unbounded; for tests and small inputs).
pub fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let limit = a.len() + b.len() + 1;
    edit_distance_below(a, b, limit).unwrap_or(limit)
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0usize;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().unwrap_or([0; 8]));
        let y = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let diff = x ^ y;
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (la, lb) = (a.len(), b.len());
    let mut i = 0usize;
    while i < n && a[la - 1 - i] == b[lb - 1 - i] {
        i += 1;
    }
    i
}

/// Histogram of bytes folded into 64 bins (`b & 63`). Half the L1 distance of two such
/// histograms never exceeds the edit distance (an edit changes at most two counts).
pub fn char_histogram(s: &[u8]) -> [u16; 64] {
    let mut h = [0u16; 64];
    for &b in s {
        let slot = &mut h[(b & 63) as usize];
        *slot = slot.saturating_add(1);
    }
    h
}

/// Lower bound on the edit distance from two [`char_histogram`]s.
pub fn char_lower_bound(a: &[u16; 64], b: &[u16; 64]) -> usize {
    let l1: u32 = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y) as u32).sum();
    l1.div_ceil(2) as usize
}

/// Sorted multiset of the exact 4-byte windows of `s` (the q-gram profile, q = 4).
pub fn qgram_profile(s: &[u8]) -> Vec<u32> {
    let mut v: Vec<u32> = s.windows(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
    v.sort_unstable();
    v
}

/// Lower bound on the edit distance from two [`qgram_profile`]s: an edit removes at most four
/// windows and adds at most four, so the multiset symmetric difference is at most 8 × edits.
pub fn qgram_lower_bound(a: &[u32], b: &[u32]) -> usize {
    // A branch-free merge: windows are in random order, so a branch per step would be
    // mispredicted half of the time.
    let (mut i, mut j, mut common) = (0usize, 0usize, 0usize);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        common += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    let diff = a.len() + b.len() - 2 * common;
    diff.div_ceil(8)
}

/// go.k8s.io/triage's pairwise match rule on two normalized texts with their histograms.
pub fn k8s_match(a: &str, ha: &Histogram, b: &str, hb: &Histogram) -> bool {
    if a == b {
        return true;
    }
    let limit = match_limit(a.len(), b.len());
    if lower_bound(ha, hb) as usize > limit || limit <= 1 {
        return false;
    }
    edit_distance_below(a.as_bytes(), b.as_bytes(), limit).is_some()
}

/// Tokens `\w+|\W+` with ASCII `\w` (Go semantics); non-ASCII bytes count as non-word.
struct SpanTokens<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Iterator for SpanTokens<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let b = self.s.as_bytes();
        let start = self.at;
        if start >= b.len() {
            return None;
        }
        let is_w = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let w = is_w(b[start]);
        let mut end = start + 1;
        while end < b.len() && is_w(b[end]) == w {
            end += 1;
        }
        // keep UTF-8 boundaries (non-word runs swallow whole multi-byte chars)
        while end < b.len() && !self.s.is_char_boundary(end) {
            end += 1;
        }
        self.at = end;
        Some(&self.s[start..end])
    }
}

fn span_tokens(s: &str) -> SpanTokens<'_> {
    SpanTokens { s, at: 0 }
}

/// The first text's tokens: index per distinct token, and the sequence with those indices.
struct FirstTokens<'a> {
    index: crate::fxhash::FxHashMap<&'a str, u32>,
    seq: Vec<(&'a str, u32)>,
}

/// Which of the first text's tokens (by index) occur in every one of `texts`: a text only
/// marks the tokens it has, so no per-text set is built; a token equal to the first text's
/// token at the same position (the usual case in a cluster) is marked without hashing.
fn surviving(first: &FirstTokens<'_>, texts: &[&str], mut alive: Vec<bool>) -> Vec<bool> {
    let mut seen = vec![false; alive.len()];
    for t in texts {
        seen.iter_mut().for_each(|x| *x = false);
        for (i, tok) in span_tokens(t).enumerate() {
            match first.seq.get(i) {
                Some(&(f, idx)) if f == tok => seen[idx as usize] = true,
                _ => {
                    if let Some(&idx) = first.index.get(tok) {
                        seen[idx as usize] = true;
                    }
                }
            }
        }
        let mut any = false;
        for (a, s) in alive.iter_mut().zip(&seen) {
            *a &= *s;
            any |= *a;
        }
        if !any {
            break;
        }
    }
    alive
}

/// go.k8s.io/triage `commonSpans`: alternating match/mismatch byte lengths over the first
/// text, where "match" means the `\w+|\W+` token occurs in every text. Starts with a match
/// span (possibly 0). Many texts are scanned in parallel chunks (the intersection does not
/// depend on order).
pub fn common_spans<S: AsRef<str> + Sync>(texts: &[S]) -> Vec<usize> {
    use rayon::prelude::*;
    let Some(first) = texts.first() else {
        return Vec::new();
    };
    let first = first.as_ref();
    let mut common = FirstTokens { index: crate::fxhash::FxHashMap::default(), seq: Vec::new() };
    for tok in span_tokens(first) {
        let next = common.index.len() as u32;
        let idx = *common.index.entry(tok).or_insert(next);
        common.seq.push((tok, idx));
    }
    let rest: Vec<&str> = texts[1..].iter().map(|t| t.as_ref()).collect();
    let all = vec![true; common.index.len()];
    const CHUNK: usize = 4096;
    let alive = if rest.len() <= CHUNK {
        surviving(&common, &rest, all)
    } else {
        rest.par_chunks(CHUNK)
            .map(|c| surviving(&common, c, all.clone()))
            .reduce(|| all.clone(), |a, b| a.iter().zip(&b).map(|(x, y)| *x && *y).collect())
    };
    let mut spans = Vec::new();
    let mut matching = true;
    let mut len = 0usize;
    for &(tok, idx) in &common.seq {
        let is_common = alive[idx as usize];
        if is_common != matching {
            spans.push(len);
            len = 0;
            matching = is_common;
        }
        len += tok.len();
    }
    if len != 0 {
        spans.push(len);
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_lev(a: &[u8], b: &[u8]) -> usize {
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for i in 1..=a.len() {
            let mut cur = vec![i; b.len() + 1];
            for j in 1..=b.len() {
                let c = if a[i - 1] == b[j - 1] { 0 } else { 1 };
                cur[j] = (prev[j - 1] + c).min(prev[j] + 1).min(cur[j - 1] + 1);
            }
            prev = cur;
        }
        prev[b.len()]
    }

    #[test]
    fn window_tables_equal_crc32() {
        let s = b"some string with \x00\xff bytes";
        let mut want = [0u32; BUCKETS];
        for w in s.windows(4) {
            want[(crc32fast::hash(w) & 63) as usize] += 1;
        }
        assert_eq!(ngram_histogram(s), want);
    }

    #[test]
    fn id_of_some_string() {
        assert_eq!(k8s_id_of("some string"), "eddb950347d1eb05b5d7");
    }

    #[test]
    fn bounded_distance_equals_naive() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let la = (rnd() % 30) as usize;
            let lb = (rnd() % 30) as usize;
            let alpha = 2 + (rnd() % 4) as u8;
            let a: Vec<u8> = (0..la).map(|_| b'a' + (rnd() % alpha as u64) as u8).collect();
            let b: Vec<u8> = (0..lb).map(|_| b'a' + (rnd() % alpha as u64) as u8).collect();
            let d = naive_lev(&a, &b);
            assert_eq!(edit_distance(&a, &b), d, "{a:?} {b:?}");
            for limit in 0..d + 3 {
                let got = edit_distance_below(&a, &b, limit);
                if d < limit {
                    assert_eq!(got, Some(d));
                } else {
                    assert_eq!(got, None);
                }
            }
        }
    }

    #[test]
    fn line_upper_bound_is_an_upper_bound() {
        let mut seed = 7u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..500 {
            let mk = |r: &mut dyn FnMut() -> u64| -> Vec<u8> {
                let lines = 1 + r() % 6;
                let mut v = Vec::new();
                for i in 0..lines {
                    if i > 0 {
                        v.push(b'\n');
                    }
                    for _ in 0..(r() % 6) {
                        v.push(b"ab1\n"[(r() % 3) as usize]);
                    }
                }
                v
            };
            let a = mk(&mut rnd);
            let b = mk(&mut rnd);
            let d = naive_lev(&a, &b);
            if let Some(ub) = line_upper_bound_below(&a, &b, 100) {
                assert!(ub >= d, "{a:?} {b:?} ub {ub} d {d}");
            }
        }
    }

    #[test]
    fn lower_bounds_are_valid() {
        let mut seed = 99u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let la = (rnd() % 40) as usize;
            let a: Vec<u8> = (0..la).map(|_| b'a' + (rnd() % 5) as u8).collect();
            let mut b = a.clone();
            for _ in 0..(rnd() % 8) {
                let op = rnd() % 3;
                let pos = if b.is_empty() { 0 } else { (rnd() as usize) % b.len() };
                match op {
                    0 if !b.is_empty() => b[pos] = b'a' + (rnd() % 7) as u8,
                    1 => b.insert(pos, b'a' + (rnd() % 7) as u8),
                    _ if !b.is_empty() => {
                        b.remove(pos);
                    }
                    _ => {}
                }
            }
            let d = naive_lev(&a, &b);
            assert!(char_lower_bound(&char_histogram(&a), &char_histogram(&b)) <= d);
            assert!(qgram_lower_bound(&qgram_profile(&a), &qgram_profile(&b)) <= d);
        }
    }

    #[test]
    fn limit_is_float32() {
        assert_eq!(match_limit(10, 10), 1);
        assert_eq!(match_limit(100, 100), 10);
        assert_eq!(match_limit(6, 6), 0);
    }
}
