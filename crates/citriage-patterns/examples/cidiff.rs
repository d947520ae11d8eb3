//! CiDiff failure-line benchmark: cross-validated choice of the extraction settings (held-in
//! and held-out macro F1 per fold, with and without the passing log), and predictions of the
//! default settings in the scorer's naming (`cidiff_eval.py --pred citriage=OUT_DIR/with-pass`).
//!
//! Usage: cidiff CASES_DIR OUT_DIR [--folds K]
//!   CASES_DIR  folders holding fail.log, pass.log and groundtruth (searched recursively)
//!   OUT_DIR    predictions go to OUT_DIR/with-pass and OUT_DIR/fail-only

use std::path::{Path, PathBuf};
use std::time::Instant;

use citriage_patterns::extract::ExtractConfig;
use citriage_patterns::extract_eval::{cross_validate, grid_fail_only, grid_with_pass, prepare_case, Case};

fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
        if ["fail.log", "pass.log", "groundtruth"].iter().all(|f| d.join(f).is_file()) {
            out.push(d);
        }
    }
    out.sort();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: cidiff CASES_DIR OUT_DIR [--folds K]");
        std::process::exit(2);
    }
    let root = PathBuf::from(&args[1]);
    let out = PathBuf::from(&args[2]);
    let k: usize = args
        .iter()
        .position(|a| a == "--folds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let t0 = Instant::now();
    let cfg = ExtractConfig::default();
    let mut prepared = Vec::new();
    for d in case_dirs(&root) {
        let rel = d.strip_prefix(root.parent().unwrap_or(&root)).unwrap_or(&d).display().to_string();
        let case = Case {
            name: rel,
            fail: std::fs::read(d.join("fail.log")).expect("fail.log"),
            pass: std::fs::read(d.join("pass.log")).expect("pass.log"),
            truth: std::fs::read_to_string(d.join("groundtruth")).expect("groundtruth"),
        };
        prepared.push(prepare_case(&case, cfg.match_cap).expect("case"));
    }
    println!("{} cases prepared in {:.2} s", prepared.len(), t0.elapsed().as_secs_f64());
    for (mode, with_pass, grid) in [("with-pass", true, grid_with_pass()), ("fail-only", false, grid_fail_only())] {
        let cv = cross_validate(&prepared, &grid, k, with_pass);
        println!("== {mode}: {k}-fold cross-validation by project over {} settings", grid.len());
        for f in &cv.folds {
            println!(
                "fold {}: {:>2} cases  held-in {:.3}  held-out {:.3}  {:?}",
                f.fold,
                f.cases.len(),
                f.held_in_f1,
                f.held_out_f1,
                f.chosen
            );
        }
        println!(
            "held-out macro F1 {:.3} (mean held-in {:.3}); chosen on all: F1 {:.3} {:?}",
            cv.held_out_f1, cv.held_in_f1, cv.fitted_f1, cv.chosen_on_all
        );
        let dir = out.join(mode);
        std::fs::create_dir_all(&dir).expect("create output dir");
        let mut sum = 0.0;
        for c in &prepared {
            let lines = c.predict(&cfg, with_pass);
            sum += c.score(&lines).f1;
            let body: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            std::fs::write(dir.join(format!("{}.txt", c.name.replace('/', "__"))), body.join("\n") + "\n")
                .expect("write");
        }
        println!("default settings: macro F1 {:.3}", sum / prepared.len().max(1) as f64);
    }
}
