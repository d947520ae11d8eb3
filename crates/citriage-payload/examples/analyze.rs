//! Analyzes one payload offline and writes the reports:
//! `cargo run -p citriage-payload --example analyze -- <dir> <tag> [--snapshot] [--as-of TIME] [--out DIR] [--json]`.
//! `<dir>` is a recorded-response world (release-controller responses, `gcs/`
//! mirror, `github/` diffs) or, with `--snapshot`, a payload-snapshot directory.

use std::path::PathBuf;

use citriage_payload::{analyze, AnalyzeOptions, GcsMirror, RecordedDir, SnapshotDir};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    if pos.len() < 2 {
        eprintln!("usage: analyze <dir> <tag> [--snapshot] [--as-of TIME] [--out DIR] [--json]");
        std::process::exit(2);
    }
    let dir = PathBuf::from(pos[0]);
    let mut opts = AnalyzeOptions::new(pos[1]);
    opts.as_of = flag("--as-of");
    let result = if args.iter().any(|a| a == "--snapshot") {
        SnapshotDir::open(&dir).and_then(|s| analyze(&s, &s, &opts))
    } else {
        let src = RecordedDir::open(&dir);
        let ev = GcsMirror::new(dir.join("gcs"));
        analyze(&src, &ev, &opts)
    };
    match result {
        Ok(a) => {
            if let Some(out) = flag("--out") {
                match citriage_payload::write_reports(&a, &PathBuf::from(out)) {
                    Ok(files) => files.iter().for_each(|f| eprintln!("wrote {}", f.display())),
                    Err(e) => {
                        eprintln!("error: {e}");
                        std::process::exit(1);
                    }
                }
            }
            if args.iter().any(|a| a == "--json") {
                print!("{}", citriage_payload::render_json(&a));
            } else {
                print!("{}", citriage_payload::render_markdown(&a));
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(if e.is_bad_input() { 2 } else { 1 });
        }
    }
}
