//! The data files of a triage run (runbook Phase 8) and the JSON twin of the report.

use crate::{figure, markdown, ReportJson};
use citriage_analysis::Triage;
use citriage_model::escape::one_line;
use citriage_model::{Dataset, JobStats};
use serde_json::{Map, Value};
use std::fmt::Write;

/// One output file: a name relative to the output folder and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub name: String,
    pub contents: String,
}

/// Renders every artifact of a triage, in a fixed order.
pub fn render_all(t: &Triage) -> Vec<Artifact> {
    let (md, evidence) = markdown::render_markdown(t);
    let mut out = vec![
        Artifact { name: "report.md".into(), contents: md },
        Artifact {
            name: "report.json".into(),
            contents: json(&ReportJson { format: "citriage.triage.v1", triage: t, evidence: &evidence }),
        },
        Artifact { name: "categorized.json".into(), contents: categorized_json(t) },
        Artifact { name: "by-category.txt".into(), contents: by_category(t) },
        Artifact { name: "top30.txt".into(), contents: top30(t) },
    ];
    if t.snapshot.dataset == Dataset::Flakes {
        out.push(Artifact { name: "top-flaky-tests.txt".into(), contents: top_flaky_tests(t) });
        out.push(Artifact { name: "top-tests-by-lane.txt".into(), contents: top_tests_by_lane(t) });
    }
    if let Some(d) = &t.drift {
        out.push(Artifact { name: format!("drift-from-{}.txt", d.prior_date), contents: drift_txt(t) });
    }
    out
}

fn json<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// `{category: [{job, <fields>}...]}` as the runbook writes it, categories largest first.
fn categorized_json(t: &Triage) -> String {
    let mut m = Map::new();
    for c in &t.categorized.categories {
        let jobs: Vec<Value> = c
            .jobs
            .iter()
            .map(|j| {
                let mut o = Map::new();
                o.insert("job".into(), Value::String(j.entry.job.clone()));
                match &j.entry.stats {
                    JobStats::Failures { failing_days } => {
                        o.insert("failing_days".into(), Value::from(*failing_days));
                    }
                    JobStats::Flakes(f) => {
                        o.insert("consistency".into(), Value::from(f.consistency));
                        o.insert("flakes".into(), Value::from(f.flakes));
                        o.insert(
                            "test_flakes".into(),
                            match &f.test_flakes {
                                Some(tf) => {
                                    Value::Object(tf.iter().map(|(k, v)| (k.clone(), Value::from(*v))).collect())
                                }
                                None => Value::Null,
                            },
                        );
                    }
                }
                o.insert("severity".into(), Value::String(j.severity.as_str().into()));
                Value::Object(o)
            })
            .collect();
        m.insert(c.name.clone(), Value::Array(jobs));
    }
    // serde_json's Map keeps sorted keys; write categories in size order by hand.
    let mut s = String::from("{\n");
    for (i, c) in t.categorized.categories.iter().enumerate() {
        let body = serde_json::to_string_pretty(&m[&c.name]).unwrap_or_default();
        let body = body.replace('\n', "\n  ");
        let _ = write!(s, "  {}: {}", serde_json::to_string(&c.name).unwrap_or_default(), body);
        s.push_str(if i + 1 < t.categorized.categories.len() { ",\n" } else { "\n" });
    }
    s.push_str("}\n");
    s
}

fn by_category(t: &Triage) -> String {
    let what = match t.snapshot.dataset {
        Dataset::Failures => "failing_days",
        Dataset::Flakes => "consistency",
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Total: {} jobs in {} categories ({} snapshot of {})",
        t.job_count,
        t.categorized.categories.len(),
        t.snapshot.dataset,
        t.snapshot.date
    );
    let _ = writeln!(s, "{:<35} {:<8}", "CATEGORY", "COUNT");
    for c in &t.categorized.categories {
        let _ = writeln!(s, "  {:<35} {:<8}", c.name, c.count());
    }
    for c in &t.categorized.categories {
        let _ = writeln!(s, "\n== {} ({} jobs) ==", c.name, c.count());
        let _ = writeln!(s, "  {:>11}  {:<9} JOB", what, "SEVERITY");
        for j in &c.jobs {
            let _ =
                writeln!(s, "  {:>11}  {:<9} {}", figure(&j.entry.stats), j.severity.as_str(), one_line(&j.entry.job));
        }
    }
    s
}

