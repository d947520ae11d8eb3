//! Finding PR/issue references in Markdown (or rendered) text: `owner/repo#N`, full
//! GitHub pull/issue URLs, short names from an alias table (`k/k#N`, `kops#N`), and
//! bare `#N`, which is resolved only from an explicit default repository, from the
//! reference right before it in a list (`k/k#1, #2`), or when the whole document
//! names a single repository; otherwise it is reported as ambiguous, never guessed.
//! Fenced code blocks are skipped.

use crate::state::{parse_number, valid_part, IssueRef, RepoRef};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// How a reference's repository was determined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resolution {
    /// `owner/repo#N`.
    Qualified,
    /// `https://github.com/owner/repo/pull/N`.
    Url,
    /// A short name from the alias table (`k/k#N`, `kops#N`).
    Alias,
    /// Bare `#N` continuing a list after a resolved reference (`k/k#1, #2`).
    Inherited,
    /// Bare `#N` with the default repository given by the user.
    Default,
    /// Bare `#N` in a document whose references all name one repository.
    DocumentContext,
}

/// What a found reference points to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "target", rename_all = "kebab-case")]
pub enum RefTarget {
    Resolved {
        reference: IssueRef,
        how: Resolution,
    },
    /// The number is clear, the repository is not; `why` says what is missing.
    Ambiguous {
        number: u64,
        why: String,
    },
}

/// One reference as found in the text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FoundRef {
    /// 1-based line.
    pub line: usize,
    /// 1-based byte column of the match.
    pub column: usize,
    /// The text as written (`k/k#138584`).
    pub raw: String,
    pub target: RefTarget,
}

impl FoundRef {
    /// The resolved reference, if any.
    pub fn reference(&self) -> Option<&IssueRef> {
        match &self.target {
            RefTarget::Resolved { reference, .. } => Some(reference),
            RefTarget::Ambiguous { .. } => None,
        }
    }

    /// The number, resolved or not.
    pub fn number(&self) -> u64 {
        match &self.target {
            RefTarget::Resolved { reference, .. } => reference.number,
            RefTarget::Ambiguous { number, .. } => *number,
        }
    }

    /// Byte range of the match within its line (0-based, end exclusive).
    pub fn span(&self) -> (usize, usize) {
        (self.column - 1, self.column - 1 + self.raw.len())
    }
}

/// How short names and bare numbers map to repositories.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefContext {
    /// Lower-cased short name (`k/k`, `kops`, `capa`) → repository.
    pub aliases: BTreeMap<String, RepoRef>,
    /// The repository bare `#N` means, when the user names one.
    pub default_repo: Option<RepoRef>,
}

