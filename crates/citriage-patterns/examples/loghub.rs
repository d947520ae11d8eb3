//! Loghub-2k template-mining benchmark: mines every system's `Content` column with ONE
//! global [`DrainConfig`], writes `OUT_DIR/<System>.pred` (one template per input line) for
//! `loghub_eval.py score OUT_DIR`, and measures single-threaded throughput on the inputs
//! repeated N times.
//!
//! Usage: loghub SHARED_DIR OUT_DIR [--repeat N] [--score]

use std::path::{Path, PathBuf};
use std::time::Instant;

use citriage_patterns::drain::{Drain, DrainConfig};

/// Minimal RFC 4180 CSV reader (quoted fields, doubled quotes, newlines inside quotes).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => in_quotes = true,
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

fn load(data: &Path, system: &str) -> Option<(Vec<String>, Vec<String>)> {
    let p = data.join(system).join(format!("{system}_2k.log_structured.csv"));
    let text = std::fs::read_to_string(p).ok()?;
    let rows = parse_csv(&text);
    let header = rows.first()?;
    let ci = header.iter().position(|h| h == "Content")?;
    let ti = header.iter().position(|h| h == "EventTemplate")?;
    let mut content = Vec::new();
    let mut truth = Vec::new();
    for r in &rows[1..] {
        content.push(r.get(ci).cloned().unwrap_or_default());
        truth.push(r.get(ti).cloned().unwrap_or_default());
    }
    Some((content, truth))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: loghub SHARED_DIR OUT_DIR [--repeat N] [--score]");
        std::process::exit(2);
    }
    let shared = PathBuf::from(&args[1]);
    let data = shared.join("data/loghub2k");
    let out = PathBuf::from(&args[2]);
    let repeat: usize = args
        .iter()
        .position(|a| a == "--repeat")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    std::fs::create_dir_all(&out).expect("create output dir");
    let cfg = DrainConfig::default();
    let mut systems: Vec<String> = std::fs::read_dir(&data)
        .expect("loghub data dir")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|s| load(&data, s).is_some())
        .collect();
    systems.sort();
    let mut all: Vec<String> = Vec::new();
    for s in &systems {
        let (content, _) = load(&data, s).expect("loaded");
        let mut d = Drain::new(cfg.clone());
        let ids: Vec<u32> = content.iter().map(|l| d.add(l)).collect();
        let mut body = String::new();
        for id in ids {
            body.push_str(&d.template(id));
            body.push('\n');
        }
        std::fs::write(out.join(format!("{s}.pred")), body).expect("write pred");
        all.extend(content);
    }
    // throughput: all systems' lines repeated, one miner, one thread
    let lines: Vec<&str> = (0..repeat).flat_map(|_| all.iter().map(String::as_str)).collect();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut d = Drain::new(cfg.clone());
    let t = Instant::now();
    let mut sink = 0u64;
    for l in &lines {
        sink = sink.wrapping_add(d.add(l) as u64);
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "citriage drain, one global configuration {:?}\nthroughput: {} lines ({:.1} MB) in {:.3} s = {:.0} lines/s (clusters {}, checksum {})",
        cfg,
        lines.len(),
        bytes as f64 / 1e6,
        dt,
        lines.len() as f64 / dt,
        d.len(),
        sink
    );
    if args.iter().any(|a| a == "--score") {
        let _ = std::process::Command::new("python3")
            .arg(shared.join("bench/loghub_eval.py"))
            .arg("score")
            .arg(&out)
            .status();
    }
}
