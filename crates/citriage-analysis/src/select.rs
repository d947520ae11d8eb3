//! Cluster selection (runbook Phase 2 / Appendix A): score every category, pick the
//! top-scoring ones plus the always-include families (kops, architecture lanes with
//! more than a few jobs, the catch-all), and say why each pick was made.

use crate::categorize::Categorized;
use crate::config::AnalysisConfig;
use citriage_model::{Dataset, JobStats};
use serde::Serialize;

/// The score of one category.
#[derive(Debug, Clone, Serialize)]
pub struct CategoryScore {
    pub category: String,
    pub count: usize,
    /// failures: the largest failing_days; flakes: the lowest consistency.
    pub worst: f64,
    pub score: f64,
    /// 1-based rank by score.
    pub rank: usize,
}

/// One selected cluster and the reasons it was picked.
#[derive(Debug, Clone, Serialize)]
pub struct Pick {
    pub category: String,
    pub score: f64,
    pub rank: usize,
    pub count: usize,
    pub reasons: Vec<String>,
}

/// The selection: picks in investigation order and every category's score.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    pub picks: Vec<Pick>,
    pub scores: Vec<CategoryScore>,
    /// Categories that would have been picked but did not fit under the maximum.
    pub dropped: Vec<String>,
}

/// failures: `ln(count) + max_failing_days / 100`; flakes: `ln(count) + (1 - min_consistency)`.
pub fn score_categories(cats: &Categorized, dataset: Dataset) -> Vec<CategoryScore> {
    let mut scores: Vec<CategoryScore> = cats
        .categories
        .iter()
        .map(|c| {
            let count = c.count();
            let (worst, term) = match dataset {
                Dataset::Failures => {
                    let m = c.jobs.iter().filter_map(|j| j.entry.stats.failing_days()).max().unwrap_or(0);
                    (f64::from(m), f64::from(m) / 100.0)
                }
                Dataset::Flakes => {
                    let m = c
                        .jobs
                        .iter()
                        .filter_map(|j| match &j.entry.stats {
                            JobStats::Flakes(f) => Some(f.consistency),
                            _ => None,
                        })
                        .fold(1.0f64, f64::min);
                    (m, 1.0 - m)
                }
            };
            CategoryScore { category: c.name.clone(), count, worst, score: (count as f64).ln() + term, rank: 0 }
        })
        .collect();
    scores.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.category.cmp(&b.category)));
    for (i, s) in scores.iter_mut().enumerate() {
        s.rank = i + 1;
    }
    scores
}

/// A category's score as a formula whose printed terms add up to the printed score:
/// `score 0.440 = ln(1) + 44/100 = 0.000 + 0.440 (max failing_days 44)`.
pub fn score_formula(s: &CategoryScore, dataset: Dataset) -> String {
    let ln = (s.count as f64).ln();
    match dataset {
        Dataset::Failures => format!(
            "score {:.3} = ln({}) + {}/100 = {ln:.3} + {:.3} (max failing_days {})",
            s.score,
            s.count,
            s.worst,
            s.worst / 100.0,
            s.worst
        ),
        Dataset::Flakes => format!(
            "score {:.3} = ln({}) + (1 - {:.3}) = {ln:.3} + {:.3} (min consistency {:.3})",
            s.score,
            s.count,
            s.worst,
            1.0 - s.worst,
            s.worst
        ),
    }
}

