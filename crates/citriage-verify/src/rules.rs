//! The checks a triage report must pass, from the runbook's anti-hallucination rules,
//! its Phase 9 self-check and its Appendix D checklist. Claims about the outside world
//! go through traits — [`RefResolver`] for PR/issue state, timelines and commits,
//! [`CodeResolver`] for `path:line` and commits in checkouts, [`BuildUrlResolver`] for
//! builds — and whatever they cannot answer is reported as *not checked* with the
//! reason, never passed and never accused. Every claim the verifier read is listed
//! with its verdict (verified, false, unchecked) and evidence; every finding names the
//! report line, the rule, its severity and the evidence. Output is sorted and
//! deterministic.

use crate::builds::bare_build_ids;
pub use crate::builds::{
    extract_build_urls, parse_build_url, BuildAnswer, BuildUrl, BuildUrlResolver, KnownBuilds, NoBuilds,
};
use crate::code::CodeResolver;
pub use crate::content::{extract_file_lines, FileLineRef};
use crate::outcome::Ctx;
pub use crate::outcome::{
    rule_info, CheckStatus, CheckSummary, ClaimRecord, Finding, NotCheckedGroup, RuleInfo, Severity, Stats, Unchecked,
    Verdict, Verification, RULES,
};
pub use crate::refcheck::Window;
use crate::report::{code_spans, parse, Report, ReportFormat, Section, SectionKind};
use citriage_github::{extract_refs, FoundRef, IssueRef, RefContext, RefResolver, RefState, RefTarget};
use citriage_model::Day;
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

// ---- options ----------------------------------------------------------------------------

/// What the verifier is told about the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOptions {
    pub refs: RefContext,
    /// A prior report was given (allows a Lessons section).
    pub prior_report: bool,
    pub max_takeaways: usize,
    pub min_uncertainty: usize,
    pub min_patterns: usize,
    pub min_file_lines: usize,
    pub min_build_urls: usize,
    /// The day the report's claims describe; `None`: the date the report gives, else
    /// the state as read.
    pub as_of: Option<Day>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            refs: RefContext::kubernetes(),
            prior_report: false,
            max_takeaways: 3,
            min_uncertainty: 3,
            min_patterns: 8,
            min_file_lines: 3,
            min_build_urls: 1,
            as_of: None,
        }
    }
}

/// The outside state the checks consult.
pub struct Resolvers<'a> {
    pub refs: &'a dyn RefResolver,
    pub code: &'a dyn CodeResolver,
    pub builds: &'a dyn BuildUrlResolver,
}

// ---- the checks -------------------------------------------------------------------------

fn section_text(r: &Report, s: &Section) -> String {
    (s.line..=s.end).map(|n| r.line(n)).collect::<Vec<_>>().join("\n")
}

/// The day a report describes: its `Date:` line, else an `as of YYYY-MM-DD`, else a date
/// in its title.
pub fn report_date(r: &Report) -> Option<Day> {
    static DATE: OnceLock<Regex> = OnceLock::new();
    static AS_OF: OnceLock<Regex> = OnceLock::new();
    let date = DATE.get_or_init(|| Regex::new(r"(?i)\bdate\b\W{0,6}([0-9]{4}-[0-9]{2}-[0-9]{2})").expect("re"));
    let as_of = AS_OF.get_or_init(|| Regex::new(r"(?i)\bas of\s+([0-9]{4}-[0-9]{2}-[0-9]{2})").expect("re"));
    let head = r.lines.iter().take(30);
    for l in head.clone() {
        if let Some(d) = date.captures(l).and_then(|c| Day::parse(&c[1])) {
            return Some(d);
        }
    }
    for l in r.lines.iter().take(200) {
        if let Some(d) = as_of.captures(l).and_then(|c| Day::parse(&c[1])) {
            return Some(d);
        }
    }
    r.sections.iter().find(|s| s.kind == SectionKind::Title).and_then(|s| Day::find_in(&s.title))
}

/// Verifies report text.
pub fn verify(text: &str, resolvers: &Resolvers<'_>, opts: &VerifyOptions) -> Verification {
    verify_report(&parse(text), resolvers, opts)
}

