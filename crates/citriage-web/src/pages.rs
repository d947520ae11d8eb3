//! The HTML pages, built as strings from the data the API also serves. Every piece of
//! text that came from CI (job names, test names, failure texts, sources) goes through
//! [`esc`] or [`pct`]; nothing here emits scripts.

use crate::data::{ClusterList, ClusterSort, JobDetail, JobSummary, Overview, TestHistory, PROFILES};
use crate::html::{esc, layout, opt_time, pct, time};
use crate::search::SearchResult;
use crate::svg::pass_rate_chart;
use crate::WebError;
use std::collections::BTreeMap;

fn rate(r: Option<f64>) -> String {
    r.map(|r| format!("{:.1}%", r * 100.0)).unwrap_or_else(|| "-".into())
}

fn job_link(job: &str) -> String {
    format!("<a href=\"/jobs/{}\">{}</a>", pct(job), esc(job))
}

pub fn error_page(e: &WebError) -> String {
    let title = match e {
        WebError::BadRequest(_) => "Bad request",
        WebError::NotFound(_) => "Not found",
        WebError::Internal(_) => "Server error",
    };
    let msg = match e {
        WebError::BadRequest(m) | WebError::NotFound(m) | WebError::Internal(m) => m,
    };
    layout(title, "", &format!("<p class=\"error\">{}</p>", esc(msg)))
}

