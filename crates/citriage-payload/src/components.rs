//! Which payload component a failure is about, and which candidates belong to
//! it. A failure names its component through the failing test's owner
//! (`[bz-Cloud Credential Operator]`, `[Jira:"Networking / router"]`), the
//! ClusterOperator (`clusteroperator/insights`), the namespace
//! (`ns/openshift-ingress`, `-n openshift-ingress`), a test binary
//! (`oc-mirror-tests-ext`) or the command that failed (`oc adm release extract`).
//! Candidates belong to components through their repository and the image
//! names the changelog lists for it. Both sides are reduced to a core name
//! (`Cloud Credential Operator`, `clusteroperator/cloud-credential` and
//! `openshift/cloud-credential-operator` are all `cloud-credential`).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use citriage_suspects::failure::ComponentRef;
use regex::Regex;

/// Core names too generic to say which component broke.
const GENERIC: &[&str] = &[
    "",
    "api",
    "apis",
    "config",
    "kube",
    "e2e",
    "test",
    "default",
    "system",
    "core",
    "apps",
    "infra",
    "openshift",
    "cluster",
    "operator",
    "operators",
    "controller",
    "release",
    "images",
    "image",
    "tools",
];

/// Reduces a component, repository, image, namespace or owner name to its core.
pub fn core(name: &str) -> String {
    let mut s: String = name
        .trim()
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '[' || c == ']')
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    let mut s = s.trim_matches('-').to_string();
    for _ in 0..2 {
        for p in ["openshift-", "cluster-", "ose-"] {
            if let Some(r) = s.strip_prefix(p) {
                if !r.is_empty() {
                    s = r.to_string();
                }
            }
        }
        for suf in ["-tests-ext", "-test-ext", "-operator", "-controllers", "-controller", "-tests", "-test"] {
            if let Some(r) = s.strip_suffix(suf) {
                if !r.is_empty() {
                    s = r.to_string();
                }
            }
        }
    }
    s
}

fn keep(key: &str) -> bool {
    key.len() >= 2 && !GENERIC.contains(&key)
}

/// The component keys of a candidate: its repository and image names.
pub fn candidate_keys(repo: Option<&str>, images: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Some(r) = repo {
        let name = r.rsplit('/').next().unwrap_or(r);
        let k = core(name);
        if keep(&k) {
            out.insert(k);
        }
    }
    for i in images {
        let k = core(i);
        if keep(&k) {
            out.insert(k);
        }
    }
    out
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("built-in pattern"))
}

fn push(out: &mut Vec<ComponentRef>, name: &str, how: String, subject: bool) {
    let key = core(name);
    if !keep(&key) {
        return;
    }
    if let Some(e) = out.iter_mut().find(|c| c.key == key) {
        if subject && !e.subject {
            e.subject = true;
            e.how = how;
        }
        return;
    }
    out.push(ComponentRef { key, how, subject });
}

