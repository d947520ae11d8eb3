//! The distinct texts, held compressed: consecutive texts are packed into blocks of
//! about [`BLOCK_BYTES`] and each block is LZ4-compressed on its own, so reading one
//! text decompresses one block. CI failure texts repeat their phrases from text to text
//! (the same assertion with another pod name, address or time), so a block shrinks to a
//! fraction of its size; a text is never split across blocks (a text longer than a
//! block is a block of its own).
//!
//! [`TextsBuilder`] seals a block as soon as it is full, so the uncompressed texts held
//! at any time are one block's. Readers ([`TextReader`]) keep the block they last
//! decompressed: texts read in ascending id order decompress each block once.

use std::fmt;

/// A distinct text's id: dense, in first-seen order of [`crate::IndexBuilder::add`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TextId(pub(crate) u32);

impl TextId {
    /// The id with this number (it belongs to an index when below its `len()`).
    pub fn from_u32(v: u32) -> TextId {
        TextId(v)
    }

    pub fn as_u32(self) -> u32 {
        self.0
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for TextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Uncompressed bytes after which a block is sealed.
pub(crate) const BLOCK_BYTES: usize = 32 * 1024;

/// One compressed block.
#[derive(Debug, Clone, Copy)]
struct Block {
    /// Where its compressed bytes end in `Texts::packed`.
    packed_end: usize,
    /// Its first text's id.
    first: u32,
    /// Its uncompressed length.
    raw_len: u32,
}

/// Compressed distinct texts, addressed by dense id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Texts {
    packed: Vec<u8>,
    blocks: Vec<Block>,
    /// `ends[i]`: where text `i` ends in its block; it starts where text `i - 1` ends,
    /// or at 0 when it is its block's first.
    ends: Vec<u32>,
    raw_bytes: usize,
}

impl Texts {
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Bytes of the texts uncompressed.
    pub(crate) fn raw_bytes(&self) -> usize {
        self.raw_bytes
    }

    /// Bytes of the compressed blocks.
    pub(crate) fn packed_bytes(&self) -> usize {
        self.packed.len()
    }

    /// Heap bytes held (allocated capacity).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.packed.capacity()
            + self.blocks.capacity() * std::mem::size_of::<Block>()
            + self.ends.capacity() * std::mem::size_of::<u32>()
    }

    /// The block holding text `id` (which must be below `len()`).
    fn block_of(&self, id: u32) -> usize {
        self.blocks.partition_point(|b| b.first <= id).saturating_sub(1)
    }

    /// Text `id`'s byte range in its block.
    fn range_in_block(&self, id: u32, block: usize) -> std::ops::Range<usize> {
        let i = id as usize;
        let start = if id == self.blocks[block].first { 0 } else { self.ends[i - 1] as usize };
        start..self.ends[i] as usize
    }

    /// Decompresses block `b` into `out` (replacing its contents); false when the
    /// block does not decompress to valid UTF-8 of its recorded length, which only a
    /// bug could cause (every block is written here from `&str`s).
    fn unpack(&self, b: usize, out: &mut String) -> bool {
        let block = self.blocks[b];
        if block.raw_len == 0 {
            // Only empty texts: nothing was compressed.
            out.clear();
            return true;
        }
        let start = if b == 0 { 0 } else { self.blocks[b - 1].packed_end };
        let mut bytes = std::mem::take(out).into_bytes();
        bytes.clear();
        bytes.resize(block.raw_len as usize, 0);
        match lz4_flex::block::decompress_into(&self.packed[start..block.packed_end], &mut bytes) {
            Ok(n) if n == bytes.len() => {}
            _ => return false,
        }
        match String::from_utf8(bytes) {
            Ok(s) => {
                *out = s;
                true
            }
            Err(_) => false,
        }
    }

    /// Every text with its id, ascending, each block decompressed once.
    pub(crate) fn for_each(&self, mut visit: impl FnMut(u32, &str)) {
        let mut buf = String::new();
        for b in 0..self.blocks.len() {
            if !self.unpack(b, &mut buf) {
                continue;
            }
            let first = self.blocks[b].first;
            let end = self.blocks.get(b + 1).map_or(self.len() as u32, |n| n.first);
            let mut start = 0usize;
            for id in first..end {
                let e = self.ends[id as usize] as usize;
                visit(id, &buf[start..e]);
                start = e;
            }
        }
    }
}

/// Reads texts by id, keeping the last block it decompressed.
pub struct TextReader<'a> {
    texts: &'a Texts,
    block: Option<usize>,
    buf: String,
}

impl<'a> TextReader<'a> {
    pub(crate) fn new(texts: &'a Texts) -> TextReader<'a> {
        TextReader { texts, block: None, buf: String::new() }
    }

    /// The text with id `id`, if it belongs to the index.
    pub fn get(&mut self, id: TextId) -> Option<&str> {
        let id = id.as_u32();
        if id as usize >= self.texts.len() {
            return None;
        }
        let b = self.texts.block_of(id);
        if self.block != Some(b) {
            self.block = None;
            if !self.texts.unpack(b, &mut self.buf) {
                return None;
            }
            self.block = Some(b);
        }
        self.buf.get(self.texts.range_in_block(id, b))
    }
}

/// Collects texts into sealed, compressed blocks.
#[derive(Debug, Default)]
pub(crate) struct TextsBuilder {
    done: Texts,
    /// The block being filled: its texts, uncompressed.
    open: String,
    /// Whether the last block is being filled (it may hold only empty texts).
    filling: bool,
    /// A sealed block decompressed to compare a text with (`add`'s duplicate check).
    cached: Option<usize>,
    cache: String,
}

impl TextsBuilder {
    pub(crate) fn len(&self) -> usize {
        self.done.len()
    }

