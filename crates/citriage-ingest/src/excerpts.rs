//! Failure-line excerpts of a failed build's log, taken at ingest so the store can be
//! searched for the lines that explain a failure.
//!
//! For a build whose result is `FAILURE` or `ERROR`, the build folder's `build-log.txt`
//! (or `build-log.txt.gz`; gzip content is inflated by the source layer either way) is
//! read through the [`ArtifactSource`] and handed to the failure-line extractor of
//! `citriage-patterns` (no passing log). Each excerpt keeps the extractor's line range
//! (1-based, inclusive, counted over the whole log with `\r\n`, lone `\r` and `\n` each
//! ending a line) and its cleaned text, whose k-th line is log line `line_start + k`.
//!
//! Bounds, so one huge log cannot exhaust memory or bloat the store:
//!
//! * a log whose listed size is above [`ExcerptLimits::max_log_bytes`] is not read at all
//!   (a problem on the build says so); a gzip object is listed by its compressed size
//!   and a listing may give no size, so then only the source's own limits apply;
//! * the log is read as a stream ([`ArtifactSource::open`]: neither a mirror's file nor
//!   an HTTP body is ever held whole; a transfer cut off is resumed where it was): only its
//!   first 64 KiB (the binary check) and its last [`ExcerptLimits::tail_bytes`] (and one
//!   64 KiB read) are held, in a ring that is never copied whole, and only that tail is
//!   analysed, starting at the first line that begins inside it. Line numbers stay exact
//!   (the lines before are counted as they pass, not analysed); failures stated only
//!   before the tail are not excerpted;
//! * the tail, the read buffers and the extraction's working set over the tail (each
//!   line's offset and class, [`WORK_BYTES_PER_LINE`] bytes a line in all) are counted
//!   against the process's memory budget for bodies in flight
//!   ([`citriage_sources::http::Hold`]): the tail's room (all of it, or the listed size of
//!   a smaller plain log) and the extraction's (for lines of 64 bytes) before the first
//!   byte is read, the latter corrected once the tail's lines are counted; a log waits for
//!   room as a body does (only a tail of shorter lines may wait at the end, its tail
//!   then not counted while it waits). The tail is at most a quarter of the budget (a
//!   smaller budget analyses less of each log); a tail whose analysis would still need
//!   more than the whole budget (very short lines) is a problem on the build;
//! * excerpts on consecutive lines are joined into one (the extractor opens a new block
//!   at every failure head, so a run of error lines would otherwise take one excerpt
//!   each), as long as the joined text stays within [`ExcerptLimits::max_excerpt_bytes`];
//! * at most [`ExcerptLimits::max_excerpts`] excerpts and
//!   [`ExcerptLimits::max_total_bytes`] of text are kept per build: the first failure of
//!   the analysed part always, then the last ones (they carry the build's verdict);
//! * each excerpt's text is cut to [`ExcerptLimits::max_excerpt_bytes`] at a line
//!   boundary (`line_end` then names the last line kept);
//! * each line is matched on its first 4 KiB only (the extractor's cap).
//!
//! A missing log gives no excerpts and no problem. A log that cannot be read (corrupt or
//! truncated gzip, too large for the source, an I/O error, HTTP 4xx) or that looks binary
//! is recorded in the build's problems with its reason; ingest goes on. Transient source
//! errors (network, HTTP 429/5xx after retries) fail the build like any other artifact,
//! so a later run fetches it again.

use citriage_model::build::LogExcerpt;
use citriage_patterns::extract::{self, ExtractConfig};
use citriage_patterns::lines;
use citriage_sources::artifacts::ArtifactSource;
use citriage_sources::http::{self, Hold, HttpError};
use citriage_sources::SourceError;
use std::collections::VecDeque;

/// The log files read, by preference, relative to the build folder.
pub const LOG_FILES: [&str; 2] = ["build-log.txt", "build-log.txt.gz"];

/// Bytes at the start of a log inspected to tell text from binary content.
const BINARY_SAMPLE: usize = 64 * 1024;

