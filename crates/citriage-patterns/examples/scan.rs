//! Log scan throughput: finds the lines matching Prow Spyglass's highlight regex in one big
//! build log with citriage's streaming scanner, and runs `rg` with the same regex on the same
//! file beside it (when installed). Generates a deterministic synthetic log first if FILE
//! does not exist.
//!
//! With `--extract`, also runs the full failure-line extraction ([`extract_log`]) on the file
//! (read into memory) without and with a passing log (the same file), and prints its speed.
//!
//! Usage: scan FILE [SIZE_MB] [--extract]   (default 1024 MB)

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use citriage_patterns::extract::{extract_log, marker_regex, scan_reader, ExtractConfig, SPYGLASS_HIGHLIGHT};

fn generate(path: &Path, mb: usize) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let target = mb << 20;
    let mut written = 0usize;
    let mut x: u64 = 0x1234_5678;
    let mut i = 0u64;
    while written < target {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        i += 1;
        let line = match x % 1000 {
            0 => format!("E0510 12:{:02}:{:02}.{:03}] failed to sync pod {}: context deadline exceeded\n", i % 60, (i / 60) % 60, i % 1000, x % 10000),
            1 => "--- FAIL: TestSomething (0.12s)\n".to_string(),
            2 => format!("\x1b[0;31mERROR:\x1b[0m step {} failed\n", i % 97),
            3 => "Downloading 10%\rDownloading 50%\rDownloading 100%\r\n".to_string(),
            4 => "goroutine 7 [running]:\npanic: runtime error: nil pointer\n".to_string(),
            5..=300 => format!("I0510 12:{:02}:{:02}.{:06}    {} reflector.go:{}] Watch close - *v1.Pod total {} items received\n", i % 60, (i / 60) % 60, i % 1000000, 1000 + x % 9000, 100 + x % 900, x % 500),
            301..=600 => format!("=== RUN   TestPackage/case_{}\n--- PASS: TestPackage/case_{} (0.{:02}s)\n", i, i, x % 100),
            _ => format!("{{\"level\":\"info\",\"ts\":{}.{},\"msg\":\"reconciled object\",\"name\":\"obj-{}\",\"ns\":\"ns-{}\"}}\n", 1_700_000_000 + i, x % 1000, x % 100000, x % 50),
        };
        w.write_all(line.as_bytes())?;
        written += line.len();
    }
    w.flush()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: scan FILE [SIZE_MB]");
        std::process::exit(2);
    }
    let path = Path::new(&args[1]);
    let mb: usize = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(1024);
    let do_extract = args.iter().any(|a| a == "--extract");
    if !path.exists() {
        let t = Instant::now();
        generate(path, mb).expect("generate log");
        println!("generated {} ({} MB) in {:.1} s", path.display(), mb, t.elapsed().as_secs_f64());
    }
    let re = marker_regex(SPYGLASS_HIGHLIGHT).expect("regex");
    let mut best = f64::MAX;
    let mut hits = 0usize;
    let mut bytes = 0u64;
    let mut rg_best = f64::MAX;
    let mut rg_lines = 0usize;
    for round in 0..3 {
        let f = std::fs::File::open(path).expect("open");
        let t = Instant::now();
        let (lines, n) = scan_reader(f, &re).expect("scan");
        let dt = t.elapsed().as_secs_f64();
        best = best.min(dt);
        hits = lines.len();
        bytes = n;
        println!("round {round}: citriage scan {:.3} s", dt);
        let t = Instant::now();
        let out =
            std::process::Command::new("rg").args(["--no-config", "-c", "-e", SPYGLASS_HIGHLIGHT]).arg(path).output();
        let dt = t.elapsed().as_secs_f64();
        match out {
            Ok(o) if o.status.success() || o.status.code() == Some(1) => {
                rg_best = rg_best.min(dt);
                rg_lines = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap_or(0);
                println!("round {round}: rg -c          {:.3} s", dt);
            }
            _ => println!("rg not available"),
        }
    }
    let gbs = |s: f64| bytes as f64 / s / 1e9;
    println!(
        "citriage: {} matching lines in {:.1} MB, best {:.3} s = {:.2} GB/s",
        hits,
        bytes as f64 / 1e6,
        best,
        gbs(best)
    );
    if do_extract {
        let data = std::fs::read(path).expect("read");
        let cfg = ExtractConfig::default();
        for with_pass in [false, true] {
            let t = Instant::now();
            let r = extract_log(&data, with_pass.then_some(&data[..]), "log", &cfg);
            let dt = t.elapsed().as_secs_f64();
            println!(
                "extract_log ({}): {} lines, {} excerpts, {} selected lines in {:.2} s = {:.0} MB/s",
                if with_pass { "with passing log" } else { "failed log only" },
                r.total_lines,
                r.excerpts.len(),
                r.lines.len(),
                dt,
                data.len() as f64 / dt / 1e6
            );
        }
    }
    if rg_best < f64::MAX {
        println!(
            "rg -c:    {} matching lines (\\n-only line splitting), best {:.3} s = {:.2} GB/s; citriage/rg time ratio {:.2}",
            rg_lines,
            rg_best,
            gbs(rg_best),
            best / rg_best
        );
    }
}
