//! The self-contained HTML report: inline CSS, no scripts, every CI-sourced
//! string escaped, every claim next to its evidence (log file + line, diff file +
//! line, URLs). Sections carry stable ids: `summary`, `history`, `failed-jobs`,
//! `root-causes`, `suspects`, `context`, `action`, `recommendations`, `data-gaps`.

use std::fmt::Write;

use crate::action::{Band, CandidateAction, Verdict};
use crate::analyze::page_url;
use crate::candidate::{Candidate, CandidateKind};
use crate::classify::FailureClass;
use crate::evidence::{JunitState, LogLine};
use crate::jobhistory::{PassRate, Trend};
use crate::release::Phase;
use crate::result::*;
use citriage_model::escape::html as esc;
use citriage_model::time;

/// A link when the URL is http(s), else the escaped text.
fn link(url: Option<&str>, text: &str) -> String {
    match url {
        Some(u) if u.starts_with("https://") || u.starts_with("http://") => {
            format!("<a href=\"{}\" rel=\"noopener\">{}</a>", esc(u), esc(text))
        }
        _ => esc(text),
    }
}

const CSS: &str = r#"
:root{--ink:#1f2430;--muted:#5d6675;--line:#e3e6ec;--bg:#f6f7f9;--card:#fff;--accent:#2f5bd3;
--red:#b42318;--red-bg:#fdecea;--amber:#a15c07;--amber-bg:#fff4e0;--green:#1e7a3d;--green-bg:#e7f6ec;
--blue:#175cd3;--blue-bg:#e8f0fe;--grey:#4a5261;--grey-bg:#eef0f3;--violet:#6941c6;--violet-bg:#f1ecfd}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 20px 40px}
header.top{display:flex;flex-wrap:wrap;align-items:baseline;gap:12px;border-bottom:1px solid var(--line);padding-bottom:12px;margin-bottom:18px}
header.top h1{font-size:22px;margin:0;font-weight:650;letter-spacing:-.01em}
header.top .meta{color:var(--muted);font-size:13px}
h2{font-size:17px;margin:28px 0 10px;font-weight:650;display:flex;align-items:center;gap:8px}
h2 .n{display:inline-flex;width:22px;height:22px;border-radius:50%;background:var(--ink);color:#fff;font-size:12px;align-items:center;justify-content:center}
h3{font-size:15px;margin:14px 0 6px}
section{scroll-margin-top:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 18px;margin:10px 0}
.verdict{border-radius:12px;padding:18px 20px;color:#fff;display:flex;gap:18px;align-items:center}
.verdict .big{font-size:22px;font-weight:750;letter-spacing:.02em;white-space:nowrap}
.verdict p{margin:0;font-size:15px}
.v-revert{background:linear-gradient(120deg,#9f1c12,#c23b22)}
.v-bisect{background:linear-gradient(120deg,#9a5a06,#c27c0e)}
.v-report{background:linear-gradient(120deg,#21406e,#2f5bd3)}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:10px;margin-top:12px}
.fact{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 12px}
.fact .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.fact .v{font-size:15px;font-weight:600;word-break:break-word}
table{width:100%;border-collapse:collapse;font-size:13px}
table.jobs{table-layout:fixed}
table.jobs td{overflow-wrap:anywhere}
.wrap{word-break:break-all}
th{text-align:left;font-weight:600;color:var(--muted);border-bottom:2px solid var(--line);padding:7px 8px}
td{border-bottom:1px solid var(--line);padding:7px 8px;vertical-align:top}
tr.green td{background:#f3fbf5}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;white-space:nowrap;border:1px solid transparent}
.b-red{background:var(--red-bg);color:var(--red)}.b-amber{background:var(--amber-bg);color:var(--amber)}
.b-green{background:var(--green-bg);color:var(--green)}.b-blue{background:var(--blue-bg);color:var(--blue)}
.b-grey{background:var(--grey-bg);color:var(--grey)}.b-violet{background:var(--violet-bg);color:var(--violet)}
.chips{display:inline-flex;gap:2px;flex-wrap:wrap}
.chip{display:inline-block;width:16px;height:16px;border-radius:3px;font-size:10px;line-height:16px;text-align:center;font-weight:700;color:#fff}
.chip.F{background:#d0463b}.chip.S{background:#3a9a5b}.chip.U{background:#a3a9b5}
.rate{min-width:0}
.bar{height:7px;background:var(--grey-bg);border-radius:4px;overflow:hidden;margin:3px 0 1px}
.bar i{display:block;height:100%;border-radius:4px}
.muted{color:var(--muted)}.small{font-size:12px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
pre.log{background:#161b26;color:#e6e9ef;border-radius:8px;padding:10px 12px;overflow-x:auto;margin:6px 0;font-size:12px;line-height:1.45;white-space:pre-wrap;word-break:break-word}
pre.log .loc{color:#8fa3c7}
.rc{border-left:5px solid var(--red);background:var(--card);border-radius:10px;padding:14px 16px;margin:12px 0;border-top:1px solid var(--line);border-right:1px solid var(--line);border-bottom:1px solid var(--line)}
.rc.infra{border-left-color:#6b7280}.rc.ci-config{border-left-color:var(--violet)}.rc.flake{border-left-color:var(--amber)}.rc.unknown{border-left-color:#a3a9b5}.rc.informing{border-left-color:var(--blue)}
.rc h3{margin-top:0}
.match{display:grid;grid-template-columns:110px 1fr;gap:4px 10px;background:var(--green-bg);border:1px solid #bfe5cb;border-radius:8px;padding:10px 12px;margin:8px 0}
.match .k{color:var(--green);font-weight:600;font-size:12px}
.match code{white-space:pre-wrap;word-break:break-word}
ul.items{margin:4px 0;padding-left:18px}
ul.items li{margin:2px 0}
details{margin:8px 0}
details>summary{cursor:pointer;font-weight:600}
.job-detail{border:1px solid var(--line);border-radius:10px;background:var(--card);padding:10px 14px;margin:10px 0}
ol.recs li{margin:6px 0}
footer{color:var(--muted);font-size:12px;margin-top:30px;border-top:1px solid var(--line);padding-top:10px}
@media print{body{background:#fff}.card,.rc,.job-detail{break-inside:avoid}}
"#;

fn phase_badge(p: &Phase) -> String {
    let cls = match p {
        Phase::Accepted => "b-green",
        Phase::Rejected | Phase::Failed => "b-red",
        Phase::Ready => "b-amber",
        _ => "b-grey",
    };
    format!("<span class=\"badge {cls}\">{}</span>", esc(p.as_str()))
}

fn class_badge(c: FailureClass) -> String {
    let cls = match c {
        FailureClass::ProductRegression => "b-red",
        FailureClass::Infrastructure => "b-grey",
        FailureClass::CiConfiguration => "b-violet",
        FailureClass::Flake => "b-amber",
        FailureClass::InformingOnly => "b-blue",
        FailureClass::Unknown => "b-grey",
    };
    format!("<span class=\"badge {cls}\">{}</span>", esc(c.as_str()))
}

fn band_badge(score: u32) -> String {
    let b = Band::of(score);
    let cls = match b {
        Band::High => "b-red",
        Band::Medium => "b-amber",
        Band::Low => "b-blue",
    };
    format!("<span class=\"badge {cls}\">{} {score}</span>", b.as_str())
}

fn action_badge(a: CandidateAction) -> String {
    let cls = match a {
        CandidateAction::StageRevert => "b-red",
        CandidateAction::Bisect => "b-amber",
        CandidateAction::EscalateRhcos | CandidateAction::WaitForKubeletRebuild => "b-violet",
        CandidateAction::ReportOnly => "b-grey",
    };
    format!("<span class=\"badge {cls}\">{}</span>", esc(a.as_str()))
}

fn chips(pattern: &str) -> String {
    let mut s = String::from("<span class=\"chips\">");
    for t in pattern.split_whitespace() {
        let (cls, title) = match t {
            "F" => ("F", "failed"),
            "S" => ("S", "succeeded"),
            _ => ("U", "no result"),
        };
        let _ = write!(s, "<span class=\"chip {cls}\" title=\"{title}\">{}</span>", esc(t));
    }
    s.push_str("</span>");
    s
}

fn rate_cell(r: &PassRate, label: &str) -> String {
    match r.percent() {
        Some(p) => {
            let color = if p < 50.0 {
                "#d0463b"
            } else if p < 80.0 {
                "#d98e12"
            } else {
                "#3a9a5b"
            };
            format!(
                "<div class=\"small\">{label} <b>{p:.1}%</b> <span class=\"muted\">({}/{})</span></div><div class=\"bar\"><i style=\"width:{p:.1}%;background:{color}\"></i></div>",
                r.passes, r.runs
            )
        }
        None => format!("<div class=\"small muted\">{label}: no runs</div>"),
    }
}

fn log_block(lines: &[LogLine], limit: usize) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut s = String::from("<pre class=\"log\">");
    for l in lines.iter().take(limit) {
        let loc = match &l.at.url {
            Some(u) if u.starts_with("http") => {
                format!("<a class=\"loc\" href=\"{}\">{}</a>", esc(u), esc(&l.at.cite()))
            }
            _ => format!("<span class=\"loc\">{}</span>", esc(&l.at.cite())),
        };
        let _ = writeln!(s, "{loc}  {}", esc(&l.text));
    }
    s.push_str("</pre>");
    s
}

fn cand_link(c: &Candidate) -> String {
    link(c.url.as_deref(), &c.short())
}

fn trend_text(t: &crate::jobhistory::JobTrend) -> String {
    match (t.trend, t.delta_pp) {
        (Trend::New, _) => "new: no earlier runs".into(),
        (Trend::NoData, _) => "no recent runs".into(),
        (_, Some(d)) => format!("{} ({d:+.1} pp)", t.trend.as_str()),
        _ => t.trend.as_str().into(),
    }
}

fn section(out: &mut String, n: u32, id: &str, title: &str) {
    let _ = write!(out, "<section id=\"{id}\"><h2><span class=\"n\">{n}</span>{}</h2>", esc(title));
}

/// Renders the report.
/// Renders the report.
pub fn render_html(a: &PayloadAnalysis) -> String {
    let mut o = String::new();
    head(&mut o, a);
    summary_section(&mut o, a);
    history_section(&mut o, a);
    failed_jobs_section(&mut o, a);
    root_causes_section(&mut o, a);
    suspects_section(&mut o, a);
    context_section(&mut o, a);
    action_section(&mut o, a);
    recommendations_section(&mut o, a);
    data_gaps_section(&mut o, a);
    footer(&mut o, a);
    o
}

/// The document head and the page header.
fn head(o: &mut String, a: &PayloadAnalysis) {
    let tag = &a.payload.tag;
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Payload analysis: {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n",
        esc(tag)
    );
    let _ = writeln!(
        o,
        "<header class=\"top\"><h1>Payload analysis · {}</h1>{}<span class=\"meta\">{} · {} · {}{}</span></header>",
        link(Some(&a.payload.release_url), tag),
        phase_badge(&a.payload.phase),
        esc(&a.payload.stream_name),
        esc(&a.payload.architecture),
        esc(&a.payload.created.as_deref().map(time::shown).unwrap_or_else(|| "creation time unknown".into())),
        a.payload.as_of.as_ref().map(|t| format!(" · as of {}", esc(&time::shown(t)))).unwrap_or_default()
    );
}

/// The executive summary: the verdict, the facts, one line per root cause.
fn summary_section(o: &mut String, a: &PayloadAnalysis) {
    // 1. Executive summary.
    section(o, 1, "summary", "Executive summary");
    let vcls = match a.decision.verdict {
        Verdict::StageRevert => "v-revert",
        Verdict::Bisect => "v-bisect",
        Verdict::ReportOnly => "v-report",
    };
    let _ = write!(
        o,
        "<div class=\"verdict {vcls}\"><div class=\"big\">{}</div><p>{}</p></div>",
        esc(a.decision.verdict.as_str()),
        esc(&a.decision.summary)
    );
    summary_facts(o, a);
    if !a.root_causes.is_empty() {
        o.push_str("<div class=\"card\"><ul class=\"items\">");
        for r in &a.root_causes {
            let top = a.suspects.iter().find(|s| s.root_cause == r.id);
            let _ = write!(
                o,
                "<li><a href=\"#{}\"><b>{}</b></a> {} — <span class=\"mono\">{}</span> in {} job(s), first failed in {}{}</li>",
                esc(&r.id),
                esc(&r.id),
                class_badge(r.class.class),
                esc(&r.title),
                r.jobs.len(),
                esc(&r.first_failed_in),
                match top {
                    Some(s) => format!("; top suspect {} ({})", a.candidate(&s.candidate).map(cand_link).unwrap_or_default(), s.score.total),
                    None => "; no suspect".into(),
                }
            );
        }
        o.push_str("</ul></div>");
    }
    o.push_str("</section>\n");
}

/// The facts under the verdict: jobs, baseline, last accepted, PRs, root causes, force-accept.
fn summary_facts(o: &mut String, a: &PayloadAnalysis) {
    o.push_str("<div class=\"facts\">");
    let b = &a.blocking;
    let fact = |o: &mut String, k: &str, v: String| {
        let _ = write!(o, "<div class=\"fact\"><div class=\"k\">{}</div><div class=\"v\">{v}</div></div>", esc(k));
    };
    fact(
        o,
        "Blocking jobs",
        format!(
            "{} passed · {} failed · {} pending <span class=\"muted\">of {}</span>",
            b.succeeded, b.failed, b.pending, b.total
        ),
    );
    fact(
        o,
        "Last all-green payload",
        match &a.baseline {
            Some(t) => format!(
                "{}{}",
                link(Some(&page_url(a, t)), t),
                a.hours_since_baseline
                    .map(|h| format!(" <span class=\"muted\">({h:.1} h before)</span>"))
                    .unwrap_or_default()
            ),
            None => "<span class=\"muted\">none within the chain</span>".into(),
        },
    );
    fact(
        o,
        "Last accepted",
        a.last_accepted
            .as_ref()
            .map(|t| link(Some(&page_url(a, t)), t))
            .unwrap_or_else(|| "<span class=\"muted\">none in the list</span>".into()),
    );
    fact(
        o,
        "New PRs",
        format!(
            "{} vs the previous payload · {} since the last all-green one",
            a.new_prs.prs.len(),
            a.cumulative_prs.prs.len()
        ),
    );
    fact(
        o,
        "Root causes",
        if a.root_causes.is_empty() {
            "none".into()
        } else {
            a.root_causes
                .iter()
                .map(|r| format!("{} {}", esc(&r.id), class_badge(r.class.class)))
                .collect::<Vec<_>>()
                .join(" ")
        },
    );
    fact(
        o,
        "Force-accept",
        if a.decision.force_accept.recommended { "<b>recommended</b>".into() } else { "not recommended".into() },
    );
    o.push_str("</div>");
}

/// The payload history and the PRs new in the target and since the baseline.
fn history_section(o: &mut String, a: &PayloadAnalysis) {
    // 2. Payload history.
    section(o, 2, "history", "Payload history");
    o.push_str("<div class=\"card\"><table><tr><th>Payload</th><th>Phase</th><th>Created</th><th>Blocking results</th><th>Note</th></tr>");
    for r in &a.history {
        let note = if r.all_blocking_green {
            "<span class=\"badge b-green\">all blocking green</span>".to_string()
        } else if r.force_accepted {
            "<span class=\"badge b-amber\">accepted with failed blocking jobs</span>".to_string()
        } else {
            String::new()
        };
        let extra =
            r.note.as_ref().map(|n| format!(" <span class=\"muted small\">{}</span>", esc(n))).unwrap_or_default();
        let _ = write!(
            o,
            "<tr{}><td class=\"mono\">{}</td><td>{}</td><td class=\"small\">{}</td><td>{}</td><td>{note}{extra}</td></tr>",
            if r.all_blocking_green { " class=\"green\"" } else { "" },
            link(Some(&page_url(a, &r.tag)), &r.tag),
            phase_badge(&r.phase),
            esc(&r.created.as_deref().map(time::shown).unwrap_or_default()),
            esc(&r.blocking.describe())
        );
    }
    o.push_str("</table>");
    if !a.chain_complete {
        o.push_str(
            "<p class=\"small muted\">The walk stopped before reaching a payload with every blocking job green.</p>",
        );
    }
    let prset = |o: &mut String, title: &str, p: &PrSet| {
        let _ = write!(
            o,
            "<details><summary>{} — {} PR(s){}</summary><p class=\"small muted\">{}{}</p><ul class=\"items\">",
            esc(title),
            p.prs.len(),
            p.from.as_ref().map(|f| format!(" since {}", esc(f))).unwrap_or_default(),
            esc(&p.how),
            p.note.as_ref().map(|n| format!(" — {}", esc(n))).unwrap_or_default()
        );
        for pr in &p.prs {
            let _ = write!(
                o,
                "<li>{} <span class=\"badge b-grey\">{}</span> {}</li>",
                link(Some(&pr.url), &pr.key()),
                esc(&pr.repo),
                esc(&pr.title)
            );
        }
        o.push_str("</ul></details>");
    };
    prset(o, "New in this payload", &a.new_prs);
    prset(o, "Cumulative since the last all-green payload", &a.cumulative_prs);
    o.push_str("</div></section>\n");
}

/// The failed blocking jobs: a table, then each job in detail.
fn failed_jobs_section(o: &mut String, a: &PayloadAnalysis) {
    // 3. Failed blocking jobs.
    section(o, 3, "failed-jobs", "Failed blocking jobs");
    if a.failed_jobs.is_empty() {
        o.push_str("<div class=\"card\">No blocking job failed.</div>");
    } else {
        o.push_str("<div class=\"card\"><table class=\"jobs\"><colgroup><col style=\"width:19%\"><col style=\"width:33%\"><col style=\"width:18%\"><col style=\"width:10%\"><col style=\"width:8%\"><col style=\"width:12%\"></colgroup><tr><th>Job</th><th>Failure mode</th><th class=\"rate\">Pass rate (window / previous)</th><th>Trend</th><th>Retries</th><th>History (newest first)</th></tr>");
        for j in &a.failed_jobs {
            failed_job_row(o, j);
        }
        o.push_str("</table>");
        if let Some(w) = &a.window {
            let _ = write!(o, "<p class=\"small muted\">Pass rates: {}.</p>", esc(&w.definition));
        }
        o.push_str("</div>");
        for j in &a.failed_jobs {
            job_detail(o, j);
        }
    }
    o.push_str("</section>\n");
}

/// One row of the failed-jobs table.
fn failed_job_row(o: &mut String, j: &FailedJob) {
    let mode = j.modes.first();
    let rates = match &j.pass_rate {
        Some(p) => format!("{}{}", rate_cell(&p.current, "now"), rate_cell(&p.previous, "before")),
        None => "<span class=\"muted small\">no job history</span>".into(),
    };
    let trend = j.pass_rate.as_ref().map(trend_text).unwrap_or_default();
    let retries = if j.retries == 0 {
        "0".to_string()
    } else {
        let same = j.previous_attempts.iter().filter(|p| p.same_failure == Some(true)).count();
        format!("{} <span class=\"muted small\">({same} with the same failure)</span>", j.retries)
    };
    let _ = write!(
        o,
        "<tr><td>{}<div class=\"small muted wrap\">{}</div></td><td>{} <a href=\"#{}\">{}</a><div class=\"small mono\">{}</div>{}</td><td class=\"rate\">{rates}</td><td class=\"small\">{}</td><td>{retries}</td><td>{}<div class=\"small muted\">streak {}{}</div></td></tr>",
        link(j.url.as_deref(), &j.name),
        esc(j.prow_job.as_deref().unwrap_or("")),
        mode.map(|m| class_badge(m.class.class)).unwrap_or_default(),
        esc(mode.map(|m| m.root_cause.as_str()).unwrap_or("")),
        esc(mode.map(|m| m.root_cause.as_str()).unwrap_or("")),
        esc(&mode.map(|m| m.summary.chars().take(160).collect::<String>()).unwrap_or_default()),
        if j.modes.len() > 1 { format!("<div class=\"small\">+{} more mode(s)</div>", j.modes.len() - 1) } else { String::new() },
        esc(&trend),
        chips(&j.streak.pattern),
        j.streak.length,
        j.streak.originating.as_ref().map(|t| format!(", since {}", esc(t))).unwrap_or_default()
    );
}

/// One failed job in detail: its evidence, modes, failing tests, attempts and aggregated runs.
fn job_detail(o: &mut String, j: &FailedJob) {
    let _ = write!(o, "<details class=\"job-detail\" open><summary>{} <span class=\"muted small\">— {} failure mode(s)</span></summary>", esc(&j.name), j.modes.len());
    let junit = match &j.junit {
        None => "no evidence found for the run".to_string(),
        Some(JunitState::Found { files }) => format!("{files} JUnit file(s), {} test case(s)", j.tests_total),
        Some(JunitState::Partial { files, problems }) => {
            format!("{files} JUnit file(s) read, some unreadable ({}): counts are a lower bound", problems.join("; "))
        }
        Some(JunitState::Missing) => "no JUnit: the tests may never have run (unknown, not green)".into(),
        Some(JunitState::Unparseable { problems }) => format!("JUnit unparseable: {}", problems.join("; ")),
        Some(JunitState::Empty { .. }) => "JUnit export (results.json) empty: insufficient evidence, not green".into(),
    };
    let _ = write!(
        o,
        "<p class=\"small\">Evidence: {}. Platform: {}. RHCOS: {}.</p>",
        esc(&junit),
        esc(j.platform.as_deref().unwrap_or("unknown")),
        esc(&j.rhcos)
    );
    job_modes(o, j);
    job_tests(o, j);
    job_attempts(o, j);
    job_aggregation(o, j);
    o.push_str("</details>");
}

/// The failure modes of a job, each with its onset and lines.
fn job_modes(o: &mut String, j: &FailedJob) {
    for m in &j.modes {
        let _ = write!(
            o,
            "<h3>{} <span class=\"mono\">{}</span></h3><p class=\"small\">{} — {}. First failed in <b>{}</b> ({} payload(s)); {}.{}</p>",
            class_badge(m.class.class),
            esc(&m.summary),
            esc(&m.root_cause),
            esc(&m.class.reason),
            esc(&m.first_failed_in),
            m.payloads_failing,
            esc(&m.before.describe()),
            if j.streak.originating.as_deref().is_some_and(|o| o != m.first_failed_in) {
                format!(
                    " The job-level streak starts at {}: the earlier failures are a different failure mode.",
                    esc(j.streak.originating.as_deref().unwrap_or(""))
                )
            } else {
                String::new()
            }
        );
        o.push_str(&log_block(&m.lines, 8));
    }
}

/// The failing tests of a job with their onsets.
fn job_tests(o: &mut String, j: &FailedJob) {
    if !j.tests.is_empty() {
        o.push_str("<table><tr><th>Failing test</th><th>First failed in</th><th>Payloads</th><th>Where</th></tr>");
        for t in &j.tests {
            let _ = write!(
                o,
                "<tr><td class=\"small\">{}</td><td class=\"mono\">{}{}</td><td>{}</td><td class=\"small mono\">{}</td></tr>",
                esc(&t.name),
                esc(&t.first_failed_in),
                if t.onset_certain { "" } else { " <span class=\"muted\">(or earlier)</span>" },
                t.payloads_failing,
                link(t.at.url.as_deref(), &t.at.cite())
            );
        }
        o.push_str("</table>");
    }
}

/// The earlier attempts of a job.
fn job_attempts(o: &mut String, j: &FailedJob) {
    if !j.previous_attempts.is_empty() {
        o.push_str("<p class=\"small\">Previous attempts: ");
        let v: Vec<String> = j
            .previous_attempts
            .iter()
            .map(|p| {
                format!(
                    "{} ({})",
                    link(Some(&p.url), p.url.rsplit('/').next().unwrap_or(&p.url)),
                    match p.same_failure {
                        Some(true) => "same failure",
                        Some(false) => "different failure",
                        None => "no evidence",
                    }
                )
            })
            .collect();
        o.push_str(&v.join(", "));
        o.push_str("</p>");
    }
}

/// The aggregated runs of a job, and its tests that do not gate it.
fn job_aggregation(o: &mut String, j: &FailedJob) {
    if let Some(agg) = &j.aggregated {
        let _ = write!(o, "<p class=\"small\">Aggregated job over: {}.</p>", esc(&agg.underlying_jobs.join(", ")));
        for t in &agg.failed_tests {
            let _ = write!(
                o,
                "<p class=\"small\"><b>{}</b>: {} — failed runs: {}</p>",
                esc(&t.name),
                esc(t.verdict.as_ref().map(|v| v.sentence.as_str()).unwrap_or("failed")),
                t.failures.iter().map(|r| link(Some(&r.human_url), &r.job_run_id)).collect::<Vec<_>>().join(", ")
            );
        }
    }
    if !j.informing_tests.is_empty() || !j.flaky_tests.is_empty() {
        let _ = write!(
            o,
            "<p class=\"small muted\">Not gating: {} informing test(s), {} flake(s) (failed and passed in the run).</p>",
            j.informing_tests.len(),
            j.flaky_tests.len()
        );
    }
}

/// The root causes with their evidence.
fn root_causes_section(o: &mut String, a: &PayloadAnalysis) {
    // 4. Root causes.
    section(o, 4, "root-causes", "Root causes");
    if a.root_causes.is_empty() {
        o.push_str("<div class=\"card\">Nothing failed.</div>");
    }
    for r in &a.root_causes {
        let _ = write!(
            o,
            "<div class=\"rc {}\" id=\"{}\"><h3>{} · {}</h3><p>{} {} <span class=\"muted\">signature {}</span></p><p class=\"small\">Jobs: {}. First failed in <b>{}</b>.{}</p>",
            r.class.class.key(),
            esc(&r.id),
            esc(&r.id),
            esc(&r.title),
            class_badge(r.class.class),
            esc(&r.class.reason),
            esc(&r.signature.id),
            esc(&r.jobs.join(", ")),
            esc(&r.first_failed_in),
            if r.is_systemic { " <span class=\"badge b-amber\">systemic</span>" } else { "" }
        );
        if let Some(e) = &r.class.evidence {
            let _ = write!(
                o,
                "<p class=\"small\">Classified from {} <span class=\"mono\">{}</span></p>",
                link(e.at.url.as_deref(), &e.at.cite()),
                esc(&e.text.chars().take(300).collect::<String>())
            );
        }
        let lines: Vec<LogLine> =
            r.evidence.iter().map(|(j, l)| LogLine { text: format!("[{j}] {}", l.text), at: l.at.clone() }).collect();
        o.push_str(&log_block(&lines, 10));
        symptoms(o, r);
        if let Some(why) = &r.apart {
            let _ = write!(o, "<p class=\"small\"><b>Stands apart:</b> {}</p>", esc(why));
        }
        if let Some(n) = &r.no_candidate_reason {
            let _ = write!(o, "<p class=\"small\"><b>No suspect:</b> {}</p>", esc(n));
        }
        if r.kubelet_skew {
            o.push_str("<p class=\"small\"><b>Kubelet version skew</b> detected: a rebase is not reverted for it; the rebuilt kubelet arrives with a later RHCOS.</p>");
        }
        o.push_str("</div>");
    }
    o.push_str("</section>\n");
}

/// The suspects of each root cause with their itemized rubric, and the candidates scored 0.
fn suspects_section(o: &mut String, a: &PayloadAnalysis) {
    // 5. Suspects.
    section(o, 5, "suspects", "Suspect changes");
    let _ = write!(
        o,
        "<p class=\"small muted\">{} candidate change(s) scored ({} (job, failure mode, candidate) tuples). Only suspects with a score above 0 are listed; the rubric is itemized for each.</p>",
        a.candidates.len(),
        a.scores.len()
    );
    if a.suspects.is_empty() {
        o.push_str("<div class=\"card\">No candidate has any link to a failure.</div>");
    }
    for r in &a.root_causes {
        let sus: Vec<&Suspect> = a.suspects.iter().filter(|s| s.root_cause == r.id).collect();
        if sus.is_empty() {
            continue;
        }
        let _ = write!(o, "<div class=\"card\"><h3>{} · {}</h3><table><tr><th>#</th><th>Change</th><th>Component</th><th>Score</th><th>Rubric</th><th>Action</th></tr>", esc(&r.id), esc(&r.title));
        for s in sus {
            suspect_row(o, a, s);
        }
        o.push_str("</table>");
        ties(o, a, r);
        o.push_str("</div>");
    }
    let zero: Vec<&Candidate> =
        a.candidates.iter().filter(|c| !a.suspects.iter().any(|s| s.candidate == c.id)).collect();
    if !zero.is_empty() {
        let _ = write!(
            o,
            "<details class=\"card\"><summary>{} candidate(s) scored 0</summary><ul class=\"items small\">",
            zero.len()
        );
        for c in zero {
            let note = a.scores.iter().find(|s| s.candidate == c.id).and_then(|s| s.note.clone()).unwrap_or_default();
            let _ = write!(
                o,
                "<li>{} — {} <span class=\"muted\">({})</span></li>",
                cand_link(c),
                esc(&c.title),
                esc(&note)
            );
        }
        o.push_str("</ul></details>");
    }
    o.push_str("</section>\n");
}

fn context_section(o: &mut String, a: &PayloadAnalysis) {
    // 6. Broader context.
    section(o, 6, "context", "Broader context");
    o.push_str("<div class=\"card\">");
    let systemic: Vec<&RootCause> = a.root_causes.iter().filter(|r| r.is_systemic).collect();
    if systemic.is_empty() {
        o.push_str("<p>No root cause shows up beyond its failed blocking jobs.</p>");
    }
    for r in systemic {
        systemic_root_cause(o, r);
    }
    if !a.informing_failures.is_empty() {
        let _ = write!(o, "<h3>Failed informing / async jobs ({})</h3><table><tr><th>Job</th><th>Kind</th><th>Signature</th><th>Shares</th></tr>", a.informing_failures.len());
        for f in &a.informing_failures {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td class=\"small mono\">{}</td><td>{}</td></tr>",
                link(f.url.as_deref(), &f.name),
                esc(&f.lifecycle),
                esc(f.signature.as_ref().map(|s| s.text.as_str()).unwrap_or("no evidence")),
                f.root_cause.as_ref().map(|r| format!("<a href=\"#{0}\">{0}</a>", esc(r))).unwrap_or_default()
            );
        }
        o.push_str("</table><p class=\"small muted\">Informing jobs do not gate the payload; they show how far a failure reaches.</p>");
    }
    retried_jobs(o, a);
    if !a.pending_jobs.is_empty() {
        let _ = write!(o, "<p class=\"small\">Still pending: {}.</p>", esc(&a.pending_jobs.join(", ")));
    }
    o.push_str("</div></section>\n");
}

/// The symptoms of a root cause that groups several signatures.
fn symptoms(o: &mut String, r: &RootCause) {
    if r.symptoms.is_empty() {
        return;
    }
    let tests: usize = r.symptoms.iter().map(|s| s.tests.len()).sum();
    let _ = write!(
        o,
        "<details class=\"small\"><summary>One cause, {} symptoms ({tests} failing tests in the same jobs since the same payload, failing the same way)</summary><ul class=\"items\">",
        r.symptoms.len()
    );
    for s in &r.symptoms {
        let named: Vec<String> = s.tests.iter().take(5).map(|t| esc(t)).collect();
        let more = if s.tests.len() > 5 { format!(" and {} more", s.tests.len() - 5) } else { String::new() };
        let _ = write!(o, "<li><span class=\"mono\">{}</span> — {}{more}</li>", esc(&s.line), named.join("; "));
    }
    o.push_str("</ul></details>");
}

/// The ties among a root cause's suspects, with what would separate them.
fn ties(o: &mut String, a: &PayloadAnalysis, r: &RootCause) {
    if r.ties.is_empty() {
        return;
    }
    o.push_str("<p class=\"small\"><b>Ties</b> (<code>=</code>: the same score from equally strong evidence; their order says nothing):</p><ul class=\"items small\">");
    for t in &r.ties {
        let names: Vec<String> =
            t.candidates.iter().map(|id| a.candidate(id).map(cand_link).unwrap_or_else(|| esc(id))).collect();
        let _ = write!(
            o,
            "<li>rank {} at {}: {} — {}{}</li>",
            t.rank,
            t.score,
            names.join(", "),
            esc(&t.separate_by),
            if t.bisect_between { "; <b>bisect between them</b>" } else { "" }
        );
    }
    o.push_str("</ul>");
}

/// One suspect: the change, its score, its itemized rubric and verbatim match, its action.
fn suspect_row(o: &mut String, a: &PayloadAnalysis, s: &Suspect) {
    let Some(c) = a.candidate(&s.candidate) else { return };
    let kind = match c.kind {
        CandidateKind::Pr => "PR",
        CandidateKind::CiConfig => "CI config",
        CandidateKind::RhcosRpm => "RHCOS RPM",
    };
    let mut items = String::from("<ul class=\"items small\">");
    for i in &s.score.items {
        let _ = write!(items, "<li><code>{}: +{}</code> — {}</li>", i.signal.name(), i.points, esc(&i.evidence));
    }
    let _ = write!(items, "<li><code>total: {}</code></li></ul>", s.score.total);
    if let Some(m) = &s.score.error_match {
        let _ = write!(
            items,
            "<div class=\"match\"><span class=\"k\">failure</span><code>{}  {}</code><span class=\"k\">diff</span><code>{}:{}  +{}</code></div>",
            link(m.log.at.url.as_deref(), &m.log.at.cite()),
            esc(&m.log.text),
            esc(&m.diff_file),
            m.diff_line,
            esc(&m.diff_text)
        );
    }
    let _ = write!(
        o,
        "<tr><td>{}{}</td><td><span class=\"badge b-grey\">{kind}</span> {}<div class=\"small\">{}</div><div class=\"small muted\">in {}{}</div></td><td class=\"small\">{}</td><td>{}</td><td>{items}</td><td>{}<div class=\"small muted\">{}</div></td></tr>",
        s.rank,
        if s.tied_with.is_empty() { "" } else { "=" },
        cand_link(c),
        esc(&c.title),
        esc(c.payload.as_deref().unwrap_or("")),
        if c.kind == CandidateKind::Pr && !c.diff_available { " · no diff available" } else { "" },
        esc(&c.component),
        band_badge(s.score.total),
        action_badge(s.action),
        esc(&s.action_reason)
    );
}

/// A systemic root cause: its platforms and where else its signature shows.
fn systemic_root_cause(o: &mut String, r: &RootCause) {
    let mut plats: Vec<String> = r.platforms.clone();
    plats.extend(r.systemic.iter().filter_map(|h| h.platform.clone()));
    plats.sort();
    plats.dedup();
    let _ = write!(
        o,
        "<p><b><a href=\"#{0}\">{0}</a></b> reaches beyond one job: {1} failed blocking job(s) on {2} platform(s) ({3}){4}.</p>",
        esc(&r.id),
        r.jobs.len(),
        plats.len(),
        esc(&plats.join(", ")),
        if r.systemic.is_empty() { String::new() } else { format!(", and the same signature in {} informing / async job(s)", r.systemic.len()) }
    );
    if !r.systemic.is_empty() {
        o.push_str("<ul class=\"items small\">");
        for h in &r.systemic {
            let _ = write!(
                o,
                "<li>{} <span class=\"badge b-blue\">{}</span> {}</li>",
                link(h.url.as_deref(), &h.job),
                esc(&h.lifecycle),
                h.line
                    .as_ref()
                    .map(|l| format!("<span class=\"mono\">{}: {}</span>", esc(&l.at.cite()), esc(&l.text)))
                    .unwrap_or_default()
            );
        }
        o.push_str("</ul>");
    }
}

/// Blocking jobs that passed on a retry, with their failed attempts.
fn retried_jobs(o: &mut String, a: &PayloadAnalysis) {
    if !a.passed_on_retry.is_empty() {
        let _ = write!(
            o,
            "<h3>Blocking jobs that passed on a retry ({})</h3><ul class=\"items small\">",
            a.passed_on_retry.len()
        );
        for r in &a.passed_on_retry {
            let sigs: Vec<String> = r
                .failed_attempts
                .iter()
                .map(|p| {
                    format!(
                        "{}: <span class=\"mono\">{}</span>",
                        link(Some(&p.url), p.url.rsplit('/').next().unwrap_or(&p.url)),
                        esc(p.signature.as_ref().map(|s| s.text.as_str()).unwrap_or("no evidence"))
                    )
                })
                .collect();
            let _ = write!(
                o,
                "<li>{} — {} retr{}; failed attempt(s) {}</li>",
                link(r.url.as_deref(), &r.name),
                r.retries,
                if r.retries == 1 { "y" } else { "ies" },
                sigs.join("; ")
            );
        }
        o.push_str("</ul><p class=\"small muted\">A failure that clears on a retry of the same payload is flake evidence, not a regression.</p>");
    }
}

/// The action taken and the force-accept conditions.
fn action_section(o: &mut String, a: &PayloadAnalysis) {
    // 7. Action taken.
    section(o, 7, "action", "Action taken");
    let _ = write!(
        o,
        "<div class=\"card\"><p><b>{}</b> — {}</p>",
        esc(a.decision.verdict.as_str()),
        esc(&a.decision.summary)
    );
    let acts: Vec<&Suspect> = a.suspects.iter().filter(|s| s.action != CandidateAction::ReportOnly).collect();
    if !acts.is_empty() {
        o.push_str("<ul class=\"items\">");
        for s in acts {
            let c = a.candidate(&s.candidate);
            let _ = write!(
                o,
                "<li>{} {} — {} ({})</li>",
                action_badge(s.action),
                c.map(cand_link).unwrap_or_default(),
                esc(&s.action_reason),
                esc(&s.root_cause)
            );
        }
        o.push_str("</ul>");
    } else {
        o.push_str("<p class=\"small\">No revert staged and no bisection started: no candidate is linked to a failure strongly enough.</p>");
    }
    let _ = write!(
        o,
        "<p><b>Force-accept:</b> {}</p><ul class=\"items small\">",
        if a.decision.force_accept.recommended { "recommended" } else { "not recommended" }
    );
    for r in &a.decision.force_accept.reasons {
        let _ = write!(o, "<li>{}</li>", esc(r));
    }
    o.push_str("</ul></div></section>\n");
}

/// The recommendations with their evidence.
fn recommendations_section(o: &mut String, a: &PayloadAnalysis) {
    // 8. Recommendations.
    section(o, 8, "recommendations", "Recommendations");
    o.push_str("<div class=\"card\"><ol class=\"recs\">");
    if a.recommendations.is_empty() {
        o.push_str("<li>Nothing to do.</li>");
    }
    for r in &a.recommendations {
        let _ = write!(o, "<li>{}", esc(&r.text));
        if !r.evidence.is_empty() {
            o.push_str("<ul class=\"items small mono\">");
            for e in &r.evidence {
                let _ = write!(o, "<li>{}</li>", esc(e));
            }
            o.push_str("</ul>");
        }
        o.push_str("</li>");
    }
    o.push_str("</ol></div></section>\n");
}

/// The data gaps and the method.
fn data_gaps_section(o: &mut String, a: &PayloadAnalysis) {
    // 9. Data gaps and method.
    section(o, 9, "data-gaps", "Data gaps and method");
    o.push_str("<div class=\"card\">");
    if a.data_gaps.is_empty() {
        o.push_str("<p class=\"small\">No data gap: every input the analysis asked for was available.</p>");
    } else {
        o.push_str("<ul class=\"items small\">");
        for g in &a.data_gaps {
            let _ = write!(o, "<li>{}</li>", esc(g));
        }
        o.push_str("</ul>");
    }
    o.push_str("<p class=\"small muted\">Scoring rubric per (failed job, failure mode, candidate), capped at 100: new failure mode +30; component exclusivity +30/+20/+10; error-message match +40 only for a string or symbol of the failure found verbatim in an added diff line (same code path +20, same subsystem +10); multi-job correlation +10; presubmit coverage gap +10. Infrastructure, flakes and informing-only failures give candidates nothing. ≥ 85 stage a revert, 60-84 bisect, below 60 report only; RHCOS RPM changes and a rebase's kubelet skew are never reverted.</p>");
    o.push_str("</div></section>\n");
}

/// The footer and the end of the document.
fn footer(o: &mut String, a: &PayloadAnalysis) {
    let _ = write!(
        o,
        "<footer>Generated by citriage from {}. Same inputs, same report.</footer>\n</main>\n</body>\n</html>\n",
        esc(&a.payload.source)
    );
}
