//! `bench mining` and `bench extract`: accuracy and speed of the log
//! template miner (leave-one-system-out on labelled systems) and of failure-line extraction
//! (cross-validated by project on CiDiff-format cases, through the same function as
//! `citriage extract`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use citriage_patterns::drain::{mine_ids, Drain, DrainConfig};
use citriage_patterns::extract_eval::{cross_validate, grid_fail_only, grid_with_pass, prepare_case, Case};
use citriage_patterns::mining_eval::{evaluate, grid, leave_one_system_out, parse_structured_csv, Labeled};
use serde_json::json;

use crate::{json_line, put, Lines};
use citriage_app::{Error, Progress, Result};

fn read_text(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).map_err(|e| Error::input(format!("{}: cannot read: {e}", p.display())))
}

fn read_bytes(p: &Path) -> Result<Vec<u8>> {
    std::fs::read(p).map_err(|e| Error::input(format!("{}: cannot read: {e}", p.display())))
}

/// Labelled systems under `data` (`<S>/<S>_2k.log_structured.csv`), sorted by name.
fn load_systems(data: &Path) -> Result<Vec<Labeled>> {
    let rd = std::fs::read_dir(data).map_err(|e| Error::input(format!("{}: cannot list: {e}", data.display())))?;
    let mut names: Vec<String> =
        rd.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let mut out = Vec::new();
    for s in names {
        let p = data.join(&s).join(format!("{s}_2k.log_structured.csv"));
        if !p.is_file() {
            continue;
        }
        let (content, truth) =
            parse_structured_csv(&read_text(&p)?).map_err(|e| Error::input(format!("{}: {e}", p.display())))?;
        out.push(Labeled { system: s, content, truth });
    }
    if out.len() < 2 {
        return Err(Error::input(format!(
            "{}: found {} labelled system(s) (<S>/<S>_2k.log_structured.csv); leave-one-system-out needs at least 2",
            data.display(),
            out.len()
        )));
    }
    Ok(out)
}

