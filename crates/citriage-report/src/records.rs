//! The triage records' part of a report: the status banner's sentences and the rows of
//! Tier 0 ("done"), from a [`Digest`]. Failed fixes come first (the loudest news),
//! then fixes confirmed since the report before, then fixes merged and awaiting
//! confirmation with the runs still needed. CI text is escaped for Markdown cells.

use citriage_analysis::resolution::digest::{name, Digest, RecordSummary};
use citriage_model::escape::md_cell;
use citriage_model::time::utc;

/// The banner as one Markdown line (`None` when the records have no news).
pub fn banner_markdown(d: &Digest) -> Option<String> {
    let lines = d.banner();
    (!lines.is_empty()).then(|| md_cell(&lines.join(" ")))
}

fn fix_of(r: &RecordSummary) -> String {
    match &r.fix {
        Some(f) => format!("fix {} merged {}", f.reference, utc(f.merged_at)),
        None => "no merged fix linked".to_string(),
    }
}

/// Tier 0's rows: (item, status) cells, escaped, in the order shown.
pub fn tier0_rows(d: &Digest) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for r in &d.failed_after_fix {
        rows.push((
            md_cell(&format!("{} ({}) — {}", name(r), r.subject, fix_of(r))),
            md_cell(&format!("🔴 FAILED AFTER FIX {}: {}", utc(r.since), r.reason)),
        ));
    }
    for r in &d.confirmed {
        rows.push((
            md_cell(&format!("{} ({}) — {}", name(r), r.subject, fix_of(r))),
            md_cell(&format!("✅ FIX CONFIRMED {}: {}", utc(r.since), r.reason)),
        ));
    }
    for r in &d.awaiting {
        let plan = r
            .confirmation
            .as_ref()
            .map(|c| format!("chance of luck so far {:.1}%; {}", c.chance * 100.0, c.plan))
            .unwrap_or_else(|| "no affected job to confirm it with".to_string());
        rows.push((
            md_cell(&format!("{} ({}) — {}", name(r), r.subject, fix_of(r))),
            md_cell(&format!("⏳ MERGED, awaiting confirmation: {plan}")),
        ));
    }
    rows
}

/// Tier 0 as a Markdown table body (`| 0.N | item | status |` lines).
pub fn tier0_markdown(d: &Digest) -> String {
    tier0_rows(d)
        .iter()
        .enumerate()
        .map(|(i, (item, status))| format!("| 0.{} | {item} | {status} |\n", i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use citriage_analysis::resolution::digest::digest;
    use citriage_analysis::resolution::{Containment, Fix, State};

    fn rec(subject: &str, state: State, since: i64, title: &str) -> RecordSummary {
        RecordSummary {
            subject: subject.into(),
            title: title.into(),
            state,
            since,
            reason: "because | of *this*".into(),
            evidence: Vec::new(),
            links: Vec::new(),
            fix: Some(Fix {
                reference: "o/r#5".into(),
                merged_at: 100,
                effective: 100,
                commit: None,
                base: Some("master".into()),
                containment: Containment::Time,
            }),
            confirmation: None,
        }
    }

    #[test]
    fn failed_fixes_lead_tier_0_and_ci_text_is_escaped() {
        let d = digest(
            &[
                rec("pattern:p/a", State::FixConfirmed, 300, "rollover"),
                rec("pattern:p/b", State::FailedAfterFix, 200, "back-off | <b>"),
                rec("pattern:p/c", State::FixMerged, 150, ""),
            ],
            None,
            1_000,
        );
        let rows = tier0_rows(&d);
        assert_eq!(rows.len(), 3);
        assert!(rows[0].1.starts_with("🔴 FAILED AFTER FIX"), "{rows:?}");
        assert!(rows[1].1.starts_with("✅ FIX CONFIRMED"), "{rows:?}");
        assert!(rows[2].1.starts_with("⏳ MERGED"), "{rows:?}");
        assert!(!rows[0].0.contains(" | "), "a pipe in CI text would split the cell: {}", rows[0].0);
        let table = tier0_markdown(&d);
        assert_eq!(table.lines().count(), 3);
        assert!(table.starts_with("| 0.1 | "), "{table}");
        let banner = banner_markdown(&d).unwrap();
        assert!(banner.contains("FAILED AFTER FIX"), "{banner}");
        assert!(banner_markdown(&digest(&[], None, 0)).is_none());
    }
}
