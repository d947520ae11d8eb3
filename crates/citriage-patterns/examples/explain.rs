//! Print how each line of a failed build log was classified, and which were selected.
//!
//! Usage: explain FAIL_LOG [PASS_LOG] [FROM TO]

use citriage_patterns::extract::{explain, extract_log, ExtractConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: explain FAIL_LOG [PASS_LOG] [FROM TO]");
        std::process::exit(2);
    }
    let fail = std::fs::read(&args[1]).expect("read fail log");
    let mut rest: Vec<&String> = args[2..].iter().collect();
    let pass = if rest.first().is_some_and(|a| a.parse::<usize>().is_err()) {
        Some(std::fs::read(rest.remove(0)).expect("read pass log"))
    } else {
        None
    };
    let from: usize = rest.first().and_then(|a| a.parse().ok()).unwrap_or(1);
    let to: usize = rest.get(1).and_then(|a| a.parse().ok()).unwrap_or(usize::MAX);
    let cfg = ExtractConfig::default();
    let res = extract_log(&fail, pass.as_deref(), "log", &cfg);
    let sel: std::collections::HashSet<usize> = res.lines.iter().copied().collect();
    for c in explain(&fail, pass.as_deref(), &cfg) {
        if c.line < from || c.line > to {
            continue;
        }
        let mut t = c.text.clone();
        t.truncate(120);
        println!(
            "{:6} {}{} {:11} {:16} {}",
            c.line,
            if sel.contains(&c.line) { 'S' } else { ' ' },
            if c.new { 'N' } else { ' ' },
            c.kind,
            c.marker.unwrap_or_default(),
            t
        );
    }
}
