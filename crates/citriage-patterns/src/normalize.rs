//! Failure-text normalization before clustering, in two profiles.
//!
//! * [`Profile::K8sTriage`] reproduces go.k8s.io/triage's `normalize`: dates and timestamps
//!   become the literal `TIME`; the space-separated entries of every innermost `map[...]` are
//!   sorted; noisy tokens are alpha-renamed `UNIQ1`, `UNIQ2`, ... in order of first appearance
//!   (the same token keeps its number); texts over 10,000 bytes lose consecutive duplicate
//!   lines and are then cut to the first 5,000 bytes + `\n...[truncated]...\n` + the last
//!   5,000. Its quirks are kept on purpose (`kube-proxy failed` → `kubeUNIQ1failed`, 19-digit
//!   build ids renamed, `+0000 UTC` left after `TIME`) because cluster keys and ids must match
//!   the ones go.k8s.io/triage publishes.
//! * [`Profile::Default`] fixes those defects (word boundaries, a k8s-generated-name check for
//!   random suffixes, time zones folded into `TIME`) and masks more volatile tokens: long
//!   numbers and numbers after context words (`NUM`), durations (`DURATION`), quoted resource
//!   names (`"NAME"`), content hashes (`HASH`), temporary paths (`TMPPATH`), Go line numbers
//!   (`.go:LINE`). Small numbers such as exit codes are kept: `exit 1` and `exit 2` must not
//!   merge.
//!
//! All regexes use explicit ASCII classes where Go's RE2 semantics are ASCII (`\d`, `\w`,
//! `\s`), so the compatibility profile matches byte-for-byte on the same input.
//!
//! Provenance of the compatibility rules: the date rule and the hex/IP/UUID/hex-garbage/
//! `minion-group-`/`default-pool-` rules are the long-standing published ones; the newer rules
//! (kops/AWS/kind node names, pod names with numeric suffixes, `.go:NNN`, random suffixes,
//! `localhost:NNNNN`, high ports, `cluster_N`/`logger_N`/`Server #N`, `goroutine N`, durations,
//! Ginkgo `MM/DD/YY` timestamps) follow the documented list and reproduce every published
//! golden case (including the pod-termination messages' shared id); where that material does
//! not pin a detail down (e.g. the exact terminator set after a random suffix, what counts as
//! a standalone high port) the choice is documented beside the rule.

use crate::fxhash::FxHashMap as HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Texts longer than this many bytes are de-duplicated and truncated.
pub const LONG_OUTPUT_LEN: usize = 10_000;
/// Separator inserted between the kept head and tail of a truncated text.
pub const TRUNCATED_SEP: &str = "\n...[truncated]...\n";

/// Normalization profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Exact go.k8s.io/triage semantics (keys and ids link to go.k8s.io/triage).
    K8sTriage,
    /// citriage's profile: the defects fixed and more volatile tokens masked.
    Default,
}

impl Profile {
    /// Every profile, in the order a store's runs are looked for and listed:
    /// `default` first.
    pub const ALL: [Profile; 2] = [Profile::Default, Profile::K8sTriage];

    /// Stable short name (`k8s-triage` / `default`): the one spelling a profile is
    /// stored, printed, asked for and linked under.
    pub const fn name(self) -> &'static str {
        match self {
            Profile::K8sTriage => "k8s-triage",
            Profile::Default => "default",
        }
    }

    /// Parse `k8s-triage` / `default` (and the short `k8s` or `triage`).
    pub fn parse(s: &str) -> Option<Profile> {
        match s {
            "k8s-triage" | "k8s" | "triage" => Some(Profile::K8sTriage),
            "default" => Some(Profile::Default),
            _ => None,
        }
    }
}

/// Normalize `text` under `profile` (see the module docs).
pub fn normalize(text: &str, profile: Profile) -> String {
    match profile {
        Profile::K8sTriage => normalize_k8s(text),
        Profile::Default => normalize_default(text),
    }
}

// ---------------------------------------------------------------------------------------------
// k8s-triage profile

/// Dates and timestamps: `flakeReasonDateRE` of kubernetes/test-infra `triage/summarize/text.go`
/// (Go RE2 semantics: `\d`, `\w`, `\s` are ASCII; `[\d.-: ]` is the range `.`..`:` plus digits
/// and space).
static K8S_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        // "Mon, 12 January 2017 11:34:35 -0700"
        r"[A-Z][a-z]{2}, [0-9]+ [0-9A-Za-z_]+ 2[0-9]{3} [0-9./: ]*(?:[-+][0-9]+)?",
        // "Jan 1 00:00:00" or "Jan 01 00:00:00.000"
        r"|[0-9A-Za-z_]{3}[\t\n\x0C\r ]+[0-9]{1,2} [0-9]+:[0-9]+:[0-9]+(?:\.[0-9]+)?",
        // "2006-01-02T15:04:05.000" or "I0102 15:04:05.000"
        r"|(?:[0-9]{4}-[0-9]{2}-[0-9]{2}.|.[0-9]{4} )[0-9]{2}:[0-9]{2}:[0-9]{2}(?:.[0-9]+)?",
        // "12/10/25 13:52:29.244" or "1/2/2025 1:02:03"
        r"|[0-9]{1,2}/[0-9]{1,2}/[0-9]{2,4} [0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?",
    ))
    .expect("valid k8s date regex")
});