/// Runs `bench mining`; returns the lines to print (the JSON document when `json`).
pub fn mining(data: &Path, out: Option<&Path>, repeat: usize, json: bool, pb: &dyn Progress) -> Result<Lines> {
    let systems = load_systems(data)?;
    let g = grid();
    pb.doing("leave-one-system-out");
    let loso =
        leave_one_system_out(&systems, &g, |i| pb.doing(&format!("leave-one-system-out: setting {i}/{}", g.len())));
    pb.doing("throughput");
    let cfg = DrainConfig::default();
    if let Some(out) = out {
        std::fs::create_dir_all(out).map_err(|e| Error::failed(format!("{}: {e}", out.display())))?;
        for s in &systems {
            let (ids, templates) = mine_ids(&s.content, &cfg);
            let mut body = String::new();
            for id in ids {
                body.push_str(&templates[id as usize].template);
                body.push('\n');
            }
            let p = out.join(format!("{}.pred", s.system));
            std::fs::write(&p, body).map_err(|e| Error::failed(format!("{}: {e}", p.display())))?;
        }
    }
    let default_ga: Vec<f64> = systems.iter().map(|s| evaluate(s, &cfg).ga).collect();
    // throughput: all systems' lines repeated, one miner, one thread; best and median of 5
    let lines: Vec<&str> =
        (0..repeat.max(1)).flat_map(|_| systems.iter().flat_map(|s| s.content.iter().map(String::as_str))).collect();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut times = Vec::new();
    let mut cpu_times = Vec::new();
    let mut templates = 0usize;
    for _ in 0..5 {
        let cpu = thread_cpu_seconds();
        let t = Instant::now();
        let mut d = Drain::new(cfg.clone());
        for l in &lines {
            d.add(l);
        }
        templates = d.finish().templates.len();
        times.push(t.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu, thread_cpu_seconds()) {
            cpu_times.push(b - a);
        }
    }
    times.sort_by(f64::total_cmp);
    cpu_times.sort_by(f64::total_cmp);
    let (best, median) = (lines.len() as f64 / times[0], lines.len() as f64 / times[2]);
    let cpu_median = cpu_times.get(cpu_times.len() / 2).map(|t| lines.len() as f64 / t.max(1e-9));
    let mut shown = Lines::new();
    if json {
        put!(
            shown,
            "{}",
            json_line(&json!({
                "systems": systems.len(), "settings": g.len(), "leave_one_system_out": loso,
                "default": cfg, "default_ga": systems.iter().zip(&default_ga).map(|(s, g)| json!({"system": s.system, "ga": g})).collect::<Vec<_>>(),
                "throughput": {"lines": lines.len(), "bytes": bytes, "lines_per_second_best": best, "lines_per_second_median": median, "lines_per_cpu_second_median": cpu_median, "templates": templates},
            }))
        );
        return Ok(shown);
    }
    put!(
        shown,
        "Leave-one-system-out over {} settings (each held-out system scored with the setting chosen on the others)",
        g.len()
    );
    put!(
        shown,
        "{:<14} {:>6} {:>6} {:>6} {:>8}  chosen on the others (st / repeat / max words)",
        "held out",
        "GA",
        "FGA",
        "PA",
        "held-in"
    );
    for f in &loso.folds {
        put!(
            shown,
            "{:<14} {:>6.3} {:>6.3} {:>6.3} {:>8.3}  {} / {} / {}",
            f.system,
            f.held_out.ga,
            f.held_out.fga,
            f.held_out.pa,
            f.held_in_ga,
            f.chosen.sim_threshold,
            f.chosen.split_min_repeat,
            f.chosen.split_max_words
        );
    }
    put!(shown, "{:<14} {:>6.3} {:>6.3}", "average", loso.mean_ga, loso.mean_fga);
    let c = &loso.chosen_on_all;
    put!(
        shown,
        "Chosen on all systems: st {} / repeat {} / max words {}; the default is {}",
        c.sim_threshold,
        c.split_min_repeat,
        c.split_max_words,
        if *c == cfg { "the same" } else { "DIFFERENT" }
    );
    put!(
        shown,
        "Default configuration, fitted on all systems: average GA {:.3}",
        default_ga.iter().sum::<f64>() / default_ga.len() as f64
    );
    put!(shown,
        "Throughput: {} lines ({:.1} MB) single-threaded: {:.0} lines/s best of 5, {:.0} median; {} per second of the thread's CPU time (median; wall time counts other processes' turns on a shared machine) ({} templates)",
        lines.len(),
        bytes as f64 / 1e6,
        best,
        median,
        cpu_median.map(|v| format!("{v:.0} lines")).unwrap_or_else(|| "unknown".into()),
        templates
    );
    if let Some(out) = out {
        put!(shown, "Wrote {}/<S>.pred (score with loghub_eval.py score {})", out.display(), out.display());
    }
    Ok(shown)
}

/// CPU time of the calling thread in seconds, where the system tells it
/// (`/proc/thread-self/schedstat` on Linux).
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Case folders under `root` (holding fail.log, pass.log and groundtruth), sorted.
fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() && !e.file_type().is_ok_and(|t| t.is_symlink()) {
                stack.push(p);
            }
        }
        if ["fail.log", "pass.log", "groundtruth"].iter().all(|f| d.join(f).is_file()) {
            out.push(d);
        }
    }
    out.sort();
    out
}

