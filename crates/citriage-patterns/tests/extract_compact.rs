//! Extraction keeps only each line's offset and class, re-reading line text from the
//! log when it needs it: its results must stay those of the version that held every
//! cleaned line. The digests below were recorded with that version over the same
//! generated logs (excerpts, line numbers, texts, hashes, markers, and `explain`), and
//! recorded again when the classification changed on purpose (failure words inside
//! identifiers, status-token verdicts, timeouts shown with what ran last, the first
//! failure headed by more than a bare keyword).

use citriage_patterns::extract::{explain, extract_log, ExtractConfig};
use sha2::{Digest, Sha256};

/// A log of `n` lines mixing every kind the extractor classifies, line ends of every
/// kind, ANSI colour, CI timestamp prefixes, invalid UTF-8 and lines over the match cap.
fn log(seed: u64, n: usize, passing: bool) -> Vec<u8> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for i in 0..n {
        let r = next();
        let kind = if passing && r % 23 < 12 { 22 } else { r % 23 };
        let line: Vec<u8> = match kind {
            0 => format!("=== RUN   TestThing{}", i % 7).into_bytes(),
            1 => format!("    thing_test.go:{i}: expected {} got {}", r % 5, r % 3).into_bytes(),
            2 => format!("--- FAIL: TestThing{} (0.{}s)", i % 7, r % 10).into_bytes(),
            3 => format!("panic: runtime error: index out of range [{i}]").into_bytes(),
            4 => b"E1126 12:00:00.000000 1 controller.go:42] failed to sync: timeout".to_vec(),
            5 => format!("E1126 12:00:0{}.000000 1 x.go:1] lone error {i}", r % 10).into_bytes(),
            6 => format!("[ERROR] /src/Foo.java:[{i},12] cannot find symbol").into_bytes(),
            7 => b"[INFO] BUILD FAILURE".to_vec(),
            8 => b"==================".to_vec(),
            9 => b"WARNING: DATA RACE".to_vec(),
            10 => format!("\tat org.example.Foo.bar(Foo.java:{i})").into_bytes(),
            11 => format!("\x1b[31m2026-11-26T12:00:00.123Z ERROR: something broke {i}\x1b[0m").into_bytes(),
            12 => Vec::new(),
            13 => [&b"bad \xff\xfe utf8 "[..], format!("{i} error").as_bytes()].concat(),
            14 => format!("Error: {}", "y".repeat(5000 + (r % 100) as usize)).into_bytes(),
            15 => b"make: *** [Makefile:12: test] Error 2".to_vec(),
            16 => format!("    indented detail {i}").into_bytes(),
            17 => b"Downloading from central: https://repo/x.jar".to_vec(),
            18 => format!("--- PASS: TestOther{} (0.00s)", i % 3).into_bytes(),
            _ => format!("I1126 12:00:00 line {i} {}", "x".repeat((r % 120) as usize)).into_bytes(),
        };
        out.extend_from_slice(&line);
        out.extend_from_slice(match next() % 9 {
            0 => b"\r\n",
            1 => b"\r",
            _ => b"\n",
        });
    }
    out
}

fn digest(seed: u64) -> String {
    let fail = log(seed, 3000, false);
    let pass = log(seed + 100, 2500, true);
    let mut h = Sha256::new();
    for cfg in [
        ExtractConfig::default(),
        ExtractConfig { max_excerpt_bytes: 300, max_excerpts: 4, match_cap: 64, ..ExtractConfig::default() },
        ExtractConfig { min_strength: 2, lone_errors: 2, max_plain_run: 3, ..ExtractConfig::default() },
    ] {
        h.update(format!("{:?}", extract_log(&fail, None, "f.log", &cfg)).as_bytes());
        h.update(format!("{:?}", extract_log(&fail, Some(&pass), "f.log", &cfg)).as_bytes());
    }
    h.update(format!("{:?}", explain(&fail, Some(&pass), &ExtractConfig::default())).as_bytes());
    format!("{:x}", h.finalize())
}

#[test]
fn results_are_those_of_the_version_that_held_every_line() {
    let got: Vec<String> = [2u64, 4, 6, 8].into_iter().map(digest).collect();
    // The logs exercise the selection: excerpts with and without the passing log.
    let fail = log(2, 3000, false);
    assert!(extract_log(&fail, None, "f.log", &ExtractConfig::default()).excerpts.len() > 10);
    assert!(!extract_log(&fail, Some(&log(102, 2500, true)), "f.log", &ExtractConfig::default()).excerpts.is_empty());
    let want: [&str; 4] = [
        "12878e98b9c9a79d2a35222a35863fa801f58f26dc6824e54fd3f0093c4c552a",
        "4e52cde81bb62ceb303b46e27de61e466c8fbe085c7e295c366fd9b3c00eb5f1",
        "e221010b21a115a6de5adb061c03133c2c3fc98d2641af9d1ccf1616417eb73e",
        "4bc0aef9fc533796191e2141d113565d9f53e3cdb341e0b550aee5b78fda256e",
    ];
    assert_eq!(got, want);
}
