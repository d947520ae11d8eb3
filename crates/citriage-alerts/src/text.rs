//! An alert written for each sink. Prose pieces are the rules' own words; names, quotes
//! and links came from CI and go through the sink's escaper
//! (`citriage_model::escape`): Markdown (what the verifier checks, the dashboard
//! shows), plain text (e-mail, JSON), Slack's `mrkdwn`. HTML for the feed is the
//! dashboard's (it escapes the plain text).

use crate::alert::{Alert, Change, Line, Piece};
use citriage_model::escape;
use citriage_model::time;

/// A URL shown as a link: http(s), no spaces, quotes or brackets that would end it
/// early in any sink.
fn plain_url(u: &str) -> bool {
    (u.starts_with("https://") || u.starts_with("http://"))
        && u.len() < 2048
        && !u.chars().any(|c| c.is_whitespace() || c.is_control() || "<>\"'`()[]{}|\\^".contains(c))
}

/// One line in Markdown.
pub fn markdown_line(l: &Line) -> String {
    l.iter()
        .map(|p| match p {
            Piece::Text(s) => escape::md_text(s),
            Piece::Name(s) => escape::md_code(s),
            Piece::Quote(s) => format!("\u{201c}{}\u{201d}", escape::md_text(s)),
            Piece::Link(u) if plain_url(u) => u.clone(),
            Piece::Link(u) => escape::md_code(u),
        })
        .collect()
}

/// One line as plain text (control characters shown escaped, on one line).
pub fn plain_line(l: &Line) -> String {
    l.iter()
        .map(|p| match p {
            Piece::Text(s) | Piece::Name(s) | Piece::Link(s) => escape::one_line(&s.replace(['\n', '\r'], " ")),
            Piece::Quote(s) => format!("\u{201c}{}\u{201d}", escape::one_line(&s.replace(['\n', '\r'], " "))),
        })
        .collect()
}

/// One line in Slack's `mrkdwn`.
pub fn slack_line(l: &Line) -> String {
    l.iter()
        .map(|p| match p {
            Piece::Text(s) => escape::slack(s),
            Piece::Name(s) => format!("`{}`", escape::slack(&s.replace('`', "'"))),
            Piece::Quote(s) => format!("\u{201c}{}\u{201d}", escape::slack(s)),
            Piece::Link(u) if plain_url(u) => format!("<{u}>"),
            Piece::Link(u) => format!("`{}`", escape::slack(&u.replace('`', "'"))),
        })
        .collect()
}

/// The alert's title as plain text (an e-mail subject, a feed entry's title).
pub fn title(a: &Alert) -> String {
    plain_line(&a.title)
}

fn closing(a: &Alert, line: &dyn Fn(&Line) -> String, code: &dyn Fn(&str) -> String) -> Vec<String> {
    let mut out = Vec::new();
    if !a.evidence.is_empty() {
        let ids: Vec<String> = a.evidence.iter().map(|e| code(&e.id)).collect();
        out.push(format!("Evidence: {}.", ids.join(", ")));
    }
    match a.change {
        Change::Raised => out.push(format!("Withdrawn when: {}", line(&a.withdraw_when))),
        Change::Withdrawn => {}
    }
    let owner = if a.owner.is_empty() { "unowned".to_string() } else { code(&a.owner) };
    out.push(format!("Owner: {owner}. Kind: {} ({}). Key: {}.", a.kind.as_str(), a.change.as_str(), code(&a.key)));
    out
}

/// The alert in Markdown: a bold title, its date, its lines as a list, then the
/// evidence, what would withdraw it, owner and key. This is the text the verifier's
/// rules check before the alert is sent.
pub fn markdown(a: &Alert) -> String {
    let mut out = format!("**{}**\n\nDate: {}\n\n", markdown_line(&a.title), time::date_of(a.at));
    for l in &a.lines {
        out.push_str("- ");
        out.push_str(&markdown_line(l));
        out.push('\n');
    }
    out.push('\n');
    for c in closing(a, &markdown_line, &escape::md_code) {
        out.push_str(&c);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// The alert as plain text (an e-mail body, the `text` of a JSON message).
pub fn plain(a: &Alert) -> String {
    let mut out = format!("{}\n{}\n\n", title(a), time::utc(a.at));
    for l in &a.lines {
        out.push_str("- ");
        out.push_str(&plain_line(l));
        out.push('\n');
    }
    out.push('\n');
    for c in closing(a, &plain_line, &|s| escape::one_line(s)) {
        out.push_str(&c);
        out.push('\n');
    }
    out
}

/// The alert in Slack's `mrkdwn`.
pub fn slack(a: &Alert) -> String {
    let mut out = format!("*{}*\n", slack_line(&a.title));
    for l in &a.lines {
        out.push_str("• ");
        out.push_str(&slack_line(l));
        out.push('\n');
    }
    for c in closing(a, &slack_line, &|s| format!("`{}`", escape::slack(&s.replace('`', "'")))) {
        out.push_str(&c);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alert::{link, name, quote, t, AlertKind};

    fn hostile() -> Alert {
        Alert {
            key: "al-0011223344556677".into(),
            kind: AlertKind::JobRed,
            change: Change::Raised,
            subject: "ci-x".into(),
            owner: "node".into(),
            at: 1_795_000_000,
            title: vec![name("ci-`x`\n# <b>"), t(" is red")],
            lines: vec![
                vec![quote("boom <!channel> & [link](javascript:x) *bold*\n| cell")],
                vec![t("see "), link("https://prow.k8s.io/view/gs/b/logs/ci-x/1234567890123456")],
                vec![t("odd "), link("javascript:alert(1)")],
            ],
            evidence: vec![],
            refs: vec![],
            withdraw_when: vec![name("ci-x"), t(" passes 1 run in a row.")],
            withdraws: None,
        }
    }

    #[test]
    fn ci_text_is_escaped_in_every_sink() {
        let a = hostile();
        let md = markdown(&a);
        // A name keeps its backticks inside a longer code span.
        assert!(md.starts_with("**``ci-`x` # <b>`` is red**"), "{md}");
        assert!(!md.contains("\n# "), "{md}");
        assert!(
            md.contains("\\[link\\](javascript:x)") && md.contains("\\*bold\\*") && md.contains("\\| cell"),
            "{md}"
        );
        assert!(md.contains("https://prow.k8s.io/view/gs/b/logs/ci-x/1234567890123456"), "{md}");
        assert!(md.contains("`javascript:alert(1)`"), "{md}");
        assert!(md.contains("Withdrawn when: `ci-x` passes 1 run in a row."), "{md}");
        let s = slack(&a);
        assert!(!s.contains("<!channel>") && s.contains("&lt;!channel&gt; &amp;"), "{s}");
        assert!(s.contains("<https://prow.k8s.io/view/gs/b/logs/ci-x/1234567890123456>"), "{s}");
        assert!(!s.contains("<javascript"), "{s}");
        let p = plain(&a);
        assert!(p.starts_with("ci-`x` # <b> is red\n"), "{p}");
        assert_eq!(title(&a).lines().count(), 1);
        assert!(p.contains("Key: al-0011223344556677."), "{p}");
    }
}