fn top30(t: &Triage) -> String {
    let mut s = String::new();
    let head = match t.snapshot.dataset {
        Dataset::Failures => "oldest failing",
        Dataset::Flakes => "least consistent",
    };
    let _ = writeln!(
        s,
        "Top {} {head} jobs across all categories ({} of {}):",
        t.top_jobs.len(),
        t.snapshot.dataset,
        t.snapshot.date
    );
    for (i, j) in t.top_jobs.iter().enumerate() {
        let _ = writeln!(s, "{:>3}. {:>7}  {:<28} {}", i + 1, figure(&j.stats), j.category, one_line(&j.job));
    }
    s
}

fn top_flaky_tests(t: &Triage) -> String {
    let mut s = String::new();
    for r in t.top_flaky_tests.iter().take(200) {
        let _ = writeln!(s, "{:>4} jobs={:>3}  {}", r.total, r.jobs.len(), one_line(&r.test));
    }
    s
}

fn top_tests_by_lane(t: &Triage) -> String {
    let mut s = String::new();
    for (lane, tests) in &t.top_tests_by_lane {
        let _ = writeln!(s, "== {lane} ==");
        for r in tests.iter().take(10) {
            let _ = writeln!(s, "{:>4} jobs={:>3}  {}", r.total, r.jobs.len(), one_line(&r.test));
        }
        s.push('\n');
    }
    s
}

fn drift_txt(t: &Triage) -> String {
    let Some(d) = &t.drift else { return String::new() };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Drift of {} from {} to {} ({} day(s)); prior read from {}",
        t.snapshot.dataset, d.prior_date, d.now_date, d.days_between, d.prior_source
    );
    let _ = writeln!(s, "Added ({}):", d.added.len());
    for a in &d.added {
        let _ = writeln!(s, "  {:>7}  {}", figure(&a.entry.stats), one_line(&a.entry.job));
    }
    let _ = writeln!(s, "Removed: recovered or dropped ({}):", d.removed.len());
    for a in &d.removed {
        let _ = writeln!(s, "  {:>7}  {}", figure(&a.entry.stats), one_line(&a.entry.job));
    }
    let _ = writeln!(s, "Reappeared ({}):", d.reappeared.len());
    for r in &d.reappeared {
        let _ = writeln!(s, "  {}  (last listed {})", one_line(&r.job), r.last_listed);
    }
    if let Some(i) = &d.integrity {
        let _ = writeln!(
            s,
            "Integrity: {} of {} common jobs grew by exactly {} day(s); {} did not:",
            i.consistent,
            i.common,
            d.days_between,
            i.violations.len()
        );
        for v in &i.violations {
            let _ = writeln!(
                s,
                "  {:<6} {} -> {} (expected {})  {}",
                format!("{:?}", v.kind).to_lowercase(),
                v.prior,
                v.now,
                v.expected,
                v.job
            );
        }
    }
    if t.snapshot.dataset == Dataset::Flakes {
        let _ = writeln!(s, "Consistency worsened by more than {:.3} ({}):", d.threshold, d.worsened.len());
        for m in &d.worsened {
            let _ = writeln!(s, "  {:.3} -> {:.3} ({:+.3})  {}", m.prior, m.now, m.delta, one_line(&m.job));
        }
        let _ = writeln!(s, "Consistency improved by more than {:.3} ({}):", d.threshold, d.improved.len());
        for m in &d.improved {
            let _ = writeln!(s, "  {:.3} -> {:.3} ({:+.3})  {}", m.prior, m.now, m.delta, one_line(&m.job));
        }
    }
    s
}
