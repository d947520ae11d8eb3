//! The HTML pages, built as strings from the data the API also serves. Every piece of
//! text that came from CI (job names, test names, failure texts, sources, stored
//! documents) goes through [`esc`] or [`pct`]; nothing here emits scripts.

use crate::data::{ClusterDetail, ClusterList, ClusterRow, JobDetail, PayloadStream, ReportEntry, TestHistory};
use crate::error::WebError;
use crate::html::{esc, layout, opt_time, pct, time, time_text};
use crate::search::SearchResult;
use crate::summary::{NameCount, Overview};
use crate::svg::{acceptance_chart, failures_chart, pass_rate_chart, sparkline};
use citriage_model::Day;
use citriage_patterns::normalize::Profile;
use std::collections::BTreeMap;
use std::fmt::Write;

fn rate(r: Option<f64>) -> String {
    r.map(|r| format!("{:.1}%", r * 100.0)).unwrap_or_else(|| "-".into())
}

fn job_link(job: &str) -> String {
    format!("<a href=\"/jobs/{}\">{}</a>", pct(job.strip_prefix("pr:").unwrap_or(job)), esc(job))
}

/// A test's link, with the flags its name carries (a harness step counted as a test).
fn test_link(test: &str) -> String {
    format!("<a href=\"/tests?name={}\">{}</a>{}", pct(test), esc(test), flags_for(test))
}

fn cluster_href(profile: &str, stable_id: &str) -> String {
    format!("/clusters/{}/{}", pct(profile), pct(stable_id))
}

pub fn error_page(e: &WebError) -> String {
    let title = match e {
        WebError::BadRequest(_) => "Bad request",
        WebError::NotFound(_) => "Not found",
        WebError::Internal(_) => "Server error",
    };
    layout(title, "", &alert(e))
}

/// An error message box (never the history strip's `error` cell colour).
fn alert(e: &WebError) -> String {
    let what = match e {
        WebError::BadRequest(_) => "This request cannot be answered",
        WebError::NotFound(_) => "Not found",
        WebError::Internal(_) => "Server error",
    };
    format!("<div class=\"alert\" role=\"alert\"><b>{what}:</b> {}</div>\n", esc(&e.to_string()))
}

/// A page with an error box under its title: the page keeps its form and the user's
/// input, so the request can be fixed in place.
pub fn with_alert(page: String, e: &WebError) -> String {
    match page.find("</h1>\n") {
        Some(i) => {
            let at = i + "</h1>\n".len();
            format!("{}{}{}", &page[..at], alert(e), &page[at..])
        }
        None => page,
    }
}

/// At most `max` bytes of `s`, cut at a word boundary (with "…" when cut).
fn clip_words(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let head = clip(s, max);
    let cut = head.rfind(char::is_whitespace).filter(|&i| i > max / 2).unwrap_or(head.len());
    format!("{}…", head[..cut].trim_end())
}

fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// The overview's lead: what changed and what is broken now.
fn changes(b: &mut String, c: &crate::data::Changes) {
    b.push_str("<section class=\"changes\"><h2>What changed</h2>");
    match c.drift_window {
        None => b.push_str(
            "<p class=\"meta\">No clustering run is stored: <code>citriage cluster</code> finds the patterns.</p>",
        ),
        Some((from, to)) if c.moving.is_empty() => {
            let _ =
                write!(b, "<p>No pattern with two failures or more is new or growing ({from} → {to}). <a href=\"/drift\">Pattern drift</a></p>");
        }
        Some((from, to)) => {
            let _ = write!(
                b,
                "<p class=\"meta\">New and growing failure patterns with two failures or more, {from} → {to}, most failures first (<a href=\"/drift\">all drift</a>).</p>\
                 <table class=\"moving\"><tr><th>pattern</th><th>change</th><th>failures before → now</th><th>failure text</th></tr>"
            );
            for d in &c.moving {
                let _ = write!(
                    b,
                    "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"num\">{} → {}</td><td><code>{}</code></td></tr>",
                    cluster_href(&d.profile, &d.stable_id),
                    esc(&d.stable_id),
                    esc(d.kind.name()),
                    d.before,
                    d.after,
                    esc(clip(d.text.lines().next().unwrap_or(""), 160))
                );
            }
            b.push_str("</table>");
        }
    }
    if let Some(y) = &c.since_yesterday {
        let _ = write!(
            b,
            "<p class=\"since-yesterday\">Since yesterday ({} → {}): <b>{}</b> new and <b>{}</b> growing {} ({} {} on {}), {} shrinking, {} gone (<a href=\"/drift?span=1\">day-over-day drift</a>).</p>",
            y.day.plus(-1),
            y.day,
            y.new,
            y.growing,
            plural(y.new + y.growing, "pattern", "patterns"),
            y.failures,
            plural(y.failures as usize, "failure", "failures"),
            y.day,
            y.shrinking,
            y.gone
        );
    }
    if c.failing_jobs_total > 0 {
        let _ = write!(
            b,
            "<h3>Failing now: {} {}, {} release-blocking</h3><p class=\"meta\">Jobs whose newest finished build failed or errored: those on a release-blocking TestGrid board first, then most failed builds (<a href=\"/jobs?sort=failing&amp;group=dashboard\">all jobs by dashboard</a>).</p><ul class=\"failing-now\">",
            c.failing_jobs_total,
            plural(c.failing_jobs_total, "job", "jobs"),
            c.failing_blocking_total
        );
        for j in &c.failing_jobs {
            let _ = write!(
                b,
                "<li>{}{} · {} of {} builds failed or errored · pass rate {}</li>",
                job_link(&j.job),
                if j.release_blocking { " <span class=\"badge blocking\">release-blocking</span>" } else { "" },
                j.failed + j.errored,
                j.builds,
                rate(j.pass_rate)
            );
        }
        b.push_str("</ul>");
    }
    for sc in &c.severity {
        let _ = write!(
            b,
            "<h3>Severity of the {} snapshot of {}: the dashboard's and corrected</h3><p class=\"meta\">{} of {} jobs rated from their stored builds by citriage's corrected figures (failures: days since the last pass while failing; flakes: the worse of pass rate and corrected consistency); the others keep the dashboard's rating.</p>\
             <table class=\"severity-compare\"><tr><th>severity</th><th>dashboard</th><th>corrected</th></tr>",
            esc(&sc.dataset),
            sc.date,
            sc.corrected_jobs,
            sc.jobs
        );
        for (sev, dash, corr) in &sc.rows {
            let _ = write!(
                b,
                "<tr><td><span class=\"sev sev-{}\">{}</span></td><td class=\"num\">{}</td><td class=\"num\"><b>{}</b></td></tr>",
                esc(sev),
                esc(sev),
                dash,
                corr
            );
        }
        b.push_str("</table>");
        if !sc.worse.is_empty() {
            b.push_str(
                "<p class=\"meta\">Rated at least two levels worse than the dashboard says:</p><ul class=\"worse\">",
            );
            for (job, d, cs, figure) in &sc.worse {
                let _ = write!(
                    b,
                    "<li>{} · dashboard <span class=\"sev sev-{}\">{}</span> → corrected <span class=\"sev sev-{}\">{}</span> ({})</li>",
                    job_link(job.strip_prefix("pr:").unwrap_or(job)),
                    esc(d),
                    esc(d),
                    esc(cs),
                    esc(cs),
                    esc(figure)
                );
            }
            b.push_str("</ul>");
        }
    }
    if !c.flagged.is_empty() {
        b.push_str("<h3>Where the dashboards' figures mislead</h3><p class=\"meta\">Flagged by the newest triage reports with the build data behind them.</p><ul>");
        for (kind, meaning, jobs) in &c.flagged {
            let shown: Vec<String> = jobs.iter().take(8).map(|j| job_link(j)).collect();
            let _ = write!(
                b,
                "<li><span class=\"flag\" title=\"{}\">{}</span> {} {}: {}{}</li>",
                esc(meaning),
                esc(kind),
                jobs.len(),
                plural(jobs.len(), "job", "jobs"),
                shown.join(", "),
                if jobs.len() > shown.len() {
                    format!(" and {} more", jobs.len() - shown.len())
                } else {
                    String::new()
                }
            );
        }
        b.push_str("</ul>");
    }
    if c.rejected_total > 0 {
        let _ = write!(b, "<h3>Payloads rejected: {}</h3><ul>", c.rejected_total);
        for (tag, stream, verdict) in &c.rejected {
            let _ = write!(
                b,
                "<li><a href=\"/payloads/{}\">{}</a> ({}){}</li>",
                pct(tag),
                esc(tag),
                esc(stream),
                verdict.as_ref().map(|v| format!(": {}", esc(v))).unwrap_or_default()
            );
        }
        b.push_str("</ul>");
    }
    b.push_str("</section>\n");
}