/// Bytes read from a log stream at a time.
const CHUNK: usize = 64 * 1024;

/// Bytes of the memory budget held per line of the analysed tail for its extraction: the
/// prepared log's offset and class, and room for the blocks, their selection and their
/// line numbers when a block spans a few lines. The excerpts' texts come on top, and a
/// tail whose every line opens a block takes more (see the module docs).
pub const WORK_BYTES_PER_LINE: usize = extract::PREPARED_BYTES_PER_LINE + 16;

/// Line length assumed for the extraction's share held before a log is read (the share is
/// corrected once the tail's lines are counted).
const ASSUMED_LINE_BYTES: usize = 64;

/// Share of bytes in the sample (control bytes other than tab and escape, line ends
/// included, and invalid UTF-8) above which a log is treated as binary. A text log's
/// line ends make up a few percent.
const BINARY_RATIO: f32 = 0.3;

/// Bounds on what is read and stored per build (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExcerptLimits {
    /// At most this many excerpts per build; the first failure is always kept.
    pub max_excerpts: usize,
    /// Excerpt text is cut to this many bytes at a line boundary.
    pub max_excerpt_bytes: usize,
    /// At most this many bytes of excerpt text per build (the first failure is kept
    /// even when it alone is larger).
    pub max_total_bytes: usize,
    /// Logs listed larger than this are not read.
    pub max_log_bytes: u64,
    /// Only this many trailing bytes of a log are analysed (a streamed log: at most a
    /// quarter of the process's memory budget).
    pub tail_bytes: usize,
}

impl Default for ExcerptLimits {
    fn default() -> Self {
        ExcerptLimits {
            max_excerpts: 20,
            max_excerpt_bytes: 8 * 1024,
            max_total_bytes: 64 * 1024,
            max_log_bytes: 256 << 20,
            tail_bytes: 16 << 20,
        }
    }
}

/// True for the results whose logs are excerpted.
pub fn wants_excerpts(result: Option<&str>) -> bool {
    matches!(result, Some("FAILURE" | "ERROR"))
}

/// What reading one build's log gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogRead {
    pub excerpts: Vec<LogExcerpt>,
    /// Why the log could not be excerpted, naming it (at most one entry).
    pub problems: Vec<String>,
}

/// Reads the log of the build folder `base` (its objects as listed, paths from the bucket
/// root, with sizes) and extracts its failure lines. Only transient source errors are
/// returned as errors; any other reason the log cannot be used becomes a problem.
pub fn read_build_log(
    src: &dyn ArtifactSource,
    base: &str,
    listed: &[(String, Option<u64>)],
    limits: &ExcerptLimits,
) -> Result<LogRead, SourceError> {
    let base = base.trim_end_matches('/');
    let found = LOG_FILES.iter().find_map(|name| {
        let full = format!("{base}/{name}");
        listed.iter().find(|(p, _)| *p == full).map(|(_, size)| (*name, full, *size))
    });
    let Some((name, full, size)) = found else {
        return Ok(LogRead::default());
    };
    if let Some(size) = size.filter(|s| *s > limits.max_log_bytes) {
        return Ok(LogRead {
            excerpts: Vec::new(),
            problems: vec![format!(
                "{}: {size} bytes, larger than the {}-byte limit for log excerpts; not read",
                src.locator(&full),
                limits.max_log_bytes
            )],
        });
    }
    let stream = match src.open(&full) {
        Ok(Some(b)) => b,
        // Listed but gone by now: the same as no log.
        Ok(None) => return Ok(LogRead::default()),
        Err(e) if is_transient(&e) => return Err(e),
        Err(e) => return Ok(LogRead { excerpts: Vec::new(), problems: vec![format!("{e}; no log excerpts")] }),
    };
    // A plain log's listed size bounds its tail; a gzip object's does not.
    let plain = size.filter(|_| !name.ends_with(".gz"));
    Ok(match excerpts_from_stream_sized(stream, plain, name, limits) {
        Ok(excerpts) => LogRead { excerpts, problems: Vec::new() },
        // What the source says about a log it could not give to its end (a transfer cut
        // for good, a bomb, corrupt gzip), as if the log had been read whole.
        Err(StreamError::Read(e)) => match citriage_sources::source_error(e) {
            Ok(e) if is_transient(&e) => return Err(e),
            Ok(e) => LogRead { excerpts: Vec::new(), problems: vec![format!("{e}; no log excerpts")] },
            Err(e) => LogRead {
                excerpts: Vec::new(),
                problems: vec![format!("{}: cannot be read: {e}; no log excerpts", src.locator(&full))],
            },
        },
        Err(StreamError::Log(reason)) => {
            LogRead { excerpts: Vec::new(), problems: vec![format!("{}: {reason}", src.locator(&full))] }
        }
    })
}

