//! `bench triage`: generates a snapshot of N jobs per dataset and measures parsing,
//! storing, loading, triage and rendering (the median of some repetitions).

use crate::rss::peak_rss_mib;
use crate::{json_line, put, Lines};
use citriage_analysis::{AnalysisConfig, RuleSet, TriageInput};
use citriage_app::example_data;
use citriage_app::{snapshots, Error, Result};
use citriage_model::Day;
use citriage_store::Store;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs the triage benchmark; returns the lines to print (the JSON document when `json`).
pub fn triage(jobs: usize, repeat: usize, json: bool) -> Result<Lines> {
    let mut out = Lines::new();
    let repeat = repeat.max(1);
    let t0 = Instant::now();
    let files = example_data::generate(jobs, 2, Day::from_ymd(2026, 11, 21).unwrap_or(Day(0)), 7);
    let gen = t0.elapsed();
    let dir = std::env::temp_dir().join(format!("citriage-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::failed(format!("{}: {e}", dir.display())))?;
    let rules = RuleSet::builtin();
    let cfg = AnalysisConfig::default();
    let mut rows = Vec::new();
    for dataset in ["failures", "flakes"] {
        let mine: Vec<&(String, String)> = files.iter().filter(|(n, _)| n.starts_with(dataset)).collect();
        let (mut parse, mut store_t, mut load, mut analyze, mut render) = (vec![], vec![], vec![], vec![], vec![]);
        let mut njobs = 0;
        let mut bytes = 0;
        for r in 0..repeat {
            let db = dir.join(format!("{dataset}-{r}.db"));
            let mut store = Store::open(&db)?;
            let mut ids = Vec::new();
            let mut p = Duration::ZERO;
            let mut s = Duration::ZERO;
            for (name, text) in &mine {
                let t = Instant::now();
                let snap = snapshots::from_bytes(text.as_bytes(), name, None, None)?.snapshot;
                p += t.elapsed();
                njobs = snap.jobs.len();
                bytes = text.len();
                let t = Instant::now();
                ids.push(store.import_snapshot(&snap, "bench")?.snapshot.id);
                s += t.elapsed();
            }
            parse.push(p);
            store_t.push(s);
            let t = Instant::now();
            let loaded = snapshots::load_with_history(&store, *ids.last().unwrap_or(&0))?;
            load.push(t.elapsed());
            let t = Instant::now();
            let tr = citriage_analysis::triage(&TriageInput {
                snapshot: &loaded.snapshot,
                prior: loaded.prior.as_ref(),
                older: &loaded.older,
                rules: &rules,
                config: &cfg,
                builds: None,
                links: &[],
            });
            analyze.push(t.elapsed());
            let t = Instant::now();
            let arts = citriage_report::render_all(&tr);
            render.push(t.elapsed());
            std::hint::black_box(arts);
        }
        rows.push((
            dataset,
            njobs,
            bytes,
            median(parse),
            median(store_t),
            median(load),
            median(analyze),
            median(render),
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let rss = peak_rss_mib();
    if json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| serde_json::json!({"dataset": r.0, "jobs": r.1, "bytes": r.2, "parse_ms": ms(r.3), "store_ms": ms(r.4), "load_ms": ms(r.5), "analysis_ms": ms(r.6), "render_ms": ms(r.7)}))
            .collect();
        put!(
            out,
            "{}",
            json_line(
                &serde_json::json!({"generate_ms": ms(gen), "repeat": repeat, "results": v, "peak_rss_mib": rss})
            )
        );
        return Ok(out);
    }
    put!(out, "bench triage: {jobs} generated jobs per dataset (2 days, newest triaged against the prior), median of {repeat}");
    put!(out, "generate: {:.0} ms", ms(gen));
    put!(
        out,
        "{:<9} {:>8} {:>9} {:>9} {:>10} {:>9} {:>12} {:>10}",
        "dataset",
        "jobs",
        "MiB",
        "parse ms",
        "store ms",
        "load ms",
        "analysis ms",
        "render ms"
    );
    for r in &rows {
        put!(
            out,
            "{:<9} {:>8} {:>9.1} {:>9.1} {:>10.1} {:>9.1} {:>12.1} {:>10.1}",
            r.0,
            r.1,
            r.2 as f64 / 1048576.0,
            ms(r.3),
            ms(r.4),
            ms(r.5),
            ms(r.6),
            ms(r.7)
        );
    }
    if let Some(m) = rss {
        put!(out, "peak RSS: {m:.0} MiB");
    }
    Ok(out)
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