/// Noisy tokens alpha-renamed to UNIQn: `flakeReasonOrdinalRE` of kubernetes/test-infra
/// `triage/summarize/text.go` at 9cd5798 (2026-08-22), alternative by alternative.
static K8S_ORDINAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"0x[0-9a-fA-F]+",                                              // hex constants
        r"|[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(?::[0-9]+)?", // IPs + optional port
        r"|[0-9a-fA-F]{8}-[^\t\n\x0C\r ]{4}-[^\t\n\x0C\r ]{4}-[^\t\n\x0C\r ]{4}-[^\t\n\x0C\r ]{12}(?:-[0-9]+)?", // UUIDs
        r"|[0-9a-f]{12,32}",                              // hex garbage
        r"|(?:minion-group-|default-pool-)[-0-9a-z]{4,}", // node names (GCE)
        r"|nodes-[-a-z0-9]+-[a-z0-9]{4,}",                // node names (GKE/Azure)
        r"|i-[0-9a-f]{10,}",                              // node names (AWS)
        r"|kind-worker[0-9]*",                            // node names (kind)
        r"|pod-[a-z-]+-[0-9]+-[0-9]+",                    // pod names with numeric suffixes
        r"|\.go:[0-9]+",                                  // Go source line numbers
        r"|-[a-z0-9]{4,5}(?:\x22|$|[\t\n\x0C\r ]|/)",     // Kubernetes random suffixes
        r"|localhost:[0-9]{4,5}",                         // localhost with ephemeral ports
        r"|:[0-9]{5}(?:[\t\n\x0C\r ]|$|\x22|\]|/)",       // standalone high ports
        r"|(?:cluster|logger|Server #)_?[0-9]+",          // test server/cluster instance numbers
        r"|goroutine [0-9]+",                             // goroutine ids
        r"|[0-9]+\.[0-9]{3}s",                            // durations with milliseconds
    ))
    .expect("valid k8s ordinal regex")
});

/// Innermost `map[...]`.
static MAP_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"map\[([^\]\[]*)\]").expect("valid map regex"));

fn sort_maps(s: &str) -> Option<String> {
    if !s.contains("map[") {
        return None;
    }
    let out = MAP_RE.replace_all(s, |caps: &regex::Captures<'_>| {
        let mut parts: Vec<&str> = caps[1].split(' ').collect();
        parts.sort_unstable();
        format!("map[{}]", parts.join(" "))
    });
    match out {
        std::borrow::Cow::Borrowed(_) => None,
        std::borrow::Cow::Owned(o) => Some(o),
    }
}

fn normalize_k8s(text: &str) -> String {
    let s = K8S_DATE.replace_all(text, "TIME");
    let s = match sort_maps(&s) {
        Some(o) => std::borrow::Cow::Owned(o),
        None => s,
    };
    let mut names: HashMap<&str, usize> = HashMap::default();
    let mut out = String::with_capacity(s.len());
    let mut last = 0usize;
    for m in K8S_ORDINAL.find_iter(&s) {
        out.push_str(&s[last..m.start()]);
        let next = names.len() + 1;
        let n = *names.entry(m.as_str()).or_insert(next);
        out.push_str("UNIQ");
        push_usize(&mut out, n);
        last = m.end();
    }
    out.push_str(&s[last..]);
    shorten(out)
}

fn push_usize(out: &mut String, n: usize) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

/// Drop consecutive duplicate lines (split on `\n`; the first line is always kept).
pub fn remove_duplicate_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev: Option<&str> = None;
    for line in text.split('\n') {
        match prev {
            Some(p) if p == line => continue,
            Some(_) => out.push('\n'),
            None => {}
        }
        out.push_str(line);
        prev = Some(line);
    }
    out
}

/// De-duplicate and truncate long texts (both profiles). Cuts fall on character boundaries
/// (a byte cut inside a multi-byte character moves outwards to keep valid UTF-8).
pub fn shorten(s: String) -> String {
    if s.len() <= LONG_OUTPUT_LEN {
        return s;
    }
    let s = remove_duplicate_lines(&s);
    if s.len() <= LONG_OUTPUT_LEN {
        return s;
    }
    let half = LONG_OUTPUT_LEN / 2;
    let mut head_end = half;
    while !s.is_char_boundary(head_end) {
        head_end += 1;
    }
    let mut tail_start = s.len() - half;
    while !s.is_char_boundary(tail_start) {
        tail_start -= 1;
    }
    let mut out = String::with_capacity(LONG_OUTPUT_LEN + TRUNCATED_SEP.len() + 8);
    out.push_str(&s[..head_end]);
    out.push_str(TRUNCATED_SEP);
    out.push_str(&s[tail_start..]);
    out
}

