//! How results several commands print look: the summary of a triage (`triage`, `demo`).

use crate::context::{print_json, Context, Format};
use crate::outln;
use citriage_analysis::Triage;
use serde_json::json;

/// Prints the summary of a triage and the files written (text or JSON).
pub fn triage_summary(ctx: &Context, t: &Triage, files: &[String]) {
    if ctx.format == Format::Json {
        print_json(&json!({
            "dataset": t.snapshot.dataset,
            "date": t.snapshot.date,
            "source": t.snapshot.source,
            "jobs": t.job_count,
            "categories": t.categorized.categories.len(),
            "selected": t.selection.picks,
            "misclassifications": t.misclassifications.iter().map(|f| json!({"kind": f.kind, "subject": f.subject, "jobs": f.jobs.len()})).collect::<Vec<_>>(),
            "drift": t.drift.as_ref().map(|d| json!({"prior": d.prior_date, "added": d.added.len(), "removed": d.removed.len(), "reappeared": d.reappeared.len(), "integrity_violations": d.integrity.as_ref().map(|i| i.violations.len())})),
            "files": files,
        }));
        return;
    }
    outln!(
        "{} snapshot of {}: {} jobs in {} categories",
        t.snapshot.dataset.title(),
        t.snapshot.date,
        t.job_count,
        t.categorized.categories.len()
    );
    outln!("Selected {} clusters:", t.selection.picks.len());
    for (i, p) in t.selection.picks.iter().enumerate() {
        outln!(
            "  {:>2}. {:<28} {:>5} jobs  score {:>6.3}  {}",
            i + 1,
            p.category,
            p.count,
            p.score,
            p.reasons.first().map(String::as_str).unwrap_or("")
        );
    }
    outln!("Misclassifications: {}", t.misclassifications.len());
    for f in &t.misclassifications {
        outln!("  - {}: {} ({} jobs)", f.kind.title(), f.subject, f.jobs.len());
    }
    match &t.drift {
        Some(d) => outln!(
            "Drift since {}: {} added, {} removed, {} reappeared{}",
            d.prior_date,
            d.added.len(),
            d.removed.len(),
            d.reappeared.len(),
            d.integrity
                .as_ref()
                .map(|i| format!(", {} integrity violation(s)", i.violations.len()))
                .unwrap_or_default()
        ),
        None => outln!("Drift: no prior snapshot"),
    }
    outln!("Wrote:");
    for f in files {
        outln!("  {f}");
    }
}
