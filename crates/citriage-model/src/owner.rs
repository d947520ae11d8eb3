//! Owner names: one spelling of a SIG everywhere (the store, reports, pages, issue
//! drafts). go.k8s.io/triage keeps a SIG without its prefix (`testing`, `node`);
//! tests tag `[sig-testing]`, owners files say `sig-testing`, labels `sig/testing`:
//! all of them are read as `testing`.

/// The canonical owner name: trimmed, lower-case, without a `sig-`, `sig/` or
/// `[sig-…]` wrapping (`[sig-Testing]`, `sig-testing`, `sig/testing` → `testing`).
/// Names that are not SIGs (`release-team`) keep their spelling, lower-cased.
pub fn canonical(name: &str) -> String {
    let n = name.trim();
    let n = n.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(n).trim();
    let lower = n.to_ascii_lowercase();
    let bare = lower.strip_prefix("sig-").or_else(|| lower.strip_prefix("sig/")).unwrap_or(&lower);
    bare.trim().to_string()
}

/// The GitHub label of an owner (`sig/testing`), from any spelling.
pub fn label(name: &str) -> String {
    format!("sig/{}", canonical(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_is_one_name() {
        for s in ["testing", "sig-testing", "sig/testing", "[sig-testing]", " Sig-Testing "] {
            assert_eq!(canonical(s), "testing", "{s}");
            assert_eq!(label(s), "sig/testing", "{s}");
        }
        assert_eq!(canonical("release-team"), "release-team");
        assert_eq!(canonical(""), "");
    }
}
