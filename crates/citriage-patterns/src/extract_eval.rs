//! Evaluation of failure-line extraction on CiDiff-format cases (a failed log, a passing
//! log of the same job and a `groundtruth` file per case) and cross-validated choice of the
//! extraction settings.
//!
//! Scoring follows the CiDiff benchmark convention: the ground truth's first line names a
//! parser; then `E a-b` / `E n` (error lines) and `C ...` (context) ranges, 1-based and
//! inclusive, counted with `\r\n`, a lone `\r` and `\n` each ending a line. Positives are
//! the E lines; C lines and blank lines (after removing GitHub Actions prefixes, ANSI colour
//! and surrounding whitespace) are left out of the scored universe. Per case precision,
//! recall and F1; a case with no prediction scores 0; macro = mean over cases.
//!
//! Cross-validation: cases are grouped by project (the case name before its last `_`, so
//! two breakages of one project never sit on both sides), projects are dealt round-robin
//! into k folds; for each fold the setting with the best macro F1 on the other folds is
//! chosen and scored on the fold. Every case is held out exactly once. Pure: callers read
//! the files.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::extract::{extract_prepared, pass_fingerprints, prepare_owned, ExtractConfig, PreparedLog};
use crate::lines;

/// One case: its name, logs and ground-truth text.
#[derive(Debug, Clone)]
pub struct Case {
    /// Case name (its folder, e.g. `breakages/guava_1947`).
    pub name: String,
    /// The failed log.
    pub fail: Vec<u8>,
    /// The passing log.
    pub pass: Vec<u8>,
    /// The `groundtruth` file's text.
    pub truth: String,
}

/// Error and context lines of a ground truth, clipped to the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroundTruth {
    /// E lines.
    pub errors: BTreeSet<usize>,
    /// C lines that are not also E lines.
    pub context: BTreeSet<usize>,
}

/// Parses a `groundtruth` file for a log of `n_lines` lines.
pub fn parse_ground_truth(text: &str, n_lines: usize) -> Result<GroundTruth, String> {
    let mut gt = GroundTruth::default();
    let mut c = BTreeSet::new();
    for (i, row) in text.lines().enumerate().skip(1) {
        let row = row.trim();
        if row.is_empty() {
            continue;
        }
        let (kind, spec) = row.split_once(char::is_whitespace).ok_or(format!("line {}: {row:?}", i + 1))?;
        for part in spec.replace(' ', "").split(',').filter(|p| !p.is_empty()) {
            let num = |s: &str| s.parse::<usize>().map_err(|_| format!("line {}: bad number {s:?}", i + 1));
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(part)?, num(part)?),
            };
            let set = if kind.eq_ignore_ascii_case("E") { &mut gt.errors } else { &mut c };
            set.extend(a.max(1)..=b.min(n_lines));
        }
    }
    gt.context = c.difference(&gt.errors).copied().collect();
    Ok(gt)
}

/// Lines (1-based) that are blank once GitHub Actions prefixes, ANSI colour and surrounding
/// whitespace are removed: they are outside the scored universe.
pub fn blank_lines(fail: &[u8]) -> BTreeSet<usize> {
    static GH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:[^\t]*\t[^\t]*\t)?\x{feff}?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z ?")
            .expect("valid regex")
    });
    static ANSI: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b?\[\d{0,3}(?:;\d{1,3})*m").expect("valid regex"));
    lines::lines(fail)
        .filter(|l| {
            let t = String::from_utf8_lossy(l.bytes(fail));
            let t = GH.replace(&t, "");
            ANSI.replace_all(&t, "").trim().is_empty()
        })
        .map(|l| l.number)
        .collect()
}

/// Precision, recall and F1 of one case.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CaseScore {
    /// Precision.
    pub p: f64,
    /// Recall.
    pub r: f64,
    /// F1.
    pub f1: f64,
}

/// Scores predicted lines against the E lines (C and blank lines left out).
pub fn score_case(pred: &[usize], gt: &GroundTruth, blank: &BTreeSet<usize>) -> CaseScore {
    let keep = |l: &usize| !blank.contains(l) && !gt.context.contains(l);
    let pred: BTreeSet<usize> = pred.iter().copied().filter(keep).collect();
    let gold: BTreeSet<usize> = gt.errors.iter().copied().filter(keep).collect();
    if pred.is_empty() {
        return CaseScore { p: 0.0, r: 0.0, f1: 0.0 };
    }
    let tp = pred.intersection(&gold).count() as f64;
    let p = tp / pred.len() as f64;
    let r = if gold.is_empty() { 0.0 } else { tp / gold.len() as f64 };
    let f1 = if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 };
    CaseScore { p, r, f1 }
}

