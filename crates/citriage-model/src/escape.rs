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
//! - [`md_code`]: an inline code span safe inside a table cell;
//! - [`tsv`] and [`csv`]: one field of a tab- or comma-separated data file;
//! - [`slack`]: Slack message text (`mrkdwn`): `&`, `<`, `>` as entities, so a name can
//!   open no link and mention nobody (`<!channel>`), on one line.
//!
//! HTML escaping is the dashboard's own (`citriage-web`).

use std::fmt::Write;

fn is_shown_escaped(c: char, keep_newline: bool) -> bool {
    (c.is_control() && c != '\t' && !(keep_newline && c == '\n')) || matches!(c, '\u{2028}' | '\u{2029}')
}

fn escape_controls(s: &str, keep_newline: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_shown_escaped(c, keep_newline) {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\0' => out.push_str("\\0"),
                c => {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                }
            }
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

/// CI text inside a Markdown table cell or after other text on a heading's line:
/// control characters escaped, line breaks turned into spaces, and `\`, `|`, `<`
/// and `>` backslash-escaped (no new column, no HTML tag). Lighter than [`md_text`]:
/// the text reads the same in the source.
pub fn md_cell(s: &str) -> String {
    let flat: String = s.chars().map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c }).collect();
    let flat = one_line(&flat);
    let mut out = String::with_capacity(flat.len() + 4);
    for c in flat.chars() {
        if matches!(c, '\\' | '|' | '<' | '>') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// An inline code span (a job or test name) that is safe in a table cell: backticks
/// become `'`, `|` is escaped, line breaks become spaces, control characters shown
/// escaped.
pub fn md_code(s: &str) -> String {
    let flat: String = s.chars().map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c }).collect();
    format!("`{}`", one_line(&flat).replace('`', "'").replace('|', "\\|"))
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
        assert_eq!(tsv("a\tb\nc\\d"), "a\\tb\\nc\\\\d");
        assert_eq!(csv("a,b"), "\"a,b\"");
        assert_eq!(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv("=cmd()"), "'=cmd()");
        assert_eq!(csv("plain"), "plain");
        assert_eq!(terminal("ok\ttab"), "ok\ttab");
        assert_eq!(slack("<!channel> a&b\nc"), "&lt;!channel&gt; a&amp;b c");
        assert!(!slack(HOSTILE).contains(['\n', '\0', '\u{1b}', '<']), "{}", slack(HOSTILE));
    }
}