/// Why a log read as a stream gives no excerpts.
#[derive(Debug)]
pub enum StreamError {
    /// The stream failed (corrupt gzip, over the size limit, I/O).
    Read(std::io::Error),
    /// The log is not excerpted (binary content).
    Log(String),
}

/// [`excerpts_from_log`] of a log read as a stream: only its first bytes (the binary
/// check) and its last [`ExcerptLimits::tail_bytes`] (and a little more) are held,
/// the lines before them counted as they pass, so the excerpts are exactly those of
/// the whole log whatever its size.
pub fn excerpts_from_stream(
    r: impl std::io::Read,
    source: &str,
    limits: &ExcerptLimits,
) -> Result<Vec<LogExcerpt>, StreamError> {
    excerpts_from_stream_sized(r, None, source, limits)
}

/// [`excerpts_from_stream`] of a stream of about `size` bytes, if known. The budget for
/// the tail is held before the first byte is read (for all of it, or for `size` bytes
/// when that is less), so a log never waits for room while holding a part of its tail
/// uncounted; only the extraction's share, known once the tail's lines are counted, is
/// asked for at the end.
pub fn excerpts_from_stream_sized(
    mut r: impl std::io::Read,
    size: Option<u64>,
    source: &str,
    limits: &ExcerptLimits,
) -> Result<Vec<LogExcerpt>, StreamError> {
    // A tail is at most a quarter of the budget, so that a few logs fit in it at once.
    let share = usize::try_from(http::memory_budget() / 4).unwrap_or(usize::MAX);
    let tail = limits.tail_bytes.min(share).max(1);
    // The last tail + 1 bytes (the byte before the tail tells whether a line starts with
    // it), or one more to keep a `\r\n` whole, and one read.
    let most = tail + 2 + CHUNK;
    let over = |budget: u64| {
        StreamError::Log(format!(
            "its last {tail} bytes and their analysis need more than the whole {budget}-byte memory budget; no log excerpts"
        ))
    };
    let buffers = (CHUNK + BINARY_SAMPLE) as u64;
    let ring = size.map_or(most, |n| usize::try_from(n).unwrap_or(usize::MAX).saturating_add(CHUNK).min(most));
    let assumed_work = (ring / ASSUMED_LINE_BYTES).saturating_mul(WORK_BYTES_PER_LINE);
    let mut hold = Hold::default();
    hold.grow_to(buffers + ring as u64 + assumed_work as u64).map_err(over)?;
    // Allocated whole at once (pages are only touched as the ring fills): rings of one
    // size are mapped and unmapped as a whole by the allocator, not kept in a thread's
    // heap after the log is done, as buffers grown by doubling would be.
    let mut keep: VecDeque<u8> = VecDeque::with_capacity(ring);
    let mut head: Vec<u8> = Vec::new();
    let mut dropped_lines = 0usize;
    let mut dropped = false;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(StreamError::Read(e)),
        };
        if head.len() < BINARY_SAMPLE {
            let take = n.min(BINARY_SAMPLE - head.len());
            head.extend_from_slice(&chunk[..take]);
        }
        let need = keep.len() + n;
        if need > keep.capacity() {
            // Grown by doubling up to the ring's size, counted before it is allocated.
            let want = keep.capacity().saturating_mul(2).min(most).max(need);
            // More than the size said (or than held): counted before it is allocated.
            hold.grow_to(buffers + want.max(ring) as u64).map_err(over)?;
            keep.reserve_exact(want - keep.len());
            hold.grow_to(buffers + keep.capacity().max(ring) as u64).map_err(over)?;
        }
        keep.extend(&chunk[..n]);
        if keep.len() > tail + 1 {
            // Drop all but the last tail + 1 bytes, never between `\r` and `\n`.
            let mut p = keep.len() - tail - 1;
            if keep[p - 1] == b'\r' && keep[p] == b'\n' {
                p -= 1;
            }
            if p > 0 {
                dropped_lines += front_line_ends(&keep, p);
                dropped = true;
                keep.drain(..p);
            }
        }
    }
    drop(chunk);
    if let Some(reason) = binary(&head) {
        return Err(StreamError::Log(reason));
    }
    drop(head);
    let held = keep.capacity() as u64;
    let keep = keep.make_contiguous();
    let (skipped_lines, window) = if dropped {
        let cut = window_start(keep, keep.len() - tail);
        (dropped_lines + line_ends(&keep[..cut]), &keep[cut..])
    } else {
        tail_window(keep, tail)
    };
    // The read buffers are gone; the extraction's working set is counted instead.
    let work = lines::count_lines(window).saturating_mul(WORK_BYTES_PER_LINE) as u64;
    let total = held.saturating_add(work);
    if total <= hold.bytes() {
        hold.shrink_to(total);
    } else {
        hold.grow_to(total).map_err(over)?;
    }
    Ok(excerpts_of_window(window, skipped_lines, source, limits))
}

