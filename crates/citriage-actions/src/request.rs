//! The GitHub requests a draft would send, and sending them in order.
//!
//! A later request may use a value of an earlier answer (the pull request's node id,
//! the number of the revert PR GitHub opened): it names it `{{name}}` in its path or
//! in any string of its body, and the earlier request says where to read it
//! ([`Capture`]: a JSON pointer into its answer). Preconditions (`require`) stop the
//! sequence before anything is written when an answer says the action no longer
//! applies (the PR is not merged, for instance).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A value read from a request's answer, for the requests after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capture {
    /// The placeholder name (`{{name}}`).
    pub name: String,
    /// JSON pointer into the answer (`/node_id`).
    pub pointer: String,
}

/// One request to the GitHub API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedRequest {
    /// `GET` or `POST`.
    pub method: String,
    /// API path (`/repos/o/r/pulls/1`, `/graphql`); may hold `{{name}}`.
    pub path: String,
    /// The JSON body (strings may hold `{{name}}`).
    pub body: Option<Value>,
    /// Values read from the answer.
    #[serde(default)]
    pub captures: Vec<Capture>,
    /// Conditions on the answer (JSON pointer, required value) checked before the
    /// next request is sent.
    #[serde(default)]
    pub require: Vec<(String, Value)>,
    /// Why it is sent.
    pub purpose: String,
}

/// A request as it was sent, with its placeholders filled, and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sent {
    pub method: String,
    pub path: String,
    pub body: Option<Value>,
    pub answer: Value,
}

/// Why applying stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyError {
    /// A placeholder no earlier answer filled.
    Unresolved { step: usize, name: String },
    /// An answer lacked a value a later request needs.
    Missing { step: usize, pointer: String },
    /// An answer failed a precondition.
    Precondition { step: usize, pointer: String, wanted: String, got: String },
    /// The request itself failed (the sender's message).
    Send { step: usize, message: String },
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Unresolved { step, name } => {
                write!(f, "request {step}: no earlier answer gave {{{{{name}}}}}")
            }
            ApplyError::Missing { step, pointer } => write!(f, "request {step}: the answer has no {pointer}"),
            ApplyError::Precondition { step, pointer, wanted, got } => {
                write!(f, "request {step}: the answer's {pointer} is {got}, not {wanted}: stopped before writing anything more")
            }
            ApplyError::Send { step, message } => write!(f, "request {step}: {message}"),
        }
    }
}

impl std::error::Error for ApplyError {}

fn fill(s: &str, vars: &BTreeMap<String, String>, step: usize) -> Result<String, ApplyError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("{{") {
        let Some(j) = rest[i + 2..].find("}}") else { break };
        let name = &rest[i + 2..i + 2 + j];
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        out.push_str(&rest[..i]);
        if valid {
            let v = vars.get(name).ok_or_else(|| ApplyError::Unresolved { step, name: name.to_string() })?;
            out.push_str(v);
        } else {
            out.push_str(&rest[i..i + 4 + j]);
        }
        rest = &rest[i + 4 + j..];
    }
    out.push_str(rest);
    Ok(out)
}

fn fill_value(v: &Value, vars: &BTreeMap<String, String>, step: usize) -> Result<Value, ApplyError> {
    Ok(match v {
        Value::String(s) => Value::String(fill(s, vars, step)?),
        Value::Array(a) => Value::Array(a.iter().map(|x| fill_value(x, vars, step)).collect::<Result<_, _>>()?),
        Value::Object(o) => Value::Object(
            o.iter().map(|(k, x)| Ok((k.clone(), fill_value(x, vars, step)?))).collect::<Result<_, ApplyError>>()?,
        ),
        other => other.clone(),
    })
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Sends one request: `(method, path, body) -> answer`.
pub type Sender<'a> = dyn FnMut(&str, &str, Option<&Value>) -> Result<Value, String> + 'a;

/// Sends the requests in order through `send(method, path, body) -> answer`,
/// filling each one's placeholders from the earlier answers and checking every
/// precondition before going on. Returns what was sent; stops at the first problem
/// (the requests before it were sent).
pub fn apply(requests: &[PlannedRequest], send: &mut Sender<'_>) -> Result<Vec<Sent>, (Vec<Sent>, ApplyError)> {
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let mut sent = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        let step = i + 1;
        let path = match fill(&r.path, &vars, step) {
            Ok(p) => p,
            Err(e) => return Err((sent, e)),
        };
        let body = match r.body.as_ref().map(|b| fill_value(b, &vars, step)).transpose() {
            Ok(b) => b,
            Err(e) => return Err((sent, e)),
        };
        let answer = match send(&r.method, &path, body.as_ref()) {
            Ok(a) => a,
            Err(message) => return Err((sent, ApplyError::Send { step, message })),
        };
        for (pointer, wanted) in &r.require {
            let got = answer.pointer(pointer).cloned().unwrap_or(Value::Null);
            if &got != wanted {
                let e = ApplyError::Precondition {
                    step,
                    pointer: pointer.clone(),
                    wanted: wanted.to_string(),
                    got: got.to_string(),
                };
                sent.push(Sent { method: r.method.clone(), path, body, answer });
                return Err((sent, e));
            }
        }
        for c in &r.captures {
            match answer.pointer(&c.pointer).filter(|v| !v.is_null()) {
                Some(v) => {
                    vars.insert(c.name.clone(), text_of(v));
                }
                None => {
                    let e = ApplyError::Missing { step, pointer: c.pointer.clone() };
                    sent.push(Sent { method: r.method.clone(), path, body, answer });
                    return Err((sent, e));
                }
            }
        }
        sent.push(Sent { method: r.method.clone(), path, body, answer });
    }
    Ok(sent)
}

