//! Building a [`TextIndex`]: `IndexBuilder` deduplicates texts as they are added (one
//! copy of each distinct text, dense ids in first-seen order) and `finish` builds the
//! trigram posting lists in parallel.
//!
//! `finish` cuts the texts into chunks of consecutive ids (a few MB of text each), finds
//! each chunk's lowercased trigrams and their id lists with a small open-addressing map,
//! encodes each list (delta + varint) into the chunk's buffer, then merges the chunks'
//! lists trigram by trigram into one buffer, re-basing only the first delta of each
//! chunk's piece. Chunks and merge ranges run on rayon's pool.

use crate::index::{write_varint, TextId, TextIndex};
use rayon::prelude::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Collects distinct texts; [`IndexBuilder::finish`] turns them into a [`TextIndex`].
#[derive(Default)]
pub struct IndexBuilder {
    text: String,
    /// `ends[i]` is where text `i` ends in `text`; it starts where text `i - 1` ends.
    ends: Vec<usize>,
    /// Content hash → first id with that hash.
    by_hash: HashMap<u64, u32, BuildHasherDefault<PassThrough>>,
    /// Further ids whose text has a hash already in `by_hash` (hash collisions).
    collisions: HashMap<u64, Vec<u32>, BuildHasherDefault<PassThrough>>,
    added: u64,
}

impl IndexBuilder {
    pub fn new() -> IndexBuilder {
        IndexBuilder::default()
    }

    /// Adds `text`, returning its id: the id it already has if an identical text was
    /// added before, else the next dense id.
    ///
    /// # Panics
    /// When more than `u32::MAX` distinct texts are added.
    pub fn add(&mut self, text: &str) -> TextId {
        self.added += 1;
        let h = hash(text.as_bytes());
        if let Some(&id) = self.by_hash.get(&h) {
            if self.get(id) == text {
                return TextId(id);
            }
            if let Some(ids) = self.collisions.get(&h) {
                if let Some(&id) = ids.iter().find(|&&id| self.get(id) == text) {
                    return TextId(id);
                }
            }
            let id = self.push(text);
            self.collisions.entry(h).or_default().push(id);
            return TextId(id);
        }
        let id = self.push(text);
        self.by_hash.insert(h, id);
        TextId(id)
    }

    /// Number of distinct texts so far.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Number of `add` calls so far, duplicates included.
    pub fn added(&self) -> u64 {
        self.added
    }

    /// Builds the index over the distinct texts (in parallel on rayon's pool).
    pub fn finish(self) -> TextIndex {
        let IndexBuilder { mut text, mut ends, by_hash, collisions, .. } = self;
        drop((by_hash, collisions));
        text.shrink_to_fit();
        ends.shrink_to_fit();
        let chunks = chunk_ranges(&ends, rayon::current_num_threads());
        let built: Vec<Chunk> = chunks.par_iter().map(|&(lo, hi)| Chunk::build(&text, &ends, lo, hi)).collect();
        let (keys, post_ends, counts, postings) = merge(built);
        TextIndex::from_parts(text, ends, keys, post_ends, counts, postings)
    }

    fn push(&mut self, text: &str) -> u32 {
        let id = u32::try_from(self.ends.len()).ok().filter(|&id| id < u32::MAX);
        let Some(id) = id else { panic!("citriage-search: more than {} distinct texts", u32::MAX - 1) };
        self.text.push_str(text);
        self.ends.push(self.text.len());
        id
    }

