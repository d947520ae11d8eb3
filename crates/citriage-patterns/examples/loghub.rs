//! Loghub-2k template-mining benchmark: leave-one-system-out GA per system, predictions of
//! the default configuration for `loghub_eval.py score`, and single-threaded throughput.
//!
//! Usage: loghub DATA_DIR OUT_DIR [--repeat N]
//!   DATA_DIR  folders <S>/<S>_2k.log_structured.csv (e.g. the shared loghub2k folder)
//!   OUT_DIR   <S>.pred files (one template per input line) are written here

use std::path::PathBuf;
use std::time::Instant;

use citriage_patterns::drain::{Drain, DrainConfig};
use citriage_patterns::mining_eval::{evaluate, grid, leave_one_system_out, parse_structured_csv, Labeled};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: loghub DATA_DIR OUT_DIR [--repeat N]");
        std::process::exit(2);
    }
    let data = PathBuf::from(&args[1]);
    let out = PathBuf::from(&args[2]);
    let repeat: usize = args
        .iter()
        .position(|a| a == "--repeat")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    std::fs::create_dir_all(&out).expect("create output dir");
    let mut names: Vec<String> = std::fs::read_dir(&data)
        .expect("data dir")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut systems = Vec::new();
    for s in names {
        let p = data.join(&s).join(format!("{s}_2k.log_structured.csv"));
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        let (content, truth) = parse_structured_csv(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        systems.push(Labeled { system: s, content, truth });
    }
    let g = grid();
    let loso = leave_one_system_out(&systems, &g, |_| {});
    println!("leave-one-system-out over {} settings", g.len());
    println!("{:<12} {:>6} {:>6} {:>6} {:>8}  chosen on the others", "held out", "GA", "FGA", "PA", "held-in");
    for f in &loso.folds {
        println!(
            "{:<12} {:>6.3} {:>6.3} {:>6.3} {:>8.3}  st={} repeat={} max_words={}",
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
    println!("{:<12} {:>6.3} {:>6.3}", "average", loso.mean_ga, loso.mean_fga);
    println!("chosen on all systems: {:?}; default: {:?}", loso.chosen_on_all, DrainConfig::default());
    let cfg = DrainConfig::default();
    let mut all: Vec<&str> = Vec::new();
    let mut sum = 0.0;
    for s in &systems {
        let (ids, templates) = citriage_patterns::drain::mine_ids(&s.content, &cfg);
        let mut body = String::new();
        for id in ids {
            body.push_str(&templates[id as usize].template);
            body.push('\n');
        }
        std::fs::write(out.join(format!("{}.pred", s.system)), body).expect("write pred");
        sum += evaluate(s, &cfg).ga;
        all.extend(s.content.iter().map(String::as_str));
    }
    println!("default configuration on all systems: average GA {:.3}", sum / systems.len().max(1) as f64);
    let lines: Vec<&str> = (0..repeat).flat_map(|_| all.iter().copied()).collect();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    // best and median of 5 runs (the machine may be shared)
    let mut times = Vec::new();
    let (mut sink, mut ntemplates) = (0u64, 0usize);
    for _ in 0..5 {
        let t = Instant::now();
        let mut d = Drain::new(cfg.clone());
        sink = 0;
        for l in &lines {
            sink = sink.wrapping_add(d.add(l) as u64);
        }
        ntemplates = d.finish().templates.len();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let (dt, med) = (times[0], times[2]);
    println!(
        "throughput: {} lines ({:.1} MB) in {:.3} s = {:.0} lines/s single-threaded, best of 5 (median {:.0} lines/s; {} templates, checksum {})",
        lines.len(),
        bytes as f64 / 1e6,
        dt,
        lines.len() as f64 / dt,
        lines.len() as f64 / med,
        ntemplates,
        sink
    );
}
