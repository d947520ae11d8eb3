//! Drift across the versions of the 2017 Kubernetes metrics dashboards
//! (`shared/data/real/k8s-metrics-2017/`): each version against the one before, with
//! the jobs added and removed and the failures integrity check computed again from a
//! plain JSON walk of the two files. Skips with a reason when the shared data is absent.

use citriage_analysis::drift::drift;
use citriage_formats::parse_snapshot;
use citriage_model::{Day, Snapshot, SnapshotMeta};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A file or folder of the shared data beside the checkout (`../shared/data`).
fn shared(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not available", p.display());
        None
    }
}

/// The versions of one dashboard that the reader accepts, oldest first, each with
/// its plain JSON.
fn versions(dir: &Path, prefix: &str) -> Vec<(Snapshot, serde_json::Map<String, serde_json::Value>)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        let Ok(p) = parse_snapshot(&bytes, &name, None) else { continue };
        let date = Day::find_in(&name).unwrap();
        let meta = SnapshotMeta { dataset: p.dataset, date, source: name.clone(), sha256: String::new() };
        out.push((Snapshot::new(meta, p.jobs), serde_json::from_slice(&bytes).unwrap()));
    }
    out
}

fn number(v: &serde_json::Value) -> i64 {
    match v {
        serde_json::Value::String(s) => s.parse().unwrap(),
        other => other.as_i64().unwrap(),
    }
}

#[test]
fn failures_drift_across_the_2017_versions() {
    let Some(dir) = shared("real/k8s-metrics-2017") else { return };
    let v = versions(&dir, "failures-latest.");
    assert_eq!(v.len(), 7, "the failing_since version is refused, the others read");
    let mut violations = 0;
    for pair in v.windows(2) {
        let ((prior, pj), (now, nj)) = (&pair[0], &pair[1]);
        let d = drift(now, prior, &[], 0.05);
        let before: BTreeSet<&String> = pj.keys().collect();
        let after: BTreeSet<&String> = nj.keys().collect();
        let added: BTreeSet<&String> = d.added.iter().map(|a| &a.entry.job).collect();
        let removed: BTreeSet<&String> = d.removed.iter().map(|a| &a.entry.job).collect();
        assert_eq!(added, after.difference(&before).copied().collect());
        assert_eq!(removed, before.difference(&after).copied().collect());
        let days = now.meta.date.days_since(prior.meta.date);
        let common: Vec<&&String> = after.intersection(&before).collect();
        let off: BTreeMap<&str, (i64, i64)> = common
            .iter()
            .map(|j| (j.as_str(), (number(&pj[**j]["failing_days"]), number(&nj[**j]["failing_days"]))))
            .filter(|(_, (a, b))| b - a != days)
            .collect();
        let integrity = d.integrity.as_ref().unwrap();
        assert_eq!(integrity.common, common.len());
        let got: BTreeMap<&str, (i64, i64)> =
            integrity.violations.iter().map(|x| (x.job.as_str(), (i64::from(x.prior), i64::from(x.now)))).collect();
        assert_eq!(got, off);
        violations += off.len();
        println!(
            "{} -> {} ({days} days): {} added, {} removed, {} common, {} off the integrity rule",
            prior.meta.date,
            now.meta.date,
            added.len(),
            removed.len(),
            common.len(),
            off.len()
        );
    }
    assert!(violations > 0, "the real dashboards do drift from the rule");
}

#[test]
fn flakes_drift_across_the_2017_versions() {
    let Some(dir) = shared("real/k8s-metrics-2017") else { return };
    let v = versions(&dir, "flakes-latest.");
    assert_eq!(v.len(), 11);
    let mut moved = 0;
    for pair in v.windows(2) {
        let ((prior, pj), (now, nj)) = (&pair[0], &pair[1]);
        let d = drift(now, prior, &[], 0.01);
        assert!(d.integrity.is_none());
        let c = |m: &serde_json::Map<String, serde_json::Value>, j: &str| -> f64 {
            match &m[j]["consistency"] {
                serde_json::Value::String(s) => s.parse().unwrap(),
                x => x.as_f64().unwrap(),
            }
        };
        let expected: BTreeSet<&str> = nj
            .keys()
            .filter(|j| pj.contains_key(*j))
            .filter(|j| ((c(nj, j) - c(pj, j)) * 1000.0).round().abs() > 10.0)
            .map(String::as_str)
            .collect();
        let got: BTreeSet<&str> = d.worsened.iter().chain(&d.improved).map(|m| m.job.as_str()).collect();
        assert_eq!(got, expected, "{} -> {}", prior.meta.source, now.meta.source);
        moved += got.len();
        println!(
            "{} -> {}: {} added, {} removed, {} worsened, {} improved past 0.01",
            prior.meta.source,
            now.meta.source,
            d.added.len(),
            d.removed.len(),
            d.worsened.len(),
            d.improved.len()
        );
    }
    println!("{moved} consistency moves past 0.01 in all");
    assert!(moved > 0, "some consistency moved between versions");
}
