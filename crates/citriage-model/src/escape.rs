//! CI text (job and test names, failure text) escaped for each place it is written.
//! Anyone who can open a pull request controls part of that text, so none of it
//! reaches a sink raw:
//!
//! - [`terminal`]: control characters (C0 but tab and newline, DEL, C1) are shown as
//!   `\u{1b}`-style escapes, so no escape sequence reaches a terminal;
//! - [`one_line`]: like [`terminal`], and line breaks shown as `\n` (a name in a list);
//! - [`md_text`]: Markdown text on one line (a heading, a list item, a table cell):
//!   line breaks become spaces, Markdown punctuation is backslash-escaped so a name
//!   can open no heading, link, HTML tag or table column;
//! - [`md_cell`]: CI text inside a Markdown table cell or after other text on a line;
//! - [`md_code`]: an inline code span safe inside a table cell, and [`md_fence`] the
//!   fence of a code block that holds any text;
//! - [`html`]: HTML element content and quoted attribute values (the dashboard's pages,
//!   the self-contained reports);
//! - [`tsv`] and [`csv`]: one field of a tab- or comma-separated data file;
//! - [`slack`]: Slack message text (`mrkdwn`): `&`, `<`, `>` as entities, so a name can
//!   open no link and mention nobody (`<!channel>`), on one line.
//!
//! Every sink shows a control character the same way: tab and newline stay (where
//! the sink keeps lines), every other one (C0, DEL, C1, and the line and paragraph
//! separators U+2028 and U+2029) is written as a visible escape (`\0`, `\r`,
//! `\u{1b}`), so an escape sequence, a carriage return that hides what came before it,
//! or a NUL never reaches a terminal, a file or a page raw, and a reader still sees
//! that it was there.

use std::fmt::Write;