pub fn overview(o: &Overview, c: &crate::data::Changes) -> String {
    let mut b = String::new();
    changes(&mut b, c);
    let clusters: usize = o.clusters.values().next().copied().unwrap_or(0);
    let _ = writeln!(
        b,
        "<section class=\"tiles\"><div class=\"tile\"><b>{}</b> builds</div><div class=\"tile\"><b>{}</b> jobs with builds</div>\
         <div class=\"tile\"><b>{}</b> test results in the last {} days</div><div class=\"tile\"><a href=\"/clusters\"><b>{}</b> failure clusters</a></div>\
         <div class=\"tile\"><a href=\"/reports\"><b>{}</b> stored documents (reports, payload analyses, checks)</a></div></section>",
        o.builds, o.build_jobs, o.window_test_results, o.window_days, clusters, o.documents
    );
    if o.snapshots.is_empty() {
        b.push_str("<p>No dashboard snapshots are stored.</p>\n");
    }
    for s in &o.snapshots {
        let _ = writeln!(
            b,
            "<section class=\"snapshot\" id=\"snapshot-{}\"><h2>{} snapshot of {}</h2><p>{} jobs, from <code>{}</code></p>",
            esc(s.dataset.as_str()),
            esc(s.dataset.title()),
            esc(&s.date.to_string()),
            s.jobs,
            esc(&s.source)
        );
        b.push_str("<div class=\"cols\"><table class=\"severity\"><tr><th>severity</th><th>jobs</th></tr>");
        for c in &s.by_severity {
            let _ = write!(
                b,
                "<tr><td><span class=\"sev sev-{}\">{}</span></td><td class=\"num\">{}</td></tr>",
                esc(&c.name),
                esc(&c.name),
                c.count
            );
        }
        b.push_str("</table><table class=\"category\"><tr><th>category</th><th>jobs</th></tr>");
        for c in &s.by_category {
            let _ = write!(
                b,
                "<tr><td><a href=\"/jobs?group=category#group-{}\">{}</a></td><td class=\"num\">{}</td></tr>",
                pct(&c.name),
                esc(&c.name),
                c.count
            );
        }
        b.push_str("</table></div>\n");
        match &s.drift {
            None => b.push_str("<p class=\"drift\">No earlier snapshot to compare with.</p>"),
            Some(d) => {
                let _ = write!(
                    b,
                    "<p class=\"drift\">Since {}: <b>{}</b> jobs added, <b>{}</b> removed.</p>",
                    esc(&d.prior_date.to_string()),
                    d.added.len(),
                    d.removed.len()
                );
                for (label, jobs) in [("added", &d.added), ("removed", &d.removed)] {
                    if jobs.is_empty() {
                        continue;
                    }
                    let _ = write!(b, "<details><summary>{label} ({})</summary><ul>", jobs.len());
                    for j in jobs.iter().take(100) {
                        let _ = write!(b, "<li><code>{}</code></li>", esc(j));
                    }
                    b.push_str("</ul></details>");
                }
            }
        }
        b.push_str("</section>\n");
    }
    if !o.newest_clusters.is_empty() {
        b.push_str(
            "<h2>Newest patterns</h2><p class=\"meta\">First seen most recently, whatever their size.</p><table class=\"clusters\"><tr><th>first seen</th><th>failures</th><th>failure text</th></tr>",
        );
        for c in &o.newest_clusters {
            let _ = write!(
                b,
                "<tr><td>{}</td><td class=\"num\"><a href=\"{}\">{}</a></td><td><pre>{}</pre></td></tr>",
                esc(&time(c.first_seen)),
                cluster_href(&c.profile, &c.stable_id),
                c.total,
                esc(clip(if c.text.is_empty() { &c.key } else { &c.text }, 400))
            );
        }
        b.push_str("</table>\n");
    }
    layout("Overview", "/", &b)
}

pub fn jobs(l: &crate::data::JobsList, p: &BTreeMap<String, String>) -> String {
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/jobs\">{}{}{}{}<button type=\"submit\">Filter</button></form>\n",
        input("q", "name contains", p),
        input("re", "name regex", p),
        select("sort", "sort by", crate::data::JOB_SORTS, &l.sort),
        select("group", "group by", crate::data::JOB_GROUPS, &l.group),
    );
    if l.total == 0 {
        if l.snapshot_groups.is_empty() {
            b.push_str("<p>No builds and no dashboard snapshots are stored: <code>citriage fetch</code> stores builds, <code>citriage import</code> snapshots.</p>");
        } else {
            let _ = write!(
                b,
                "<p class=\"meta\">No builds are stored (<code>citriage fetch</code> stores them); these are the jobs of the stored dashboard snapshots: {} of {} {} (a job listed on both dashboards has two).</p>",
                l.matching,
                l.snapshot_total,
                plural(l.snapshot_total, "entry", "entries")
            );
            for g in &l.snapshot_groups {
                let _ = write!(
                    b,
                    "<section class=\"group\" id=\"group-{}\"><h2>{} <span class=\"growth\">{} {}</span></h2><table class=\"jobs snapshot-jobs\"><tr><th>job</th><th>dashboard</th><th>severity</th><th>figure</th></tr>",
                    pct(&g.name),
                    esc(&g.name),
                    g.jobs.len(),
                    plural(g.jobs.len(), "entry", "entries")
                );
                for (ds, j) in &g.jobs {
                    let _ = write!(
                        b,
                        "<tr><td><code>{}</code></td><td>{}</td><td><span class=\"sev sev-{}\">{}</span></td><td>{}</td></tr>",
                        esc(&j.job),
                        esc(ds),
                        esc(&j.severity),
                        esc(&j.severity),
                        esc(&j.figure)
                    );
                }
                b.push_str("</table></section>");
            }
        }
        return layout("Jobs", "/jobs", &b);
    }
    let _ = write!(
        b,
        "<p class=\"meta\">{} of {} {} · {} {} failing now (newest finished build failed or errored)</p>",
        l.matching,
        l.total,
        plural(l.total, "job", "jobs"),
        l.groups.iter().map(|g| g.failing).sum::<usize>(),
        if l.groups.iter().map(|g| g.failing).sum::<usize>() == 1 { "is" } else { "are" }
    );
    for g in &l.groups {
        let tags: String = g.tags.iter().map(|t| format!(" <span class=\"badge\">{}</span>", esc(t))).collect();
        let _ = write!(
            b,
            "<section class=\"group\" id=\"group-{}\"><h2>{}{tags} <span class=\"growth\">{} {}, {} failing now</span></h2>",
            pct(&g.name),
            esc(&g.name),
            g.jobs.len(),
            plural(g.jobs.len(), "job", "jobs"),
            g.failing
        );
        b.push_str(
            "<table class=\"jobs\"><tr><th>job</th><th>builds</th><th>pass</th><th>fail</th><th>error</th>\
             <th>aborted</th><th title=\"over every stored build of the job\">pass rate (all stored)</th><th>last build</th></tr>",
        );
        for j in &g.jobs {
            let _ = write!(
                b,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td><span class=\"dot {}\"></span>{}</td></tr>",
                job_cell(j),
                j.builds,
                j.passed,
                j.failed,
                j.errored,
                j.aborted,
                rate(j.pass_rate),
                esc(&j.last_outcome),
                esc(&opt_time(j.last_started))
            );
        }
        b.push_str("</table></section>");
    }
    layout("Jobs", "/jobs", &b)
}

/// A job's link with where TestGrid shows it (tab and dashboards) and a
/// release-blocking badge.
fn job_cell(j: &crate::summary::JobSummary) -> String {
    let mut s = job_link(&j.job);
    if j.release_blocking {
        s.push_str(" <span class=\"badge blocking\">release-blocking</span>");
    }
    if !j.dashboards.is_empty() {
        let _ = write!(
            s,
            "<div class=\"meta testgrid\">TestGrid: {}{}</div>",
            esc(&j.dashboards.join(", ")),
            j.tab.as_deref().map(|t| format!(" · tab <code>{}</code>", esc(t))).unwrap_or_default()
        );
    }
    s
}

/// `one` or `many` by count ("1 job", "2 jobs").
fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

