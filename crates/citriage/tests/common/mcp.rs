//! A Model Context Protocol client written by hand (JSON-RPC 2.0 over stdio, or
//! streamable HTTP), for tests of the `citriage` binary's MCP server: it checks the
//! protocol on the wire rather than one SDK against itself.

#![allow(dead_code)]

use crate::common;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub const PROTOCOL: &str = "2025-06-18";

pub enum Wire {
    Stdio { child: Child, stdin: ChildStdin, stdout: BufReader<ChildStdout> },
    Http { child: Child, url: String, session: Option<String>, bearer: Option<String> },
}

pub struct Client {
    pub wire: Wire,
    next: u64,
}

impl Drop for Client {
    fn drop(&mut self) {
        let child = match &mut self.wire {
            Wire::Stdio { child, .. } | Wire::Http { child, .. } => child,
        };
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The JSON-RPC messages of a streamable-HTTP answer: one JSON body, or the `data:`
/// of each server-sent event.
pub fn http_messages(content_type: &str, body: &str) -> Vec<Value> {
    if content_type.starts_with("application/json") {
        return vec![serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))];
    }
    assert!(content_type.starts_with("text/event-stream"), "unexpected content type {content_type:?}: {body}");
    let mut out = Vec::new();
    for event in body.replace("\r\n", "\n").split("\n\n") {
        let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
        let data = data.join("\n");
        if data.trim().is_empty() {
            continue; // a priming event or a keep-alive
        }
        out.push(serde_json::from_str(&data).unwrap_or_else(|e| panic!("an event that is not JSON ({e}): {data}")));
    }
    out
}

/// The binary with no credential in its environment but the ones given.
fn clean(env: &[(&str, &str)]) -> Command {
    let mut cmd = common::bin();
    for k in ["CITRIAGE_MCP_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

impl Client {
    /// `citriage --db DB --quiet mcp` (plus `extra` arguments and environment).
    pub fn stdio(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Client {
        let mut child = clean(env)
            .arg("--db")
            .arg(db)
            .args(["--quiet", "mcp"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("citriage mcp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Client { wire: Wire::Stdio { child, stdin, stdout }, next: 1 }
    }

    /// `citriage serve --addr 127.0.0.1:0` (plus `extra` arguments and environment);
    /// the port is read from what it prints when it listens.
    pub fn http(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Client {
        let mut cmd = clean(env);
        cmd.arg("--db").arg(db).args(["serve", "--addr", "127.0.0.1:0"]).args(extra);
        let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("serve");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let mut seen = String::new();
        let addr = loop {
            let mut line = String::new();
            let n = err.read_line(&mut line).expect("serve's stderr");
            assert!(n > 0, "citriage serve stopped before listening:\n{seen}");
            seen.push_str(&line);
            if let Some(rest) = line.trim().strip_prefix("serving on http://") {
                break rest.split_whitespace().next().expect("address").to_string();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = err.read_to_string(&mut sink);
        });
        Client { wire: Wire::Http { child, url: format!("http://{addr}/mcp"), session: None, bearer: None }, next: 1 }
    }

    pub fn send(&mut self, msg: &Value) -> Vec<Value> {
        match &mut self.wire {
            Wire::Stdio { stdin, .. } => {
                let mut line = serde_json::to_string(msg).expect("json");
                line.push('\n');
                stdin.write_all(line.as_bytes()).expect("write to the server");
                stdin.flush().expect("flush");
                Vec::new()
            }
            Wire::Http { url, session, bearer, .. } => {
                let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
                let mut req = agent
                    .post(url.as_str())
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", PROTOCOL);
                if let Some(s) = session.as_deref() {
                    req = req.header("Mcp-Session-Id", s);
                }
                if let Some(b) = bearer.as_deref() {
                    req = req.header("Authorization", &format!("Bearer {b}"));
                }
                let mut r = req.send(serde_json::to_string(msg).expect("json")).expect("POST /mcp");
                let status = r.status().as_u16();
                if let Some(s) = r.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
                    *session = Some(s.to_string());
                }
                let ct = r.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
                let body = r.body_mut().read_to_string().expect("body");
                if msg.get("id").is_none() {
                    assert!(status == 202 || status == 200, "a notification: HTTP {status}: {body}");
                    return Vec::new();
                }
                assert_eq!(status, 200, "{}: {body}", msg["method"]);
                http_messages(&ct, &body)
            }
        }
    }

    /// Sends a request and returns its response (result or error), skipping the
    /// server's notifications.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let over_http = self.send(&msg);
        let mut pending = over_http.into_iter();
        loop {
            let m = match &mut self.wire {
                Wire::Stdio { stdout, .. } => {
                    let mut line = String::new();
                    let n = stdout.read_line(&mut line).expect("read from the server");
                    assert!(n > 0, "the server closed stdout while {method} was pending");
                    serde_json::from_str::<Value>(&line)
                        .unwrap_or_else(|e| panic!("stdout is the protocol's, and this is not JSON ({e}): {line}"))
                }
                Wire::Http { .. } => pending.next().unwrap_or_else(|| panic!("no response to {method}")),
            };
            assert_eq!(m["jsonrpc"], "2.0", "{m}");
            if m.get("id") == Some(&json!(id)) {
                return m;
            }
            assert!(m.get("id").is_none() || m.get("method").is_some(), "a response to another request: {m}");
        }
    }

    /// Writes raw bytes to a stdio server (hostile input).
    pub fn send_raw(&mut self, text: &str) {
        if let Wire::Stdio { stdin, .. } = &mut self.wire {
            stdin.write_all(text.as_bytes()).expect("write to the server");
            stdin.flush().expect("flush");
        }
    }

    /// `initialize`, then `notifications/initialized`; returns the server's answer.
    pub fn initialize(&mut self) -> Value {
        let init = self.ok(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "citriage-tests", "version": "1"},
            }),
        );
        self.notify("notifications/initialized");
        init
    }

    /// The endpoint of an HTTP client.
    pub fn url(&self) -> Option<&str> {
        match &self.wire {
            Wire::Http { url, .. } => Some(url),
            Wire::Stdio { .. } => None,
        }
    }

    /// The bearer token later HTTP requests carry.
    pub fn set_bearer(&mut self, token: &str) {
        if let Wire::Http { bearer, .. } = &mut self.wire {
            *bearer = Some(token.to_string());
        }
    }

    pub fn notify(&mut self, method: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": method}));
    }

    /// A request that must succeed: its result.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }

    /// `tools/call`: (is_error, structured content or the text).
    pub fn call(&mut self, tool: &str, args: Value) -> (bool, Value) {
        let r = self.ok("tools/call", json!({"name": tool, "arguments": args}));
        let is_error = r["isError"] == true;
        let text = r["content"][0]["text"].as_str().unwrap_or("").to_string();
        assert_eq!(r["content"][0]["type"], "text", "{tool}: {r}");
        if is_error {
            return (true, Value::String(text));
        }
        let sc = r["structuredContent"].clone();
        let parsed: Value = serde_json::from_str(&text).expect("the text content is the JSON answer");
        assert_eq!(parsed, sc, "{tool}: the text and the structured content say the same");
        (false, sc)
    }

    /// A tool call that must answer.
    pub fn answer(&mut self, tool: &str, args: Value) -> Value {
        let (err, v) = self.call(tool, args.clone());
        assert!(!err, "{tool} {args}: {v}");
        assert!(v["result"].is_object() || v["result"].is_array(), "{tool}: {v}");
        assert!(v["evidence"].is_array(), "{tool}: every answer lists its evidence: {v}");
        v
    }
}
