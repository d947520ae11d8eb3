//! A GCS-shaped HTTP server on 127.0.0.1 over a folder laid out like a bucket (the one
//! the ingestion tests use): the JSON listing API with `prefix`, `delimiter` and page
//! tokens, and objects streamed from their files with an `ETag`, a generation and
//! `Range: bytes=N-` honoured. For measuring `citriage fetch --gcs` against big files:
//!
//! ```text
//! # eight builds of ci-big, each with a JUnit file of 300 MB (50 test cases and one
//! # 300 MB <system-out>), under /tmp/big/kubernetes-ci-logs:
//! cargo run -p citriage-ingest --example gcs_serve -- --make-big /tmp/big/kubernetes-ci-logs 8 300
//! # (a fourth number, LOG_MB, also writes a build-log.txt of that many megabytes)
//! # serve it (prints the base URL; Ctrl-C stops it):
//! cargo run -p citriage-ingest --example gcs_serve -- /tmp/big/kubernetes-ci-logs kubernetes-ci-logs
//! /usr/bin/time -v citriage --db /tmp/big.db fetch --gcs http://127.0.0.1:PORT --job ci-big \
//!     --concurrency 8 --no-log-excerpts
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, dir, builds, mb, rest @ ..] if flag == "--make-big" && rest.len() <= 1 => {
            let builds: u32 = builds.parse().unwrap_or_else(|_| usage());
            let mb: usize = mb.parse().unwrap_or_else(|_| usage());
            let log_mb: usize = rest.first().map_or(0, |m| m.parse().unwrap_or_else(|_| usage()));
            if let Err(e) = make_big(Path::new(dir), builds, mb, log_mb) {
                eprintln!("{dir}: {e}");
                std::process::exit(2);
            }
        }
        [dir, bucket] => serve(PathBuf::from(dir), bucket.clone()),
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("usage: gcs_serve --make-big DIR BUILDS JUNIT_MB [LOG_MB] | gcs_serve DIR BUCKET");
    std::process::exit(2)
}

/// `builds` builds of `ci-big` under `root`, each with a `junit_big.xml` of about `mb`
/// megabytes: 50 passing test cases and one failing case with a `<system-out>` that
/// holds the rest; with `log_mb`, also a `build-log.txt` of about that many megabytes
/// whose failure is on its last lines.
fn make_big(root: &Path, builds: u32, mb: usize, log_mb: usize) -> std::io::Result<()> {
    for id in 1..=builds {
        let b = root.join(format!("logs/ci-big/{id}"));
        std::fs::create_dir_all(b.join("artifacts"))?;
        std::fs::write(b.join("started.json"), format!(r#"{{"timestamp": {}}}"#, 1_764_000_000 + id))?;
        std::fs::write(
            b.join("finished.json"),
            format!(r#"{{"timestamp": {}, "result": "FAILURE"}}"#, 1_764_000_600 + id),
        )?;
        let mut f = std::io::BufWriter::new(std::fs::File::create(b.join("artifacts/junit_big.xml"))?);
        writeln!(f, "<testsuite name=\"big\" tests=\"51\">")?;
        for i in 0..50 {
            writeln!(f, "<testcase classname=\"big\" name=\"case {i}\" time=\"0.1\"/>")?;
        }
        writeln!(f, "<testcase classname=\"big\" name=\"chatty\" time=\"9\"><failure message=\"boom\">at big.go:1</failure><system-out>")?;
        let line = b"I1126 12:00:00.000000 1 chatty.go:42] a line of output that goes on and on and on\n";
        let mut written = 0;
        while written < mb << 20 {
            f.write_all(line)?;
            written += line.len();
        }
        writeln!(f, "</system-out></testcase>\n</testsuite>")?;
        f.flush()?;
        if log_mb > 0 {
            let mut f = std::io::BufWriter::new(std::fs::File::create(b.join("build-log.txt"))?);
            let line = b"I1126 12:00:00.000000 1 step.go:7] all is well so far, nothing to see here\n";
            let mut written = 0;
            while written < log_mb << 20 {
                f.write_all(line)?;
                written += line.len();
            }
            writeln!(f, "--- FAIL: TestTheEnd (1.00s)\n    end_test.go:12: it broke\nFAIL")?;
            f.flush()?;
        }
    }
    println!("{builds} builds of ci-big under {}", root.display());
    Ok(())
}

fn serve(root: PathBuf, bucket: String) {
    let server = common::serve_requests(move |req| {
        if let Some(r) = common::gcs_listing(&root, &bucket, &req.url, 1000) {
            return r;
        }
        match req.url.strip_prefix(&format!("/{bucket}/")) {
            Some(path) => {
                let path = common::pct_decode(path.split('?').next().unwrap_or_default());
                if path.split('/').any(|s| s == "..") {
                    return common::reply(404, b"Not Found".to_vec());
                }
                let how = common::Sending { ranges: true, ..Default::default() };
                common::gcs_object(&root, &path, req, how)
            }
            None => common::reply(404, b"no such bucket".to_vec()),
        }
    });
    println!("{}", server.base);
    loop {
        std::thread::park();
    }
}
