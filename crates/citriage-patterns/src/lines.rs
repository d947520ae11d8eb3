//! Line splitting and line cleaning over raw log bytes.
//!
//! Owns the one line convention used everywhere in this crate: `\r\n`, a lone `\r` and a
//! lone `\n` each end one line (the convention of Java's `BufferedReader.readLine`, which
//! CiDiff ground truth uses; Jenkins logs with curl progress bars depend on it). Lines are
//! numbered from 1. A final line without a terminator counts; an empty input has no lines.
//!
//! Everything works on bytes (callers may hand in a memory map), decodes lossily, strips
//! ANSI escape sequences for matching, and caps the text used for matching while keeping the
//! true byte offsets and lengths so evidence can still point at the exact bytes.

use std::borrow::Cow;
use std::io::{self, BufRead};

/// Default cap (bytes) on the part of a line used for matching and display.
pub const DEFAULT_MATCH_CAP: usize = 4096;

/// One line of a byte buffer: its 1-based number and its byte range (terminator excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    /// 1-based line number.
    pub number: usize,
    /// Byte offset of the first byte of the line.
    pub start: usize,
    /// Byte offset one past the last byte of the line (terminator excluded).
    pub end: usize,
}

impl LineSpan {
    /// Length of the line in bytes, terminator excluded.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True when the line has no bytes.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// The line's bytes inside `data` (the buffer it was split from).
    pub fn bytes<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        &data[self.start..self.end]
    }
}

/// Iterator over the lines of a byte buffer (see the module docs for the convention).
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    data: &'a [u8],
    pos: usize,
    number: usize,
}

/// Split `data` into lines; `\r\n`, lone `\r` and `\n` each end a line.
pub fn lines(data: &[u8]) -> Lines<'_> {
    Lines { data, pos: 0, number: 0 }
}

impl Iterator for Lines<'_> {
    type Item = LineSpan;

    fn next(&mut self) -> Option<LineSpan> {
        if self.pos >= self.data.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.data[start..];
        self.number += 1;
        match memchr::memchr2(b'\n', b'\r', rest) {
            Some(i) => {
                let end = start + i;
                let mut next = end + 1;
                if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') {
                    next += 1;
                }
                self.pos = next;
                Some(LineSpan { number: self.number, start, end })
            }
            None => {
                self.pos = self.data.len();
                Some(LineSpan { number: self.number, start, end: self.data.len() })
            }
        }
    }
}

/// All line spans of `data`.
pub fn split_lines(data: &[u8]) -> Vec<LineSpan> {
    lines(data).collect()
}

