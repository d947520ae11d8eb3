//! Failure-line extraction from a failed build: build logs and JUnit failures.
//!
//! A build log is split with the crate's line convention ([`crate::lines`]), each line is
//! cleaned (ANSI colour, CI timestamp prefixes, binary junk) and classified:
//!
//! * **heads**: lines that state a failure, from the build-log markers of Prow/Spyglass and
//!   common toolchains (Go `--- FAIL:`/`panic:`, Ginkgo `[FAILED]`, klog `E0510 ...`, Maven
//!   `[ERROR]`, compiler `file:line: error:`, JUnit `<<< FAILURE!`, exceptions,
//!   `Caused by:`, Jenkins `ERROR:`/`marked build as failure`, `timed out`, ...), and by
//!   shape in any vocabulary ([`crate::extract_shape`]): status-token verdicts (`FAIL: x`,
//!   `CHECK-UNEXPECTED-FAIL | x | msg`, `//x  FAILED in 2s`), sanitizer, memory-checker,
//!   crash and linker reports, a run killed by a time limit. Bare failure words count only
//!   among the line's own words, not inside identifiers, paths, flags, quoted strings or
//!   argument lists (`error_list`, `--fail-fast`, `errors.go`);
//! * **continuations**: stack frames, `... N more`, indented lines, compiler notes;
//! * **noise**: progress bars, downloads, VCS chatter, blank lines;
//! * **boilerplate**: generic tails that carry no cause (`BUILD FAILURE`, `* Try:`,
//!   `Finished: FAILURE`, `Process completed with exit code 1`, separators).
//!
//! Heads open *blocks* that extend over their continuations. Without a passing log, blocks are
//! ranked by marker strength and kept when strong enough. With a passing log of the same job,
//! every line is masked (timestamps, numbers, hashes, temp paths → placeholders) and looked up
//! in the passing log's masked lines; blocks whose head, or most of whose lines, are absent
//! from the passing log are kept, and so are new lines adjacent to kept blocks. The first kept
//! block headed by more than a bare keyword is the first failure. A failure that ends the run
//! by a time limit shows the last lines before it in its excerpt (what was running), without
//! counting them as failure lines. Every excerpt is evidence: source, 1-based inclusive line
//! range, text and a SHA-256 content hash.
//!
//! Large inputs: the splitter works over `&[u8]` (callers may memory-map), only the first
//! [`ExtractConfig::match_cap`] bytes of a line are cleaned and matched, and the passing log is
//! kept as a set of 64-bit hashes. No copy of the log is made: per line, extraction keeps its
//! offset and its class ([`PREPARED_BYTES_PER_LINE`] bytes in all) and cleans a line's text
//! again from the log when a selection step or an excerpt needs it. [`scan_markers`] is the fast path that finds marker lines in
//! a whole buffer with one regex pass.

use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use regex::bytes::Regex as BytesRegex;
use regex::{Regex, RegexSet};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{extract_shape, lines};

/// Options for extraction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractConfig {
    /// Bytes of each line that are cleaned and matched (offsets stay exact).
    pub match_cap: usize,
    /// Lines of context shown before an excerpt (`context_start`).
    pub context_before: usize,
    /// Lines of context shown after an excerpt (`context_end`).
    pub context_after: usize,
    /// At most this many excerpts are returned (the first failure and the last ones are
    /// kept). Unlimited by default: what extraction finds is not capped; callers that store
    /// or display excerpts cap them there and say so.
    pub max_excerpts: usize,
    /// Excerpt text is capped at this many bytes (the hash covers the capped text).
    pub max_excerpt_bytes: usize,
    /// Plain (unindented, unmarked) lines that may continue a block before a stack frame.
    pub max_plain_run: usize,
    /// Without a passing log: the error output at most this many lines before a verdict
    /// line (`BUILD FAILURE`, `Finished: FAILURE`, `make: ***`) is kept.
    pub verdict_gap: usize,
    /// Without a passing log: blocks whose head has at least this strength are kept
    /// (3: definite failures; 2: also logged errors and exceptions).
    pub min_strength: u8,
    /// Without a passing log: an error line (strength 2) whose masked text occurs once in
    /// the log counts as definite: 0 never, 1 klog `E`/`F` lines, 2 any error line.
    pub lone_errors: u8,
    /// A failure that ends a run by a time limit shows up to this many lines before it in
    /// its excerpt (what was running when time ran out); they are not failure lines.
    pub timeout_context: usize,
    /// Without a passing log: blocks of a selected run are kept when their head has at
    /// least this strength (1: every block of the run). The first failure is the first
    /// block headed by more than a bare keyword either way.
    pub run_min_strength: u8,
    /// With a passing log: a block is kept when at least this share (percent) of its lines
    /// are new...
    pub new_share_percent: u8,
    /// ...and at least this many are new (or its head is a new error line).
    pub min_new_lines: usize,
}

impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig {
            match_cap: lines::DEFAULT_MATCH_CAP,
            context_before: 3,
            context_after: 2,
            max_excerpts: usize::MAX,
            max_excerpt_bytes: 64 * 1024,
            max_plain_run: 1,
            verdict_gap: 40,
            min_strength: 3,
            lone_errors: 1,
            run_min_strength: 1,
            timeout_context: 3,
            new_share_percent: 50,
            min_new_lines: 3,
        }
    }
}

/// Why an excerpt was selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    /// A failure marker block (no passing log, or present in the passing log too).
    Marker,
    /// A block absent from the passing log.
    NewVsPass,
    /// A JUnit failure message/body.
    Junit,
}

/// One piece of evidence: a range of lines of one source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excerpt {
    /// Build URL or path the lines come from.
    pub source: String,
    /// First line (1-based, inclusive); for a run killed by a time limit, the last lines
    /// before the timeout are shown first.
    pub line_start: usize,
    /// Last line (1-based, inclusive).
    pub line_end: usize,
    /// First line of the surrounding display context.
    pub context_start: usize,
    /// Last line of the surrounding display context.
    pub context_end: usize,
    /// Cleaned text of `line_start..=line_end` (ANSI and CI prefixes removed), `\n`-joined.
    pub text: String,
    /// `sha256:` + hex SHA-256 of `text`.
    pub hash: String,
    /// Name of the marker that opened the block (e.g. `maven-error`, `go-fail`).
    pub marker: String,
    /// Why it was selected.
    pub selection: Selection,
    /// True for the first failure of the log.
    pub first_failure: bool,
    /// Lines inside the range that are part of the failure (noise and boilerplate excluded).
    pub lines: Vec<usize>,
    /// True when `text` stops before `line_end` ([`ExtractConfig::max_excerpt_bytes`]);
    /// `lines` and the range are still complete.
    #[serde(default)]
    pub text_cut: bool,
}

/// Result of [`extract_log`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogExtraction {
    /// Excerpts in log order.
    pub excerpts: Vec<Excerpt>,
    /// Every selected line number (1-based, ascending).
    pub lines: Vec<usize>,
    /// Line of the first failure's head.
    pub first_failure_line: Option<usize>,
    /// Total lines of the failed log.
    pub total_lines: usize,
    /// True when a passing log was used.
    pub used_pass_log: bool,
}

