//! Object names from remote data (a GCS listing, the target of a
//! `pr-logs/directory/` pointer, a Deck link, a file in a mirror) are checked here
//! before any path is built from them.
//!
//! A safe name is relative to the bucket root and made of `/`-separated segments none
//! of which is empty, `.` or `..`; it holds no NUL or other control character, no
//! backslash (a separator on some systems), no drive prefix (`C:`) and does not start
//! with `/` or `~`. Joined to a root, a safe name stays inside it (symlinks aside: the
//! local mirror checks where they lead itself).

/// Why a name is refused, or `Ok(())` when it is safe. A trailing `/` (a folder
/// prefix) is allowed.
pub fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty name");
    }
    if name.len() > 4096 {
        return Err("longer than 4096 bytes");
    }
    if name.starts_with('/') {
        return Err("absolute path");
    }
    if name.starts_with('~') {
        return Err("starts with ~");
    }
    if name.contains('\0') {
        return Err("contains NUL");
    }
    if name.contains('\\') {
        return Err("contains a backslash");
    }
    if name.chars().any(char::is_control) {
        return Err("contains a control character");
    }
    let body = name.strip_suffix('/').unwrap_or(name);
    for seg in body.split('/') {
        match seg {
            "" => return Err("empty path segment (//)"),
            "." | ".." => return Err("`.` or `..` segment"),
            _ => {}
        }
    }
    let first = body.split('/').next().unwrap_or("");
    if first.len() >= 2 && first.as_bytes()[1] == b':' && first.as_bytes()[0].is_ascii_alphabetic() {
        return Err("drive prefix");
    }
    Ok(())
}

/// True when `name` is safe and lies under `prefix` (itself a folder prefix ending in
/// `/`, or empty for the root).
pub fn is_under(name: &str, prefix: &str) -> bool {
    check_name(name).is_ok() && name.starts_with(prefix) && name.len() > prefix.len()
}

/// A name refused and why, for the build's problems: `refused object name "…": why`.
pub fn refusal(name: &str, why: &str) -> String {
    format!("refused object name {name:?}: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["logs/job/1/started.json", "logs/job/1/", "a", "pr-logs/pull/o_r/1/j/2/artifacts/junit.xml"] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "logs/../../tmp/x",
            "logs/./x",
            "logs//x",
            "a/..",
            "a\\..\\b",
            "a\0b",
            "a\nb",
            "C:/x",
            "c:x",
            "~/x",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(is_under("logs/j/1/x", "logs/j/1/"));
        assert!(!is_under("logs/j/2/x", "logs/j/1/"));
        assert!(!is_under("logs/j/1/../2/x", "logs/j/1/"));
        assert!(!is_under("logs/j/1/", "logs/j/1/"));
    }
}
