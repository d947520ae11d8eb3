//! `citriage cluster` over a synthetic world's stored builds: every failure in exactly one
//! cluster of every export (failure_data.json, clusters.json, the store) in both profiles;
//! stable ids that follow their failures across windows; pattern drift between two dates
//! that matches the world's truth.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use citriage_patterns::drift::{classify, DriftConfig, DriftKind};

mod common;

use common::{run, stderr};

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    db: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.payloads = 0;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    let db = dir.path().join("w.db");
    let mirror = root.join("gcs/kubernetes-ci-logs");
    let o = run(&db, &["fetch", "--all", "--mirror", mirror.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    World { _dir: dir, root, db }
}

fn cluster(w: &World, out: &Path, args: &[&str]) -> serde_json::Value {
    let mut a = vec!["--format", "json", "cluster", "--out", out.to_str().unwrap()];
    a.extend_from_slice(args);
    let o = run(&w.db, &a);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn sql_rows(db: &Path, sql: &str) -> Vec<Vec<String>> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c.prepare(sql).unwrap();
    let n = st.column_count();
    let rows = st
        .query_map([], |r| {
            let mut v = Vec::new();
            for i in 0..n {
                v.push(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    other => format!("{other:?}"),
                });
            }
            Ok(v)
        })
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// (build path, test position) → stable id of the profile's latest run.
fn members(db: &Path, profile: &str) -> BTreeMap<(String, String), String> {
    sql_rows(
        db,
        &format!(
            "SELECT b.path, m.seq, m.stable_id FROM cluster_members m JOIN builds b ON b.id = m.build WHERE m.profile = '{profile}'"
        ),
    )
    .into_iter()
    .map(|r| ((r[0].clone(), r[1].clone()), r[2].clone()))
    .collect()
}

#[test]
fn every_failure_in_exactly_one_cluster_of_every_export() {
    let w = world();
    for profile in ["default", "k8s-triage"] {
        let out = w.db.parent().unwrap().join(format!("out-{profile}"));
        let v = cluster(&w, &out, &["--profile", profile, "--window", "60"]);
        let n = v["failures"].as_u64().unwrap() as usize;
        assert!(n > 100, "{n} failures");
        assert_eq!(v["accounting"]["missing"], 0);
        assert_eq!(v["accounting"]["duplicated"], 0);
        // failure_data.json: one (test, job, build number) entry per failure, in one cluster
        // (a test that failed twice in a build is listed twice)
        let fd: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("failure_data.json")).unwrap()).unwrap();
        let mut count = 0usize;
        for c in fd["clustered"].as_array().unwrap() {
            for t in c["tests"].as_array().unwrap() {
                for j in t["jobs"].as_array().unwrap() {
                    count += j["builds"].as_array().unwrap().len();
                }
            }
        }
        assert_eq!(count, n, "{profile}: failure_data.json holds {count} of {n} failures");
        // clusters.json: member indices cover 0..n exactly once
        let rich: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("clusters.json")).unwrap()).unwrap();
        let mut idx: Vec<u64> = rich["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["members"].as_array().unwrap().iter().map(|m| m.as_u64().unwrap()))
            .collect();
        idx.sort_unstable();
        assert_eq!(idx, (0..n as u64).collect::<Vec<_>>(), "{profile}: clusters.json members");
        // every cluster has its sub-patterns, whose members add up to the cluster's
        for c in rich["clusters"].as_array().unwrap() {
            let size = c["size"].as_u64().unwrap();
            let fam: u64 = c["sub_patterns"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["kind"] == "job-family")
                .map(|s| s["members"].as_array().unwrap().len() as u64)
                .sum();
            assert_eq!(fam, size);
        }
        // the store: one membership row per failure
        let m = members(&w.db, profile);
        assert_eq!(m.len(), n, "{profile}: stored members");
        let failed =
            sql_rows(&w.db, "SELECT count(*) FROM test_results WHERE status IN (1, 2) AND failure_text IS NOT NULL");
        assert_eq!(failed[0][0], format!("Integer({n})"), "{profile}: the window covers every stored failure");
    }
}

#[test]
fn stable_ids_follow_their_failures_across_windows() {
    let w = world();
    let out = w.db.parent().unwrap().join("out");
    cluster(&w, &out, &["--window", "60"]);
    let first = members(&w.db, "default");
    let narrow = cluster(&w, &out, &["--window", "5"]);
    assert!(narrow["failures"].as_u64().unwrap() < first.len() as u64);
    let second = members(&w.db, "default");
    // the narrow window's failures keep the ids they had
    let moved = second.iter().filter(|(k, id)| first.get(*k) != Some(*id)).count();
    assert!(moved * 20 <= second.len(), "{moved} of {} failures changed id in the narrow window", second.len());
    cluster(&w, &out, &["--window", "60"]);
    let third = members(&w.db, "default");
    assert_eq!(first, third, "rerunning the first window moved ids");
    // and an earlier as-of
    let ids: BTreeSet<&String> = first.values().collect();
    cluster(&w, &out, &["--window", "60", "--as-of", "2026-11-10"]);
    let earlier = members(&w.db, "default");
    let kept = earlier.iter().filter(|(k, id)| first.get(*k) == Some(*id)).count();
    assert!(kept * 20 >= earlier.len() * 19, "{kept} of {} kept their id", earlier.len());
    assert!(earlier.values().filter(|id| !ids.contains(id)).count() * 20 <= earlier.len());
}