/// Components named by a failure: its test names (owner tags, objects in the
/// name are the subject) and its explaining lines (objects there are named).
/// `binaries` are the test binaries a test-binary failure names; `tests_image`
/// marks a failure of the test framework itself (listing or extracting test
/// binaries is done by `openshift-tests`, built as the payload's `tests` image).
pub fn failure_components(
    test_names: &[String],
    lines: &[String],
    binaries: &[(String, bool)],
    tests_image: bool,
) -> Vec<ComponentRef> {
    static OWNER: OnceLock<Regex> = OnceLock::new();
    static CO: OnceLock<Regex> = OnceLock::new();
    static NS: OnceLock<Regex> = OnceLock::new();
    static OC: OnceLock<Regex> = OnceLock::new();
    let owner = re(&OWNER, r#"\[(?:bz-|Jira:\s*)"?([^\]"]+)"?\]"#);
    let co = re(&CO, r"(?i)clusteroperator/([a-z0-9][a-z0-9-]*)|[Cc]luster operator ([a-z0-9][a-z0-9-]*)");
    let ns = re(
        &NS,
        r"(?:\bns/|\bnamespace/|\bnamespace[=: ]+|-n |--namespace[= ])(openshift-[a-z0-9-]+)|\b(openshift-[a-z0-9-]+)/[a-z0-9][a-z0-9.-]*",
    );
    let oc = re(&OC, r"(?:^|[\s:>])oc (adm |--\S+ )*[a-z]");
    let mut out = Vec::new();
    for t in test_names {
        for c in owner.captures_iter(t) {
            let raw = c[1].trim();
            let last = raw.rsplit('/').next().unwrap_or(raw).trim();
            push(&mut out, last, format!("test owner [{raw}]"), true);
        }
        for c in co.captures_iter(t) {
            let n = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str()).unwrap_or("");
            push(&mut out, n, format!("the test is about clusteroperator/{n}"), true);
        }
        for c in ns.captures_iter(t) {
            let n = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str()).unwrap_or("");
            push(&mut out, n, format!("the test is about namespace {n}"), true);
        }
    }
    for (b, subject) in binaries {
        push(&mut out, b, format!("test binary {b}"), *subject);
    }
    if tests_image {
        out.push(ComponentRef {
            key: "tests".into(),
            how: "test binaries are listed and extracted by openshift-tests (the payload's tests image)".into(),
            subject: true,
        });
    }
    for l in lines {
        for c in co.captures_iter(l) {
            let n = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str()).unwrap_or("");
            push(&mut out, n, format!("the failure names clusteroperator/{n}"), false);
        }
        for c in ns.captures_iter(l) {
            let Some(m) = c.get(1).or_else(|| c.get(2)) else { continue };
            // `quay.io/openshift-release-dev/...` is a URL path, not a namespace.
            let before = l[..m.start()].chars().next_back();
            if c.get(2).is_some() && before.is_some_and(|b| matches!(b, '/' | '.' | '@' | ':' | '-' | '_')) {
                continue;
            }
            let n = m.as_str();
            push(&mut out, n, format!("the failure names namespace {n}"), false);
        }
        if oc.is_match(l) {
            push(&mut out, "cli", "the failing command is oc (the cli image)".into(), false);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores() {
        assert_eq!(core("Cloud Credential Operator"), "cloud-credential");
        assert_eq!(core("cloud-credential-operator"), "cloud-credential");
        assert_eq!(core("openshift-ingress"), "ingress");
        assert_eq!(core("cluster-ingress-operator"), "ingress");
        assert_eq!(core("cluster-authentication-operator-tests-ext"), "authentication");
        assert_eq!(core("openshift-kube-apiserver-operator"), "kube-apiserver");
        assert_eq!(core("Insights Operator"), "insights");
        assert_eq!(core("machine-config-operator"), "machine-config");
    }

    #[test]
    fn failure_names_components() {
        let tests = vec![
            "[Monitor:legacy-cvo-invariants][bz-Cloud Credential Operator] clusteroperator/cloud-credential should stay Progressing=False".to_string(),
        ];
        let c = failure_components(&tests, &[], &[], false);
        assert_eq!(c.len(), 1);
        assert!(c[0].subject && c[0].key == "cloud-credential", "{c:?}");
        let lines =
            vec!["error running oc --kubeconfig=/tmp/k get -n openshift-ingress istio/openshift-gateway".to_string()];
        let c = failure_components(&[], &lines, &[], false);
        let keys: Vec<&str> = c.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, vec!["ingress", "cli"]);
        assert!(c.iter().all(|c| !c.subject));
        let keys = candidate_keys(Some("openshift/cluster-ingress-operator"), &["cluster-ingress-operator".into()]);
        assert!(keys.contains("ingress"));
        let keys = candidate_keys(Some("openshift/oc"), &["cli".into(), "cli-artifacts".into(), "tools".into()]);
        assert!(keys.contains("cli") && keys.contains("oc") && !keys.contains("tools"));
    }
}
