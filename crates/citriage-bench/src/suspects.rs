//! `bench suspects`: the suspects a pattern's windows rank, against the planted
//! regressions of synthetic worlds (`synth --suspect-stories`). For each shape (the
//! `demo` and `k8s` presets' rates, at a small size) and seed it generates a world with
//! its git histories, ingests its mirror into a fresh store, clusters it as `cluster`
//! does, finds each story's pattern (the cluster most of whose failures are in the
//! story's jobs) and runs the `suspects` use case on it with checkouts of both written
//! repositories, then compares with `truth/suspects.json`:
//!
//! - culprit stories: the culprit among the window's commits, ranked first (alone), in
//!   the top 3;
//! - flaky, infrastructure, no-culprit and exposing stories: a *likely introducing
//!   change* named there is false (must be 0);
//! - the exposing stories: the job-configuration commit named as the exposing change;
//!   the image the jobs moved to between their windows' ends (their builds' stored
//!   versions) named as what exposed it, the configuration unchanged.
//!
//! Held-in seeds (those looked at while the engine was built) and held-out seeds are
//! summed apart.

use crate::{json_line, put, Lines};
use citriage_app::cluster::{cluster_store, ClusterOptions};
use citriage_app::suspects::{suspects, Suspects, SuspectsOptions};
use citriage_app::{Error, Result, Silent};
use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
use citriage_sources::artifacts::LocalMirror;
use citriage_store::Store;
use citriage_suspects::band::JobBand;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The seeds looked at while the suspects engine was built.
pub const HELD_IN: &[u64] = &[1, 2];
/// Seeds never looked at before the reported run.
pub const HELD_OUT: &[u64] = &[11, 12, 13];
/// The presets whose shapes (failure rates, log and test sizes) the worlds take.
pub const SHAPES: &[&str] = &["demo", "k8s"];

/// What one story's answer scored.
#[derive(Debug, Clone, Serialize)]
pub struct StoryScore {
    pub story: String,
    pub kind: String,
    /// The pattern's stable id, when a cluster of the story's failures was found.
    pub pattern: Option<String>,
    pub culprit_in_window: Option<bool>,
    /// The culprit's rank (and whether it shares it).
    pub culprit_rank: Option<(u32, bool)>,
    pub false_likely: bool,
    pub exposing_found: Option<bool>,
    /// `act revert-commit` on the best-ranked commit: drafted, or the refusal's reason.
    pub revert: Option<Result<String, String>>,
    /// What the triage report says started it: `introduced`, `exposed` or `unknown`.
    pub blame: String,
    pub verdict: String,
}

/// One world's stories.
#[derive(Debug, Clone, Serialize)]
pub struct WorldScore {
    pub shape: String,
    pub seed: u64,
    pub held_out: bool,
    pub builds: usize,
    pub stories: Vec<StoryScore>,
}

/// The sums over a set of worlds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub worlds: usize,
    pub culprit_stories: usize,
    pub culprit_in_window: usize,
    pub culprit_at_1: usize,
    pub culprit_top_3: usize,
    pub no_culprit_stories: usize,
    pub false_likely: usize,
    pub exposing_stories: usize,
    pub exposing_found: usize,
    pub patterns_not_found: usize,
    /// Revert drafts for the best commit of culprit stories, and of the others (must be 0).
    pub reverts_on_culprits: usize,
    pub reverts_elsewhere: usize,
}

impl Totals {
    fn add(&mut self, w: &WorldScore) {
        self.worlds += 1;
        for s in &w.stories {
            if s.pattern.is_none() {
                self.patterns_not_found += 1;
            }
            if matches!(s.revert, Some(Ok(_))) {
                if s.kind == "culprit" {
                    self.reverts_on_culprits += 1;
                } else {
                    self.reverts_elsewhere += 1;
                }
            }
            if s.kind == "culprit" {
                self.culprit_stories += 1;
                self.culprit_in_window += usize::from(s.culprit_in_window == Some(true));
                self.culprit_at_1 += usize::from(s.culprit_rank == Some((1, false)));
                self.culprit_top_3 += usize::from(s.culprit_rank.is_some_and(|(r, _)| r <= 3));
            } else {
                self.no_culprit_stories += 1;
                self.false_likely += usize::from(s.false_likely);
            }
            if s.kind == "exposing" {
                self.exposing_stories += 1;
                self.exposing_found += usize::from(s.exposing_found == Some(true));
            }
        }
    }
}