const LEGEND: &str =
    "<p class=\"legend\"><span class=\"cell-l pass\"></span>pass <span class=\"cell-l flake\"></span>flake \
    (passed after a failed attempt) <span class=\"cell-l fail\"></span>fail <span class=\"cell-l error\"></span>error \
    <span class=\"cell-l aborted\"></span>aborted <span class=\"cell-l unknown\"></span>running or unknown</p>";

pub fn job(j: &JobDetail) -> String {
    let s = &j.summary;
    let mut b = format!(
        "<p class=\"summary\">{} builds: {} passed, {} failed, {} errored, {} aborted; pass rate <b>{}</b> \
         over every stored build, {} to {} (passed over passed, failed and errored; <code>metrics</code> \
         figures use their own window, which they name).</p>\n",
        s.builds,
        s.passed,
        s.failed,
        s.errored,
        s.aborted,
        rate(s.pass_rate),
        esc(&opt_time(s.first_started)),
        esc(&opt_time(s.last_started))
    );
    if !j.report_flags.is_empty() {
        b.push_str("<section class=\"notice report-flags\"><b>Flagged by the triage reports:</b><ul>");
        for f in &j.report_flags {
            let _ = write!(
                b,
                "<li><span class=\"flag\">{}</span> {} (<a href=\"/reports/{}\">{}</a>)</li>",
                esc(&f.kind),
                esc(&f.reality),
                pct_path(&f.report),
                esc(&f.report)
            );
        }
        b.push_str("</ul></section>\n");
    }
    b.push_str("<h2>History (newest first)</h2><div class=\"strip\">");
    for r in &j.builds {
        let _ = write!(
            b,
            "<a class=\"cell {}\" href=\"{}\" title=\"{} {} {}{}\"></a>",
            esc(&r.cell),
            esc(&build_href(&s.job, &r.build_id)),
            esc(&r.build_id),
            esc(&r.cell),
            esc(&opt_time(r.started)),
            if r.failed_tests > 0 { format!(", {} failed tests", r.failed_tests) } else { String::new() }
        );
    }
    b.push_str("</div>\n");
    b.push_str(LEGEND);
    b.push_str("<h2>Daily pass rate</h2>\n");
    b.push_str(&pass_rate_chart(&j.daily));
    let _ = write!(b, "\n<h2>Flake signals (last {} days)</h2>", j.window_days);
    match &j.figures {
        None => b.push_str("<p>No builds in the window.</p>"),
        Some(f) => {
            let _ = write!(
                b,
                "<table class=\"figures\"><tr><th>pass rate (sample)</th><td>{} ({} runs)</td></tr>\
                 <tr><th>failing streak</th><td>{} builds{}</td></tr><tr><th>last pass</th><td>{}</td></tr>\
                 <tr><th>commit consistency (kettle / corrected)</th><td>{} / {}</td></tr>",
                rate(f.pass_rate),
                f.sample,
                f.streak_builds,
                match f.streak_days {
                    Some(0) => " (all within a day)".to_string(),
                    Some(1) => ", 1 day".to_string(),
                    Some(d) => format!(", {d} days"),
                    None => String::new(),
                },
                f.last_pass.map(|d| d.to_string()).unwrap_or_else(|| "never in the stored history".into()),
                f.kettle_consistency.map(|c| format!("{c:.3}")).unwrap_or_else(|| "none (no commit ran twice)".into()),
                f.corrected_consistency
                    .map(|c| format!("{c:.3}"))
                    .unwrap_or_else(|| "none (no commit ran twice)".into()),
            );
            if !f.mass_failure_builds.is_empty() {
                let _ = write!(
                    b,
                    "<tr><th>mass-failure builds</th><td>{} (environment events, not counted as test flakes)</td></tr>",
                    f.mass_failure_builds.len()
                );
            }
            b.push_str("</table>");
            if !f.flags.is_empty() {
                b.push_str("<ul class=\"flags\">");
                for fl in &f.flags {
                    let _ = write!(b, "<li><span class=\"badge\">{}</span> {}</li>", esc(&fl.kind), esc(&fl.detail));
                }
                b.push_str("</ul>");
            }
            if j.flaky_tests.is_empty() {
                b.push_str("<p>No test's flake signals fired.</p>");
            } else {
                b.push_str(
                    "<table class=\"flaky\"><tr><th>flaky test</th><th>failed runs</th><th>flip rate</th><th>PFS</th><th>signals that fired</th></tr>",
                );
                for t in &j.flaky_tests {
                    let _ = write!(
                        b,
                        "<tr><td>{}</td><td class=\"num\">{}/{}</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.3}</td><td>",
                        test_link(&t.name),
                        t.failed_runs,
                        t.runs,
                        t.flip_rate,
                        t.pfs
                    );
                    for sig in &t.signals {
                        let _ =
                            write!(b, "<span class=\"badge\" title=\"{}\">{}</span> ", esc(&sig.detail), esc(sig.kind));
                    }
                    b.push_str("</td></tr>");
                }
                b.push_str("</table>");
            }
        }
    }
    if !j.failing_tests.is_empty() {
        b.push_str("\n<h2>Most failing tests</h2><table class=\"failing\"><tr><th>test</th><th>failures</th></tr>");
        for t in &j.failing_tests {
            let _ = write!(b, "<tr><td>{}</td><td class=\"num\">{}</td></tr>", test_link(&t.name), t.count);
        }
        b.push_str("</table>");
    }
    b.push_str(
        "\n<h2>Builds</h2><table class=\"builds\"><tr><th>build</th><th>result</th><th>started</th>\
         <th>duration</th><th>PR</th><th>failed tests</th></tr>",
    );
    for r in &j.builds {
        let _ = write!(
            b,
            "<tr><td><a href=\"{}\">{}</a> <a class=\"meta\" href=\"{}\">Prow</a></td><td><span class=\"dot {}\"></span>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
            esc(&build_href(&s.job, &r.build_id)),
            esc(&r.build_id),
            esc(&r.url),
            esc(&r.cell),
            esc(r.result.as_deref().unwrap_or("-")),
            esc(&opt_time(r.started)),
            r.duration.map(|d| format!("{}m", d / 60)).unwrap_or_else(|| "-".into()),
            r.pr.map(|p| format!("<a href=\"/prs/{p}\">#{p}</a>")).unwrap_or_default(),
            r.failed_tests
        );
    }
    b.push_str("</table>");
    layout(&s.job, "/jobs", &b)
}

fn input(name: &str, label: &str, p: &BTreeMap<String, String>) -> String {
    format!(
        "<label>{label} <input type=\"text\" name=\"{name}\" value=\"{}\"></label>",
        esc(p.get(name).map(String::as_str).unwrap_or(""))
    )
}

fn select(name: &str, label: &str, options: &[(&str, &str)], current: &str) -> String {
    let mut s = format!("<label>{label} <select name=\"{name}\">");
    for (value, text) in options {
        let sel = if *value == current { " selected" } else { "" };
        let _ = write!(s, "<option value=\"{}\"{sel}>{}</option>", esc(value), esc(text));
    }
    s.push_str("</select></label>");
    s
}

/// A failure text with the spans that differ between a cluster's failures marked
/// (k8s triage's `commonSpans`: alternating shared and differing byte lengths,
/// starting with a shared one), clipped to `max` bytes. Spans that do not fit the
/// text leave it unmarked.
pub fn spans_text(text: &str, spans: &[usize], max: usize) -> String {
    let shown = clip(text, max);
    let fits = spans.iter().sum::<usize>() == text.len();
    let mut out = String::with_capacity(shown.len() + 64);
    let mut at = 0usize;
    if fits {
        for (i, &len) in spans.iter().enumerate() {
            if at >= shown.len() {
                break;
            }
            let end = (at + len).min(shown.len());
            if !shown.is_char_boundary(at) || !shown.is_char_boundary(end) {
                break;
            }
            if i % 2 == 1 && end > at {
                let _ = write!(out, "<mark class=\"var\">{}</mark>", esc(&shown[at..end]));
            } else {
                out.push_str(&esc(&shown[at..end]));
            }
            at = end;
        }
    }
    if at < shown.len() {
        out.push_str(&esc(&shown[at..]));
    }
    if shown.len() < text.len() {
        let _ = write!(out, "\n… ({} more bytes)", text.len() - shown.len());
    }
    out
}

