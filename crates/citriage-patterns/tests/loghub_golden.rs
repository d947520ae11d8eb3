//! Template mining accuracy on Loghub-2k, leave-one-system-out: every setting is chosen on
//! the other systems and scored on the held-out one (read from the shared reference
//! directory next to the checkout; skipped with a reason when absent).

use std::path::PathBuf;

use citriage_patterns::drain::DrainConfig;
use citriage_patterns::mining_eval::{grid, leave_one_system_out, parse_structured_csv, Labeled};

fn systems() -> Option<Vec<Labeled>> {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/loghub2k");
    let Ok(rd) = std::fs::read_dir(&data) else {
        eprintln!("skipping: Loghub data not found at {}", data.display());
        return None;
    };
    let mut names: Vec<String> =
        rd.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let mut out = Vec::new();
    for s in names {
        let p = data.join(&s).join(format!("{s}_2k.log_structured.csv"));
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        let (content, truth) = parse_structured_csv(&text).expect("valid CSV");
        out.push(Labeled { system: s, content, truth });
    }
    if out.is_empty() {
        eprintln!("skipping: no <S>_2k.log_structured.csv under {}", data.display());
        return None;
    }
    Some(out)
}

#[test]
fn leave_one_system_out_grouping_accuracy() {
    let Some(systems) = systems() else { return };
    let l = leave_one_system_out(&systems, &grid(), |_| {});
    for f in &l.folds {
        eprintln!("{}: held-out GA {:.3} (held-in {:.3}) with {:?}", f.system, f.held_out.ga, f.held_in_ga, f.chosen);
    }
    eprintln!("average held-out GA {:.3}", l.mean_ga);
    assert!(l.mean_ga >= 0.90, "leave-one-system-out GA {:.3}", l.mean_ga);
    assert_eq!(l.chosen_on_all, DrainConfig::default(), "the default is the setting chosen on all systems");
}
