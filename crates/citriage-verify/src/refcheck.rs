//! Checking what a report says about PRs and issues against their state: merged,
//! closed, open, draft, labels, "ready to merge", PR versus issue. The state is judged
//! as of the report's date: a claim is true when the claimed state held at some
//! instant of that day (widened by ±14 hours for time zones), from the merge and close
//! times, and from the timeline (label, draft, close and reopen events) when the
//! current state alone cannot say. A report without a date is judged against the
//! state as read. What cannot be established is "unchecked", never false.

use crate::claims::{line_claims, Claimed, LineContext, StateClaim};
use crate::outcome::{ClaimRecord, Ctx, Verdict};
use crate::prose::Modality;
use crate::report::Report;
use citriage_github::{
    replay_timeline, FoundRef, IssueRef, IssueStatus, PrStatus, RefResolver, RefState, TimelineEvent,
};
use citriage_model::time::parse_rfc3339;
use citriage_model::{Day, Evidence};
use std::collections::BTreeMap;

/// The instants a report's claims describe: its date's day, widened for time zones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub end: i64,
    pub day: Day,
}

impl Window {
    /// The day ±14 hours (the widest time-zone offsets).
    pub fn of_day(day: Day) -> Window {
        use citriage_model::time::{DAY, HOUR};
        let s = day.start_seconds();
        Window { start: s - 14 * HOUR, end: s + DAY + 14 * HOUR, day }
    }
}

/// Outcome of one claim about one reference.
enum Outcome {
    True(String),
    False(String),
    Unknown(String),
}

/// What is known about a reference's history.
struct History {
    pr: bool,
    created: Option<i64>,
    merged: Option<i64>,
    /// Close time of a closed (unmerged) object.
    closed: Option<i64>,
    /// `open`, `closed`, `merged` as read.
    now_state: &'static str,
    draft_now: bool,
    labels_now: Vec<String>,
    updated: Option<i64>,
    read_at: Option<i64>,
    title: String,
    mergeable_now: Option<bool>,
}

fn ts(s: &Option<String>) -> Option<i64> {
    s.as_deref().and_then(parse_rfc3339)
}

fn history(st: &RefState) -> Option<History> {
    match st {
        RefState::Pr(p) => {
            let (now_state, merged, closed, draft, mergeable) = match &p.status {
                PrStatus::Merged { at } => ("merged", parse_rfc3339(at), None, false, None),
                PrStatus::Open { draft, mergeable, .. } => ("open", None, None, *draft, *mergeable),
                PrStatus::ClosedUnmerged { closed_at } => ("closed", None, ts(closed_at), false, None),
                _ => return None,
            };
            Some(History {
                pr: true,
                created: ts(&p.created_at),
                merged,
                closed,
                now_state,
                draft_now: draft,
                labels_now: p.labels.clone(),
                updated: ts(&p.updated_at),
                read_at: p.read.read_at,
                title: p.title.clone(),
                mergeable_now: mergeable,
            })
        }
        RefState::Issue(i) => {
            let (now_state, closed) = match &i.status {
                IssueStatus::Open => ("open", None),
                IssueStatus::Closed { at, .. } => ("closed", ts(at)),
                _ => return None,
            };
            Some(History {
                pr: false,
                created: ts(&i.created_at),
                merged: None,
                closed,
                now_state,
                draft_now: false,
                labels_now: i.labels.clone(),
                updated: ts(&i.updated_at),
                read_at: i.read.read_at,
                title: i.title.clone(),
                mergeable_now: None,
            })
        }
        _ => None,
    }
}

/// The state of an object at one instant: (`open`/`closed`/`merged`, labels, draft),
/// each `None` when unknown.
struct At {
    state: Option<&'static str>,
    labels: Option<Vec<String>>,
    draft: Option<bool>,
    /// The instant is the read itself (mergeability is known only then).
    current: bool,
}