/// The requests as the CLI prints them before sending: method, path, purpose, the
/// body verbatim, and where each placeholder comes from.
pub fn describe(requests: &[PlannedRequest], api_base: &str) -> String {
    let mut o = String::new();
    let mut origin: BTreeMap<&str, String> = BTreeMap::new();
    for (i, r) in requests.iter().enumerate() {
        o.push_str(&format!("{}. {} {}{}  ({})\n", i + 1, r.method, api_base.trim_end_matches('/'), r.path, r.purpose));
        if let Some(b) = &r.body {
            for line in serde_json::to_string_pretty(b).unwrap_or_default().lines() {
                o.push_str("   ");
                o.push_str(line);
                o.push('\n');
            }
        }
        for (p, v) in &r.require {
            o.push_str(&format!("   stops unless the answer's {p} is {v}\n"));
        }
        let mut used: Vec<&str> = Vec::new();
        let text = format!("{}{}", r.path, r.body.as_ref().map(|b| b.to_string()).unwrap_or_default());
        for (name, from) in &origin {
            if text.contains(&format!("{{{{{name}}}}}")) {
                used.push(name);
                o.push_str(&format!("   {{{{{name}}}}} = {from}\n"));
            }
        }
        for c in &r.captures {
            origin.insert(c.name.as_str(), format!("{} of the answer to request {}", c.pointer, i + 1));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(method: &str, path: &str, body: Option<Value>, captures: &[(&str, &str)]) -> PlannedRequest {
        PlannedRequest {
            method: method.into(),
            path: path.into(),
            body,
            captures: captures.iter().map(|(n, p)| Capture { name: (*n).into(), pointer: (*p).into() }).collect(),
            require: Vec::new(),
            purpose: "test".into(),
        }
    }

    #[test]
    fn placeholders_are_filled_from_earlier_answers() {
        let plan = vec![
            req("GET", "/repos/o/r/pulls/7", None, &[("node", "/node_id")]),
            req(
                "POST",
                "/graphql",
                Some(json!({"variables": {"id": "{{node}}", "keep": "{{ not a name }}"}})),
                &[("n", "/data/number")],
            ),
            req("POST", "/repos/o/r/issues/{{n}}/comments", Some(json!({"body": "/payload-job x"})), &[]),
        ];
        let mut seen = Vec::new();
        let sent = apply(&plan, &mut |m, p, b| {
            seen.push((m.to_string(), p.to_string(), b.cloned()));
            Ok(match p {
                "/repos/o/r/pulls/7" => json!({"node_id": "PR_abc"}),
                "/graphql" => json!({"data": {"number": 42}}),
                _ => json!({}),
            })
        })
        .expect("applied");
        assert_eq!(sent.len(), 3);
        assert_eq!(seen[1].2, Some(json!({"variables": {"id": "PR_abc", "keep": "{{ not a name }}"}})));
        assert_eq!(seen[2].1, "/repos/o/r/issues/42/comments");
    }

    #[test]
    fn preconditions_and_missing_values_stop_the_sequence() {
        let mut plan = vec![req("GET", "/a", None, &[]), req("POST", "/b", None, &[])];
        plan[0].require.push(("/merged".into(), json!(true)));
        let mut calls = 0;
        let err = apply(&plan, &mut |_, _, _| {
            calls += 1;
            Ok(json!({"merged": false}))
        })
        .expect_err("not merged");
        assert_eq!(calls, 1, "nothing after a failed precondition is sent");
        assert!(matches!(err.1, ApplyError::Precondition { step: 1, .. }), "{}", err.1);
        let plan = vec![req("GET", "/a", None, &[("x", "/nope")]), req("POST", "/{{x}}", None, &[])];
        let err = apply(&plan, &mut |_, _, _| Ok(json!({}))).expect_err("missing");
        assert!(matches!(err.1, ApplyError::Missing { step: 1, .. }));
        let err = apply(&[req("POST", "/{{y}}", None, &[])], &mut |_, _, _| Ok(json!({}))).expect_err("unresolved");
        assert_eq!(err.0.len(), 0, "an unresolved placeholder sends nothing");
    }

    #[test]
    fn described_requests_name_their_placeholders() {
        let plan = vec![
            req("GET", "/repos/o/r/pulls/7", None, &[("node", "/node_id")]),
            req("POST", "/graphql", Some(json!({"id": "{{node}}"})), &[]),
        ];
        let d = describe(&plan, "https://api.github.com/");
        assert!(d.contains("1. GET https://api.github.com/repos/o/r/pulls/7"), "{d}");
        assert!(d.contains("{{node}} = /node_id of the answer to request 1"), "{d}");
    }
}
