//! `citriage bench alerts`: alert noise on a synthetic world grown over N days. The
//! world is generated and ingested, its payload stream analysed, then replayed as
//! `watch` would have lived it: every turn (several a day) re-clusters the failures as
//! of that instant and runs an alert turn as of it. Printed: alerts raised and
//! withdrawn per day, alerts withdrawn within a day of being raised, duplicates (a
//! state change said twice: must be 0), and alerts about the planted flaky tests (0
//! unless the job is red by TestGrid's rule), checked against the world's truth.

use crate::{Error, Lines, Progress, Result};
use citriage_app::alerts::{self, AlertOptions};
use citriage_app::cluster::{cluster_store, ClusterOptions};
use citriage_model::time::DAY;
use citriage_model::Day;
use citriage_store::Store;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What to replay.
#[derive(Debug, Clone)]
pub struct NoiseOptions {
    pub preset: String,
    pub seed: u64,
    /// Jobs of the world (default: the preset's).
    pub jobs: Option<usize>,
    pub days: u32,
    pub turns_per_day: u32,
    /// Keep the world and its store here (default: a temporary folder).
    pub keep: Option<PathBuf>,
}

/// One day of the replay.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DayFigures {
    pub day: String,
    pub raised: u64,
    pub withdrawn: u64,
    pub held: u64,
}

/// The replay's figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NoiseReport {
    pub preset: String,
    pub seed: u64,
    pub builds: u64,
    pub days: u32,
    pub turns: u64,
    pub per_day: Vec<DayFigures>,
    pub raised: u64,
    pub withdrawn: u64,
    /// Alerts the verifier's rules held back.
    pub held: u64,
    pub by_kind: BTreeMap<String, u64>,
    pub raised_per_day_mean: f64,
    pub raised_per_day_max: u64,
    /// Raised alerts withdrawn less than a day after they were raised.
    pub withdrawn_within_a_day: u64,
    /// A state change said twice (raised again without a withdrawal, a pattern new twice).
    pub duplicates: u64,
    /// Pattern alerts whose failures are mostly planted flaky tests' (must be 0).
    pub flaky_pattern_alerts: u64,
    /// Job-red alerts whose cited failing runs failed only by planted flaky tests
    /// (allowed: red by TestGrid's rule).
    pub flaky_job_red_alerts: u64,
    /// Planted flaky tests in the world.
    pub planted_flaky_tests: u64,
}

/// What the world's truth says about flakiness.
struct Truth {
    /// (job, test) of planted flaky tests (raw job names; JUnit and kettle names).
    flaky: BTreeSet<(String, String)>,
    /// How many flaky tests were planted.
    planted: u64,
    /// (job, build id) → the classes of the causes planted in the build.
    causes: BTreeMap<(String, String), Vec<String>>,
}

fn read_truth(world: &Path) -> Result<Truth> {
    let read = |p: PathBuf| std::fs::read_to_string(&p).map_err(|e| Error::failed(format!("{}: {e}", p.display())));
    let index: serde_json::Value = serde_json::from_str(&read(world.join("truth.json"))?)
        .map_err(|e| Error::failed(format!("truth.json: {e}")))?;
    let mut flaky = BTreeSet::new();
    let planted = index["flaky_tests"].as_array().map_or(0, |a| a.len() as u64);
    for f in index["flaky_tests"].as_array().into_iter().flatten() {
        let job = f["job"].as_str().unwrap_or_default().to_string();
        for t in [f["test"].as_str(), f["kettle_test"].as_str()].into_iter().flatten() {
            flaky.insert((job.clone(), t.to_string()));
        }
    }
    let mut causes = BTreeMap::new();
    for line in read(world.join("truth/builds.jsonl"))?.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let key = (v["job"].as_str().unwrap_or_default().to_string(), v["id"].as_str().unwrap_or_default().to_string());
        let classes = v["causes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["class"].as_str().unwrap_or_default().to_string())
            .collect();
        causes.insert(key, classes);
    }
    Ok(Truth { flaky, planted, causes })
}