    fn get(&self, id: u32) -> &str {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

impl std::fmt::Debug for IndexBuilder {
    /// Sizes only (the texts can be gigabytes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexBuilder")
            .field("texts", &self.len())
            .field("text_bytes", &self.text.len())
            .field("added", &self.added)
            .finish()
    }
}

/// A fast 64-bit content hash (word-at-a-time multiply-rotate with a final avalanche).
/// Collisions are resolved by comparing texts, so it only needs to spread well.
fn hash(b: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = (b.len() as u64).wrapping_mul(K);
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let v = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        h = (h ^ v).wrapping_mul(K).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    let rest = words.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^= h >> 32;
    h = h.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    h ^ (h >> 32)
}

/// A hasher for keys that already are hashes (`u64`) or trigrams.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Id ranges of a few MB of text each, at least a few per thread when there is enough
/// text to share.
fn chunk_ranges(ends: &[usize], threads: usize) -> Vec<(usize, usize)> {
    const MIN_CHUNK: usize = 256 << 10;
    const MAX_CHUNK: usize = 4 << 20;
    let total = ends.last().copied().unwrap_or(0);
    let target = (total / (threads.max(1) * 4)).clamp(MIN_CHUNK, MAX_CHUNK);
    let mut out = Vec::new();
    let mut lo = 0;
    let mut start_byte = 0;
    for (i, &end) in ends.iter().enumerate() {
        if end - start_byte >= target {
            out.push((lo, i + 1));
            lo = i + 1;
            start_byte = end;
        }
    }
    if lo < ends.len() {
        out.push((lo, ends.len()));
    }
    out
}

/// Packs three bytes (already lowercased) into a key.
fn key(a: u8, b: u8, c: u8) -> u32 {
    (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c)
}

/// One chunk's posting lists: sorted keys, each list encoded with its first id absolute.
struct Chunk {
    keys: Vec<u32>,
    /// End of each key's list in `buf`.
    ends: Vec<u32>,
    counts: Vec<u32>,
    lasts: Vec<u32>,
    buf: Vec<u8>,
}

impl Chunk {
    fn build(text: &str, ends: &[usize], lo: usize, hi: usize) -> Chunk {
        let bytes = text.as_bytes();
        let mut table = TrigramTable::new();
        // The table positions of each text's distinct trigrams, text after text;
        // `occ_ends[j]` ends text `lo + j`'s run.
        let mut occ: Vec<u32> = Vec::new();
        let mut occ_ends: Vec<usize> = Vec::with_capacity(hi - lo);
        for i in lo..hi {
            let start = if i == 0 { 0 } else { ends[i - 1] };
            let t = &bytes[start..ends[i]];
            if t.len() >= 3 {
                let id = i as u32;
                let mut k = key(0, t[0].to_ascii_lowercase(), t[1].to_ascii_lowercase());
                for &b in &t[2..] {
                    k = ((k << 8) | u32::from(b.to_ascii_lowercase())) & 0x00FF_FFFF;
                    table.visit(k, id, &mut occ);
                }
            }
            occ_ends.push(occ.len());
        }
        // Counting sort of the (position, id) occurrences by position; ids stay
        // ascending within each position.
        let mut counts = vec![0u32; table.entries.len()];
        for &p in &occ {
            counts[p as usize] += 1;
        }
        let mut starts: Vec<usize> = Vec::with_capacity(counts.len());
        let mut sum = 0usize;
        for &c in &counts {
            starts.push(sum);
            sum += c as usize;
        }
        let mut fill = starts.clone();
        let mut flat = vec![0u32; occ.len()];
        let mut o = 0;
        for (j, &end) in occ_ends.iter().enumerate() {
            let id = (lo + j) as u32;
            for &p in &occ[o..end] {
                let f = &mut fill[p as usize];
                flat[*f] = id;
                *f += 1;
            }
            o = end;
        }
        drop(occ);
        drop(fill);
        let mut order: Vec<(u32, u32)> = table
            .entries
            .iter()
            .enumerate()
            .filter(|(_, &e)| e != EMPTY_ENTRY)
            .map(|(p, &e)| ((e >> 32) as u32, p as u32))
            .collect();
        order.sort_unstable();
        let mut chunk = Chunk {
            keys: Vec::with_capacity(order.len()),
            ends: Vec::with_capacity(order.len()),
            counts: Vec::with_capacity(order.len()),
            lasts: Vec::with_capacity(order.len()),
            buf: Vec::with_capacity(flat.len() + flat.len() / 4),
        };
        for (k, p) in order {
            let p = p as usize;
            let ids = &flat[starts[p]..starts[p] + counts[p] as usize];
            let mut prev = 0;
            for &id in ids {
                write_varint(&mut chunk.buf, id - prev);
                prev = id;
            }
            chunk.keys.push(k);
            chunk.ends.push(chunk.buf.len() as u32);
            chunk.counts.push(counts[p]);
            chunk.lasts.push(prev);
        }
        chunk
    }

