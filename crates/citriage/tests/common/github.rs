//! A GitHub-shaped server on 127.0.0.1 for tests of `act --apply`, the MCP write
//! tool, `gh sweep` and `watch`'s GitHub sources, laid out like api.github.com: `GET
//! /repos/{o}/{r}/pulls/{n}` and `GET /repos/{o}/{r}/issues/{n}` (a merged PR; the
//! issues answer has an ETag and a 304 on revalidation), `POST
//! /graphql` (the revert mutation), `POST /repos/{o}/{r}/issues` and `POST
//! /repos/{o}/{r}/issues/{n}/comments`; in the repository `hostile/garbled`, `GET
//! /repos/hostile/garbled/issues/{n}` answers 200 with what is not the issue asked
//! for ([`GARBLED`]); in `hostile/busy`, every request is answered 503 with
//! `Retry-After: 119`; anything else is a 404. It records every request it receives,
//! and answers every request with 401 while `refuse` is set.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Got {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub if_none_match: Option<String>,
    pub body: Option<Value>,
}

/// What `GET /repos/hostile/garbled/issues/{n}` answers with 200 (and an ETag), by
/// `n`: HTML, JSON without an issue's fields, another issue's number.
pub const GARBLED: [(u64, &str); 3] = [
    (1, "<html><body>Service Unavailable</body></html>"),
    (2, r#"{"message": "ok"}"#),
    (3, r#"{"number": 999, "state": "open", "title": "another issue"}"#),
];

/// The node id, revert PR number and issue number the server answers with.
pub const NODE_ID: &str = "PR_kwDOtest0001";
pub const REVERT_NUMBER: u64 = 9001;
pub const ISSUE_NUMBER: u64 = 4242;
/// When every pull request the issues endpoint answers for was merged.
pub const MERGED_AT: &str = "2026-11-02T10:00:00Z";

pub struct FakeGithub {
    server: Arc<tiny_http::Server>,
    pub base: String,
    got: Arc<Mutex<Vec<Got>>>,
    /// While set, every request is answered 401 (a revoked token).
    pub refuse: Arc<AtomicBool>,
}

impl Drop for FakeGithub {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

impl FakeGithub {
    pub fn start() -> FakeGithub {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("listen"));
        let port = server.server_addr().to_ip().expect("ip").port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let refuse = Arc::new(AtomicBool::new(false));
        let (s, g, no) = (server.clone(), got.clone(), refuse.clone());
        std::thread::spawn(move || {
            for mut req in s.incoming_requests() {
                let mut raw = String::new();
                let _ = req.as_reader().read_to_string(&mut raw);
                let method = req.method().as_str().to_string();
                let path = req.url().to_string();
                let header = |name: &'static str| {
                    req.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str().to_string())
                };
                let authorization = header("Authorization");
                let if_none_match = header("If-None-Match");
                let body = (!raw.is_empty()).then(|| serde_json::from_str(&raw).expect("a JSON body"));
                g.lock().expect("lock").push(Got {
                    method: method.clone(),
                    path: path.clone(),
                    authorization,
                    if_none_match: if_none_match.clone(),
                    body,
                });
                let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
                let json = "Content-Type: application/json".parse::<tiny_http::Header>().expect("header");
                if let ("GET", ["repos", "hostile", "garbled", "issues", n]) = (method.as_str(), parts.as_slice()) {
                    if let Some((_, text)) = GARBLED.iter().find(|(k, _)| k.to_string() == *n) {
                        let resp = tiny_http::Response::from_string(*text)
                            .with_status_code(200)
                            .with_header("ETag: \"garbled\"".parse::<tiny_http::Header>().expect("header"));
                        let _ = req.respond(resp);
                        continue;
                    }
                }
                if let ["repos", "hostile", "busy", ..] = parts.as_slice() {
                    let resp = tiny_http::Response::from_string("busy")
                        .with_status_code(503)
                        .with_header("Retry-After: 119".parse::<tiny_http::Header>().expect("header"));
                    let _ = req.respond(resp);
                    continue;
                }
                if no.load(Ordering::SeqCst) {
                    let answer = json!({"message": "Bad credentials"}).to_string();
                    let _ =
                        req.respond(tiny_http::Response::from_string(answer).with_status_code(401).with_header(json));
                    continue;
                }
                if let ("GET", ["repos", o, r, "issues", n]) = (method.as_str(), parts.as_slice()) {
                    let etag = format!("\"{o}-{r}-{n}\"");
                    let etag_header = format!("ETag: {etag}").parse::<tiny_http::Header>().expect("header");
                    if if_none_match.as_deref() == Some(etag.as_str()) {
                        let _ = req.respond(tiny_http::Response::empty(304).with_header(etag_header));
                        continue;
                    }
                    let n = n.parse::<u64>().unwrap_or(0);
                    let answer = json!({"number": n, "title": format!("fix {n}"), "state": "closed",
                           "labels": [{"name": "lgtm"}], "created_at": "2026-11-01T10:00:00Z",
                           "updated_at": "2026-11-02T10:00:00Z",
                           "html_url": format!("https://github.com/{o}/{r}/pull/{n}"),
                           "pull_request": {"merged_at": MERGED_AT,
                                            "html_url": format!("https://github.com/{o}/{r}/pull/{n}")}});
                    let resp =
                        tiny_http::Response::from_string(answer.to_string()).with_header(json).with_header(etag_header);
                    let _ = req.respond(resp);
                    continue;
                }
                let (status, answer) = match (method.as_str(), parts.as_slice()) {
                    ("GET", ["repos", o, r, "pulls", n]) => (
                        200,
                        json!({"number": n.parse::<u64>().unwrap_or(0), "node_id": NODE_ID, "merged": true,
                               "html_url": format!("https://github.com/{o}/{r}/pull/{n}")}),
                    ),
                    ("POST", ["graphql"]) => (
                        200,
                        json!({"data": {"revertPullRequest": {"revertPullRequest": {
                            "number": REVERT_NUMBER, "url": format!("https://github.com/revert/{REVERT_NUMBER}")}}}}),
                    ),
                    ("POST", ["repos", _, _, "issues", _, "comments"]) => (201, json!({"id": 1})),
                    ("POST", ["repos", o, r, "issues"]) => (
                        201,
                        json!({"number": ISSUE_NUMBER, "html_url": format!("https://github.com/{o}/{r}/issues/{ISSUE_NUMBER}")}),
                    ),
                    _ => (404, json!({"message": "Not Found"})),
                };
                let resp = tiny_http::Response::from_string(answer.to_string())
                    .with_status_code(status)
                    .with_header("Content-Type: application/json".parse::<tiny_http::Header>().expect("header"));
                let _ = req.respond(resp);
            }
        });
        FakeGithub { server, base: format!("http://127.0.0.1:{port}"), got, refuse }
    }

    pub fn got(&self) -> Vec<Got> {
        self.got.lock().expect("lock").clone()
    }
}

/// Fills `{{name}}` placeholders in every string of a value.
pub fn fill(v: &Value, vars: &BTreeMap<&str, String>) -> Value {
    match v {
        Value::String(s) => {
            let mut t = s.clone();
            for (k, x) in vars {
                t = t.replace(&format!("{{{{{k}}}}}"), x);
            }
            Value::String(t)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, vars)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), fill(x, vars))).collect()),
        other => other.clone(),
    }
}

/// The requests a draft file lists, as the server must receive them.
pub fn expected(draft: &Value) -> Vec<(String, String, Option<Value>)> {
    let vars: BTreeMap<&str, String> = [
        ("pull_node_id", NODE_ID.to_string()),
        ("revert_number", REVERT_NUMBER.to_string()),
        ("revert_url", format!("https://github.com/revert/{REVERT_NUMBER}")),
    ]
    .into_iter()
    .collect();
    draft["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|r| {
            let path = fill(&r["path"], &vars).as_str().expect("path").to_string();
            let body = (!r["body"].is_null()).then(|| fill(&r["body"], &vars));
            (r["method"].as_str().expect("method").to_string(), path, body)
        })
        .collect()
}