// ---------------------------------------------------------------------------------------------
// default profile

/// Timestamps with their zones (the k8s profile leaves `+0000 UTC` behind).
const DEF_TIME_PATTERN: &str = concat!(
    r"(?:[A-Z][a-z]{2},? )?[0-9]{4}[-/][0-9]{2}[-/][0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?",
    r"(?: ?(?:Z|[-+][0-9]{2}:?[0-9]{2}))?(?: (?:UTC|GMT|[A-Z]{2,3}T)\b)?",
    r"|[A-Z][a-z]{2}, [0-9]{1,2} [A-Za-z]+ [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}(?: ?(?:[-+][0-9]{4}|UTC|GMT|[A-Z]{2,3}T)\b)?",
    r"|\b[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?: (?:UTC|GMT|[A-Z]{2,3}T))?(?: [0-9]{4})?",
    r"|\b[A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?",
    r"|\b[0-9]{1,2}/[0-9]{1,2}/[0-9]{2,4}[ ,T]+[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?: ?[AP]M)?",
    r"|\b[IWEF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+",
    r"|\b[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?\b",
);

static DEF_TIME: LazyLock<regex_automata::meta::Regex> = LazyLock::new(|| {
    regex_automata::meta::Regex::new(&ascii_boundaries(DEF_TIME_PATTERN)).expect("valid default time regex")
});

/// Where a clock `D:DD:DD` (D a digit) starts at or after `from`.
fn find_clock(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from + 1;
    while i < b.len() {
        let c = i + memchr::memchr(b':', &b[i..])?;
        if c + 5 < b.len()
            && b[c - 1].is_ascii_digit()
            && b[c + 1].is_ascii_digit()
            && b[c + 2].is_ascii_digit()
            && b[c + 3] == b':'
            && b[c + 4].is_ascii_digit()
            && b[c + 5].is_ascii_digit()
        {
            return Some(c - 1);
        }
        i = c + 1;
    }
    None
}

/// `DEF_TIME` replaced by `TIME`, like `replace_all`. Every alternative of `DEF_TIME` holds a
/// clock `D:DD:DD` and none matches a newline, so only the lines holding a clock are searched
/// (each alone, its surroundings still seen by the word boundaries): a text without one is
/// returned as it is after one scan for `:`.
fn mask_times(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0usize; // bytes of `text` already in `out`
    let mut at = 0usize; // the search resumes here
    while let Some(clock) = find_clock(b, at) {
        let line_start = memchr::memrchr(b'\n', &b[..clock]).map_or(0, |i| i + 1).max(at);
        let line_end = memchr::memchr(b'\n', &b[clock..]).map_or(b.len(), |i| clock + i);
        let mut from = line_start;
        while let Some(m) = DEF_TIME.find(regex_automata::Input::new(text).span(from..line_end)) {
            if out.is_empty() {
                out.reserve(text.len());
            }
            out.push_str(&text[copied..m.start()]);
            out.push_str("TIME");
            copied = m.end();
            from = m.end();
        }
        at = line_end;
    }
    if copied == 0 && out.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Identifier classes of the default profile, masked first and wherever they occur, even
/// inside a compound token (`pvc-<uuid>`, `img@sha256:<hex>`, `10.0.0.1:443`): a value that
/// only identifies an object never makes two failures different. Tried leftmost-first.
const DEF_ID_CLASSES: &[(Class, &str)] = &[
    (Class::Hash, r"(?:sha256|sha1|sha512|md5):[0-9a-fA-F]{32,128}\b"),
    (Class::Uniq, r"\b0x[0-9a-fA-F]+\b"),
    (Class::Uniq, r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?:-[0-9]+)?"),
    (Class::Uniq, r"\b[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(?::[0-9]{1,5})?\b"),
    (Class::Uniq, r"\[[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}\](?::[0-9]{1,5})?"),
    (Class::Uniq, r"\blocalhost:[0-9]{2,5}\b"),
    (Class::TmpPath, r"(?:/private)?/(?:tmp|var/tmp|var/folders)(?:/[^\s:'\x22,;)\]}]*)?"),
    (Class::GoLine, r"\.go:[0-9]+\b"),
    (
        Class::Duration,
        r"\b(?:[0-9]+(?:\.[0-9]+)?h)?(?:[0-9]+(?:\.[0-9]+)?m)?[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s)\b|\b[0-9]+h[0-9]+m\b|\b[0-9]+(?:\.[0-9]+)? ?(?:seconds?|minutes?|hours?|milliseconds?)\b",
    ),
    // hex runs: content hashes, short commit ids, container ids (checked: digits and letters)
    (Class::HexId, r"\b[0-9a-fA-F]{7,}\b"),
];

/// Name classes of the default profile, applied after the identifiers are masked.
const DEF_NAME_CLASSES: &[(Class, &str)] = &[
    (
        Class::Uniq,
        r"\b(?:gke-[-0-9a-z]+|minion-group-[0-9a-z]{4}|default-pool-[-0-9a-z]{4,}|nodes-[a-z0-9]+(?:-[a-z0-9]+)*|i-[0-9a-f]{8}(?:[0-9a-f]{9})?|ip-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}(?:\.[-a-z0-9.]+)?|kind-(?:control-plane|worker)[0-9]*)\b",
    ),
    (Class::Uniq, r"\b(?:cluster_|logger_|Server #)[0-9]+\b"),
    (Class::Uniq, r"\bgoroutine [0-9]+\b"),
    (Class::Name, r"\x22[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?\x22"),
    // a dashed name whose last segment (or the one before a 5-letter replica suffix) has a digit
    // (a segment the first pass masked, such as a pod-template hash, counts as generated)
    (
        Class::Generated,
        r"\b[a-z0-9]+(?:-(?:[a-z0-9]+|UNIQ[0-9]+))*-(?:[a-z0-9]*[0-9][a-z0-9]*|UNIQ[0-9]+)(?:-[a-z0-9]{5})?\b",
    ),
    (
        Class::CtxNum,
        r"(?i:\b(?:attempts?|retr(?:y|ies)|tries|try|line|port|pid|generation|revision|resourceversion|restarts?)\b[ :=#]*)[0-9]+\b",
    ),
    (Class::Num, r"\b[0-9]{4,}\b"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Hash,
    Uniq,
    TmpPath,
    GoLine,
    Duration,
    Name,
    Generated,
    HexId,
    CtxNum,
    Num,
}

/// One pass: the classes as one multi-pattern regex, searched with the fast DFA and no
/// captures. Its matches are those of the alternation of the classes in order
/// (leftmost-first), and each match names the pattern that produced it, which is the class
/// that wins at that start (the first class matching there).
struct Pass {
    classes: &'static [(Class, &'static str)],
    combined: regex_automata::meta::Regex,
}

