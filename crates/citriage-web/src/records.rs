//! Triage records on the dashboard: the open records by state and age (`/records`,
//! `/api/v1/records`), one record with its links and timeline (on the pattern page,
//! `/api/v1/records?subject=...`), and the link form (`POST /records/link`, behind the
//! write gate), all over the `citriage_app::records` use cases. CI text is escaped by
//! [`esc`].

use crate::html::{esc, layout, pct, time};
use citriage_analysis::resolution::State;
use citriage_app::records::RecordView;
use citriage_model::time::age;
use std::fmt::Write;

/// The CSS class of a state (failed after fix is the loudest).
fn state_class(s: State) -> &'static str {
    match s {
        State::FailedAfterFix => "state-failed",
        State::FixMerged => "state-merged",
        State::FixConfirmed => "state-confirmed",
        State::Triaged => "state-triaged",
        State::New => "state-new",
    }
}

/// A state as a badge (the stylesheet's verdict colours: failed after fix as a
/// failure, a confirmed fix as a pass, a merged fix as pending).
fn badge(s: State) -> String {
    let look = match s {
        State::FailedAfterFix => " verdict-fail",
        State::FixConfirmed => " verdict-pass",
        State::FixMerged => " verdict-incomplete",
        State::New | State::Triaged => "",
    };
    format!("<span class=\"record-state verdict{look} {}\">{}</span>", state_class(s), esc(s.label()))
}

/// Where a subject's page is (a pattern's page, a job's page), if it has one.
fn subject_href(v: &RecordView) -> Option<String> {
    match v.record.kind.as_str() {
        "pattern" => Some(format!("/clusters/{}/{}", pct(&v.record.profile), pct(&v.record.key))),
        "job" => Some(format!("/jobs/{}", pct(&v.record.key))),
        "payload" => None,
        _ => None,
    }
}

fn detail(v: &RecordView) -> String {
    let s = &v.summary;
    match (&s.fix, &s.confirmation) {
        (Some(f), Some(c)) if !c.confirmed && !c.plan.is_empty() => {
            format!("fix {}; chance of luck so far {:.1}%; {}", f.reference, c.chance * 100.0, c.plan)
        }
        (Some(f), _) => format!("fix {}", f.reference),
        _ => format!("{} active link(s)", v.links.iter().filter(|l| l.active()).count()),
    }
}

/// `/records`: the open records, loudest state first, then longest in their state.
pub fn list_page(views: &[RecordView]) -> String {
    let mut b = String::new();
    let open: Vec<&RecordView> = views.iter().filter(|v| v.summary.state.is_open()).collect();
    if open.is_empty() {
        b.push_str(
            "<p>No open triage record: <code>citriage triage link PATTERN REF</code> (or the form on a pattern's page) links an issue or pull request to a pattern.</p>",
        );
    } else {
        let _ = write!(b, "<p class=\"summary\">{} open record(s)", open.len());
        for s in State::LOUDEST_FIRST.iter().filter(|s| s.is_open()) {
            let n = open.iter().filter(|v| v.summary.state == *s).count();
            if n > 0 {
                let _ = write!(b, " · {n} {}", esc(s.label()));
            }
        }
        b.push_str(
            "</p><table class=\"records\"><tr><th>state</th><th>for</th><th>record</th><th>since</th><th>why</th></tr>",
        );
        for v in open {
            let name = match subject_href(v) {
                Some(h) => format!("<a href=\"{h}\">{}</a>", esc(&v.record.subject)),
                None => esc(&v.record.subject),
            };
            let _ = write!(
                b,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{name}<br><span class=\"meta\">{}</span></td><td>{}</td><td>{}<br><span class=\"meta\">{}</span></td></tr>",
                state_class(v.summary.state),
                badge(v.summary.state),
                esc(&age(v.age)),
                esc(&v.record.title),
                esc(&time(v.record.since)),
                esc(&v.summary.reason),
                esc(&detail(v))
            );
        }
        b.push_str("</table>");
    }
    layout("Triage records", "/records", &b)
}

