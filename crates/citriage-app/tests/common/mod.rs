//! What the records tests share: a world's recorded GitHub objects read as they were
//! at an instant.

#![allow(dead_code)]

use citriage_model::time::parse_rfc3339;
use serde_json::Value;
use std::path::Path;

pub fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

pub fn time(v: &Value) -> Option<i64> {
    v.as_str().and_then(parse_rfc3339)
}

/// An issue or pull request object as it was at `now`; `None` before it was opened.
pub fn as_of(mut v: Value, now: i64) -> Option<Value> {
    if time(&v["created_at"])? > now {
        return None;
    }
    if time(&v["merged_at"]).is_some_and(|t| t > now) {
        v["merged"] = Value::Bool(false);
        v["merged_at"] = Value::Null;
        v["merge_commit_sha"] = Value::Null;
    }
    if time(&v["pull_request"]["merged_at"]).is_some_and(|t| t > now) {
        v["pull_request"]["merged_at"] = Value::Null;
    }
    if time(&v["closed_at"]).is_some_and(|t| t > now) {
        v["state"] = "open".into();
        v["state_reason"] = Value::Null;
        v["closed_at"] = Value::Null;
    }
    Some(v)
}