    fn list(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.buf[start..self.ends[i] as usize]
    }
}

/// Merged posting lists: sorted keys, list ends in the buffer, counts, the buffer.
type Merged = (Vec<u32>, Vec<usize>, Vec<u32>, Vec<u8>);

/// Merges the chunks' lists key by key; key ranges are merged in parallel, then joined
/// (the chunks dropped before, each piece as it is appended, so no more than two
/// copies of the lists are held at once).
fn merge(chunks: Vec<Chunk>) -> Merged {
    let mut keys: Vec<u32> = chunks.iter().flat_map(|c| c.keys.iter().copied()).collect();
    keys.par_sort_unstable();
    keys.dedup();
    let parts = (rayon::current_num_threads() * 4).max(1);
    let per = keys.len().div_ceil(parts).max(1);
    let pieces: Vec<(Vec<usize>, Vec<u32>, Vec<u8>)> =
        keys.par_chunks(per).map(|ks| merge_range(&chunks, ks)).collect();
    drop(chunks);
    let mut post_ends = Vec::with_capacity(keys.len());
    let mut counts = Vec::with_capacity(keys.len());
    let mut postings = Vec::with_capacity(pieces.iter().map(|p| p.2.len()).sum());
    for (ends, cs, buf) in pieces {
        let base = postings.len();
        post_ends.extend(ends.into_iter().map(|e| e + base));
        counts.extend(cs);
        postings.extend_from_slice(&buf);
    }
    (keys, post_ends, counts, postings)
}

fn merge_range(chunks: &[Chunk], keys: &[u32]) -> (Vec<usize>, Vec<u32>, Vec<u8>) {
    let (Some(&first), Some(&last)) = (keys.first(), keys.last()) else { return Default::default() };
    let mut cursors: Vec<usize> = chunks.iter().map(|c| c.keys.partition_point(|&k| k < first)).collect();
    let size: usize = chunks
        .iter()
        .zip(&cursors)
        .map(|(c, &lo)| {
            let hi = c.keys.partition_point(|&k| k <= last);
            let start = if lo == 0 { 0 } else { c.ends[lo - 1] as usize };
            let end = if hi == 0 { 0 } else { c.ends[hi - 1] as usize };
            end - start
        })
        .sum();
    let mut buf = Vec::with_capacity(size + keys.len());
    let mut ends = Vec::with_capacity(keys.len());
    let mut counts = Vec::with_capacity(keys.len());
    for &k in keys {
        let mut prev: u32 = 0;
        let mut count: u32 = 0;
        for (c, chunk) in chunks.iter().enumerate() {
            let i = cursors[c];
            if i < chunk.keys.len() && chunk.keys[i] == k {
                let piece = chunk.list(i);
                let (first_id, n) = crate::index::read_varint(piece, 0);
                // The chunk encodes its first id absolute; re-base it on the list so far.
                write_varint(&mut buf, first_id - prev);
                buf.extend_from_slice(&piece[n..]);
                prev = chunk.lasts[i];
                count += chunk.counts[i];
                cursors[c] = i + 1;
            }
        }
        ends.push(buf.len());
        counts.push(count);
    }
    (ends, counts, buf)
}

/// Open-addressing table of one chunk's trigrams: each entry packs a key and the last
/// id seen with it, so one probe both finds the trigram and skips its repeats within a
/// text. A trigram is identified by its position in the table.
struct TrigramTable {
    entries: Vec<u64>,
    len: usize,
    shift: u32,
}

const EMPTY_ENTRY: u64 = u64::MAX;

impl TrigramTable {
    fn new() -> TrigramTable {
        let bits = 12;
        TrigramTable { entries: vec![EMPTY_ENTRY; 1 << bits], len: 0, shift: 32 - bits }
    }

    fn home(&self, k: u32) -> usize {
        (k.wrapping_mul(0x9E37_79B1) >> self.shift) as usize
    }

