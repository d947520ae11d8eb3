//! Choosing the analysis' tunable weights without fitting the figures to the
//! payloads they are reported on. Every setting of a small grid is evaluated on
//! every payload of the truth once; then
//!
//! - **held-in**: the setting that does best on all the payloads, reported on
//!   those same payloads (optimistic: chosen on what it is scored on);
//! - **leave one payload out**: for each payload, the setting that does best on
//!   the *other* payloads, reported on that one; the rows together are the
//!   cross-validated figures.
//!
//! "Best" ranks a setting by its figures: false reverts and false bisects on
//! no-culprit payloads first (fewer is better), then culprits ranked first
//! alone, then in the top 3, then first in a tie, then how far the culprits
//! stand out (their mean margin over the next suspect); equal settings keep the
//! grid's order (the default setting first).

use std::path::Path;

use serde::Serialize;

use crate::analyze::Tuning;
use crate::error::PayloadError;
use crate::eval::{self, EvalReport, EvalRow, TruthRow};
use citriage_suspects::links::Weights;

/// The settings tried: subject-link points (0: off), the title words' limit
/// on the diffs that touch them, the broadest diff a subject link may come
/// from, and the largest tie bisected between. The default comes first.
pub fn grid() -> Vec<Tuning> {
    let mut out = vec![Tuning::default()];
    for subject in [0, 10, 20] {
        for title_max_code_df in [3, u32::MAX] {
            for subject_max_breadth in [1000, usize::MAX] {
                for tie_bisect_max in [2, 3] {
                    let t =
                        Tuning { links: Weights { subject, title_max_code_df, subject_max_breadth }, tie_bisect_max };
                    if !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
        }
    }
    out
}

/// A setting, in words.
pub fn describe(t: &Tuning) -> String {
    let limit = |n: u64| if n == u64::MAX || n == u32::MAX as u64 { "any".to_string() } else { n.to_string() };
    format!(
        "subject {} pts, title words in ≤ {} diffs, subject diffs ≤ {} words, ties ≤ {} bisected",
        t.links.subject,
        limit(t.links.title_max_code_df as u64),
        limit(t.links.subject_max_breadth as u64),
        t.tie_bisect_max
    )
}

/// The figures of a cross-validation.
#[derive(Debug, Clone, Serialize)]
pub struct CrossValidation {
    pub settings: usize,
    /// The setting chosen on every payload, and its figures on them.
    pub held_in_setting: String,
    pub held_in: EvalReport,
    /// Each payload evaluated with the setting chosen on the others.
    pub left_out: EvalReport,
    /// Per payload, the setting chosen without it.
    pub left_out_settings: Vec<(String, String)>,
}

/// How good a setting's rows are (higher is better).
fn merit(rows: &[&EvalRow]) -> (i64, i64, i64, i64, i64) {
    let owned: Vec<EvalRow> = rows.iter().map(|r| (*r).clone()).collect();
    let r = eval::summarize("", owned);
    let harm = (r.false_reverts + r.false_bisects_no_culprit + r.contradictions + r.errors) as i64;
    let margin = (r.culprit_mean_margin * 10.0).round() as i64;
    (-harm, r.culprit_top1 as i64, r.culprit_top3 as i64, r.culprit_tied_top1 as i64, margin)
}

/// The index of the best setting on the rows `keep` selects.
fn best(per_setting: &[Vec<EvalRow>], keep: impl Fn(usize) -> bool) -> usize {
    let mut best = 0;
    let mut best_merit = None;
    for (i, rows) in per_setting.iter().enumerate() {
        let chosen: Vec<&EvalRow> = rows.iter().enumerate().filter(|(k, _)| keep(*k)).map(|(_, r)| r).collect();
        let m = merit(&chosen);
        if best_merit.as_ref().is_none_or(|b| m > *b) {
            best = i;
            best_merit = Some(m);
        }
    }
    best
}

/// Cross-validates over a folder of payload snapshots or a synthetic world and its truth.
pub fn cross_validate(
    dir: &Path,
    truth: &[TruthRow],
    ci_config: Option<&Path>,
) -> Result<CrossValidation, PayloadError> {
    let settings = grid();
    let mut per_setting: Vec<Vec<EvalRow>> = Vec::new();
    for t in &settings {
        let report = if eval::is_world(dir) {
            eval::eval_world_tuned(dir, Some(truth), t)?
        } else {
            eval::eval_snapshots_tuned(dir, Some(truth), ci_config, t)?
        };
        per_setting.push(report.rows);
    }
    let source = dir.display().to_string();
    let held = best(&per_setting, |_| true);
    let held_in = eval::summarize(&source, per_setting[held].clone());
    let mut rows = Vec::new();
    let mut left_out_settings = Vec::new();
    for (k, row) in truth.iter().enumerate() {
        let chosen = best(&per_setting, |i| i != k);
        rows.push(per_setting[chosen][k].clone());
        left_out_settings.push((row.tag.clone(), describe(&settings[chosen])));
    }
    Ok(CrossValidation {
        settings: settings.len(),
        held_in_setting: describe(&settings[held]),
        held_in,
        left_out: eval::summarize(&source, rows),
        left_out_settings,
    })
}

/// The cross-validation in text: the held-in figures, then the left-out ones.
pub fn render(cv: &CrossValidation) -> String {
    let mut s = format!("{} settings tried over {}\n\n", cv.settings, cv.held_in.source);
    s.push_str(&format!(
        "held-in (chosen on every payload: {}):\n  {}\n\n",
        cv.held_in_setting,
        eval::summary_line(&cv.held_in)
    ));
    s.push_str("leave one payload out (each payload with the setting chosen on the others):\n");
    s.push_str(&eval::render_eval(&cv.left_out));
    s.push_str("\nsettings chosen without each payload:\n");
    for (tag, setting) in &cv.left_out_settings {
        s.push_str(&format!("  {tag:<38} {setting}\n"));
    }
    s
}