/// Lines ended in the first `p` bytes of `keep` (`p` never between `\r` and `\n`).
fn front_line_ends(keep: &VecDeque<u8>, p: usize) -> usize {
    let (a, b) = keep.as_slices();
    let a = &a[..p.min(a.len())];
    let b = &b[..p - a.len()];
    // A `\r\n` split between the two halves is one line end, not two.
    let split = a.last() == Some(&b'\r') && b.first() == Some(&b'\n');
    line_ends(a) + line_ends(b) - usize::from(split)
}

/// Lines ended in `data` (a last line without its end is not counted).
fn line_ends(data: &[u8]) -> usize {
    let n = lines::count_lines(data);
    if data.last().is_some_and(|b| !matches!(b, b'\n' | b'\r')) {
        n - 1
    } else {
        n
    }
}

/// Why a log's first bytes say it is not text, if they do.
fn binary(sample: &[u8]) -> Option<String> {
    let ratio = lines::binary_ratio(sample);
    (ratio > BINARY_RATIO).then(|| {
        format!(
            "looks binary ({:.0}% of its first {} bytes are control bytes or invalid UTF-8); no log excerpts",
            ratio * 100.0,
            sample.len()
        )
    })
}

/// Errors worth a later retry (network, HTTP 429/5xx); anything else about a log is
/// its own problem and will not change on a rerun.
fn is_transient(e: &SourceError) -> bool {
    match e {
        SourceError::Transport { .. } => true,
        SourceError::Http { status, .. } => *status == 429 || *status >= 500,
        // A spent retry budget or a long rate limit may pass; a refused redirect will not.
        SourceError::Refused(h) => {
            matches!(
                h,
                HttpError::BudgetSpent { .. } | HttpError::WaitTooLong { .. } | HttpError::DeadlinePassed { .. }
            )
        }
        SourceError::Io { .. }
        | SourceError::Gzip { .. }
        | SourceError::TooLarge { .. }
        | SourceError::UnsafeName { .. }
        | SourceError::Inflated { .. }
        | SourceError::OverBudget { .. } => false,
    }
}

