//! citriage's benchmarks, which `citriage bench` runs: each measures something and
//! returns its figures as the lines to print (a table, or one pretty JSON document with
//! `--format json`), side by side with what they are compared to. No test asserts on
//! time; these print figures.
//!
//! - [`alerts`]: alert noise on a synthetic world replayed turn by turn, against its truth;
//! - [`triage`]: importing and triaging a generated snapshot of N jobs;
//! - [`ingest`]: a synthetic world ingested from its mirror, then its metrics;
//! - [`flakes`]: the flaky tests `metrics` flags, against a world's truth;
//! - [`history`]: the suspect engine on real reverts that quote the failure they fix;
//! - [`pr`]: "did my PR break this?" against a synthetic world's planted pull requests;
//! - [`patterns`]: template mining and failure-line extraction on labelled data;
//! - [`mcp`]: every MCP tool's default answer size on a store (what a call costs an agent);
//! - [`serve`]: the dashboard under concurrent clients on loopback;
//! - [`store`]: SQLite and PostgreSQL side by side (ingest, clustering, dashboard);
//! - [`cluster`]: `citriage cluster` end to end beside go.k8s.io/triage's Python reference;
//! - [`scale`]: each command's wall time, CPU time and peak RSS as the window grows;
//! - [`suspects`]: culprits ranked against the planted regressions of synthetic worlds;
//! - [`rss`]: the process's memory, as the OS tells it.

pub mod alerts;
pub mod cluster;
pub mod flakes;
pub mod history;
pub mod ingest;
pub mod mcp;
pub mod patterns;
pub mod pr;
pub mod rss;
pub mod scale;
pub mod serve;
pub mod store;
pub mod suspects;
pub mod triage;

pub use citriage_app::{Error, Progress, Result};

/// The lines a benchmark prints, in order.
pub type Lines = Vec<String>;

/// Appends a line (`format!` syntax) to a benchmark's [`Lines`].
#[macro_export]
macro_rules! put {
    ($out:expr) => {
        $out.push(String::new())
    };
    ($out:expr, $($t:tt)*) => {
        $out.push(format!($($t)*))
    };
}

/// A JSON document as the one line it is printed as (pretty).
pub fn json_line(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}