/// Generates the world, ingests its builds and records its payload analyses.
fn build_world(o: &NoiseOptions, dir: &Path, progress: &dyn Progress) -> Result<(PathBuf, Store, u64)> {
    let mut p = citriage_synth::SynthParams::preset(&o.preset).ok_or_else(|| {
        Error::input(format!("--preset {:?}: expected one of {:?}", o.preset, citriage_synth::PRESETS))
    })?;
    p.seed = o.seed;
    p.days = o.days;
    if let Some(j) = o.jobs {
        p.jobs = j;
    }
    let world = dir.join("world");
    if !world.join("truth.json").exists() {
        progress.doing("generating the world");
        let _ = std::fs::remove_dir_all(&world);
        citriage_synth::generate(&p, &world, &mut |_| {}).map_err(|e| Error::failed(e.to_string()))?;
    }
    let db = dir.join("world.db");
    let _ = std::fs::remove_file(&db);
    let mut store = Store::open(&db)?;
    progress.doing("ingesting its builds");
    let src = citriage_sources::artifacts::LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = citriage_ingest::discover_jobs(&src).map_err(|e| Error::failed(e.to_string()))?;
    let ingest = citriage_ingest::ingest_jobs(&src, &mut store, &jobs, &Default::default(), &|_| {})
        .map_err(|e| Error::failed(e.to_string()))?;
    progress.doing("analysing its payload stream");
    for a in citriage_app::payload::analyze_world_payloads(&world)? {
        citriage_app::documents::record_payload(&mut store, &a)?;
    }
    Ok((world, store, ingest.builds_found as u64))
}

/// One alert as the replay saw it.
struct Seen {
    kind: String,
    change: String,
    subject: String,
    turn: i64,
    held: bool,
}

/// Replays the world turn by turn; returns every alert with its turn.
fn replay(store: &mut Store, o: &NoiseOptions, progress: &dyn Progress) -> Result<(Vec<Seen>, u64, i64)> {
    let builds = store.build_index()?;
    let last = alerts::default_as_of(&builds).ok_or_else(|| Error::failed("the world has no builds"))?;
    let last_day = Day::from_unix_seconds(last);
    let first_day = last_day.plus(1 - i64::from(o.days));
    let mut seen = Vec::new();
    let mut turns = 0;
    let per_day = i64::from(o.turns_per_day.max(1));
    let step = DAY / per_day;
    progress.total(i64::from(o.days).unsigned_abs() * per_day.unsigned_abs());
    for d in 0..i64::from(o.days) {
        let day = first_day.plus(d);
        progress.doing(&format!("day {} of {}: {day}", d + 1, o.days));
        for k in 1..=per_day {
            let t = day.start_seconds() + k * step - 1;
            let clustering =
                ClusterOptions { window_days: 14, as_of: Some(t.to_string()), ..ClusterOptions::default() };
            cluster_store(store, &clustering, &citriage_app::Silent)?;
            let opts = AlertOptions {
                as_of: Some(t),
                read_at: Some(citriage_model::time::rfc3339(t)),
                ..AlertOptions::default()
            };
            let report = alerts::turn(store, &opts, &citriage_app::Silent)?;
            turns += 1;
            progress.advance(1);
            for a in report.alerts {
                seen.push(Seen {
                    kind: a.alert.kind.as_str().to_string(),
                    change: a.alert.change.as_str().to_string(),
                    subject: a.alert.subject.clone(),
                    turn: t,
                    held: a.held.is_some(),
                });
            }
        }
    }
    Ok((seen, turns, first_day.0))
}

/// Runs the replay and computes its figures.
pub fn noise(o: &NoiseOptions, progress: &dyn Progress) -> Result<NoiseReport> {
    let tmp = std::env::temp_dir().join(format!("citriage-bench-alerts-{}", std::process::id()));
    let dir = o.keep.clone().unwrap_or_else(|| tmp.clone());
    std::fs::create_dir_all(&dir).map_err(|e| Error::failed(format!("{}: {e}", dir.display())))?;
    let r = noise_in(o, &dir, progress);
    if o.keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    r
}

fn noise_in(o: &NoiseOptions, dir: &Path, progress: &dyn Progress) -> Result<NoiseReport> {
    let (world, mut store, builds) = build_world(o, dir, progress)?;
    let truth = read_truth(&world)?;
    let (seen, turns, first_day) = replay(&mut store, o, progress)?;
    let mut r = NoiseReport {
        preset: o.preset.clone(),
        seed: o.seed,
        builds,
        days: o.days,
        turns,
        planted_flaky_tests: truth.planted,
        ..Default::default()
    };
    let mut per_day: BTreeMap<i64, DayFigures> = (0..i64::from(o.days))
        .map(|d| (first_day + d, DayFigures { day: Day(first_day + d).to_string(), ..Default::default() }))
        .collect();
    // (kind, subject) → the turns it was raised and withdrawn, in order.
    let mut history: BTreeMap<(&str, &str), Vec<(&str, i64)>> = BTreeMap::new();
    for s in &seen {
        let f = per_day.entry(s.turn.div_euclid(DAY)).or_default();
        if s.held {
            f.held += 1;
            r.held += 1;
            continue;
        }
        *r.by_kind.entry(format!("{} {}", s.kind, s.change)).or_default() += 1;
        if s.change == "raised" {
            f.raised += 1;
            r.raised += 1;
        } else {
            f.withdrawn += 1;
            r.withdrawn += 1;
        }
        history.entry((s.kind.as_str(), s.subject.as_str())).or_default().push((s.change.as_str(), s.turn));
    }
    for ((kind, _), h) in &history {
        let mut open: Option<i64> = None;
        let mut raised_ever = 0;
        for (change, turn) in h {
            match (*change, open) {
                ("raised", None) => {
                    open = Some(*turn);
                    raised_ever += 1;
                    if *kind == "pattern-new" && raised_ever > 1 {
                        r.duplicates += 1;
                    }
                }
                ("raised", Some(_)) => r.duplicates += 1,
                ("withdrawn", Some(at)) => {
                    if turn - at < DAY {
                        r.withdrawn_within_a_day += 1;
                    }
                    open = None;
                }
                _ => r.duplicates += 1,
            }
        }
    }
    classify_flaky(&store, &truth, &mut r)?;
    r.per_day = per_day.into_values().collect();
    let days = r.per_day.len().max(1) as f64;
    r.raised_per_day_mean = (r.raised as f64 / days * 100.0).round() / 100.0;
    r.raised_per_day_max = r.per_day.iter().map(|d| d.raised).max().unwrap_or(0);
    Ok(r)
}

