//! A GCS-shaped HTTP server on 127.0.0.1 for the ingestion tests: each request's URL
//! goes to the test's handler, requests are counted, and the server stops when dropped.

#![allow(dead_code)]

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a handler answers.
pub type Response = tiny_http::Response<Box<dyn Read + Send>>;

pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Requests answered so far.
    pub hits: Arc<AtomicUsize>,
    server: Arc<tiny_http::Server>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Serves every request with `handler(url)` on a free port of 127.0.0.1.
pub fn serve(handler: impl Fn(&str) -> Response + Send + 'static) -> Server {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let base = format!("http://{}", server.server_addr().to_ip().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let (s2, h2) = (server.clone(), hits.clone());
    let handle = std::thread::spawn(move || {
        for req in s2.incoming_requests() {
            h2.fetch_add(1, Ordering::SeqCst);
            let url = req.url().to_string();
            let _ = req.respond(handler(&url));
        }
    });
    Server { base, hits, server, handle: Some(handle) }
}

/// A response with `body` and its length.
pub fn respond(status: u16, body: Vec<u8>) -> Response {
    let len = body.len();
    tiny_http::Response::new(status.into(), vec![], Box::new(std::io::Cursor::new(body)), Some(len), None)
}

/// Percent-decoding of a URL component (`%2F` → `/`); a malformed escape stays as is.
pub fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
