//! citriage's benchmarks, which `citriage bench` runs: each measures something and
//! returns its figures as the lines to print (a table, or one pretty JSON document with
//! `--format json`), side by side with what they are compared to. No test asserts on
//! time; these print figures.
//!
//! - [`alerts`]: alert noise on a synthetic world replayed turn by turn, against its truth;
//! - [`triage`]: importing and triaging a generated snapshot of N jobs;
//! - [`ingest`]: a synthetic world ingested from its mirror, then its metrics;
//! - [`flakes`]: the flaky tests `metrics` flags, against a world's truth;
//! - [`patterns`]: template mining and failure-line extraction on labelled data;
//! - [`mcp`]: every MCP tool's default answer size on a store (what a call costs an agent);
//! - [`serve`]: the dashboard under concurrent clients on loopback;
//! - [`store`]: SQLite and PostgreSQL side by side (ingest, clustering, dashboard);
//! - [`rss`]: the process's memory, as the OS tells it.

pub mod alerts;
pub mod flakes;
pub mod ingest;
pub mod mcp;
pub mod patterns;
pub mod rss;
pub mod serve;
pub mod store;
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
