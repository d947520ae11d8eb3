//! `citriage extract`: the lines that explain one build's failure (build log and
//! JUnit), with line ranges and content hashes, preferring lines absent from a passing
//! build's log.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_patterns::extract::{extract_junit, extract_log, Excerpt, ExtractConfig};
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};

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

fn read_maybe(path: &Path) -> Result<Option<Vec<u8>>, Failure> {
    if !path.exists() {
        return Ok(None);
    }
    citriage_sources::read(&path.display().to_string(), &Default::default())
        .map(|f| Some(f.bytes.into_vec()))
        .map_err(|e| Failure::input(e.to_string()))
}

fn find_log(dir: &Path) -> Option<PathBuf> {
    ["build-log.txt", "build-log.txt.gz"].iter().map(|n| dir.join(n)).find(|p| p.exists())
}

/// Runs `citriage extract`.
pub fn exec(ctx: &Context, a: &ExtractArgs) -> Result<(), Failure> {
    let dir = match &a.mirror {
        Some(m) => m.join(a.build.trim_start_matches('/')),
        None => PathBuf::from(&a.build),
    };
    if !dir.exists() {
        return Err(Failure::input(format!("{}: no such build folder or log", dir.display())));
    }
    let (log_path, build_dir) = if dir.is_dir() {
        (find_log(&dir), dir.clone())
    } else {
        (Some(dir.clone()), dir.parent().map(Path::to_path_buf).unwrap_or_default())
    };
    let source = match &a.mirror {
        Some(_) => format!("https://prow.k8s.io/view/gs/{}/{}", a.bucket, a.build.trim_matches('/')),
        None => build_dir.display().to_string(),
    };
    let cfg =
        if a.all { ExtractConfig { max_excerpt_bytes: usize::MAX, ..extract_config() } } else { extract_config() };
    let fail = match &log_path {
        Some(p) => read_maybe(p)?,
        None => None,
    };
    // The passing log: given, or the newest passing build of the same job before this one.
    let mut pass_from = a.pass.clone();
    if pass_from.is_none() && a.mirror.is_some() {
        let parts: Vec<&str> = a.build.trim_matches('/').split('/').collect();
        if parts.len() >= 2 {
            let (job, id) = (parts[parts.len() - 2], parts[parts.len() - 1]);
            if let Ok(store) = ctx.open_existing_store() {
                if let Ok(bs) = store.builds(Some(job)) {
                    let mine = bs.iter().find(|b| b.build_id == id).and_then(|b| b.started);
                    if let Some(t) = mine {
                        if let Some(p) = bs
                            .iter()
                            .rev()
                            .find(|b| b.result.as_deref() == Some("SUCCESS") && b.started.is_some_and(|s| s < t))
                        {
                            pass_from = a.mirror.as_ref().map(|m| m.join(&p.path));
                        }
                    }
                }
            }
        }
    }
    let pass = match &pass_from {
        Some(p) if p.is_dir() => match find_log(p) {
            Some(l) => read_maybe(&l)?,
            None => None,
        },
        Some(p) => read_maybe(p)?,
        None => None,
    };
    let mut excerpts: Vec<Excerpt> = Vec::new();
    let mut used_pass = false;
    let mut first_failure = None;
    let mut log_lines: Vec<usize> = Vec::new();
    let mut total_lines = 0usize;
    if let Some(f) = &fail {
        let log_source = match (&a.mirror, &log_path) {
            (Some(_), Some(p)) => {
                format!("{source}/{}", p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default())
            }
            (None, Some(p)) => p.display().to_string(),
            _ => format!("{source}/build-log.txt"),
        };
        let x = extract_log(f, pass.as_deref(), &log_source, &cfg);
        used_pass = x.used_pass_log;
        first_failure = x.first_failure_line;
        total_lines = x.total_lines;
        log_lines = x.lines;
        excerpts.extend(x.excerpts);
    }
    // JUnit failures under artifacts/.
    let mut junit_files = Vec::new();
    let mut stack = vec![build_dir.join("artifacts")];
    while let Some(d) = stack.pop() {
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("junit") && n.to_string_lossy().ends_with(".xml"))
                {
                    junit_files.push(p);
                }
            }
        }
    }
    junit_files.sort();
    let mut junit_failures = 0;
    for jf in &junit_files {
        let Some(bytes) = read_maybe(jf)? else { continue };
        let rel = jf.strip_prefix(&build_dir).unwrap_or(jf).display().to_string();
        let parsed = citriage_formats::junit::parse_junit(&bytes, &rel);
        for c in parsed.cases.iter().filter(|c| {
            matches!(c.status, citriage_formats::junit::Status::Failed | citriage_formats::junit::Status::Error)
        }) {
            junit_failures += 1;
            let text = c.failure_text.clone().unwrap_or_default();
            excerpts.extend(extract_junit(&text, "", &format!("{source}/{rel} :: {}", c.name), &cfg));
        }
    }
    if fail.is_none() && junit_files.is_empty() {
        return Err(Failure::input(format!("{}: no build-log.txt and no JUnit files", build_dir.display())));
    }
    if a.lines {
        for (lo, hi) in ranges(&log_lines) {
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
            "build": source, "log": log_path.map(|p| p.display().to_string()),
            "passing_log": pass_from.map(|p| p.display().to_string()), "used_passing_log": used_pass,
            "first_failure_line": first_failure, "total_lines": total_lines,
            "lines": log_lines, "junit_failures": junit_failures, "excerpts": excerpts,
            "texts_cut": texts_cut,
            "cut_note": (texts_cut > 0).then(|| format!(
                "{texts_cut} excerpt text(s) stop at {} bytes (\"text_cut\": true; their line ranges and \"lines\" are complete); --all prints them in full",
                cfg.max_excerpt_bytes
            )),
        }));
        return Ok(());
    }
    outln!(
        "{}: {} excerpt(s), {} failure line(s) of {} in the build log{}; first failure at line {}",
        source,
        excerpts.len(),
        log_lines.len(),
        total_lines,
        if used_pass { " (lines absent from the passing log preferred)" } else { " (no passing log)" },
        first_failure.map(|l| l.to_string()).unwrap_or_else(|| "?".into())
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
            outln!("    ... text stops at {} bytes (lines up to {}) ...", cfg.max_excerpt_bytes, e.line_end);
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

/// The extraction settings of `citriage extract` (and of `citriage bench extract`): the
/// library defaults, chosen by cross-validation; nothing found is capped.
fn extract_config() -> ExtractConfig {
    ExtractConfig::default()
}

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