/// Line classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    Noise,
    Boilerplate,
    /// A failure statement; strength 1 (weak keyword) to 3 (definite).
    Head(u8),
    /// Stack frame or explicit continuation.
    Frame,
    /// A level-tagged informational line (`[INFO]`, `> Task`, `INFO:`): ends blocks.
    Info,
    Plain,
}

/// A failure-head pattern. `strength` 3: a definite failure statement (a failed test, a
/// compile error, a failed build step, a timeout); 2: an error line that may be incidental
/// (logged errors, exceptions, Maven `[ERROR]`); 1: a bare keyword.
struct Marker {
    name: &'static str,
    strength: u8,
    pattern: &'static str,
    /// Matched against the line's own words only ([`extract_shape::words_view`]): a
    /// failure word inside an identifier, path, flag or argument list does not count.
    words: bool,
}

/// A marker matched against the whole cleaned line.
const fn m(name: &'static str, strength: u8, pattern: &'static str) -> Marker {
    Marker { name, strength, pattern, words: false }
}

/// A marker matched against the line's own words.
const fn w(name: &'static str, strength: u8, pattern: &'static str) -> Marker {
    Marker { name, strength, pattern, words: true }
}

/// Index of the data-race marker in [`MARKERS`].
const RACE: usize = 0;
/// Index of the klog error marker in [`MARKERS`].
const KLOG_ERROR: usize = 6;
/// Index of the marker naming a failing Go test's output.
const GO_TEST_OUTPUT: usize = 1;
/// Index of the sanitizer marker.
const SANITIZER: usize = 19;
/// Index of the status-token verdict marker.
const STATUS_VERDICT: usize = 24;
/// Index of the event banner marker.
const EVENT_BANNER: usize = 25;
// Marker indexes are kept per line in a byte.
const _: () = assert!(MARKERS.len() <= u8::MAX as usize);

/// Failure heads. Order matters only for naming: the first matching marker names the line.
const MARKERS: &[Marker] = &[
    m("go-race", 3, r"^WARNING: DATA RACE"),
    // never matches: names the lines a failing Go test printed (see mark_go_test_output)
    m("go-test-output", 3, r"[^\s\S]"),
    m("go-fail", 3, r"^\s*--- FAIL: |^FAIL\s|^FAIL$"),
    m("go-panic", 3, r"^panic: |^fatal error: |^goroutine \d+ \[running\]"),
    m("ginkgo-failed", 3, r"\[FAILED\]|\[PANICKED\]|\[TIMEDOUT\]|• Failure|\[Fail\] |Summarizing \d+ Failures?"),
    m("fatal", 3, r"^(?:FATAL|Fatal)(?:\[[^\]]*\])?: |^F\d{4} \d\d:\d\d:\d\d\.\d+"),
    m("klog-error", 2, r"^[EF]\d{4} \d\d:\d\d:\d\d\.\d+"),
    m("maven-error", 2, r"^\[ERROR\]"),
    m("gh-error", 3, r"^##\[error\]|^::error"),
    m("error-prefix", 2, r"^(?:ERROR|Error|FATAL|Fatal|fatal|error|E)(?:\[[^\]]*\])?: "),
    m(
        "compile-error",
        3,
        r":\d+(?::\d+)?: (?:fatal )?error|\.\w+:\[\d+,\d+\] |: error[:\[]|^error\[E\d+\]|^e: (?:file://)?\S+:\d+:\d+ ",
    ),
    m(
        "junit-failure",
        3,
        r"<<< (?:FAILURE|ERROR)!|Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+.*(?:FAILURE|ERROR)!|^Tests in error:|^Failed tests:|^Tests? (?:run|completed).*\d+ failed",
    ),
    m("test-failed", 3, r"\) FAILED$|\bFAILED\s*$|^FAILED |^\S+ > \S.* FAILED"),
    // test runners and compilers of other toolchains: Rust, Jest, RSpec, .NET, pytest,
    // unittest, TypeScript/C# compilers, CMake/Ninja
    m(
        "test-runner",
        3,
        r"^thread '[^']*' panicked at|^test result: FAILED|^---- \S+ stdout ----$|^error: (?:test failed|could not compile)|^\s*● \S|Failure/Error:|^\s*Failed \S.* \[\d|\berror (?:TS|CS|BC|FS)\d{3,}:|^E {3,}\S|^_{3,} .+ _{3,}$|^(?:FAIL|ERROR): \w+ \(|^FAILED: |^not ok \d+\b[^#]*$",
    ),
    m(
        "exception",
        2,
        r"^(?:[\w$]+\.)+[\w$]*(?:Exception|Error|Failure|Fault)\b(?:: |:$|$| at )|^(?:Exception|Error) in thread |^Traceback \(most recent call last\)|^\w*(?:Exception|Error): ",
    ),
    m("caused-by", 2, r"^\s*(?:Caused by|Caused|Suppressed|Also):\s"),
    m("jenkins-failure", 3, r"marked build as failure|^Build step .* failed"),
    m(
        "timeout",
        3,
        r"Process did not finish before .*timeout|[Tt]imed out waiting|error: timed out|\b(?:deadline exceeded|DeadlineExceeded)\b|signal: killed|Job was active longer than specified deadline",
    ),
    m(
        "ci-step-failed",
        3,
        r"Step \S+ failed after|level=(?:error|fatal)\b|\x22level\x22:\s*\x22(?:error|fatal)\x22|npm ERR!|make(?:\[\d+\])?: \*\*\* ",
    ),
    // sanitizer reports (AddressSanitizer, LeakSanitizer, ThreadSanitizer, UBSan)
    m(
        "sanitizer",
        3,
        r"==\d+==\s*(?:ERROR|WARNING): \w*Sanitizer|^(?:ERROR|WARNING): \w*Sanitizer|^SUMMARY: \w*Sanitizer|: runtime error: ",
    ),
    // memory checkers that prefix their report with the process id (Valgrind's `==PID==`)
    m(
        "memcheck",
        3,
        r"^==\d+==\s+(?:Invalid (?:read|write|free)|Conditional jump or move|Use of uninitialised|Mismatched free|Syscall param|Source and destination overlap|\d[\d,]* bytes in [\d,]+ blocks are definitely lost|ERROR SUMMARY: [1-9])",
    ),
    // a process that crashed: signals, aborts, crash reporters' reason and crashed thread
    w(
        "crash",
        3,
        r"Segmentation fault|\bcore dumped\b|\bSIG(?:SEGV|ABRT|BUS|ILL|FPE)\b|^Crash reason:|^Thread \d+ \(crashed\)|\bapplication crashed\b|^Fatal Python error:|A fatal error has been detected|^terminate called after throwing|^Abort(?:ed| trap)\b|stack smashing detected|double free or corruption|exited with signal \d+|\bprocess (?:crashed|died)\b",
    ),
    // linkers: GNU ld, lld, ld64, MSVC link
    m(
        "linker",
        3,
        r"undefined symbol|Undefined symbols for architecture|unresolved external symbol|symbol\(s\) not found for architecture|ld returned \d+ exit status|linker command failed|\berror LNK\d+|multiple definition of|duplicate symbols? for architecture",
    ),
    // a run killed by a time limit, in the words CI systems and harnesses use
    w(
        "timeout-kill",
        3,
        r"\b(?:[Cc]ommand|[Jj]ob|[Tt]ask|[Bb]uild|[Ss]tep|[Tt]ests?|[Pp]rocess|[Rr]un|[Ss]cript|[Ee]xecution|[Oo]peration) timed out\b|\btimed out after\b|\b[Tt]imeout (?:exceeded|expired|reached)\b|\btook longer than \d|\bwithout output\b|\b[Mm]ax(?:imum)? (?:run|execution) ?time (?:exceeded|reached)|\bexceeded the (?:maximum|max) (?:execution|run) time\b|\bkilled by signal\b|\bFailed: Timeout\b|^Killed$",
    ),
    // a status-token verdict (see extract_shape::status_verdict); never matches here
    m("status-verdict", 3, r"[^\s\S]"),
    // a one-word event banner (`+++ Timeout +++`); never matches here
    m("event-banner", 3, r"[^\s\S]"),
    m(
        "assertion",
        2,
        r"[Ee]xpected:? .*(?:but (?:was|got)|got:?|actual)|AssertionError|[Uu]nexpected error|^\s*Expected\b|^\s*(?:to equal|to be|to contain)\b",
    ),
    w(
        "known-cause",
        2,
        r"cannot find symbol|undefined: |flag provided but not defined|unknown flag|hash mismatch|LimitExceeded|security token.+invalid|No space left on device|does not exist\b|[Uu]nable to |[Cc]ould not (?:resolve|find|transfer|create|access)|[Cc]annot (?:access|find|resolve|load)|[Pp]ermission denied|Connection refused|not found\b|undefined reference to|manifest unknown|ImagePullBackOff|ErrImagePull|CrashLoopBackOff|OOMKilled|[Ee]victed",
    ),
    w("keyword", 1, r"(?i)\berror|\bfail|exception|\bfatal\b|\bpanic"),
];