/// Failure-line excerpts of a whole log's bytes (`source`: its path relative to the build
/// folder). Pure; `Err` says why the log is not excerpted (binary content).
pub fn excerpts_from_log(bytes: &[u8], source: &str, limits: &ExcerptLimits) -> Result<Vec<LogExcerpt>, String> {
    if let Some(reason) = binary(&bytes[..bytes.len().min(BINARY_SAMPLE)]) {
        return Err(reason);
    }
    let (skipped_lines, window) = tail_window(bytes, limits.tail_bytes);
    Ok(excerpts_of_window(window, skipped_lines, source, limits))
}

/// The excerpts of the analysed part of a log, after `skipped_lines` lines.
fn excerpts_of_window(window: &[u8], skipped_lines: usize, source: &str, limits: &ExcerptLimits) -> Vec<LogExcerpt> {
    // Every block of the window, uncapped in number: joining and capping happen below.
    let cfg = ExtractConfig {
        max_excerpts: usize::MAX,
        max_excerpt_bytes: limits.max_excerpt_bytes.max(1),
        ..ExtractConfig::default()
    };
    let found = extract::extract_log(window, None, source, &cfg);
    // (first line, last line, text) with lines local to the window.
    let mut runs: Vec<(usize, usize, String)> = Vec::with_capacity(found.excerpts.len());
    // The run holding the first failure (bare keyword lines may come before it).
    let mut first_run = 0;
    for e in found.excerpts {
        let first = e.first_failure;
        let mut text = e.text;
        if text.is_empty() {
            // The block's first line alone is longer than the byte cap: keep its start.
            text = first_line_text(window, e.line_start, cfg.match_cap);
            truncate_at_char(&mut text, cfg.max_excerpt_bytes);
        }
        // The text may stop before the block does (byte cap): name the lines it holds.
        let line_end = e.line_end.min(e.line_start + text.matches('\n').count());
        match runs.last_mut() {
            Some(last) if last.1 + 1 == e.line_start && last.2.len() + 1 + text.len() <= cfg.max_excerpt_bytes => {
                last.1 = line_end;
                last.2.push('\n');
                last.2.push_str(&text);
            }
            _ => runs.push((e.line_start, line_end, text)),
        }
        if first {
            first_run = runs.len() - 1;
        }
    }
    let runs = runs.split_off(first_run.min(runs.len()));
    let mut out = Vec::new();
    for (start, end, text) in cap(runs, limits.max_excerpts.max(1), limits.max_total_bytes) {
        let (Ok(line_start), Ok(line_end)) = (u32::try_from(skipped_lines + start), u32::try_from(skipped_lines + end))
        else {
            continue;
        };
        out.push(LogExcerpt { source: source.to_string(), line_start, line_end, text });
    }
    out
}

/// Keeps the first excerpt (the first failure's), then as many of the last ones as fit
/// in `max` excerpts and `max_bytes` of text; log order is kept.
fn cap(mut runs: Vec<(usize, usize, String)>, max: usize, max_bytes: usize) -> Vec<(usize, usize, String)> {
    if runs.is_empty() {
        return runs;
    }
    let rest = runs.split_off(1);
    let mut budget = max_bytes.saturating_sub(runs[0].2.len());
    let mut tail = Vec::new();
    for r in rest.into_iter().rev() {
        if tail.len() + 1 >= max || r.2.len() > budget {
            break;
        }
        budget -= r.2.len();
        tail.push(r);
    }
    runs.extend(tail.into_iter().rev());
    runs
}

/// The part of `bytes` analysed: at most the last `tail` bytes, starting after the first
/// line end found in them (so no line is analysed from its middle unless one line spans
/// the whole tail), with the number of lines before it.
fn tail_window(bytes: &[u8], tail: usize) -> (usize, &[u8]) {
    if bytes.len() <= tail {
        return (0, bytes);
    }
    let cut = window_start(bytes, bytes.len() - tail);
    (line_ends(&bytes[..cut]), &bytes[cut..])
}