fn badges(c: &ClusterRow) -> String {
    let mut s = String::new();
    for sig in &c.signatures {
        let _ = write!(s, "<span class=\"badge known\" title=\"known failure signature\">{}</span> ", esc(sig));
    }
    if !c.owner.is_empty() {
        let _ = write!(s, "<span class=\"badge owner\">sig/{}</span>", esc(&c.owner));
    }
    s
}

fn name_counts(b: &mut String, title: &str, rows: &[NameCount], first_day: Day, link: fn(&str) -> String) {
    let _ = write!(b, "<table class=\"counts\"><tr><th>{title}</th><th>failures</th><th>per day</th></tr>");
    for r in rows {
        let _ = write!(
            b,
            "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            link(&r.name),
            r.failures,
            sparkline(&r.per_day, first_day)
        );
    }
    b.push_str("</table>");
}

pub fn clusters(c: &ClusterList, p: &BTreeMap<String, String>) -> String {
    let get = |k: &str| p.get(k).map(String::as_str).unwrap_or("");
    let mut profiles = vec![("", "default profile")];
    profiles.extend(c.profiles.iter().map(|p| (p.as_str(), p.as_str())));
    let mut owners = vec![("", "any owner")];
    owners.extend(c.owners.iter().map(|o| (o.as_str(), o.as_str())));
    let mut sigs = vec![("", "any"), ("known", "known signature"), ("unknown", "no known signature")];
    sigs.extend(c.signatures.iter().map(|s| (s.as_str(), s.as_str())));
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/clusters\">{}{}{}{}{}{}{}{}{}{}{}<button type=\"submit\">Filter</button></form>\n",
        input("include", "text include regex", p),
        input("exclude", "text exclude regex", p),
        input("job", "job regex", p),
        input("exclude_job", "job exclude", p),
        input("test", "test regex", p),
        input("exclude_test", "test exclude", p),
        select("kind", "jobs", &[("all", "CI and PR"), ("ci", "CI only"), ("pr", "PR only")], get("kind")),
        select("owner", "owner", &owners, get("owner")),
        select("signature", "signature", &sigs, get("signature")),
        select(
            "sort",
            "sort by",
            &[
                ("total", "failures"),
                ("today", "last day"),
                ("growth", "growth"),
                ("last_seen", "last seen"),
                ("first_seen", "first seen")
            ],
            c.sort.as_str()
        ),
        select("profile", "profile", &profiles, get("profile")),
    );
    let (Some(profile), Some(first), Some(last)) = (&c.profile, c.first_day, c.last_day) else {
        b.push_str("<p>No clustering run is stored: run <code>citriage cluster</code> first.</p>");
        return layout("Patterns", "/clusters", &b);
    };
    let _ = writeln!(
        b,
        "<p class=\"result-count\">{} of {} clusters match ({} failures), {} to {}, profile <code>{}</code>; showing {}.</p>",
        c.matching,
        c.total,
        c.failures,
        first,
        last,
        esc(profile),
        c.clusters.len()
    );
    let page_link = |offset: usize, label: &str| -> String {
        let mut q: Vec<(String, String)> =
            p.iter().filter(|(k, _)| k.as_str() != "offset").map(|(k, v)| (k.clone(), v.clone())).collect();
        q.push(("offset".into(), offset.to_string()));
        let qs: Vec<String> = q.iter().map(|(k, v)| format!("{}={}", pct(k), pct(v))).collect();
        format!("<a href=\"/clusters?{}\">{label}</a>", esc(&qs.join("&")))
    };
    let shown_to = c.offset + c.clusters.len();
    let mut pager = String::new();
    if c.offset > 0 {
        pager.push_str(&page_link(c.offset.saturating_sub(c.clusters.len().max(50)), "← previous"));
        pager.push(' ');
    }
    if shown_to < c.matching {
        pager.push_str(&page_link(shown_to, "next →"));
    }
    if !pager.is_empty() {
        let _ = write!(b, "<p class=\"pager\">clusters {}–{shown_to} · {pager}</p>", c.offset + 1);
    }
    for r in &c.clusters {
        let href = cluster_href(&r.profile, &r.stable_id);
        let _ = write!(
            b,
            "<section class=\"cluster\" id=\"c-{}\"><h3><a href=\"{href}\">{} failures ({} today)</a> \
             <span class=\"growth\">growth {:+.1}/day</span> {}{}</h3>\
             <p class=\"meta\">{} {}, {} {} · first seen {} · last seen {} · <code>{}</code></p>\
             <pre class=\"ftext\">{}</pre>",
            pct(&r.stable_id),
            r.total,
            r.today,
            r.growth,
            sparkline(&r.per_day, first),
            badges(r),
            r.jobs,
            plural(r.jobs, "job", "jobs"),
            r.tests,
            plural(r.tests, "test", "tests"),
            esc(&time(r.first_seen)),
            esc(&time(r.last_seen)),
            esc(&r.stable_id),
            spans_text(&r.text, &r.spans, 1000)
        );
        b.push_str("<div class=\"cols\">");
        name_counts(&mut b, "top jobs", &r.top_jobs, first, job_link);
        name_counts(&mut b, "top tests", &r.top_tests, first, test_link);
        b.push_str("</div></section>\n");
    }
    if !pager.is_empty() {
        let _ = write!(b, "<p class=\"pager\">{pager}</p>");
    }
    layout("Patterns", "/clusters", &b)
}

/// The prefilled "file an issue" link of a cluster.
pub fn issue_url(repo: &str, d: &ClusterDetail) -> String {
    let c = &d.cluster;
    let first_line = c.text.lines().next().unwrap_or("").trim();
    let title = format!("Failure cluster {}: {}", c.stable_id, clip_words(first_line, 80));
    let mut body = format!(
        "### Failure cluster {} (go.k8s.io/triage id {})\n\n{} failures between {} and {} ({} on the last day) in {} jobs and {} tests.\n\n#### Error text:\n```\n{}\n```\n\n#### Recent failures:\n",
        c.stable_id,
        c.k8s_id,
        c.total,
        d.first_day,
        d.last_day,
        c.today,
        c.jobs,
        c.tests,
        clip(&c.text, 1500)
    );
    for f in d.latest.iter().take(5) {
        let _ = writeln!(body, "- {} {} [{}]({})", opt_time(f.started), f.job, f.build_id, f.url);
    }
    body.push_str("\n#### Jobs:\n");
    for j in d.jobs.iter().take(10) {
        let _ = writeln!(body, "- {} ({} failures)", j.name, j.failures);
    }
    body.push_str("\n#### Tests:\n");
    for t in d.tests.iter().take(10) {
        let _ = writeln!(body, "- {} ({} failures)", t.name, t.failures);
    }
    body.push_str(
        "\n#### Reason for failure (if possible):\n\n#### Anything else we need to know:\n\n/kind failing-test\n",
    );
    if !c.owner.is_empty() && c.owner != "testing" {
        let _ = writeln!(body, "/sig {}", c.owner);
    }
    format!("https://github.com/{}/issues/new?title={}&body={}", pct_path(repo), pct(&title), pct(clip(&body, 6000)))
}

/// Percent-encodes an `owner/name` repository, keeping its slash.
fn pct_path(repo: &str) -> String {
    repo.split('/').map(pct).collect::<Vec<_>>().join("/")
}

/// GitHub issue searches for a cluster: by its ids, and by the start of its text.
pub fn issue_search_urls(repo: &str, c: &ClusterRow) -> (String, String) {
    let ids = format!("is:issue {} OR {}", c.stable_id, c.k8s_id);
    let first_line: String = c.text.lines().next().unwrap_or("").trim().chars().take(60).collect();
    let text = format!("is:issue \"{}\"", first_line.replace('"', " "));
    let base = format!("https://github.com/{}/issues", pct_path(repo));
    (format!("{base}?q={}", pct(&ids)), format!("{base}?q={}", pct(&text)))
}

fn more(b: &mut String, total: usize, shown: usize, what: &str) {
    if total > shown {
        let _ = write!(b, "<p class=\"meta\">and {} more {what} with fewer failures</p>", total - shown);
    }
}

/// Where a cluster's issue goes: the repository and, when routed by a job, that job.
pub struct IssueRoute<'a> {
    pub repo: &'a str,
    pub job: Option<&'a str>,
}

