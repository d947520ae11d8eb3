//! The built index: distinct texts stored once, compressed in blocks ([`crate::texts`]),
//! and for each trigram of their ASCII-lowercased bytes the ascending list of ids of
//! texts containing it, delta + varint (LEB128) encoded into one buffer addressed by
//! offsets.

use crate::query::Trigram;
use crate::texts::{TextId, TextReader, Texts};
use std::fmt;

/// An immutable trigram index over distinct texts. Build it with
/// [`crate::IndexBuilder`]; search it with [`TextIndex::search`].
#[derive(Clone, Default)]
pub struct TextIndex {
    texts: Texts,
    /// Distinct trigrams (three lowercased bytes packed big-endian), ascending.
    keys: Vec<u32>,
    /// `post_ends[k]` is where key `k`'s list ends in `postings`.
    post_ends: Vec<usize>,
    /// Number of ids in key `k`'s list.
    counts: Vec<u32>,
    postings: Vec<u8>,
}

impl TextIndex {
    pub(crate) fn from_parts(
        texts: Texts,
        keys: Vec<u32>,
        post_ends: Vec<usize>,
        counts: Vec<u32>,
        postings: Vec<u8>,
    ) -> TextIndex {
        TextIndex { texts, keys, post_ends, counts, postings }
    }

    /// Number of distinct texts.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.len() == 0
    }

    /// The text with id `id`, if `id` belongs to this index (one block decompressed;
    /// to read many, use a [`TextIndex::reader`]).
    pub fn get(&self, id: TextId) -> Option<String> {
        self.reader().get(id).map(str::to_string)
    }

    /// A reader of texts by id that keeps the block it last decompressed: ids read in
    /// ascending order decompress each block once.
    pub fn reader(&self) -> TextReader<'_> {
        TextReader::new(&self.texts)
    }

    /// Calls `visit` with every text and its id, ascending.
    pub fn for_each_text(&self, mut visit: impl FnMut(TextId, &str)) {
        self.texts.for_each(|id, t| visit(TextId(id), t));
    }

    /// Number of distinct trigrams indexed.
    pub fn trigram_count(&self) -> usize {
        self.keys.len()
    }

    /// Number of (trigram, text) postings.
    pub fn posting_count(&self) -> u64 {
        self.counts.iter().map(|&c| u64::from(c)).sum()
    }

    /// Total bytes of the distinct texts, uncompressed.
    pub fn text_bytes(&self) -> usize {
        self.texts.raw_bytes()
    }

    /// Bytes the distinct texts take compressed.
    pub fn packed_text_bytes(&self) -> usize {
        self.texts.packed_bytes()
    }

    /// Bytes of the encoded posting lists alone.
    pub fn posting_bytes(&self) -> usize {
        self.postings.len()
    }

    /// Heap bytes held by the index: the compressed texts and their offsets, the
    /// trigram table and the posting lists (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.texts.heap_bytes()
            + self.keys.capacity() * size_of::<u32>()
            + self.post_ends.capacity() * size_of::<usize>()
            + self.counts.capacity() * size_of::<u32>()
            + self.postings.capacity()
    }

    /// Number of texts containing trigram `t` (ASCII case folded).
    pub fn trigram_frequency(&self, t: Trigram) -> u32 {
        self.lookup(t).map_or(0, |k| self.counts[k])
    }

    /// The ids of texts containing trigram `t` (ASCII case folded), ascending.
    pub fn postings(&self, t: Trigram) -> Postings<'_> {
        match self.lookup(t) {
            None => Postings { bytes: &[], pos: 0, left: 0, cur: 0 },
            Some(k) => {
                let start = if k == 0 { 0 } else { self.post_ends[k - 1] };
                Postings { bytes: &self.postings[start..self.post_ends[k]], pos: 0, left: self.counts[k], cur: 0 }
            }
        }
    }

    fn lookup(&self, t: Trigram) -> Option<usize> {
        let k = (u32::from(t[0].to_ascii_lowercase()) << 16)
            | (u32::from(t[1].to_ascii_lowercase()) << 8)
            | u32::from(t[2].to_ascii_lowercase());
        self.keys.binary_search(&k).ok()
    }
}

impl fmt::Debug for TextIndex {
    /// Sizes only (the texts can be gigabytes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TextIndex")
            .field("texts", &self.len())
            .field("text_bytes", &self.text_bytes())
            .field("packed_text_bytes", &self.packed_text_bytes())
            .field("trigrams", &self.trigram_count())
            .field("posting_bytes", &self.posting_bytes())
            .finish()
    }
}

/// An iterator over one posting list, decoding as it goes.
#[derive(Debug, Clone)]
pub struct Postings<'a> {
    bytes: &'a [u8],
    pos: usize,
    left: u32,
    cur: u32,
}

impl<'a> Postings<'a> {
    #[cfg(test)]
    pub(crate) fn new(bytes: &'a [u8], count: u32) -> Postings<'a> {
        Postings { bytes, pos: 0, left: count, cur: 0 }
    }

    /// Number of ids not yet returned.
    pub fn remaining(&self) -> u32 {
        self.left
    }
}

impl Iterator for Postings<'_> {
    type Item = TextId;

    #[inline]
    fn next(&mut self) -> Option<TextId> {
        if self.left == 0 {
            return None;
        }
        let (delta, n) = read_varint(self.bytes, self.pos);
        self.pos += n;
        self.left -= 1;
        self.cur += delta;
        Some(TextId(self.cur))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

/// Appends `v` as LEB128 (the builder writes in place; tests build lists with this).
#[cfg(test)]
pub(crate) fn write_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a LEB128 value at `pos`: the value and the bytes it took. The index writes
/// every buffer it reads, so the input is well formed.
#[inline]
pub(crate) fn read_varint(b: &[u8], pos: usize) -> (u32, usize) {
    let mut v: u32 = 0;
    let mut shift = 0;
    let mut n = 0;
    while let Some(&byte) = b.get(pos + n) {
        n += 1;
        v |= u32::from(byte & 0x7f) << shift;
        if byte < 0x80 || shift >= 28 {
            break;
        }
        shift += 7;
    }
    (v, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trips_boundaries() {
        let values = [0u32, 1, 127, 128, 255, 16_383, 16_384, 2_097_151, 2_097_152, u32::MAX - 1, u32::MAX];
        let mut buf = Vec::new();
        for &v in &values {
            write_varint(&mut buf, v);
        }
        let mut pos = 0;
        for &v in &values {
            let (got, n) = read_varint(&buf, pos);
            assert_eq!(got, v);
            pos += n;
        }
        assert_eq!(pos, buf.len());
        // One byte below 128, five at the top.
        let mut one = Vec::new();
        write_varint(&mut one, 127);
        assert_eq!(one.len(), 1);
        let mut five = Vec::new();
        write_varint(&mut five, u32::MAX);
        assert_eq!(five.len(), 5);
    }
}
