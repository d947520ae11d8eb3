//! Token classes for log template mining: which whitespace-separated tokens of a log line
//! are values (variables) rather than message words.
//!
//! The classes are generic, not tied to any log source:
//!
//! * **numbers and identifiers with digits**: any token holding an ASCII digit (integers,
//!   decimals, signed numbers, hex such as `0x1f` or `003a90fc`, ids such as `blk_-42` or
//!   `core.2275`, IPv4/IPv6/MAC addresses, UUIDs, versions, times, dates, host names with
//!   digits);
//! * **URLs** (`scheme://...`), **e-mail addresses** and **paths** (Unix, `~/`, `./`,
//!   Windows drive and UNC paths, any token with two or more `/`- or `\`-separated parts);
//! * **quoted identifiers**: a whole token in matching quotes (`'name'`, `"name"`,
//!   `` `name` ``);
//! * **date names**: month and weekday names next to another value (`Sat Jun 25 09:20:23`);
//! * **units** after a number (`5.2 KB`, `160 ms`, `12 %`): the pair is one value.
//!
//! `key=value` and `key:value` keep their key (`uid=<*>`, `vCores:<*>`), and punctuation
//! around a value is kept (`(<*>)`, `<*>,`). A run of adjacent values (`an14 an15 an16`,
//! a date and time, a list of ids) becomes one `<*>`, so lists of any length share one
//! template. Everything else is a word; whether a word position is constant or variable is
//! decided later from how many distinct words occur there (see [`crate::drain`]).

/// The wildcard written for a value.
pub const WILDCARD: &str = "<*>";

/// What a token (stripped of surrounding punctuation) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenClass {
    /// A message word (no class matched).
    Word,
    /// Holds a digit: numbers, hex, addresses, ids, versions, times, UUIDs.
    Numeric,
    /// `scheme://...`.
    Url,
    /// `user@host.domain`.
    Email,
    /// A file system path or any `a/b`, `a\b` token.
    Path,
    /// A whole token in matching quotes.
    Quoted,
}

const LEAD: &[u8] = b"([{<\"'`";

const B_DIGIT: u8 = 1;
const B_SLASH: u8 = 2;
const B_AT: u8 = 4;
const B_QUOTE: u8 = 8;
const B_PUNCT: u8 = 16;
const B_SPACE: u8 = 32;

/// Byte flags used to skip the class checks for plain words.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = b'0';
    while c <= b'9' {
        t[c as usize] = B_DIGIT;
        c += 1;
    }
    t[b'/' as usize] = B_SLASH;
    t[b'\\' as usize] = B_SLASH;
    t[b'@' as usize] = B_AT;
    t[b'\'' as usize] = B_QUOTE | B_PUNCT;
    t[b'"' as usize] = B_QUOTE | B_PUNCT;
    t[b'`' as usize] = B_QUOTE | B_PUNCT;
    let w = b" \t\n\r\x0c";
    let mut i = 0;
    while i < w.len() {
        t[w[i] as usize] = B_SPACE;
        i += 1;
    }
    let p = b"([{<)]}>,;:.!?";
    let mut i = 0;
    while i < p.len() {
        t[p[i] as usize] = B_PUNCT;
        i += 1;
    }
    t
};
const TRAIL: &[u8] = b")]}>\"'`,;:.!?";

/// Splits a token into (leading punctuation, core, trailing punctuation).
fn peel(tok: &str) -> (&str, &str, &str) {
    let b = tok.as_bytes();
    let mut s = 0;
    while s < b.len() && LEAD.contains(&b[s]) {
        s += 1;
    }
    let mut e = b.len();
    while e > s && TRAIL.contains(&b[e - 1]) {
        e -= 1;
    }
    (&tok[..s], &tok[s..e], &tok[e..])
}