/// Number of lines in `data` under the crate's convention.
pub fn count_lines(data: &[u8]) -> usize {
    let mut n = 0usize;
    let mut i = 0usize;
    while i < data.len() {
        match memchr::memchr2(b'\n', b'\r', &data[i..]) {
            Some(j) => {
                let at = i + j;
                n += 1;
                i = at + 1;
                if data[at] == b'\r' && data.get(at + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            None => {
                n += 1;
                break;
            }
        }
    }
    n
}

/// Remove ANSI/VT100 escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \`, and
/// two-byte `ESC x`), plus bare SGR remnants like `[0;31m` whose ESC byte was lost upstream.
/// Returns the input unchanged (borrowed) when there is nothing to strip.
pub fn strip_ansi(input: &[u8]) -> Cow<'_, [u8]> {
    let has_esc = memchr::memchr(0x1b, input).is_some();
    let has_bare = !has_esc && has_bare_sgr(input);
    if !has_esc && !has_bare {
        return Cow::Borrowed(input);
    }
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0usize;
    while i < input.len() {
        let b = input[i];
        if b == 0x1b {
            i += 1;
            match input.get(i) {
                Some(b'[') => {
                    i += 1;
                    // parameter and intermediate bytes, then one final byte 0x40..=0x7e
                    while i < input.len() && !(0x40..=0x7e).contains(&input[i]) {
                        i += 1;
                    }
                    i += 1;
                }
                Some(b']') => {
                    i += 1;
                    while i < input.len() {
                        if input[i] == 0x07 {
                            i += 1;
                            break;
                        }
                        if input[i] == 0x1b && input.get(i + 1) == Some(&b'\\') {
                            i += 2;
                            break;
                        }
                        i += 1;
                    }
                }
                Some(_) => i += 1,
                None => {}
            }
            continue;
        }
        if b == b'[' {
            if let Some(len) = bare_sgr_len(&input[i..]) {
                i += len;
                continue;
            }
        }
        out.push(b);
        i += 1;
    }
    Cow::Owned(out)
}

fn has_bare_sgr(input: &[u8]) -> bool {
    memchr::memchr_iter(b'[', input).any(|i| bare_sgr_len(&input[i..]).is_some())
}

/// Length of a bare SGR remnant `[` digits (`;` digits)* `m` at the start of `s` (at least
/// one digit, at most 3 per group), e.g. `[0;31m` or `[1m`.
fn bare_sgr_len(s: &[u8]) -> Option<usize> {
    let mut i = 1usize;
    let mut groups = 0;
    loop {
        let start = i;
        while i < s.len() && s[i].is_ascii_digit() && i - start < 3 {
            i += 1;
        }
        if i == start {
            return None;
        }
        groups += 1;
        match s.get(i) {
            Some(b';') if groups < 8 => i += 1,
            Some(b'm') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Decode bytes lossily to UTF-8 text.
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Text of a line for matching and display: ANSI stripped, at most `cap` bytes of input
/// considered, lossy UTF-8, NUL and other C0 control bytes (except tab) replaced by a space,
/// trailing whitespace trimmed.
pub fn clean_line(bytes: &[u8], cap: usize) -> String {
    let capped = &bytes[..bytes.len().min(cap)];
    let stripped = strip_ansi(capped);
    let text = String::from_utf8_lossy(&stripped);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c as u32) < 0x20 && c != '\t' || c == '\u{7f}' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out
}

/// Share of bytes in `bytes` that look binary (NUL, other C0 controls except tab/ESC, or
/// invalid UTF-8 sequences), in 0..=1.
pub fn binary_ratio(bytes: &[u8]) -> f32 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut bad = 0usize;
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                bad += s.bytes().filter(|&b| b < 0x20 && b != b'\t' && b != 0x1b).count();
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                bad += rest[..good].iter().filter(|&&b| b < 0x20 && b != b'\t' && b != 0x1b).count();
                let skip = e.error_len().unwrap_or(rest.len() - good).max(1);
                bad += skip;
                rest = &rest[(good + skip).min(rest.len())..];
                if rest.is_empty() {
                    break;
                }
            }
        }
    }
    bad as f32 / bytes.len() as f32
}

/// One line produced by [`StreamLines`]: number, true offset and length, and at most `cap`
/// leading bytes of its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamLine {
    /// 1-based line number.
    pub number: usize,
    /// Byte offset of the line's first byte in the stream.
    pub offset: u64,
    /// Full length of the line in bytes (terminator excluded), even when `head` is capped.
    pub len: u64,
    /// The first `min(len, cap)` bytes of the line.
    pub head: Vec<u8>,
}

/// Streaming line splitter over any `BufRead` with bounded memory: lines longer than the cap
/// are counted in full but only their head is kept. Same line convention as [`lines`].
pub struct StreamLines<R> {
    reader: R,
    cap: usize,
    number: usize,
    offset: u64,
    skip_lf: bool,
    done: bool,
}

impl<R: BufRead> StreamLines<R> {
    /// Wrap `reader`; keep at most `cap` bytes of each line.
    pub fn new(reader: R, cap: usize) -> Self {
        StreamLines { reader, cap, number: 0, offset: 0, skip_lf: false, done: false }
    }

