//! A pull request's page (`/prs/ORG/REPO/N`, `/api/v1/prs/ORG/REPO/N`; `/prs/N` when a
//! build names only the number): "did this PR break its presubmits?" as `citriage pr`
//! answers it from the store (GitHub read from the store's cache only, nothing
//! recorded): the verdict, the latest run of each job, each failure with its class,
//! why, the pattern it matched and its evidence ids. CI text is escaped by [`esc`].

use crate::html::{esc, layout, opt_time, pct};
use citriage_analysis::pr_risk::Class;
use citriage_app::pr::PrRisk;
use std::fmt::Write;

fn class_look(c: Class) -> &'static str {
    match c {
        Class::NewWithPr => "verdict verdict-fail",
        Class::Infrastructure => "verdict verdict-incomplete",
        Class::FailingElsewhere | Class::KnownFlake => "verdict",
    }
}

fn build_href(job: &str, path: &str) -> String {
    let id = path.rsplit('/').next().unwrap_or("");
    format!("/builds/{}/{}", pct(job), pct(id))
}

/// The page of one PR.
pub fn page(r: &PrRisk) -> String {
    let mut b = String::new();
    let look = if r.verdict.safe_to_retest { "verdict verdict-pass" } else { "verdict verdict-fail" };
    let _ = write!(
        b,
        "<p class=\"summary\"><span class=\"{look}\">{}</span></p><p class=\"meta\"><a href=\"{}\">{}</a>{} · window {} days to {} · diff: {}</p>",
        esc(&r.verdict.line),
        esc(&r.url),
        esc(&r.pr),
        r.github.title.as_deref().map(|t| format!(" {}", esc(t))).unwrap_or_default(),
        r.window_days,
        esc(&r.as_of),
        r.github
            .changed_files
            .as_ref()
            .map(|f| format!("{} changed file(s)", f.len()))
            .unwrap_or_else(|| esc(r.github.note.as_deref().unwrap_or("not read")))
    );
    b.push_str("<h2>Latest runs</h2><table><tr><th>job</th><th>run</th><th>result</th><th>started</th><th class=\"num\">failures</th><th class=\"num\">earlier runs</th></tr>");
    for run in &r.runs {
        let _ = write!(
            b,
            "<tr><td><a href=\"/jobs/{}\">{}</a></td><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            pct(&run.job),
            esc(&run.job),
            esc(&build_href(&run.job, &run.path)),
            esc(&run.build_id),
            esc(&run.result),
            esc(&opt_time(run.started)),
            run.failures,
            run.earlier_runs
        );
    }
    b.push_str("</table>");
    if !r.failures.is_empty() {
        b.push_str("<h2>Failures</h2><table><tr><th>class</th><th>job</th><th>failure</th><th>why</th><th>pattern</th><th>evidence</th></tr>");
    }
    for f in &r.failures {
        let pattern = match f.facts.elsewhere.as_ref().map(|e| e.pattern.as_str()) {
            Some(p) => match p.split_once('/') {
                Some((profile, id)) if !p.starts_with("text:") => {
                    format!("<a href=\"/clusters/{}/{}\">{}</a>", pct(profile), pct(id), esc(p))
                }
                _ => esc(p),
            },
            None => String::new(),
        };
        let _ = write!(
            b,
            "<tr><td><span class=\"{}\">{}{}</span></td><td><a href=\"{}\">{}</a></td><td><code>{}</code><br><span class=\"meta\">{}</span></td><td>{}</td><td>{pattern}</td><td class=\"meta\">{}</td></tr>",
            class_look(f.class),
            esc(f.class.label()),
            if f.strong { "" } else { " (weak)" },
            esc(&build_href(&f.job, &f.build_path)),
            esc(&f.job),
            esc(&f.test),
            esc(&f.first_line),
            esc(&f.reason),
            esc(&f.evidence.join(" "))
        );
    }
    if !r.failures.is_empty() {
        b.push_str("</table>");
    }
    b.push_str("<p class=\"meta\">Evidence ids resolve with <code>citriage evidence ID</code> once <code>citriage pr</code> has recorded them.</p>");
    layout(&format!("PR {}", r.pr), "/jobs", &b)
}

/// The repositories a bare PR number may be of, as links.
pub fn choose(number: u64, repos: &[String]) -> String {
    let mut b = format!("<p>Pull request #{number} has runs in several repositories:</p><ul>");
    for r in repos {
        let (o, n) = r.split_once('/').unwrap_or((r, ""));
        let _ = write!(b, "<li><a href=\"/prs/{}/{}/{number}\">{}#{number}</a></li>", pct(o), pct(n), esc(r));
    }
    b.push_str("</ul>");
    layout(&format!("PR #{number}"), "/jobs", &b)
}