pub fn cluster(d: &ClusterDetail, route: &IssueRoute<'_>) -> String {
    let c = &d.cluster;
    let repo = route.repo;
    let (by_id, by_text) = issue_search_urls(repo, c);
    let mut b = format!(
        "<p class=\"summary\"><b>{} {} ({} today)</b>, growth {:+.1}/day, in {} {} and {} {}, {} to {} · \
         first seen {} · last seen {} {}</p>\n<p class=\"meta\">stable id <code>{}</code> · go.k8s.io/triage id <code>{}</code> · profile <code>{}</code></p>\n\
         <p class=\"actions\"><a class=\"button\" href=\"{}\">File an issue in {}</a> <a href=\"{}\">Issues naming this cluster</a> · <a href=\"{}\">Issues with this text</a></p>\n{}",
        c.total,
        plural(c.total as usize, "failure", "failures"),
        c.today,
        c.growth,
        c.jobs,
        plural(c.jobs, "job", "jobs"),
        c.tests,
        plural(c.tests, "test", "tests"),
        d.first_day,
        d.last_day,
        esc(&time(c.first_seen)),
        esc(&time(c.last_seen)),
        badges(c),
        esc(&c.stable_id),
        esc(&c.k8s_id),
        esc(&c.profile),
        esc(&issue_url(repo, d)),
        esc(repo),
        esc(&by_id),
        esc(&by_text),
        match route.job {
            Some(j) => format!(
                "<p class=\"meta\">Issues go to <code>{}</code>, the repository of {}, the job with the most failures here.</p>\n",
                esc(repo),
                job_link(j)
            ),
            None => format!("<p class=\"meta\">Issues go to <code>{}</code> (serve's --issue-repo: no build of these jobs names its repository).</p>\n", esc(repo)),
        }
    );
    b.push_str("<h2>Failures per day</h2>");
    b.push_str(&failures_chart(&c.per_day, d.first_day));
    if let Some(dr) = &d.drift {
        let _ = write!(
            b,
            "<p class=\"meta\">Drift: <b>{}</b>, {} failures in the 7 days to {} against {} in the 7 days before (<a href=\"/drift?profile={}\">all patterns</a>).</p>",
            dr.kind.name(),
            dr.after,
            d.last_day,
            dr.before,
            esc(&c.profile)
        );
    }
    let _ = write!(
        b,
        "<h2>Failure text</h2><p class=\"meta\">Marked: the spans that differ between the cluster's failures.</p><pre class=\"ftext\">{}</pre>",
        spans_text(&c.text, &c.spans, 20_000)
    );
    if c.key != c.text {
        let _ =
            write!(b, "<details><summary>normalized key</summary><pre>{}</pre></details>", esc(clip(&c.key, 20_000)));
    }
    b.push_str("<div class=\"cols\"><div>");
    let _ = write!(b, "<h2>Jobs ({})</h2>", d.jobs_total);
    name_counts(&mut b, "job", &d.jobs, d.first_day, job_link);
    more(&mut b, d.jobs_total, d.jobs.len(), "jobs");
    let _ = write!(b, "</div><div><h2>Tests ({})</h2>", d.tests_total);
    name_counts(&mut b, "test", &d.tests, d.first_day, test_link);
    more(&mut b, d.tests_total, d.tests.len(), "tests");
    b.push_str("</div></div>");
    sub_patterns(&mut b, &d.sub_patterns);
    b.push_str("<h2>Latest failures</h2><table class=\"latest\"><tr><th>started</th><th>job</th><th>build</th><th>test</th><th>failure</th></tr>");
    for f in &d.latest {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td><a href=\"{}\">{}</a> <a class=\"meta\" href=\"{}\">Prow</a>{}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            esc(&opt_time(f.started)),
            job_link(&f.job),
            esc(&build_href(&f.job, &f.build_id)),
            esc(&f.build_id),
            esc(&f.url),
            f.pr.map(|p| format!(" (PR #{p})")).unwrap_or_default(),
            test_link(&f.test),
            esc(clip(&f.text, 300))
        );
    }
    b.push_str("</table>");
    layout(&format!("Cluster {}", c.stable_id), "/clusters", &b)
}

/// Sub-patterns shown per kind (the rest are counted).
const SUB_PATTERNS_SHOWN: usize = 10;

fn sub_patterns(b: &mut String, subs: &[citriage_store::StoredSubPattern]) {
    if subs.is_empty() {
        return;
    }
    b.push_str("<h2>Sub-patterns</h2><p class=\"meta\">The cluster split by Drain template, by job family and by known signature; each with its newest failure.</p>");
    for (kind, title) in [("template", "By template"), ("job-family", "By job family"), ("signature", "By signature")] {
        let rows: Vec<&citriage_store::StoredSubPattern> = subs.iter().filter(|s| s.kind == kind).collect();
        if rows.is_empty() {
            continue;
        }
        let _ = write!(
            b,
            "<h3>{title} ({})</h3><table class=\"subpatterns\"><tr><th>{}</th><th>failures</th><th>first seen</th><th>last seen</th><th>newest failure</th></tr>",
            rows.len(),
            esc(kind)
        );
        for s in rows.iter().take(SUB_PATTERNS_SHOWN) {
            let link = s
                .build
                .strip_prefix("gs://")
                .map(|p| format!("<a href=\"https://prow.k8s.io/view/gs/{}\">{}</a>", esc(p), esc(&s.job)))
                .unwrap_or_else(|| job_link(&s.job));
            let _ = write!(
                b,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{} · {}<pre>{}</pre></td></tr>",
                esc(clip(&s.label, 300)),
                s.failures,
                esc(&time(s.first_seen)),
                esc(&time(s.last_seen)),
                link,
                test_link(&s.test),
                esc(clip(&s.excerpt, 300))
            );
        }
        b.push_str("</table>");
        more(b, rows.len(), rows.len().min(SUB_PATTERNS_SHOWN), "sub-patterns");
    }
}

/// Pattern drift between two dates.
pub fn drift(d: &crate::data::DriftList, p: &BTreeMap<String, String>) -> String {
    let get = |k: &str| p.get(k).map(String::as_str).unwrap_or("");
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/drift\">{}{}{}{}{}<button type=\"submit\">Compare</button></form>\n",
        select("profile", "profile", &Profile::ALL.map(|p| (p.name(), p.name())), &d.profile),
        input("from", "from (YYYY-MM-DD)", p),
        input("to", "to (YYYY-MM-DD)", p),
        input("span", "days per window", p),
        select("all", "show", &[("", "moving patterns"), ("1", "all patterns")], get("all")),
    );
    let count = |k: &str| d.patterns.iter().filter(|r| r.kind.name() == k).count();
    let _ = write!(
        b,
        "<p class=\"summary\">The {} days to <b>{}</b> against the {} days to <b>{}</b> ({} profile): <b>{}</b> new, <b>{}</b> growing, <b>{}</b> shrinking, <b>{}</b> gone; {} steady.</p>",
        d.span_days,
        d.to,
        d.span_days,
        d.from,
        esc(&d.profile),
        count("new"),
        count("growing"),
        count("shrinking"),
        count("gone"),
        d.steady
    );
    b.push_str("<table class=\"drift\"><tr><th>change</th><th>pattern</th><th>before</th><th>after</th><th>per day</th><th>failure text</th></tr>");
    for r in &d.patterns {
        let _ = write!(
            b,
            "<tr><td>{}</td><td><a href=\"{}\"><code>{}</code></a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r.kind.name(),
            esc(&cluster_href(&r.profile, &r.stable_id)),
            esc(&r.stable_id),
            r.before,
            r.after,
            sparkline(&r.per_day, r.first_day),
            esc(clip(&r.text, 200))
        );
    }
    b.push_str("</table>");
    layout("Pattern drift", "/drift", &b)
}

