//! Markdown reports rendered to HTML, safely: raw HTML in the Markdown is shown as
//! text, links keep only `http`, `https`, `mailto`, relative and fragment targets, and
//! images become links (a page loads nothing from elsewhere). Each rendered block that
//! starts a source line gets an anchor `L<n>` so verifier findings (which name report
//! lines) can link to it. Control characters in text and code are shown escaped by
//! `citriage_model::escape`'s rule before pulldown-cmark writes the HTML (and its
//! entities). The dashboard's report pages render stored reports with [`to_html`];
//! [`standalone_page`] is the self-contained `report.html` the triage writes beside
//! `report.md`, with the same look ([`STYLE_CSS`], the dashboard's stylesheet).

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};

/// The stylesheet of citriage's HTML: the dashboard's pages and `report.html`.
pub const STYLE_CSS: &str = include_str!("style.css");

/// A self-contained HTML page of a Markdown document with the dashboard's look: the
/// stylesheet inline, no script, no request to any other address (images become
/// links), the same content as the Markdown, rendered as the dashboard's report pages
/// render it. `title` is escaped here.
pub fn standalone_page(title: &str, markdown: &str) -> String {
    let (body, _) = to_html(markdown);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{} · citriage</title>\n<style>\n{}</style>\n</head>\n\
         <body>\n<header><span class=\"brand\">citriage</span></header>\n<main><article class=\"report\">\n{body}\n</article></main>\n</body>\n</html>\n",
        citriage_model::escape::html(title),
        STYLE_CSS
    )
}

/// Whether a link target is safe to keep.
fn safe_url(u: &str) -> bool {
    let lower = u.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        // No scheme (relative) or a colon after a path separator.
        None => true,
        Some((scheme, _)) if scheme.contains('/') || scheme.contains('#') || scheme.contains('?') => true,
        Some((scheme, _)) => matches!(scheme, "http" | "https" | "mailto"),
    }
}

/// The id of an empty anchor (`<a id="x"></a>` or `<a name="x"></a>`, id of letters,
/// digits, `-`, `_`, `.`), the only raw HTML kept.
fn anchor_id(html: &str) -> Option<&str> {
    let rest = html.trim().strip_prefix("<a ")?.strip_suffix("</a>")?.strip_suffix('>')?;
    let (attr, value) = rest.trim().split_once('=')?;
    if attr != "id" && attr != "name" {
        return None;
    }
    let id = value.strip_prefix('"')?.strip_suffix('"')?;
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))).then_some(id)
}