/// A class pattern with ASCII word boundaries (the classes are ASCII; this keeps every search
/// on the fast DFA).
fn ascii_boundaries(p: &str) -> String {
    p.replace(r"\b", r"(?-u:\b)")
}

impl Pass {
    fn new(classes: &'static [(Class, &'static str)]) -> Pass {
        let patterns: Vec<String> = classes.iter().map(|(_, p)| ascii_boundaries(p)).collect();
        let combined = regex_automata::meta::Regex::new_many(&patterns).expect("valid default regex");
        Pass { classes, combined }
    }

    /// The matches of the pass in `s`, in order: (start, end, class).
    fn matches<'s>(&'s self, s: &'s str) -> impl Iterator<Item = (usize, usize, Class)> + 's {
        self.combined.find_iter(s).map(|m| (m.start(), m.end(), self.classes[m.pattern().as_usize()].0))
    }
}

static DEF_PASSES: LazyLock<[Pass; 2]> = LazyLock::new(|| [Pass::new(DEF_ID_CLASSES), Pass::new(DEF_NAME_CLASSES)]);

/// Letters Kubernetes uses for generated name suffixes (no vowels, no 0/1/3).
fn is_k8s_suffix_char(b: u8) -> bool {
    matches!(b, b'b'..=b'd' | b'f'..=b'h' | b'j'..=b'n' | b'p'..=b't' | b'v' | b'w' | b'x' | b'z' | b'2' | b'4'..=b'9')
}

/// A plausible generated suffix: 4-10 chars of the k8s alphabet with at least one digit, or
/// an all-digit run of 3+ (namespaces like `test-5405`, statefulset ordinals are kept short).
fn is_generated_suffix(seg: &str) -> bool {
    let b = seg.as_bytes();
    if b.len() > 4 && seg.starts_with("UNIQ") && b[4..].iter().all(u8::is_ascii_digit) {
        return true;
    }
    if b.len() >= 3 && b.iter().all(u8::is_ascii_digit) {
        return true;
    }
    (4..=10).contains(&b.len()) && b.iter().all(|&c| is_k8s_suffix_char(c)) && b.iter().any(u8::is_ascii_digit)
}

/// For `name-abc12` / `name-7d9f8c6b5-x2x4z` / `test-5405`: the stem before the generated
/// suffixes, or None when no trailing segment looks generated.
fn generated_stem(tok: &str) -> Option<&str> {
    let segs: Vec<(usize, &str)> = {
        let mut v = Vec::new();
        let mut start = 0usize;
        for (i, c) in tok.char_indices() {
            if c == '-' {
                v.push((start, &tok[start..i]));
                start = i + 1;
            }
        }
        v.push((start, &tok[start..]));
        v
    };
    if segs.len() < 2 {
        return None;
    }
    let mut k = segs.len();
    // A replica-set pod: <stem>-<pod-template-hash>-<5 letters>, the last part may lack digits.
    if k >= 3 && is_pod_template_hash(segs[k - 1].1) && is_generated_suffix(segs[k - 2].1) {
        k -= 2;
    }
    while k > 1 && is_generated_suffix(segs[k - 1].1) {
        k -= 1;
    }
    if k == segs.len() {
        return None;
    }
    let stem_end = segs[k].0 - 1;
    if stem_end == 0 {
        None
    } else {
        Some(&tok[..stem_end])
    }
}

