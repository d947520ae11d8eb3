//! Running the dashboard for a team: request latency figures, the Prometheus text of
//! `/metrics`, the sources' status page, and the write gate (a token from the
//! environment, or a header a trusted reverse proxy sets).

use crate::html::{esc, layout, time};
use citriage_store::SourceStatus;
use std::fmt::Write;
use std::sync::Mutex;

/// Upper bounds (seconds) of the request latency histogram.
pub const LATENCY_BUCKETS: [f64; 10] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

/// Requests served and their latencies (a Prometheus histogram, per route class).
#[derive(Default)]
pub struct Latency {
    inner: Mutex<std::collections::BTreeMap<&'static str, Histogram>>,
}

#[derive(Default, Clone)]
struct Histogram {
    buckets: [u64; LATENCY_BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// The route class a path is counted under (bounded label values).
pub fn route_class(path: &str) -> &'static str {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    match first {
        "" => "overview",
        "jobs" => "jobs",
        "tests" => "tests",
        "clusters" => "clusters",
        "drift" => "drift",
        "search" => "search",
        "payloads" => "payloads",
        "reports" => "reports",
        "api" => "api",
        "mcp" => "mcp",
        "status" => "status",
        "metrics" | "healthz" | "readyz" => "ops",
        "admin" => "admin",
        "static" | "favicon.ico" => "static",
        _ => "other",
    }
}

impl Latency {
    pub fn record(&self, class: &'static str, secs: f64) {
        let mut m = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let h = m.entry(class).or_default();
        h.count += 1;
        h.sum += secs;
        for (i, b) in LATENCY_BUCKETS.iter().enumerate() {
            if secs <= *b {
                h.buckets[i] += 1;
            }
        }
    }

    fn write(&self, out: &mut String) {
        let m = self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone();
        out.push_str("# HELP citriage_http_request_duration_seconds Time to answer a request, by route class.\n");
        out.push_str("# TYPE citriage_http_request_duration_seconds histogram\n");
        for (class, h) in &m {
            for (i, b) in LATENCY_BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "citriage_http_request_duration_seconds_bucket{{route=\"{class}\",le=\"{b}\"}} {}",
                    h.buckets[i]
                );
            }
            let _ = writeln!(
                out,
                "citriage_http_request_duration_seconds_bucket{{route=\"{class}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "citriage_http_request_duration_seconds_sum{{route=\"{class}\"}} {}", h.sum);
            let _ = writeln!(out, "citriage_http_request_duration_seconds_count{{route=\"{class}\"}} {}", h.count);
        }
    }
}

/// A label value escaped as Prometheus' text format asks.
fn label(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// What `/metrics` reports besides the latencies.
pub struct Figures<'a> {
    pub builds: usize,
    pub jobs: usize,
    pub view_generation: u64,
    pub sources: &'a [SourceStatus],
    /// The wall clock (Unix seconds), when the server was given one: ingest lag.
    pub now: Option<i64>,
}

/// The Prometheus text of `/metrics`.
pub fn metrics(f: &Figures<'_>, latency: &Latency) -> String {
    let mut out = String::new();
    let gauge = |out: &mut String, name: &str, help: &str, v: String| {
        let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}\n");
    };
    gauge(&mut out, "citriage_builds", "Builds in the dashboard's view.", f.builds.to_string());
    gauge(&mut out, "citriage_jobs", "Jobs in the dashboard's view.", f.jobs.to_string());
    gauge(
        &mut out,
        "citriage_view_generation",
        "Times the view was built from the store.",
        f.view_generation.to_string(),
    );
    type Per<'a> = (&'a str, &'a str, &'a str, fn(&SourceStatus, Option<i64>) -> Option<String>);
    // What a source stores, in its kind's words (one counter per kind).
    let stored: [(&str, &[&str], &str); 3] = [
        ("citriage_source_builds_stored_total", &["bucket", "testgrid"], "Builds stored by the source's ingests."),
        (
            "citriage_source_payloads_analysed_total",
            &["release-stream"],
            "Payloads of the stream analysed and recorded.",
        ),
        ("citriage_source_refs_refreshed_total", &["github"], "Pull requests and issues whose state was read again."),
    ];
    for (name, kinds, help) in stored {
        let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} counter\n");
        for s in f.sources.iter().filter(|s| kinds.contains(&s.kind.as_str())) {
            let _ = writeln!(
                out,
                "{name}{{source=\"{}\",kind=\"{}\"}} {}",
                label(&s.source),
                label(&s.kind),
                s.builds_stored
            );
        }
    }
    let per_source: [Per<'_>; 7] = [
        ("citriage_source_errors_total", "counter", "Failed ingests of the source.", |s, _| Some(s.errors.to_string())),
        ("citriage_source_ticks_total", "counter", "Ingests of the source.", |s, _| Some(s.ticks.to_string())),
        ("citriage_source_consecutive_failures", "gauge", "Failed ingests since the last success.", |s, _| {
            Some(s.failures.to_string())
        }),
        ("citriage_source_last_success_timestamp_seconds", "gauge", "When the source was last ingested.", |s, _| {
            s.last_success.map(|t| t.to_string())
        }),
        ("citriage_source_ingest_lag_seconds", "gauge", "Seconds since the source was last ingested.", |s, now| {
            Some(match (now, s.last_success) {
                (Some(n), Some(t)) => (n - t).max(0).to_string(),
                (Some(_), None) => "+Inf".into(),
                (None, _) => return None,
            })
        }),
        (
            "citriage_source_newest_build_age_seconds",
            "gauge",
            "Age of the newest build the source stored.",
            |s, now| match (now, s.newest_started) {
                (Some(n), Some(t)) => Some((n - t).max(0).to_string()),
                _ => None,
            },
        ),
        ("citriage_source_next_due_timestamp_seconds", "gauge", "When the source is next ingested.", |s, _| {
            Some(s.next_due.to_string())
        }),
    ];
    for (name, kind, help, value) in per_source {
        let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n");
        for s in f.sources {
            if let Some(v) = value(s, f.now) {
                let _ = writeln!(out, "{name}{{source=\"{}\",kind=\"{}\"}} {v}", label(&s.source), label(&s.kind));
            }
        }
    }
    latency.write(&mut out);
    out
}