/// Text with its control characters shown escaped, as every sink shows them.
fn controls_shown(t: CowStr<'_>) -> CowStr<'_> {
    let shown = citriage_model::escape::terminal(&t);
    if shown.len() == t.len() {
        t
    } else {
        CowStr::Boxed(shown.into())
    }
}

/// 1-based line of a byte offset.
fn line_at(starts: &[usize], offset: usize) -> usize {
    match starts.binary_search(&offset) {
        Ok(i) => i + 1,
        Err(i) => i,
    }
}

/// Renders Markdown to HTML (see the module documentation for what is kept) and
/// returns it with the source lines that got an anchor, ascending.
pub fn to_html(md: &str) -> (String, Vec<usize>) {
    let mut starts = vec![0usize];
    starts.extend(md.match_indices('\n').map(|(i, _)| i + 1));
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut anchors: Vec<usize> = Vec::new();
    // A table row's line waits for the row's first cell, where the anchor can stand.
    let mut row_line: Option<usize> = None;
    let raw: Vec<(Event<'_>, std::ops::Range<usize>)> = Parser::new_ext(md, opts).into_offset_iter().collect();
    let mut i = 0;
    while i < raw.len() {
        let (ev, range) = raw[i].clone();
        i += 1;
        let ev = match ev {
            Event::Html(h) | Event::InlineHtml(h) => {
                // Reports mark sections with empty named anchors for their own links; the
                // parser may hand the opening and closing tags over one by one.
                let closing = match raw.get(i) {
                    Some((Event::Html(c) | Event::InlineHtml(c), _)) if c.trim() == "</a>" => Some(c.to_string()),
                    _ => None,
                };
                let joined = format!("{}{}", h.trim(), closing.as_deref().unwrap_or("").trim());
                match anchor_id(&joined) {
                    Some(id) => {
                        if closing.is_some() {
                            i += 1;
                        }
                        Event::InlineHtml(CowStr::Boxed(format!("<a id=\"{id}\"></a>").into()))
                    }
                    None => Event::Text(h),
                }
            }
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                let dest_url = if safe_url(&dest_url) { dest_url } else { CowStr::Borrowed("#unsafe-link") };
                Event::Start(Tag::Link { link_type, dest_url, title, id })
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                let dest_url = if safe_url(&dest_url) { dest_url } else { CowStr::Borrowed("#unsafe-link") };
                Event::Start(Tag::Link { link_type, dest_url, title, id })
            }
            Event::End(pulldown_cmark::TagEnd::Image) => Event::End(pulldown_cmark::TagEnd::Link),
            // Column alignment would come out as inline styles, which the pages'
            // security policy refuses: tables are left as the stylesheet sets them.
            Event::Start(Tag::Table(aligns)) => {
                Event::Start(Tag::Table(vec![pulldown_cmark::Alignment::None; aligns.len()]))
            }
            other => other,
        };
        let ev = match ev {
            Event::Text(t) => Event::Text(controls_shown(t)),
            Event::Code(t) => Event::Code(controls_shown(t)),
            other => other,
        };
        let line = line_at(&starts, range.start);
        let anchor_here = match &ev {
            Event::Start(Tag::Paragraph | Tag::Heading { .. } | Tag::Item | Tag::CodeBlock(_)) => Some(line),
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                row_line = Some(line);
                None
            }
            Event::Start(Tag::TableCell) => row_line.take(),
            _ => None,
        };
        events.push(ev);
        if let Some(l) = anchor_here.filter(|l| anchors.last().is_none_or(|last| l > last)) {
            anchors.push(l);
            events.push(Event::InlineHtml(CowStr::Boxed(format!("<a id=\"L{l}\"></a>").into())));
        }
    }
    let mut out = String::with_capacity(md.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    (out, anchors)
}

/// The anchor to link a report line to: the nearest anchored line at or before it.
pub fn anchor_for(anchors: &[usize], line: usize) -> Option<usize> {
    match anchors.binary_search(&line) {
        Ok(i) => Some(anchors[i]),
        Err(0) => None,
        Err(i) => Some(anchors[i - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_text_and_unsafe_links_are_dropped() {
        let (html, _) = to_html(
            "# Title\n\n<script>alert(1)</script>\n\nA [link](javascript:alert(2)) and [ok](https://prow.k8s.io/x) \
             ![img](https://example.com/a.png) <b>x</b>\n",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(html.contains("href=\"https://prow.k8s.io/x\""), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("<h1><a id=\"L1\"></a>Title</h1>"), "{html}");
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        let (html, _) = to_html("a\u{1b}[31mred\u{0} `x\u{7f}`\n\n```\nlog\u{1b}]8;;\n```\n");
        assert!(!html.contains(['\u{1b}', '\u{0}', '\u{7f}']), "{html:?}");
        assert!(html.contains("a\\u{1b}[31mred\\0 <code>x\\u{7f}</code>"), "{html}");
        assert!(html.contains("log\\u{1b}]8;;"), "{html}");
    }

    /// What the Markdown writers produce from hostile CI text renders as that text,
    /// in its cell, and nothing else: no tag, no link, no new column or row.
    #[test]
    fn escaped_cells_render_as_their_text() {
        use citriage_model::escape::{html, md_cell, md_code};
        let hostile = [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "a | b | c",
            "x\\|y",
            "<https://evil.example/>",
            "> quoted\n# heading",
            "Expected <int>: 7 to be > <int>: 5",
            "</td></tr><tr><td>",
            "say `hi` | ``x``",
            "\\<b>bold\\</b>",
        ];
        for h in hostile {
            let md = format!("| a | b |\n|---|---|\n| {} | {} |\n", md_cell(h), md_code(h));
            let (out, _) = to_html(&md);
            assert_eq!(out.matches("<td>").count(), 2, "{h:?} → {out}");
            assert_eq!(out.matches("<tr>").count(), 2, "{h:?} → {out}");
            assert!(!out.contains("<a ") || out.matches("<a ").count() == out.matches("<a id=\"L").count(), "{out}");
            let flat = h.replace('\n', " ");
            let cell = out.split("<td>").nth(1).unwrap().split("</td>").next().unwrap();
            let cell = cell.split_once("</a>").map_or(cell, |(_, c)| c);
            if h.contains('`') {
                // Inline Markdown (code spans, emphasis) stays Markdown in a cell.
                let tags = cell.replace("<code>", "").replace("</code>", "");
                assert!(cell.contains("<code>") && !tags.contains('<'), "{h:?} → {cell}");
            } else {
                assert_eq!(cell, html(&flat).replace("&#39;", "'"), "{h:?}");
            }
            let code = out.split("<td>").nth(2).unwrap().split("</td>").next().unwrap();
            let code = code.strip_prefix("<code>").and_then(|c| c.strip_suffix("</code>"));
            assert_eq!(code.map(str::trim), Some(html(&flat).replace("&#39;", "'").trim()), "{h:?}");
        }
    }

    #[test]
    fn blocks_carry_their_source_line() {
        let (html, anchors) = to_html("# A\n\ntext on line 3\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n");
        assert!(html.contains("<h1><a id=\"L1\"></a>A</h1>"), "{html}");
        assert!(html.contains("<p><a id=\"L3\"></a>text"), "{html}");
        assert!(html.contains("<th><a id=\"L5\"></a>a</th>"), "{html}");
        assert!(html.contains("<td><a id=\"L7\"></a>1</td>"), "{html}");
        assert_eq!(anchors, vec![1, 3, 5, 7, 9]);
        assert_eq!(anchor_for(&anchors, 6), Some(5));
        assert_eq!(anchor_for(&anchors, 7), Some(7));
        assert_eq!(anchor_for(&anchors, 100), Some(9));
        assert_eq!(anchor_for(&[3], 1), None);
    }

    #[test]
    fn empty_named_anchors_are_kept_and_nothing_else() {
        let (html, _) = to_html("<a id=\"status\"></a>\n\n## Status\n\n[go](#status) <a id=\"x\" onclick=\"y\"></a>\n");
        assert!(html.contains("<a id=\"status\"></a>"), "{html}");
        assert!(html.contains("&lt;a id=\"x\" onclick=\"y\"&gt;&lt;/a&gt;"), "{html}");
        assert_eq!(anchor_id("<a name=\"tier-1\"></a>"), Some("tier-1"));
        assert_eq!(anchor_id("<a id=\"a b\"></a>"), None);
        assert_eq!(anchor_id("<a id=\"x\">text</a>"), None);
    }

    #[test]
    fn tables_carry_no_inline_styles() {
        let (html, _) = to_html("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n");
        assert!(!html.contains("style="), "{html}");
        assert!(html.contains("<td><a id=\"L3\"></a>1</td><td>2</td><td>3</td>"), "{html}");
        // Text that looks like the attribute stays text.
        let (html, _) = to_html("x style=\"text-align: left\" y\n");
        assert!(html.contains("x style=\"text-align: left\" y"), "{html}");
    }

    #[test]
    fn url_schemes() {
        for ok in ["https://a", "http://a", "mailto:x@y", "/jobs/x", "#L3", "report.md", "a/b:c"] {
            assert!(safe_url(ok), "{ok}");
        }
        for bad in ["javascript:x", " JavaScript:x", "data:text/html,x", "vbscript:x", "file:///etc/passwd"] {
            assert!(!safe_url(bad), "{bad}");
        }
    }
}
