//! The runbook's Phase 5 sweep: the live (or cached) state of every PR/issue a report
//! cites, one row each, with the runbook's marks — ✅ MERGED with its date, 🟢 OPEN and
//! mergeable, 🟡 OPEN and blocked (with what blocks it), ❌ CLOSED unmerged (needs a
//! re-do), ⚪ no fix PR — plus rows for issues (with the fix PRs found on their
//! timelines) and for references that could not be checked, with the reason. Rendered
//! as a Markdown table or JSON; rows are sorted by reference.

use crate::refs::{FoundRef, RefTarget};
use crate::state::IssueRef;
use crate::state::{IssueStatus, PrStatus, ReadInfo, RefResolver, RefState};
use citriage_model::escape::md_cell as cell;
use citriage_model::time::{age, utc};
use serde::{Deserialize, Serialize};

/// The Phase 5 classification of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mark {
    /// ✅ merged.
    Merged,
    /// 🟢 open, nothing blocking.
    OpenMergeable,
    /// 🟡 open, blocked.
    OpenBlocked,
    /// ❌ closed without merging: needs a re-do.
    ClosedUnmerged,
    /// ⚪ an issue with no cross-referenced fix PR.
    NoFixPr,
    /// 📌 an issue (its fix PRs, if any, follow as their own rows).
    Issue,
    /// ❓ the number does not exist.
    NotFound,
    /// ❔ not checked (offline, error, ambiguous).
    NotChecked,
}

impl Mark {
    /// The symbol the table shows.
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Merged => "✅",
            Mark::OpenMergeable => "🟢",
            Mark::OpenBlocked => "🟡",
            Mark::ClosedUnmerged => "❌",
            Mark::NoFixPr => "⚪",
            Mark::Issue => "📌",
            Mark::NotFound => "❓",
            Mark::NotChecked => "❔",
        }
    }
}

/// One row of the sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepRow {
    pub reference: IssueRef,
    /// `pr`, `issue` or `unknown`.
    pub kind: String,
    pub mark: Mark,
    /// `MERGED 2026-05-10T18:09:46Z`, `OPEN`, `CLOSED unmerged — needs re-do`, ...
    pub state: String,
    /// What blocks an open PR (labels, `draft`, `missing lgtm`, `merge conflict`).
    pub block: Vec<String>,
    pub title: String,
    pub labels: Vec<String>,
    pub url: String,
    /// For fix-PR rows: the issue whose timeline named them.
    pub via: Option<IssueRef>,
    /// When and how the answer was read.
    pub read: Option<ReadInfo>,
}

/// Sweep settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepOptions {
    /// Walk each issue's timeline for cross-referenced fix PRs (one extra request per
    /// issue plus one per PR found).
    pub walk_timelines: bool,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions { walk_timelines: true }
    }
}

/// A row from a resolved state.
pub fn row_for(state: &RefState, via: Option<&IssueRef>) -> SweepRow {
    let reference = state.reference().clone();
    let mut row = SweepRow {
        url: reference.html_url(),
        reference,
        kind: "unknown".into(),
        mark: Mark::NotChecked,
        state: String::new(),
        block: Vec::new(),
        title: String::new(),
        labels: Vec::new(),
        via: via.cloned(),
        read: state.read().cloned(),
    };
    match state {
        RefState::Pr(p) => {
            row.kind = "pr".into();
            row.title = p.title.clone();
            row.labels = p.labels.clone();
            row.url = p.url.clone();
            match &p.status {
                PrStatus::Merged { at } => {
                    row.mark = Mark::Merged;
                    row.state = format!("MERGED {at}");
                }
                PrStatus::Open { draft, mergeable, blocking_labels } => {
                    row.block = blocking_labels.clone();
                    if blocking_labels.is_empty() {
                        row.mark = Mark::OpenMergeable;
                        row.state = match mergeable {
                            Some(true) => "OPEN, mergeable".into(),
                            _ => "OPEN, nothing blocking (mergeability not computed)".into(),
                        };
                    } else {
                        row.mark = Mark::OpenBlocked;
                        row.state = if *draft { "OPEN (draft), blocked".into() } else { "OPEN, blocked".into() };
                    }
                }
                PrStatus::ClosedUnmerged { closed_at } => {
                    row.mark = Mark::ClosedUnmerged;
                    row.state = match closed_at {
                        Some(at) => format!("CLOSED unmerged {at} — needs re-do"),
                        None => "CLOSED unmerged — needs re-do".into(),
                    };
                }
                PrStatus::NotFound => {
                    row.mark = Mark::NotFound;
                    row.state = "does not exist (404)".into();
                }
                PrStatus::Unknown { why } => {
                    row.state = format!("not checked: {why}");
                }
            }
        }
        RefState::Issue(i) => {
            row.kind = "issue".into();
            row.title = i.title.clone();
            row.labels = i.labels.clone();
            row.url = i.url.clone();
            row.mark = match i.status {
                IssueStatus::Unknown { .. } => Mark::NotChecked,
                IssueStatus::NotFound => Mark::NotFound,
                _ => Mark::Issue,
            };
            row.state = format!("issue {}", i.state_text());
        }
        RefState::NotFound { .. } => {
            row.mark = Mark::NotFound;
            row.state = "does not exist (404)".into();
        }
        RefState::Unknown { why, .. } => {
            row.state = format!("not checked: {why}");
        }
    }
    row
}