/// Verifies a parsed report.
pub fn verify_report(report: &Report, resolvers: &Resolvers<'_>, opts: &VerifyOptions) -> Verification {
    let mut cx = Ctx {
        report,
        findings: Vec::new(),
        unchecked: Vec::new(),
        claims: Vec::new(),
        na: BTreeMap::new(),
        notes: BTreeMap::new(),
    };
    let text = report.lines.join("\n");
    let refs = extract_refs(&text, &opts.refs);
    let file_lines = extract_file_lines(report);
    let builds = extract_build_urls(report);
    let all_builds = crate::builds::extract_builds(report);
    let commits = crate::content::extract_commits(report, &opts.refs);
    let day = opts.as_of.or_else(|| report_date(report));
    let mut stats = Stats {
        lines: report.lines.len(),
        format: match report.format {
            ReportFormat::Markdown => "markdown".into(),
            ReportFormat::Rendered => "rendered".into(),
        },
        as_of: day.map(|d| d.to_string()),
        sections: report.sections.len(),
        patterns: report.patterns().len(),
        sub_patterns: report.sections_of(SectionKind::SubPattern).len(),
        refs_found: refs.len(),
        file_lines_found: file_lines.len(),
        build_urls_found: all_builds.len(),
        bare_build_ids: report.lines.iter().map(|l| crate::builds::bare_build_ids(l)).sum(),
        commits_distinct: commits.iter().map(|c| &c.sha).collect::<BTreeSet<_>>().len(),
        ..Default::default()
    };

    let states = check_refs(&mut cx, &refs, resolvers.refs, &mut stats);
    crate::refcheck::check_state_claims(&mut cx, &refs, &states, resolvers.refs, day.map(Window::of_day));
    crate::content::check_file_lines(&mut cx, &file_lines, resolvers.code, &mut stats, day, &opts.refs);
    crate::content::check_commits(
        &mut cx,
        &commits,
        resolvers.code,
        resolvers.refs,
        opts.refs.default_repo.as_ref(),
        day,
    );
    crate::builds::check_builds(&mut cx, resolvers.builds, &mut stats);
    check_tldr(&mut cx, &refs, opts);
    crate::wording::check_placeholders(&mut cx);
    crate::wording::check_hedges(&mut cx, &refs);
    check_tiers(&mut cx, &refs, &file_lines);
    check_sections(&mut cx, opts);
    check_patterns(&mut cx, &file_lines, &builds, &refs, opts);

    let mut findings = cx.findings;
    findings.sort();
    findings.dedup();
    let mut unchecked = cx.unchecked;
    unchecked.sort();
    unchecked.dedup();
    let mut claims = cx.claims;
    claims.sort();
    claims.dedup();
    stats.claims_verified = claims.iter().filter(|c| c.verdict == Verdict::Verified).count();
    stats.claims_false = claims.iter().filter(|c| c.verdict == Verdict::False).count();
    stats.claims_unchecked = claims.iter().filter(|c| c.verdict == Verdict::Unchecked).count();
    let checks = RULES
        .iter()
        .map(|r| {
            let nf = findings.iter().filter(|f| f.rule_id == r.id).count();
            let kinds: &[&str] = match r.id {
                "ref-exists" => &["ref"],
                "ref-state" | "ref-labels" | "ref-kind" => &["claim"],
                "file-line" => &["file-line"],
                "build-url" => &["build-url"],
                "commit" => &["commit"],
                "causal-chain" => &["causal-chain"],
                _ => &[],
            };
            let nu = unchecked
                .iter()
                .filter(|u| kinds.contains(&u.kind.as_str()))
                .filter(|u| u.kind != "claim" || claims.iter().any(|c| c.line == u.line && c.kind == r.id))
                .count();
            let (status, note) = if nf > 0 {
                (CheckStatus::Failed, cx.notes.get(r.id).cloned().unwrap_or_default())
            } else if let Some(why) = cx.na.get(r.id) {
                (CheckStatus::NotApplicable, why.clone())
            } else if nu > 0 {
                (CheckStatus::Incomplete, format!("{nu} item(s) could not be checked"))
            } else {
                (CheckStatus::Passed, cx.notes.get(r.id).cloned().unwrap_or_default())
            };
            CheckSummary { rule_id: r.id.to_string(), status, findings: nf, unchecked: nu, note }
        })
        .collect();
    Verification { findings, unchecked, claims, checks, stats }
}

