//! Evaluates the payload analysis against a truth file over a payload-snapshot
//! repository or a synthetic world (what `citriage payload eval` does):
//! `cargo run --release -p citriage-payload --example eval_truth -- <dir> [<truth.toml>] [--json] [--time] [--cross-validate]`.
//! With `--time` and a truth, each payload is analysed alone and its wall time
//! printed on stderr.

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(dir) = pos.first().map(PathBuf::from) else {
        eprintln!("usage: eval_truth <dir> [<truth.toml>] [--json]");
        std::process::exit(2);
    };
    let truth = match pos.get(1) {
        Some(p) => match citriage_payload::eval::read_truth(std::path::Path::new(p)) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        },
        None => None,
    };
    if let (true, Some(t)) = (args.iter().any(|a| a == "--cross-validate"), truth.as_ref()) {
        match citriage_payload::crossval::cross_validate(&dir, t, None) {
            Ok(cv) if args.iter().any(|a| a == "--json") => {
                println!("{}", serde_json::to_string_pretty(&cv).unwrap_or_default())
            }
            Ok(cv) => print!("{}", citriage_payload::crossval::render(&cv)),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        }
        return;
    }
    if let (true, Some(t)) = (args.iter().any(|a| a == "--time"), truth.as_ref()) {
        for row in t {
            let one = std::slice::from_ref(row);
            let start = std::time::Instant::now();
            let r = if citriage_payload::eval::is_world(&dir) {
                citriage_payload::eval::eval_world_with(&dir, Some(one))
            } else {
                citriage_payload::eval::eval_snapshots(&dir, Some(one), None)
            };
            let ok = r.map(|r| r.errors == 0).unwrap_or(false);
            eprintln!(
                "{:<40} {:>7.0} ms{}",
                row.tag,
                start.elapsed().as_secs_f64() * 1000.0,
                if ok { "" } else { "  (error)" }
            );
        }
    }
    let start = std::time::Instant::now();
    let r = if citriage_payload::eval::is_world(&dir) {
        citriage_payload::eval::eval_world_with(&dir, truth.as_deref())
    } else {
        citriage_payload::eval::eval_snapshots(&dir, truth.as_deref(), None)
    };
    match r {
        Ok(r) => {
            if args.iter().any(|a| a == "--json") {
                println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
            } else {
                print!("{}", citriage_payload::eval::render_eval(&r));
            }
            eprintln!("analysed {} payloads in {:.2}s", r.payloads, start.elapsed().as_secs_f64());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