/// Frames and explicit continuations.
const FRAMES: &[&str] = &[
    r"^\s+at \S",
    r"^at [\w$.<>/]+\(",
    r"^\s*\.\.\. \d+ (?:more|common frames omitted)",
    r"^\s+File \x22.*\x22, line \d+",
    r"^\s+/\S+\.go:\d+",
    r"^\s*\S+\.go:\d+ \+0x",
    r"^goroutine \d+ ",
    // Go stack function lines (`k8s.io/x.(*T).f(...)`, `main.main()`, `created by ...`)
    r"^\s*(?:created by )?[A-Za-z_][\w.\-/]*\.[\w.()*\[\]]+\([^()]*\)(?: in goroutine \d+)?$",
    // race report sections
    r"^(?:Previous )?(?:[Rr]ead|[Ww]rite) at 0x[0-9a-f]+ by (?:goroutine \d+|main goroutine):$|^Goroutine \d+ \(\w+\) created at:$",
    r"^\s*(?:symbol|location|required|found|reason):\s",
];

/// Noise: never part of a failure.
const NOISE: &[&str] = &[
    r"^Progress \(\d+\)",
    r"^(?:\[INFO\] )?Download(?:ing|ed) from ",
    r"^(?:\[INFO\] )?Download(?:ing|ed): ",
    r"^\s*\d+\s+[\d.]+[kMG]?\s+\d+\s+[\d.]+[kMG]?\s+\d+\s+\d+\s.*(?:--:--|\d:\d\d:\d\d)",
    r"^\s*% Total\s+% Received",
    r"^\s*Dload\s+Upload",
    r"^(?:remote: )?(?:Receiving|Resolving|Counting|Compressing|Enumerating) (?:objects|deltas)",
    r"^\s*\d+%\s*\|",
    r"^[-=/\\|\s]*$",
    r"^\[command\]",
    r"^(?:Post job cleanup|Cleaning up orphan processes|Terminate orphan process)",
];

/// Boilerplate tails: part of the failure output but never its cause.
const BOILERPLATE: &[&str] = &[
    r"^\[(?:INFO|ERROR|WARNING)\] -{20,}$",
    r"^\[(?:INFO|ERROR)\] BUILD FAILURE",
    r"^\[INFO\] (?:Total time|Finished at|Final Memory)",
    r"^\[ERROR\] COMPILATION ERROR\s*:?\s*$",
    r"^\[(?:INFO|ERROR)\] \d+ errors?\s*$",
    r"^\[(?:INFO|ERROR)\] Reactor Summary",
    r"^\* (?:Try|Get more help at|What went wrong):?",
    r"^> Run with --",
    r"^BUILD FAILED in ",
    r"^FAILURE: Build (?:failed|completed) with",
    r"^\d+ actionable tasks?:",
    r"^(?:##\[error\]|Error: )Process completed with exit code \d+",
    r"^Finished: (?:FAILURE|UNSTABLE|ABORTED|SUCCESS)",
    r"^Sending e-mails to",
    r"^\[WS-CLEANUP\]",
    r"^Archiving artifacts",
    r"^Notifying upstream",
    r"^Recording test results",
    r"^\[(?:INFO|ERROR)\] Run \d+:|^\[INFO\] Results:",
    r"^Ran \d+ tests? in ",
];

/// Verdict lines: the build tool declaring failure. The error output right before a verdict
/// is what made the build fail.
const VERDICTS: &[&str] = &[
    r"^\[(?:INFO|ERROR)\] BUILD FAILURE",
    r"^BUILD FAILED",
    r"^FAILURE: Build (?:failed|completed) with",
    r"^Finished: FAILURE",
    r"Process completed with exit code [1-9]",
    r"^FAIL\s*$",
    r"^make(?:\[\d+\])?: \*\*\* ",
    r"^Error: Process completed",
    r"^\[(?:INFO|ERROR)\] Reactor Summary",
];

/// Level-tagged informational lines that end blocks.
const INFO: &[&str] = &[
    r"^\[(?:INFO|DEBUG|TRACE)\]",
    r"^\[WARN(?:ING)?\]",
    r"^(?:INFO|DEBUG|TRACE|WARN|WARNING)[:\s]",
    r"^> Task :",
    r"^[IWD]\d{4} \d\d:\d\d:\d\d",
    r"^\S+ > \S.*(?:PASSED|SKIPPED)$",
    r"level=(?:info|debug|warning)\b",
    r"^\+ ",
    r"^\s*=== (?:RUN|PAUSE|CONT|NAME)\s",
    r"^\s*--- (?:PASS|SKIP): ",
    r"^ok\s+\S+\s",
];

struct Rules {
    /// Every marker against the whole line, then [`extract_shape::FAILURE_NAMES`] (one
    /// pass over the line).
    markers: RegexSet,
    /// The markers that count the line's own words only, matched again on them (the
    /// others never match here).
    words: RegexSet,
    frames: RegexSet,
    noise: RegexSet,
    boilerplate: RegexSet,
    info: RegexSet,
    verdicts: RegexSet,
    prefix: Regex,
}