fn state_from_times(h: &History, t: i64) -> Option<&'static str> {
    if h.created.is_some_and(|c| c > t) {
        return None;
    }
    if h.merged.is_some_and(|m| m <= t) {
        return Some("merged");
    }
    if h.now_state == "merged" {
        return Some("open");
    }
    match (h.now_state, h.closed) {
        ("closed", Some(c)) if c <= t => Some("closed"),
        ("closed", Some(_)) => Some("open"),
        ("closed", None) => None,
        _ => Some("open"),
    }
}

fn at(h: &History, t: i64, events: Option<&[TimelineEvent]>) -> At {
    if let Some(ev) = events {
        let r = replay_timeline(ev, t, false);
        let state = match r.state.as_str() {
            "merged" => "merged",
            "closed" => "closed",
            _ => "open",
        };
        // The timeline does not say whether a PR was opened as a draft: the first
        // draft event settles it, else the current flag holds throughout.
        let opened_as_draft = ev
            .iter()
            .find(|e| e.event == "convert_to_draft" || e.event == "ready_for_review")
            .map(|e| e.event == "ready_for_review")
            .unwrap_or(h.draft_now);
        let draft = replay_timeline(ev, t, opened_as_draft).draft;
        return At {
            state: if h.created.is_some_and(|c| c > t) { None } else { Some(state) },
            labels: Some(r.labels),
            draft: Some(draft),
            current: h.read_at.is_some_and(|r| t >= r),
        };
    }
    let unchanged_since = h.updated.or(h.read_at).is_some_and(|u| u <= t);
    let is_now = h.read_at.is_some_and(|r| t >= r);
    let current_valid = unchanged_since || is_now;
    At {
        state: state_from_times(h, t),
        labels: current_valid.then(|| h.labels_now.clone()),
        draft: if current_valid { Some(h.draft_now) } else { None },
        current: is_now,
    }
}

/// Whether a label is among `labels`: by its full name, by its last part
/// (`cherry-pick-not-approved` for `do-not-merge/cherry-pick-not-approved`), or any of
/// a family (`do-not-merge/*`).
fn has_label(labels: &[String], name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    labels.iter().any(|l| {
        let l = l.to_ascii_lowercase();
        match name.strip_suffix('*') {
            Some(prefix) => l.starts_with(prefix),
            None => l == name || l.rsplit_once('/').is_some_and(|(_, last)| last == name),
        }
    })
}

/// Whether the claim holds at one instant (`None`: cannot tell).
fn holds(c: &StateClaim, h: &History, a: &At) -> Option<bool> {
    let state = a.state;
    let r = match &c.claimed {
        Claimed::Merged => Some(state? == "merged"),
        Claimed::Done => Some(if h.pr { state? == "merged" } else { state? == "closed" }),
        Claimed::Closed { strict } => match state? {
            "closed" => Some(true),
            "merged" if !strict => None,
            _ => Some(false),
        },
        Claimed::Open => Some(state? == "open"),
        Claimed::Draft => {
            if !h.pr {
                Some(false)
            } else {
                Some(state? == "open" && a.draft?)
            }
        }
        Claimed::Wip => {
            let title = h.title.trim_start().to_ascii_lowercase();
            if title.starts_with("wip") || title.starts_with("[wip]") {
                Some(true)
            } else {
                let labels = a.labels.as_ref()?;
                Some(a.draft == Some(true) || has_label(labels, "do-not-merge/work-in-progress"))
            }
        }
        Claimed::Label { name, present } => {
            let labels = a.labels.as_ref()?;
            Some(has_label(labels, name) == *present)
        }
        Claimed::Ready => {
            if !h.pr {
                return Some(false);
            }
            let labels = a.labels.as_ref()?;
            let blocked = labels.iter().any(|l| {
                let l = l.to_ascii_lowercase();
                l.starts_with("do-not-merge") || l == "needs-rebase" || l == "needs-ok-to-test"
            });
            Some(
                state? == "open"
                    && has_label(labels, "lgtm")
                    && has_label(labels, "approved")
                    && !blocked
                    && a.draft != Some(true),
            )
        }
        Claimed::Mergeable { mergeable } => {
            if !h.pr {
                return Some(false);
            }
            if state? != "open" || !a.current {
                return None;
            }
            h.mergeable_now.map(|m| m == *mergeable)
        }
        Claimed::Kind { pr } => Some(h.pr == *pr),
    };
    r.map(|b| if c.negated { !b } else { b })
}