/// Resolves each distinct reference once; flags references that do not exist and lists
/// the ones that could not be checked.
fn check_refs(
    cx: &mut Ctx<'_>,
    refs: &[FoundRef],
    resolver: &dyn RefResolver,
    stats: &mut Stats,
) -> BTreeMap<IssueRef, RefState> {
    let mut lines_of: BTreeMap<IssueRef, Vec<(usize, String)>> = BTreeMap::new();
    let mut ambiguous: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for f in refs {
        match &f.target {
            RefTarget::Resolved { reference, .. } => {
                lines_of.entry(reference.clone()).or_default().push((f.line, f.raw.clone()))
            }
            RefTarget::Ambiguous { why, .. } => ambiguous.entry((f.raw.clone(), why.clone())).or_default().push(f.line),
        }
    }
    let mut states = BTreeMap::new();
    for (r, lines) in &lines_of {
        let state = resolver.resolve(r);
        let (first, raw) = lines[0].clone();
        let mut others: Vec<usize> = lines.iter().skip(1).map(|(l, _)| *l).collect();
        others.dedup();
        others.retain(|l| *l != first);
        let shown = if raw == r.to_string() { r.to_string() } else { format!("{r} (written `{raw}`)") };
        match &state {
            RefState::NotFound { .. } => {
                stats.refs_checked += 1;
                let also =
                    if others.is_empty() { String::new() } else { format!(" (also cited on lines {})", join(&others)) };
                cx.flag(
                    first,
                    "ref-exists",
                    format!("{shown} does not exist (GitHub answered 404){also}"),
                    state.evidence().into_iter().collect(),
                );
            }
            s if !s.is_checked() => {
                stats.refs_unchecked += 1;
                cx.skip(first, "ref", shown, s.unknown_reason().unwrap_or("not checked").to_string(), others);
            }
            _ => stats.refs_checked += 1,
        }
        states.insert(r.clone(), state);
    }
    stats.refs_distinct = lines_of.len();
    for ((raw, why), lines) in ambiguous {
        stats.refs_ambiguous += 1;
        stats.refs_unchecked += 1;
        cx.skip(lines[0], "ref", format!("`{raw}`"), format!("ambiguous: {why}"), lines[1..].to_vec());
    }
    states
}

fn join(v: &[usize]) -> String {
    v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
}

fn takeaway_items(r: &Report, s: &Section) -> Vec<usize> {
    let items = r.items_in(s);
    let min_indent = items.iter().map(|i| i.indent).min().unwrap_or(0);
    let top: Vec<&&crate::report::ListItem> = items.iter().filter(|i| i.indent <= min_indent + 1).collect();
    let ordered: Vec<usize> = top.iter().filter(|i| i.number.is_some()).map(|i| i.line).collect();
    if ordered.is_empty() {
        top.iter().map(|i| i.line).collect()
    } else {
        ordered
    }
}

fn check_tldr(cx: &mut Ctx<'_>, refs: &[FoundRef], opts: &VerifyOptions) {
    let tldrs: Vec<Section> = cx.report.sections_of(SectionKind::TlDr).into_iter().cloned().collect();
    let Some(tl) = tldrs.first() else {
        let line = cx.report.sections_of(SectionKind::Title).first().map(|s| s.line).unwrap_or(1);
        cx.flag(line, "tldr", "the report has no TL;DR section".into(), Vec::new());
        cx.na.insert("tldr-takeaways", "no TL;DR section".into());
        cx.na.insert("tldr-tier0", "no TL;DR section".into());
        return;
    };
    let items = takeaway_items(cx.report, tl);
    cx.notes.insert("tldr-takeaways", format!("{} takeaway(s)", items.len()));
    if items.len() > opts.max_takeaways {
        cx.flag(
            items[opts.max_takeaways],
            "tldr-takeaways",
            format!(
                "the TL;DR lists {} takeaways (lines {}); at most {} are allowed",
                items.len(),
                join(&items),
                opts.max_takeaways
            ),
            Vec::new(),
        );
    }
    // Shipped claims in the TL;DR versus Tier 0.
    let tier0: Vec<Section> = cx.report.sections_of(SectionKind::Tier(0)).into_iter().cloned().collect();
    let in_tier0 = |f: &FoundRef| {
        refs.iter().any(|g| {
            tier0.iter().any(|s| s.contains(g.line))
                && match (f.reference(), g.reference()) {
                    (Some(a), Some(b)) => a == b,
                    _ => f.number() == g.number(),
                }
        })
    };
    let tl_refs: Vec<FoundRef> = refs.iter().filter(|f| tl.contains(f.line)).cloned().collect();
    let mut seen = BTreeSet::new();
    for (c, found) in crate::refcheck::report_claims(cx.report, &tl_refs) {
        let shipped = matches!(c.claimed, crate::claims::Claimed::Merged | crate::claims::Claimed::Done) && !c.negated;
        if !shipped || c.modality != crate::prose::Modality::Asserted || c.ambiguous {
            continue;
        }
        for t in &c.targets {
            let f = &found[*t];
            if !in_tier0(f) && seen.insert((c.line, f.raw.clone())) {
                let why = if tier0.is_empty() { "there is no Tier 0 section" } else { "Tier 0 does not list it" };
                cx.flag(c.line, "tldr-tier0", format!("the TL;DR calls {} shipped but {why}", f.raw), Vec::new());
            }
        }
    }
}

