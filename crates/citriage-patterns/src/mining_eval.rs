//! Evaluation of template mining on labelled logs (Loghub-2k layout): grouping accuracy
//! (GA), F1 of groups (FGA), parsing accuracy (PA), and leave-one-system-out selection of
//! the miner's settings.
//!
//! Definitions (as in the Loghub benchmark): a true group counts as correct only when all its
//! lines got one predicted group holding exactly those lines; GA is the share of lines in
//! correct groups; FGA the F1 of correct groups over predicted and true groups; PA the share
//! of lines whose predicted template text equals the true one.
//!
//! Leave-one-system-out: for each system, every setting of the grid is scored on the other
//! systems, the best mean GA there wins (ties: the higher worst-system GA, then grid order),
//! and that setting alone is scored on the held-out system. Pure: callers read the files.

use std::collections::HashMap;

use serde::Serialize;

use crate::drain::{mine_ids, DrainConfig};

/// One labelled system: its input lines and true template per line.
#[derive(Debug, Clone)]
pub struct Labeled {
    /// System name.
    pub system: String,
    /// Input lines (`Content`).
    pub content: Vec<String>,
    /// True template per line (`EventTemplate`).
    pub truth: Vec<String>,
}

/// GA, FGA and PA of one prediction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scores {
    /// Grouping accuracy.
    pub ga: f64,
    /// F1 of groups.
    pub fga: f64,
    /// Parsing accuracy.
    pub pa: f64,
}

/// Parses a Loghub `*_structured.csv` text (RFC 4180: quoted fields, doubled quotes,
/// newlines inside quotes) and returns its `Content` and `EventTemplate` columns.
pub fn parse_structured_csv(text: &str) -> Result<(Vec<String>, Vec<String>), String> {
    let rows = parse_csv(text);
    let header = rows.first().ok_or("empty CSV")?;
    let col = |name: &str| header.iter().position(|h| h == name).ok_or(format!("no {name} column"));
    let (ci, ti) = (col("Content")?, col("EventTemplate")?);
    let mut content = Vec::with_capacity(rows.len());
    let mut truth = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate().skip(1) {
        if r.len() == 1 && r[0].is_empty() {
            continue;
        }
        let (Some(c), Some(t)) = (r.get(ci), r.get(ti)) else {
            return Err(format!("row {}: {} fields, header has {}", i + 1, r.len(), header.len()));
        };
        content.push(c.clone());
        truth.push(t.clone());
    }
    Ok((content, truth))
}

fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut any = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        any = true;
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
                any = false;
            }
            _ => field.push(c),
        }
    }
    if any {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// Scores predicted group ids (and, for PA, their template texts) against the truth.
pub fn score(truth: &[String], pred: &[u32], templates: &[String]) -> Scores {
    let n = truth.len().min(pred.len());
    if n == 0 {
        return Scores { ga: 0.0, fga: 0.0, pa: 0.0 };
    }
    let mut tg: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut pg: HashMap<u32, usize> = HashMap::new();
    for i in 0..n {
        tg.entry(truth[i].as_str()).or_default().push(i);
        *pg.entry(pred[i]).or_default() += 1;
    }
    let (mut ok_lines, mut ok_groups) = (0usize, 0usize);
    for idx in tg.values() {
        let p = pred[idx[0]];
        if idx.iter().all(|&i| pred[i] == p) && pg[&p] == idx.len() {
            ok_lines += idx.len();
            ok_groups += 1;
        }
    }
    let ga = ok_lines as f64 / n as f64;
    let (p, r) = (ok_groups as f64 / pg.len() as f64, ok_groups as f64 / tg.len() as f64);
    let fga = if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 };
    let pa =
        (0..n).filter(|&i| templates.get(pred[i] as usize).is_some_and(|t| *t == truth[i])).count() as f64 / n as f64;
    Scores { ga, fga, pa }
}

