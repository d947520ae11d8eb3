//! Evaluates the payload analysis on a synthetic world:
//! `cargo run --release -p citriage-payload --example eval_synth -- <world-dir> [--json]`.
//! Prints the culprit rank per payload, the "stage revert" false positives and
//! the time taken.

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(world) = args.iter().find(|a| !a.starts_with("--")).map(PathBuf::from) else {
        eprintln!("usage: eval_synth <world-dir> [--json]");
        std::process::exit(2);
    };
    let start = std::time::Instant::now();
    match citriage_payload::eval::eval_world(&world) {
        Ok(r) => {
            if args.iter().any(|a| a == "--json") {
                println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
            } else {
                print!("{}", citriage_payload::eval::render_eval(&r));
            }
            use std::io::Write;
            let _ = std::io::stdout().flush();
            eprintln!("analyzed {} payloads in {:.2}s", r.payloads, start.elapsed().as_secs_f64());
            if r.false_reverts > 0 || r.errors > 0 {
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