/// The status page: each source's last success, last error and backoff.
pub fn status_page(sources: &[SourceStatus], now: Option<i64>) -> String {
    let mut b = String::new();
    if sources.is_empty() {
        b.push_str(
            "<p>No source has been ingested continuously yet: run <code>citriage watch --config FILE</code> beside the dashboard.</p>",
        );
        return layout("Sources", "/status", &b);
    }
    b.push_str(
        "<table class=\"sources\"><tr><th>source</th><th>kind</th><th>state</th><th>last success</th><th>stored</th><th>ingests</th><th>failures</th><th>last error</th><th>next</th></tr>",
    );
    for s in sources {
        let state = if s.lease_holder.is_some() && now.is_none_or(|n| s.lease_until >= n) {
            format!("fetching ({})", esc(s.lease_holder.as_deref().unwrap_or("")))
        } else if s.failures > 0 {
            format!("backing off after {} failure(s)", s.failures)
        } else if s.last_success.is_some() {
            "ok".into()
        } else {
            "never ingested".into()
        };
        let err = match (&s.last_error, s.last_error_at) {
            (Some(e), Some(t)) => format!("{}: {}", time(t), esc(e)),
            _ => "-".into(),
        };
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{state}</td><td>{}</td><td class=\"num\">{} {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{err}</td><td>{}</td></tr>",
            esc(&s.source),
            esc(&s.kind),
            s.last_success.map(time).unwrap_or_else(|| "-".into()),
            s.builds_stored,
            match s.kind.as_str() {
                "release-stream" => "payloads",
                "github" => "references",
                "dashboard" => "",
                _ => "builds",
            },
            s.ticks,
            s.errors,
            if s.next_due > 0 { time(s.next_due) } else { "-".into() },
        );
    }
    b.push_str("</table>\n");
    layout("Sources", "/status", &b)
}

/// Who may ask for write actions (such as refreshing the view now).
#[derive(Clone, Default)]
pub struct WriteGate {
    /// `Authorization: Bearer <token>` with this token.
    pub token: Option<String>,
    /// A header (lowercase) a trusted reverse proxy sets to the authenticated user.
    pub trusted_header: Option<String>,
}

impl std::fmt::Debug for WriteGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteGate")
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("trusted_header", &self.trusted_header)
            .finish()
    }
}

impl WriteGate {
    /// Whether any credential is configured (else every write is refused).
    pub fn open(&self) -> bool {
        self.token.is_some() || self.trusted_header.is_some()
    }

    /// Whether a request with these headers may write.
    pub fn allows(&self, headers: &axum::http::HeaderMap) -> bool {
        if let Some(h) = &self.trusted_header {
            if headers.get(h.as_str()).and_then(|v| v.to_str().ok()).is_some_and(|v| !v.trim().is_empty()) {
                return true;
            }
        }
        if let Some(t) = &self.token {
            let given = headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or("");
            return constant_time_eq(given.as_bytes(), t.as_bytes());
        }
        false
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(name: &str, kind: &str, stored: i64) -> SourceStatus {
        SourceStatus {
            source: name.into(),
            kind: kind.into(),
            lease_holder: None,
            lease_until: 0,
            last_attempt: None,
            last_success: None,
            last_error: None,
            last_error_at: None,
            failures: 0,
            next_due: 0,
            ticks: 1,
            errors: 0,
            builds_stored: stored,
            newest_started: None,
        }
    }

    #[test]
    fn builds_stored_count_buckets_and_testgrid_sources_under_one_help() {
        let sources = [source("k8s", "bucket", 7), source("blocking", "testgrid", 82), source("gh", "github", 3)];
        let f = Figures { builds: 89, jobs: 2, view_generation: 1, sources: &sources, now: None };
        let text = metrics(&f, &Latency::default());
        assert!(text.contains("citriage_source_builds_stored_total{source=\"k8s\",kind=\"bucket\"} 7\n"), "{text}");
        assert!(text.contains("citriage_source_builds_stored_total{source=\"blocking\",kind=\"testgrid\"} 82\n"));
        assert_eq!(text.matches("# HELP citriage_source_builds_stored_total ").count(), 1);
        assert!(!text.contains("citriage_source_builds_stored_total{source=\"gh\""));
    }
}
