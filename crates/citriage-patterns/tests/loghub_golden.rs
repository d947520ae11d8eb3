//! Template mining accuracy on Loghub-2k with the one global configuration (read from the
//! shared reference directory next to the checkout; skipped when absent).

use std::collections::HashMap;
use std::path::PathBuf;

use citriage_patterns::drain::{Drain, DrainConfig};

/// Minimal CSV reader: quoted fields, doubled quotes.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut q = false;
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if q {
            if c == '"' {
                if it.peek() == Some(&'"') {
                    field.push('"');
                    it.next();
                } else {
                    q = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => q = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// Grouping accuracy: lines of a true group count when exactly that group was predicted.
fn grouping_accuracy(truth: &[String], pred: &[u32]) -> f64 {
    let mut tg: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut pg: HashMap<u32, usize> = HashMap::new();
    for (i, (t, p)) in truth.iter().zip(pred).enumerate() {
        tg.entry(t).or_default().push(i);
        *pg.entry(*p).or_default() += 1;
    }
    let mut ok = 0usize;
    for idx in tg.values() {
        let p = pred[idx[0]];
        if idx.iter().all(|&i| pred[i] == p) && pg[&p] == idx.len() {
            ok += idx.len();
        }
    }
    ok as f64 / truth.len() as f64
}

#[test]
fn loghub_grouping_accuracy_with_one_config() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/loghub2k");
    let Ok(rd) = std::fs::read_dir(&data) else {
        eprintln!("skipping: Loghub data not found at {}", data.display());
        return;
    };
    let mut systems: Vec<String> =
        rd.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    systems.sort();
    let mut gas = Vec::new();
    for s in &systems {
        let p = data.join(s).join(format!("{s}_2k.log_structured.csv"));
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        let rows = parse_csv(&text);
        let h = &rows[0];
        let ci = h.iter().position(|x| x == "Content").expect("Content");
        let ti = h.iter().position(|x| x == "EventTemplate").expect("EventTemplate");
        let mut d = Drain::new(DrainConfig::default());
        let mut truth = Vec::new();
        let mut pred = Vec::new();
        for r in &rows[1..] {
            if r.len() <= ci.max(ti) {
                continue;
            }
            pred.push(d.add(&r[ci]));
            truth.push(r[ti].clone());
        }
        let ga = grouping_accuracy(&truth, &pred);
        eprintln!("{s}: GA {ga:.3}");
        gas.push(ga);
    }
    assert!(!gas.is_empty());
    let avg = gas.iter().sum::<f64>() / gas.len() as f64;
    eprintln!("average GA {avg:.3}");
    assert!(avg >= 0.95, "average GA {avg:.3}");
}