pub fn overview(o: &Overview) -> String {
    let mut b = String::new();
    b.push_str(&format!(
        "<section class=\"tiles\"><div class=\"tile\"><b>{}</b> builds</div><div class=\"tile\"><b>{}</b> jobs with builds</div>\
         <div class=\"tile\"><b>{}</b> test results</div><div class=\"tile\"><b>{}</b> clusters</div></section>\n",
        o.builds, o.build_jobs, o.test_results, o.clusters
    ));
    if o.snapshots.is_empty() {
        b.push_str("<p>No dashboard snapshots are stored.</p>\n");
    }
    for s in &o.snapshots {
        b.push_str(&format!(
            "<section class=\"snapshot\" id=\"snapshot-{}\"><h2>{} snapshot of {}</h2><p>{} jobs, from <code>{}</code></p>\n",
            esc(s.dataset.as_str()),
            esc(s.dataset.title()),
            esc(&s.date.to_string()),
            s.jobs,
            esc(&s.source)
        ));
        b.push_str("<div class=\"cols\"><table class=\"severity\"><tr><th>severity</th><th>jobs</th></tr>");
        for c in &s.by_severity {
            b.push_str(&format!(
                "<tr><td><span class=\"sev sev-{}\">{}</span></td><td class=\"num\">{}</td></tr>",
                esc(&c.name),
                esc(&c.name),
                c.count
            ));
        }
        b.push_str("</table><table class=\"category\"><tr><th>category</th><th>jobs</th></tr>");
        for c in &s.by_category {
            b.push_str(&format!("<tr><td>{}</td><td class=\"num\">{}</td></tr>", esc(&c.name), c.count));
        }
        b.push_str("</table></div>\n");
        match &s.drift {
            None => b.push_str("<p class=\"drift\">No earlier snapshot to compare with.</p>"),
            Some(d) => {
                b.push_str(&format!(
                    "<p class=\"drift\">Since {}: <b>{}</b> jobs added, <b>{}</b> removed.</p>",
                    esc(&d.prior_date.to_string()),
                    d.added.len(),
                    d.removed.len()
                ));
                for (label, jobs) in [("added", &d.added), ("removed", &d.removed)] {
                    if jobs.is_empty() {
                        continue;
                    }
                    b.push_str(&format!("<details><summary>{label} ({})</summary><ul>", jobs.len()));
                    for j in jobs.iter().take(100) {
                        b.push_str(&format!("<li><code>{}</code></li>", esc(j)));
                    }
                    b.push_str("</ul></details>");
                }
            }
        }
        b.push_str("</section>\n");
    }
    if !o.newest_clusters.is_empty() {
        b.push_str("<h2>Newest patterns</h2><table class=\"clusters\"><tr><th>first seen</th><th>failures</th><th>failure text</th></tr>");
        for c in &o.newest_clusters {
            b.push_str(&format!(
                "<tr><td>{}</td><td class=\"num\">{}</td><td><pre>{}</pre></td></tr>",
                esc(&time(c.first_seen)),
                c.size,
                cluster_text(clip(&c.key, 400))
            ));
        }
        b.push_str("</table>\n");
    }
    layout("Overview", "/", &b)
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

pub fn jobs(jobs: &[JobSummary]) -> String {
    let mut b = String::new();
    if jobs.is_empty() {
        b.push_str("<p>No builds are stored.</p>");
    } else {
        b.push_str(
            "<table class=\"jobs\"><tr><th>job</th><th>builds</th><th>pass</th><th>fail</th><th>error</th>\
             <th>aborted</th><th>pass rate</th><th>last build</th></tr>",
        );
        for j in jobs {
            b.push_str(&format!(
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td><span class=\"dot {}\"></span>{}</td></tr>",
                job_link(&j.job),
                j.builds,
                j.passed,
                j.failed,
                j.errored,
                j.aborted,
                rate(j.pass_rate),
                esc(&j.last_outcome),
                esc(&opt_time(j.last_started))
            ));
        }
        b.push_str("</table>");
    }
    layout("Jobs", "/jobs", &b)
}

pub fn job(j: &JobDetail) -> String {
    let s = &j.summary;
    let mut b = format!(
        "<p class=\"summary\">{} builds: {} passed, {} failed, {} errored, {} aborted; pass rate <b>{}</b>.</p>\n",
        s.builds,
        s.passed,
        s.failed,
        s.errored,
        s.aborted,
        rate(s.pass_rate)
    );
    b.push_str("<h2>History (newest first)</h2><div class=\"strip\">");
    for r in &j.builds {
        b.push_str(&format!(
            "<a class=\"cell {}\" href=\"{}\" title=\"{} {} {}\"></a>",
            esc(&r.outcome),
            esc(&r.url),
            esc(&r.build_id),
            esc(&r.outcome),
            esc(&opt_time(r.started))
        ));
    }
    b.push_str("</div>\n<h2>Daily pass rate</h2>\n");
    b.push_str(&pass_rate_chart(&j.daily));
    if !j.failing_tests.is_empty() {
        b.push_str("\n<h2>Most failing tests</h2><table class=\"failing\"><tr><th>test</th><th>failures</th></tr>");
        for t in &j.failing_tests {
            b.push_str(&format!("<tr><td>{}</td><td class=\"num\">{}</td></tr>", test_link(&t.name), t.count));
        }
        b.push_str("</table>");
    }
    b.push_str(
        "\n<h2>Builds</h2><table class=\"builds\"><tr><th>build</th><th>result</th><th>started</th>\
         <th>duration</th><th>PR</th><th>failed tests</th></tr>",
    );
    for r in &j.builds {
        b.push_str(&format!(
            "<tr><td><a href=\"{}\">{}</a></td><td><span class=\"dot {}\"></span>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
            esc(&r.url),
            esc(&r.build_id),
            esc(&r.outcome),
            esc(r.result.as_deref().unwrap_or("-")),
            esc(&opt_time(r.started)),
            r.duration.map(|d| format!("{}m", d / 60)).unwrap_or_else(|| "-".into()),
            r.pr.map(|p| format!("#{p}")).unwrap_or_default(),
            r.failed_tests
        ));
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
        s.push_str(&format!("<option value=\"{}\"{sel}>{}</option>", esc(value), esc(text)));
    }
    s.push_str("</select></label>");
    s
}

pub fn clusters(c: &ClusterList, p: &BTreeMap<String, String>) -> String {
    let sort = match c.sort {
        ClusterSort::Size => "size",
        ClusterSort::LastSeen => "last_seen",
        ClusterSort::FirstSeen => "first_seen",
    };
    let mut profiles = vec![("", "all profiles")];
    profiles.extend(PROFILES.iter().map(|p| (*p, *p)));
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/clusters\">{}{}{}{}<button type=\"submit\">Filter</button></form>\n",
        input("include", "include regex", p),
        input("exclude", "exclude regex", p),
        select(
            "sort",
            "sort by",
            &[("size", "failures"), ("last_seen", "last seen"), ("first_seen", "first seen")],
            sort
        ),
        select("profile", "profile", &profiles, p.get("profile").map(String::as_str).unwrap_or("")),
    );
    b.push_str(&format!("<p>{} of {} clusters match; showing {}.</p>\n", c.matching, c.total, c.clusters.len()));
    if !c.clusters.is_empty() {
        b.push_str(
            "<table class=\"clusters\"><tr><th>failures</th><th>first seen</th><th>last seen</th><th>profile</th><th>failure text</th></tr>",
        );
        for r in &c.clusters {
            b.push_str(&format!(
                "<tr id=\"c-{}\"><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td><pre>{}</pre><small>{}</small></td></tr>",
                pct(&r.stable_id),
                r.size,
                esc(&time(r.first_seen)),
                esc(&time(r.last_seen)),
                esc(&r.profile),
                cluster_text(clip(&r.key, 2000)),
                esc(&r.stable_id)
            ));
        }
        b.push_str("</table>");
    }
    layout("Patterns", "/clusters", &b)
}