/// Class of a token core (no surrounding punctuation).
pub fn classify_core(core: &str) -> TokenClass {
    let b = core.as_bytes();
    if b.is_empty() {
        return TokenClass::Word;
    }
    let mut digit = false;
    let mut slash = 0usize;
    let mut at = false;
    for &c in b {
        match c {
            b'0'..=b'9' => digit = true,
            b'/' | b'\\' => slash += 1,
            b'@' => at = true,
            _ => {}
        }
    }
    if slash > 0 && memchr::memmem::find(b, b"://").is_some() {
        return TokenClass::Url;
    }
    if digit {
        return TokenClass::Numeric;
    }
    if slash > 0 && is_path(b) {
        return TokenClass::Path;
    }
    if at && is_email(b) {
        return TokenClass::Email;
    }
    TokenClass::Word
}

fn is_path(b: &[u8]) -> bool {
    if b[0] == b'/' || b[0] == b'\\' || b.starts_with(b"~/") || b.starts_with(b"./") || b.starts_with(b"../") {
        return b.len() > 1;
    }
    if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/') {
        return true;
    }
    // two or more non-empty parts
    let parts = b.split(|&c| c == b'/' || c == b'\\').filter(|p| !p.is_empty()).count();
    parts >= 2
}

fn is_email(b: &[u8]) -> bool {
    let Some(i) = b.iter().position(|&c| c == b'@') else { return false };
    i > 0 && i + 1 < b.len() && b[i + 1..].contains(&b'.') && !b[i + 1..].contains(&b'@')
}

/// Month and weekday names (English, as printed by C, Java and syslog time formats):
/// capitalized (`Jun`, `Saturday`) or upper case (`JUN`).
pub fn is_date_name(core: &str) -> bool {
    let b = core.as_bytes();
    if b.len() < 3 || b.len() > 9 || !b[0].is_ascii_uppercase() {
        return false;
    }
    let rest_lower = b[1..].iter().all(u8::is_ascii_lowercase);
    let all_upper = b[1..].iter().all(u8::is_ascii_uppercase);
    if !rest_lower && !all_upper {
        return false;
    }
    let mut low = [0u8; 9];
    for (d, s) in low.iter_mut().zip(b) {
        *d = s.to_ascii_lowercase();
    }
    matches!(
        &low[..b.len()],
        b"jan"
            | b"feb"
            | b"mar"
            | b"apr"
            | b"may"
            | b"jun"
            | b"jul"
            | b"aug"
            | b"sep"
            | b"sept"
            | b"oct"
            | b"nov"
            | b"dec"
            | b"january"
            | b"february"
            | b"march"
            | b"april"
            | b"june"
            | b"july"
            | b"august"
            | b"september"
            | b"october"
            | b"november"
            | b"december"
            | b"mon"
            | b"tue"
            | b"wed"
            | b"thu"
            | b"fri"
            | b"sat"
            | b"sun"
            | b"monday"
            | b"tuesday"
            | b"wednesday"
            | b"thursday"
            | b"friday"
            | b"saturday"
            | b"sunday"
    )
}

/// A dotted name: letters, a `.`, letters (`chrome.exe`, `org.example.Main`, `rpc.statd`),
/// ignoring surrounding punctuation: file, host, package, class and property names.
pub fn is_dotted_name(tok: &str) -> bool {
    let (_, core, _) = peel(tok);
    let b = core.as_bytes();
    b.windows(3).any(|w| w[1] == b'.' && w[0].is_ascii_alphanumeric() && w[2].is_ascii_alphabetic())
}

/// Units that make one value with the number before them.
pub fn is_unit(core: &str) -> bool {
    core.len() <= 7
        && matches!(
            core,
            "B" | "KB"
                | "kB"
                | "MB"
                | "GB"
                | "TB"
                | "PB"
                | "KiB"
                | "MiB"
                | "GiB"
                | "TiB"
                | "K"
                | "M"
                | "G"
                | "bytes"
                | "ns"
                | "us"
                | "µs"
                | "ms"
                | "s"
                | "sec"
                | "secs"
                | "seconds"
                | "m"
                | "min"
                | "mins"
                | "minutes"
                | "h"
                | "hr"
                | "hrs"
                | "hours"
                | "d"
                | "days"
                | "%"
                | "B/s"
                | "KB/s"
                | "kB/s"
                | "MB/s"
                | "GB/s"
                | "b/s"
                | "Kb/s"
                | "Mb/s"
                | "Gb/s"
                | "bps"
                | "Kbps"
                | "Mbps"
                | "Gbps"
                | "Hz"
                | "kHz"
                | "MHz"
                | "GHz"
        )
}

