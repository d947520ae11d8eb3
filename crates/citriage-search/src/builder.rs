//! Building a [`TextIndex`]: `IndexBuilder` deduplicates texts as they are added (one
//! copy of each distinct text, compressed a block at a time, dense ids in first-seen
//! order) and `finish` builds the trigram posting lists.
//!
//! `finish` reads the texts twice (each block decompressed once per pass). The first pass gives each distinct lowercased
//! trigram a dense number (a small open-addressing table) and adds up, per trigram, the
//! texts containing it and the bytes their delta + varint encoding takes; the lists are
//! then laid out in key order in one buffer of exactly the total size, and the second
//! pass writes each id at its list's cursor. The only memory beyond the finished index
//! is the table and three numbers per trigram.

use crate::index::TextIndex;
use crate::texts::{TextId, Texts, TextsBuilder};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Collects distinct texts; [`IndexBuilder::finish`] turns them into a [`TextIndex`].
#[derive(Default)]
pub struct IndexBuilder {
    /// The distinct texts, compressed a block at a time as they come.
    texts: TextsBuilder,
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
            if self.texts.is(id, text) {
                return TextId(id);
            }
            let known = self.collisions.get(&h).and_then(|ids| ids.iter().copied().find(|&id| self.texts.is(id, text)));
            if let Some(id) = known {
                return TextId(id);
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
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.len() == 0
    }

    /// Number of `add` calls so far, duplicates included.
    pub fn added(&self) -> u64 {
        self.added
    }

    /// Builds the index over the distinct texts: one pass counts each trigram's texts
    /// and encoded bytes, a second writes every list in place in one buffer of exactly
    /// that size (no second copy of the lists is ever held).
    pub fn finish(self) -> TextIndex {
        let IndexBuilder { texts, by_hash, collisions, .. } = self;
        drop((by_hash, collisions));
        let texts = texts.finish();
        let (keys, post_ends, counts, postings) = posting_lists(&texts);
        TextIndex::from_parts(texts, keys, post_ends, counts, postings)
    }

    fn push(&mut self, text: &str) -> u32 {
        let id = u32::try_from(self.texts.len()).ok().filter(|&id| id < u32::MAX);
        let Some(id) = id else { panic!("citriage-search: more than {} distinct texts", u32::MAX - 1) };
        self.texts.push(text);
        id
    }
}

impl std::fmt::Debug for IndexBuilder {
    /// Sizes only (the texts can be gigabytes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexBuilder")
            .field("texts", &self.len())
            .field("text_bytes", &self.texts.raw_bytes())
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

/// Packs three bytes (already lowercased) into a key.
fn key(a: u8, b: u8, c: u8) -> u32 {
    (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c)
}

/// Calls `visit(id, key)` for every trigram of every text (ASCII-lowercased), in
/// ascending id order; a trigram repeated within a text is visited each time.
fn each_trigram(texts: &Texts, mut visit: impl FnMut(u32, u32)) {
    texts.for_each(|id, t| {
        let t = t.as_bytes();
        if t.len() < 3 {
            return;
        }
        let mut k = key(0, t[0].to_ascii_lowercase(), t[1].to_ascii_lowercase());
        for &b in &t[2..] {
            k = ((k << 8) | u32::from(b.to_ascii_lowercase())) & 0x00FF_FFFF;
            visit(id, k);
        }
    });
}

/// Bytes `v` takes as LEB128.
fn varint_len(v: u32) -> usize {
    match v {
        0..=0x7F => 1,
        0x80..=0x3FFF => 2,
        0x4000..=0x1F_FFFF => 3,
        0x20_0000..=0x0FFF_FFFF => 4,
        _ => 5,
    }
}

/// Writes `v` as LEB128 at `buf[at..]`; returns the bytes written.
fn put_varint(buf: &mut [u8], at: usize, mut v: u32) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        buf[at + n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[at + n] = v as u8;
    n + 1
}

/// The posting lists: sorted keys, each list's end in the buffer, its count, the buffer.
type Lists = (Vec<u32>, Vec<usize>, Vec<u32>, Vec<u8>);

/// The posting lists of the texts, in two passes.
fn posting_lists(texts: &Texts) -> Lists {
    let mut table = KeyTable::new();
    // Per dense trigram number: the last text seen with it plus one (0: none yet), its
    // texts, and its encoded bytes (then its list's cursor).
    let mut last: Vec<u32> = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    let mut bytes: Vec<usize> = Vec::new();
    each_trigram(texts, |id, k| {
        let d = table.number(k) as usize;
        if d == last.len() {
            last.push(0);
            counts.push(0);
            bytes.push(0);
        }
        if last[d] == id + 1 {
            return;
        }
        bytes[d] += varint_len(id - last[d].saturating_sub(1));
        counts[d] += 1;
        last[d] = id + 1;
    });
    // Lists in key order; each list's first id is encoded absolute (as a delta from 0).
    let mut order: Vec<(u32, u32)> = table.keys().collect();
    order.sort_unstable();
    let mut keys = Vec::with_capacity(order.len());
    let mut post_ends = Vec::with_capacity(order.len());
    let mut sorted_counts = Vec::with_capacity(order.len());
    let mut at = 0usize;
    for &(k, d) in &order {
        let d = d as usize;
        keys.push(k);
        sorted_counts.push(counts[d]);
        let len = bytes[d];
        bytes[d] = at;
        at += len;
        post_ends.push(at);
    }
    drop((order, counts));
    let mut postings = vec![0u8; at];
    last.iter_mut().for_each(|l| *l = 0);
    each_trigram(texts, |id, k| {
        // The same texts as the first pass: every key has its number.
        let Some(d) = table.get(k).map(|d| d as usize) else { return };
        if last[d] == id + 1 {
            return;
        }
        bytes[d] += put_varint(&mut postings, bytes[d], id - last[d].saturating_sub(1));
        last[d] = id + 1;
    });
    (keys, post_ends, sorted_counts, postings)
}

/// Open-addressing table from a trigram key to its dense number (first-seen order);
/// numbers stay the same when the table grows.
struct KeyTable {
    /// Key in the high 32 bits, number in the low; `EMPTY_ENTRY` when free.
    entries: Vec<u64>,
    len: usize,
    shift: u32,
}

const EMPTY_ENTRY: u64 = u64::MAX;

impl KeyTable {
    fn new() -> KeyTable {
        let bits = 12;
        KeyTable { entries: vec![EMPTY_ENTRY; 1 << bits], len: 0, shift: 32 - bits }
    }

