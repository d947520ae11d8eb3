//! `bench suspects-history`: the suspect engine on real reverts (the use case is
//! `citriage_app::suspects_history`); prints per repository the reverts found, those
//! quoting a failure, culprit@1, top-3 and the median place, held-in and held-out
//! repositories apart, beside what chance would score on the same windows.

use citriage_app::suspects_history::{suspects_history, Case, Figures, HistoryEval, HistoryOptions, RepoEval};
use serde_json::json;

use crate::{json_line, put, Lines, Progress, Result};

/// Runs the evaluation and renders it (`cases`: also one line per case).
pub fn run(opts: &HistoryOptions, cases: bool, json: bool, progress: &dyn Progress) -> Result<Lines> {
    let eval = suspects_history(opts, progress)?;
    Ok(if json { json_lines(&eval, cases) } else { text_lines(&eval, cases) })
}

fn json_lines(eval: &HistoryEval, cases: bool) -> Lines {
    let mut v = serde_json::to_value(eval).unwrap_or_default();
    if !cases {
        if let Some(repos) = v.get_mut("repos").and_then(|r| r.as_array_mut()) {
            for r in repos {
                if let Some(o) = r.as_object_mut() {
                    o.remove("cases");
                }
            }
        }
    }
    let held_in = total(eval.repos.iter().filter(|r| r.held_in));
    let held_out = total(eval.repos.iter().filter(|r| !r.held_in));
    v["totals"] = json!({ "held_in": held_in, "held_out": held_out });
    vec![json_line(&v)]
}

/// The figures of several repositories summed (the median over all their cases).
fn total<'a>(repos: impl Iterator<Item = &'a RepoEval>) -> Figures {
    let mut f = Figures::default();
    let mut places = Vec::new();
    for r in repos {
        let g = &r.figures;
        f.cases += g.cases;
        f.outside_window += g.outside_window;
        f.at1 += g.at1;
        f.at1_tied += g.at1_tied;
        f.top3 += g.top3;
        f.chance_at1 += g.chance_at1;
        f.chance_top3 += g.chance_top3;
        places.extend(r.cases.iter().filter_map(|c| c.ranked.as_ref()).map(|p| p.last_place));
    }
    places.sort_unstable();
    f.median_place = match places.len() {
        0 => None,
        n if n % 2 == 1 => Some(f64::from(places[n / 2])),
        n => Some((f64::from(places[n / 2 - 1]) + f64::from(places[n / 2])) / 2.0),
    };
    f
}

fn text_lines(eval: &HistoryEval, cases: bool) -> Lines {
    let mut out = Lines::new();
    put!(
        out,
        "suspects on real history: reverts whose message quotes the failure, the {} first-parent commits before each ranked",
        eval.window
    );
    put!(
        out,
        "{:<22} {:<8} {:>7} {:>8} {:>5} {:>7} {:>5} {:>7} {:>5} {:>6}  {:>8} {:>8}",
        "repository",
        "set",
        "reverts",
        "quotable",
        "cases",
        "outside",
        "@1",
        "@1-tied",
        "top-3",
        "median",
        "chance@1",
        "chance-3"
    );
    for set in [true, false] {
        let repos: Vec<&RepoEval> = eval.repos.iter().filter(|r| r.held_in == set).collect();
        if repos.is_empty() {
            continue;
        }
        for r in &repos {
            out.push(row(&r.name, set, r.reverts, r.quotable, &r.figures));
        }
        let reverts = repos.iter().map(|r| r.reverts).sum();
        let quotable = repos.iter().map(|r| r.quotable).sum();
        let name = if set { "(all held-in)" } else { "(all held-out)" };
        out.push(row(name, set, reverts, quotable, &total(repos.into_iter())));
    }
    put!(out);
    for r in &eval.repos {
        let reasons: Vec<String> = r.skipped.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        put!(
            out,
            "{}: {} first-parent commits, {} reverts; skipped: {}",
            r.name,
            r.first_parent_commits,
            r.reverts,
            if reasons.is_empty() { "none".to_string() } else { reasons.join(", ") }
        );
    }
    if cases {
        put!(out);
        for r in &eval.repos {
            for c in &r.cases {
                case_lines(&mut out, &r.name, c);
            }
        }
    }
    out
}

fn row(name: &str, held_in: bool, reverts: usize, quotable: usize, f: &Figures) -> String {
    format!(
        "{:<22} {:<8} {:>7} {:>8} {:>5} {:>7} {:>5} {:>7} {:>5} {:>6}  {:>8.2} {:>8.2}",
        name,
        if held_in { "held-in" } else { "held-out" },
        reverts,
        quotable,
        f.cases,
        f.outside_window,
        f.at1,
        f.at1_tied,
        f.top3,
        f.median_place.map(|m| format!("{m:.1}")).unwrap_or_else(|| "-".into()),
        f.chance_at1,
        f.chance_top3
    )
}

fn case_lines(out: &mut Lines, repo: &str, c: &Case) {
    let place = match &c.ranked {
        None => "beyond the window".to_string(),
        Some(p) if p.tied_with > 1 => {
            format!("rank {}= ({} tied), score {}, {}", p.rank, p.tied_with, p.score, p.band.as_str())
        }
        Some(p) => format!("rank {}, score {}, {}", p.rank, p.score, p.band.as_str()),
    };
    put!(
        out,
        "{repo} {} reverts {}: culprit {} {} of {} commits",
        short(&c.revert),
        short(&c.reverted),
        short(&c.culprit),
        place,
        c.window
    );
    let first = c.text.lines.first().map(|l| clip(l, 100)).unwrap_or_default();
    put!(out, "    text ({} line(s)): {first}", c.text.lines.len());
    if let Some(p) = &c.ranked {
        for l in p.links.iter().take(3) {
            put!(out, "    link: {}", clip(l, 140));
        }
    }
    if let Some(b) = c.best.as_ref().filter(|b| *b != &c.culprit) {
        put!(out, "    best: {} score {}", short(b), c.best_score);
    }
}

fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