/// Short names used across the Kubernetes organisations' CI reports.
const K8S_ALIASES: &[(&str, &str)] = &[
    ("k/k", "kubernetes/kubernetes"),
    ("k8s", "kubernetes/kubernetes"),
    ("kubernetes", "kubernetes/kubernetes"),
    ("test-infra", "kubernetes/test-infra"),
    ("k/test-infra", "kubernetes/test-infra"),
    ("kops", "kubernetes/kops"),
    ("k8s.io", "kubernetes/k8s.io"),
    ("perf-tests", "kubernetes/perf-tests"),
    ("minikube", "kubernetes/minikube"),
    ("kubectl", "kubernetes/kubectl"),
    ("enhancements", "kubernetes/enhancements"),
    ("community", "kubernetes/community"),
    ("website", "kubernetes/website"),
    ("release", "kubernetes/release"),
    ("autoscaler", "kubernetes/autoscaler"),
    ("cloud-provider-aws", "kubernetes/cloud-provider-aws"),
    ("cloud-provider-gcp", "kubernetes/cloud-provider-gcp"),
    ("kube-state-metrics", "kubernetes/kube-state-metrics"),
    ("ingress-nginx", "kubernetes/ingress-nginx"),
    ("capi", "kubernetes-sigs/cluster-api"),
    ("cluster-api", "kubernetes-sigs/cluster-api"),
    ("capa", "kubernetes-sigs/cluster-api-provider-aws"),
    ("cluster-api-provider-aws", "kubernetes-sigs/cluster-api-provider-aws"),
    ("capz", "kubernetes-sigs/cluster-api-provider-azure"),
    ("cluster-api-provider-azure", "kubernetes-sigs/cluster-api-provider-azure"),
    ("capv", "kubernetes-sigs/cluster-api-provider-vsphere"),
    ("cluster-api-provider-vsphere", "kubernetes-sigs/cluster-api-provider-vsphere"),
    ("capg", "kubernetes-sigs/cluster-api-provider-gcp"),
    ("cluster-api-provider-gcp", "kubernetes-sigs/cluster-api-provider-gcp"),
    ("capdo", "kubernetes-sigs/cluster-api-provider-digitalocean"),
    ("cluster-api-provider-digitalocean", "kubernetes-sigs/cluster-api-provider-digitalocean"),
    ("caaph", "kubernetes-sigs/cluster-api-addon-provider-helm"),
    ("cluster-api-addon-provider-helm", "kubernetes-sigs/cluster-api-addon-provider-helm"),
    ("kind", "kubernetes-sigs/kind"),
    ("kwok", "kubernetes-sigs/kwok"),
    ("kubebuilder", "kubernetes-sigs/kubebuilder"),
    ("kubetest2", "kubernetes-sigs/kubetest2"),
    ("kueue", "kubernetes-sigs/kueue"),
    ("jobset", "kubernetes-sigs/jobset"),
    ("descheduler", "kubernetes-sigs/descheduler"),
    ("release-notes", "kubernetes-sigs/release-notes"),
    ("cloud-provider-kind", "kubernetes-sigs/cloud-provider-kind"),
    ("cloud-provider-azure", "kubernetes-sigs/cloud-provider-azure"),
    ("provider-aws-test-infra", "kubernetes-sigs/provider-aws-test-infra"),
    ("apiserver-network-proxy", "kubernetes-sigs/apiserver-network-proxy"),
    ("windows-testing", "kubernetes-sigs/windows-testing"),
    ("usage-metrics-collector", "kubernetes-sigs/usage-metrics-collector"),
    ("gcp-compute-persistent-disk-csi-driver", "kubernetes-sigs/gcp-compute-persistent-disk-csi-driver"),
    ("azuredisk-csi-driver", "kubernetes-sigs/azuredisk-csi-driver"),
    ("aws-ebs-csi-driver", "kubernetes-sigs/aws-ebs-csi-driver"),
    ("nfs-subdir-external-provisioner", "kubernetes-sigs/nfs-subdir-external-provisioner"),
    ("nfs-ganesha-server-and-external-provisioner", "kubernetes-sigs/nfs-ganesha-server-and-external-provisioner"),
    ("container-object-storage-interface", "kubernetes-sigs/container-object-storage-interface"),
    ("cosi", "kubernetes-sigs/container-object-storage-interface"),
    ("csi-release-tools", "kubernetes-csi/csi-release-tools"),
    ("csi-driver-host-path", "kubernetes-csi/csi-driver-host-path"),
    ("external-health-monitor", "kubernetes-csi/external-health-monitor"),
    ("external-snapshot-metadata", "kubernetes-csi/external-snapshot-metadata"),
    ("external-snapshotter", "kubernetes-csi/external-snapshotter"),
    ("external-provisioner", "kubernetes-csi/external-provisioner"),
    ("lib-volume-populator", "kubernetes-csi/lib-volume-populator"),
    ("volume-data-source-validator", "kubernetes-csi/volume-data-source-validator"),
    ("etcd", "etcd-io/etcd"),
    ("containerd", "containerd/containerd"),
    ("cri-o", "cri-o/cri-o"),
    ("runc", "opencontainers/runc"),
];

impl RefContext {
    /// No aliases, no default repository: only `owner/repo#N` and URLs resolve.
    pub fn empty() -> RefContext {
        RefContext::default()
    }