pub fn search(p: &BTreeMap<String, String>, r: Option<&SearchResult>) -> String {
    let get = |k: &str| p.get(k).map(String::as_str).unwrap_or("");
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/search\">{}{}{}{}{}{}{}{}{}<button type=\"submit\">Search</button></form>\n",
        input("q", "regex", p),
        input("job", "job include", p),
        input("exclude_job", "job exclude", p),
        input("max_age_days", "max age (days)", p),
        input("context", "context lines", p),
        input("max", "max matches", p),
        select("within", "search in", &[("all", "failures and logs"), ("tests", "test failures"), ("logs", "build logs")], get("within")),
        select("group", "group", &[("none", "no grouping"), ("job", "by job")], get("group")),
        select("similar", "similar matches", &[("fold", "folded"), ("all", "each shown")], get("similar")),
    );
    if let Some(r) = r {
        let mut notes = Vec::new();
        if r.truncated {
            notes.push("more matches exist than are shown");
        }
        if r.timed_out {
            notes.push("the search stopped at its time limit");
        }
        let _ = writeln!(
            b,
            "<p class=\"result-count\">{} matches shown of {} found; {} distinct texts of {} failure texts and log excerpts searched{}{}.</p>",
            r.matches.len(),
            r.found,
            r.scanned,
            r.indexed,
            if notes.is_empty() { "" } else { "; " },
            notes.join("; ")
        );
        if let Some(groups) = r.groups.as_ref().filter(|g| !g.is_empty()) {
            b.push_str("<table class=\"groups\"><tr><th>job</th><th>matches</th></tr>");
            for g in groups {
                let _ = write!(b, "<tr><td>{}</td><td class=\"num\">{}</td></tr>", job_link(&g.job), g.matches);
            }
            b.push_str("</table>\n");
        }
        // Near-identical matches (the same test or log and the same text but for its
        // numbers) are folded under the first by default.
        let fold = get("similar") != "all";
        let mut groups: Vec<(String, Vec<&crate::search::SearchMatch>)> = Vec::new();
        for m in &r.matches {
            let key = format!("{}\u{0}{}\u{0}{}", m.kind, m.name, digits_masked(&m.excerpt));
            match groups.iter_mut().find(|(k, _)| fold && *k == key) {
                Some((_, ms)) => ms.push(m),
                None => groups.push((key, vec![m])),
            }
        }
        if fold && groups.len() < r.matches.len() {
            let _ = write!(
                b,
                "<p class=\"meta\">{} matches shown as {} groups of near-identical text (<a href=\"{}\">show every match</a>).</p>",
                r.matches.len(),
                groups.len(),
                esc(&format!("/search?{}", query_with(p, "similar", "all")))
            );
        }
        b.push_str("<ol class=\"matches\">");
        // Every match of the query in an excerpt is marked, not only the first.
        let pattern = p.get("q").and_then(|q| crate::search::bounded_regex("q", q).ok());
        for (_, ms) in &groups {
            let m = ms[0];
            let marked = mark_all(&m.excerpt, pattern.as_ref(), (m.match_start, m.match_end));
            let what = match m.line {
                Some(l) => format!("<code>{}:{l}</code>", esc(&m.name)),
                None => test_link(&m.name),
            };
            let _ = write!(
                b,
                "<li>{} <a href=\"{}\">{}</a> {}<br>{}<pre>{marked}</pre>",
                job_link(&m.job),
                esc(&build_href(&m.job, &m.build_id)),
                esc(&m.build_id),
                esc(&opt_time(m.started)),
                what,
            );
            if ms.len() > 1 {
                let _ = write!(b, "<details class=\"similar\"><summary>{} more like it</summary><ul>", ms.len() - 1);
                for o in &ms[1..] {
                    let _ = write!(
                        b,
                        "<li>{} <a href=\"{}\">{}</a> {}</li>",
                        job_link(&o.job),
                        esc(&build_href(&o.job, &o.build_id)),
                        esc(&o.build_id),
                        esc(&opt_time(o.started))
                    );
                }
                b.push_str("</ul></details>");
            }
            b.push_str("</li>");
        }
        b.push_str("</ol>");
    }
    layout("Search", "/search", &b)
}

/// `/tests` without an exact name: the list, filtered and sorted.
pub fn test_list(p: &BTreeMap<String, String>, l: &crate::data::TestList) -> String {
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/tests\">{}{}{}<button type=\"submit\">Filter</button></form>\n",
        input("q", "name contains", p),
        input("re", "name regex", p),
        select("sort", "sort by", crate::data::TEST_SORTS, &l.sort),
    );
    if let Some(n) = p.get("name").filter(|n| !n.is_empty()) {
        let _ = write!(
            b,
            "<p class=\"meta\">No test is named exactly <code>{}</code>; tests whose names contain it:</p>",
            esc(n)
        );
    }
    let _ = write!(
        b,
        "<p class=\"meta\">{} of {} {} with runs in the window{}</p>",
        l.matching,
        l.total,
        plural(l.total, "test", "tests"),
        if l.tests.len() < l.matching { format!(", showing the first {}", l.tests.len()) } else { String::new() }
    );
    b.push_str(
        "<table class=\"tests\"><tr><th>test</th><th>jobs</th><th>runs</th><th>failed</th><th>flaky in</th></tr>",
    );
    for t in &l.tests {
        let _ = write!(
            b,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            test_link(&t.name),
            t.jobs,
            t.runs,
            t.failed,
            t.flaky_in
        );
    }
    b.push_str("</table>");
    layout("Tests", "/tests", &b)
}

/// Flags a name carries wherever it is listed: harness steps that are not tests.
pub fn flags_for(test: &str) -> String {
    match crate::data::harness_step(test) {
        Some(why) => format!("<span class=\"flag\" title=\"{}\">harness step, not a test</span>", esc(&why)),
        None => String::new(),
    }
}

pub fn test(p: &BTreeMap<String, String>, h: Option<&TestHistory>) -> String {
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/tests\">{}<button type=\"submit\">Show</button> <a href=\"/tests\">all tests</a></form>\n",
        input("name", "test name (exact, or its kettle name)", p)
    );
    if let Some(h) = h {
        let _ = write!(
            b,
            "<h2><code>{}</code>{}</h2><p class=\"meta\">Runs in the last {} days.</p>",
            esc(&h.test),
            flags_for(&h.test),
            h.window_days
        );
        for j in &h.jobs {
            let _ = write!(
                b,
                "<section class=\"test-job\"><h3>{}</h3><p>{} runs: {} passed, {} failed; pass rate <b>{}</b>{}{}.</p>",
                job_link(&j.job),
                j.runs,
                j.passed,
                j.failed,
                rate(j.pass_rate),
                j.flip_rate.map(|f| format!("; flip rate {f:.1}%")).unwrap_or_default(),
                j.pfs.map(|f| format!("; PFS {f:.3}")).unwrap_or_default(),
            );
            if j.test != h.test {
                let _ = write!(b, "<p class=\"meta\">stored as <code>{}</code></p>", esc(&j.test));
            }
            if !j.signals.is_empty() {
                b.push_str("<p class=\"signals\">");
                for s in &j.signals {
                    let _ = write!(
                        b,
                        "<span class=\"badge{}\" title=\"{}\">{}: {}</span> ",
                        if s.fired { " fired" } else { "" },
                        esc(&s.detail),
                        esc(s.kind),
                        if s.fired { "fired" } else { "quiet" }
                    );
                }
                b.push_str("</p>");
            }
            if !j.history.is_empty() {
                b.push_str("<div class=\"strip\">");
                for r in &j.history {
                    let class = if r.status == "passed" { "pass" } else { "fail" };
                    let _ = write!(
                        b,
                        "<a class=\"cell {class}\" href=\"{}\" title=\"{} {} {}\"></a>",
                        esc(&r.url),
                        esc(&r.build_id),
                        esc(&r.status),
                        esc(&opt_time(r.started))
                    );
                }
                b.push_str("</div>");
            }
            b.push_str("</section>\n");
        }
        if !h.clusters.is_empty() {
            b.push_str("<h2>Clusters of its failures</h2><table class=\"clusters\"><tr><th>profile</th><th>failures</th><th>cluster</th></tr>");
            for c in &h.clusters {
                let _ = write!(
                    b,
                    "<tr><td>{}</td><td class=\"num\">{}</td><td><a href=\"{}\"><pre>{}</pre></a></td></tr>",
                    esc(&c.profile),
                    c.failures,
                    cluster_href(&c.profile, &c.stable_id),
                    esc(clip(&c.key, 300))
                );
            }
            b.push_str("</table>");
        }
    }
    layout("Test history", "/tests", &b)
}

