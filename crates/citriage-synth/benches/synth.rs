//! Throughput benchmark of the world generator (plain `main`, no harness).
//!
//! `cargo bench -p citriage-synth --bench synth -- [tiny|demo|k8s] [--runs N] [--threads N] [--keep DIR]`
//!
//! Prints builds/s, files/s, MB/s and the peak resident set size (VmHWM).

use std::path::PathBuf;
use std::time::Instant;

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok())
}

fn main() {
    let mut preset = "demo".to_string();
    let mut runs = 1usize;
    let mut threads = 0usize;
    let mut keep: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(1).max(1),
            "--threads" => threads = args.next().and_then(|v| v.parse().ok()).unwrap_or(0),
            "--keep" => keep = args.next().map(PathBuf::from),
            s if s.starts_with("--") => {} // cargo passes --bench
            s => preset = s.to_string(),
        }
    }
    let Some(mut params) = citriage_synth::SynthParams::preset(&preset) else {
        eprintln!("unknown preset {preset}; known: {:?}", citriage_synth::PRESETS);
        std::process::exit(2);
    };
    params.threads = threads;
    let mut times = Vec::new();
    let mut last = None;
    // All runs' trees are removed at the end, not between runs: freshly freed
    // inodes make the next run's file creation slower on some filesystems.
    let tmp = match tempfile::tempdir() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tempdir: {e}");
            std::process::exit(1);
        }
    };
    for run in 0..runs {
        let out = match (&keep, run + 1 == runs) {
            (Some(k), true) => k.clone(),
            _ => tmp.path().join(format!("world-{run}")),
        };
        let t0 = Instant::now();
        let mut last_report = Instant::now();
        let res = citriage_synth::generate(&params, &out, &mut |p| {
            if last_report.elapsed().as_secs() >= 5 {
                last_report = Instant::now();
                eprintln!("  {:?} {}/{} builds={} bytes={}", p.phase, p.done, p.total, p.builds, p.bytes);
            }
        });
        let secs = t0.elapsed().as_secs_f64();
        match res {
            Ok(s) => {
                times.push(secs);
                last = Some(s);
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let Some(s) = last else { return };
    let mb = s.bytes as f64 / 1e6;
    println!(
        "synth preset={preset} runs={runs} threads={}",
        if threads == 0 { "all".to_string() } else { threads.to_string() }
    );
    println!(
        "  jobs={} builds={} gcs_builds={} failed_builds={} failed_tests={} payloads={}",
        s.jobs, s.builds, s.gcs_builds, s.failed_builds, s.failed_tests, s.payloads
    );
    println!("  files={} bytes={} ({mb:.1} MB)", s.files, s.bytes);
    println!("  median {median:.2}s (min {:.2}s, max {:.2}s)", times[0], times[times.len() - 1]);
    println!(
        "  {:.0} builds/s, {:.0} files/s, {:.1} MB/s",
        s.builds as f64 / median,
        s.files as f64 / median,
        mb / median
    );
    if let Some(kib) = vm_hwm_kib() {
        println!("  peak RSS (VmHWM) {:.1} MiB", kib as f64 / 1024.0);
    }
}