/// A pattern that matches nothing.
const NEVER: &str = r"[^\s\S]";

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    Rules {
    markers: RegexSet::new(MARKERS.iter().map(|m| m.pattern).chain([extract_shape::FAILURE_NAMES]))
        .expect("valid markers"),
    words: RegexSet::new(MARKERS.iter().map(|m| if m.words { m.pattern } else { NEVER })).expect("valid markers"),
    frames: RegexSet::new(FRAMES).expect("valid frames"),
    noise: RegexSet::new(NOISE).expect("valid noise"),
    boilerplate: RegexSet::new(BOILERPLATE).expect("valid boilerplate"),
    info: RegexSet::new(INFO).expect("valid info"),
    verdicts: RegexSet::new(VERDICTS).expect("valid verdicts"),
    // GitHub Actions "job<TAB>step<TAB>" + ISO timestamp, bare ISO timestamps, Jenkins
    // timestamper "[2022-01-01T00:00:00.000Z] " and "12:34:56 " prefixes.
    prefix: Regex::new(
        r"^(?:[^\t]*\t[^\t]*\t)?\x{feff}?(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?|\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?\] ?|\[?\d\d:\d\d:\d\d(?:\.\d+)?\]? )",
    )
    .expect("valid prefix regex"),
}
});

/// Clean one raw line for matching: cap, ANSI, CI timestamp prefixes, control bytes.
pub fn clean(raw: &[u8], cap: usize) -> String {
    let s = lines::clean_line(raw, cap);
    let rules = &*RULES;
    match rules.prefix.find(&s) {
        Some(m) if m.end() > 0 => s[m.end()..].to_string(),
        _ => s,
    }
}

fn classify(text: &str) -> (Kind, Option<usize>) {
    let t = text.trim_end();
    if t.trim().is_empty() {
        return (Kind::Blank, None);
    }
    let r = &*RULES;
    if r.noise.is_match(t) {
        return (Kind::Noise, None);
    }
    if r.boilerplate.is_match(t) {
        return (Kind::Boilerplate, None);
    }
    if r.frames.is_match(t) {
        return (Kind::Frame, None);
    }
    if let Some(b) = extract_shape::banner(t) {
        return match b {
            extract_shape::Banner::Section => (Kind::Boilerplate, None),
            extract_shape::Banner::Event => (Kind::Head(3), Some(EVENT_BANNER)),
        };
    }
    let (first, strength, status) = marker_hits(t);
    if matches!(first, Some(RACE | SANITIZER)) {
        // "WARNING: DATA RACE", "WARNING: ThreadSanitizer: …" are definite failures
        // despite their level tag
        return (Kind::Head(3), first);
    }
    if status == Some(extract_shape::Status::Benign) && strength.is_none_or(|s| s < 3) {
        // a result that is no failure (`PASS:`, `XFAIL:`, `CHECK-KNOWN-FAIL | …`)
        return (Kind::Info, None);
    }
    if r.info.is_match(t) {
        // an informational line still heads a block when it states a definite failure
        // ("[WARNING] Error injecting: ..."), not on a bare keyword
        return match strength {
            Some(s) if s >= 2 && !t.starts_with("[INFO]") => (Kind::Head(1), first),
            _ => (Kind::Info, None),
        };
    }
    match strength {
        Some(s) => (Kind::Head(s), first),
        None => (Kind::Plain, None),
    }
}

/// The first marker of a line (it names the line), the strongest one's strength (markers
/// on the whole line, markers on its own words, a status-token verdict) and what its
/// status token says.
fn marker_hits(t: &str) -> (Option<usize>, Option<u8>, Option<extract_shape::Status>) {
    let r = &*RULES;
    let all = r.markers.matches(t);
    let names = all.matched(MARKERS.len());
    let mut hits: Vec<usize> = all.iter().filter(|&i| i < MARKERS.len() && !MARKERS[i].words).collect();
    if all.iter().any(|i| i < MARKERS.len() && MARKERS[i].words) {
        // only the line's own words: identifiers, paths, flags and argument lists blanked
        match extract_shape::words_view(t) {
            Some(v) => hits.extend(r.words.matches(&v).iter()),
            None => hits.extend(all.iter().filter(|&i| i < MARKERS.len() && MARKERS[i].words)),
        }
    }
    let mut strength = hits.iter().map(|&i| MARKERS[i].strength).max();
    let status = extract_shape::status(t, names);
    if let Some(extract_shape::Status::Failed(s)) = status {
        hits.push(STATUS_VERDICT);
        strength = Some(strength.map_or(s, |x| x.max(s)));
    }
    (hits.into_iter().min(), strength, status)
}

/// Mask volatile tokens of a cleaned line for comparison with the passing log.
pub fn mask_line(text: &str) -> String {
    static HEXLIKE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b[0-9a-fA-F]*[0-9][0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\b|\b[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*[0-9][0-9a-fA-F]*\b")
            .expect("valid hex regex")
    });
    static TMP: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"/tmp/[^\s:'\x22]*|/var/folders/[^\s:'\x22]*|_temp/[^\s:'\x22]*").expect("valid tmp regex")
    });
    let t = text.trim();
    let t = TMP.replace_all(t, "/TMP");
    let t = HEXLIKE.replace_all(
        &t,
        |c: &regex::Captures<'_>| {
            if c[0].len() >= 7 {
                "H".to_string()
            } else {
                c[0].to_string()
            }
        },
    );
    let mut out = String::with_capacity(t.len());
    let mut in_digits = false;
    let mut in_space = false;
    for ch in t.chars() {
        if ch.is_ascii_digit() {
            if !in_digits {
                out.push('0');
            }
            in_digits = true;
            in_space = false;
            continue;
        }
        in_digits = false;
        if ch.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
            continue;
        }
        in_space = false;
        out.push(ch);
    }
    out
}

fn hash64(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// Masked-line hashes of a passing log (the only thing kept from it).
pub fn pass_fingerprints(pass: &[u8], cap: usize) -> HashSet<u64> {
    lines::lines(pass).map(|l| hash64(&mask_line(&clean(l.bytes(pass), cap)))).collect()
}

/// What extraction keeps of one line besides its offset (8 bytes).
#[derive(Debug, Clone, Copy)]
struct LineInfo {
    kind: Kind,
    verdict: bool,
    /// Index into [`MARKERS`].
    marker: Option<u8>,
    /// The cleaned text starts with white space.
    indented: bool,
    new: bool,
    /// A `=====` separator line (ends Go race reports).
    sep: bool,
}

/// Bytes a prepared log holds per line: its offset and its class. Selection adds per block
/// found, and excerpts their text and line lists.
pub const PREPARED_BYTES_PER_LINE: usize = std::mem::size_of::<usize>() + std::mem::size_of::<LineInfo>();

struct Block {
    start: usize, // index into lines
    end: usize,   // inclusive
    head_marker: Option<u8>,
    strength: u8,
}

/// Extract failure lines from `fail` (optionally diffed against `pass`), see module docs.
pub fn extract_log(fail: &[u8], pass: Option<&[u8]>, source: &str, cfg: &ExtractConfig) -> LogExtraction {
    let fp = pass.map(|p| pass_fingerprints(p, cfg.match_cap));
    extract_log_with(fail, fp.as_ref(), source, cfg)
}

/// Like [`extract_log`] with the passing log already reduced by [`pass_fingerprints`].
pub fn extract_log_with(fail: &[u8], pass: Option<&HashSet<u64>>, source: &str, cfg: &ExtractConfig) -> LogExtraction {
    extract_prepared(&prepare(fail, pass, cfg.match_cap), source, cfg)
}

/// A failed log split, cleaned and classified (and compared with a passing log): the part
/// of extraction that does not depend on the selection settings, so settings can be
/// compared without redoing it.
///
/// It holds the log (borrowed, or owned with [`prepare_owned`]), each line's offset and
/// class, not the lines' cleaned texts: those are cleaned again when needed.
pub struct PreparedLog<'a> {
    data: Cow<'a, [u8]>,
    /// Offset of each line's first byte.
    starts: Vec<usize>,
    infos: Vec<LineInfo>,
    match_cap: usize,
    with_pass: bool,
}

