//! A log's tail and its analysis are counted against the process's memory budget for
//! bodies in flight: a log waits for room held by others, gives it all back when done,
//! and a tail larger than the whole budget is named as such. (The budget is global to the
//! process: these tests run in their own binary, one after the other.)

use std::sync::Mutex;

use citriage_ingest::excerpts::{excerpts_from_log, excerpts_from_stream, ExcerptLimits, StreamError};
use citriage_sources::http::{self, Hold};

static SERIAL: Mutex<()> = Mutex::new(());

/// `n` lines of progress with failures here and there, the last on the last lines.
fn log(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let line = match i % 5000 {
            0 => format!("--- FAIL: TestThing{i} (0.10s)\n"),
            _ => format!("I1126 12:00:00.000000 1 step.go:1] step {i} done, all fine so far\n"),
        };
        out.extend_from_slice(line.as_bytes());
    }
    out.extend_from_slice(b"panic: boom\n\tmain.go:12 +0x1\n");
    out
}

#[test]
fn a_log_waits_for_room_and_gives_it_back() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    http::set_memory_budget(8 << 20);
    let bytes = log(120_000); // about 8 MiB
    let limits = ExcerptLimits { tail_bytes: 2 << 20, ..ExcerptLimits::default() };
    let want = excerpts_from_log(&bytes, "build-log.txt", &limits).unwrap();
    assert!(want.len() >= 2, "{want:?}");
    assert_eq!(http::memory_in_use(), 0);

    // Another holder takes most of the budget; the log has to wait until it lets go.
    let mut other = Hold::default();
    other.grow_to(7 << 20).unwrap();
    let reader = {
        let bytes = bytes.clone();
        let limits = limits.clone();
        std::thread::spawn(move || excerpts_from_stream(&bytes[..], "build-log.txt", &limits))
    };
    // Sequencing only: the reader is then likely waiting; it must finish either way.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(http::memory_in_use() <= http::memory_budget(), "{} in use", http::memory_in_use());
    drop(other);
    let got = reader.join().unwrap().unwrap();
    assert_eq!(got, want, "waiting changes nothing in the excerpts");
    assert_eq!(http::memory_in_use(), 0, "the log's hold is given back");
    http::set_memory_budget(512 << 20);
}

#[test]
fn a_small_budget_analyses_less_and_a_tail_too_costly_is_named() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    http::set_memory_budget(1 << 20);
    // About 2.7 MiB: with a 1 MiB budget only its last quarter MiB is analysed.
    let bytes = log(40_000);
    let ex = excerpts_from_stream(&bytes[..], "build-log.txt", &ExcerptLimits::default()).unwrap();
    let quarter = ExcerptLimits { tail_bytes: 256 << 10, ..ExcerptLimits::default() };
    assert_eq!(ex, excerpts_from_log(&bytes, "build-log.txt", &quarter).unwrap());
    assert!(ex.iter().any(|e| e.text.starts_with("panic: boom")), "{ex:?}");
    assert_ne!(ex, excerpts_from_log(&bytes, "build-log.txt", &ExcerptLimits::default()).unwrap());
    assert_eq!(http::memory_in_use(), 0);
    // A tail of very short lines: a quarter MiB of them would cost more than the budget
    // to analyse.
    let mut blank = b"abc\n".repeat(512 << 10);
    blank.extend_from_slice(b"--- FAIL: TestLast (0.10s)\n");
    match excerpts_from_stream(&blank[..], "build-log.txt", &ExcerptLimits::default()) {
        Err(StreamError::Log(reason)) => {
            assert!(reason.contains("more than the whole 1048576-byte memory budget"), "{reason}");
            assert!(reason.contains("last 262144 bytes"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(http::memory_in_use(), 0);
    http::set_memory_budget(512 << 20);
}