#[test]
fn pattern_drift_matches_the_world_truth() {
    let w = world();
    // Truth: failures per planted pattern and day, from the per-build truth.
    let mut started: HashMap<String, i64> = HashMap::new();
    let mut label: HashMap<(String, String), String> = HashMap::new();
    let text = std::fs::read_to_string(w.root.join("truth/builds.jsonl")).unwrap();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(path) = v["path"].as_str() else { continue };
        let path = path.trim_start_matches("gcs/kubernetes-ci-logs/").to_string();
        started.insert(path.clone(), v["started"].as_i64().unwrap());
        for c in v["causes"].as_array().into_iter().flatten() {
            for j in c["junit"].as_array().into_iter().flatten() {
                label.insert(
                    (path.clone(), j["test"].as_str().unwrap().to_string()),
                    c["pattern"].as_str().unwrap().into(),
                );
            }
        }
    }
    let out = w.db.parent().unwrap().join("out");
    let days: Vec<i64> = started.values().map(|s| s.div_euclid(86_400)).collect();
    let last = *days.iter().max().unwrap();
    let to = citriage_model::Day(last).to_string();
    let from = citriage_model::Day(last - 14).to_string();
    let v = cluster(&w, &out, &["--window", "60", "--drift-from", &from, "--drift-to", &to]);
    let drift = &v["pattern_drift"];
    assert_eq!(drift["to"], to.as_str());
    // Each cluster stands for the planted pattern most of its failures carry.
    let rows = sql_rows(
        &w.db,
        "SELECT b.path, s.text, m.stable_id FROM cluster_members m JOIN builds b ON b.id = m.build
         JOIN test_results t ON t.build = m.build AND t.seq = m.seq JOIN strings s ON s.id = t.name
         WHERE m.profile = 'default'",
    );
    let mut votes: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut truth_daily: BTreeMap<String, BTreeMap<i64, u64>> = BTreeMap::new();
    let (mut labelled, mut pure) = (0u64, 0u64);
    for r in &rows {
        if let Some(p) = label.get(&(r[0].clone(), r[1].clone())) {
            *votes.entry(r[2].clone()).or_default().entry(p.clone()).or_insert(0) += 1;
            *truth_daily.entry(p.clone()).or_default().entry(started[&r[0]].div_euclid(86_400)).or_insert(0) += 1;
        }
    }
    let pattern_of: BTreeMap<String, String> = votes
        .iter()
        .map(|(id, v)| {
            let (p, n) = v.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).unwrap();
            labelled += v.values().sum::<u64>();
            pure += n;
            (id.clone(), p.clone())
        })
        .collect();
    assert!(pure * 100 >= labelled * 95, "clusters are impure: {pure} of {labelled}");
    // citriage's per-day counts of the clusters standing for each pattern
    let mut ours: BTreeMap<String, BTreeMap<i64, u64>> = BTreeMap::new();
    for p in drift["patterns"].as_array().unwrap() {
        let Some(pat) = pattern_of.get(p["id"].as_str().unwrap()) else { continue };
        for d in p["per_day"].as_array().unwrap() {
            *ours.entry(pat.clone()).or_default().entry(d[0].as_i64().unwrap()).or_insert(0) += d[1].as_u64().unwrap();
        }
    }
    let cfg = DriftConfig::default();
    let (from_day, to_day) = (last - 14, last);
    let window = |m: &BTreeMap<i64, u64>, end: i64| -> u64 { m.range(end - cfg.span + 1..=end).map(|(_, n)| n).sum() };
    let mut checked = 0;
    let mut moving = 0;
    for (pat, t) in &truth_daily {
        let (tb, ta) = (window(t, from_day), window(t, to_day));
        if tb + ta < 8 {
            continue;
        }
        let want = classify(tb, ta, &cfg);
        let o = ours.get(pat).cloned().unwrap_or_default();
        let got = classify(window(&o, from_day), window(&o, to_day), &cfg);
        assert_eq!(got, want, "{pat}: truth {tb} → {ta}, citriage {} → {}", window(&o, from_day), window(&o, to_day));
        checked += 1;
        if want != DriftKind::Steady {
            moving += 1;
        }
    }
    eprintln!("pattern drift: {checked} patterns checked, {moving} of them moving");
    assert!(checked >= 3, "only {checked} patterns had enough failures");
    // The triage report carries the pattern drift of the stored run, with evidence.
    let snap = w.root.join("k8s-metrics/failures-latest.json");
    let rep = w.db.parent().unwrap().join("report");
    let o =
        run(&w.db, &["triage", "--snapshot", snap.to_str().unwrap(), "--date", &to, "--out", rep.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    let section = md.split("### Pattern drift").nth(1).expect("a pattern drift section");
    let moving_ours = drift["patterns"].as_array().unwrap().iter().filter(|p| p["kind"] != "steady").count();
    if moving_ours > 0 {
        assert!(section.contains("| Change | Pattern |"), "{section}");
        assert!(section.contains("(#ev-") || section.contains("ev-"), "rows cite evidence");
    }
}