/// The candidate instants of a claim.
fn instants(c: &StateClaim, h: &History, w: Option<Window>, events: Option<&[TimelineEvent]>) -> Vec<i64> {
    let (start, end) = match w {
        Some(w) => (w.start, w.end),
        None => {
            let now = h.read_at.unwrap_or(i64::MAX / 4);
            (now, now)
        }
    };
    let from = if c.past { i64::MIN / 4 } else { start };
    let mut out = vec![start.max(from), end];
    let mut changes: Vec<i64> = [h.created, h.merged, h.closed].into_iter().flatten().collect();
    if let Some(ev) = events {
        changes.extend(ev.iter().filter_map(|e| e.at.as_deref().and_then(parse_rfc3339)));
    }
    out.extend(changes.into_iter().filter(|t| *t >= from && *t <= end));
    out.sort();
    out.dedup();
    out
}

fn describe_now(h: &History) -> String {
    let kind = if h.pr { "PR" } else { "issue" };
    let state = match h.now_state {
        "merged" => format!("MERGED {}", h.merged.map(citriage_model::time::utc).unwrap_or_default()),
        "closed" if h.pr => format!(
            "CLOSED without merging{}",
            h.closed.map(|c| format!(" {}", citriage_model::time::utc(c))).unwrap_or_default()
        ),
        "closed" => {
            format!("CLOSED{}", h.closed.map(|c| format!(" {}", citriage_model::time::utc(c))).unwrap_or_default())
        }
        _ if h.draft_now => "OPEN (draft)".into(),
        _ => "OPEN".into(),
    };
    let labels =
        if h.labels_now.is_empty() { "no labels".to_string() } else { format!("labels {}", h.labels_now.join(", ")) };
    format!("{kind} {state}, {labels}")
}

fn evaluate(c: &StateClaim, h: &History, w: Option<Window>, events: Option<&[TimelineEvent]>) -> Outcome {
    // A merged claim with a day: the day must match (±1 day for time zones).
    if matches!(c.claimed, Claimed::Merged | Claimed::Done) && !c.negated && h.pr {
        if let (Some(d), Some(m)) = (c.day.as_deref().and_then(Day::parse), h.merged) {
            let md = Day::from_unix_seconds(m);
            if (md.0 - d.0).abs() > 1 {
                return Outcome::False(format!("it merged on {md}, not {d}"));
            }
        }
    }
    if let Claimed::Kind { pr } = c.claimed {
        return if h.pr == pr {
            Outcome::True(String::new())
        } else if h.pr {
            Outcome::False("it is a pull request, not an issue".into())
        } else {
            Outcome::False("it is an issue, not a pull request".into())
        };
    }
    if !h.pr
        && matches!(c.claimed, Claimed::Merged | Claimed::Draft | Claimed::Ready | Claimed::Mergeable { .. })
        && !c.negated
    {
        return Outcome::False("it is an issue: issues are not merged, drafts or mergeable".into());
    }
    let mut unknown = false;
    let mut any_true = false;
    for t in instants(c, h, w, events) {
        match holds(c, h, &at(h, t, events)) {
            Some(true) => any_true = true,
            Some(false) => {}
            None => unknown = true,
        }
    }
    if any_true {
        Outcome::True(String::new())
    } else if unknown {
        Outcome::Unknown(match (&c.claimed, events.is_some()) {
            (Claimed::Closed { strict: false }, _) if h.now_state == "merged" => {
                "merged PRs are closed too: the sentence may mean either".into()
            }
            (Claimed::Mergeable { .. }, _) => "mergeability is known only for open PRs as read now".into(),
            (_, false) => "labels or draft state may have changed since the report's date (timeline not read)".into(),
            _ => "not determinable from the timeline".into(),
        })
    } else {
        Outcome::False(match w {
            Some(w) if events.is_some() || h.now_state != "open" => {
                format!("on the report's date ({}) it was not; as read it is {}", w.day, describe_now(h))
            }
            _ => format!("as read it is {}", describe_now(h)),
        })
    }
}