/// The record section of a pattern's page: its state, links and timeline, and the
/// link form when writes are open.
pub fn section(subject: &str, view: Option<&RecordView>, writes_open: bool) -> String {
    let mut b = String::from("<section class=\"record\" id=\"record\"><h2>Triage record</h2>");
    if !subject.starts_with("pattern:") {
        let _ = write!(b, "<p class=\"record-subject\"><code>{}</code></p>", esc(subject));
    }
    match view {
        None => {
            let what = match subject.split(':').next() {
                Some("job") => "job",
                Some("payload") => "root cause",
                _ => "pattern",
            };
            let _ = write!(b, "<p>No issue or pull request is linked to this {what} yet.</p>");
        }
        Some(v) => {
            let _ = write!(
                b,
                "<p>{} since {} ({}) — {}</p>",
                badge(v.summary.state),
                esc(&time(v.record.since)),
                esc(&age(v.age)),
                esc(&detail(v))
            );
            b.push_str(
                "<table class=\"record-links\"><tr><th>reference</th><th>is</th><th>linked</th><th>by</th></tr>",
            );
            for l in &v.links {
                let un = match (&l.unlinked_at, &l.unlinked_by) {
                    (Some(t), Some(by)) => format!(" · unlinked {} by {}", esc(&time(*t)), esc(by)),
                    _ => String::new(),
                };
                let url = citriage_github::IssueRef::parse(&l.reference).map(|r| r.html_url());
                let reference = match url {
                    Some(u) => format!("<a href=\"{}\">{}</a>", esc(&u), esc(&l.reference)),
                    None => esc(&l.reference),
                };
                let _ = write!(
                    b,
                    "<tr><td>{reference}</td><td>{} {}</td><td>{}{un}</td><td>{} ({})</td></tr>",
                    esc(&l.facts.ref_kind),
                    esc(&l.facts.ref_state),
                    esc(&time(l.linked_at)),
                    esc(&l.linked_by),
                    esc(l.source.as_str())
                );
            }
            b.push_str("</table><h3>Timeline</h3><ol class=\"timeline\">");
            for t in &v.transitions {
                let _ = write!(
                    b,
                    "<li><b>{}</b> {} → {}: {}</li>",
                    esc(&time(t.at)),
                    esc(&t.from),
                    esc(&t.to),
                    esc(&t.reason)
                );
            }
            b.push_str("</ol>");
        }
    }
    if writes_open {
        let _ = write!(
            b,
            "<form class=\"link-form\" method=\"post\" action=\"/records/link\">\
             <input type=\"hidden\" name=\"subject\" value=\"{}\">\
             <label>Issue or pull request <input name=\"reference\" placeholder=\"owner/repo#N\" required></label> \
             <label>by <input name=\"by\" placeholder=\"your name\"></label> \
             <button type=\"submit\">Link</button></form>",
            esc(subject)
        );
    }
    b.push_str("</section>");
    b
}

/// Puts a section into a rendered page, before the end of its main part (else of its
/// body, else at its end).
pub fn splice(page: String, section: &str) -> String {
    match page.rfind("</main>").or_else(|| page.rfind("</body>")) {
        Some(i) => format!("{}{section}\n{}", &page[..i], &page[i..]),
        None => page + section,
    }
}

/// Decodes an `application/x-www-form-urlencoded` body.
pub fn form(body: &str) -> Vec<(String, String)> {
    fn decode(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                        Ok(v) => {
                            out.push(v);
                            i += 2;
                        }
                        Err(_) => out.push(b'%'),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    body.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_and_sections_escape() {
        assert_eq!(
            form("subject=pattern%3Adefault%2Fabc&reference=o%2Fr%235&by=A+B&x=%zz"),
            vec![
                ("subject".into(), "pattern:default/abc".into()),
                ("reference".into(), "o/r#5".into()),
                ("by".into(), "A B".into()),
                ("x".into(), "%zz".into())
            ]
        );
        let s = section("pattern:p/<x>", None, true);
        assert!(s.contains("value=\"pattern:p/&lt;x&gt;\"") && s.contains("action=\"/records/link\""), "{s}");
        assert!(!section("pattern:p/x", None, false).contains("<form"), "no form without the write gate");
        assert_eq!(splice("<main>a</main>".into(), "S"), "<main>aS\n</main>");
    }
}