fn sha_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\b[0-9a-f]{7,40}\b").expect("static regex"))
}

fn has_concrete_change(line: &str, refs_on_line: bool, file_line_on_line: bool) -> bool {
    refs_on_line
        || file_line_on_line
        || !code_spans(line).is_empty()
        || line.contains('→')
        || line.contains("->")
        || sha_re().find_iter(line).any(|m| {
            m.as_str().bytes().any(|b| b.is_ascii_digit()) && m.as_str().bytes().any(|b| b.is_ascii_alphabetic())
        })
}

fn check_tiers(cx: &mut Ctx<'_>, refs: &[FoundRef], file_lines: &[FileLineRef]) {
    if cx.report.format == ReportFormat::Rendered {
        let why = "rendered text: table cells and code spans are not recoverable";
        cx.na.insert("tier-columns", why.into());
        cx.na.insert("fix-shape", why.into());
        cx.na.insert("tier0-evidence", why.into());
        return;
    }
    let tiers: Vec<Section> =
        cx.report.sections.iter().filter(|s| matches!(s.kind, SectionKind::Tier(_))).cloned().collect();
    if tiers.is_empty() {
        cx.na.insert("tier-columns", "no tier sections".into());
        cx.na.insert("fix-shape", "no tier sections".into());
        cx.na.insert("tier0-evidence", "no tier sections".into());
        return;
    }
    let ref_lines: BTreeSet<usize> = refs.iter().map(|f| f.line).collect();
    let fl_lines: BTreeSet<usize> = file_lines.iter().map(|f| f.line).collect();
    let mut rows_checked = 0;
    for s in &tiers {
        let SectionKind::Tier(n) = s.kind else { continue };
        let tables: Vec<crate::report::Table> = cx.report.tables_in(s).into_iter().cloned().collect();
        for t in &tables {
            for row in &t.rows {
                if row.cells.len() != t.header.len() {
                    cx.flag(
                        row.line,
                        "tier-columns",
                        format!(
                            "Tier {n} row has {} cells; its table's header (line {}) has {}",
                            row.cells.len(),
                            t.line,
                            t.header.len()
                        ),
                        Vec::new(),
                    );
                }
            }
            if n <= 3 && !t.header.iter().any(|h| h.to_ascii_lowercase().contains("status")) {
                cx.flag(
                    t.line,
                    "tier-columns",
                    format!("Tier {n} table has no Status column (header: {})", t.header.join(" | ")),
                    Vec::new(),
                );
            }
        }
        if n == 0 {
            let rows: Vec<(usize, String)> = if tables.is_empty() {
                cx.report.items_in(s).iter().map(|i| (i.line, i.text.clone())).collect()
            } else {
                tables
                    .iter()
                    .flat_map(|t| {
                        t.rows.iter().map(|r| {
                            (r.line, r.cells.iter().skip(1).find(|c| !c.is_empty()).cloned().unwrap_or_default())
                        })
                    })
                    .collect()
            };
            for (line, first_cell) in rows {
                let lc = first_cell.trim_start().to_ascii_lowercase();
                if lc.starts_with("none") || lc.starts_with("no ") || lc.starts_with("nothing") {
                    continue;
                }
                let text = cx.report.line(line);
                let evidence = ref_lines.contains(&line)
                    || fl_lines.contains(&line)
                    || text.contains("://")
                    || crate::builds::bare_build_ids(text) > 0
                    || text.contains("ev-")
                    || sha_re().find_iter(text).any(|m| {
                        m.as_str().bytes().any(|b| b.is_ascii_digit())
                            && m.as_str().bytes().any(|b| b.is_ascii_alphabetic())
                    });
                if !evidence {
                    cx.flag(
                        line,
                        "tier0-evidence",
                        format!(
                            "Tier 0 row calls something done but cites no PR, commit, build or path:line: \"{}\"",
                            first_cell.chars().take(80).collect::<String>()
                        ),
                        Vec::new(),
                    );
                }
            }
        }
        if n == 1 || n == 2 {
            let mut rows: Vec<(usize, String, String)> = tables
                .iter()
                .flat_map(|t| {
                    t.rows.iter().map(|r| {
                        (
                            r.line,
                            r.cells.iter().skip(1).find(|c| !c.is_empty()).cloned().unwrap_or_default(),
                            cx.report.line(r.line).to_string(),
                        )
                    })
                })
                .collect();
            if tables.is_empty() {
                rows = cx
                    .report
                    .items_in(s)
                    .iter()
                    .map(|i| (i.line, i.text.clone(), cx.report.line(i.line).to_string()))
                    .collect();
            }
            for (line, first_cell, text) in rows {
                let lc = first_cell.trim_start().to_ascii_lowercase();
                if lc.starts_with("none") || lc.starts_with("no ") {
                    continue;
                }
                rows_checked += 1;
                if !has_concrete_change(&text, ref_lines.contains(&line), fl_lines.contains(&line)) {
                    cx.flag(
                        line,
                        "fix-shape",
                        format!(
                            "Tier {n} row names neither a PR nor a concrete change (file:line, `code`, → diff): \"{}\"",
                            first_cell.chars().take(80).collect::<String>()
                        ),
                        Vec::new(),
                    );
                }
            }
        }
    }
    cx.notes.insert("fix-shape", format!("{rows_checked} Tier 1/2 row(s) checked"));
}