/// Sweeps references: one row per distinct reference (sorted), and for issues, one row
/// per cross-referenced PR (marked with `via`) or a ⚪ "no fix PR" note.
pub fn sweep(resolver: &dyn RefResolver, refs: &[IssueRef], opts: SweepOptions) -> Vec<SweepRow> {
    sweep_with_evidence(resolver, refs, opts).0
}

/// [`sweep`], with the evidence items of every answer it read (the references and
/// the fix PRs found on timelines), so a caller records them without asking again:
/// each distinct reference is looked up once.
pub fn sweep_with_evidence(
    resolver: &dyn RefResolver,
    refs: &[IssueRef],
    opts: SweepOptions,
) -> (Vec<SweepRow>, Vec<citriage_model::Evidence>) {
    let mut refs: Vec<IssueRef> = refs.to_vec();
    refs.sort();
    refs.dedup();
    let mut rows = Vec::new();
    let mut evidence = Vec::new();
    for r in &refs {
        let state = resolver.resolve(r);
        evidence.extend(state.evidence());
        let mut row = row_for(&state, None);
        let is_issue = matches!(state, RefState::Issue(_));
        if is_issue && opts.walk_timelines {
            match resolver.cross_referenced_prs(r) {
                Some(Ok(prs)) if prs.is_empty() => {
                    row.mark = Mark::NoFixPr;
                    row.block.push("no cross-referenced fix PR on the timeline".into());
                    rows.push(row);
                }
                Some(Ok(prs)) => {
                    rows.push(row);
                    evidence.extend(prs.iter().filter_map(RefState::evidence));
                    let mut fix: Vec<SweepRow> = prs.iter().map(|p| row_for(p, Some(r))).collect();
                    fix.sort_by(|a, b| a.reference.cmp(&b.reference));
                    rows.extend(fix);
                }
                Some(Err(why)) => {
                    row.block.push(format!("timeline not walked: {why}"));
                    rows.push(row);
                }
                None => rows.push(row),
            }
        } else {
            rows.push(row);
        }
    }
    (rows, evidence)
}

/// Counts per mark, in mark order.
pub fn mark_counts(rows: &[SweepRow]) -> Vec<(Mark, usize)> {
    let mut m: std::collections::BTreeMap<Mark, usize> = std::collections::BTreeMap::new();
    for r in rows {
        *m.entry(r.mark).or_default() += 1;
    }
    m.into_iter().collect()
}

/// The Phase 5 table in Markdown. `now` (Unix seconds) dates cached answers' ages.
pub fn render_sweep_markdown(rows: &[SweepRow], now: i64) -> String {
    let mut s = String::new();
    s.push_str("| Ref | Kind | Mark | State | Block | Title | As of |\n|---|---|---|---|---|---|---|\n");
    for r in rows {
        let reference = match &r.via {
            Some(v) => format!("↳ [{}]({}) (via {v})", r.reference, r.url),
            None => format!("[{}]({})", r.reference, r.url),
        };
        let asof = match &r.read {
            Some(read) => read.describe(now),
            None => "not read".into(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            reference,
            r.kind,
            r.mark.symbol(),
            cell(&r.state),
            cell(&if r.block.is_empty() { "—".to_string() } else { r.block.join(", ") }),
            cell(&r.title),
            cell(&asof)
        ));
    }
    let counts: Vec<String> = mark_counts(rows).iter().map(|(m, n)| format!("{} {n}", m.symbol())).collect();
    let oldest = rows.iter().filter_map(|r| r.read.as_ref().and_then(|x| x.read_at)).min();
    s.push_str(&format!("\n{} reference(s): {}.", rows.len(), counts.join(", ")));
    if let Some(t) = oldest {
        s.push_str(&format!(" Oldest answer read {} ({} before this rendering).", utc(t), age(now - t)));
    }
    s.push('\n');
    s
}

/// References whose repository could not be determined, one line each (`line N:
/// raw — why`), so a sweep over a report says what it left out.
pub fn render_ambiguous(found: &[FoundRef]) -> String {
    let mut s = String::new();
    for f in found {
        if let RefTarget::Ambiguous { why, .. } = &f.target {
            s.push_str(&format!("- line {}: `{}` not checked — {why}\n", f.line, f.raw.replace('`', "'")));
        }
    }
    s
}

