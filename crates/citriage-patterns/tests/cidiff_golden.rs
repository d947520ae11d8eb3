//! Failure-line extraction quality on CiDiff's breakage cases (read from the shared reference
//! directory next to the checkout; skipped when absent): macro F1 over the ground truth's E
//! lines, C lines ignored, blank lines ignored — the definition in the shared algorithms doc.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use citriage_patterns::extract::{clean, extract_log, ExtractConfig};
use citriage_patterns::lines::lines;

fn ground_truth(path: &Path, n: usize) -> (BTreeSet<usize>, BTreeSet<usize>) {
    let (mut e, mut c) = (BTreeSet::new(), BTreeSet::new());
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for row in text.lines().skip(1) {
        let row = row.trim();
        let Some((kind, spec)) = row.split_once(char::is_whitespace) else {
            continue;
        };
        for part in spec.replace(' ', "").split(',') {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.parse().unwrap_or(0), b.parse().unwrap_or(0)),
                None => {
                    let v: usize = part.parse().unwrap_or(0);
                    (v, v)
                }
            };
            for l in a.max(1)..=b.min(n) {
                if kind.eq_ignore_ascii_case("E") {
                    e.insert(l);
                } else {
                    c.insert(l);
                }
            }
        }
    }
    let c = c.difference(&e).copied().collect();
    (e, c)
}

fn f1(pred: &BTreeSet<usize>, gold: &BTreeSet<usize>) -> f64 {
    if pred.is_empty() {
        return 0.0;
    }
    let tp = pred.intersection(gold).count() as f64;
    let p = tp / pred.len() as f64;
    let r = if gold.is_empty() { 0.0 } else { tp / gold.len() as f64 };
    if p + r == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    }
}

#[test]
fn cidiff_macro_f1() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/buildlogs/cidiff/data/breakages");
    let Ok(rd) = std::fs::read_dir(&root) else {
        eprintln!("skipping: CiDiff data not found at {}", root.display());
        return;
    };
    let mut cases: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.join("groundtruth").exists()).collect();
    cases.sort();
    let cfg = ExtractConfig::default();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for case in &cases {
        let fail = std::fs::read(case.join("fail.log")).expect("fail.log");
        let pass = std::fs::read(case.join("pass.log")).expect("pass.log");
        let n = lines(&fail).count();
        let blank: BTreeSet<usize> =
            lines(&fail).filter(|l| clean(l.bytes(&fail), 4096).trim().is_empty()).map(|l| l.number).collect();
        let (e, c) = ground_truth(&case.join("groundtruth"), n);
        let keep = |s: &BTreeSet<usize>| -> BTreeSet<usize> {
            s.iter().filter(|l| !blank.contains(l) && !c.contains(l)).copied().collect()
        };
        let gold = keep(&e);
        for (use_pass, out) in [(true, &mut with), (false, &mut without)] {
            let r = extract_log(&fail, use_pass.then_some(&pass[..]), "fail.log", &cfg);
            let pred = keep(&r.lines.iter().copied().collect());
            out.push(f1(&pred, &gold));
        }
    }
    assert!(cases.len() >= 30);
    let avg = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (w, wo) = (avg(&with), avg(&without));
    eprintln!("CiDiff macro F1: with passing log {w:.3}, failed log only {wo:.3}");
    assert!(w >= 0.75, "with passing log {w:.3}");
    assert!(wo >= 0.55, "failed log only {wo:.3}");
}