/// A case made ready for scoring many settings: both logs prepared once.
pub struct PreparedCase {
    /// Case name.
    pub name: String,
    /// Project (name before the last `_`), the unit of cross-validation folds.
    pub project: String,
    gt: GroundTruth,
    blank: BTreeSet<usize>,
    with_pass: PreparedLog<'static>,
    fail_only: PreparedLog<'static>,
}

/// Prepares a case; errors name what is wrong with its ground truth.
pub fn prepare_case(case: &Case, match_cap: usize) -> Result<PreparedCase, String> {
    let n = lines::count_lines(&case.fail);
    let gt = parse_ground_truth(&case.truth, n).map_err(|e| format!("{}: groundtruth {e}", case.name))?;
    let fp: HashSet<u64> = pass_fingerprints(&case.pass, match_cap);
    let base = case.name.rsplit('/').next().unwrap_or(&case.name);
    let project = base.rsplit_once('_').map_or(base, |(p, _)| p).to_string();
    Ok(PreparedCase {
        name: case.name.clone(),
        project,
        gt,
        blank: blank_lines(&case.fail),
        with_pass: prepare_owned(case.fail.clone(), Some(&fp), match_cap),
        fail_only: prepare_owned(case.fail.clone(), None, match_cap),
    })
}

impl PreparedCase {
    /// Lines selected with `cfg`, with or without the passing log.
    pub fn predict(&self, cfg: &ExtractConfig, with_pass: bool) -> Vec<usize> {
        let p = if with_pass { &self.with_pass } else { &self.fail_only };
        extract_prepared(p, "fail.log", cfg).lines
    }

    /// Score of `pred` on this case.
    pub fn score(&self, pred: &[usize]) -> CaseScore {
        score_case(pred, &self.gt, &self.blank)
    }
}

/// The settings searched with a passing log (the rest at their defaults).
pub fn grid_with_pass() -> Vec<ExtractConfig> {
    let mut out = Vec::new();
    for share in [50u8, 34, 67] {
        for min_new in [3usize, 2, 5] {
            for plain in [1usize, 3, 5] {
                out.push(ExtractConfig {
                    new_share_percent: share,
                    min_new_lines: min_new,
                    max_plain_run: plain,
                    ..ExtractConfig::default()
                });
            }
        }
    }
    out
}

/// The settings searched without a passing log (the rest at their defaults).
pub fn grid_fail_only() -> Vec<ExtractConfig> {
    let mut out = Vec::new();
    for run_min in [1u8, 2] {
        for min_strength in [3u8, 2] {
            for lone in [1u8, 0, 2] {
                for gap in [40usize, 20, 80] {
                    for plain in [1usize, 3, 5] {
                        out.push(ExtractConfig {
                            min_strength,
                            lone_errors: lone,
                            verdict_gap: gap,
                            max_plain_run: plain,
                            run_min_strength: run_min,
                            ..ExtractConfig::default()
                        });
                    }
                }
            }
        }
    }
    out
}

/// One fold of a cross-validation run.
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    /// Fold number (0-based).
    pub fold: usize,
    /// Held-out cases.
    pub cases: Vec<String>,
    /// Setting chosen on the other folds.
    pub chosen: ExtractConfig,
    /// Macro F1 of that setting on the other folds (held in).
    pub held_in_f1: f64,
    /// Macro F1 of that setting on this fold (held out).
    pub held_out_f1: f64,
}

/// A cross-validation run for one mode.
#[derive(Debug, Clone, Serialize)]
pub struct CrossValidation {
    /// With the passing log or not.
    pub with_pass: bool,
    /// The folds.
    pub folds: Vec<Fold>,
    /// Macro F1 over all cases, each scored by the setting chosen without it.
    pub held_out_f1: f64,
    /// Mean held-in macro F1 over the folds.
    pub held_in_f1: f64,
    /// The setting chosen on all cases.
    pub chosen_on_all: ExtractConfig,
    /// Macro F1 of that setting on all cases (fitted; for reference only).
    pub fitted_f1: f64,
}

fn best(f1: &[Vec<f64>], cases: &[usize]) -> (usize, f64) {
    let mut out = (0usize, f64::NEG_INFINITY);
    for (c, row) in f1.iter().enumerate() {
        let m = cases.iter().map(|&i| row[i]).sum::<f64>() / cases.len().max(1) as f64;
        if m > out.1 + 1e-12 {
            out = (c, m);
        }
    }
    out
}

