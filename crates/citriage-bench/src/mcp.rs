//! The size of every MCP tool's default answer on a store: what one call costs an
//! agent's context. The server is the real one (`citriage --db STORE --quiet mcp`, a
//! child process on stdio) and each answer is measured as the text the agent reads.
//!
//! The calls follow an agent's first steps: the failing jobs, the first job's history,
//! its first failed build, that build's first failed test, a search, the patterns, the
//! first pattern, its suspects, the records, the evidence the answers cite, and every
//! analysed payload (the largest answer is reported). Sizes are bytes, not times.

use crate::{json_line, put, Error, Lines, Result};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The most bytes a default answer should take (docs/agents.md).
pub const BUDGET: usize = 16 * 1024;

/// The MCP protocol version the client speaks.
const PROTOCOL: &str = "2025-06-18";

/// One measured call.
#[derive(Debug, Clone)]
pub struct Sized {
    /// The tool and the arguments, as shown (`{tag}` for the largest payload).
    pub call: String,
    /// Bytes of the answer's text.
    pub bytes: usize,
    /// The answer was a tool error (its size is still the error's text).
    pub error: bool,
}

/// A JSON-RPC client of `citriage mcp` on stdio.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Client {
    fn start(program: &Path, db: &Path) -> Result<Client> {
        let mut child = Command::new(program)
            .arg("--db")
            .arg(db)
            .args(["--quiet", "mcp"])
            .env_remove("GITHUB_TOKEN")
            .env_remove("GH_TOKEN")
            .env_remove("CITRIAGE_MCP_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::failed(format!("{}: cannot start the MCP server: {e}", program.display())))?;
        let stdin = child.stdin.take().ok_or_else(|| Error::failed("the MCP server has no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| Error::failed("the MCP server has no stdout"))?);
        let mut c = Client { child, stdin, stdout, next: 1 };
        let init = json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "citriage-bench", "version": env!("CARGO_PKG_VERSION")},
        });
        c.request("initialize", init)?;
        c.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(c)
    }

    fn write(&mut self, msg: &Value) -> Result<()> {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| Error::failed(format!("writing to the MCP server: {e}")))
    }

    /// Sends a request; returns its `result` (a JSON-RPC error is an error).
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next;
        self.next += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .map_err(|e| Error::failed(format!("reading from the MCP server: {e}")))?;
            if n == 0 {
                return Err(Error::failed(format!("the MCP server stopped while {method} was pending")));
            }
            let m: Value = serde_json::from_str(&line)
                .map_err(|e| Error::failed(format!("the MCP server wrote a line that is not JSON ({e})")))?;
            if m.get("id") != Some(&json!(id)) {
                continue; // a notification
            }
            if let Some(e) = m.get("error") {
                return Err(Error::failed(format!("{method}: {e}")));
            }
            return Ok(m["result"].clone());
        }
    }

    /// Calls a tool: (is_error, the answer's text, the answer parsed when it is JSON).
    fn call(&mut self, tool: &str, args: &Value) -> Result<(bool, String, Value)> {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}))?;
        let text = r["content"][0]["text"].as_str().unwrap_or("").to_string();
        let parsed = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok((r["isError"] == true, text, parsed))
    }
}

/// Measures the calls in order, keeping what later calls need.
struct Walk {
    client: Client,
    sizes: Vec<Sized>,
}

impl Walk {
    fn measure(&mut self, tool: &str, args: Value) -> Result<Value> {
        let (error, text, v) = self.client.call(tool, &args)?;
        self.sizes.push(Sized { call: format!("{tool} {args}"), bytes: text.len(), error });
        Ok(if error { Value::Null } else { v })
    }

    /// The largest answer over many calls of one tool, shown as `label`.
    fn largest(&mut self, tool: &str, label: &str, calls: Vec<Value>) -> Result<()> {
        let mut best: Option<Sized> = None;
        for args in calls {
            let (error, text, _) = self.client.call(tool, &args)?;
            if best.as_ref().is_none_or(|b| text.len() > b.bytes) {
                best = Some(Sized { call: String::new(), bytes: text.len(), error });
            }
        }
        if let Some(mut b) = best {
            b.call = format!("{tool} {label}");
            self.sizes.push(b);
        }
        Ok(())
    }
}