pub fn payloads(streams: &[PayloadStream]) -> String {
    let mut b = String::new();
    if streams.is_empty() {
        b.push_str("<p>No payload analyses are stored: run <code>citriage payload TAG</code> first.</p>");
    }
    for s in streams {
        let _ = write!(
            b,
            "<section class=\"stream\"><h2>{}</h2><p>{} payloads: {} accepted, {} rejected.</p>",
            esc(&s.stream),
            s.payloads.len(),
            s.accepted,
            s.rejected
        );
        b.push_str(&acceptance_chart(&s.per_day));
        b.push_str(
            "<table class=\"payloads\"><tr><th>payload</th><th>phase</th><th>created</th><th>blocking failed</th><th>analysis</th></tr>",
        );
        for p in &s.payloads {
            let tag = if p.analyzed {
                format!("<a href=\"/payloads/{}\">{}</a>", pct(&p.tag), esc(&p.tag))
            } else {
                esc(&p.tag)
            };
            let _ = write!(
                b,
                "<tr><td>{tag}</td><td><span class=\"phase phase-{}\">{}</span></td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&p.phase.to_ascii_lowercase()),
                esc(&p.phase),
                // One time format across the dashboard (UTC, to the minute).
                esc(&match p.created.as_deref() {
                    Some(c) => time_text(c),
                    None => "-".to_string(),
                }),
                match (p.blocking_failed, p.blocking_total) {
                    (Some(f), Some(t)) if f > 0 && p.phase.eq_ignore_ascii_case("accepted") => format!(
                        "{f}/{t} <span class=\"meta\" title=\"The release controller accepted this payload although a blocking job failed: it was force-accepted, or the job passed on a retry the results do not show.\">(accepted anyway: force-accepted or passed on retry)</span>"
                    ),
                    (Some(f), Some(t)) => format!("{f}/{t}"),
                    _ => "-".into(),
                },
                if p.analyzed { esc(p.verdict.as_deref().unwrap_or("analysed")) } else { String::new() }
            );
        }
        b.push_str("</table></section>\n");
    }
    layout("Payloads", "/payloads", &b)
}

/// A stored payload report with the dashboard's navigation bar above it. The report
/// is the exact HTML `citriage payload` wrote (it escapes everything from CI itself).
pub fn payload_report(stored_html: &str, tag: &str) -> String {
    // The dashboard's main navigation (styled inline: the report loads no style sheet
    // of ours), then the report's JSON and its tag.
    let bar = format!(
        "<nav class=\"citriage-nav\" style=\"font:14px system-ui,sans-serif;padding:8px 16px;background:#1d2430;color:#cfd6e4\">\
         <b style=\"color:#fff;margin-right:20px\">citriage</b>{}\
         <span style=\"margin-left:12px\">· <a style=\"color:#cfd6e4;margin-right:12px\" href=\"/api/v1/payloads/{}\">JSON</a>{}</span></nav>",
        crate::html::nav_links("/payloads", "color:#fff;margin-right:16px"),
        pct(tag),
        esc(tag)
    );
    match stored_html.find("<body>") {
        Some(i) => format!("{}{bar}{}", &stored_html[..i + 6], &stored_html[i + 6..]),
        None => format!("{bar}{stored_html}"),
    }
}

fn report_href(kind: &str, key: &str) -> String {
    format!("/reports/{}/{}", pct(kind), key.split('/').map(pct).collect::<Vec<_>>().join("/"))
}

pub fn reports(entries: &[ReportEntry]) -> String {
    let mut b = String::new();
    if entries.is_empty() {
        b.push_str("<p>No reports are stored: <code>citriage triage --out DIR</code>, <code>citriage payload</code> and <code>citriage verify</code> record theirs.</p>");
    } else {
        b.push_str("<table class=\"reports\"><tr><th>kind</th><th>report</th><th>as of</th><th>formats</th><th>verifier</th></tr>");
        for e in entries {
            let href =
                if e.kind == "payload" { format!("/payloads/{}", pct(&e.key)) } else { report_href(&e.kind, &e.key) };
            let verdict = match &e.verification {
                None => "<span class=\"meta\">not verified</span>".to_string(),
                Some(v) => format!(
                    "<span class=\"verdict verdict-{}\" title=\"{}\">{}</span> {} {}, {} unchecked",
                    esc(&v.verdict),
                    esc(verdict_meaning(&v.verdict)),
                    esc(verdict_words(&v.verdict)),
                    v.findings,
                    plural(v.findings, "finding", "findings"),
                    v.unchecked
                ),
            };
            let _ = write!(
                b,
                "<tr><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{verdict}</td></tr>",
                esc(&e.kind),
                href,
                esc(&e.title),
                esc(&time_text(&e.as_of)),
                esc(&e.media_types.iter().map(|m| format_name(m)).collect::<Vec<_>>().join(", "))
            );
        }
        b.push_str("</table>");
    }
    layout("Reports", "/reports", &b)
}

pub fn report(
    kind: &str,
    key: &str,
    title: &str,
    as_of: &str,
    media_type: &str,
    body: &str,
    verification: Option<&serde_json::Value>,
) -> String {
    let mut b = format!(
        "<p class=\"meta\"><code>{}/{}</code> · as of {} · {} · <a href=\"/api/v1{}\">JSON</a></p>",
        esc(kind),
        esc(key),
        esc(&time_text(as_of)),
        esc(format_name(media_type)),
        report_href(kind, key)
    );
    let (rendered, anchors) = if media_type == "text/markdown" {
        citriage_report::html::to_html(body)
    } else {
        let pretty = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| body.to_string());
        (format!("<pre>{}</pre>", esc(&pretty)), Vec::new())
    };
    match verification {
        None => b.push_str("<p class=\"meta\">No verifier result is stored for this report (<code>citriage verify</code> records one).</p>"),
        Some(v) => {
            let verdict = v["verdict"].as_str().unwrap_or("unknown");
            let findings = v["findings"].as_array().cloned().unwrap_or_default();
            let unchecked = v["unchecked"].as_array().map_or(0, Vec::len);
            let _ = write!(
                b,
                "<section class=\"verification\"><h2>Report check: <span class=\"verdict verdict-{}\">{}</span></h2><p>{} {}{}, {} not checked. {}</p>",
                esc(verdict),
                esc(verdict_words(verdict)),
                findings.len(),
                plural(findings.len(), "finding", "findings"),
                plural(findings.len(), "", ""),
                unchecked_words(unchecked),
                esc(verdict_meaning(verdict))
            );
            if !findings.is_empty() {
                b.push_str("<table class=\"findings\"><tr><th>line</th><th>rule</th><th>finding</th></tr>");
                for f in &findings {
                    let line = f["line"].as_u64().unwrap_or(0) as usize;
                    let at = match citriage_report::html::anchor_for(&anchors, line) {
                        Some(a) => format!("<a href=\"#L{a}\">{line}</a>"),
                        None => line.to_string(),
                    };
                    let _ = write!(
                        b,
                        "<tr><td>{at}</td><td><code>{}</code></td><td>{}</td></tr>",
                        esc(f["rule_id"].as_str().unwrap_or("")),
                        esc(f["message"].as_str().unwrap_or(""))
                    );
                }
                b.push_str("</table>");
            }
            b.push_str("</section>");
        }
    }
    b.push_str("<article class=\"report\">");
    b.push_str(&rendered);
    b.push_str("</article>");
    layout(title, "/reports", &b)
}