fn quote_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r#""[^"]{8,}"|“[^”]{8,}”|^\s*>"#).expect("static regex"))
}

fn check_sections(cx: &mut Ctx<'_>, opts: &VerifyOptions) {
    let r = cx.report;
    // Honest uncertainty.
    let unc: Vec<Section> = r.sections_of(SectionKind::Uncertainty).into_iter().cloned().collect();
    if unc.is_empty() {
        let line = r.sections_of(SectionKind::Verifications).first().map(|s| s.line).unwrap_or(1);
        cx.flag(
            line,
            "uncertainty",
            "no honest-uncertainty section (\"Still open\", \"could not verify\")".into(),
            Vec::new(),
        );
    } else {
        let best = unc.iter().map(|s| (r.items_in(s).len(), s.line)).max().unwrap_or((0, 1));
        cx.notes.insert("uncertainty", format!("{} item(s)", best.0));
        if best.0 < opts.min_uncertainty {
            cx.flag(
                best.1,
                "uncertainty",
                format!(
                    "the uncertainty section lists {} item(s); at least {} are required",
                    best.0, opts.min_uncertainty
                ),
                Vec::new(),
            );
        }
    }
    // Lessons only with a prior report.
    let lessons: Vec<Section> = r.sections_of(SectionKind::Lessons).into_iter().cloned().collect();
    for s in &lessons {
        if !opts.prior_report {
            cx.flag(
                s.line,
                "lessons",
                "a Lessons section without a prior report: the corrections cannot quote anything real".into(),
                Vec::new(),
            );
        } else {
            for item in r.items_in(s) {
                if !quote_re().is_match(r.line(item.line)) {
                    cx.flag(
                        item.line,
                        "lessons",
                        "the lesson does not quote the prior report's claim it corrects".into(),
                        Vec::new(),
                    );
                }
            }
        }
    }
    if lessons.is_empty() {
        cx.na.insert(
            "lessons",
            if opts.prior_report {
                "no Lessons section (optional)".into()
            } else {
                "no prior report and no Lessons section".into()
            },
        );
    }
    // Misclassifications.
    match r.sections_of(SectionKind::Misclassifications).first() {
        None => cx.flag(1, "misclassified-section", "no misclassifications section".into(), Vec::new()),
        Some(s) => {
            let rows: usize = r.tables_in(s).iter().map(|t| t.rows.len()).sum();
            let items = r.items_in(s).len();
            let says_none = section_text(r, s).to_ascii_lowercase().contains("none");
            if rows == 0 && items == 0 && !says_none && r.format == ReportFormat::Markdown {
                cx.flag(
                    s.line,
                    "misclassified-section",
                    "the misclassifications section is empty and does not say none were found".into(),
                    Vec::new(),
                );
            }
        }
    }
    // Tier 4 and 5.
    let has = |n: u8| r.sections.iter().any(|s| s.kind == SectionKind::Tier(n));
    let anchor = r.sections_of(SectionKind::ActionPlan).first().map(|s| s.line).unwrap_or(1);
    for n in [4u8, 5] {
        if !has(n) {
            cx.flag(anchor, "tier-sections", format!("no Tier {n} section"), Vec::new());
        }
    }
}

