//! How fast a large TestGrid table is read and stored, and in how much memory: a
//! generated table answer of 1,000 runs × 5,000 rows (by default) is parsed, turned
//! into builds and stored in a SQLite file in one transaction, as `fetch --testgrid`
//! does; each phase prints its time and the process's peak RSS (VmHWM, reset before
//! the phase). Then the same table is read within a memory limit smaller than it
//! takes, and refused by name before it is held.
//!
//! ```sh
//! cargo run --release -p citriage-ingest --example testgrid_bench
//! cargo run --release -p citriage-ingest --example testgrid_bench -- --runs 1000 --rows 5000 --seed 7
//! ```

use citriage_formats::testgrid::{parse_table, TableLimits};
use citriage_ingest::testgrid::{ingest_table, TestgridOptions};
use citriage_store::Store;
use std::fmt::Write as _;
use std::time::Instant;

fn peak_rss_mib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb / 1024)
}

fn rss_mib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb / 1024)
}

/// CPU seconds (user + system) this process has used (Linux, 100 ticks a second).
fn cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of the line (utime, stime): the 12th and 13th after the command.
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    (tick(11) + tick(12)) as f64 / 100.0
}

/// Starts a new peak-memory measurement (Linux: resets VmHWM to the current RSS).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A table answer shaped like TestGrid's: an Overall row, `rows - 1` tests that mostly
/// pass, fail now and then (with a message), sometimes flake or were not run, newest
/// column first.
fn table(runs: usize, rows: usize, seed: u64) -> String {
    let mut r = Rng(seed.max(1) ^ 0x9E37_79B9_7F4A_7C15);
    let mut out = String::with_capacity(rows * runs * 6);
    let ids: Vec<String> =
        (0..runs).map(|i| (1_700_000_000_000_000_000u64 + (runs - i) as u64 * 1_000_003).to_string()).collect();
    let quoted = |v: &[String]| v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(",");
    let _ = write!(
        out,
        r#"{{"test-group-name":"bench","query":"kubernetes-ci-logs/logs/ci-bench","changelists":[{}],"#,
        quoted(&ids)
    );
    let stamps: Vec<String> =
        (0..runs).map(|i| ((1_795_000_000 + (runs - i) as i64 * 3600) * 1000).to_string()).collect();
    let _ =
        write!(out, r#""timestamps":[{}],"column-header-names":["Date","Time","Build","Commit"],"#, stamps.join(","));
    let commits: Vec<String> =
        (0..runs).map(|i| format!("{:09x}", (i as u64 / 3).wrapping_mul(0x9E37_79B9) & 0xF_FFFF_FFFF)).collect();
    let _ = write!(out, r#""custom-columns":[[{}]],"tests":["#, quoted(&commits));
    for row in 0..rows {
        let mut cells = Vec::with_capacity(runs);
        let fail_rate = if row == 0 {
            300
        } else if row % 50 == 0 {
            120
        } else {
            8
        };
        for _ in 0..runs {
            let x = r.below(1000);
            cells.push(if x < fail_rate {
                12u8
            } else if row > 0 && x < fail_rate + 3 {
                13
            } else if row > 0 && x > 985 {
                0
            } else {
                1
            });
        }
        let name = if row == 0 {
            "Overall".to_string()
        } else {
            format!("[sig-bench] suite {} test {row} should work", row % 37)
        };
        let _ = write!(out, r#"{}{{"name":{name:?},"statuses":["#, if row > 0 { "," } else { "" });
        let mut i = 0;
        let mut first = true;
        while i < cells.len() {
            let n = cells[i..].iter().take_while(|c| **c == cells[i]).count();
            let _ = write!(out, r#"{}{{"count":{n},"value":{}}}"#, if first { "" } else { "," }, cells[i]);
            first = false;
            i += n;
        }
        out.push_str(r#"],"messages":["#);
        let mut first = true;
        for (c, s) in cells.iter().enumerate() {
            if *s == 0 {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            if *s == 12 || *s == 13 {
                let _ = write!(
                    out,
                    r#""bench_test.go:{}: timed out waiting for the condition on node-{}""#,
                    100 + row % 400,
                    c % 17
                );
            } else {
                out.push_str(r#""""#);
            }
        }
        out.push_str("]}");
    }
    out.push_str("]}");
    out
}

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} {v}: expected a number")))
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = arg(&args, "--runs", 1000) as usize;
    let rows = arg(&args, "--rows", 5000) as usize;
    let seed = arg(&args, "--seed", 1);
    let started = Instant::now();
    let doc = table(runs, rows, seed);
    println!(
        "generated a table of {runs} runs × {rows} rows ({} cells, {:.1} MB of JSON) in {:.2} s; RSS now {} MiB",
        runs * rows,
        doc.len() as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        rss_mib().unwrap_or(0)
    );
    let limits = TableLimits::default();

    reset_peak_rss();
    let t = Instant::now();
    let c0 = cpu_seconds();
    let parsed = parse_table(doc.as_bytes(), "bench", &limits).unwrap_or_else(|e| panic!("{e}"));
    let parse_s = t.elapsed().as_secs_f64();
    let parse_cpu = cpu_seconds() - c0;
    let parse_peak = peak_rss_mib().unwrap_or(0);
    let cells: u64 = parsed.status_counts().values().sum();
    assert_eq!(cells, (runs * rows) as u64);
    drop(parsed);

    // Within a limit smaller than the table takes: refused by name, nothing held.
    reset_peak_rss();
    let small = TableLimits { max_bytes: 4 << 20 };
    let t = Instant::now();
    match parse_table(doc.as_bytes(), "bench", &small) {
        Ok(_) => println!("a 4 MiB limit did not refuse the table"),
        Err(e) => println!(
            "within a 4 MiB limit: refused in {:.2} s, peak RSS {} MiB: {e}",
            t.elapsed().as_secs_f64(),
            peak_rss_mib().unwrap_or(0)
        ),
    }

    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    reset_peak_rss();
    let t = Instant::now();
    let c0 = cpu_seconds();
    let o = ingest_table(
        &mut store,
        "bench-dashboard",
        "bench",
        doc.as_bytes(),
        &TestgridOptions { limits, ..Default::default() },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let store_s = t.elapsed().as_secs_f64();
    let store_cpu = cpu_seconds() - c0;
    let store_peak = peak_rss_mib().unwrap_or(0);
    let (builds, results, _) = store.build_counts().expect("counts");
    let db_mib = std::fs::metadata(dir.path().join("bench.db")).map(|m| m.len() / (1 << 20)).unwrap_or(0);

    println!();
    println!("| phase | wall (s) | CPU (s) | cells/s (wall) | peak RSS (MiB) |");
    println!("|---|---:|---:|---:|---:|");
    println!(
        "| parse (read + check + expand) | {parse_s:.2} | {parse_cpu:.2} | {:.0} | {parse_peak} |",
        cells as f64 / parse_s
    );
    println!(
        "| parse + builds + store (one transaction) | {store_s:.2} | {store_cpu:.2} | {:.0} | {store_peak} |",
        cells as f64 / store_s
    );
    println!();
    println!(
        "stored {builds} builds and {results} results ({} written; {} MiB SQLite file); the answer itself is {} MiB of each RSS",
        o.builds_written,
        db_mib,
        doc.len() >> 20
    );
}
