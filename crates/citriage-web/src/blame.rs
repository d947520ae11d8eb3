//! The "Which change started it" section of the pattern and job pages: the regression
//! windows (both ends, the jobs that bounded them, the compare link) and, with the
//! dashboard's checkouts (`serve --checkout`, `checkouts` in the team configuration),
//! the window's commits ranked with their band and links, and the exposing change.

use crate::html::esc;
use citriage_analysis::windows;
use citriage_app::suspects::Suspects;
use std::fmt::Write;

/// At most this many ranked commits are shown per window.
const SHOWN: usize = 5;

/// The section (HTML, spliced before the page's end).
pub fn section(s: &Suspects) -> String {
    let mut b = String::from("<section class=\"suspects\" id=\"suspects\"><h2>Which change started it</h2>");
    let _ = write!(b, "<p>{}</p>", esc(&s.verdict));
    for w in &s.windows {
        let r = &w.window;
        let _ = write!(b, "<h3>{}</h3><p>", esc(&citriage_app::suspects::window_line(w)));
        let bounded = |by: &[(String, String, String)]| {
            by.iter().map(|(j, id, _)| format!("{j} #{id}")).collect::<Vec<_>>().join(", ")
        };
        if let Some(g) = &r.good {
            let _ = write!(b, "last pass: {}; ", esc(&bounded(&g.by)));
        }
        let _ = write!(b, "first failure: {}", esc(&bounded(&r.bad.by)));
        if let Some(u) = &r.compare_url {
            let _ = write!(b, " — <a href=\"{}\" rel=\"noopener\">compare</a>", esc(u));
        }
        b.push_str("</p>");
        match &w.commits {
            None => {
                for n in &w.notes {
                    let _ = write!(b, "<p class=\"note\">{}</p>", esc(n));
                }
            }
            Some(commits) => {
                b.push_str("<table><tr><th>Rank</th><th>Commit</th><th>Band</th><th>Subject</th><th>Links</th></tr>");
                for c in commits.iter().take(SHOWN) {
                    let links: Vec<String> = c.links.iter().filter(|l| l.specific).map(|l| esc(&l.evidence)).collect();
                    let _ = write!(
                        b,
                        "<tr><td>{}{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        c.rank,
                        if c.tied { "=" } else { "" },
                        esc(windows::short(&c.sha)),
                        esc(c.band.as_str()),
                        esc(&c.subject),
                        if links.is_empty() { "—".to_string() } else { links.join("<br>") }
                    );
                }
                b.push_str("</table>");
                if commits.len() > SHOWN {
                    let _ =
                        write!(b, "<p>… and {} more commit(s) without a better standing.</p>", commits.len() - SHOWN);
                }
            }
        }
    }
    for e in &s.exposing {
        let _ = write!(
            b,
            "<p>Configuration of {} changed in the window: <code>{}@{}</code> {} — {}</p>",
            esc(&e.job),
            esc(&e.repo),
            esc(windows::short(&e.sha)),
            esc(&e.subject),
            esc(&e.lines.join("; "))
        );
    }
    for m in &s.versions_moved {
        let _ = write!(
            b,
            "<p>What the jobs ran with moved in the window{}: <code>{}</code> ({} <code>{}</code>) — {}</p>",
            if m.every_job { " of every job" } else { "" },
            esc(&m.describe()),
            esc(&m.file),
            esc(&m.key),
            m.windows
                .iter()
                .map(|w| format!(
                    "{} <a href=\"{}\">#{}</a> → <a href=\"{}\">#{}</a>",
                    esc(&w.job),
                    esc(&w.good_url),
                    esc(&w.good_build),
                    esc(&w.bad_url),
                    esc(&w.bad_build)
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    b.push_str("</section>");
    b
}