fn is_pod_template_hash(seg: &str) -> bool {
    seg.len() == 5 && seg.bytes().all(is_k8s_suffix_char)
}

fn normalize_default(text: &str) -> String {
    let cleaned;
    let text = if text.contains('\r') || text.contains('\x1b') {
        let stripped = crate::lines::strip_ansi(text.as_bytes());
        let s = String::from_utf8_lossy(&stripped).replace("\r\n", "\n");
        cleaned = s.replace('\r', "\n");
        cleaned.as_str()
    } else {
        text
    };
    let s = mask_times(text);
    let s = match sort_maps(&s) {
        Some(o) => std::borrow::Cow::Owned(o),
        None => s,
    };
    let mut names: HashMap<String, usize> = HashMap::default();
    let mut cur: String = s.into_owned();
    for pass in DEF_PASSES.iter() {
        cur = apply_pass(pass, &cur, &mut names);
    }
    shorten(cur)
}

/// Replace every match of `pass` in `s`; `names` numbers the UNIQ tokens by first appearance
/// across passes.
fn apply_pass(pass: &Pass, s: &str, names: &mut HashMap<String, usize>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last = 0usize;
    let mut uniq = |tok: &str, out: &mut String| {
        let next = names.len() + 1;
        let n = *names.entry(tok.to_string()).or_insert(next);
        out.push_str("UNIQ");
        push_usize(out, n);
    };
    for (start, end, class) in pass.matches(s) {
        let tok = &s[start..end];
        out.push_str(&s[last..start]);
        last = end;
        match class {
            Class::Hash => out.push_str("HASH"),
            Class::TmpPath => out.push_str("TMPPATH"),
            Class::GoLine => out.push_str(".go:LINE"),
            Class::Duration => out.push_str("DURATION"),
            Class::Num => out.push_str("NUM"),
            Class::CtxNum => {
                let digits = tok.len() - tok.bytes().rev().take_while(u8::is_ascii_digit).count();
                out.push_str(&tok[..digits]);
                out.push_str("NUM");
            }
            Class::Name => {
                let inner = &tok[1..tok.len() - 1];
                if inner.contains('-') && inner.bytes().any(|b| b.is_ascii_digit()) || generated_stem(inner).is_some() {
                    out.push_str("\"NAME\"");
                } else {
                    out.push_str(tok);
                }
            }
            Class::Generated => match generated_stem(tok) {
                // `name-UNIQ3`: already masked by the first pass
                Some(stem)
                    if is_generated_suffix(&tok[stem.len() + 1..]) && tok[stem.len() + 1..].starts_with("UNIQ") =>
                {
                    out.push_str(tok)
                }
                Some(stem) => {
                    out.push_str(stem);
                    out.push('-');
                    uniq(tok, &mut out);
                }
                None => out.push_str(tok),
            },
            Class::HexId => {
                let digits = tok.bytes().filter(u8::is_ascii_digit).count();
                let letters = tok.len() - digits;
                if letters == 0 {
                    if tok.len() >= 4 {
                        out.push_str("NUM");
                    } else {
                        out.push_str(tok);
                    }
                } else if digits >= 2 || (digits >= 1 && tok.len() >= 12) {
                    // a hex run with letters and digits is an id (hash, commit, container);
                    // English words made of a-f letters have no digits
                    if tok.len() >= 32 {
                        out.push_str("HASH");
                    } else {
                        uniq(tok, &mut out);
                    }
                } else {
                    out.push_str(tok);
                }
            }
            Class::Uniq => uniq(tok, &mut out),
        }
    }
    out.push_str(&s[last..]);
    out
}

// ---------------------------------------------------------------------------------------------
// name templates (default profile)

/// Placeholders the default profile writes.
const PLACEHOLDERS: &[&str] = &["UNIQ", "NAME", "HASH", "TMPPATH", "NUM", "DURATION", "TIME"];

/// Is the core of a token (punctuation around it removed) the name of an object rather than
/// a word of the message? Names carry a placeholder, a URL, or name punctuation (`-`, `_`,
/// `/`, `.`, `=`) or mix digits and letters. Code locations (`pkg.(*T).f`, `file.go:LINE`)
/// and plain numbers (exit codes) are part of the message.
fn is_name_token(core: &str) -> bool {
    if core.contains('(') || core.contains('*') || core.contains(".go") || core.contains(".py") {
        return false;
    }
    if matches!(core, "DURATION" | "NUM" | "TIME" | "HASH" | "TMPPATH") {
        return false; // already the same in every text
    }
    if core.bytes().any(|c| c.is_ascii_uppercase()) && PLACEHOLDERS.iter().any(|p| core.contains(p)) {
        return true;
    }
    if core.starts_with("http://") || core.starts_with("https://") || core.starts_with("gs://") {
        return true;
    }
    let b = core.as_bytes();
    if !b[0].is_ascii_alphanumeric() || !b.iter().all(|&c| c.is_ascii_alphanumeric() || b"-_./:=%?&".contains(&c)) {
        return false;
    }
    let digits = b.iter().any(u8::is_ascii_digit);
    let letters = b.iter().any(u8::is_ascii_alphabetic);
    letters && (digits || b.iter().any(|c| b"-_/.=".contains(c)))
}

