//! The process's memory budget for bodies in flight, against a real HTTP server on
//! 127.0.0.1: an endless body and a body larger than the budget stop with an error
//! naming the URL and the budget; a gzip bomb stops at the size limit with an error
//! naming the object and the limit; many bodies read at once stay within the budget
//! together. One test (the budget is the process's), run in its own test binary.

use citriage_sources::artifacts::{ArtifactSource, GcsHttp};
use citriage_sources::http::{self, HttpClient, HttpError, Request};
use citriage_sources::{HttpOptions, SourceError};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

fn gzip_of_zeros(n: usize) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![0u8; n]).unwrap();
    gz.finish().unwrap()
}

/// A plain HTTP/1.1 server on 127.0.0.1: a thread per connection, one request each.
struct Server {
    base: String,
}

fn respond(mut conn: std::net::TcpStream, bomb: &[u8]) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let send = |conn: &mut std::net::TcpStream, status: &str, body: &[u8]| {
        let h = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
        let _ = conn.write_all(h.as_bytes());
        let _ = conn.write_all(body);
    };
    match path.as_str() {
        "/endless" => {
            let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
            let chunk = vec![b'x'; 64 * 1024];
            while conn.write_all(&chunk).is_ok() {}
        }
        "/b/bomb.gz" => send(&mut conn, "200 OK", bomb),
        p if p.starts_with("/b/three-mib") => send(&mut conn, "200 OK", &vec![b'y'; 3 << 20]),
        _ => send(&mut conn, "404 Not Found", b"nope"),
    }
}

fn serve() -> Server {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let bomb = Arc::new(gzip_of_zeros(64 << 20));
    // The accept loop ends with the test process.
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let bomb = bomb.clone();
            std::thread::spawn(move || respond(conn, &bomb));
        }
    });
    Server { base }
}

#[test]
fn bodies_in_flight_stay_within_one_budget() {
    let srv = serve();
    http::set_memory_budget(8 << 20);
    assert_eq!(http::memory_budget(), 8 << 20);
    let opts = HttpOptions { timeout: Duration::from_secs(20), attempts: 1, ..HttpOptions::default() };

    // An endless body stops at the budget (the size limit, 2 GiB, is far larger).
    let c = HttpClient::new(opts.clone());
    let url = format!("{}/endless", srv.base);
    let e = c.send(&Request::get(&url)).unwrap_err();
    assert!(matches!(&e, HttpError::OverBudget { budget, .. } if *budget == 8 << 20), "{e:?}");
    assert!(e.to_string().contains(&url) && e.to_string().contains("memory budget"), "{e}");
    assert_eq!(http::memory_in_use(), 0, "nothing stays held after a failure");

    // A gzip bomb stops at the size limit, named as such (not "empty", not "binary").
    let gcs = GcsHttp::new(&srv.base, "b", HttpOptions { max_bytes: 4 << 20, ..opts.clone() }, None);
    let e = gcs.get("bomb.gz").unwrap_err();
    assert!(matches!(&e, SourceError::Inflated { limit, .. } if *limit == 4 << 20), "{e:?}");
    let m = e.to_string();
    assert!(m.contains("/b/bomb.gz") && m.contains("inflates to more than the 4194304-byte limit"), "{m}");
    // Without a smaller size limit the budget stops it.
    let gcs = GcsHttp::new(&srv.base, "b", opts.clone(), None);
    let e = gcs.get("bomb.gz").unwrap_err();
    assert!(matches!(&e, SourceError::OverBudget { budget, .. } if *budget == 8 << 20), "{e:?}");

    // Twelve 3 MiB bodies fetched by six threads at once, each kept until parsed:
    // all arrive, and the bytes held never exceed the 8 MiB budget together.
    let gcs = Arc::new(GcsHttp::new(&srv.base, "b", opts, None));
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (gcs, peak) = (gcs.clone(), peak.clone());
            std::thread::spawn(move || {
                for i in 0..2 {
                    let b = gcs.get(&format!("three-mib-{t}-{i}")).unwrap_or_else(|e| panic!("{e}")).unwrap();
                    assert_eq!(b.len(), 3 << 20);
                    assert!(b.held() >= 3 << 20, "a body is counted while it is kept");
                    peak.fetch_max(http::memory_in_use(), std::sync::atomic::Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let peak = peak.load(std::sync::atomic::Ordering::SeqCst);
    assert!(peak > 0 && peak <= 8 << 20, "peak held {peak} bytes");
    println!("peak bytes held against an 8 MiB budget by 6 threads of 3 MiB bodies: {peak}");
    assert_eq!(http::memory_in_use(), 0);
}