    /// The short names common in Kubernetes CI reports (`k/k`, `kops`, `test-infra`,
    /// `CAPA`, `CAPZ`, ...). Names not in the table stay ambiguous.
    pub fn kubernetes() -> RefContext {
        let mut c = RefContext::default();
        for (k, v) in K8S_ALIASES {
            if let Some(r) = RepoRef::parse(v) {
                c.aliases.insert((*k).to_string(), r);
            }
        }
        c
    }

    /// Adds or replaces an alias.
    pub fn with_alias(mut self, name: &str, repo: RepoRef) -> RefContext {
        self.aliases.insert(name.to_ascii_lowercase(), repo);
        self
    }

    /// Sets the repository bare `#N` means.
    pub fn with_default(mut self, repo: RepoRef) -> RefContext {
        self.default_repo = Some(repo);
        self
    }
}

fn url_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"https?://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/(?:pull|issues)/([0-9]+)")
            .expect("static regex")
    })
}

fn hash_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?)?#([0-9]+)").expect("static regex"))
}

fn sep_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[\s,;/+&(]*(?:(?:and|or)\s+)?[\s,;/+&(]*$").expect("static regex"))
}

/// Line numbers (1-based) inside fenced code blocks (fence lines included).
pub fn fenced_lines(text: &str) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut fence: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let marker: String = t.chars().take_while(|c| *c == '`' || *c == '~').collect();
        let is_fence = marker.len() >= 3 && marker.chars().all(|c| c == marker.chars().next().unwrap_or('`'));
        match &fence {
            Some(open) => {
                out.insert(i + 1);
                if is_fence && marker.starts_with(open.as_str()) && t[marker.len()..].trim().is_empty() {
                    fence = None;
                }
            }
            None if is_fence => {
                out.insert(i + 1);
                fence = Some(marker);
            }
            None => {}
        }
    }
    out
}

struct Raw {
    line: usize,
    start: usize,
    end: usize,
    raw: String,
    kind: RawKind,
}

enum RawKind {
    Full(IssueRef, Resolution),
    Short { name: String, number: u64 },
    Bare(u64),
}

fn boundary_before(line: &str, start: usize) -> bool {
    match line[..start].chars().next_back() {
        None => true,
        Some(c) => !(c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | ':' | '&' | '#' | '@')),
    }
}

fn boundary_after(line: &str, end: usize) -> bool {
    match line[end..].chars().next() {
        None => true,
        Some(c) => !(c.is_alphanumeric() || matches!(c, '_' | '-')),
    }
}

/// The repository of a short name; `post-kops` (as in "green post-kops#1") is `kops`.
fn alias_of<'a>(ctx: &'a RefContext, name: &str) -> Option<&'a RepoRef> {
    let lower = name.to_ascii_lowercase();
    ctx.aliases.get(&lower).or_else(|| {
        ["post-", "pre-", "non-"].iter().find_map(|p| lower.strip_prefix(p).and_then(|rest| ctx.aliases.get(rest)))
    })
}