fn is_shown_escaped(c: char, keep_newline: bool) -> bool {
    (c.is_control() && c != '\t' && !(keep_newline && c == '\n')) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// A control character as a visible escape: `\n`, `\r`, `\0`, else `\u{…}`.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\0' => out.push_str("\\0"),
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn escape_controls(s: &str, keep_newline: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_shown_escaped(c, keep_newline) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Text for a terminal or a plain-text file: control characters other than tab and
/// newline shown escaped.
pub fn terminal(s: &str) -> String {
    if !s.chars().any(|c| is_shown_escaped(c, true)) {
        return s.to_string();
    }
    escape_controls(s, true)
}

/// A name printed on one line of a terminal or a text file: every control character,
/// line breaks included, shown escaped.
pub fn one_line(s: &str) -> String {
    if !s.chars().any(|c| is_shown_escaped(c, false)) {
        return s.to_string();
    }
    escape_controls(s, false)
}

/// Markdown text kept on one line: control characters escaped, line breaks turned
/// into spaces, and the characters that start Markdown or HTML constructs
/// (`\ ` * _ [ ] < > | # ! ~ { }` and a leading `-`, `+`, `=` or `N.`)
/// backslash-escaped.
pub fn md_text(s: &str) -> String {
    let flat: String = s.chars().map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c }).collect();
    let flat = one_line(&flat);
    let mut out = String::with_capacity(flat.len() + 8);
    for (i, c) in flat.chars().enumerate() {
        let leading = i == 0 && matches!(c, '-' | '+' | '=');
        if leading || matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '!' | '~' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    // "1. x" at the start would open an ordered list.
    if let Some(dot) = out.find('.') {
        if dot > 0 && out[..dot].bytes().all(|b| b.is_ascii_digit()) {
            out.insert(dot, '\\');
        }
    }
    out
}

/// CI text inside a Markdown table cell, after other text on a line (a heading's,
/// a list item's) or as a link's text: control characters shown escaped, line
/// breaks turned into spaces, `\\` and `|` backslash-escaped (no new column), a `<`
/// that could open an HTML tag or an autolink (`<b`, `</`, `<!`, `<?`) and the `>`
/// that closes it backslash-escaped (`\<int\>`), and a leading `>` (a quote). Other
/// text reads the same raw and rendered: `> 2`, `a -> b` and `< 18 h` stay as written.
/// Rendered, the text is always exactly the input on one line.
pub fn md_cell(s: &str) -> String {
    let flat: String = s.chars().map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c }).collect();
    let flat = one_line(&flat);
    let mut out = String::with_capacity(flat.len() + 4);
    // Whether an escaped `<` waits for its `>`.
    let mut open = false;
    let mut chars = flat.chars().peekable();
    while let Some(c) = chars.next() {
        let escaped = match c {
            '\\' | '|' => true,
            '<' if chars.peek().is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')) => {
                open = true;
                true
            }
            '>' => std::mem::take(&mut open) || out.trim().is_empty(),
            _ => false,
        };
        if escaped {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// An inline code span (a job or test name, a quoted log line) that is safe in a
/// table cell and keeps the text as written: line breaks become spaces, control
/// characters are shown escaped, `|` is escaped, and the span is delimited by one
/// more backtick than the longest run of backticks inside it (padded with a space
/// when the text starts or ends with one), so no text closes it early.
pub fn md_code(s: &str) -> String {
    let flat: String = s.chars().map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c }).collect();
    let text = one_line(&flat).replace('|', "\\|");
    let ticks = "`".repeat(longest_backtick_run(&text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// The fence of a fenced code block that holds `text`: at least three backticks, and
/// one more than the longest run of backticks in the text, so nothing inside closes
/// the block.
pub fn md_fence(text: &str) -> String {
    "`".repeat((longest_backtick_run(text) + 1).max(3))
}

/// Text for HTML element content and quoted attribute values: `&`, `<`, `>`, `"` and
/// `'` as entities, tab and newline kept, every other control character shown
/// escaped as [`terminal`] shows it (`\0`, `\r`, `\u{1b}`), so a page never holds one
/// raw and a reader sees that it was there.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_shown_escaped(c, true) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// One field of a tab-separated file: backslash, tab, newline and carriage return
/// written as `\\`, `\t`, `\n`, `\r`; other control characters shown escaped.
pub fn tsv(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            c => out.push_str(&one_line(c.encode_utf8(&mut [0u8; 4]))),
        }
    }
    out
}

/// One field of a CSV file (RFC 4180): control characters other than line breaks
/// shown escaped; quoted when it holds a comma, a quote or a line break; a field that
/// a spreadsheet would run as a formula (`=`, `+`, `-`, `@` first) gets a leading `'`.
pub fn csv(s: &str) -> String {
    let mut v = terminal(s);
    if v.starts_with(['=', '+', '-', '@']) {
        v.insert(0, '\'');
    }
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v
    }
}