/// The name template of a normalized text: every token that names an object (see
/// `is_name_token`) becomes `<*>`, the words of the message stay. Texts that differ only in
/// which pod, namespace, container, zone or URL they name share a template
/// (`Timed out after DURATION: pod <*> never became Ready: ...`). None when too little of
/// the message would remain (fewer than three words, or fewer words than names): such a
/// text is its own template.
pub fn name_template(norm: &str) -> Option<String> {
    let mut out = String::with_capacity(norm.len());
    let (mut words, mut names) = (0usize, 0usize);
    let mut last = 0usize;
    let bytes = norm.as_bytes();
    let mut i = 0usize;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let tok = &norm[start..i];
        let lead = tok.len() - tok.trim_start_matches(['[', '(', '"', '\'', '{', '<']).len();
        let trail = tok.len() - tok.trim_end_matches([']', ')', '"', '\'', ',', ':', ';', '.', '}', '>']).len();
        if lead + trail >= tok.len() {
            continue;
        }
        let core = &tok[lead..tok.len() - trail];
        if is_name_token(core) {
            names += 1;
            out.push_str(&norm[last..start + lead]);
            out.push_str("<*>");
            last = start + lead + core.len();
        } else if core.len() >= 2 && core.bytes().all(|c| c.is_ascii_alphabetic()) {
            words += 1;
        }
    }
    if names == 0 || words < 3 || words < names {
        return None;
    }
    out.push_str(&norm[last..]);
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Signature lines: one line standing for a whole failure

/// Words that make a line the significant one of a failure text.
static SIGNIFICANT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)error|fail|forbidden|panic|timed out|timeout|exceeded|unable|refused|denied|invalid|not found|unsupported|missing|cannot|could not")
        .expect("valid significant-line regex")
});
static SIG_KLOG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[IWEF]\d{4} \d\d:\d\d:\d\d(\.\d+)?\s+\d+\s+[\w./-]+:\d+\]\s*").expect("valid klog regex")
});
static SIG_STAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?").expect("valid stamp regex")
});
static SIG_UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b").expect("valid uuid regex")
});
static SIG_IP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b").expect("valid ip regex"));
static SIG_HEX: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\b(0x)?[0-9a-f]{7,}\b").expect("valid hex regex"));
static SIG_MIXED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z_-]*\d[A-Za-z0-9_]*\b").expect("valid mixed-token regex"));

/// The line of a failure text that stands for it: the first non-empty line with a
/// failure word (`error`, `fail`, `forbidden`, `panic`, `timed out`, `exceeded`,
/// `unable`, `refused`, `denied`, `invalid`, `not found`, `unsupported`, `missing`,
/// `cannot`, `could not`), else the first non-empty line; trimmed.
pub fn significant_line(text: &str) -> Option<&str> {
    let mut first = None;
    for l in text.lines() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if first.is_none() {
            first = Some(t);
        }
        if SIGNIFICANT.is_match(t) {
            return Some(t);
        }
    }
    first
}

/// One line with its run-specific tokens masked, coarser than the clustering
/// profiles: a klog/logrus prefix is dropped; time stamps, UUIDs, IPv4 addresses,
/// hex strings of 7+ digits and every token that mixes letters and digits or is a
/// number become `*`; whitespace is collapsed; the result is cut at 240 characters.
/// Two runs of one failure give the same line; the payload analysis keys its failure
/// modes on it.
pub fn mask_line(line: &str) -> String {
    let s = SIG_KLOG.replace(line, "");
    let s = SIG_STAMP.replace_all(&s, "*");
    let s = SIG_UUID.replace_all(&s, "*");
    let s = SIG_IP.replace_all(&s, "*");
    let s = SIG_HEX.replace_all(&s, "*");
    let s = SIG_MIXED.replace_all(&s, "*");
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    s.chars().take(240).collect()
}