/// Mines `sys` with `cfg` and scores it.
pub fn evaluate(sys: &Labeled, cfg: &DrainConfig) -> Scores {
    let (ids, templates) = mine_ids(&sys.content, cfg);
    let texts: Vec<String> = templates.into_iter().map(|t| t.template).collect();
    score(&sys.truth, &ids, &texts)
}

/// The settings searched: similarity threshold × minimum repeat × maximum distinct words.
pub fn grid() -> Vec<DrainConfig> {
    let mut out = Vec::new();
    for st in [0.4f32, 0.5, 0.6, 0.7, 0.8, 0.9] {
        for rep in [2.0f32, 3.0, 4.0, 6.0, 8.0] {
            for max_words in [4usize, 8, 16, 32, 1 << 20] {
                out.push(DrainConfig {
                    sim_threshold: st,
                    split_min_repeat: rep,
                    split_max_words: max_words,
                    mask: true,
                });
            }
        }
    }
    out
}

/// One held-out system of a leave-one-system-out run.
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    /// The held-out system.
    pub system: String,
    /// Setting chosen on the other systems.
    pub chosen: DrainConfig,
    /// Mean GA of that setting on the other systems (held in).
    pub held_in_ga: f64,
    /// Scores of that setting on the held-out system.
    pub held_out: Scores,
}

/// A whole leave-one-system-out run.
#[derive(Debug, Clone, Serialize)]
pub struct Loso {
    /// One fold per system, in input order.
    pub folds: Vec<Fold>,
    /// Mean held-out GA over the folds.
    pub mean_ga: f64,
    /// Mean held-out FGA.
    pub mean_fga: f64,
    /// The setting chosen on all systems together (what ships as the default).
    pub chosen_on_all: DrainConfig,
}

/// Grid neighbours: settings that differ from each other by one step in one dimension.
fn neighbours(grid: &[DrainConfig]) -> Vec<Vec<usize>> {
    fn rank<T: PartialOrd + Copy>(vals: &[T], v: T) -> usize {
        vals.iter().filter(|&&x| x < v).count()
    }
    let mut st: Vec<f32> = grid.iter().map(|c| c.sim_threshold).collect();
    let mut rep: Vec<f32> = grid.iter().map(|c| c.split_min_repeat).collect();
    let mut mw: Vec<usize> = grid.iter().map(|c| c.split_max_words).collect();
    st.sort_by(f32::total_cmp);
    st.dedup();
    rep.sort_by(f32::total_cmp);
    rep.dedup();
    mw.sort_unstable();
    mw.dedup();
    let pos: Vec<[usize; 3]> = grid
        .iter()
        .map(|c| [rank(&st, c.sim_threshold), rank(&rep, c.split_min_repeat), rank(&mw, c.split_max_words)])
        .collect();
    pos.iter()
        .map(|a| {
            (0..pos.len())
                .filter(|&j| {
                    let d: usize = a.iter().zip(&pos[j]).map(|(x, y)| x.abs_diff(*y)).sum();
                    d == 1 && a.iter().zip(&pos[j]).filter(|(x, y)| x != y).count() == 1
                })
                .collect()
        })
        .collect()
}

/// Picks the best setting on `systems` (indices) from a GA matrix `ga[config][system]`: the
/// highest mean GA; ties go to the higher worst-system GA, then to the setting whose grid
/// neighbours score best (the middle of a plateau rather than its edge), then grid order.
fn pick(ga: &[Vec<f64>], systems: &[usize], near: &[Vec<usize>]) -> (usize, f64) {
    let mean = |c: usize| systems.iter().map(|&s| ga[c][s]).sum::<f64>() / systems.len().max(1) as f64;
    let worst = |c: usize| systems.iter().map(|&s| ga[c][s]).fold(f64::INFINITY, f64::min);
    let around = |c: usize| {
        let n = &near[c];
        if n.is_empty() {
            0.0
        } else {
            n.iter().map(|&j| mean(j)).sum::<f64>() / n.len() as f64
        }
    };
    let key = |c: usize| [mean(c), worst(c), around(c)];
    let mut best: Option<(usize, [f64; 3])> = None;
    for c in 0..ga.len() {
        let k = key(c);
        let better = match &best {
            None => true,
            Some((_, bk)) => {
                let mut res = false;
                for (x, y) in k.iter().zip(bk) {
                    if *x > *y + 1e-12 {
                        res = true;
                        break;
                    }
                    if *x < *y - 1e-12 {
                        break;
                    }
                }
                res
            }
        };
        if better {
            best = Some((c, k));
        }
    }
    best.map(|(c, k)| (c, k[0])).unwrap_or((0, 0.0))
}