/// Assigns each case a fold: projects sorted by name and dealt round-robin.
pub fn folds_by_project(cases: &[PreparedCase], k: usize) -> Vec<usize> {
    let projects: BTreeSet<&str> = cases.iter().map(|c| c.project.as_str()).collect();
    let fold_of: BTreeMap<&str, usize> = projects.into_iter().enumerate().map(|(i, p)| (p, i % k.max(1))).collect();
    cases.iter().map(|c| fold_of[c.project.as_str()]).collect()
}

/// k-fold cross-validation over `grid` (see the module docs). Ties go to grid order (each
/// grid lists the current default first).
pub fn cross_validate(cases: &[PreparedCase], grid: &[ExtractConfig], k: usize, with_pass: bool) -> CrossValidation {
    let f1: Vec<Vec<f64>> =
        grid.iter().map(|cfg| cases.iter().map(|c| c.score(&c.predict(cfg, with_pass)).f1).collect()).collect();
    let fold = folds_by_project(cases, k);
    let mut folds = Vec::new();
    let mut per_case = vec![0.0; cases.len()];
    for f in 0..k {
        let test: Vec<usize> = (0..cases.len()).filter(|&i| fold[i] == f).collect();
        if test.is_empty() {
            continue;
        }
        let train: Vec<usize> = (0..cases.len()).filter(|&i| fold[i] != f).collect();
        let (c, held_in) = best(&f1, &train);
        for &i in &test {
            per_case[i] = f1[c][i];
        }
        let held_out = test.iter().map(|&i| f1[c][i]).sum::<f64>() / test.len() as f64;
        folds.push(Fold {
            fold: f,
            cases: test.iter().map(|&i| cases[i].name.clone()).collect(),
            chosen: grid[c].clone(),
            held_in_f1: held_in,
            held_out_f1: held_out,
        });
    }
    let all: Vec<usize> = (0..cases.len()).collect();
    let (c_all, fitted) = best(&f1, &all);
    let n = cases.len().max(1) as f64;
    CrossValidation {
        with_pass,
        held_out_f1: per_case.iter().sum::<f64>() / n,
        held_in_f1: folds.iter().map(|f| f.held_in_f1).sum::<f64>() / folds.len().max(1) as f64,
        folds,
        chosen_on_all: grid.get(c_all).cloned().unwrap_or_default(),
        fitted_f1: fitted,
    }
}

// ---- logs of other CI systems: the first failure found, per format -----------------------

/// One annotated log of a format corpus. The file's lines carry a three-character tag
/// column before the log line: `F  ` a line that may be named as the first failure (also
/// a failure line), `E  ` a failure line, `C  ` context (neither scored nor penalised),
/// three spaces for every other line. Lines starting with `#%` are metadata
/// (`#% format: NAME`, free text) and not part of the log.
#[derive(Debug, Clone)]
pub struct FormatCase {
    /// File name.
    pub name: String,
    /// The format (`#% format: …`), the unit of the per-format figures and of the folds.
    pub format: String,
    /// The log as the extractor sees it.
    pub log: Vec<u8>,
    /// Lines that may be named first (1-based).
    pub first: BTreeSet<usize>,
    /// Failure lines (the `F` lines included).
    pub errors: BTreeSet<usize>,
    /// Context lines.
    pub context: BTreeSet<usize>,
}

/// Parses an annotated log; errors name the line.
pub fn parse_annotated(name: &str, text: &str) -> Result<FormatCase, String> {
    let mut case = FormatCase {
        name: name.to_string(),
        format: String::new(),
        log: Vec::new(),
        first: BTreeSet::new(),
        errors: BTreeSet::new(),
        context: BTreeSet::new(),
    };
    let mut n = 0usize;
    for (i, row) in text.lines().enumerate() {
        if let Some(meta) = row.strip_prefix("#%") {
            if let Some(f) = meta.trim().strip_prefix("format:") {
                case.format = f.trim().to_string();
            }
            continue;
        }
        let (tag, line) = match (row.get(..3), row.get(3..)) {
            (Some(t), Some(l)) => (t, l),
            _ if row.trim().len() <= 1 => (row.get(..1).unwrap_or(" "), ""),
            _ => return Err(format!("{name}:{}: no tag column in {row:?}", i + 1)),
        };
        n += 1;
        match tag.trim() {
            "F" => {
                case.first.insert(n);
                case.errors.insert(n);
            }
            "E" => {
                case.errors.insert(n);
            }
            "C" => {
                case.context.insert(n);
            }
            "" => {}
            t => return Err(format!("{name}:{}: unknown tag {t:?}", i + 1)),
        }
        case.log.extend_from_slice(line.as_bytes());
        case.log.push(b'\n');
    }
    if case.format.is_empty() {
        return Err(format!("{name}: no `#% format:` line"));
    }
    if case.first.is_empty() {
        return Err(format!("{name}: no line tagged F"));
    }
    Ok(case)
}