/// The masked significant line of a failure text (`None` when it has none).
pub fn signature_line(text: &str) -> Option<String> {
    let masked = mask_line(significant_line(text)?);
    (!masked.is_empty()).then_some(masked)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The passes as they were first written, as the oracle of the differential tests: each
    /// pass one alternation, its class found by anchored searches of each class at a match's
    /// start; the times one `replace_all` over the whole text.
    struct OraclePass {
        combined: Regex,
        each: Vec<(Class, regex_automata::meta::Regex)>,
    }

    impl OraclePass {
        fn new(classes: &[(Class, &str)]) -> Self {
            let combined =
                classes.iter().map(|(_, p)| format!("(?:{})", ascii_boundaries(p))).collect::<Vec<_>>().join("|");
            let each = classes
                .iter()
                .map(|(c, p)| (*c, regex_automata::meta::Regex::new(&ascii_boundaries(p)).expect("valid")))
                .collect();
            OraclePass { combined: Regex::new(&combined).expect("valid"), each }
        }

        fn matches(&self, s: &str) -> Vec<(usize, usize, Class)> {
            self.combined
                .find_iter(s)
                .map(|m| {
                    let input =
                        regex_automata::Input::new(s).span(m.start()..s.len()).anchored(regex_automata::Anchored::Yes);
                    let class = self.each.iter().find_map(|(c, re)| re.find(input.clone()).map(|_| *c));
                    (m.start(), m.end(), class.expect("some class matches where the alternation does"))
                })
                .collect()
        }
    }

    /// Texts for the differential tests: the benchmark's planted patterns, and random
    /// concatenations of fragments that start, end or almost form every class (times with
    /// and without zones, clocks across lines, ids next to letters, names with suffixes).
    fn differential_inputs() -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in 0..crate::benchgen::PATTERNS.len() {
            for seed in 0..60u64 {
                out.push(crate::benchgen::render(p, seed * 7919 + 1));
            }
        }
        const FRAGS: &[&str] = &[
            "2025-12-10",
            "2025/12/10",
            "T",
            " ",
            "  ",
            "\n",
            ",",
            "13:51:30",
            "1:02:03",
            "13:5",
            ":30",
            ".123",
            ",5",
            "+0000",
            "-07:00",
            "Z",
            " UTC",
            " PST",
            " GMT",
            "Mon, ",
            "Mon ",
            "Jan ",
            " 2 ",
            "12/10/25",
            " PM",
            "AM",
            "I1210 ",
            "E0102",
            "0x1f",
            "0xZZ",
            "deadbeef",
            "3f2a9c1b7e8d",
            "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d",
            "2e24e003-9ffd-4e78-852c-9dcb6cbef493",
            "-123",
            "10.0.3.17",
            ":6443",
            "[::1]",
            "[fe80::1]:80",
            "localhost:8080",
            "/tmp/x",
            "/private/var/folders/a",
            ".go:12",
            "12ms",
            "1.5s",
            "2h0m0s",
            "3 seconds",
            "µs",
            "gke-a-b-1",
            "minion-group-ab12",
            "i-0123456789abcdef0",
            "ip-10-0-0-1.ec2",
            "kind-worker2",
            "cluster_3",
            "Server #4",
            "goroutine 17",
            "\"pod-ab12\"",
            "\"a\"",
            "coredns-7d9f8c6b5-x2x4z",
            "test-5405",
            "name-UNIQ3",
            "retries=",
            "port ",
            "line:",
            "12345",
            "42",
            "sha256:",
            "abc",
            "x",
            "é",
            "_",
            "-",
            ".",
            ":",
            "/",
            "\"",
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..6000 {
            let mut t = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for _ in 0..(2 + x % 24) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                t.push_str(FRAGS[(x % FRAGS.len() as u64) as usize]);
            }
            out.push(t);
        }
        out
    }

    #[test]
    fn passes_match_their_oracle() {
        let time_oracle = Regex::new(&ascii_boundaries(DEF_TIME_PATTERN)).expect("valid");
        let oracles = [OraclePass::new(DEF_ID_CLASSES), OraclePass::new(DEF_NAME_CLASSES)];
        let (mut times, mut found) = (0usize, [0usize; 2]);
        for text in differential_inputs() {
            let want = time_oracle.replace_all(&text, "TIME");
            let got = mask_times(&text);
            assert_eq!(got, want, "times in {text:?}");
            times += (got != text) as usize;
            let mut cur = got.into_owned();
            let mut names = HashMap::default();
            for (k, (pass, oracle)) in DEF_PASSES.iter().zip(&oracles).enumerate() {
                let want = oracle.matches(&cur);
                let got: Vec<_> = pass.matches(&cur).collect();
                assert_eq!(got, want, "pass {k} over {cur:?}");
                found[k] += got.len();
                cur = apply_pass(pass, &cur, &mut names);
            }
        }
        assert!(times > 300 && found[0] > 5000 && found[1] > 2000, "{times} {found:?}");
    }

    #[test]
    fn k8s_basic_cases() {
        let n = |s| normalize(s, Profile::K8sTriage);
        assert_eq!(n("0x1234 a 123.13.45.43 b 2e24e003-9ffd-4e78-852c-9dcb6cbef493-123"), "UNIQ1 a UNIQ2 b UNIQ3");
        assert_eq!(n("Mon, 12 January 2017 11:34:35 blah blah"), "TIMEblah blah");
        assert_eq!(n("123.45.68.12:345 abcd1234eeee"), "UNIQ1 UNIQ2");
        assert_eq!(n("kube-proxy failed"), "kubeUNIQ1failed");
        assert_eq!(n("map[b:1 a:2] 0x1 0x1"), "map[a:2 b:1] UNIQ1 UNIQ1");
    }

    #[test]
    fn default_fixes_defects() {
        let n = |s| normalize(s, Profile::Default);
        assert_eq!(n("kube-proxy failed"), "kube-proxy failed");
        assert_eq!(n("exit 1"), "exit 1");
        assert_eq!(n("start=2025-12-10 13:51:30 +0000 UTC end"), "start=TIME end");
        assert_eq!(n("build 1798765432109876543 failed"), "build NUM failed");
        assert_eq!(n("pod \"test-7mhp\" failed"), "pod \"NAME\" failed");
        assert_eq!(n("took 12.345s, then 2h0m0s"), "took DURATION, then DURATION");
        assert_eq!(n("open /tmp/ginkgo123/x.yaml: no such file"), "open TMPPATH: no such file");
        assert_eq!(n("pod coredns-7d9f8c6b5-x2x4z on node kind-worker2"), "pod coredns-UNIQ2 on node UNIQ3");
    }

    #[test]
    fn default_masks_ids_inside_compound_tokens() {
        let n = |s| normalize(s, Profile::Default);
        let a = n("creating disk pvc-2e24e003-9ffd-4e78-852c-9dcb6cbef493 in zone us-east1-b failed");
        let b = n("creating disk pvc-0b1c2d3e-aaaa-4bbb-8ccc-0123456789ab in zone us-east1-b failed");
        assert_eq!(a, b);
        assert_eq!(a, "creating disk pvc-UNIQ1 in zone us-east1-b failed");
        assert_eq!(n("image@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), "image@HASH");
        assert_eq!(n("commit 1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"), "commit HASH");
        assert_eq!(n("container 3f2a9c1b7e8d started"), n("container 9b8a7c6d5e4f started"));
        assert_eq!(n("dial tcp 10.0.3.17:6443: refused"), "dial tcp UNIQ1: refused");
        // words made of hex letters stay
        assert_eq!(n("deadbeef facade accede"), "deadbeef facade accede");
    }

    #[test]
    fn name_templates() {
        let t = |s: &str| {
            let n = normalize(s, Profile::Default);
            Some(name_template(&n).unwrap_or(n))
        };
        let a = t("Timed out after 300s: pod services-5405/pause-7d9f8c6b5-x2x4z never became Ready: containers with unready status: [core-dns]");
        let b = t("Timed out after 12m3s: pod dns-1234/httpd-5c4b3a2d1-q8w9z never became Ready: containers with unready status: [etcd-client]");
        assert_eq!(a, b);
        assert_eq!(
            a.as_deref(),
            Some("Timed out after DURATION: pod <*> never became Ready: containers with unready status: [<*>]")
        );
        // exit codes, code locations and short messages keep their identity
        assert_ne!(t("exit 1"), t("exit 2"));
        assert_ne!(
            t("[FAILED] Expected 0 to equal 3 In [It] at: k8s.io/kubernetes/test/e2e/apps/deployment.go:933 @ 11/02/26 10:00:00.000"),
            t("[FAILED] Expected 0 to equal 3 In [It] at: k8s.io/kubernetes/test/e2e/node/pods.go:933 @ 11/02/26 10:00:00.000")
        );
        assert_ne!(t("process exited with code 1 after the step"), t("process exited with code 2 after the step"));
    }

    /// Details of today's Go `flakeReasonOrdinalRE` (test-infra 9cd5798) that the older,
    /// documented list left open.
    #[test]
    fn k8s_follows_todays_go_rules() {
        let n = |s| normalize(s, Profile::K8sTriage);
        assert_eq!(n("node i-0123456789 up"), "node UNIQ1 up"); // AWS ids: 10+ hex
        assert_eq!(n("node i-01234567 up"), "node i-01234567 up");
        assert_eq!(n("dial localhost:8080 failed"), "dial UNIQ1 failed"); // 4-5 digit ports only
        assert_eq!(n("dial localhost:80 failed"), "dial localhost:80 failed");
        assert_eq!(n("port :30000 open"), "port UNIQ1open"); // the terminator is part of the match
        assert_eq!(n("port :30000x"), "port :30000x");
        assert_eq!(n("cluster5 and logger_7 and Server #3"), "UNIQ1 and UNIQ2 and UNIQ3");
        assert_eq!(n("took 1.500s"), "took UNIQ1"); // durations need milliseconds
        assert_eq!(n("took 1.5s"), "took 1.5s");
        // only kind workers are node names; `-plane` at the end is a random suffix to Go
        assert_eq!(n("on kind-control-plane"), "on kind-controlUNIQ1");
        assert_eq!(n("pod-a-b-1-2 and web-1-2"), "UNIQ1 and web-1-2"); // pod- prefix only
        assert_eq!(n("ends with -ab12"), "ends with UNIQ1"); // `$` ends a random suffix
    }
}