impl PreparedLog<'_> {
    /// Number of lines of the failed log.
    pub fn total_lines(&self) -> usize {
        self.starts.len()
    }

    /// Cleaned text of line `i` (0-based).
    fn text(&self, i: usize) -> String {
        clean(line_at(&self.data, self.starts[i]), self.match_cap)
    }
}

/// The bytes of the line starting at `start` (terminator excluded).
fn line_at(data: &[u8], start: usize) -> &[u8] {
    let rest = &data[start..];
    &rest[..memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len())]
}

/// Splits, cleans and classifies `fail` (matching the first `match_cap` bytes of each line)
/// and marks the lines absent from the passing log's fingerprints.
pub fn prepare<'a>(fail: &'a [u8], pass: Option<&HashSet<u64>>, match_cap: usize) -> PreparedLog<'a> {
    prepare_data(Cow::Borrowed(fail), pass, match_cap)
}

/// [`prepare`] of a log the prepared log keeps.
pub fn prepare_owned(fail: Vec<u8>, pass: Option<&HashSet<u64>>, match_cap: usize) -> PreparedLog<'static> {
    prepare_data(Cow::Owned(fail), pass, match_cap)
}

fn prepare_data<'a>(data: Cow<'a, [u8]>, pass: Option<&HashSet<u64>>, match_cap: usize) -> PreparedLog<'a> {
    let n = lines::count_lines(&data);
    let mut starts: Vec<usize> = Vec::with_capacity(n);
    let mut infos: Vec<LineInfo> = Vec::with_capacity(n);
    for l in lines::lines(&data) {
        let t = clean(l.bytes(&data), match_cap);
        let (kind, marker) = classify(&t);
        let new = match pass {
            Some(p) => !matches!(kind, Kind::Blank) && !p.contains(&hash64(&mask_line(&t))),
            None => false,
        };
        let tt = t.trim();
        let sep = tt.len() >= 10 && tt.bytes().all(|b| b == b'=');
        starts.push(l.start);
        infos.push(LineInfo {
            kind,
            verdict: RULES.verdicts.is_match(&t),
            marker: marker.and_then(|m| u8::try_from(m).ok()),
            indented: t.len() != t.trim_start().len(),
            new,
            sep,
        });
    }
    let text = |i: usize| clean(line_at(&data, starts[i]), match_cap);
    mark_go_test_output(&text, &mut infos);
    PreparedLog { data, starts, infos, match_cap, with_pass: pass.is_some() }
}

/// Selects the failure lines of a prepared log with `cfg`'s settings.
pub fn extract_prepared(p: &PreparedLog<'_>, source: &str, cfg: &ExtractConfig) -> LogExtraction {
    let text = |i: usize| p.text(i);
    let blocks = find_blocks(&p.infos, cfg);
    let selected = select_blocks(&blocks, &p.infos, &text, p.with_pass, cfg);
    build_result(p.total_lines(), &text, &p.infos, &blocks, &selected, source, cfg, p.with_pass)
}

/// Go test output: what a failing test printed (`t.Error`, `t.Log`, testify's report) comes
/// before its `--- FAIL: Name` line, after its `=== RUN Name` (or `=== CONT`/`=== NAME`).
/// The indented lines in between are the failure's message: they become heads.
fn mark_go_test_output(text: &dyn Fn(usize) -> String, infos: &mut [LineInfo]) {
    const MAX_BACK: usize = 400;
    static FAIL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*--- FAIL: (\S+)").expect("valid go fail regex"));
    static EDGE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:=== (?:RUN|CONT|NAME|PAUSE)\s+|--- (?:PASS|FAIL|SKIP): )(\S+)")
            .expect("valid go edge regex")
    });
    let related = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}/")) || b.starts_with(&format!("{a}/"));
    for i in 0..infos.len() {
        if !matches!(infos[i].marker, Some(m) if MARKERS[usize::from(m)].name == "go-fail") {
            continue;
        }
        let ti = text(i);
        let Some(c) = FAIL.captures(&ti) else { continue };
        let name = c.get(1).map_or("", |m| m.as_str());
        let lo = i.saturating_sub(MAX_BACK);
        let mut j = i;
        let mut found = false;
        while j > lo {
            j -= 1;
            let tj = text(j);
            if let Some(e) = EDGE.captures(&tj) {
                let other = e.get(1).map_or("", |m| m.as_str());
                let is_start = tj.trim_start().starts_with("===");
                if other == name && is_start {
                    found = true;
                    break;
                }
                if !related(other, name) {
                    found = true;
                    break;
                }
            }
        }
        if !found {
            // no start in reach: only the indented run right above the FAIL line
            j = i;
            while j > 0 && infos[j - 1].indented && !matches!(infos[j - 1].kind, Kind::Blank) {
                j -= 1;
            }
            j = j.saturating_sub(1);
        }
        for info in infos.iter_mut().take(i).skip(j + 1) {
            let message = info.indented && matches!(info.kind, Kind::Plain | Kind::Frame | Kind::Head(_));
            if message && !matches!(info.kind, Kind::Head(3)) {
                info.kind = Kind::Head(3);
                info.marker = Some(GO_TEST_OUTPUT as u8);
            }
        }
    }
}

/// How one line was classified (for explaining a selection).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineClass {
    /// 1-based line number.
    pub line: usize,
    /// `blank`, `noise`, `boilerplate`, `head1`..`head3`, `frame`, `info` or `plain`.
    pub kind: String,
    /// Marker name for heads.
    pub marker: Option<String>,
    /// Absent from the passing log (after masking).
    pub new: bool,
    /// Cleaned text.
    pub text: String,
}