/// Leave-one-system-out over `grid` (see the module docs). `scores[c][s]` are computed once;
/// `progress` is called after each setting.
pub fn leave_one_system_out(systems: &[Labeled], grid: &[DrainConfig], mut progress: impl FnMut(usize)) -> Loso {
    let scores: Vec<Vec<Scores>> = grid
        .iter()
        .enumerate()
        .map(|(i, cfg)| {
            let row = systems.iter().map(|s| evaluate(s, cfg)).collect();
            progress(i + 1);
            row
        })
        .collect();
    let ga: Vec<Vec<f64>> = scores.iter().map(|r| r.iter().map(|s| s.ga).collect()).collect();
    let near = neighbours(grid);
    let mut folds = Vec::new();
    for (h, sys) in systems.iter().enumerate() {
        let others: Vec<usize> = (0..systems.len()).filter(|&s| s != h).collect();
        let (c, held_in) = pick(&ga, &others, &near);
        folds.push(Fold {
            system: sys.system.clone(),
            chosen: grid[c].clone(),
            held_in_ga: held_in,
            held_out: scores[c][h],
        });
    }
    let all: Vec<usize> = (0..systems.len()).collect();
    let (c_all, _) = pick(&ga, &all, &near);
    let k = folds.len().max(1) as f64;
    Loso {
        mean_ga: folds.iter().map(|f| f.held_out.ga).sum::<f64>() / k,
        mean_fga: folds.iter().map(|f| f.held_out.fga).sum::<f64>() / k,
        folds,
        chosen_on_all: grid.get(c_all).cloned().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_scores() {
        let csv = "LineId,Content,EventTemplate\n1,\"a, 1\",a <*>\n2,\"a, 2\",a <*>\n3,b,b\n";
        let (c, t) = parse_structured_csv(csv).unwrap();
        assert_eq!(c, vec!["a, 1", "a, 2", "b"]);
        assert_eq!(t[2], "b");
        // perfect grouping
        let s = score(&t, &[0, 0, 1], &["a <*>".into(), "b".into()]);
        assert_eq!((s.ga, s.fga, s.pa), (1.0, 1.0, 1.0));
        // everything merged: no true group is exact
        let s = score(&t, &[0, 0, 0], &["x".into()]);
        assert_eq!(s.ga, 0.0);
        // split of the first group: only "b" is correct
        let s = score(&t, &[0, 1, 2], &[]);
        assert!((s.ga - 1.0 / 3.0).abs() < 1e-9);
        assert!(parse_structured_csv("x,y\n1,2\n").is_err());
    }

    #[test]
    fn loso_picks_on_the_others() {
        let mk = |name: &str, lines: &[(&str, &str)]| Labeled {
            system: name.into(),
            content: lines.iter().map(|l| l.0.to_string()).collect(),
            truth: lines.iter().map(|l| l.1.to_string()).collect(),
        };
        let a = mk("A", &[("open x 1", "open x <*>"), ("open x 2", "open x <*>"), ("close y", "close y")]);
        let b = mk("B", &[("u alice", "u <*>"), ("u bob", "u <*>"), ("u carol", "u <*>")]);
        let grid = grid();
        let l = leave_one_system_out(&[a, b], &grid, |_| {});
        assert_eq!(l.folds.len(), 2);
        assert_eq!(l.folds[0].system, "A");
        assert!(l.folds.iter().all(|f| (0.0..=1.0).contains(&f.held_out.ga)));
    }
}
