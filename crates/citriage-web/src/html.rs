//! HTML building blocks: URL component encoding, time formatting and the page
//! layout. Every piece of CI text goes through [`esc`], which is
//! `citriage_model::escape::html`, the workspace's one HTML escaping.

pub use citriage_model::escape::html as esc;

/// Percent-encodes a URL path segment or query value (everything but unreserved
/// characters), so the result is also safe inside an HTML attribute.
pub fn pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `YYYY-MM-DD HH:MM` (UTC) for Unix seconds.
pub fn time(secs: i64) -> String {
    citriage_model::time::date_hm(secs)
}

/// A stored time as the pages spell every time: an RFC 3339 instant as `YYYY-MM-DD
/// HH:MM` (UTC), a day as `YYYY-MM-DD`; anything else as written.
pub fn time_text(s: &str) -> String {
    citriage_model::time::shown(s)
}

/// An optional time, `-` when unknown.
pub fn opt_time(secs: Option<i64>) -> String {
    secs.map(time).unwrap_or_else(|| "-".into())
}

/// The navigation entries: (path, label).
const NAV: &[(&str, &str)] = &[
    ("/", "Overview"),
    ("/jobs", "Jobs"),
    ("/tests", "Tests"),
    ("/clusters", "Patterns"),
    ("/drift", "Drift"),
    ("/search", "Search"),
    ("/payloads", "Payloads"),
    ("/reports", "Reports"),
];

/// The main navigation's links, `active` marked; `style` (inline CSS, for pages that do
/// not load the dashboard's style sheet) is given to each link.
pub fn nav_links(active: &str, style: &str) -> String {
    let mut nav = String::new();
    for (href, label) in NAV {
        let class = if *href == active { " class=\"active\"" } else { "" };
        let style = if style.is_empty() { String::new() } else { format!(" style=\"{style}\"") };
        nav.push_str(&format!("<a href=\"{href}\"{class}{style}>{label}</a>"));
    }
    nav
}

/// Wraps a page body in the layout. `title` is escaped here; `body` must already be HTML.
pub fn layout(title: &str, active: &str, body: &str) -> String {
    let nav = nav_links(active, "");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} · citriage</title>\n<link rel=\"stylesheet\" href=\"/static/style.css?v={}\">\n</head>\n\
         <body>\n<header><span class=\"brand\">citriage</span><nav>{nav}</nav></header>\n<main>\n<h1>{}</h1>\n{body}\n</main>\n</body>\n</html>\n",
        esc(title),
        crate::style::style_version(),
        esc(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }

    #[test]
    fn shows_control_characters_escaped() {
        assert_eq!(esc("a\u{0}b\u{1b}[31mc\u{7f}\u{85}"), "a\\0b\\u{1b}[31mc\\u{7f}\\u{85}");
        assert_eq!(esc("line\n\tnext"), "line\n\tnext", "line breaks and tabs stay");
        assert_eq!(esc("ok\rFAKE"), "ok\\rFAKE", "a carriage return is shown, as on a terminal");
    }

    #[test]
    fn percent_encodes_everything_but_unreserved() {
        assert_eq!(pct("pr:a b/<c>\"é"), "pr%3Aa%20b%2F%3Cc%3E%22%C3%A9");
    }

    #[test]
    fn formats_utc_times() {
        assert_eq!(time(0), "1970-01-01 00:00");
        assert_eq!(time(86_400 + 3600 + 120), "1970-01-02 01:02");
    }
}