/// Appends the masked form of `tok` to `out`; returns true when the token is a value
/// (fully or in its `key=`/`key:` value part).
pub fn mask_token(tok: &str, out: &mut String) -> bool {
    mask_token_depth(tok, out, 0)
}

fn mask_token_depth(tok: &str, out: &mut String, depth: u8) -> bool {
    let (pre, core, post) = peel(tok);
    if core.is_empty() {
        out.push_str(tok);
        return false;
    }
    let class = classify_core(core);
    if class == TokenClass::Word {
        // a quoted word is an identifier
        if let (Some(q), Some(p)) = (pre.bytes().last(), post.bytes().next()) {
            if q == p && matches!(q, b'\'' | b'"' | b'`') {
                out.push_str(pre);
                out.push_str(WILDCARD);
                out.push_str(post);
                return true;
            }
        }
        out.push_str(tok);
        return false;
    }
    // key=value / key:value with a word key: keep the key, mask the value
    if depth < 2 {
        if let Some(k) = key_len(core) {
            let (key, rest) = core.split_at(k + 1);
            out.push_str(pre);
            out.push_str(key);
            let v = mask_token_depth(rest, out, depth + 1);
            out.push_str(post);
            return v;
        }
    }
    out.push_str(pre);
    out.push_str(WILDCARD);
    out.push_str(post);
    true
}

/// Length of a `key` before `=` or `:` when the key is a word and a value follows: letters,
/// `_`, `-` (and `.` before `=`: `java.vendor=...`), no digits; `host.name:port`, `C:\\`
/// and `scheme://` are not keys.
fn key_len(core: &str) -> Option<usize> {
    let b = core.as_bytes();
    let i = b.iter().position(|&c| c == b'=' || c == b':')?;
    if i == 0 || i + 1 >= b.len() || !b[0].is_ascii_alphabetic() {
        return None;
    }
    let eq = b[i] == b'=';
    if !eq && matches!(b[i + 1], b'/' | b'\\') {
        return None;
    }
    let key_ok = b[..i].iter().all(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b'-' || (eq && c == b'.'));
    key_ok.then_some(i)
}

/// Masks a whole line: tokens split on ASCII whitespace, masked with [`mask_token`], date
/// names next to values and units after values folded in, runs of adjacent pure values
/// collapsed; the result (tokens joined by single spaces) is written to `out` (cleared
/// first). Returns the number of tokens written.
pub fn mask_line(line: &str, out: &mut String) -> usize {
    Masker::default().mask(line, out)
}

/// Reusable state of [`mask_line`] (keeps its buffer between lines).
#[derive(Debug, Default, Clone)]
pub struct Masker {
    /// (start offset in the output, kind) per output token.
    toks: Vec<(usize, Kind)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Other,
    /// Exactly `<*>`.
    Value,
    /// A month or weekday name.
    DateName,
}

impl Masker {
    /// Masks `line` into `out` (see [`mask_line`]); returns the number of tokens.
    pub fn mask(&mut self, line: &str, out: &mut String) -> usize {
        out.clear();
        self.toks.clear();
        let b = line.as_bytes();
        let mut i = 0usize;
        while i < b.len() {
            while i < b.len() && BYTE_CLASS[b[i] as usize] == B_SPACE {
                i += 1;
            }
            if i >= b.len() {
                break;
            }
            let s = i;
            let mut flags = 0u8;
            while i < b.len() {
                let c = BYTE_CLASS[b[i] as usize];
                if c == B_SPACE {
                    break;
                }
                flags |= c;
                i += 1;
            }
            self.token(&line[s..i], flags, out);
        }
        self.toks.len()
    }