/// JSON rows with each answer's age at `now`.
pub fn render_sweep_json(rows: &[SweepRow], now: i64) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or(serde_json::Value::Null);
            if let Some(obj) = v.as_object_mut() {
                obj.insert("symbol".into(), r.mark.symbol().into());
                obj.insert("reference_text".into(), r.reference.to_string().into());
                obj.insert(
                    "age_seconds".into(),
                    r.read.as_ref().and_then(|x| x.age(now)).map(serde_json::Value::from).unwrap_or_default(),
                );
            }
            v
        })
        .collect();
    serde_json::json!({ "format": "citriage-sweep/1", "rows": rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Answered, IssueState, PrState, RepoRef, StaticResolver};

    fn read() -> ReadInfo {
        ReadInfo {
            read_at: Some(1_778_436_586),
            answered: Answered::Cache,
            api_url: "u".into(),
            body_sha256: "00".into(),
        }
    }

    fn pr(n: u64, status: PrStatus) -> RefState {
        RefState::Pr(PrState {
            status,
            title: format!("pr {n}"),
            read: read(),
            ..PrState::unknown(IssueRef::new(RepoRef::new("o", "r"), n), "", "u")
        })
    }

    #[test]
    fn marks_and_rendering() {
        let issue = IssueRef::new(RepoRef::new("o", "r"), 9);
        let mut res = StaticResolver::new("offline: no cached answer")
            .with(pr(1, PrStatus::Merged { at: "2026-05-10T18:09:46Z".into() }))
            .with(pr(2, PrStatus::ClosedUnmerged { closed_at: None }))
            .with(pr(3, PrStatus::Open { draft: false, mergeable: Some(true), blocking_labels: vec![] }))
            .with(pr(4, PrStatus::Open { draft: true, mergeable: None, blocking_labels: vec!["draft".into()] }))
            .with(RefState::Issue(IssueState {
                reference: issue.clone(),
                is_pr: false,
                status: IssueStatus::Open,
                title: "umbrella".into(),
                labels: vec![],
                url: issue.html_url(),
                pr_merged_at: None,
                pr_draft: None,
                created_at: None,
                updated_at: None,
                read: read(),
            }));
        res.timelines.insert(issue.clone(), vec![]);
        let refs: Vec<IssueRef> =
            [9u64, 4, 3, 2, 1, 5, 1].iter().map(|n| IssueRef::new(RepoRef::new("o", "r"), *n)).collect();
        let rows = sweep(&res, &refs, SweepOptions::default());
        let marks: Vec<Mark> = rows.iter().map(|r| r.mark).collect();
        assert_eq!(
            marks,
            vec![
                Mark::Merged,
                Mark::ClosedUnmerged,
                Mark::OpenMergeable,
                Mark::OpenBlocked,
                Mark::NotChecked,
                Mark::NoFixPr
            ]
        );
        let md = render_sweep_markdown(&rows, 1_778_436_586 + 7200);
        assert!(md.contains("| ✅ | MERGED 2026-05-10T18:09:46Z |"), "{md}");
        assert!(md.contains("cached, 2h 0m old"));
        assert!(md.contains("not checked: offline"));
        let found = crate::refs::extract_refs("see umc#150\nand o/r#1", &crate::refs::RefContext::kubernetes());
        assert_eq!(
            render_ambiguous(&found),
            "- line 1: `umc#150` not checked — `umc` is not a known repository (write owner/repo#N or add an alias)\n"
        );
        let js = render_sweep_json(&rows, 1_778_436_586 + 10);
        assert_eq!(js["rows"][0]["age_seconds"], 10);
        assert_eq!(js["rows"][5]["symbol"], "⚪");
    }
    #[test]
    fn hostile_titles_stay_in_their_cell() {
        let mut hostile = pr(7, PrStatus::Merged { at: "2026-05-10T18:09:46Z".into() });
        if let RefState::Pr(p) = &mut hostile {
            p.title = "fix | <img src=x onerror=alert(1)>\n# owned\u{1b}[2J".into();
        }
        let res = StaticResolver::new("offline").with(hostile);
        let rows = sweep(&res, &[IssueRef::new(RepoRef::new("o", "r"), 7)], SweepOptions::default());
        let md = render_sweep_markdown(&rows, 1_778_436_586);
        let line = md.lines().find(|l| l.contains("fix")).expect("the row");
        // Before, only `|` and the line break were escaped: the tag and the escape
        // sequence reached the file raw.
        assert!(line.contains("fix \\| \\<img src=x onerror=alert(1)\\> # owned\\\\u{1b}[2J"), "{line}");
        assert!(!md.contains('\u{1b}'));
    }
}