    fn home(&self, k: u32) -> usize {
        (k.wrapping_mul(0x9E37_79B1) >> self.shift) as usize
    }

    /// The number of key `k`, given the next one when `k` is new.
    #[inline]
    fn number(&mut self, k: u32) -> u32 {
        let mask = self.entries.len() - 1;
        let mut i = self.home(k);
        loop {
            let e = self.entries[i];
            if e == EMPTY_ENTRY {
                let d = self.len as u32;
                self.entries[i] = (u64::from(k) << 32) | u64::from(d);
                self.len += 1;
                if self.len * 2 > self.entries.len() {
                    self.grow();
                }
                return d;
            }
            if (e >> 32) as u32 == k {
                return e as u32;
            }
            i = (i + 1) & mask;
        }
    }

    /// The number of key `k`, if it has one.
    #[inline]
    fn get(&self, k: u32) -> Option<u32> {
        let mask = self.entries.len() - 1;
        let mut i = self.home(k);
        loop {
            let e = self.entries[i];
            if e == EMPTY_ENTRY {
                return None;
            }
            if (e >> 32) as u32 == k {
                return Some(e as u32);
            }
            i = (i + 1) & mask;
        }
    }

    /// Every (key, number).
    fn keys(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.entries.iter().filter(|&&e| e != EMPTY_ENTRY).map(|&e| ((e >> 32) as u32, e as u32))
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.entries);
        self.entries = vec![EMPTY_ENTRY; old.len() * 2];
        self.shift -= 1;
        let mask = self.entries.len() - 1;
        for e in old.into_iter().filter(|&e| e != EMPTY_ENTRY) {
            let mut i = self.home((e >> 32) as u32);
            while self.entries[i] != EMPTY_ENTRY {
                i = (i + 1) & mask;
            }
            self.entries[i] = e;
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
    fn key_table_numbers_stay_when_it_grows() {
        let mut t = KeyTable::new();
        for k in 0..10_000u32 {
            assert_eq!(t.number(k * 31), k);
            assert_eq!(t.number(k * 31), k, "a known key keeps its number");
        }
        assert!(t.entries.len() >= 20_000, "the table grew");
        for k in 0..10_000u32 {
            assert_eq!(t.get(k * 31), Some(k));
        }
        assert_eq!(t.get(7), None, "a key never numbered");
        let mut all: Vec<(u32, u32)> = t.keys().collect();
        all.sort_unstable();
        assert_eq!(all, (0..10_000u32).map(|k| (k * 31, k)).collect::<Vec<_>>());
    }

    #[test]
    fn varints_take_the_bytes_they_are_counted_for() {
        for v in [0u32, 1, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455, 268_435_456, u32::MAX] {
            let mut want = Vec::new();
            crate::index::write_varint(&mut want, v);
            assert_eq!(varint_len(v), want.len(), "{v}");
            let mut buf = vec![0u8; 8];
            assert_eq!(put_varint(&mut buf, 2, v), want.len(), "{v}");
            assert_eq!(&buf[2..2 + want.len()], &want[..], "{v}");
        }
    }
}