/// `/builds/JOB/ID`.
pub fn build(p: &crate::data::BuildPage) -> String {
    let r = &p.build;
    let mut b = format!(
        "<p class=\"summary\"><span class=\"dot {}\"></span><b>{}</b> · {} · started {} · took {} · {}{}</p>\n",
        esc(&r.cell),
        esc(r.result.as_deref().unwrap_or("no result yet")),
        job_link(&p.job),
        esc(&opt_time(r.started)),
        r.duration.map(|d| format!("{}m {}s", d / 60, d % 60)).unwrap_or_else(|| "-".into()),
        esc(&p.kind),
        r.pr.map(|n| format!(" · <a href=\"/prs/{n}\">PR #{n}: did it break this?</a>")).unwrap_or_default(),
    );
    let _ = writeln!(
        b,
        "<p class=\"meta\">{}<a href=\"{}\">Spyglass (Prow)</a> · <a href=\"{}\">artifacts on gcsweb</a></p>",
        p.commit.as_ref().map(|c| format!("commit <code>{}</code> · ", esc(c))).unwrap_or_default(),
        esc(&r.url),
        esc(&p.folder)
    );
    if let Some(tab) = &p.testgrid_only {
        let _ = writeln!(
            b,
            "<p class=\"meta\">Shown by TestGrid only ({}): its failure texts are TestGrid's messages (at most 140 \
             characters); TestGrid carries no duration, build log or artifact list. Fetch the build from GCS for them.</p>",
            esc(tab)
        );
    }
    if !p.problems.is_empty() {
        b.push_str("<h2>Problems reading this build</h2><ul>");
        for pr in &p.problems {
            let _ = write!(b, "<li>{}</li>", esc(pr));
        }
        b.push_str("</ul>");
    }
    let _ = write!(b, "<h2>Failed tests ({})</h2>", p.failed.len());
    if p.failed.is_empty() {
        let _ = write!(b, "<p>No test failed ({} passed).</p>", p.passed);
    } else {
        let _ = write!(b, "<p class=\"meta\">{} passed.</p>", p.passed);
        b.push_str("<table class=\"builds-failed\"><tr><th>test</th><th>status</th><th>duration</th><th>failure</th><th>cluster</th></tr>");
        for f in &p.failed {
            let clusters: Vec<String> = f
                .clusters
                .iter()
                .map(|(prof, id, _)| {
                    format!(
                        "<a href=\"{}\">{}</a> <span class=\"meta\">{}</span>",
                        cluster_href(prof, id),
                        esc(id),
                        esc(prof)
                    )
                })
                .collect();
            let _ = write!(
                b,
                "<tr><td>{}</td><td>{}{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                test_link(&f.name),
                esc(&f.status),
                if f.attempt > 1 { format!(" (attempt {})", f.attempt) } else { String::new() },
                f.duration.map(|d| format!("{d:.1}s")).unwrap_or_else(|| "-".into()),
                folded(f.message.as_deref().unwrap_or(""), 6),
                clusters.join("<br>")
            );
        }
        b.push_str("</table>");
    }
    if !p.clusters.is_empty() {
        b.push_str("<h2>Failure clusters</h2><ul>");
        for (prof, id, text, n) in &p.clusters {
            let _ = write!(
                b,
                "<li><a href=\"{}\">{}</a> ({} profile): {} of this build's failures · <code>{}</code></li>",
                cluster_href(prof, id),
                esc(id),
                esc(prof),
                n,
                esc(clip(text, 200))
            );
        }
        b.push_str("</ul>");
    }
    let _ = write!(b, "<h2>Log excerpts ({})</h2>", p.excerpts.len());
    if p.excerpts.is_empty() && p.testgrid_only.is_some() {
        b.push_str("<p class=\"meta\">Not known: TestGrid does not carry build logs.</p>");
    } else if p.excerpts.is_empty() {
        b.push_str(
            "<p class=\"meta\">No log excerpt is stored for this build (only failed builds' logs are read).</p>",
        );
    }
    for e in &p.excerpts {
        let _ = write!(
            b,
            "<p class=\"meta\"><code>{}</code> lines {}–{}</p><pre class=\"excerpt\">",
            esc(&e.source),
            e.line_start,
            e.line_end
        );
        for (i, line) in e.text.lines().enumerate() {
            let _ = writeln!(b, "<span class=\"ln\">{}</span>{}", e.line_start as usize + i, esc(line));
        }
        b.push_str("</pre>");
    }
    let _ = write!(b, "<h2>Artifacts ({})</h2>", p.artifacts.len());
    if !p.artifacts.is_empty() {
        b.push_str("<table class=\"artifacts\"><tr><th>path</th><th>size</th></tr>");
        for (path, size, link) in &p.artifacts {
            let _ = write!(
                b,
                "<tr><td><a href=\"{}\">{}</a></td><td class=\"num\">{}</td></tr>",
                esc(link),
                esc(path),
                size.map(|s| s.to_string()).unwrap_or_else(|| "-".into())
            );
        }
        b.push_str("</table>");
    }
    layout(&format!("{} #{}", p.job, r.build_id), "/jobs", &b)
}

/// The dashboard's page of a build.
pub fn build_href(job: &str, build_id: &str) -> String {
    format!("/builds/{}/{}", pct(job.strip_prefix("pr:").unwrap_or(job)), pct(build_id))
}

/// A verifier verdict in words: it judges the report's content, not the run that wrote it.
fn verdict_words(verdict: &str) -> &str {
    match verdict {
        "pass" => "report checks out",
        "fail" => "report needs work",
        "incomplete" => "partly checked",
        other => other,
    }
}

fn verdict_meaning(verdict: &str) -> &'static str {
    match verdict {
        "pass" => "The verifier checked the report's claims: every claim it could check holds.",
        "fail" => "The verifier found claims or sections to improve in this report (listed with their lines). This judges the report's content; the command that wrote it succeeded.",
        "incomplete" => "Nothing was found wrong, but some claims could not be checked (GitHub or a source checkout was not available).",
        _ => "",
    }
}

fn unchecked_words(n: usize) -> String {
    if n == 1 {
        "1 claim".to_string()
    } else {
        format!("{n} claims")
    }
}

/// A failure message: its first `lines` lines, the rest (up to 20 KB) behind a toggle.
fn folded(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    if all.len() <= lines {
        return format!("<pre>{}</pre>", esc(clip(text, 20_000)));
    }
    let head = all[..lines].join("\n");
    let rest = all[lines..].join("\n");
    format!(
        "<pre>{}</pre><details><summary>{} more lines</summary><pre>{}</pre></details>",
        esc(&head),
        all.len() - lines,
        esc(clip(&rest, 20_000))
    )
}

/// An excerpt with every match of `re` marked; the search's own match range when the
/// pattern does not find it there (or there is none).
fn mark_all(excerpt: &str, re: Option<&regex::Regex>, first: (usize, usize)) -> String {
    let ranges: Vec<(usize, usize)> = match re {
        Some(re) if re.find_iter(excerpt).any(|m| m.start() == first.0) => {
            re.find_iter(excerpt).filter(|m| m.end() > m.start()).map(|m| (m.start(), m.end())).collect()
        }
        _ => vec![first],
    };
    let mut out = String::new();
    let mut at = 0;
    for (s, e) in ranges {
        if s < at || e > excerpt.len() || !excerpt.is_char_boundary(s) || !excerpt.is_char_boundary(e) {
            continue;
        }
        out.push_str(&esc(&excerpt[at..s]));
        out.push_str("<mark>");
        out.push_str(&esc(&excerpt[s..e]));
        out.push_str("</mark>");
        at = e;
    }
    out.push_str(&esc(&excerpt[at..]));
    out
}

/// A media type as people name the format.
fn format_name(media_type: &str) -> &str {
    match media_type {
        "text/markdown" => "Markdown",
        "application/json" => "JSON",
        "text/html" => "HTML",
        other => other,
    }
}

/// A text with every run of digits as one `0`: near-identical failure texts (other
/// ports, ids, durations) compare equal.
fn digits_masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('0');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// The query string of `p` with `key` set to `value`, percent-encoded.
fn query_with(p: &BTreeMap<String, String>, key: &str, value: &str) -> String {
    let mut q = p.clone();
    q.insert(key.to_string(), value.to_string());
    q.iter().map(|(k, v)| format!("{}={}", pct(k), pct(v))).collect::<Vec<_>>().join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_mark_differing_parts_and_escape() {
        // "pod <a-1> failed": shared "pod <", differing "a-1", shared "> failed".
        let text = "pod <a-1> failed";
        assert_eq!(spans_text(text, &[5, 3, 8], 1000), "pod &lt;<mark class=\"var\">a-1</mark>&gt; failed");
        // Spans that do not add up leave the text unmarked but escaped.
        assert_eq!(spans_text(text, &[5, 3], 1000), "pod &lt;a-1&gt; failed");
        // Clipping keeps marks inside the clip and says how much is left.
        let out = spans_text(text, &[5, 3, 8], 7);
        assert!(out.starts_with("pod &lt;<mark class=\"var\">a-</mark>"), "{out}");
        assert!(out.ends_with("(9 more bytes)"), "{out}");
    }

    #[test]
    fn payload_reports_get_the_navigation_after_body() {
        let out = payload_report("<html><body><main>x</main></body></html>", "4.22.0-<x>");
        assert!(out.starts_with("<html><body><nav"), "{out}");
        assert!(out.contains("4.22.0-&lt;x&gt;"));
        assert!(out.contains("/api/v1/payloads/4.22.0-%3Cx%3E"));
    }

    #[test]
    fn near_identical_texts_compare_equal_and_every_match_is_marked() {
        assert_eq!(digits_masked("port 8080 pod-12 took 1.5s"), "port 0 pod-0 took 0.0s");
        let re = regex::Regex::new("o+").unwrap();
        assert_eq!(mark_all("foo <b> boo", Some(&re), (1, 3)), "f<mark>oo</mark> &lt;b&gt; b<mark>oo</mark>");
        // A pattern that does not find the search's own match marks that range alone.
        assert_eq!(mark_all("abc", Some(&re), (0, 1)), "<mark>a</mark>bc");
    }
}