/// Runs `bench extract`; returns the lines to print (the JSON document when `json`).
pub fn extract(root: &Path, out: Option<&Path>, k: usize, json: bool, pb: &dyn Progress) -> Result<Lines> {
    if k < 2 {
        return Err(Error::input(format!("--folds {k}: cross-validation needs at least 2 folds")));
    }
    let dirs = case_dirs(root);
    if dirs.len() < k {
        return Err(Error::input(format!(
            "{}: found {} case folder(s) with fail.log, pass.log and groundtruth; {k} folds need at least {k}",
            root.display(),
            dirs.len()
        )));
    }
    pb.doing("reading cases");
    // the settings `citriage extract` uses: the library defaults, nothing capped
    let cfg = citriage_app::extract::extract_config();
    let mut cases = Vec::new();
    let mut prepared = Vec::new();
    for d in &dirs {
        // named from the parent of `root`: `breakages/guava_1947` for --cases .../breakages,
        // the CiDiff scorer's naming
        let base = root.parent().unwrap_or(root);
        let name = d.strip_prefix(base).unwrap_or(d).display().to_string();
        let case = Case {
            name,
            fail: read_bytes(&d.join("fail.log"))?,
            pass: read_bytes(&d.join("pass.log"))?,
            truth: read_text(&d.join("groundtruth"))?,
        };
        prepared.push(prepare_case(&case, cfg.match_cap).map_err(|e| Error::input(format!("{}: {e}", d.display())))?);
        cases.push(case);
    }
    let mut reports = Vec::new();
    for (mode, with_pass, grid) in [("with-pass", true, grid_with_pass()), ("fail-only", false, grid_fail_only())] {
        pb.doing(&format!("cross-validating {mode}"));
        let cv = cross_validate(&prepared, &grid, k, with_pass);
        // what `citriage extract` returns, scored
        pb.doing(&format!("extracting {mode} as the CLI does"));
        let mut f1 = Vec::new();
        for (c, p) in cases.iter().zip(&prepared) {
            let lines =
                citriage_patterns::extract::extract_log(&c.fail, with_pass.then_some(&c.pass[..]), "fail.log", &cfg)
                    .lines;
            f1.push(p.score(&lines).f1);
            if let Some(out) = out {
                let dir = out.join(mode);
                std::fs::create_dir_all(&dir).map_err(|e| Error::failed(format!("{}: {e}", dir.display())))?;
                let file = dir.join(format!("{}.txt", c.name.replace(['/', '\\'], "__")));
                let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
                std::fs::write(&file, body).map_err(|e| Error::failed(format!("{}: {e}", file.display())))?;
            }
        }
        let cli_f1 = f1.iter().sum::<f64>() / f1.len().max(1) as f64;
        reports.push((mode, grid.len(), cv, cli_f1));
    }
    let mut shown = Lines::new();
    if json {
        put!(
            shown,
            "{}",
            json_line(&json!({
                "cases": prepared.len(), "folds": k,
                "modes": reports.iter().map(|(mode, n, cv, cli_f1)| json!({
                    "mode": mode, "settings": n, "cross_validation": cv, "cli_macro_f1": cli_f1,
                })).collect::<Vec<_>>(),
            }))
        );
        return Ok(shown);
    }
    put!(shown, "{} cases, {k}-fold cross-validation by project (settings chosen on the other folds)", prepared.len());
    for (mode, n, cv, cli_f1) in &reports {
        put!(shown, "\n{mode} ({n} settings)");
        put!(shown, "{:<6} {:>5} {:>8} {:>9}  chosen", "fold", "cases", "held-in", "held-out");
        for f in &cv.folds {
            put!(
                shown,
                "{:<6} {:>5} {:>8.3} {:>9.3}  {}",
                f.fold,
                f.cases.len(),
                f.held_in_f1,
                f.held_out_f1,
                settings(&f.chosen, *mode == "with-pass")
            );
        }
        put!(shown, "held-out macro F1 over all cases {:.3} (mean held-in {:.3})", cv.held_out_f1, cv.held_in_f1);
        let same = if *mode == "with-pass" {
            settings(&cv.chosen_on_all, true) == settings(&cfg, true)
        } else {
            settings(&cv.chosen_on_all, false) == settings(&cfg, false)
        };
        put!(
            shown,
            "chosen on all cases: {} (the default is {}); `citriage extract` macro F1 {:.3}",
            settings(&cv.chosen_on_all, *mode == "with-pass"),
            if same { "the same" } else { "DIFFERENT" },
            cli_f1
        );
    }
    if let Some(out) = out {
        put!(
            shown,
            "\nWrote {0}/with-pass and {0}/fail-only (score with cidiff_eval.py --pred citriage=DIR)",
            out.display()
        );
    }
    Ok(shown)
}

/// The tuned settings of one mode, for display.
fn settings(c: &citriage_patterns::extract::ExtractConfig, with_pass: bool) -> String {
    if with_pass {
        format!("new share {}% / min new {} / plain run {}", c.new_share_percent, c.min_new_lines, c.max_plain_run)
    } else {
        format!(
            "min strength {} / lone errors {} / verdict gap {} / plain run {} / run min strength {}",
            c.min_strength, c.lone_errors, c.verdict_gap, c.max_plain_run, c.run_min_strength
        )
    }
}