/// Text in a Slack message (`mrkdwn`), kept on one line: control characters shown
/// escaped, line breaks turned into spaces, and `&`, `<` and `>` written as the
/// entities Slack asks for, so CI text can open no link and mention nobody.
pub fn slack(s: &str) -> String {
    let flat: String = s.chars().map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c }).collect();
    one_line(&flat).replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "job\n# Heading | x\0y\u{1b}[31mred\u{7f}";

    #[test]
    fn every_sink() {
        assert_eq!(terminal(HOSTILE), "job\n# Heading | x\\0y\\u{1b}[31mred\\u{7f}");
        assert_eq!(one_line(HOSTILE), "job\\n# Heading | x\\0y\\u{1b}[31mred\\u{7f}");
        let md = md_text(HOSTILE);
        assert!(!md.contains('\n') && !md.contains('\0') && !md.contains('\u{1b}'), "{md}");
        assert!(md.contains("\\# Heading \\| x"), "{md}");
        assert_eq!(md_text("# x"), "\\# x");
        assert_eq!(md_text("1. x"), "1\\. x");
        assert_eq!(md_text("<script>"), "\\<script\\>");
        assert_eq!(md_cell("a|b\nc <i> [x]_y"), "a\\|b c \\<i\\> [x]_y");
        let code = md_code(HOSTILE);
        assert!(code.starts_with('`') && !code.contains('\n') && code.contains("\\|"), "{code}");
        assert_eq!(html("<a href='x'>\"&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;");
        assert_eq!(tsv("a\tb\nc\\d"), "a\\tb\\nc\\\\d");
        assert_eq!(csv("a,b"), "\"a,b\"");
        assert_eq!(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv("=cmd()"), "'=cmd()");
        assert_eq!(csv("plain"), "plain");
        assert_eq!(terminal("ok\ttab"), "ok\ttab");
        assert_eq!(slack("<!channel> a&b\nc"), "&lt;!channel&gt; a&amp;b c");
        assert!(!slack(HOSTILE).contains(['\n', '\0', '\u{1b}', '<']), "{}", slack(HOSTILE));
    }

    #[test]
    fn markdown_cells_leave_ordinary_text_as_written() {
        for plain in
            ["4 jobs failed (> 2)", "(score 40 < 60)", "a <= b -> c", "pull-kubernetes-e2e-gce", "[sig-node] x [Slow]"]
        {
            assert_eq!(md_cell(plain), plain);
        }
        assert_eq!(md_cell("C:\\dir"), "C:\\\\dir");
        assert_eq!(md_cell("Expected <int>: 7 to be > <int>: 5"), "Expected \\<int\\>: 7 to be > \\<int\\>: 5");
        assert_eq!(md_code("ci-kubernetes-e2e"), "`ci-kubernetes-e2e`");
        assert_eq!(md_code("a|b"), "`a\\|b`");
    }

    #[test]
    fn markdown_cells_make_hostile_text_inert() {
        // No tag, no autolink, no quote, no new column, no line, no control character.
        assert_eq!(md_cell("<img src=x onerror=alert(1)>"), "\\<img src=x onerror=alert(1)\\>");
        assert_eq!(md_cell("</td><script>"), "\\</td\\>\\<script\\>");
        assert_eq!(md_cell("<!-- x -->"), "\\<!-- x --\\>");
        assert_eq!(md_cell("<https://evil.example>"), "\\<https://evil.example\\>");
        assert_eq!(md_cell("  > quoted"), "  \\> quoted");
        assert_eq!(md_cell("a|b\r\n# h"), "a\\|b  # h");
        assert_eq!(md_cell("x\u{1b}[2Jy\u{0}"), "x\\\\u{1b}[2Jy\\\\0");
        assert_eq!(md_cell("\\|"), "\\\\\\|", "an escaped pipe in the input cannot unescape ours");
    }

    #[test]
    fn code_spans_hold_any_text() {
        assert_eq!(md_code("say `hi`"), "`` say `hi` ``");
        assert_eq!(md_code("a ``b`` c"), "```a ``b`` c```");
        assert_eq!(md_code("`x"), "`` `x ``");
        assert_eq!(md_code("a\nb\u{1b}"), "`a b\\u{1b}`");
        assert_eq!(md_fence("plain"), "```");
        assert_eq!(md_fence("a ```sh\nx\n``` b"), "````");
        assert_eq!(md_fence("`````"), "``````");
    }

    #[test]
    fn html_shows_every_control_character_but_tab_and_newline() {
        assert_eq!(html("a\u{0}b\u{1b}[31mc\u{7f}\u{85}"), "a\\0b\\u{1b}[31mc\\u{7f}\\u{85}");
        assert_eq!(html("line\n\tnext"), "line\n\tnext");
        assert_eq!(html("ok\rFAKE\u{2028}"), "ok\\rFAKE\\u{2028}");
        assert_eq!(html("plain text é"), "plain text é");
    }
}