    /// Records that text `id` contains trigram `k`: on the text's first occurrence of
    /// `k`, appends the trigram's position to `occ`. Growing the table renumbers the
    /// positions already in `occ`.
    #[inline]
    fn visit(&mut self, k: u32, id: u32, occ: &mut Vec<u32>) {
        let mask = self.entries.len() - 1;
        let mut i = self.home(k);
        loop {
            let e = self.entries[i];
            if e == EMPTY_ENTRY {
                self.entries[i] = (u64::from(k) << 32) | u64::from(id);
                occ.push(i as u32);
                self.len += 1;
                if self.len * 2 > self.entries.len() {
                    self.grow(occ);
                }
                return;
            }
            if (e >> 32) as u32 == k {
                if e as u32 != id {
                    self.entries[i] = (u64::from(k) << 32) | u64::from(id);
                    occ.push(i as u32);
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self, occ: &mut [u32]) {
        let old = std::mem::take(&mut self.entries);
        self.entries = vec![EMPTY_ENTRY; old.len() * 2];
        self.shift -= 1;
        let mask = self.entries.len() - 1;
        let mut moved = vec![0u32; old.len()];
        for (p, &e) in old.iter().enumerate() {
            if e == EMPTY_ENTRY {
                continue;
            }
            let mut i = self.home((e >> 32) as u32);
            while self.entries[i] != EMPTY_ENTRY {
                i = (i + 1) & mask;
            }
            self.entries[i] = e;
            moved[p] = i as u32;
        }
        for o in occ {
            *o = moved[*o as usize];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_texts_share_an_id_and_ids_are_dense_in_first_seen_order() {
        let mut b = IndexBuilder::new();
        assert_eq!(b.add("beta"), TextId(0));
        assert_eq!(b.add("alpha"), TextId(1));
        assert_eq!(b.add("beta"), TextId(0));
        assert_eq!(b.add(""), TextId(2));
        assert_eq!(b.add(""), TextId(2));
        assert_eq!((b.len(), b.added()), (3, 5));
    }

    #[test]
    fn hash_collisions_are_resolved_by_comparing_texts() {
        let mut b = IndexBuilder::new();
        let a = b.add("first");
        // Force a collision: file a different text under the same hash.
        let h = hash(b"second");
        b.by_hash.insert(h, a.0);
        let s = b.add("second");
        assert_ne!(s, a);
        assert_eq!(b.add("second"), s);
        assert_eq!(b.add("first"), a);
        assert_eq!(b.collisions.get(&h).map(Vec::len), Some(1));
    }

    #[test]
    fn chunk_ranges_cover_every_id_once_in_order() {
        let ends: Vec<usize> = (1..=10_000).map(|i| i * 300).collect();
        let ranges = chunk_ranges(&ends, 2);
        assert!(ranges.len() > 1);
        assert_eq!(ranges.first().map(|r| r.0), Some(0));
        assert_eq!(ranges.last().map(|r| r.1), Some(ends.len()));
        for w in ranges.windows(2) {
            assert_eq!(w[0].1, w[1].0);
        }
        assert!(chunk_ranges(&[], 2).is_empty());
    }

    #[test]
    fn trigram_table_records_first_occurrences_and_renumbers_on_growth() {
        let mut t = TrigramTable::new();
        let mut occ = Vec::new();
        // Text 0 has keys 0..10_000 (times 31), each twice: recorded once each.
        for k in 0..10_000u32 {
            t.visit(k * 31, 0, &mut occ);
            t.visit(k * 31, 0, &mut occ);
        }
        assert_eq!(occ.len(), 10_000);
        assert!(t.entries.len() >= 20_000, "the table grew");
        // Every recorded position holds its key, in insertion order.
        for (k, &p) in occ.iter().enumerate() {
            assert_eq!((t.entries[p as usize] >> 32) as u32, k as u32 * 31);
        }
        // Text 1 sees a known key: a new occurrence at the same position.
        t.visit(31 * 5, 1, &mut occ);
        assert_eq!(occ.len(), 10_001);
        assert_eq!(occ[10_000], occ[5]);
    }
}