fn first_str(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer).and_then(Value::as_str).map(str::to_string)
}

/// Every tool's default answer size on the store at `db`, served by `program`'s `mcp`.
pub fn sizes(program: &Path, db: &Path) -> Result<Vec<Sized>> {
    let url = db.to_string_lossy();
    if !url.starts_with("postgres://") && !url.starts_with("postgresql://") && !db.exists() {
        return Err(Error::input(format!("{}: no such store", db.display())));
    }
    let mut w = Walk { client: Client::start(program, db)?, sizes: Vec::new() };
    let jobs = w.measure("list_failing_jobs", json!({}))?;
    w.measure("list_failing_jobs", json!({"dataset": "flakes"}))?;
    if let Some(job) = first_str(&jobs, "/result/jobs/0/job") {
        let h = w.measure("job_history", json!({"job": job}))?;
        let failed = h["result"]["builds"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| b["result"] == "FAILURE")
            .and_then(|b| b["build_id"].as_str())
            .map(str::to_string);
        if let Some(b) = failed {
            let x = w.measure("extract_failure", json!({"job": job, "build_id": b}))?;
            if let Some(t) = first_str(&x, "/result/failed_tests/0/test") {
                w.measure("test_history", json!({"name": t}))?;
            }
        }
    }
    w.measure("search_failures", json!({"q": "error|fail"}))?;
    let pats = w.measure("list_patterns", json!({}))?;
    w.measure("list_patterns", json!({"limit": 5}))?;
    if let Some(id) = first_str(&pats, "/result/clusters/0/stable_id") {
        w.measure("get_pattern", json!({"id": id}))?;
        w.measure("find_suspects", json!({"target": id}))?;
    }
    w.measure("list_records", json!({}))?;
    let ids: Vec<String> = jobs["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str().map(str::to_string).or_else(|| first_str(e, "/id")))
        .take(5)
        .collect();
    if !ids.is_empty() {
        w.measure("lookup_evidence", json!({"ids": ids}))?;
    }
    let payloads = w.measure("analyze_payload", json!({}))?;
    let tags = payload_tags(&payloads);
    let n = tags.len();
    let calls = tags.into_iter().map(|t| json!({"tag": t})).collect();
    w.largest("analyze_payload", &format!("{{tag}} (largest of {n})"), calls)?;
    Ok(w.sizes)
}

/// The tags the payload overview names (every `tag` field, at any depth).
fn payload_tags(v: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("tag", Value::String(t)) => out.push(t.clone()),
                        _ => walk(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut tags = Vec::new();
    walk(&v["result"], &mut tags);
    tags.sort();
    tags.dedup();
    tags
}

/// The figures as lines: a table (over-budget answers marked), or one JSON document.
pub fn lines(db: &Path, sizes: &[Sized], json: bool) -> Lines {
    let mut out = Lines::new();
    if json {
        let rows: Vec<Value> = sizes
            .iter()
            .map(|s| json!({"call": s.call, "bytes": s.bytes, "error": s.error, "over_budget": s.bytes > BUDGET}))
            .collect();
        put!(
            out,
            "{}",
            json_line(&json!({"store": db.display().to_string(), "budget_bytes": BUDGET, "answers": rows}))
        );
        return out;
    }
    put!(out, "bench mcp: default answer sizes on {} (budget {} KiB)", db.display(), BUDGET / 1024);
    for s in sizes {
        let note = match (s.error, s.bytes > BUDGET) {
            (true, _) => "  (a tool error)",
            (false, true) => "  OVER BUDGET",
            (false, false) => "",
        };
        put!(out, "{:>9} B {:>6.1} KiB  {}{note}", s.bytes, s.bytes as f64 / 1024.0, s.call);
    }
    let over = sizes.iter().filter(|s| s.bytes > BUDGET).count();
    put!(out, "{over} of {} answers over {} KiB", sizes.len(), BUDGET / 1024);
    out
}