    /// Read the next line into `line` (reusing its buffer). Returns `Ok(false)` at the end.
    pub fn next_into(&mut self, line: &mut StreamLine) -> io::Result<bool> {
        if self.done {
            return Ok(false);
        }
        line.head.clear();
        let mut len: u64 = 0;
        let mut started = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                self.done = true;
                if started {
                    self.number += 1;
                    line.number = self.number;
                    line.offset = self.offset;
                    line.len = len;
                    self.offset += len;
                    return Ok(true);
                }
                return Ok(false);
            }
            let mut consumed = 0usize;
            if self.skip_lf {
                self.skip_lf = false;
                if buf[0] == b'\n' {
                    consumed = 1;
                    self.offset += 1;
                }
            }
            let rest = &buf[consumed..];
            if rest.is_empty() {
                self.reader.consume(consumed);
                continue;
            }
            started = true;
            match memchr::memchr2(b'\n', b'\r', rest) {
                Some(i) => {
                    let room = self.cap.saturating_sub(line.head.len());
                    line.head.extend_from_slice(&rest[..i.min(room)]);
                    len += i as u64;
                    let term = rest[i];
                    let mut term_len = 1u64;
                    let mut used = consumed + i + 1;
                    if term == b'\r' {
                        if i + 1 < rest.len() {
                            if rest[i + 1] == b'\n' {
                                used += 1;
                                term_len = 2;
                            }
                        } else {
                            self.skip_lf = true;
                        }
                    }
                    self.reader.consume(used);
                    self.number += 1;
                    line.number = self.number;
                    line.offset = self.offset;
                    line.len = len;
                    self.offset += len + term_len;
                    return Ok(true);
                }
                None => {
                    let room = self.cap.saturating_sub(line.head.len());
                    line.head.extend_from_slice(&rest[..rest.len().min(room)]);
                    len += rest.len() as u64;
                    let used = consumed + rest.len();
                    self.reader.consume(used);
                }
            }
        }
    }
}

impl<R: BufRead> Iterator for StreamLines<R> {
    type Item = io::Result<StreamLine>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut line = StreamLine { number: 0, offset: 0, len: 0, head: Vec::new() };
        match self.next_into(&mut line) {
            Ok(true) => Some(Ok(line)),
            Ok(false) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(data: &[u8]) -> Vec<&[u8]> {
        lines(data).map(|l| l.bytes(data)).collect()
    }

    #[test]
    fn splits_all_terminators() {
        let d = b"a\r\nb\rc\nd";
        assert_eq!(texts(d), vec![&b"a"[..], b"b", b"c", b"d"]);
        assert_eq!(count_lines(d), 4);
        assert_eq!(texts(b"x\n"), vec![&b"x"[..]]);
        assert_eq!(texts(b"\n\n"), vec![&b""[..], b""]);
        assert_eq!(texts(b"\r\r\n"), vec![&b""[..], b""]);
        assert!(texts(b"").is_empty());
        assert_eq!(count_lines(b"\r\r\n"), 2);
    }

    #[test]
    fn stream_matches_slice_splitter_at_every_buffer_size() {
        let d = b"one\r\ntwo\rthree\n\r\nfour\r";
        let want: Vec<(usize, Vec<u8>)> = lines(d).map(|l| (l.start, l.bytes(d).to_vec())).collect();
        for cap in 1..8 {
            let r = std::io::BufReader::with_capacity(cap, &d[..]);
            let got: Vec<(usize, Vec<u8>)> = StreamLines::new(r, 100)
                .map(|l| {
                    let l = l.unwrap();
                    (l.offset as usize, l.head)
                })
                .collect();
            assert_eq!(got, want, "buffer {cap}");
        }
    }

    #[test]
    fn ansi_is_stripped() {
        assert_eq!(&*strip_ansi(b"\x1b[0;31mERROR\x1b[0m: x"), &b"ERROR: x"[..]);
        assert_eq!(&*strip_ansi(b"[0;31mFAIL[0m"), &b"FAIL"[..]);
        assert_eq!(&*strip_ansi(b"[sig-node] x"), &b"[sig-node] x"[..]);
        assert_eq!(&*strip_ansi(b"\x1b]0;title\x07ok"), &b"ok"[..]);
    }
}