/// Which lines are table rows, with their header cells.
fn row_headers(report: &Report) -> BTreeMap<usize, Vec<String>> {
    let mut out = BTreeMap::new();
    for t in &report.tables {
        for r in &t.rows {
            out.insert(r.line, t.header.clone());
        }
    }
    out
}

/// Longest line whose state claims are read (bytes).
pub const MAX_CLAIM_LINE: usize = 20_000;

/// Every state claim of the report, with its line's references.
pub(crate) fn report_claims(report: &Report, refs: &[FoundRef]) -> Vec<(StateClaim, Vec<FoundRef>)> {
    let headers = row_headers(report);
    let rendered_rows = report.rendered_status_rows();
    let markdown = report.format == crate::report::ReportFormat::Markdown;
    let mut by_line: BTreeMap<usize, Vec<FoundRef>> = BTreeMap::new();
    for f in refs {
        by_line.entry(f.line).or_default().push(f.clone());
    }
    let mut out = Vec::new();
    for (line, found) in by_line {
        if report.fenced.contains(&line) {
            continue;
        }
        let text = report.line(line);
        // Claims are read sentence by sentence; a line this long is data, not prose.
        if text.len() > MAX_CLAIM_LINE {
            continue;
        }
        let spans: Vec<(usize, usize)> = found.iter().map(|f| f.span()).collect();
        // A link's text and its URL naming the same object count once.
        let ids = crate::claims::object_ids(text, &found);
        let cx = LineContext {
            line,
            text,
            refs: &spans,
            ids: &ids,
            markdown,
            header: headers.get(&line).map(|h| h.as_slice()),
            rendered_row: rendered_rows.contains(&line),
        };
        for c in line_claims(&cx) {
            out.push((c, found.clone()));
        }
    }
    out
}