    fn token(&mut self, tok: &str, flags: u8, out: &mut String) {
        let after_value = matches!(self.toks.last(), Some((_, Kind::Value)));
        if flags & (B_DIGIT | B_SLASH | B_AT | B_QUOTE) == 0 {
            // a plain word (the common case): only date names and units need a look
            let (_, core, post) = if flags & B_PUNCT != 0 { peel(tok) } else { ("", tok, "") };
            if after_value && (is_unit(core) || is_date_name(core)) {
                out.push_str(post);
                if !post.is_empty() {
                    if let Some(last) = self.toks.last_mut() {
                        last.1 = Kind::Other;
                    }
                }
                return;
            }
            let kind = if post.is_empty() && is_date_name(core) { Kind::DateName } else { Kind::Other };
            self.push(out, tok, kind);
            return;
        }
        let sep = out.len();
        if sep > 0 {
            out.push(' ');
        }
        let start = out.len();
        let value = mask_token(tok, out);
        if value && &out[start..] == WILDCARD {
            out.truncate(sep);
            // date names before a value are part of it
            while matches!(self.toks.last(), Some((_, Kind::DateName))) {
                self.pop(out);
            }
            if !matches!(self.toks.last(), Some((_, Kind::Value))) {
                self.push(out, WILDCARD, Kind::Value);
            }
            return;
        }
        let (_, core, post) = peel(&out[start..]);
        if after_value && (is_unit(core) || is_date_name(core)) {
            let post = post.to_string();
            out.truncate(sep);
            out.push_str(&post);
            if !post.is_empty() {
                if let Some(last) = self.toks.last_mut() {
                    last.1 = Kind::Other;
                }
            }
            return;
        }
        self.toks.push((start, Kind::Other));
    }

    fn pop(&mut self, out: &mut String) {
        if let Some((start, _)) = self.toks.pop() {
            out.truncate(start.saturating_sub(1));
        }
    }

    fn push(&mut self, out: &mut String, text: &str, kind: Kind) {
        if !out.is_empty() {
            out.push(' ');
        }
        self.toks.push((out.len(), kind));
        out.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(line: &str) -> String {
        let mut s = String::new();
        mask_line(line, &mut s);
        s
    }

    #[test]
    fn classes() {
        assert_eq!(classify_core("10.0.0.1:8080"), TokenClass::Numeric);
        assert_eq!(classify_core("0x1f"), TokenClass::Numeric);
        assert_eq!(classify_core("https://example.org/a"), TokenClass::Url);
        assert_eq!(classify_core("/var/lib/x"), TokenClass::Path);
        assert_eq!(classify_core("C:\\Windows\\Temp"), TokenClass::Path);
        assert_eq!(classify_core("a/b"), TokenClass::Path);
        assert_eq!(classify_core("ops@example.org"), TokenClass::Email);
        assert_eq!(classify_core("terminating"), TokenClass::Word);
        assert_eq!(classify_core("/"), TokenClass::Word);
    }

    #[test]
    fn masks_values_keeps_words() {
        assert_eq!(
            m("PacketResponder 1 for block blk_-38865 terminating"),
            "PacketResponder <*> for block <*> terminating"
        );
        assert_eq!(m("session opened (uid=0) by 'root'"), "session opened (uid=<*>) by '<*>'");
        assert_eq!(m("headroom=<memory:10240, vCores:-17>"), "headroom=<memory:<*>, vCores:<*>>");
        assert_eq!(m("estimated size 5.2 KB, free 14.0 KB)"), "estimated size <*>, free <*>)");
        assert_eq!(m("resolve name an14 an15 an16 an17"), "resolve name <*>");
        assert_eq!(m("Connection from 1.2.3.4 at Sat Jun 25 09:20:23 2005"), "Connection from <*> at <*>");
        assert_eq!(m("Took 2.5 seconds to spawn"), "Took <*> to spawn");
        assert_eq!(m("Loaded C:\\Windows\\a.dll ok"), "Loaded <*> ok");
        assert_eq!(m("May I ask"), "May I ask");
        assert_eq!(m("  a\t b  "), "a b");
        assert_eq!(m(""), "");
    }
}