/// How one log came out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FormatCaseScore {
    /// Something was named as the first failure.
    pub found: bool,
    /// It is one of the `F` lines.
    pub first_right: bool,
    /// Selected lines that are failure lines / selected lines (context and blank lines
    /// left out).
    pub tp: usize,
    /// Selected lines scored.
    pub selected: usize,
    /// Failure lines scored.
    pub gold: usize,
}

/// Scores an extraction of a format case.
pub fn score_format_case(case: &FormatCase, first: Option<usize>, lines: &[usize]) -> FormatCaseScore {
    let blank = blank_lines(&case.log);
    let keep = |l: &usize| !blank.contains(l) && !case.context.contains(l);
    let pred: BTreeSet<usize> = lines.iter().copied().filter(keep).collect();
    let gold: BTreeSet<usize> = case.errors.iter().copied().filter(keep).collect();
    FormatCaseScore {
        found: first.is_some(),
        first_right: first.is_some_and(|f| case.first.contains(&f)),
        tp: pred.intersection(&gold).count(),
        selected: pred.len(),
        gold: gold.len(),
    }
}

/// The figures of one format (or of all).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormatFigures {
    /// Format name (`all` for the total).
    pub format: String,
    /// Logs.
    pub logs: usize,
    /// Logs where something was named first.
    pub found: usize,
    /// Logs where the first failure named is a right one.
    pub first_right: usize,
    /// Precision of the first failure named: right / found.
    pub first_precision: f64,
    /// Recall of the first failure: right / logs.
    pub first_recall: f64,
    /// Precision of the marked lines (over all lines of the format's logs).
    pub lines_precision: f64,
    /// Recall of the marked lines.
    pub lines_recall: f64,
}

/// Sums per-log scores into figures per format, sorted by format, then the total.
pub fn format_figures(scores: &[(String, FormatCaseScore)]) -> Vec<FormatFigures> {
    let mut by: BTreeMap<String, Vec<FormatCaseScore>> = BTreeMap::new();
    for (f, s) in scores {
        by.entry(f.clone()).or_default().push(*s);
        by.entry("\u{10ffff}all".into()).or_default().push(*s);
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    by.into_iter()
        .map(|(format, v)| {
            let sum = |f: fn(&FormatCaseScore) -> usize| v.iter().map(f).sum::<usize>();
            let (found, right) = (sum(|s| usize::from(s.found)), sum(|s| usize::from(s.first_right)));
            FormatFigures {
                format: format.trim_start_matches('\u{10ffff}').to_string(),
                logs: v.len(),
                found,
                first_right: right,
                first_precision: ratio(right, found),
                first_recall: ratio(right, v.len()),
                lines_precision: ratio(sum(|s| s.tp), sum(|s| s.selected)),
                lines_recall: ratio(sum(|s| s.tp), sum(|s| s.gold)),
            }
        })
        .collect()
}

/// A format case prepared once (failed log only) for scoring many settings.
pub struct PreparedFormatCase {
    /// The case.
    pub case: FormatCase,
    log: PreparedLog<'static>,
}

/// Prepares format cases.
pub fn prepare_format_cases(cases: Vec<FormatCase>, match_cap: usize) -> Vec<PreparedFormatCase> {
    cases
        .into_iter()
        .map(|case| {
            let log = prepare_owned(case.log.clone(), None, match_cap);
            PreparedFormatCase { case, log }
        })
        .collect()
}

impl PreparedFormatCase {
    /// The extraction's score with `cfg`.
    pub fn score(&self, cfg: &ExtractConfig) -> FormatCaseScore {
        let r = extract_prepared(&self.log, &self.case.name, cfg);
        score_format_case(&self.case, r.first_failure_line, &r.lines)
    }
}

/// What a setting is chosen for on a format corpus: per log, the mean of "the first
/// failure named is right" (0 or 1) and the F1 of its marked lines.
pub fn format_objective(s: &FormatCaseScore) -> f64 {
    let p = if s.selected == 0 { 0.0 } else { s.tp as f64 / s.selected as f64 };
    let r = if s.gold == 0 { 0.0 } else { s.tp as f64 / s.gold as f64 };
    let f1 = if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 };
    (f64::from(u8::from(s.first_right)) + f1) / 2.0
}