/// Checks every asserted state claim; returns the claims for the TL;DR check.
pub(crate) fn check_state_claims(
    cx: &mut Ctx<'_>,
    refs: &[FoundRef],
    states: &BTreeMap<IssueRef, RefState>,
    resolver: &dyn RefResolver,
    window: Option<Window>,
) {
    let claims = report_claims(cx.report, refs);
    let long: Vec<usize> = (1..=cx.report.lines.len())
        .filter(|n| cx.report.line(*n).len() > MAX_CLAIM_LINE && refs.iter().any(|f| f.line == *n))
        .collect();
    for n in long {
        cx.skip(
            n,
            "claim",
            format!("line {n}"),
            format!("longer than {MAX_CLAIM_LINE} bytes: its state claims were not read"),
            Vec::new(),
        );
    }
    let mut timelines: BTreeMap<IssueRef, citriage_github::TimelineAnswer> = BTreeMap::new();
    let mut seen: std::collections::BTreeSet<(usize, String, String)> = Default::default();
    for (c, found) in claims {
        if c.modality != Modality::Asserted {
            continue;
        }
        let claim_text = c.claimed.describe(c.negated);
        // Each target: (shown, outcome, evidence).
        let mut results: Vec<(String, Outcome, Vec<Evidence>)> = Vec::new();
        for &t in &c.targets {
            let f = &found[t];
            let shown = f.raw.clone();
            let Some(r) = f.reference() else {
                results.push((shown, Outcome::Unknown("the repository of this #N is ambiguous".into()), Vec::new()));
                continue;
            };
            let Some(st) = states.get(r) else {
                results.push((shown, Outcome::Unknown("not resolved".into()), Vec::new()));
                continue;
            };
            let mut evidence: Vec<Evidence> = st.evidence().into_iter().collect();
            let Some(h) = history(st) else {
                let why = st.unknown_reason().unwrap_or("the state could not be read").to_string();
                let why =
                    if matches!(st, RefState::NotFound { .. }) { "it does not exist (404)".to_string() } else { why };
                results.push((shown, Outcome::Unknown(why), evidence));
                continue;
            };
            let mut outcome = evaluate(&c, &h, window, None);
            // Before calling a claim false (or giving up) about an earlier day, read the
            // timeline: labels, drafts and reopenings are only there.
            let needs_timeline = match &outcome {
                Outcome::True(_) => false,
                Outcome::False(_) => window.is_some() && !matches!(c.claimed, Claimed::Kind { .. }),
                Outcome::Unknown(_) => {
                    !matches!(c.claimed, Claimed::Mergeable { .. } | Claimed::Closed { strict: false })
                }
            };
            if needs_timeline {
                let tl = timelines.entry(r.clone()).or_insert_with(|| resolver.timeline_events(r));
                match tl {
                    Some(Ok((events, ev))) => {
                        outcome = evaluate(&c, &h, window, Some(events));
                        evidence.extend(ev.clone());
                    }
                    Some(Err(why)) => {
                        if let Outcome::Unknown(w) = &outcome {
                            outcome = Outcome::Unknown(format!("{w}; timeline: {why}"));
                        } else if let Outcome::False(f) = &outcome {
                            // Open/closed/merged times settle state claims on their own;
                            // labels and drafts need the timeline.
                            if matches!(
                                c.claimed,
                                Claimed::Label { .. } | Claimed::Ready | Claimed::Draft | Claimed::Wip
                            ) {
                                outcome = Outcome::Unknown(format!("{f}, but the timeline could not be read ({why})"));
                            }
                        }
                    }
                    None => {}
                }
            }
            results.push((shown, outcome, evidence));
        }
        if c.ambiguous {
            // The claim is about one of these, which the sentence does not say.
            let all_true = results.iter().all(|(_, o, _)| matches!(o, Outcome::True(_)));
            let names: Vec<String> = results.iter().map(|(s, _, _)| s.clone()).collect();
            let evidence: Vec<Evidence> = results.iter().flat_map(|(_, _, e)| e.clone()).collect();
            let key = (c.line, names.join(","), claim_text.clone());
            if !seen.insert(key) {
                continue;
            }
            let (verdict, detail) = if all_true {
                (Verdict::Verified, "holds for every reference it could describe".to_string())
            } else {
                (
                    Verdict::Unchecked,
                    if names.len() == 1 {
                        format!(
                            "\"{}\" may describe {} or the PR of the row's own action; the row does not say which",
                            c.words, names[0]
                        )
                    } else {
                        format!(
                            "\"{}\" could describe {}; the sentence does not say which",
                            c.words,
                            names.join(" or ")
                        )
                    },
                )
            };
            if verdict == Verdict::Unchecked {
                cx.skip(c.line, "claim", format!("{} {}", names.join(" / "), claim_text), detail.clone(), Vec::new());
            }
            cx.claims.push(ClaimRecord {
                line: c.line,
                kind: c.claimed.rule().to_string(),
                subject: names.join(" / "),
                claim: claim_text.clone(),
                words: c.words.clone(),
                verdict,
                detail,
                evidence,
            });
            continue;
        }
        for (shown, outcome, evidence) in results {
            if !seen.insert((c.line, shown.clone(), claim_text.clone())) {
                continue;
            }
            let (verdict, detail) = match outcome {
                Outcome::True(d) => (Verdict::Verified, d),
                Outcome::False(d) => (Verdict::False, d),
                Outcome::Unknown(d) => (Verdict::Unchecked, d),
            };
            // A reference that could not be read is listed once as such; a claim about a
            // reference that was read but could not be judged is listed on its own.
            if verdict == Verdict::Unchecked && !evidence.is_empty() {
                cx.skip(c.line, "claim", format!("{shown} {claim_text}"), detail.clone(), Vec::new());
            }
            if verdict == Verdict::False {
                cx.flag(
                    c.line,
                    c.claimed.rule(),
                    format!("{shown} is called {claim_text} (\"{}\") but {detail}", c.words),
                    evidence.clone(),
                );
            }
            cx.claims.push(ClaimRecord {
                line: c.line,
                kind: c.claimed.rule().to_string(),
                subject: shown,
                claim: claim_text.clone(),
                words: c.words.clone(),
                verdict,
                detail,
                evidence,
            });
        }
    }
}