/// Classify every line of `fail` (debugging aid: why a line was or was not selected).
pub fn explain(fail: &[u8], pass: Option<&[u8]>, cfg: &ExtractConfig) -> Vec<LineClass> {
    let fp = pass.map(|p| pass_fingerprints(p, cfg.match_cap));
    let p = prepare(fail, fp.as_ref(), cfg.match_cap);
    p.infos
        .iter()
        .enumerate()
        .map(|(i, info)| LineClass {
            line: i + 1,
            kind: match info.kind {
                Kind::Blank => "blank".into(),
                Kind::Noise => "noise".into(),
                Kind::Boilerplate => "boilerplate".into(),
                Kind::Head(s) => format!("head{s}"),
                Kind::Frame => "frame".into(),
                Kind::Info => "info".into(),
                Kind::Plain => "plain".into(),
            },
            marker: info.marker.map(|m| MARKERS[usize::from(m)].name.to_string()),
            new: info.new,
            text: p.text(i),
        })
        .collect()
}

/// Group lines into blocks: each head followed by its continuations (stack frames,
/// indented lines, a few plain lines); the next head starts a new block.
fn find_blocks(infos: &[LineInfo], cfg: &ExtractConfig) -> Vec<Block> {
    const MAX_REPORT: usize = 500;
    let mut blocks = Vec::new();
    let n = infos.len();
    let mut i = 0usize;
    while i < n {
        let Kind::Head(s) = infos[i].kind else {
            i += 1;
            continue;
        };
        let start = i;
        let mut end = i;
        let mut saw_frame = false;
        let mut plain_run = 0usize;
        let mut blanks = 0usize;
        let mut j = i + 1;
        while j < n {
            let li = &infos[j];
            let cont = match li.kind {
                Kind::Head(_) => false,
                Kind::Frame => {
                    saw_frame = true;
                    plain_run = 0;
                    true
                }
                Kind::Plain => {
                    if li.indented {
                        true
                    } else if saw_frame {
                        false
                    } else {
                        plain_run += 1;
                        plain_run <= cfg.max_plain_run
                    }
                }
                Kind::Blank => {
                    blanks += 1;
                    blanks <= 1
                }
                Kind::Noise | Kind::Boilerplate | Kind::Info => false,
            };
            if !cont {
                break;
            }
            if !matches!(li.kind, Kind::Blank) {
                blanks = 0;
                end = j;
            }
            j += 1;
        }
        // a report between two `=====` lines (Go's race detector) is one block
        let after_sep = (0..start).rev().find(|&k| !matches!(infos[k].kind, Kind::Blank)).is_some_and(|k| infos[k].sep);
        if after_sep {
            if let Some(close) = (start + 1..n.min(start + MAX_REPORT)).find(|&k| infos[k].sep) {
                end = end.max(close - 1);
            }
        }
        blocks.push(Block { start, end, head_marker: infos[start].marker, strength: s });
        i = end + 1;
    }
    blocks
}

/// Key used to recognise the same message repeated elsewhere (e.g. a compile error echoed
/// in Maven's final summary): masked text without level tags and indentation.
fn echo_key(text: &str) -> Option<u64> {
    static TAG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:\[(?:ERROR|WARNING|WARN|INFO|FATAL)\]|(?:ERROR|FATAL|Error|error):)?\s*")
            .expect("valid tag regex")
    });
    let t = TAG.replace(text, "");
    let m = mask_line(&t);
    if m.len() < 12 {
        None
    } else {
        Some(hash64(&m))
    }
}

trait FirstPick {
    fn is_none_or_compat(&self, k: usize) -> bool;
}

impl FirstPick for Option<&usize> {
    fn is_none_or_compat(&self, k: usize) -> bool {
        match self {
            None => true,
            Some(&f) => k >= f,
        }
    }
}

/// Runs of blocks separated only by blank or noise lines.
fn block_runs(blocks: &[Block], infos: &[LineInfo]) -> Vec<usize> {
    let mut run = vec![0usize; blocks.len()];
    let mut r = 0usize;
    for k in 1..blocks.len() {
        let gap = &infos[blocks[k - 1].end + 1..blocks[k].start];
        if !gap.iter().all(|l| matches!(l.kind, Kind::Blank | Kind::Noise)) {
            r += 1;
        }
        run[k] = r;
    }
    run
}

fn select_blocks(
    blocks: &[Block],
    infos: &[LineInfo],
    text: &dyn Fn(usize) -> String,
    with_pass: bool,
    cfg: &ExtractConfig,
) -> Vec<bool> {
    if blocks.is_empty() {
        return Vec::new();
    }
    // Without a passing log, a one-off error line is news; a repeated one is background.
    let lone: Vec<bool> = if !with_pass && cfg.lone_errors > 0 {
        let eligible = |b: &Block| b.strength == 2 && (cfg.lone_errors >= 2 || b.head_marker == Some(KLOG_ERROR as u8));
        let keys: Vec<Option<u64>> =
            blocks.iter().map(|b| if eligible(b) { echo_key(&text(b.start)) } else { None }).collect();
        let mut count: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
        for k in keys.iter().flatten() {
            *count.entry(*k).or_insert(0) += 1;
        }
        keys.iter().map(|k| k.is_some_and(|k| count[&k] == 1)).collect()
    } else {
        vec![false; blocks.len()]
    };
    let runs = block_runs(blocks, infos);
    let nruns = runs.last().map_or(0, |r| r + 1);
    let mut run_sel = vec![false; nruns];
    // with a passing log, a selected run starts at its first new block: old blocks before it
    // (known noise) stay out, old blocks after it (the tool's summary of the new error) stay in
    let mut first_pick: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for (k, b) in blocks.iter().enumerate() {
        let lines = &infos[b.start..=b.end];
        let content = lines.iter().filter(|l| !matches!(l.kind, Kind::Blank | Kind::Noise | Kind::Boilerplate)).count();
        let pick = if with_pass {
            let new = lines.iter().filter(|l| l.new).count();
            (infos[b.start].new && b.strength >= 2)
                || (new * 100 >= content * usize::from(cfg.new_share_percent) && new >= cfg.min_new_lines)
        } else {
            b.strength >= cfg.min_strength || lone[k]
        };
        if pick {
            run_sel[runs[k]] = true;
            if with_pass {
                first_pick.entry(runs[k]).or_insert(k);
            }
        }
    }
    if !with_pass {
        // The last run with an error line states the build's own verdict, and the error
        // output right before a verdict line ("BUILD FAILURE", "Finished: FAILURE") caused it.
        if let Some(k) = blocks.iter().rposition(|b| b.strength >= 2) {
            run_sel[runs[k]] = true;
        }
        let mut k = 0usize;
        for (v, li) in infos.iter().enumerate() {
            if !li.verdict {
                continue;
            }
            while k < blocks.len() && blocks[k].end < v {
                k += 1;
            }
            // blocks[..k] end before v; walk back to the last error block
            let Some(last) = blocks[..k].iter().rposition(|b| b.strength >= 2) else {
                continue;
            };
            let gap = &infos[blocks[last].end + 1..v];
            if gap.len() <= cfg.verdict_gap
                && gap.iter().all(|l| {
                    matches!(l.kind, Kind::Blank | Kind::Noise | Kind::Boilerplate | Kind::Info | Kind::Head(1))
                })
            {
                run_sel[runs[last]] = true;
            }
        }
    }
    // A bare keyword (strength 1) does not state a failure; it rides along with its run
    // when `run_min_strength` is 1.
    let mut sel: Vec<bool> = runs
        .iter()
        .enumerate()
        .map(|(k, &r)| {
            run_sel[r]
                && first_pick.get(&r).is_none_or_compat(k)
                && (with_pass || blocks[k].strength >= cfg.run_min_strength)
        })
        .collect();
    // Echoes: an unselected error block whose head repeats inside the selection.
    let mut echo: HashSet<u64> = HashSet::new();
    for (k, b) in blocks.iter().enumerate() {
        if sel[k] {
            for i in b.start..=b.end {
                if let Some(h) = echo_key(&text(i)) {
                    echo.insert(h);
                }
            }
        }
    }
    for (k, b) in blocks.iter().enumerate() {
        if !sel[k] && b.strength >= 2 {
            if let Some(h) = echo_key(&text(b.start)) {
                if echo.contains(&h) {
                    sel[k] = true;
                }
            }
        }
    }
    sel
}