/// The world's parameters: a preset's shape at a small size.
fn params(shape: &str, seed: u64, jobs: usize) -> Result<citriage_synth::SynthParams> {
    let Some(mut p) = citriage_synth::SynthParams::preset(shape) else {
        return Err(Error::input(format!("unknown preset {shape:?} (tiny, demo, k8s)")));
    };
    p.seed = seed;
    p.jobs = jobs.max(1);
    p.builds_per_job = 20;
    p.days = 16;
    p.log_lines = p.log_lines.min(60);
    p.tests_per_build = p.tests_per_build.min(20);
    p.dashboard_days = 1;
    p.payloads = 0;
    p.suspect_stories = true;
    Ok(p)
}

/// Generates, ingests, clusters and scores one world.
pub fn world(shape: &str, seed: u64, jobs: usize, held_out: bool) -> Result<WorldScore> {
    let p = params(shape, seed, jobs)?;
    let dir = std::env::temp_dir().join(format!("citriage-bench-suspects-{}-{shape}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = (|| {
        citriage_synth::generate(&p, &dir, &mut |_| {}).map_err(|e| Error::failed(e.to_string()))?;
        let mut store = Store::open_in_memory()?;
        let src = LocalMirror::new(dir.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
        let names = discover_jobs(&src).map_err(|e| Error::failed(e.to_string()))?;
        let s = ingest_jobs(&src, &mut store, &names, &IngestOptions::default(), &|_| {})?;
        cluster_store(&mut store, &ClusterOptions::default(), &Silent)?;
        let stories = score_world(&mut store, &dir)?;
        Ok(WorldScore { shape: shape.to_string(), seed, held_out, builds: s.builds_stored, stories })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn read_truth(world: &Path) -> Result<serde_json::Value> {
    let p = world.join("truth/suspects.json");
    let bytes = std::fs::read(&p).map_err(|e| Error::failed(format!("{}: {e}", p.display())))?;
    serde_json::from_slice(&bytes).map_err(|e| Error::failed(format!("{}: {e}", p.display())))
}

/// Each story of a world scored.
pub fn score_world(store: &mut Store, world: &Path) -> Result<Vec<StoryScore>> {
    let truth = read_truth(world)?;
    let checkouts: Vec<String> = truth["repositories"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| Some(format!("{}={}", r["repo"].as_str()?, world.join(r["path"].as_str()?).display())))
        .collect();
    let index = store.build_index()?;
    let job_of: BTreeMap<i64, &str> = index.iter().map(|b| (b.id, b.record.job.as_str())).collect();
    let clusters = store.clusters("default")?;
    let mut members: Vec<(String, Vec<&str>)> = Vec::new();
    for c in &clusters {
        let rows = store.cluster_member_rows("default", &c.stable_id)?;
        members.push((c.stable_id.clone(), rows.iter().filter_map(|(b, _)| job_of.get(b).copied()).collect()));
    }
    let mut out = Vec::new();
    for story in truth["stories"].as_array().into_iter().flatten() {
        let jobs: BTreeSet<&str> = story["jobs"].as_array().into_iter().flatten().filter_map(|j| j.as_str()).collect();
        // The cluster with the most failures in the story's jobs (ties: the smaller id).
        let best = members
            .iter()
            .map(|(id, js)| (js.iter().filter(|j| jobs.contains(*j)).count(), id))
            .filter(|(n, _)| *n > 0)
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(a.1)));
        let kind = story["kind"].as_str().unwrap_or_default().to_string();
        let mut s = StoryScore {
            story: story["id"].as_str().unwrap_or_default().to_string(),
            kind: kind.clone(),
            pattern: best.map(|(_, id)| id.clone()),
            culprit_in_window: None,
            culprit_rank: None,
            false_likely: false,
            exposing_found: None,
            revert: None,
            blame: String::new(),
            verdict: String::new(),
        };
        if let Some(id) = &s.pattern {
            let opts = SuspectsOptions { target: id.clone(), checkouts: checkouts.clone(), ..Default::default() };
            let answer = suspects(store, &opts, &Silent)?;
            judge(&mut s, story, &answer);
        }
        out.push(s);
    }
    Ok(out)
}

/// Compares an answer with the story's truth.
fn judge(s: &mut StoryScore, story: &serde_json::Value, answer: &Suspects) {
    s.verdict = answer.verdict.clone();
    s.blame = answer.blame().kind;
    let commits: Vec<_> = answer.windows.iter().filter_map(|w| w.commits.as_ref()).flatten().collect();
    if let Some(culprit) = story["culprit"].as_str() {
        let c = commits.iter().find(|c| c.sha == culprit);
        s.culprit_in_window = Some(c.is_some());
        s.culprit_rank = c.map(|c| (c.rank, c.tied));
    } else {
        s.false_likely = commits.iter().any(|c| c.band == JobBand::LikelyIntroducing);
    }
    if let Some(exposing) = story["exposing"].as_str() {
        s.exposing_found = Some(answer.exposing.iter().any(|e| e.sha == exposing));
    }
    let image = &story["exposing_image"];
    if let (Some(from), Some(to)) = (image["from"].as_str(), image["to"].as_str()) {
        // Named as what exposed it: the first move, and the blame says so.
        let first = answer.versions_moved.first();
        s.exposing_found =
            Some(s.blame == "exposed" && first.is_some_and(|m| m.kind == "image" && m.from == from && m.to == to));
    }
    if let Some(best) = answer.top().first() {
        s.revert = citriage_app::act::revert_commit(answer, &best.sha)
            .ok()
            .map(|r| r.map(|d| d.name).map_err(|refusal| refusal.message()));
    }
}

/// Runs the benchmark; `show` gets each world's lines as it is scored (none when
/// `json`); returns the closing lines (the JSON document when `json`).
pub fn run(held_in: &[u64], held_out: &[u64], jobs: usize, json: bool, show: &mut dyn FnMut(Lines)) -> Result<Lines> {
    let mut worlds = Vec::new();
    let mut totals_in = Totals::default();
    let mut totals_out = Totals::default();
    for (seeds, out) in [(held_in, false), (held_out, true)] {
        for &seed in seeds {
            for shape in SHAPES {
                let w = world(shape, seed, jobs, out)?;
                if out {
                    totals_out.add(&w);
                } else {
                    totals_in.add(&w);
                }
                if !json {
                    show(world_lines(&w));
                }
                worlds.push(w);
            }
        }
    }
    let mut lines = Lines::new();
    if json {
        put!(
            lines,
            "{}",
            json_line(&serde_json::json!({
                "shapes": SHAPES, "held_in_seeds": held_in, "held_out_seeds": held_out,
                "held_in": totals_in, "held_out": totals_out, "worlds": worlds
            }))
        );
        return Ok(lines);
    }
    put!(lines, "");
    put!(lines, "                       culprit in window  culprit@1  top 3   false likely  exposing found  reverts (culprit / other)");
    for (name, seeds, t) in [("held-in ", held_in, &totals_in), ("held-out", held_out, &totals_out)] {
        let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
        put!(
            lines,
            "{name} (seeds {:<6}) {:>8}/{:<8} {:>4}/{:<4} {:>3}/{:<4} {:>4}/{:<8} {:>3}/{:<10} {:>3} / {}{}",
            seeds.join(","),
            t.culprit_in_window,
            t.culprit_stories,
            t.culprit_at_1,
            t.culprit_stories,
            t.culprit_top_3,
            t.culprit_stories,
            t.false_likely,
            t.no_culprit_stories,
            t.exposing_found,
            t.exposing_stories,
            t.reverts_on_culprits,
            t.reverts_elsewhere,
            if t.patterns_not_found > 0 {
                format!("  ({} patterns not found)", t.patterns_not_found)
            } else {
                String::new()
            }
        );
    }
    Ok(lines)
}

fn world_lines(w: &WorldScore) -> Lines {
    let mut out = Lines::new();
    put!(
        out,
        "{} seed {} ({}, {} builds):",
        w.shape,
        w.seed,
        if w.held_out { "held-out" } else { "held-in" },
        w.builds
    );
    for s in &w.stories {
        let what = match (s.kind.as_str(), s.culprit_rank, s.exposing_found) {
            (_, _, _) if s.pattern.is_none() => "pattern not found".to_string(),
            ("culprit", Some((r, t)), _) => format!("culprit ranked {r}{}", if t { "=" } else { "" }),
            ("culprit", None, _) => "culprit not in the window".to_string(),
            (_, _, Some(found)) => {
                format!("false likely: {}; exposing change {}", s.false_likely, if found { "found" } else { "missed" })
            }
            _ => format!("false likely: {}", s.false_likely),
        };
        put!(out, "  {:<24} {:<15} {what}", s.story, s.kind);
    }
    out
}
