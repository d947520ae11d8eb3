//! CiDiff failure-line benchmark: writes predictions for every case in two modes (with the
//! passing log, and from the failed log alone) in the scorer's naming, then optionally runs
//! the scorer.
//!
//! Usage: cidiff SHARED_DIR OUT_DIR [--score]
//!   SHARED_DIR  the shared reference directory (holding data/buildlogs/cidiff/data)
//!   OUT_DIR     predictions go to OUT_DIR/with-pass and OUT_DIR/fail-only

use std::path::{Path, PathBuf};
use std::time::Instant;

use citriage_patterns::extract::{extract_log, ExtractConfig};

fn cases(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("breakages")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        let mut has = (false, false, false);
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(n) = p.file_name().and_then(|n| n.to_str()) {
                match n {
                    "pass.log" => has.0 = true,
                    "fail.log" => has.1 = true,
                    "groundtruth" => has.2 = true,
                    _ => {}
                }
            }
        }
        if has.0 && has.1 && has.2 {
            out.push(d);
        }
    }
    out.sort();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: cidiff SHARED_DIR OUT_DIR [--score]");
        std::process::exit(2);
    }
    let shared = PathBuf::from(&args[1]);
    let root = shared.join("data/buildlogs/cidiff/data");
    let out = PathBuf::from(&args[2]);
    let cfg = ExtractConfig::default();
    let mut total_bytes = 0usize;
    let t0 = Instant::now();
    for (mode, use_pass) in [("with-pass", true), ("fail-only", false)] {
        let dir = out.join(mode);
        std::fs::create_dir_all(&dir).expect("create output dir");
        for case in cases(&root) {
            let fail = std::fs::read(case.join("fail.log")).expect("fail.log");
            let pass = std::fs::read(case.join("pass.log")).expect("pass.log");
            total_bytes += fail.len() + if use_pass { pass.len() } else { 0 };
            let res = extract_log(
                &fail,
                if use_pass { Some(&pass[..]) } else { None },
                &case.join("fail.log").display().to_string(),
                &cfg,
            );
            let rel = case.strip_prefix(&root).expect("case under root");
            let name = rel.to_string_lossy().replace('/', "__");
            let body: Vec<String> = res.lines.iter().map(|l| l.to_string()).collect();
            std::fs::write(dir.join(format!("{name}.txt")), body.join("\n") + "\n").expect("write prediction");
        }
    }
    let dt = t0.elapsed().as_secs_f64();
    println!("extracted 2 x {} cases ({:.1} MB) in {:.3} s", cases(&root).len(), total_bytes as f64 / 1e6, dt);
    if args.iter().any(|a| a == "--score") {
        let script = shared.join("bench/cidiff_eval.py");
        for mode in ["with-pass", "fail-only"] {
            println!("== {mode}");
            let status = std::process::Command::new("python3")
                .arg(&script)
                .arg("--pred")
                .arg(format!("citriage={}", out.join(mode).display()))
                .status();
            if let Err(e) = status {
                eprintln!("could not run scorer: {e}");
            }
        }
    }
}