#[allow(clippy::too_many_arguments)]
fn build_result(
    n: usize,
    line_text: &dyn Fn(usize) -> String,
    infos: &[LineInfo],
    blocks: &[Block],
    selected: &[bool],
    source: &str,
    cfg: &ExtractConfig,
    used_pass: bool,
) -> LogExtraction {
    let mut excerpts = Vec::new();
    let mut strengths = Vec::new();
    let mut heads = Vec::new();
    let mut all_lines = Vec::new();
    let mut prev_end: Option<usize> = None;
    for (b, _) in blocks.iter().zip(selected).filter(|(_, s)| **s) {
        // A run killed by a time limit: what ran last comes with the timeout.
        let from = if cfg.timeout_context > 0 && ends_by_time(b.head_marker, &line_text(b.start)) {
            let floor = prev_end.map_or(0, |e| e + 1);
            let mut k = b.start;
            let mut taken = 0;
            while k > floor && taken < cfg.timeout_context {
                match infos[k - 1].kind {
                    Kind::Plain | Kind::Info | Kind::Frame | Kind::Head(1) => {
                        k -= 1;
                        taken += 1;
                    }
                    _ => break,
                }
            }
            k
        } else {
            b.start
        };
        prev_end = Some(b.end);
        // the lines before a timeout are shown with it, not counted as failure lines
        let lines: Vec<usize> = (b.start..=b.end)
            .filter(|&i| !matches!(infos[i].kind, Kind::Blank | Kind::Noise | Kind::Boilerplate | Kind::Info))
            .map(|i| i + 1)
            .collect();
        if lines.is_empty() {
            continue;
        }
        let mut text = String::new();
        let mut text_cut = false;
        for i in from..=b.end {
            let t = line_text(i);
            if text.len() + t.len() + 1 > cfg.max_excerpt_bytes {
                text_cut = true;
                break;
            }
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&t);
        }
        let hash = format!("sha256:{:x}", Sha256::digest(text.as_bytes()));
        all_lines.extend_from_slice(&lines);
        strengths.push(b.strength);
        heads.push(b.start + 1);
        excerpts.push(Excerpt {
            source: source.to_string(),
            line_start: from + 1,
            line_end: b.end + 1,
            context_start: (from + 1).saturating_sub(cfg.context_before).max(1),
            context_end: (b.end + 1 + cfg.context_after).min(n),
            text,
            hash,
            marker: b
                .head_marker
                .map(|m| MARKERS[usize::from(m)].name.to_string())
                .unwrap_or_else(|| "new-lines".to_string()),
            selection: if used_pass && infos[b.start].new { Selection::NewVsPass } else { Selection::Marker },
            first_failure: false,
            lines,
            text_cut,
        });
    }
    // The first failure is the first excerpt headed by more than a bare keyword (a
    // keyword line may ride along with a failure's run, but does not state it).
    let first = strengths.iter().position(|s| *s >= 2).unwrap_or(0);
    if let Some(e) = excerpts.get_mut(first) {
        e.first_failure = true;
    }
    let first_failure_line = heads.get(first).copied();
    if excerpts.len() > cfg.max_excerpts {
        // keep the first failure and the last ones (the build's verdict comes last)
        let keep = cfg.max_excerpts.max(1);
        let tail_from = (excerpts.len() - (keep - 1)).max(first + 1);
        let tail = excerpts.split_off(tail_from);
        let head = excerpts.swap_remove(first);
        excerpts = std::iter::once(head).chain(tail).collect();
    }
    all_lines.sort_unstable();
    all_lines.dedup();
    LogExtraction { excerpts, lines: all_lines, first_failure_line, total_lines: n, used_pass_log: used_pass }
}

/// Whether a failure line says the run itself was ended by a time limit (not a request,
/// a wait or one test that timed out).
fn ends_by_time(marker: Option<u8>, text: &str) -> bool {
    static RUN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"Process did not finish before|Job was active longer than specified deadline|signal: killed|test timed out after")
            .expect("valid timeout regex")
    });
    match marker.map(|m| MARKERS[usize::from(m)].name) {
        Some("timeout-kill") => true,
        Some("event-banner") => text.to_ascii_lowercase().contains("time"),
        Some("timeout" | "go-panic") => RUN.is_match(text),
        _ => false,
    }
}

/// Excerpts of one JUnit failure: the message and the body, as failure text
/// (`message + "\n" + body` when both exist), with the lines that explain it.
pub fn extract_junit(message: &str, body: &str, source: &str, cfg: &ExtractConfig) -> Vec<Excerpt> {
    let text = match (message.trim().is_empty(), body.trim().is_empty()) {
        (false, false) => format!("{message}\n{body}"),
        (false, true) => message.to_string(),
        (true, false) => body.to_string(),
        (true, true) => return Vec::new(),
    };
    let res = extract_log(text.as_bytes(), None, source, cfg);
    if !res.excerpts.is_empty() {
        return res
            .excerpts
            .into_iter()
            .map(|mut e| {
                e.selection = Selection::Junit;
                e
            })
            .collect();
    }
    // No marker: the whole failure text is the evidence.
    let spans = lines::split_lines(text.as_bytes());
    let n = spans.len().max(1);
    let cleaned: Vec<String> = spans.iter().map(|l| clean(l.bytes(text.as_bytes()), cfg.match_cap)).collect();
    let mut t = cleaned.join("\n");
    let text_cut = t.len() > cfg.max_excerpt_bytes;
    if text_cut {
        let mut cut = cfg.max_excerpt_bytes;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
    }
    vec![Excerpt {
        source: source.to_string(),
        line_start: 1,
        line_end: n,
        context_start: 1,
        context_end: n,
        hash: format!("sha256:{:x}", Sha256::digest(t.as_bytes())),
        text: t,
        marker: "junit".to_string(),
        selection: Selection::Junit,
        first_failure: true,
        lines: (1..=n).collect(),
        text_cut,
    }]
}

/// Prow Spyglass's default highlight regex (formats §4).
pub const SPYGLASS_HIGHLIGHT: &str = r"timed out|ERROR:|(FAIL|Failure \[)\b|panic\b|^E\d{4} \d\d:\d\d:\d\d\.\d\d\d]";