/// Finds every reference in the text, in document order.
pub fn extract_refs(text: &str, ctx: &RefContext) -> Vec<FoundRef> {
    let fenced = fenced_lines(text);
    let mut raws: Vec<Raw> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let ln = i + 1;
        if fenced.contains(&ln) {
            continue;
        }
        let mut taken: Vec<(usize, usize)> = Vec::new();
        for c in url_re().captures_iter(line) {
            let m = c.get(0).expect("match");
            let (Some(o), Some(n), Some(num)) = (c.get(1), c.get(2), c.get(3)) else { continue };
            let Some(number) = parse_number(num.as_str()) else { continue };
            if !valid_part(o.as_str()) || !valid_part(n.as_str()) {
                continue;
            }
            taken.push((m.start(), m.end()));
            raws.push(Raw {
                line: ln,
                start: m.start(),
                end: m.end(),
                raw: m.as_str().to_string(),
                kind: RawKind::Full(IssueRef::new(RepoRef::new(o.as_str(), n.as_str()), number), Resolution::Url),
            });
        }
        for c in hash_re().captures_iter(line) {
            let m = c.get(0).expect("match");
            if taken.iter().any(|(a, b)| m.start() < *b && m.end() > *a) {
                continue;
            }
            let Some(num) = c.get(2) else { continue };
            let Some(number) = parse_number(num.as_str()) else { continue };
            if !boundary_before(line, m.start()) || !boundary_after(line, m.end()) {
                continue;
            }
            let kind = match c.get(1) {
                Some(name) => {
                    let name = name.as_str();
                    match name.split_once('/') {
                        Some((o, n)) if !ctx.aliases.contains_key(&name.to_ascii_lowercase()) => {
                            if !valid_part(o) || !valid_part(n) {
                                continue;
                            }
                            RawKind::Full(IssueRef::new(RepoRef::new(o, n), number), Resolution::Qualified)
                        }
                        _ => RawKind::Short { name: name.to_string(), number },
                    }
                }
                None => {
                    // `](#12` is an in-page anchor, `&#123;` an entity.
                    if line[..m.start()].ends_with("](") {
                        continue;
                    }
                    RawKind::Bare(number)
                }
            };
            raws.push(Raw { line: ln, start: m.start(), end: m.end(), raw: m.as_str().to_string(), kind });
        }
    }
    raws.sort_by_key(|r| (r.line, r.start));

    // Repositories the document names explicitly (for bare-number context).
    let mut named: BTreeSet<RepoRef> = BTreeSet::new();
    for r in &raws {
        match &r.kind {
            RawKind::Full(ir, _) => {
                named.insert(ir.repo.clone());
            }
            RawKind::Short { name, .. } => {
                if let Some(repo) = alias_of(ctx, name) {
                    named.insert(repo.clone());
                }
            }
            RawKind::Bare(_) => {}
        }
    }
    let single = if named.len() == 1 { named.iter().next().cloned() } else { None };
    let mut out: Vec<FoundRef> = Vec::with_capacity(raws.len());
    let lines: Vec<&str> = text.lines().collect();
    for (idx, r) in raws.iter().enumerate() {
        let target = match &r.kind {
            RawKind::Full(ir, how) => RefTarget::Resolved { reference: ir.clone(), how: *how },
            RawKind::Short { name, number } => match alias_of(ctx, name) {
                Some(repo) => {
                    RefTarget::Resolved { reference: IssueRef::new(repo.clone(), *number), how: Resolution::Alias }
                }
                None => RefTarget::Ambiguous {
                    number: *number,
                    why: format!("`{name}` is not a known repository (write owner/repo#N or add an alias)"),
                },
            },
            RawKind::Bare(number) => {
                // A link's text `[#5](https://github.com/o/r/pull/5)` is its URL's reference.
                let linked =
                    raws.get(idx + 1).filter(|next| next.line == r.line && next.start == r.end + 2).and_then(|next| {
                        let line = lines.get(r.line - 1).copied().unwrap_or("");
                        match &next.kind {
                            RawKind::Full(ir, Resolution::Url)
                                if line.get(r.end..r.end + 2) == Some("](") && ir.number == *number =>
                            {
                                Some(ir.clone())
                            }
                            _ => None,
                        }
                    });
                if let Some(reference) = linked {
                    out.push(FoundRef {
                        line: r.line,
                        column: r.start + 1,
                        raw: r.raw.clone(),
                        target: RefTarget::Resolved { reference, how: Resolution::Url },
                    });
                    continue;
                }
                // A list continuation on the same line inherits the repository.
                let inherited = idx
                    .checked_sub(1)
                    .map(|p| (&raws[p], &out[p]))
                    .filter(|(prev, _)| prev.line == r.line)
                    .filter(|(prev, _)| {
                        let line = lines.get(r.line - 1).copied().unwrap_or("");
                        line.get(prev.end..r.start).is_some_and(|between| sep_re().is_match(between))
                    })
                    .and_then(|(_, prev_found)| prev_found.reference().map(|x| x.repo.clone()));
                if let Some(repo) = inherited {
                    RefTarget::Resolved { reference: IssueRef::new(repo, *number), how: Resolution::Inherited }
                } else if let Some(repo) = &ctx.default_repo {
                    RefTarget::Resolved { reference: IssueRef::new(repo.clone(), *number), how: Resolution::Default }
                } else if let Some(repo) = &single {
                    RefTarget::Resolved {
                        reference: IssueRef::new(repo.clone(), *number),
                        how: Resolution::DocumentContext,
                    }
                } else if named.is_empty() {
                    RefTarget::Ambiguous {
                        number: *number,
                        why: "bare #N and the document names no repository (give a default repository)".into(),
                    }
                } else {
                    RefTarget::Ambiguous {
                        number: *number,
                        why: format!("bare #N and the document names {} repositories", named.len()),
                    }
                }
            }
        };
        out.push(FoundRef { line: r.line, column: r.start + 1, raw: r.raw.clone(), target });
    }
    out
}