/// Where the analysed part starts for a tail that starts at `from` (> 0): after the
/// first line end at or after it.
fn window_start(bytes: &[u8], from: usize) -> usize {
    let mut cut = from;
    // A cut right after a `\r` whose `\n` follows would split one line end in two.
    if from > 0 && bytes[from - 1] == b'\r' && bytes[from] == b'\n' {
        cut = from + 1;
    } else if from > 0 && !matches!(bytes[from - 1], b'\n' | b'\r') {
        // Mid-line: start at the next line.
        if let Some(i) = bytes[from..].iter().position(|b| matches!(b, b'\n' | b'\r')) {
            let at = from + i;
            cut = at + 1;
            if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
                cut += 1;
            }
        }
    }
    cut
}

/// The cleaned text of 1-based line `n` of `data`.
fn first_line_text(data: &[u8], n: usize, cap: usize) -> String {
    lines::lines(data).nth(n.saturating_sub(1)).map(|l| extract::clean(l.bytes(data), cap)).unwrap_or_default()
}

fn truncate_at_char(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_window_keeps_line_numbers() {
        let log = b"one\r\ntwo\rthree\nfour\n";
        // Every cut point gives a window whose first line has the number it has in the log.
        let all: Vec<String> = lines::lines(log).map(|l| String::from_utf8_lossy(l.bytes(log)).into_owned()).collect();
        for tail in 1..=log.len() + 2 {
            let (before, w) = tail_window(log, tail);
            let first = lines::lines(w).next().map(|l| String::from_utf8_lossy(l.bytes(w)).into_owned());
            if let Some(first) = first {
                assert!(
                    all[before].ends_with(&first),
                    "tail {tail}: line {} is {:?}, window starts {first:?}",
                    before + 1,
                    all[before]
                );
            }
            assert!(w.len() <= tail, "tail {tail}: window of {} bytes", w.len());
        }
        assert_eq!(tail_window(log, 6), (3, &b"four\n"[..]));
        assert_eq!(tail_window(log, 100), (0, &log[..]));
    }

    #[test]
    fn excerpt_lines_are_absolute_and_text_matches() {
        let mut log = String::new();
        for i in 0..2000 {
            log.push_str(&format!("I0101 00:00:00.000000 step {i} ok\n"));
        }
        log.push_str("--- FAIL: TestThing (1.00s)\n    thing_test.go:12: boom\n");
        let limits = ExcerptLimits { tail_bytes: 500, ..ExcerptLimits::default() };
        let ex = excerpts_from_log(log.as_bytes(), "build-log.txt", &limits).unwrap();
        let first = ex.first().expect("an excerpt");
        assert_eq!(first.line_start, 2001);
        assert!(first.text.starts_with("--- FAIL: TestThing"), "{first:?}");
        let full = excerpts_from_log(log.as_bytes(), "build-log.txt", &ExcerptLimits::default()).unwrap();
        assert_eq!(full, ex, "the tail holds the failure, so the window changes nothing");
    }

    #[test]
    fn stored_excerpts_start_at_the_first_failure() {
        // A spec title naming "fail" rides along with the failure's run but is not it.
        let log =
            b"[sig-x] should fail scheduling on tainted nodes\n-----\n--- FAIL: TestA (0.1s)\n    a_test.go:3: boom\n";
        let ex = excerpts_from_log(log, "build-log.txt", &ExcerptLimits::default()).unwrap();
        assert_eq!(ex.first().map(|e| e.line_start), Some(3), "{ex:?}");
    }

    #[test]
    fn consecutive_blocks_are_joined_and_caps_keep_first_and_last() {
        // Four heads in a row: one excerpt.
        let log = b"+ make\n--- FAIL: TestA (0.1s)\nE0101 00:00:00.000000 1 x.go:1] boom\nFAIL\tpkg\t0.2s\n";
        let ex = excerpts_from_log(log, "build-log.txt", &ExcerptLimits::default()).unwrap();
        assert_eq!(ex.len(), 1, "{ex:?}");
        assert_eq!((ex[0].line_start, ex[0].line_end), (2, 4));
        assert_eq!(ex[0].text.lines().count(), 3);
        // Thirty separate failures: the first and the last ones within the caps.
        let mut log = String::new();
        for i in 1..=30 {
            log.push_str(&format!("--- FAIL: Test{i} (0.1s)\nI0101 00:00:00.000000 1 x.go:1] between\n"));
        }
        let limits = ExcerptLimits { max_excerpts: 5, ..ExcerptLimits::default() };
        let ex = excerpts_from_log(log.as_bytes(), "build-log.txt", &limits).unwrap();
        let starts: Vec<u32> = ex.iter().map(|e| e.line_start).collect();
        assert_eq!(starts, vec![1, 53, 55, 57, 59]);
        let budget = "--- FAIL: Test1 (0.1s)".len() + 2 * "--- FAIL: Test30 (0.1s)".len();
        let limits = ExcerptLimits { max_total_bytes: budget, ..ExcerptLimits::default() };
        let ex = excerpts_from_log(log.as_bytes(), "build-log.txt", &limits).unwrap();
        let names: Vec<&str> = ex.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(names, vec!["--- FAIL: Test1 (0.1s)", "--- FAIL: Test29 (0.1s)", "--- FAIL: Test30 (0.1s)"]);
        // A text cut at the byte cap names only the lines it holds.
        let mut log = String::from("panic: boom\n");
        for i in 0..100 {
            log.push_str(&format!("\tframe{i}.go:{i} +0x1\n"));
        }
        let limits = ExcerptLimits { max_excerpt_bytes: 200, ..ExcerptLimits::default() };
        let ex = excerpts_from_log(log.as_bytes(), "build-log.txt", &limits).unwrap();
        assert!(ex[0].text.len() <= 200);
        assert_eq!(ex[0].line_end - ex[0].line_start + 1, ex[0].text.lines().count() as u32);
    }

    #[test]
    fn binary_is_refused() {
        let junk: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 32) as u8).collect();
        let err = excerpts_from_log(&junk, "build-log.txt", &ExcerptLimits::default()).unwrap_err();
        assert!(err.contains("binary"), "{err}");
    }
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    /// A log of `n` lines with failures here and there, line ends of every kind.
    fn log(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = Vec::new();
        for i in 0..n {
            let line = match next() % 9 {
                0 => format!("--- FAIL: TestThing{i} (0.{}s)", next() % 10),
                1 => format!("panic: runtime error: index out of range [{i}]"),
                2 => format!("E1126 12:00:00.000000 {i} controller.go:42] failed to sync: timeout"),
                _ => format!("I1126 12:00:00 line {i} {}", "x".repeat((next() % 200) as usize)),
            };
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(match next() % 7 {
                0 => b"\r\n",
                1 => b"\r",
                _ => b"\n",
            });
        }
        out
    }

    #[test]
    fn a_streamed_log_gives_the_excerpts_of_the_whole_log() {
        for seed in 1..6u64 {
            let bytes = log(seed, 3000 + seed as usize * 700);
            for tail in [1usize, 100, 5000, 70_000, 200_000, 10 << 20] {
                let limits = ExcerptLimits { tail_bytes: tail, ..ExcerptLimits::default() };
                let whole = excerpts_from_log(&bytes, "build-log.txt", &limits).unwrap();
                let streamed = excerpts_from_stream(&bytes[..], "build-log.txt", &limits).unwrap();
                assert_eq!(streamed, whole, "seed {seed}, tail {tail}");
            }
        }
    }

    #[test]
    fn a_binary_stream_and_a_failing_stream_are_named() {
        let e = excerpts_from_stream(&[0u8, 1, 2, 3, 0xff, 0xfe][..], "build-log.txt", &ExcerptLimits::default());
        assert!(matches!(e, Err(StreamError::Log(r)) if r.contains("looks binary")));
        struct Broken;
        impl std::io::Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("not valid gzip"))
            }
        }
        let e = excerpts_from_stream(Broken, "build-log.txt", &ExcerptLimits::default());
        assert!(matches!(e, Err(StreamError::Read(e)) if e.to_string().contains("gzip")));
    }
}
