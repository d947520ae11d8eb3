//! Bodies read as streams (`HttpClient::get_stream`, `GcsHttp::open`) against a real
//! HTTP server on 127.0.0.1: a transfer cut off, or stalled, is resumed where the reader
//! is (`Range: bytes=N-` with `If-Range`, or the whole object again with its first N
//! bytes skipped), so the reader gets the object's exact bytes; an object that changed
//! between transfers, or one cut off every time, fails the read with an error naming
//! the URL; a streamed object is cached only once read to its end.

use citriage_sources::artifacts::{ArtifactSource, GcsHttp};
use citriage_sources::http::HttpClient;
use citriage_sources::{source_error, HttpOptions, SourceError};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server does with the next request for an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Whole,
    /// Send this many bytes of the promised body, then close.
    Cut(usize),
    /// Send this many bytes, then hold the connection silent for a while.
    Stall(usize),
}

/// The `Range` and `If-Range` headers of a request.
type Seen = (Option<String>, Option<String>);

struct Server {
    base: String,
    /// `Range` and `If-Range` headers of each request, in order.
    seen: Arc<Mutex<Vec<Seen>>>,
    plan: Arc<Mutex<Vec<Next>>>,
    /// The object's content and ETag (changed by tests).
    object: Arc<Mutex<(Vec<u8>, String)>>,
}

fn content(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8).collect()
}

/// Serves `/b/obj` on a plain HTTP/1.1 server (a thread per connection, one request
/// each), with ranges honoured when `ranges`. A cut closes the connection mid-body.
fn serve(ranges: bool) -> Server {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let plan: Arc<Mutex<Vec<Next>>> = Arc::default();
    let object = Arc::new(Mutex::new((content(300_000), "\"v1\"".to_string())));
    let (seen2, plan2, obj2) = (seen.clone(), plan.clone(), object.clone());
    // The accept loop ends with the test process.
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let (seen, plan, obj) = (seen2.clone(), plan2.clone(), obj2.clone());
            std::thread::spawn(move || answer(conn, ranges, &seen, &plan, &obj));
        }
    });
    Server { base, seen, plan, object }
}

fn answer(
    mut conn: std::net::TcpStream,
    ranges: bool,
    seen: &Mutex<Vec<Seen>>,
    plan: &Mutex<Vec<Next>>,
    object: &Mutex<(Vec<u8>, String)>,
) {
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
    let h = |name: &str| {
        head.split("\r\n")
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
    };
    let (range, if_range) = (h("Range"), h("If-Range"));
    seen.lock().unwrap().push((range.clone(), if_range.clone()));
    if path != "/b/obj" {
        let _ = conn.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope");
        return;
    }
    let (data, etag) = object.lock().unwrap().clone();
    let next = {
        let mut p = plan.lock().unwrap();
        if p.is_empty() {
            Next::Whole
        } else {
            p.remove(0)
        }
    };
    let from = range
        .filter(|_| ranges && if_range.as_deref().is_none_or(|t| t == etag))
        .and_then(|r| r.strip_prefix("bytes=").and_then(|r| r.strip_suffix('-')).and_then(|n| n.parse().ok()))
        .filter(|n: &usize| *n < data.len());
    let mut out = format!("ETag: {etag}\r\nConnection: close\r\n");
    let (status, body) = match from {
        Some(n) => {
            out.push_str(&format!("Content-Range: bytes {n}-{}/{}\r\n", data.len() - 1, data.len()));
            ("206 Partial Content", &data[n..])
        }
        None => ("200 OK", &data[..]),
    };
    let head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n{out}\r\n", body.len());
    if conn.write_all(head.as_bytes()).is_err() {
        return;
    }
    match next {
        Next::Whole => {
            let _ = conn.write_all(body);
        }
        Next::Cut(k) => {
            let _ = conn.write_all(&body[..k.min(body.len())]);
        }
        Next::Stall(k) => {
            let _ = conn.write_all(&body[..k.min(body.len())]);
            let _ = conn.flush();
            std::thread::sleep(Duration::from_secs(3));
        }
    }
    let _ = conn.flush();
    let _ = conn.shutdown(std::net::Shutdown::Both);
}

fn opts() -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_secs(1),
        attempts: 3,
        backoff: Duration::from_millis(5),
        ..Default::default()
    }
}

fn read_all(r: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    r.read_to_end(&mut out)?;
    Ok(out)
}