/// A leave-one-format-out run: each format's logs scored with the setting chosen on the
/// other formats' logs.
#[derive(Debug, Clone, Serialize)]
pub struct FormatCrossValidation {
    /// Per held-out format: the setting chosen without it and its held-in objective.
    pub folds: Vec<(String, ExtractConfig, f64)>,
    /// Every log scored by the setting chosen without its format.
    pub held_out: Vec<(String, FormatCaseScore)>,
    /// Every log scored by the setting chosen on all logs (fitted).
    pub held_in: Vec<(String, FormatCaseScore)>,
    /// The setting chosen on all logs.
    pub chosen_on_all: ExtractConfig,
}

/// Leave-one-format-out cross-validation over `grid` (ties go to grid order: grids list
/// the default first).
pub fn cross_validate_formats(cases: &[PreparedFormatCase], grid: &[ExtractConfig]) -> FormatCrossValidation {
    let scores: Vec<Vec<FormatCaseScore>> =
        grid.iter().map(|cfg| cases.iter().map(|c| c.score(cfg)).collect()).collect();
    let obj: Vec<Vec<f64>> = scores.iter().map(|row| row.iter().map(format_objective).collect()).collect();
    let formats: BTreeSet<&str> = cases.iter().map(|c| c.case.format.as_str()).collect();
    let mut folds = Vec::new();
    let mut held_out: Vec<Option<(String, FormatCaseScore)>> = vec![None; cases.len()];
    for f in &formats {
        let train: Vec<usize> = (0..cases.len()).filter(|&i| cases[i].case.format != *f).collect();
        let (c, held_in) = best(&obj, &train);
        for i in (0..cases.len()).filter(|&i| cases[i].case.format == *f) {
            held_out[i] = Some((cases[i].case.format.clone(), scores[c][i]));
        }
        folds.push((f.to_string(), grid[c].clone(), held_in));
    }
    let all: Vec<usize> = (0..cases.len()).collect();
    let (c_all, _) = best(&obj, &all);
    FormatCrossValidation {
        folds,
        held_out: held_out.into_iter().flatten().collect(),
        held_in: (0..cases.len()).map(|i| (cases[i].case.format.clone(), scores[c_all][i])).collect(),
        chosen_on_all: grid.get(c_all).cloned().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ground_truth_and_scores() {
        let gt = parse_ground_truth("DEFAULT\nE 2-3\nC 1\nE 9\n", 5).unwrap();
        assert_eq!(gt.errors, BTreeSet::from([2, 3]));
        assert_eq!(gt.context, BTreeSet::from([1]));
        assert!(parse_ground_truth("DEFAULT\nE x\n", 5).is_err());
        let blank = blank_lines(b"ctx\nerr one\n\x1b[31m\x1b[0m\nok\n");
        assert_eq!(blank, BTreeSet::from([3]));
        let gt = parse_ground_truth("DEFAULT\nE 2-3\nC 1\n", 4).unwrap();
        // line 3 is blank, line 1 is context: both ignored
        let s = score_case(&[1, 2, 3], &gt, &blank);
        assert_eq!((s.p, s.r, s.f1), (1.0, 1.0, 1.0));
        let s = score_case(&[2, 4], &gt, &blank);
        assert_eq!((s.p, s.r), (0.5, 1.0));
        assert_eq!(score_case(&[], &gt, &blank).f1, 0.0);
    }

    #[test]
    fn folds_keep_projects_together() {
        let mk = |name: &str| Case {
            name: name.into(),
            fail: b"[INFO] Compiling\n[ERROR] /a/B.java:[3,13] cannot find symbol\n[INFO] BUILD FAILURE\n".to_vec(),
            pass: b"BUILD SUCCESS\n".to_vec(),
            truth: "DEFAULT\nE 2\n".into(),
        };
        let cases: Vec<PreparedCase> =
            ["b/x_1", "b/x_2", "b/y_1", "b/z_9"].iter().map(|n| prepare_case(&mk(n), 4096).unwrap()).collect();
        let f = folds_by_project(&cases, 2);
        assert_eq!(f[0], f[1]);
        let cv = cross_validate(&cases, &grid_fail_only()[..2], 2, false);
        assert_eq!(cv.folds.iter().map(|f| f.cases.len()).sum::<usize>(), 4);
        assert!(cv.held_out_f1 > 0.9, "{cv:?}");
    }
}