/// Picks the clusters to investigate.
pub fn select(cats: &Categorized, dataset: Dataset, cfg: &AnalysisConfig) -> Selection {
    let scores = score_categories(cats, dataset);
    let by_name = |n: &str| scores.iter().find(|s| s.category == n);
    // (category, mandatory, reasons)
    let mut chosen: Vec<(String, bool, Vec<String>)> = Vec::new();
    let add = |chosen: &mut Vec<(String, bool, Vec<String>)>, cat: &str, mandatory: bool, why: String| {
        if let Some(e) = chosen.iter_mut().find(|(c, _, _)| c == cat) {
            e.1 |= mandatory;
            e.2.push(why);
        } else {
            chosen.push((cat.to_string(), mandatory, vec![why]));
        }
    };
    for s in scores.iter().take(cfg.min_clusters) {
        add(
            &mut chosen,
            &s.category,
            false,
            format!("top {} by score: rank {} ({})", cfg.min_clusters, s.rank, score_formula(s, dataset)),
        );
    }
    // kops family: the largest kops-tagged category is always investigated.
    let kops = cats
        .categories
        .iter()
        .filter(|c| c.tags.contains("kops"))
        .max_by(|a, b| a.count().cmp(&b.count()).then_with(|| b.name.cmp(&a.name)));
    if let Some(k) = kops {
        let family: usize = cats.categories.iter().filter(|c| c.tags.contains("kops")).map(|c| c.count()).sum();
        add(
            &mut chosen,
            &k.name,
            true,
            format!("always include the kops family ({family} kops jobs in all; this is its largest category)"),
        );
    }
    for c in cats.categories.iter().filter(|c| c.tags.contains("arch")) {
        if c.count() > cfg.arch_min_jobs {
            add(
                &mut chosen,
                &c.name,
                true,
                format!(
                    "always include architecture lanes with more than {} jobs ({} jobs)",
                    cfg.arch_min_jobs,
                    c.count()
                ),
            );
        }
    }
    for c in cats.categories.iter().filter(|c| c.tags.contains("catch-all")) {
        add(
            &mut chosen,
            &c.name,
            true,
            format!("always include the catch-all ({} jobs): sweep for patterns the rules missed", c.count()),
        );
    }
    // Fill up to the minimum when always-includes overlapped the top-scored ones.
    let mut extra = scores.iter().skip(cfg.min_clusters);
    while chosen.len() < cfg.min_clusters {
        let Some(s) = extra.next() else { break };
        add(
            &mut chosen,
            &s.category,
            false,
            format!("fills the minimum of {}: rank {} (score {:.3})", cfg.min_clusters, s.rank, s.score),
        );
    }
    // Over the maximum: drop the lowest-scoring optional picks.
    let mut dropped = Vec::new();
    while chosen.len() > cfg.max_clusters {
        let worst = chosen
            .iter()
            .enumerate()
            .filter(|(_, (_, m, _))| !*m)
            .max_by_key(|(_, (c, _, _))| by_name(c).map(|s| s.rank).unwrap_or(usize::MAX))
            .map(|(i, _)| i);
        match worst {
            Some(i) => dropped.push(chosen.remove(i).0),
            None => break,
        }
    }
    let mut picks: Vec<Pick> = chosen
        .into_iter()
        .map(|(category, _, reasons)| {
            let s = by_name(&category);
            Pick {
                score: s.map(|s| s.score).unwrap_or(0.0),
                rank: s.map(|s| s.rank).unwrap_or(0),
                count: s.map(|s| s.count).unwrap_or(0),
                category,
                reasons,
            }
        })
        .collect();
    picks.sort_by_key(|p| p.rank);
    Selection { picks, scores, dropped }
}

/// `A`, `B`, ... `Z`, `AA`, ...: the letter of the i-th pick (0-based).
pub fn letter(i: usize) -> String {
    let mut n = i + 1;
    let mut s = Vec::new();
    while n > 0 {
        n -= 1;
        s.push(b'A' + (n % 26) as u8);
        n /= 26;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

#[cfg(test)]
mod formula_tests {
    use super::*;

    fn terms(f: &str) -> (f64, f64, f64) {
        // "score S = ln(n) + ... = A + B (...)"
        let s: f64 = f.split_whitespace().nth(1).unwrap().parse().unwrap();
        let sum = f.rsplit_once(" = ").unwrap().1;
        let mut it = sum.split_whitespace();
        let a: f64 = it.next().unwrap().parse().unwrap();
        it.next();
        let b: f64 = it.next().unwrap().parse().unwrap();
        (s, a, b)
    }

    #[test]
    fn printed_formulas_add_up() {
        let fail = CategoryScore { category: "c".into(), count: 1, worst: 44.0, score: 0.44, rank: 1 };
        let f = score_formula(&fail, Dataset::Failures);
        assert!(f.starts_with("score 0.440 = ln(1) + 44/100 = 0.000 + 0.440"), "{f}");
        let flake =
            CategoryScore { category: "c".into(), count: 7, worst: 0.551, score: (7f64).ln() + (1.0 - 0.551), rank: 1 };
        let f2 = score_formula(&flake, Dataset::Flakes);
        assert!(f2.contains("+ (1 - 0.551) ="), "{f2}");
        for f in [f, f2] {
            let (s, a, b) = terms(&f);
            assert!((a + b - s).abs() <= 0.0015, "{f}: {a} + {b} != {s}");
        }
    }
}
