//! `bench ingest`: a synthetic world generated, ingested from its local mirror into a
//! fresh store, and its metrics computed as `metrics` does: builds per minute, metrics
//! time, peak RSS.

use crate::rss::peak_rss_mib;
use crate::triage::ms;
use crate::{json_line, put, Lines};
use citriage_analysis::AnalysisConfig;
use citriage_app::{Error, Result};
use citriage_store::Store;
use std::time::{Duration, Instant};

/// Runs the ingest benchmark; returns the lines to print (the JSON document when `json`).
pub fn ingest(preset: &str, concurrency: usize, world: Option<&std::path::Path>, json: bool) -> Result<Lines> {
    let mut out = Lines::new();
    use citriage_analysis::metrics::{corrected, kettle};
    use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
    use citriage_sources::artifacts::LocalMirror;
    let Some(params) = citriage_synth::SynthParams::preset(preset) else {
        return Err(Error::input(format!("unknown preset {preset:?}")));
    };
    let tmp = std::env::temp_dir().join(format!("citriage-bench-ingest-{}", std::process::id()));
    let dir = world.map(|w| w.to_path_buf()).unwrap_or_else(|| tmp.clone());
    let t = Instant::now();
    let generated = if dir.join("truth.json").exists() {
        None
    } else {
        Some(citriage_synth::generate(&params, &dir, &mut |_| {}).map_err(|e| Error::failed(e.to_string()))?)
    };
    let gen = t.elapsed();
    let db = dir.with_extension("bench.db");
    let _ = std::fs::remove_file(&db);
    let mut store = Store::open(&db)?;
    let src = LocalMirror::new(dir.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = discover_jobs(&src).map_err(|e| Error::failed(e.to_string()))?;
    let t = Instant::now();
    let s = ingest_jobs(
        &src,
        &mut store,
        &jobs,
        &IngestOptions { concurrency, max_builds_per_job: None, ..Default::default() },
        &|_| {},
    )?;
    let ingest_t = t.elapsed();
    // Metrics job by job, as `citriage metrics` computes them.
    let t = Instant::now();
    let all = store.builds(None)?;
    let as_of = citriage_app::builds::default_as_of(&all);
    let kf = kettle::failures_rows(&all, as_of);
    drop(all);
    let settings = corrected::Settings::new(as_of, AnalysisConfig::default().harness_test_names);
    let mut kk = Vec::new();
    let mut figs = Vec::new();
    let mut load_t = Duration::ZERO;
    let mut kettle_t = Duration::ZERO;
    let mut corrected_t = Duration::ZERO;
    for job in store.build_jobs()? {
        let l = Instant::now();
        let builds = store.job_builds_with_tests_opts(&job, Some(as_of - 8 * citriage_model::time::DAY), true)?;
        load_t += l.elapsed();
        let k = Instant::now();
        kk.extend(kettle::flakes_rows(&builds, as_of));
        kettle_t += k.elapsed();
        let c = Instant::now();
        figs.extend(corrected::job_figures(&builds, &settings));
        corrected_t += c.elapsed();
    }
    let metrics_t = t.elapsed();
    let rss = peak_rss_mib();
    let per_min = s.builds_stored as f64 / ingest_t.as_secs_f64().max(1e-9) * 60.0;
    if world.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let _ = std::fs::remove_file(&db);
    if json {
        put!(
            out,
            "{}",
            json_line(&serde_json::json!({
                "preset": preset, "generate_ms": ms(gen), "generated": generated, "jobs": jobs.len(),
                "builds": s.builds_stored, "tests": s.tests_stored, "ingest_ms": ms(ingest_t), "builds_per_minute": per_min,
                "metrics_ms": ms(metrics_t), "load_ms": ms(load_t), "kettle_ms": ms(kettle_t), "corrected_ms": ms(corrected_t),
                "kettle_failures": kf.len(), "kettle_flakes": kk.len(), "job_figures": figs.len(), "peak_rss_mib": rss
            }))
        );
        return Ok(out);
    }
    put!(out, "bench ingest: preset {preset}, {} jobs, concurrency {concurrency}", jobs.len());
    put!(out, "generate world:   {:>9.0} ms", ms(gen));
    put!(
        out,
        "ingest:           {:>9.0} ms  {} builds, {} test results  → {:.0} builds/min",
        ms(ingest_t),
        s.builds_stored,
        s.tests_stored,
        per_min
    );
    put!(
        out,
        "metrics in all:   {:>9.0} ms  (job by job: load {:.0} ms, kettle {:.0} ms, corrected {:.0} ms)",
        ms(metrics_t),
        ms(load_t),
        ms(kettle_t),
        ms(corrected_t)
    );
    put!(
        out,
        "figures:          {} kettle failures rows, {} kettle flakes rows, {} jobs with corrected figures",
        kf.len(),
        kk.len(),
        figs.len()
    );
    if let Some(m) = rss {
        put!(out, "peak RSS: {m:.0} MiB");
    }
    Ok(out)
}
