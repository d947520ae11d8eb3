//! GCS-shaped HTTP servers on 127.0.0.1 for the ingestion tests: [`serve`] gives each
//! request's URL to the test's handler, counts requests, and stops when dropped;
//! [`serve_requests`] gives the handler the request's headers too and can cut a body
//! off mid-way, and [`gcs_listing`] / [`gcs_object`] answer as GCS does for a folder
//! laid out like a bucket (listing pages; objects with an ETag, a generation, ranges).

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

/// What a handler of [`serve_requests`] answers.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Box<dyn Read + Send>,
    /// The `Content-Length` sent.
    pub len: u64,
    /// Send only this many bytes of the body, then close the connection.
    pub cut_after: Option<u64>,
}

/// A reply of `body`.
pub fn reply(status: u16, body: Vec<u8>) -> Reply {
    let len = body.len() as u64;
    Reply { status, headers: Vec::new(), body: Box::new(std::io::Cursor::new(body)), len, cut_after: None }
}

/// A plain HTTP/1.1 server of [`serve_requests`]; stops accepting when dropped.
pub struct RawServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(self.base.trim_start_matches("http://"));
    }
}

/// Serves every request with `handler(request)` on a free port of 127.0.0.1: a thread
/// per connection, one request each (`Connection: close`), bodies streamed. A reply
/// cut short closes the connection mid-body, as a network failure does.
pub fn serve_requests(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> RawServer {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (stop2, handler) = (stop.clone(), Arc::new(handler));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if stop2.load(Ordering::SeqCst) {
                break;
            }
            let Ok(conn) = conn else { continue };
            let handler = handler.clone();
            std::thread::spawn(move || answer(conn, &*handler));
        }
    });
    RawServer { base, stop }
}

fn answer(mut conn: std::net::TcpStream, handler: &dyn Fn(&Req) -> Reply) {
    use std::io::Write;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let url = lines.next().and_then(|l| l.split_whitespace().nth(1)).unwrap_or("/").to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let r = handler(&Req { url, headers });
    let mut out = format!("HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n", r.status, r.len);
    for (k, v) in &r.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    if conn.write_all(out.as_bytes()).is_err() {
        return;
    }
    let _ = std::io::copy(&mut r.body.take(r.cut_after.unwrap_or(r.len)), &mut conn);
    let _ = conn.flush();
    let _ = conn.shutdown(std::net::Shutdown::Both);
}

/// GCS's JSON listing of a folder laid out like the bucket (`root`), for a request
/// `url` under `/storage/v1/b/<bucket>/o?` (`None` for any other URL): `prefix`,
/// `delimiter=/`, `page` entries a page with `pageToken`s.
pub fn gcs_listing(root: &std::path::Path, bucket: &str, url: &str, page: usize) -> Option<Reply> {
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
    Some(reply(200, serde_json::to_vec(&body).unwrap()))
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
pub fn gcs_object(root: &std::path::Path, path: &str, req: &Req, how: Sending) -> Reply {
    let file = root.join(path);
    let Ok(md) = std::fs::metadata(&file) else { return reply(404, b"Not Found".to_vec()) };
    if !md.is_file() {
        return reply(404, b"Not Found".to_vec());
    }
    let generation = md.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    let generation = generation.map_or(0, |d| d.as_micros());
    let etag = format!("\"{:x}-{:x}\"", generation, md.len());
    let mut headers =
        vec![("ETag".to_string(), etag.clone()), ("x-goog-generation".to_string(), generation.to_string())];
    let mut r = if how.gzip {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&std::fs::read(&file).unwrap()).unwrap();
        headers.push(("Content-Encoding".to_string(), "gzip".to_string()));
        reply(200, e.finish().unwrap())
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
        let status = match from {
            Some(n) => {
                std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(n)).unwrap();
                headers.push(("Content-Range".to_string(), format!("bytes {n}-{}/{}", md.len() - 1, md.len())));
                206
            }
            None => 200,
        };
        let len = md.len() - from.unwrap_or(0);
        Reply { status, headers: Vec::new(), body: Box::new(f), len, cut_after: None }
    };
    r.headers.extend(headers);
    r.cut_after = how.cut_at.map(|per_mille| r.len * u64::from(per_mille) / 1000);
    r
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