/// Fast marker scan over a whole buffer: 1-based numbers of the lines containing a match of
/// `re` (multi-line mode: `^` and `$` match at line boundaries). One regex pass over the
/// buffer; line numbers are counted only between matches, with the crate's convention.
pub fn scan_markers(data: &[u8], re: &BytesRegex) -> Vec<usize> {
    let mut out = Vec::new();
    let mut line = 1usize;
    let mut counted_to = 0usize;
    let mut pos = 0usize;
    while pos <= data.len() {
        let Some(m) = re.find_at(data, pos) else {
            break;
        };
        line += count_terminators(&data[counted_to..m.start()]);
        counted_to = m.start();
        if out.last() != Some(&line) {
            out.push(line);
        }
        // continue after the end of this line
        let next = match memchr::memchr2(b'\n', b'\r', &data[m.start()..]) {
            Some(i) => m.start() + i,
            None => data.len(),
        };
        pos = next.max(m.end()).max(m.start() + 1);
        if pos > data.len() {
            break;
        }
    }
    out
}

/// Streaming [`scan_markers`] over a reader in large blocks with bounded memory; blocks are
/// cut after a line terminator so line numbers stay exact (a `\r\n` pair is never split).
/// Returns the 1-based numbers of matching lines and the number of bytes read.
pub fn scan_reader<R: std::io::Read>(mut reader: R, re: &BytesRegex) -> std::io::Result<(Vec<usize>, u64)> {
    const BLOCK: usize = 8 << 20;
    const MAX_CARRY: usize = 64 << 20;
    let mut buf: Vec<u8> = Vec::with_capacity(BLOCK * 2);
    let mut out = Vec::new();
    let mut base_line = 0usize; // lines completed before buf[0]
    let mut total: u64 = 0;
    let mut eof = false;
    while !eof {
        let start = buf.len();
        buf.resize(start + BLOCK, 0);
        let mut filled = start;
        while filled < buf.len() {
            match reader.read(&mut buf[filled..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        buf.truncate(filled);
        total += (filled - start) as u64;
        // cut after the last '\n', or after a '\r' that is not the last byte
        let cut = if eof {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => i + 1,
                None => match memchr::memrchr(b'\r', &buf[..buf.len().saturating_sub(1)]) {
                    Some(i) => i + 1,
                    None if buf.len() > MAX_CARRY => buf.len(),
                    None => continue,
                },
            }
        };
        let part = &buf[..cut];
        for l in scan_markers(part, re) {
            out.push(base_line + l);
        }
        base_line += count_terminators(part);
        buf.drain(..cut);
    }
    out.dedup();
    Ok((out, total))
}

/// Number of line terminators in `b` (`\r\n` counts once; a `\r` at the end of `b` counts
/// once even if followed by `\n` outside `b`, which callers avoid by cutting at match starts).
fn count_terminators(b: &[u8]) -> usize {
    let nl = memchr::memchr_iter(b'\n', b).count();
    if memchr::memchr(b'\r', b).is_none() {
        return nl;
    }
    let mut lone_cr = 0usize;
    for i in memchr::memchr_iter(b'\r', b) {
        if b.get(i + 1) != Some(&b'\n') {
            lone_cr += 1;
        }
    }
    nl + lone_cr
}

/// Build the multi-line bytes regex for [`scan_markers`] from a line pattern.
pub fn marker_regex(pattern: &str) -> Result<BytesRegex, regex::Error> {
    regex::bytes::RegexBuilder::new(pattern).multi_line(true).crlf(true).unicode(false).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maven_compile_error_block() {
        let log = b"[INFO] Compiling 3 files\n[INFO] ----\n[ERROR] COMPILATION ERROR : \n[ERROR] /a/B.java:[3,13] cannot find symbol\n  symbol:   method x()\n  location: class B\n[INFO] 1 error\n[INFO] BUILD FAILURE\nFinished: FAILURE\n";
        let r = extract_log(log, None, "build", &ExtractConfig::default());
        assert_eq!(r.lines, vec![4, 5, 6]);
        assert_eq!(r.first_failure_line, Some(4));
        assert!(r.excerpts[0].hash.starts_with("sha256:"));
    }

    #[test]
    fn failure_words_inside_names_are_not_failures() {
        let log = b"retry: Calling run_command with args: (['hg', 'pull'],), kwargs: {'error_list': [{'substr': 'not found', 'level': 'error'}]}\n+ ./run.sh --fail-fast IGNORE_ERRORS=1\nCompiling pkg/errors.go\nsetup.cfg ignore_errors=True\nall setup done\n";
        let r = extract_log(log, None, "build", &ExtractConfig::default());
        assert!(r.lines.is_empty(), "{:?}", r.lines);
        assert_eq!(r.first_failure_line, None);
    }

    #[test]
    fn status_tokens_in_any_vocabulary() {
        let log = b"SUITE-PASS | a/one.html | 12ms\nSUITE-KNOWN-FAIL | a/two.html | tracked\nSUITE-UNEXPECTED-FAIL | a/three.html | expected 1, got 2\nRUNNER-CRASH | a/four.html | renderer died\nsummary: 2 unexpected\n";
        let r = extract_log(log, None, "build", &ExtractConfig::default());
        assert_eq!(r.first_failure_line, Some(3));
        assert_eq!(r.lines[..2], [3, 4]);
        assert_eq!(r.excerpts[0].marker, "status-verdict");
    }

    #[test]
    fn a_run_killed_by_time_shows_what_ran_last() {
        let log = b"[setup] kwargs: {'error_list': ['fatal:']}\n[setup] E: temporary failure resolving mirror, retrying\n[setup] done\n[tests] 400 passed\n[tests] running quota_eviction_test.js\n[tests] waiting for the eviction callback\n[harness] command timed out: 3600 seconds without output, attempting to kill\n[harness] exit code -9\n";
        let r = extract_log(log, None, "build", &ExtractConfig::default());
        assert_eq!(r.first_failure_line, Some(7), "{r:?}");
        let e = r.excerpts.iter().find(|e| e.first_failure).unwrap();
        assert_eq!((e.line_start, e.lines.clone()), (4, vec![7, 8]));
        assert!(e.text.starts_with("[tests] 400 passed\n[tests] running quota_eviction_test.js"));
        let none = ExtractConfig { timeout_context: 0, ..ExtractConfig::default() };
        assert_eq!(extract_log(log, None, "build", &none).excerpts[0].line_start, 7);
    }

    #[test]
    fn marker_indexes_name_their_markers() {
        for (i, name) in [
            (RACE, "go-race"),
            (GO_TEST_OUTPUT, "go-test-output"),
            (KLOG_ERROR, "klog-error"),
            (SANITIZER, "sanitizer"),
            (STATUS_VERDICT, "status-verdict"),
            (EVENT_BANNER, "event-banner"),
        ] {
            assert_eq!(MARKERS[i].name, name);
        }
    }

    #[test]
    fn scan_counts_cr_lines() {
        let re = marker_regex(SPYGLASS_HIGHLIGHT).unwrap();
        let data = b"ok\rprogress\r\nERROR: x\nfine\rpanic here\n";
        assert_eq!(scan_markers(data, &re), vec![3, 5]);
    }
}
