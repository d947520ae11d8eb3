//! Bodies read as streams (`HttpClient::get_stream`, `GcsHttp::open`) against a real
//! HTTP server on 127.0.0.1: a transfer cut off, or stalled, is resumed where the reader
//! is (`Range: bytes=N-` with `If-Range`, or the whole object again with its first N
//! bytes skipped), so the reader gets the object's exact bytes; an object that changed
//! between transfers, or one cut off every time, fails the read with an error naming
//! the URL; a streamed object is cached only once read to its end.

use citriage_sources::artifacts::{ArtifactSource, GcsHttp};
use citriage_sources::http::HttpClient;
use citriage_sources::{source_error, HttpOptions, SourceError};
use std::io::Read;
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

struct Server {
    base: String,
    /// `Range` and `If-Range` headers of each request, in order.
    seen: Arc<Mutex<Vec<(Option<String>, Option<String>)>>>,
    plan: Arc<Mutex<Vec<Next>>>,
    /// The object's content and ETag (changed by tests).
    object: Arc<Mutex<(Vec<u8>, String)>>,
    server: Arc<tiny_http::Server>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

fn content(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8).collect()
}

/// Serves `/b/obj` with ranges honoured when `ranges`.
fn serve(ranges: bool) -> Server {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let base = format!("http://{}", server.server_addr().to_ip().unwrap());
    let seen: Arc<Mutex<Vec<(Option<String>, Option<String>)>>> = Arc::default();
    let plan: Arc<Mutex<Vec<Next>>> = Arc::default();
    let object = Arc::new(Mutex::new((content(300_000), "\"v1\"".to_string())));
    let (s2, seen2, plan2, obj2) = (server.clone(), seen.clone(), plan.clone(), object.clone());
    std::thread::spawn(move || {
        for req in s2.incoming_requests() {
            let h = |n: &'static str| req.headers().iter().find(|h| h.field.equiv(n)).map(|h| h.value.as_str().to_string());
            let (range, if_range) = (h("Range"), h("If-Range"));
            seen2.lock().unwrap().push((range.clone(), if_range.clone()));
            if req.url() != "/b/obj" {
                let _ = req.respond(tiny_http::Response::from_string("nope").with_status_code(404));
                continue;
            }
            let (data, etag) = obj2.lock().unwrap().clone();
            let next = {
                let mut p = plan2.lock().unwrap();
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
            let mut headers: Vec<tiny_http::Header> = vec![format!("ETag: {etag}").parse().unwrap()];
            let (status, body) = match from {
                Some(n) => {
                    headers.push(format!("Content-Range: bytes {n}-{}/{}", data.len() - 1, data.len()).parse().unwrap());
                    (206, data[n..].to_vec())
                }
                None => (200, data),
            };
            let len = body.len();
            let reader: Box<dyn Read + Send> = match next {
                Next::Whole => Box::new(std::io::Cursor::new(body)),
                Next::Cut(k) => {
                    headers.push("Connection: close".parse().unwrap());
                    // The reader fails after k bytes: the server drops the connection.
                    struct Broken;
                    impl Read for Broken {
                        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                            Err(std::io::Error::other("cut"))
                        }
                    }
                    Box::new(std::io::Cursor::new(body[..k.min(len)].to_vec()).chain(Broken))
                }
                Next::Stall(k) => {
                    struct Stall(std::io::Cursor<Vec<u8>>, bool);
                    impl Read for Stall {
                        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                            let n = self.0.read(buf)?;
                            if n == 0 && !self.1 {
                                self.1 = true;
                                std::thread::sleep(Duration::from_secs(3));
                                return Err(std::io::Error::other("stalled"));
                            }
                            Ok(n)
                        }
                    }
                    headers.push("Connection: close".parse().unwrap());
                    Box::new(Stall(std::io::Cursor::new(body[..k.min(len)].to_vec()), false))
                }
            };
            let resp = tiny_http::Response::new(status.into(), headers, reader, Some(len), None)
                .with_chunked_threshold(usize::MAX);
            std::thread::spawn(move || {
                let _ = req.respond(resp);
            });
        }
    });
    Server { base, seen, plan, object, server }
}

fn opts() -> HttpOptions {
    HttpOptions { timeout: Duration::from_secs(1), attempts: 3, backoff: Duration::from_millis(5), ..Default::default() }
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
