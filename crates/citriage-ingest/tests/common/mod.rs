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

/// What a handler of [`serve_requests`] sees of a request.
pub struct Req {
    pub url: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// Serves every request with `handler(request)` on a free port of 127.0.0.1, a thread
/// per request (bodies are streamed, so a slow reader does not hold the others back).
pub fn serve_requests(handler: impl Fn(&Req) -> Response + Send + Sync + 'static) -> Server {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let base = format!("http://{}", server.server_addr().to_ip().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let (s2, h2) = (server.clone(), hits.clone());
    let handler = Arc::new(handler);
    let handle = std::thread::spawn(move || {
        for req in s2.incoming_requests() {
            h2.fetch_add(1, Ordering::SeqCst);
            let r = Req {
                url: req.url().to_string(),
                headers: req
                    .headers()
                    .iter()
                    .map(|h| (h.field.as_str().as_str().to_ascii_lowercase(), h.value.as_str().to_string()))
                    .collect(),
            };
            let handler = handler.clone();
            std::thread::spawn(move || {
                let _ = req.respond(handler(&r));
            });
        }
    });
    Server { base, hits, server, handle: Some(handle) }
}

/// GCS's JSON listing of a folder laid out like the bucket (`root`), for a request
/// `url` under `/storage/v1/b/<bucket>/o?` (`None` for any other URL): `prefix`,
/// `delimiter=/`, `page` entries a page with `pageToken`s.
pub fn gcs_listing(root: &std::path::Path, bucket: &str, url: &str, page: usize) -> Option<Response> {
    let q = url.strip_prefix(&format!("/storage/v1/b/{bucket}/o?"))?;
    let params: std::collections::BTreeMap<String, String> =
        q.split('&').filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), pct_decode(v)))).collect();
    let prefix = params.get("prefix").cloned().unwrap_or_default();
    let start: usize = params.get("pageToken").and_then(|t| t.parse().ok()).unwrap_or(0);
    let mut entries: Vec<(String, bool, u64)> = match std::fs::read_dir(root.join(&prefix)) {
        Ok(rd) => rd
            .flatten()
            .map(|e| {
                let md = e.metadata().unwrap();
                (format!("{prefix}{}", e.file_name().to_string_lossy()), md.is_dir(), md.len())
            })
            .collect(),
        Err(_) => vec![],
    };
    entries.sort();
    let chunk: Vec<_> = entries.iter().skip(start).take(page).collect();
    let items: Vec<serde_json::Value> =
        chunk.iter().filter(|e| !e.1).map(|e| serde_json::json!({"name": e.0, "size": e.2.to_string()})).collect();
    let prefixes: Vec<String> = chunk.iter().filter(|e| e.1).map(|e| format!("{}/", e.0)).collect();
    let mut body = serde_json::json!({"kind": "storage#objects", "items": items, "prefixes": prefixes});
    if start + page < entries.len() {
        body["nextPageToken"] = serde_json::Value::from((start + page).to_string());
    }
    Some(respond(200, serde_json::to_vec(&body).unwrap()))
}

/// How [`gcs_object`] sends an object.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sending {
    /// `Content-Encoding: gzip` (compressed on the fly; no ranges then, as GCS).
    pub gzip: bool,
    /// Honour `Range: bytes=N-` (and `If-Range`) with a 206, as GCS does.
    pub ranges: bool,
    /// Promise the whole body, send only this share of it (per mille), then close.
    pub cut_at: Option<u32>,
}

/// An object of the folder `root` as GCS sends it: streamed from its file, with an
/// `ETag` and an `x-goog-generation`, a 404 when missing.
pub fn gcs_object(root: &std::path::Path, path: &str, req: &Req, how: Sending) -> Response {
    let file = root.join(path);
    let Ok(md) = std::fs::metadata(&file) else { return respond(404, b"Not Found".to_vec()) };
    if !md.is_file() {
        return respond(404, b"Not Found".to_vec());
    }
    let generation = md.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    let generation = generation.map_or(0, |d| d.as_micros());
    let etag = format!("\"{:x}-{:x}\"", generation, md.len());
    let mut headers: Vec<tiny_http::Header> = vec![
        format!("ETag: {etag}").parse().unwrap(),
        format!("x-goog-generation: {generation}").parse().unwrap(),
    ];
    let (data, status, from): (Box<dyn Read + Send>, u16, u64) = if how.gzip {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&std::fs::read(&file).unwrap()).unwrap();
        let gz = e.finish().unwrap();
        headers.push("Content-Encoding: gzip".parse().unwrap());
        let len = gz.len() as u64;
        return finish(Box::new(std::io::Cursor::new(gz)), 200, len, headers, how);
    } else {
        let from = req
            .header("range")
            .filter(|_| how.ranges)
            .filter(|_| req.header("if-range").is_none_or(|t| t == etag))
            .and_then(|r| r.strip_prefix("bytes="))
            .and_then(|r| r.strip_suffix('-'))
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|n| *n < md.len());
        let mut f = std::fs::File::open(&file).unwrap();
        match from {
            Some(n) => {
                std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(n)).unwrap();
                headers.push(format!("Content-Range: bytes {n}-{}/{}", md.len() - 1, md.len()).parse().unwrap());
                (Box::new(f), 206, n)
            }
            None => (Box::new(f), 200, 0),
        }
    };
    finish(data, status, md.len() - from, headers, how)
}

/// A response of `len` bytes from `data`, cut short when `how` says so.
fn finish(data: Box<dyn Read + Send>, status: u16, len: u64, mut headers: Vec<tiny_http::Header>, how: Sending) -> Response {
    let data: Box<dyn Read + Send> = match how.cut_at {
        Some(per_mille) => {
            headers.push("Connection: close".parse().unwrap());
            Box::new(data.take(len * u64::from(per_mille) / 1000))
        }
        None => data,
    };
    tiny_http::Response::new(status.into(), headers, data, Some(len as usize), None).with_chunked_threshold(usize::MAX)
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