fn snapshot_only_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)snapshot-only (?:triage|report|run)|snapshot-only: no builds|no builds were ingested|build logs?\b[^.]{0,60}\b(?:were|was) not (?:read|fetched)").expect("static regex")
    })
}

fn line_word_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\bline ~?([0-9]{1,6})\b").expect("static regex"))
}

/// The source lines a section cites: each line of a `path:line` (`a.go:3306,3458` is
/// two), and `line N` written after a citation on the same report line (`reconciler.go:
/// 2017-2034 times out (t.Fatalf at line 2033)`), which names a line of that file.
fn cited_lines<'a>(
    r: &Report,
    s: &Section,
    file_lines: &'a [FileLineRef],
) -> BTreeSet<(Option<&'a str>, &'a str, usize)> {
    let mut out = BTreeSet::new();
    for f in file_lines.iter().filter(|f| s.contains(f.line)) {
        out.insert((f.repo.as_deref(), f.path.as_str(), f.start));
        for m in &f.more {
            out.insert((f.repo.as_deref(), f.path.as_str(), *m));
        }
    }
    for n in s.line..=s.end {
        let on_line: Vec<&FileLineRef> = file_lines.iter().filter(|f| f.line == n).collect();
        if on_line.is_empty() {
            continue;
        }
        let text = r.line(n);
        for c in line_word_re().captures_iter(text) {
            let at = c.get(0).map(|m| m.start()).unwrap_or(0);
            let Some(f) = on_line.iter().filter(|f| f.span.1 <= at).max_by_key(|f| f.span.1) else { continue };
            if let Some(k) = c.get(1).and_then(|m| m.as_str().parse::<usize>().ok()) {
                out.insert((f.repo.as_deref(), f.path.as_str(), k));
            }
        }
    }
    out
}