/// The distinct resolved references, sorted.
pub fn unique_refs(found: &[FoundRef]) -> Vec<IssueRef> {
    let set: BTreeSet<IssueRef> = found.iter().filter_map(|f| f.reference().cloned()).collect();
    set.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(f: &FoundRef) -> String {
        match &f.target {
            RefTarget::Resolved { reference, how } => format!("{reference} {how:?}"),
            RefTarget::Ambiguous { number, .. } => format!("?#{number}"),
        }
    }

    #[test]
    fn finds_qualified_alias_url_and_lists() {
        let text =
            "Fix: k/k#137650, #137651 both OPEN; see kops#18238 and https://github.com/etcd-io/etcd/pull/21508.\n\
                    Also kubernetes-sigs/kind#42 and umc#150, green post-kops#7.";
        let found = extract_refs(text, &RefContext::kubernetes());
        let got: Vec<String> = found.iter().map(resolved).collect();
        assert_eq!(
            got,
            vec![
                "kubernetes/kubernetes#137650 Alias",
                "kubernetes/kubernetes#137651 Inherited",
                "kubernetes/kops#18238 Alias",
                "etcd-io/etcd#21508 Url",
                "kubernetes-sigs/kind#42 Qualified",
                "?#150",
                "kubernetes/kops#7 Alias",
            ]
        );
        assert_eq!(found[0].line, 1);
        assert_eq!(found[4].line, 2);
    }

    #[test]
    fn bare_numbers_need_context() {
        let ctx = RefContext::kubernetes();
        let one = extract_refs("Merged k/k#1.\n\nLater #2 landed.", &ctx);
        assert_eq!(resolved(&one[1]), "kubernetes/kubernetes#2 DocumentContext");
        let two = extract_refs("k/k#1 and kops#3.\n\nLater #2 landed.", &ctx);
        assert_eq!(resolved(&two[2]), "?#2");
        let none = extract_refs("Only #2.", &RefContext::empty());
        assert!(matches!(none[0].target, RefTarget::Ambiguous { .. }));
        let dflt = extract_refs("k/k#1 and kops#3. #2", &ctx.clone().with_default(RepoRef::new("o", "r")));
        assert_eq!(resolved(&dflt[2]), "o/r#2 Default");
    }

    #[test]
    fn link_text_takes_its_url() {
        let found = extract_refs(
            "[#138851](https://github.com/kubernetes/kubernetes/pull/138851) and kops#1",
            &RefContext::kubernetes(),
        );
        let got: Vec<String> = found.iter().map(resolved).collect();
        assert_eq!(
            got,
            vec!["kubernetes/kubernetes#138851 Url", "kubernetes/kubernetes#138851 Url", "kubernetes/kops#1 Alias"]
        );
    }

    #[test]
    fn ignores_anchors_entities_code_and_words() {
        let text = "[TL;DR](#tldr) [x](#1-patterns) &#123; abc#12x C#5 `a`\n```\nk/k#9\n```\nissue#7 #8-x";
        let found = extract_refs(text, &RefContext::kubernetes());
        let got: Vec<String> = found.iter().map(resolved).collect();
        // `C#5` and `issue#7` are short names with no alias: ambiguous, not guessed.
        assert_eq!(got, vec!["?#5", "?#7"]);
    }
}
