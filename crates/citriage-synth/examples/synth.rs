//! Generates a synthetic CI world: `cargo run -p citriage-synth --example synth -- <preset> <out-dir> [seed]`.

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let preset = args.get(1).map(String::as_str).unwrap_or("tiny");
    let Some(out) = args.get(2).map(PathBuf::from) else {
        eprintln!("usage: synth <tiny|demo|k8s> <out-dir> [seed]");
        std::process::exit(2);
    };
    let Some(mut params) = citriage_synth::SynthParams::preset(preset) else {
        eprintln!("unknown preset {preset}; known: {:?}", citriage_synth::PRESETS);
        std::process::exit(2);
    };
    if let Some(seed) = args.get(3).and_then(|s| s.parse().ok()) {
        params.seed = seed;
    }
    if let Some(jobs) = args.get(4).and_then(|s| s.parse().ok()) {
        params.jobs = jobs;
    }
    let start = std::time::Instant::now();
    let mut last = 0u64;
    let res = citriage_synth::generate(&params, &out, &mut |p| {
        if p.done != last || p.phase == citriage_synth::Phase::Done {
            last = p.done;
            eprint!("\r{:?} {}/{} builds={} bytes={}", p.phase, p.done, p.total, p.builds, p.bytes);
        }
    });
    eprintln!();
    match res {
        Ok(s) => {
            println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
            eprintln!("elapsed {:.2}s", start.elapsed().as_secs_f64());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