pub fn search(p: &BTreeMap<String, String>, r: Option<&SearchResult>) -> String {
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/search\">{}{}{}{}{}{}<button type=\"submit\">Search</button></form>\n",
        input("q", "regex", p),
        input("job", "job include", p),
        input("exclude_job", "job exclude", p),
        input("max_age_days", "max age (days)", p),
        input("max", "max matches", p),
        select(
            "group",
            "group",
            &[("none", "no grouping"), ("job", "by job")],
            p.get("group").map(String::as_str).unwrap_or("none")
        ),
    );
    if let Some(r) = r {
        let mut notes = Vec::new();
        if r.truncated {
            notes.push("more matches exist than are shown");
        }
        if r.timed_out {
            notes.push("the scan stopped at its time limit");
        }
        b.push_str(&format!(
            "<p class=\"result-count\">{} matches shown, {} failure texts scanned{}{}.</p>\n",
            r.matches.len(),
            r.scanned,
            if notes.is_empty() { "" } else { "; " },
            notes.join("; ")
        ));
        if let Some(groups) = r.groups.as_ref().filter(|g| !g.is_empty()) {
            b.push_str("<table class=\"groups\"><tr><th>job</th><th>matches</th></tr>");
            for g in groups {
                b.push_str(&format!("<tr><td>{}</td><td class=\"num\">{}</td></tr>", job_link(&g.job), g.matches));
            }
            b.push_str("</table>\n");
        }
        b.push_str("<ol class=\"matches\">");
        for m in &r.matches {
            let (pre, hit, post) =
                (&m.excerpt[..m.match_start], &m.excerpt[m.match_start..m.match_end], &m.excerpt[m.match_end..]);
            b.push_str(&format!(
                "<li>{} <a href=\"{}\">{}</a> {}<br>{}<pre>{}<mark>{}</mark>{}</pre></li>",
                job_link(&m.job),
                esc(&m.url),
                esc(&m.build_id),
                esc(&opt_time(m.started)),
                test_link(&m.test),
                esc(pre),
                esc(hit),
                esc(post)
            ));
        }
        b.push_str("</ol>");
    }
    layout("Search", "/search", &b)
}

fn test_link(test: &str) -> String {
    format!("<a href=\"/tests?name={}\">{}</a>", pct(test), esc(test))
}

pub fn test(p: &BTreeMap<String, String>, h: Option<&TestHistory>) -> String {
    let mut b = format!(
        "<form class=\"filters\" method=\"get\" action=\"/tests\">{}<button type=\"submit\">Show</button></form>\n",
        input("name", "test name (exact)", p)
    );
    if let Some(h) = h {
        b.push_str(&format!("<h2><code>{}</code></h2>", esc(&h.test)));
        for j in &h.jobs {
            b.push_str(&format!(
                "<section class=\"test-job\"><h3>{}</h3><p>{} runs: {} passed, {} failed; pass rate <b>{}</b>.</p><div class=\"strip\">",
                job_link(&j.job),
                j.runs,
                j.passed,
                j.failed,
                rate(j.pass_rate)
            ));
            for r in &j.history {
                let class = if r.status == "passed" { "pass" } else { "fail" };
                b.push_str(&format!(
                    "<a class=\"cell {class}\" href=\"{}\" title=\"{} {} {}\"></a>",
                    esc(&r.url),
                    esc(&r.build_id),
                    esc(&r.status),
                    esc(&opt_time(r.started))
                ));
            }
            b.push_str("</div></section>\n");
        }
    }
    layout("Test history", "/tests", &b)
}

/// Escapes a cluster's normalized failure text and marks the placeholders that stand
/// for the spans differing between its failures (`UNIQ1`, `NUM`, `TIME`, ...).
pub fn cluster_text(key: &str) -> String {
    static VAR: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(re) = VAR.get_or_init(|| regex::Regex::new(r"\b(?:UNIQ\d*|NUM|DURATION|TIME|LINE)\b").ok()) else {
        return esc(key);
    };
    let mut out = String::with_capacity(key.len() + 32);
    let mut last = 0;
    for m in re.find_iter(key) {
        out.push_str(&esc(&key[last..m.start()]));
        out.push_str("<mark class=\"var\">");
        out.push_str(&esc(m.as_str()));
        out.push_str("</mark>");
        last = m.end();
    }
    out.push_str(&esc(&key[last..]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_text_marks_placeholders_and_escapes_the_rest() {
        assert_eq!(
            cluster_text("dial <tcp> UNIQ12:NUM failed at log.go:LINE after DURATION; NUMBER"),
            "dial &lt;tcp&gt; <mark class=\"var\">UNIQ12</mark>:<mark class=\"var\">NUM</mark> failed at log.go:\
             <mark class=\"var\">LINE</mark> after <mark class=\"var\">DURATION</mark>; NUMBER"
        );
    }
}
