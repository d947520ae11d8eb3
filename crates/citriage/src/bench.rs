//! `citriage bench`: benchmarks that print timings and peak memory (never timed
//! tests). `bench triage` generates a snapshot of N jobs per dataset and measures
//! parsing, storing, loading, triage and rendering.

use crate::context::Failure;
use crate::example_data;
use crate::pipeline;
use citriage_analysis::{AnalysisConfig, RuleSet, TriageInput};
use citriage_model::Day;
use citriage_store::Store;
use std::time::{Duration, Instant};

/// Peak resident set size of this process in MiB (VmHWM), when the OS tells.
pub fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs the triage benchmark.
pub fn triage(jobs: usize, repeat: usize, json: bool) -> Result<(), Failure> {
    let repeat = repeat.max(1);
    let t0 = Instant::now();
    let files = example_data::generate(jobs, 2, Day::from_ymd(2026, 11, 21).unwrap_or(Day(0)), 7);
    let gen = t0.elapsed();
    let dir = std::env::temp_dir().join(format!("citriage-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| Failure::other(format!("{}: {e}", dir.display())))?;
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
                let (snap, _) = pipeline::snapshot_from_bytes(text.as_bytes(), name, None, None)?;
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
            let loaded = pipeline::load_with_history(&store, *ids.last().unwrap_or(&0))?;
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
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"generate_ms": ms(gen), "repeat": repeat, "results": v, "peak_rss_mib": rss})
            )
            .unwrap_or_default()
        );
        return Ok(());
    }
    println!("bench triage: {jobs} generated jobs per dataset (2 days, newest triaged against the prior), median of {repeat}");
    println!("generate: {:.0} ms", ms(gen));
    println!(
        "{:<9} {:>8} {:>9} {:>9} {:>10} {:>9} {:>12} {:>10}",
        "dataset", "jobs", "MiB", "parse ms", "store ms", "load ms", "analysis ms", "render ms"
    );
    for r in &rows {
        println!(
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
        println!("peak RSS: {m:.0} MiB");
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the ingest benchmark.
pub fn ingest(preset: &str, concurrency: usize, world: Option<&std::path::Path>, json: bool) -> Result<(), Failure> {
    use citriage_analysis::metrics::{corrected, kettle};
    use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
    use citriage_sources::artifacts::LocalMirror;
    let Some(params) = citriage_synth::SynthParams::preset(preset) else {
        return Err(Failure::input(format!("unknown preset {preset:?}")));
    };
    let tmp = std::env::temp_dir().join(format!("citriage-bench-ingest-{}", std::process::id()));
    let dir = world.map(|w| w.to_path_buf()).unwrap_or_else(|| tmp.clone());
    let t = Instant::now();
    let generated = if dir.join("truth.json").exists() {
        None
    } else {
        Some(citriage_synth::generate(&params, &dir, &mut |_| {}).map_err(|e| Failure::other(e.to_string()))?)
    };
    let gen = t.elapsed();
    let db = dir.with_extension("bench.db");
    let _ = std::fs::remove_file(&db);
    let mut store = Store::open(&db)?;
    let src = LocalMirror::new(dir.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = discover_jobs(&src).map_err(|e| Failure::other(e.to_string()))?;
    let t = Instant::now();
    let s = ingest_jobs(
        &src,
        &mut store,
        &jobs,
        &IngestOptions { concurrency, max_builds_per_job: None, ..Default::default() },
        &|_| {},
    )
    .map_err(|e| Failure::other(e.to_string()))?;
    let ingest_t = t.elapsed();
    // Metrics job by job, as `citriage metrics` computes them.
    let t = Instant::now();
    let all = store.builds(None)?;
    let as_of = crate::builds::default_as_of(&all);
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
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "preset": preset, "generate_ms": ms(gen), "generated": generated, "jobs": jobs.len(),
                "builds": s.builds_stored, "tests": s.tests_stored, "ingest_ms": ms(ingest_t), "builds_per_minute": per_min,
                "metrics_ms": ms(metrics_t), "load_ms": ms(load_t), "kettle_ms": ms(kettle_t), "corrected_ms": ms(corrected_t),
                "kettle_failures": kf.len(), "kettle_flakes": kk.len(), "job_figures": figs.len(), "peak_rss_mib": rss
            }))
            .unwrap_or_default()
        );
        return Ok(());
    }
    println!("bench ingest: preset {preset}, {} jobs, concurrency {concurrency}", jobs.len());
    println!("generate world:   {:>9.0} ms", ms(gen));
    println!(
        "ingest:           {:>9.0} ms  {} builds, {} test results  → {:.0} builds/min",
        ms(ingest_t),
        s.builds_stored,
        s.tests_stored,
        per_min
    );
    println!(
        "metrics in all:   {:>9.0} ms  (job by job: load {:.0} ms, kettle {:.0} ms, corrected {:.0} ms)",
        ms(metrics_t),
        ms(load_t),
        ms(kettle_t),
        ms(corrected_t)
    );
    println!(
        "figures:          {} kettle failures rows, {} kettle flakes rows, {} jobs with corrected figures",
        kf.len(),
        kk.len(),
        figs.len()
    );
    if let Some(m) = rss {
        println!("peak RSS: {m:.0} MiB");
    }
    Ok(())
}
