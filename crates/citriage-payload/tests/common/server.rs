//! A release-controller-shaped HTTP server on 127.0.0.1 over a recorded world
//! (`<world>/release-controller`, laid out as the API's paths), quirks included: a
//! 429 with `Retry-After` before the first tag lists, a changelog between distant
//! payloads that is "still loading", 404s; `github/` beside it is served as PR diffs.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{T0, T4};

pub struct Server {
    pub base: String,
    stop: Arc<AtomicBool>,
    pub hits: Arc<Mutex<Vec<String>>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Serves `<world>/release-controller` (and PR diffs from `<world>/github`) with the
/// quirks: the first
/// `throttle_first_tags` tag lists are answered 429 with `Retry-After: retry_after`.
pub fn serve(world: std::path::PathBuf, throttle_first_tags: usize, retry_after: &'static str) -> Server {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let hits = Arc::new(Mutex::new(Vec::new()));
    let (s2, h2) = (stop.clone(), hits.clone());
    let throttled = Arc::new(AtomicUsize::new(0));
    let handle = std::thread::spawn(move || {
        while !s2.load(Ordering::SeqCst) {
            let Ok(Some(req)) = server.recv_timeout(Duration::from_millis(50)) else { continue };
            let url = req.url().to_string();
            h2.lock().unwrap().push(url.clone());
            let rel = url.trim_start_matches('/');
            let resp = if rel.ends_with("/tags") && throttled.fetch_add(1, Ordering::SeqCst) < throttle_first_tags {
                tiny_http::Response::from_string("slow down")
                    .with_status_code(429)
                    .with_header(tiny_http::Header::from_bytes(&b"Retry-After"[..], retry_after.as_bytes()).unwrap())
            } else if rel.ends_with(&format!("{T4}?from={T0}")) {
                // The changelog between distant payloads times out.
                tiny_http::Response::from_string(
                    "<p id=\"loading\" class=\"alert alert-info\">Loading changelog, this may take a while ...</p><style>#loading{display: none;}</style><p class=\"alert alert-danger\">Unable to show full changelog: the changelog is still loading, if this is the first access it may take several minutes to clone all repositories</p>",
                )
                .with_status_code(200)
            } else if rel.starts_with("github/") {
                match std::fs::read(world.join(rel)) {
                    Ok(b) => tiny_http::Response::from_data(b).with_status_code(200),
                    Err(_) => tiny_http::Response::from_string("not found").with_status_code(404),
                }
            } else {
                // Recorded as `<name>.json` (the test world) or `<name>` (a synthetic world).
                let rc = world.join("release-controller");
                match std::fs::read(rc.join(format!("{rel}.json"))).or_else(|_| std::fs::read(rc.join(rel))) {
                    Ok(b) => tiny_http::Response::from_data(b).with_status_code(200),
                    Err(_) => tiny_http::Response::from_string("not found").with_status_code(404),
                }
            };
            let _ = req.respond(resp);
        }
    });
    Server { base: format!("http://127.0.0.1:{port}"), stop, hits, handle: Some(handle) }
}