    pub(crate) fn raw_bytes(&self) -> usize {
        self.done.raw_bytes
    }

    /// Appends `text` as the next id (the caller checks the id limit).
    ///
    /// # Panics
    /// When `text` is 4 GiB or longer.
    pub(crate) fn push(&mut self, text: &str) {
        if !self.filling {
            self.filling = true;
            let first = self.done.len() as u32;
            self.done.blocks.push(Block { packed_end: self.done.packed.len(), first, raw_len: 0 });
        }
        self.open.push_str(text);
        let Ok(end) = u32::try_from(self.open.len()) else {
            panic!("citriage-search: a text of {} bytes is over the 4 GiB limit", text.len())
        };
        self.done.ends.push(end);
        self.done.raw_bytes += text.len();
        if self.open.len() >= BLOCK_BYTES {
            self.seal();
        }
    }

    /// Compresses the open block.
    fn seal(&mut self) {
        if !self.filling {
            return;
        }
        self.filling = false;
        if self.open.is_empty() {
            return;
        }
        let packed = lz4_flex::block::compress(self.open.as_bytes());
        self.done.packed.extend_from_slice(&packed);
        if let Some(last) = self.done.blocks.last_mut() {
            last.packed_end = self.done.packed.len();
            last.raw_len = self.open.len() as u32;
        }
        self.open.clear();
    }

    /// Whether text `id` is `text`.
    pub(crate) fn is(&mut self, id: u32, text: &str) -> bool {
        let b = self.done.block_of(id);
        let range = self.done.range_in_block(id, b);
        if b + 1 == self.done.blocks.len() && self.filling {
            return self.open.get(range) == Some(text);
        }
        if range.len() != text.len() {
            return false;
        }
        if self.cached != Some(b) {
            self.cached = None;
            if !self.done.unpack(b, &mut self.cache) {
                return false;
            }
            self.cached = Some(b);
        }
        self.cache.get(range) == Some(text)
    }

    pub(crate) fn finish(mut self) -> Texts {
        self.seal();
        let mut t = self.done;
        t.packed.shrink_to_fit();
        t.blocks.shrink_to_fit();
        t.ends.shrink_to_fit();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(texts: &[String]) -> Texts {
        let mut b = TextsBuilder::default();
        for t in texts {
            b.push(t);
        }
        b.finish()
    }

    #[test]
    fn texts_read_back_across_blocks_in_any_order() {
        // Texts of many sizes, some longer than a block, some empty.
        let texts: Vec<String> = (0..3_000u32)
            .map(|i| match i % 7 {
                0 => String::new(),
                1 => "é".repeat((i as usize * 37) % 900),
                2 if i % 500 == 2 => "x".repeat(BLOCK_BYTES * 2 + i as usize),
                _ => format!("pod web-{i} failed: dial tcp 10.0.{}.{}:6443: i/o timeout", i % 255, i % 7),
            })
            .collect();
        let t = build(&texts);
        assert_eq!(t.len(), texts.len());
        assert_eq!(t.raw_bytes(), texts.iter().map(String::len).sum::<usize>());
        assert!(t.blocks.len() > 10, "{} blocks", t.blocks.len());
        assert!(t.packed_bytes() * 3 < t.raw_bytes(), "{} of {}", t.packed_bytes(), t.raw_bytes());
        let mut seen = Vec::new();
        t.for_each(|id, s| seen.push((id, s.to_string())));
        assert_eq!(seen.len(), texts.len());
        for (id, s) in &seen {
            assert_eq!(s, &texts[*id as usize]);
        }
        let mut r = TextReader::new(&t);
        for id in (0..texts.len() as u32).rev().step_by(3).chain((0..texts.len() as u32).step_by(11)) {
            assert_eq!(r.get(TextId(id)), Some(texts[id as usize].as_str()));
        }
        assert_eq!(r.get(TextId(texts.len() as u32)), None);
    }

    #[test]
    fn the_builder_compares_with_sealed_and_open_texts() {
        let mut b = TextsBuilder::default();
        let texts: Vec<String> = (0..2_000).map(|i| format!("failure number {i} of the suite")).collect();
        for t in &texts {
            b.push(t);
        }
        assert!(b.done.blocks.len() > 1);
        for (i, t) in texts.iter().enumerate() {
            assert!(b.is(i as u32, t), "text {i}");
            assert!(!b.is(i as u32, "failure number"), "text {i}");
        }
        let empty = build(&[]);
        assert_eq!(empty.len(), 0);
        assert_eq!(TextReader::new(&empty).get(TextId(0)), None);
        let mut n = 0;
        empty.for_each(|_, _| n += 1);
        assert_eq!(n, 0);
    }
}
