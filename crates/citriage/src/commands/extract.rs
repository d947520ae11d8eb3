//! `citriage extract`: the lines that explain one build's failure (build log and
//! JUnit), with line ranges and content hashes, preferring lines absent from a passing
//! build's log.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::extract::ExtractRequest;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

/// The lines that explain one build's failure (build log and JUnit), with 1-based
/// line ranges and content hashes; prefers lines absent from a passing build's log.
#[derive(Args, Debug)]
pub struct ExtractArgs {
    /// A build folder (with build-log.txt and artifacts/), a log file, or with --mirror a
    /// bucket path such as logs/<job>/<id>.
    pub build: String,
    /// A local mirror of the bucket; the passing build is then found through the store.
    /// Default: none (the build is a local folder).
    #[arg(long, value_name = "DIR")]
    pub mirror: Option<PathBuf>,
    /// The bucket (for evidence links with --mirror).
    #[arg(long, default_value = "kubernetes-ci-logs")]
    pub bucket: String,
    /// A passing build's folder or log to diff against.
    /// Default: none.
    #[arg(long, value_name = "DIR|FILE")]
    pub pass: Option<PathBuf>,
    /// Show everything: every excerpt with all its lines (the text output otherwise shows
    /// 20 excerpts of at most 12 lines and says what it left out), and excerpt texts over
    /// 64 KiB in full in the JSON output too. Extraction itself is never capped.
    #[arg(long)]
    pub all: bool,
    /// Print only the build log's failure line numbers as ranges (`a-b`, one per line),
    /// the format CiDiff-style scorers read.
    #[arg(long, conflicts_with = "all")]
    pub lines: bool,
}

/// Runs `citriage extract`.
pub fn exec(ctx: &Context, a: &ExtractArgs) -> Result<(), Failure> {
    let req = ExtractRequest {
        build: a.build.clone(),
        mirror: a.mirror.clone(),
        bucket: a.bucket.clone(),
        pass: a.pass.clone(),
        all: a.all,
    };
    // The passing build is looked up in the store when there is one.
    let store = if req.wants_store() && ctx.db_location().exists() { Some(ctx.open_existing_store()?) } else { None };
    let x = citriage_app::extract::extract(store.as_ref(), &req)?;
    let excerpts = &x.excerpts;
    if a.lines {
        for (lo, hi) in ranges(&x.lines) {
            if lo == hi {
                outln!("{lo}");
            } else {
                outln!("{lo}-{hi}");
            }
        }
        return Ok(());
    }
    let texts_cut = excerpts.iter().filter(|e| e.text_cut).count();
    if ctx.json() {
        print_json(&json!({
            "build": x.source, "log": x.log.as_ref().map(|p| p.display().to_string()),
            "passing_log": x.passing_log.as_ref().map(|p| p.display().to_string()), "used_passing_log": x.used_passing_log,
            "first_failure_line": x.first_failure_line, "total_lines": x.total_lines,
            "lines": x.lines, "junit_failures": x.junit_failures, "excerpts": excerpts,
            "texts_cut": texts_cut,
            "cut_note": (texts_cut > 0).then(|| format!(
                "{texts_cut} excerpt text(s) stop at {} bytes (\"text_cut\": true; their line ranges and \"lines\" are complete); --all prints them in full",
                x.max_excerpt_bytes
            )),
        }));
        return Ok(());
    }
    outln!(
        "{}: {} excerpt(s), {} failure line(s) of {} in the build log{}; first failure at line {}",
        x.source,
        excerpts.len(),
        x.lines.len(),
        x.total_lines,
        if x.used_passing_log { " (lines absent from the passing log preferred)" } else { " (no passing log)" },
        x.first_failure_line.map(|l| l.to_string()).unwrap_or_else(|| "?".into())
    );
    let (show, line_cap) = if a.all { (excerpts.len(), usize::MAX) } else { (SHOW_EXCERPTS, SHOW_LINES) };
    let shown = display_selection(excerpts.len(), show);
    let mut lines_cut = 0usize;
    for (k, e) in excerpts.iter().enumerate() {
        if !shown[k] {
            continue;
        }
        if k > 0 && !shown[k - 1] {
            outln!("\n    ... {} excerpt(s) not shown ...", (0..k).rev().take_while(|&i| !shown[i]).count());
        }
        outln!("\n{}:{}-{}  {}", e.source, e.line_start, e.line_end, e.hash);
        let n = e.text.lines().count();
        for l in e.text.lines().take(line_cap) {
            outln!("    {l}");
        }
        if n > line_cap {
            lines_cut += 1;
            outln!("    ... {} more line(s) ...", n - line_cap);
        }
        if e.text_cut {
            outln!("    ... text stops at {} bytes (lines up to {}) ...", x.max_excerpt_bytes, e.line_end);
        }
    }
    let hidden = shown.iter().filter(|s| !**s).count();
    if hidden > 0 || lines_cut > 0 || texts_cut > 0 {
        outln!(
            "\nOutput cut: {} of {} excerpt(s) shown, {} shown in part. To see all of it: --all, or --format json (every excerpt and failure line); --lines prints the line numbers only.",
            excerpts.len() - hidden,
            excerpts.len(),
            lines_cut + texts_cut
        );
    }
    Ok(())
}

/// Excerpts shown in the text output (at most this many, unless `--all`).
const SHOW_EXCERPTS: usize = 20;
/// Lines shown per excerpt in the text output (unless `--all`).
const SHOW_LINES: usize = 12;

/// Which of `n` excerpts the text output shows when at most `max` are shown: the first
/// (the first failure) and the last ones (the build's verdict comes last).
fn display_selection(n: usize, max: usize) -> Vec<bool> {
    if n <= max {
        return vec![true; n];
    }
    let max = max.max(1);
    (0..n).map(|k| k == 0 || k >= n - (max - 1)).collect()
}

/// Sorted line numbers as inclusive ranges.
fn ranges(lines: &[usize]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &l in lines {
        match out.last_mut() {
            Some(r) if r.1 + 1 == l => r.1 = l,
            Some(r) if r.1 >= l => {}
            _ => out.push((l, l)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_display_selection() {
        assert_eq!(ranges(&[1, 2, 3, 7, 9, 10]), vec![(1, 3), (7, 7), (9, 10)]);
        assert!(ranges(&[]).is_empty());
        assert_eq!(display_selection(3, 20), vec![true; 3]);
        let s = display_selection(5, 3);
        assert_eq!(s, vec![true, false, false, true, true]);
    }
}