fn check_patterns(
    cx: &mut Ctx<'_>,
    file_lines: &[FileLineRef],
    builds: &[(usize, BuildUrl)],
    refs: &[FoundRef],
    opts: &VerifyOptions,
) {
    let r = cx.report;
    let patterns: Vec<Section> = r.patterns().into_iter().cloned().collect();
    let anchor = r.sections_of(SectionKind::Patterns).first().map(|s| s.line).unwrap_or(1);
    cx.notes.insert("pattern-count", format!("{} pattern(s)", patterns.len()));
    if patterns.len() < opts.min_patterns {
        cx.flag(
            anchor,
            "pattern-count",
            format!("{} pattern section(s); at least {} are required", patterns.len(), opts.min_patterns),
            Vec::new(),
        );
    }
    if patterns.is_empty() {
        cx.na.insert("pattern-depth", "no pattern sections".into());
        cx.na.insert("causal-chain", "no pattern sections".into());
        return;
    }
    // A report that cites no build at all and says it read no build logs (citriage's
    // snapshot-only triage) makes no log-level claims: depth does not apply. A report
    // with no build URLs that does not say so fails the depth rule.
    let declared = r.lines.iter().position(|l| snapshot_only_re().is_match(l));
    if builds.is_empty() {
        if let Some(i) = declared {
            cx.na.insert(
                "pattern-depth",
                format!(
                    "no build evidence: the report cites no build and declares itself snapshot-only (line {})",
                    i + 1
                ),
            );
        }
    }
    // Rendered text keeps link text but loses link targets: a build id shown as text
    // may have been a link, so there it counts as a build citation.
    let rendered = r.format == ReportFormat::Rendered;
    let depth_applies = !cx.na.contains_key("pattern-depth");
    let mut thin = 0;
    let mut followed = 0;
    for p in &patterns {
        // A pattern that points elsewhere ("see V3 under Pattern F") carries the evidence
        // written there.
        let (refd, _) = crate::xref::followed(r, p);
        followed += usize::from(!refd.is_empty());
        let mut fl = cited_lines(r, p, file_lines);
        let mut bu: BTreeSet<&str> =
            builds.iter().filter(|(l, _)| p.contains(*l)).map(|(_, b)| b.url.as_str()).collect();
        let mut bare: usize = (p.line..=p.end).map(|n| bare_build_ids(r.line(n))).sum();
        for t in &refd {
            fl.extend(cited_lines(r, t, file_lines));
            bu.extend(builds.iter().filter(|(l, _)| t.contains(*l)).map(|(_, b)| b.url.as_str()));
            bare += (t.line..=t.end).map(|n| bare_build_ids(r.line(n))).sum::<usize>();
        }
        let build_cites = if rendered { bu.len() + bare } else { bu.len() };
        if depth_applies && (fl.len() < opts.min_file_lines || build_cites < opts.min_build_urls) {
            thin += 1;
            let bare_note = match (rendered, bare > 0 && bu.is_empty()) {
                (true, _) if bare > 0 => {
                    format!(" (counting {bare} build id(s) whose link targets the rendered text lost)")
                }
                (false, true) => format!(" ({bare} build id(s) cited without a URL)"),
                _ => String::new(),
            };
            cx.flag(
                p.line,
                "pattern-depth",
                format!(
                    "\"{}\" cites {} file:line (needs {}) and {} build URL(s) (needs {}){bare_note}",
                    p.title.chars().take(70).collect::<String>(),
                    fl.len(),
                    opts.min_file_lines,
                    build_cites,
                    opts.min_build_urls
                ),
                Vec::new(),
            );
        }
    }
    crate::wording::check_causal_chain(cx, &patterns, refs);
    if depth_applies {
        let how = if rendered { "; rendered text: bare build ids count as build citations" } else { "" };
        let refs_note = if followed > 0 {
            format!("; {followed} counted with the sections their references lead to")
        } else {
            String::new()
        };
        cx.notes.insert(
            "pattern-depth",
            format!("{} of {} pattern(s) below the bar{how}{refs_note}", thin, patterns.len()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_dates() {
        let d = |t: &str| report_date(&parse(t)).map(|d| d.to_string());
        assert_eq!(d("# X — Triage Report\n\n**Date**: 2026-05-10 (PM)\n"), Some("2026-05-10".into()));
        assert_eq!(d("# X\n\n| # | Item | Status (as of 2026-05-09) |\n"), Some("2026-05-09".into()));
        assert_eq!(d("# Triage Report 2026-05-08\n\nno date line\n"), Some("2026-05-08".into()));
        assert_eq!(d("# Triage Report\n\nnothing\n"), None);
    }

    #[test]
    fn a_section_cites_each_listed_line_and_lines_named_after_a_citation() {
        let r = parse(
            "### Pattern A — x\n- Root: a/b.go:2017-2034 times out (t.Fatalf at line 2033).\n- `c/d.go:3310,3462` call X.\n- the build log, line 4412.\n",
        );
        let fl = extract_file_lines(&r);
        let got = cited_lines(&r, &r.sections[0], &fl);
        let want: BTreeSet<(Option<&str>, &str, usize)> =
            [(None, "a/b.go", 2017), (None, "a/b.go", 2033), (None, "c/d.go", 3310), (None, "c/d.go", 3462)]
                .into_iter()
                .collect();
        assert_eq!(got, want);
    }
}