#[test]
fn a_cut_transfer_is_resumed_with_a_range_where_the_reader_is() {
    let srv = serve(true);
    srv.plan.lock().unwrap().extend([Next::Cut(100_000), Next::Cut(50_000)]);
    let client = Arc::new(HttpClient::new(opts()));
    let mut s = client.get_stream(&format!("{}/b/obj", srv.base)).unwrap().unwrap();
    let got = read_all(&mut s).unwrap();
    assert_eq!(got, content(300_000));
    assert_eq!(s.transfers(), 3);
    let seen = srv.seen.lock().unwrap().clone();
    assert_eq!(seen[0], (None, None));
    assert_eq!(seen[1], (Some("bytes=100000-".into()), Some("\"v1\"".into())));
    assert_eq!(seen[2], (Some("bytes=150000-".into()), Some("\"v1\"".into())));
    assert_eq!(client.stats().retries, 2);
}

#[test]
fn without_ranges_the_object_is_read_again_and_what_was_read_skipped() {
    let srv = serve(false);
    srv.plan.lock().unwrap().extend([Next::Cut(123_457)]);
    let client = Arc::new(HttpClient::new(opts()));
    let mut s = client.get_stream(&format!("{}/b/obj", srv.base)).unwrap().unwrap();
    assert_eq!(read_all(&mut s).unwrap(), content(300_000));
    assert_eq!(s.transfers(), 2);
}

#[test]
fn a_stalled_transfer_is_resumed() {
    let srv = serve(true);
    srv.plan.lock().unwrap().extend([Next::Stall(200_000)]);
    let client = Arc::new(HttpClient::new(opts()));
    let mut s = client.get_stream(&format!("{}/b/obj", srv.base)).unwrap().unwrap();
    assert_eq!(read_all(&mut s).unwrap(), content(300_000));
    assert_eq!(s.transfers(), 2);
    assert_eq!(srv.seen.lock().unwrap()[1].0.as_deref(), Some("bytes=200000-"));
}

#[test]
fn an_object_that_changed_between_transfers_fails_the_read() {
    let srv = serve(true);
    srv.plan.lock().unwrap().extend([Next::Cut(1000)]);
    let client = Arc::new(HttpClient::new(opts()));
    let url = format!("{}/b/obj", srv.base);
    let mut s = client.get_stream(&url).unwrap().unwrap();
    let mut first = vec![0u8; 1000];
    s.read_exact(&mut first).unwrap();
    *srv.object.lock().unwrap() = (content(290_000), "\"v2\"".to_string());
    let e = read_all(&mut s).unwrap_err();
    let m = e.to_string();
    assert!(m.contains(&url) && m.contains("changed while it was read") && m.contains("\"v2\""), "{m}");
    // The stream stays failed.
    assert!(s.read(&mut [0u8; 10]).is_err());
}

#[test]
fn a_transfer_cut_every_time_fails_naming_the_object_and_is_never_cached() {
    let srv = serve(true);
    srv.plan.lock().unwrap().extend([Next::Cut(10_000), Next::Cut(10_000), Next::Cut(10_000), Next::Cut(10_000)]);
    let cache = tempfile::tempdir().unwrap();
    let gcs = GcsHttp::new(&srv.base, "b", opts(), Some(cache.path().to_path_buf()));
    let mut s = gcs.open("obj").unwrap().unwrap();
    let e = read_all(&mut s).unwrap_err();
    let e = source_error(e).expect("the source's error");
    assert!(matches!(e, SourceError::Transport { .. }), "{e:?}");
    let m = e.to_string();
    assert!(m.contains(&format!("{}/b/obj", srv.base)) && m.contains("still after 3 attempts"), "{m}");
    drop(s);
    let cached: Vec<_> = walk(cache.path());
    assert!(cached.is_empty(), "nothing cached from a failed read: {cached:?}");

    // Read whole once: cached, and read from the cache (no request) after that.
    srv.plan.lock().unwrap().clear();
    let mut s = gcs.open("obj").unwrap().unwrap();
    assert_eq!(read_all(&mut s).unwrap(), content(300_000));
    drop(s);
    assert_eq!(walk(cache.path()), vec!["b/obj".to_string()]);
    let before = srv.seen.lock().unwrap().len();
    let mut s = gcs.open("obj").unwrap().unwrap();
    assert_eq!(read_all(&mut s).unwrap(), content(300_000));
    assert_eq!(srv.seen.lock().unwrap().len(), before);
    // A 404 is no object.
    assert!(gcs.open("missing").unwrap().is_none());
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path().strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}
