//! Renders a snapshot triage as the runbook's artifacts: `report.md` (the Appendix B
//! skeleton filled with what the snapshot supports), its JSON twin, and the data files
//! `categorized.json`, `by-category.txt`, `top30.txt`, `top-flaky-tests.txt`,
//! `top-tests-by-lane.txt` and the drift file. Pure: returns file names and contents;
//! the caller writes them. Output is byte-identical for identical inputs. [`html`]
//! renders Markdown reports as HTML (the dashboard's report pages and `report.html`).

mod artifacts;
pub mod html;
mod markdown;
pub mod records;

pub use artifacts::{render_all, Artifact};
pub use markdown::{pattern_letter, render_markdown};

use citriage_analysis::Triage;
use citriage_model::Evidence;
use std::collections::BTreeMap;

/// Collects the evidence cited while rendering, so the report's appendix and JSON list
/// exactly what the text references.
#[derive(Default)]
pub struct Cited {
    items: BTreeMap<String, Evidence>,
}

impl Cited {
    /// Records an evidence item and returns its id.
    pub fn cite(&mut self, e: Evidence) -> String {
        let id = e.id.clone();
        self.items.entry(id.clone()).or_insert(e);
        id
    }

    /// The cited items, sorted by id.
    pub fn into_vec(self) -> Vec<Evidence> {
        self.items.into_values().collect()
    }
}

/// Short display of a triage's dataset-specific figure for a job.
pub fn figure(stats: &citriage_model::JobStats) -> String {
    match stats {
        citriage_model::JobStats::Failures { failing_days } => format!("{failing_days}"),
        citriage_model::JobStats::Flakes(f) => format!("{:.3}", f.consistency),
    }
}

/// The triage plus the evidence its report cites, as written to `report.json`.
#[derive(serde::Serialize)]
pub struct ReportJson<'a> {
    pub format: &'static str,
    pub triage: &'a Triage,
    pub evidence: &'a [Evidence],
}
