//! Owners: the SIG of a failing test against the SIGs owning the paths a change
//! touches. A Kubernetes e2e test names its SIG (`[sig-node] …`), a test file's
//! path may hold one (`test/e2e/sig-storage/…`), and an `OWNERS` file labels the
//! tree below it (`labels:` with `- sig/node`); a path belongs to the SIGs of the
//! nearest `OWNERS` file up the tree that has any. Pure: the caller reads the
//! `OWNERS` files (at the window's failing commit) and hands their texts here.

use std::collections::{BTreeMap, BTreeSet};

/// SIGs a failing test's name carries in its tags (`[sig-node]` → `node`).
pub fn sigs_of_test(name: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for tag in name.split('[').skip(1) {
        let Some(tag) = tag.split(']').next() else { continue };
        if let Some(sig) = tag.trim().strip_prefix("sig-") {
            if valid_sig(sig) {
                out.insert(sig.to_string());
            }
        }
    }
    out
}

/// SIGs a path's folders name (`test/e2e/sig-storage/x_test.go` → `storage`).
pub fn sigs_of_path(path: &str) -> BTreeSet<String> {
    path.split('/')
        .rev()
        .skip(1)
        .filter_map(|c| c.strip_prefix("sig-"))
        .filter(|s| valid_sig(s))
        .map(str::to_string)
        .collect()
}

fn valid_sig(s: &str) -> bool {
    (2..=40).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The SIG labels of an `OWNERS` file (`labels:` then `- sig/node` items, or
/// `labels: [sig/node, area/x]`), in file order with their line numbers.
pub fn owners_labels(text: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut in_labels = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim_end();
        if line.trim().is_empty() {
            continue;
        }
        let n = i as u32 + 1;
        let top = !line.starts_with([' ', '\t', '-']);
        if top {
            in_labels = false;
            if let Some(rest) = line.strip_prefix("labels:") {
                let rest = rest.trim();
                if let Some(inline) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                    out.extend(inline.split(',').filter_map(sig_label).map(|s| (s, n)));
                } else {
                    in_labels = rest.is_empty();
                }
            }
            continue;
        }
        if in_labels {
            match line.trim().strip_prefix('-') {
                Some(item) => out.extend(sig_label(item).map(|s| (s, n))),
                None => in_labels = false,
            }
        }
    }
    out
}

fn sig_label(item: &str) -> Option<String> {
    let l = item.trim().trim_matches(|c| c == '"' || c == '\'');
    let sig = l.strip_prefix("sig/")?;
    valid_sig(sig).then(|| sig.to_string())
}

/// The `OWNERS` files up the tree from a path, nearest first (`a/b/c.go` →
/// `a/b/OWNERS`, `a/OWNERS`, `OWNERS`).
pub fn owners_files_above(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    loop {
        out.push(if dir.is_empty() { "OWNERS".to_string() } else { format!("{dir}/OWNERS") });
        if dir.is_empty() {
            return out;
        }
        dir = dir.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    }
}

/// The SIGs of a path: the labels of the nearest `OWNERS` file up the tree that
/// has SIG labels, given the texts of the `OWNERS` files read (path → text).
/// Each SIG → `PATH (OWNERS-PATH:LINE labels sig/SIG)`.
pub fn sigs_of(path: &str, owners: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for file in owners_files_above(path) {
        let Some(text) = owners.get(&file) else { continue };
        let labels = owners_labels(text);
        if labels.is_empty() {
            continue;
        }
        for (sig, line) in labels {
            out.entry(sig.clone()).or_insert_with(|| format!("{path} ({file}:{line} labels sig/{sig})"));
        }
        break;
    }
    out
}

/// The SIGs owning any of these paths (the first path of each SIG kept).
pub fn sigs_of_paths<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    owners: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for p in paths {
        for (sig, how) in sigs_of(p, owners) {
            out.entry(sig).or_insert(how);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigs_of_tests_and_paths() {
        let s = sigs_of_test("[sig-node] [Serial] Pods should restart [sig-node-extra]");
        assert_eq!(s.into_iter().collect::<Vec<_>>(), vec!["node", "node-extra"]);
        assert!(sigs_of_test("TestNodeLease").is_empty());
        assert!(sigs_of_test("[sig-] x [Sig-Node]").is_empty());
        assert_eq!(sigs_of_path("test/e2e/sig-storage/csi_test.go").into_iter().collect::<Vec<_>>(), vec!["storage"]);
        assert!(sigs_of_path("sig-node.go").is_empty());
    }

    #[test]
    fn owners_labels_and_the_nearest_file() {
        let text = "# See the OWNERS docs\napprovers:\n  - alice\nlabels:\n  - sig/node # kubelet\n  - area/kubelet\n- sig/scheduling\nreviewers:\n  - bob\n";
        assert_eq!(owners_labels(text), vec![("node".to_string(), 5), ("scheduling".to_string(), 7)]);
        assert_eq!(owners_labels("labels: [sig/network, area/dns]\n"), vec![("network".to_string(), 1)]);
        assert!(owners_labels("approvers:\n- sig/node\n").is_empty(), "only the labels list counts");
        assert_eq!(owners_files_above("pkg/kubelet/lease.go"), vec!["pkg/kubelet/OWNERS", "pkg/OWNERS", "OWNERS"]);
        let mut owners = BTreeMap::new();
        owners.insert("OWNERS".to_string(), "labels:\n- sig/architecture\n".to_string());
        owners.insert("pkg/kubelet/OWNERS".to_string(), "approvers:\n- alice\n".to_string());
        owners.insert("pkg/OWNERS".to_string(), "labels:\n- sig/node\n".to_string());
        // The nearest file with labels wins; one without labels is passed over.
        let s = sigs_of("pkg/kubelet/lease.go", &owners);
        assert_eq!(s.keys().collect::<Vec<_>>(), vec!["node"]);
        assert_eq!(s["node"], "pkg/kubelet/lease.go (pkg/OWNERS:2 labels sig/node)");
        assert_eq!(sigs_of("cmd/main.go", &owners).keys().collect::<Vec<_>>(), vec!["architecture"]);
        assert!(sigs_of("cmd/main.go", &BTreeMap::new()).is_empty());
    }
}