/// Counts the alerts about planted flaky tests, from the stored alerts and the world's
/// truth: a pattern alert whose cited or counted failures are mostly planted flaky
/// tests', a job-red alert whose cited failing runs failed only by planted flakes.
fn classify_flaky(store: &Store, truth: &Truth, r: &mut NoiseReport) -> Result<()> {
    for a in store.alerts(None, None)?.into_iter().filter(|a| a.held.is_none() && a.change == "raised") {
        let Ok(alert) = serde_json::from_str::<citriage_alerts::Alert>(&a.body) else { continue };
        let runs: Vec<(String, String)> = alert
            .refs
            .iter()
            .filter_map(|u| citriage_verify::rules::parse_build_url(u))
            .map(|b| (b.job, b.build_id))
            .collect();
        match a.kind.as_str() {
            "job-red" => {
                let all_flaky = !runs.is_empty()
                    && runs
                        .iter()
                        .all(|k| truth.causes.get(k).is_some_and(|c| !c.is_empty() && c.iter().all(|x| x == "flake")));
                if all_flaky {
                    r.flaky_job_red_alerts += 1;
                }
            }
            "pattern-new" | "pattern-growing" => {
                // The tests the alert cites ("in `job`, test `name`").
                let cited: Vec<(String, String)> = alert
                    .lines
                    .iter()
                    .filter_map(|l| {
                        let names: Vec<&str> = l
                            .iter()
                            .filter_map(|p| match p {
                                citriage_alerts::Piece::Name(n) => Some(n.as_str()),
                                _ => None,
                            })
                            .collect();
                        (names.len() >= 3).then(|| {
                            let job = names[names.len() - 2];
                            (job.strip_prefix("pr:").unwrap_or(job).to_string(), names[names.len() - 1].to_string())
                        })
                    })
                    .collect();
                let flaky = cited.iter().filter(|c| truth.flaky.contains(c)).count();
                if !cited.is_empty() && flaky * 2 > cited.len() {
                    r.flaky_pattern_alerts += 1;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The report as the lines `bench alerts` prints: the table docs/alerts.md shows, or
/// one JSON document.
pub fn lines(r: &NoiseReport, json: bool) -> Lines {
    if json {
        return vec![crate::json_line(&serde_json::to_value(r).unwrap_or_default())];
    }
    render(r).lines().map(str::to_string).collect()
}

/// The report as the table the README shows.
fn render(r: &NoiseReport) -> String {
    let mut out = format!(
        "alert noise: preset {}, seed {}, {} builds, {} days, {} turns\n",
        r.preset, r.seed, r.builds, r.days, r.turns
    );
    out.push_str(&format!(
        "raised {} (per day: mean {:.2}, max {}), withdrawn {}, held by the verifier {}\n",
        r.raised, r.raised_per_day_mean, r.raised_per_day_max, r.withdrawn, r.held
    ));
    out.push_str(&format!("withdrawn within a day of being raised: {}\n", r.withdrawn_within_a_day));
    out.push_str(&format!("duplicates: {}\n", r.duplicates));
    out.push_str(&format!(
        "about planted flaky tests ({} planted): pattern alerts {}, job-red alerts {} (red by TestGrid's rule)\n",
        r.planted_flaky_tests, r.flaky_pattern_alerts, r.flaky_job_red_alerts
    ));
    out.push_str("by kind:");
    for (k, n) in &r.by_kind {
        out.push_str(&format!(" {k} {n};"));
    }
    out.push_str("\nday        raised withdrawn held\n");
    for d in &r.per_day {
        out.push_str(&format!("{} {:>6} {:>9} {:>4}\n", d.day, d.raised, d.withdrawn, d.held));
    }
    out
}
