//! Pages of a list answer: compact by default, a cursor to go on.
//!
//! A cursor is `p1.<offset>.<digest>`: the offset of the next item in the tool's
//! ordering, and a digest of the tool's name and the ordering keys of every item
//! before it. Over an unchanged store the same call gives the same cursor, and
//! resuming with it gives the next items; when the items already given are no
//! longer the first ones (the store changed, or the cursor belongs to other
//! arguments), the cursor is refused with a clear error rather than skipping or
//! repeating items.

use crate::state::ToolError;
use citriage_model::evidence::sha256_hex;
use serde_json::{json, Value};

/// One page of a list: what to skip and how many to give.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub offset: usize,
    pub size: usize,
}

fn digest(tool: &str, keys: &[String]) -> String {
    let mut text = String::with_capacity(keys.iter().map(|k| k.len() + 1).sum::<usize>() + tool.len());
    text.push_str(tool);
    for k in keys {
        text.push('\n');
        text.push_str(k);
    }
    sha256_hex(text.as_bytes())[..16].to_string()
}

/// The offset a cursor points at (0 without one); its digest is checked by [`finish`].
pub fn start(cursor: Option<&str>) -> Result<usize, ToolError> {
    let Some(c) = cursor.map(str::trim).filter(|c| !c.is_empty()) else { return Ok(0) };
    let bad = || {
        ToolError::input(format!("cursor {c:?} is not a cursor this server gave (give the `next_cursor` of the previous answer, or none to start)"))
    };
    let mut parts = c.split('.');
    let (Some("p1"), Some(off), Some(d), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    if d.len() != 16 || !d.chars().all(|x| x.is_ascii_hexdigit()) {
        return Err(bad());
    }
    off.parse::<usize>().map_err(|_| bad())
}

/// A page's bounds from the arguments: `limit` (1 to `max`, default `default`) and `cursor`.
pub fn page(cursor: Option<&str>, limit: Option<usize>, default: usize, max: usize) -> Result<Page, ToolError> {
    let size = match limit {
        None => default,
        Some(n) if (1..=max).contains(&n) => n,
        Some(n) => return Err(ToolError::input(format!("limit must be 1 to {max}, not {n}"))),
    };
    Ok(Page { offset: start(cursor)?, size })
}

/// Checks the cursor against the keys of the whole ordering (`keys[..offset]` must
/// digest to the cursor's), and returns the range of this page and the page's
/// `{"next_cursor", "remaining", "more"}`.
pub fn finish(
    tool: &str,
    cursor: Option<&str>,
    p: Page,
    keys: &[String],
) -> Result<(std::ops::Range<usize>, Value), ToolError> {
    finish_of(tool, cursor, p, keys, keys.len())
}

/// [`finish`] over the first keys of a longer ordering of `total` items (`keys`
/// reaching at least to the end of the page).
pub fn finish_of(
    tool: &str,
    cursor: Option<&str>,
    p: Page,
    keys: &[String],
    total: usize,
) -> Result<(std::ops::Range<usize>, Value), ToolError> {
    if let Some(c) = cursor.map(str::trim).filter(|c| !c.is_empty()) {
        let want = c.rsplit('.').next().unwrap_or("");
        if p.offset > keys.len() || digest(tool, &keys[..p.offset]) != want {
            return Err(ToolError::input(format!(
                "cursor {c:?} no longer fits this list: the store changed since, or the arguments differ from \
                 the call that gave it; call {tool} again without cursor"
            )));
        }
    }
    let end = (p.offset + p.size).min(keys.len());
    let remaining = total.max(keys.len()) - end;
    let info = if remaining == 0 {
        json!({"next_cursor": null, "remaining": 0, "more": null})
    } else {
        let next = format!("p1.{end}.{}", digest(tool, &keys[..end]));
        let more = format!("{remaining} more: call {tool} again with the same arguments and cursor {next:?}");
        json!({"next_cursor": next, "remaining": remaining, "more": more})
    };
    Ok((p.offset..end, info))
}

/// A text's first line, at most `max` characters (an ellipsis marks a cut).
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let cut: String = line.chars().take(max).collect();
    if cut.len() < line.len() || text.trim().lines().nth(1).is_some() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Adds a page's `{"next_cursor", "remaining", "more"}` to an answer's object.
pub fn put(v: &mut Value, info: Value) {
    if let (Some(o), Value::Object(i)) = (v.as_object_mut(), info) {
        o.extend(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("k{i}")).collect()
    }

    #[test]
    fn cursors_walk_the_list_and_refuse_a_changed_one() {
        let k = keys(25);
        let p = page(None, Some(10), 20, 100).unwrap();
        let (r, info) = finish("t", None, p, &k).unwrap();
        assert_eq!(r, 0..10);
        assert_eq!(info["remaining"], 15);
        let c = info["next_cursor"].as_str().unwrap().to_string();
        // Same store, same call: same cursor.
        assert_eq!(finish("t", None, p, &k).unwrap().1["next_cursor"], json!(c));
        let p2 = page(Some(&c), Some(10), 20, 100).unwrap();
        let (r, info) = finish("t", Some(&c), p2, &k).unwrap();
        assert_eq!(r, 10..20);
        let c3 = info["next_cursor"].as_str().unwrap().to_string();
        let p3 = page(Some(&c3), Some(10), 20, 100).unwrap();
        let (r, info) = finish("t", Some(&c3), p3, &k).unwrap();
        assert_eq!(r, 20..25);
        assert_eq!(info["remaining"], 0);
        assert!(info["next_cursor"].is_null());
        // An item before the cursor changed: refused.
        let mut k2 = k.clone();
        k2[3] = "other".into();
        let e = finish("t", Some(&c), p2, &k2).unwrap_err();
        assert!(e.bad_input && e.message.contains("no longer fits"), "{e}");
        // Another tool's cursor: refused.
        assert!(finish("u", Some(&c), p2, &k).is_err());
        for bad in ["x", "p1.1", "p1.a.0123456789abcdef", "p1.1.xyz", "p2.1.0123456789abcdef"] {
            let e = page(Some(bad), None, 20, 100).unwrap_err();
            assert!(e.bad_input && e.message.contains("not a cursor"), "{bad}: {e}");
        }
    }

    #[test]
    fn one_line_cuts_and_marks() {
        assert_eq!(one_line("abc", 10), "abc");
        assert_eq!(one_line("\n  abc\ndef", 10), "abc…");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
