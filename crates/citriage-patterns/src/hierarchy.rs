//! The cluster hierarchy: a pattern (a cluster) splits into sub-patterns three ways:
//!
//! * **by template**: the Drain template ([`crate::drain`]) of its members' normalized texts
//!   (first [`TEMPLATE_TEXT_LEN`] bytes, lines joined), so wording variants inside one
//!   cluster show apart;
//! * **by job family**: the job name without its version, release and numbered parts
//!   ([`job_family`]), so a pattern seen across 40 jobs shows which kinds of jobs it hits;
//! * **by signature**: the known signature ([`crate::signatures`]) its texts match, or none.
//!
//! Every sub-pattern lists its members (indices into the caller's failures), its first and
//! last sighting and one piece of evidence: the newest member's job, build, test and the
//! first line of its failure text. Sub-patterns are ordered by kind, then most failures,
//! then label, so the result is deterministic.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use crate::cluster::{Cluster, FailureRef, NormalizedTexts};
use crate::drain::{Drain, DrainConfig};
use crate::normalize::{normalize, Profile};
use crate::signatures::Catalogue;

/// Bytes of a normalized text given to the template miner.
pub const TEMPLATE_TEXT_LEN: usize = 600;

/// Distinct texts whose template lines are made at once (in parallel) before the miner
/// takes them: what bounds the lines held, whatever the cluster's size.
const TEMPLATE_CHUNK: usize = 4096;

/// How a sub-pattern splits its pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubKind {
    /// By Drain template.
    Template,
    /// By job family.
    JobFamily,
    /// By known signature.
    Signature,
}

impl SubKind {
    /// Name as shown.
    pub fn name(self) -> &'static str {
        match self {
            SubKind::Template => "template",
            SubKind::JobFamily => "job-family",
            SubKind::Signature => "signature",
        }
    }
}

/// A failure shown as evidence of a sub-pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubEvidence {
    /// Job.
    pub job: String,
    /// Build (as the caller names it).
    pub build: String,
    /// Test.
    pub test: String,
    /// First line of the failure text (at most 300 characters).
    pub excerpt: String,
}

/// One sub-pattern of a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubPattern {
    /// How it splits the pattern.
    pub kind: SubKind,
    /// The template, job family or signature id (`(none)` when no signature matches).
    pub label: String,
    /// Members: indices into the caller's failures, ascending.
    pub members: Vec<u32>,
    /// First and last sighting (the caller's time of each failure; 0 when unknown).
    pub first_seen: i64,
    pub last_seen: i64,
    /// The newest member.
    pub evidence: SubEvidence,
}

/// A job's family: its name without `pr:`, versions, release branches and numbered parts
/// (`ci-kubernetes-e2e-gce-1-33` → `ci-kubernetes-e2e-gce`, `e2e-kops-grid-gce-calico-u2404-k35`
/// → `e2e-kops-grid-gce-calico`).
pub fn job_family(job: &str) -> String {
    let job = job.strip_prefix("pr:").unwrap_or(job);
    let keep = |seg: &str| {
        let b = seg.as_bytes();
        if b.is_empty() || b.iter().all(|c| c.is_ascii_digit() || *c == b'.') {
            return false;
        }
        // k35, u2404, v1, r2, 1.33-style versions
        if b.len() >= 2
            && matches!(b[0], b'k' | b'u' | b'v' | b'r')
            && b[1..].iter().all(|c| c.is_ascii_digit() || *c == b'.')
        {
            return false;
        }
        let branch = matches!(seg, "master" | "main" | "beta" | "stable" | "latest" | "release")
            || seg.starts_with("stable") && b[6..].iter().all(u8::is_ascii_digit);
        !branch
    };
    let parts: Vec<&str> = job.split('-').filter(|s| keep(s)).collect();
    if parts.is_empty() {
        job.to_string()
    } else {
        parts.join("-")
    }
}

fn evidence_of(failures: &[FailureRef<'_>], m: u32) -> SubEvidence {
    let f = &failures[m as usize];
    SubEvidence {
        job: f.job.to_string(),
        build: f.build.to_string(),
        test: f.test.to_string(),
        excerpt: f.text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").chars().take(300).collect(),
    }
}

fn group(
    kind: SubKind,
    groups: BTreeMap<String, Vec<u32>>,
    failures: &[FailureRef<'_>],
    started: &[i64],
    out: &mut Vec<SubPattern>,
) {
    let mut subs: Vec<SubPattern> = groups
        .into_iter()
        .map(|(label, mut members)| {
            members.sort_unstable();
            let time = |m: u32| started.get(m as usize).copied().unwrap_or(0);
            let first_seen = members.iter().map(|&m| time(m)).min().unwrap_or(0);
            let last_seen = members.iter().map(|&m| time(m)).max().unwrap_or(0);
            let newest = members.iter().copied().max_by_key(|&m| (time(m), std::cmp::Reverse(m))).unwrap_or(0);
            SubPattern { kind, label, evidence: evidence_of(failures, newest), members, first_seen, last_seen }
        })
        .collect();
    subs.sort_by(|a, b| b.members.len().cmp(&a.members.len()).then_with(|| a.label.cmp(&b.label)));
    out.extend(subs);
}

/// The line a failure text gives the template miner: its normalized text (default
/// profile; `normalized` when the caller has it) cut to [`TEMPLATE_TEXT_LEN`] bytes, lines
/// joined.
fn template_line(text: &str, normalized: Option<&str>) -> String {
    let owned;
    let n = match normalized {
        Some(n) => n,
        None => {
            owned = normalize(text, Profile::Default);
            &owned
        }
    };
    let mut cut = n.len().min(TEMPLATE_TEXT_LEN);
    while !n.is_char_boundary(cut) {
        cut -= 1;
    }
    n[..cut].replace('\n', " ")
}

/// The sub-patterns of `cluster` (see the module docs). `started` gives each failure's time
/// (indexed like `failures`; missing entries count as 0); `catalogue` enables the signature
/// split; `normalized`, the clustering's normalized texts, saves normalizing the texts again
/// when they were normalized under the default profile (the one templates are mined from).
pub fn sub_patterns(
    cluster: &Cluster,
    failures: &[FailureRef<'_>],
    started: &[i64],
    catalogue: Option<&Catalogue>,
    normalized: Option<&NormalizedTexts>,
) -> Vec<SubPattern> {
    sub_patterns_in_chunks(cluster, failures, started, catalogue, normalized, TEMPLATE_CHUNK)
}

/// [`sub_patterns`], the template lines made `chunk` distinct texts at a time.
fn sub_patterns_in_chunks(
    cluster: &Cluster,
    failures: &[FailureRef<'_>],
    started: &[i64],
    catalogue: Option<&Catalogue>,
    normalized: Option<&NormalizedTexts>,
    chunk: usize,
) -> Vec<SubPattern> {
    let mut out = Vec::new();
    // Distinct raw texts once each (members in ascending order, so the first index is stable).
    let mut by_text: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for &m in &cluster.members {
        by_text.entry(failures[m as usize].text).or_default().push(m);
    }
    // Each distinct text's template line and first known signature, in parallel (the
    // texts are independent), a chunk at a time; the miner takes the lines in text order
    // as each chunk is made, so only a chunk's lines are held, not one per distinct text.
    let normalized = normalized.filter(|n| n.profile == Profile::Default);
    let texts: Vec<(&str, u32)> = by_text.iter().map(|(t, ms)| (*t, ms[0])).collect();
    let mut drain = Drain::new(DrainConfig::default());
    let mut tmpl_of_text: Vec<u32> = Vec::with_capacity(texts.len());
    let mut signatures: Vec<Option<String>> = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(chunk.max(1)) {
        let facts: Vec<(String, Option<String>)> = chunk
            .par_iter()
            .with_min_len(32)
            .map(|&(text, m)| {
                let line = template_line(text, normalized.map(|n| n.of(m)));
                let signature = catalogue.map(|cat| cat.match_text(text).into_iter().next().map(|s| s.id));
                (line, signature.flatten())
            })
            .collect();
        for (line, signature) in facts {
            tmpl_of_text.push(drain.add(&line));
            signatures.push(signature);
        }
    }
    drop(texts);
    // by template
    let templates = drain.finish();
    let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (ms, t) in by_text.values().zip(&tmpl_of_text) {
        groups.entry(templates.of(*t).template.clone()).or_default().extend(ms);
    }
    group(SubKind::Template, groups, failures, started, &mut out);
    // by job family
    // Each job's family computed once (many failures share a job).
    let mut by_job: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for &m in &cluster.members {
        by_job.entry(failures[m as usize].job).or_default().push(m);
    }
    let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (job, ms) in by_job {
        groups.entry(job_family(job)).or_default().extend(ms);
    }
    group(SubKind::JobFamily, groups, failures, started, &mut out);
    // by signature
    if catalogue.is_some() {
        let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for (ms, id) in by_text.values().zip(signatures) {
            groups.entry(id.unwrap_or_else(|| "(none)".to_string())).or_default().extend(ms);
        }
        group(SubKind::Signature, groups, failures, started, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{cluster, ClusterConfig};

    #[test]
    fn the_clusterings_normalized_texts_give_the_same_sub_patterns() {
        let texts = [
            "Timed out after 300s: pod dns-1234/web-7d9f8c6b5-x2x4z never became Ready\nnode n1 is NotReady",
            "Timed out after 60s: pod dns-4321/web-5c4b3a2d1-q8w9z never became Ready\nnode n2 is NotReady",
            "error creating disk pvc-000bd8e5-85b4-441c-37e4-57c907c1e8e0 in zone us-central1-b",
            "error creating disk pvc-0be9a60f-ce74-487a-7f3a-9553ff4d6983 in zone us-central1-f",
        ];
        let fs: Vec<FailureRef> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| FailureRef { test: "t", text: t, job: ["ci-a-1-33", "ci-b"][i % 2], build: "1" })
            .collect();
        let cat = Catalogue::builtin();
        for profile in Profile::ALL {
            let (c, normalized) = crate::cluster::cluster_with_texts(&fs, &ClusterConfig::new(profile));
            assert_eq!(normalized.of_failure.len(), fs.len());
            for (m, f) in fs.iter().enumerate() {
                assert_eq!(normalized.of(m as u32), normalize(f.text, profile), "{profile:?}");
            }
            for cl in &c.clusters {
                let fresh = sub_patterns(cl, &fs, &[1, 2, 3, 4], Some(&cat), None);
                let reused = sub_patterns(cl, &fs, &[1, 2, 3, 4], Some(&cat), Some(&normalized));
                assert!(!fresh.is_empty());
                assert_eq!(fresh, reused, "{profile:?}");
            }
        }
    }

    #[test]
    fn the_template_lines_made_a_chunk_at_a_time_give_the_same_sub_patterns() {
        // Distinct texts across several chunks, in a few shapes, from a few jobs.
        let texts: Vec<String> = (0..3000)
            .map(|i| match i % 3 {
                0 => format!("Timed out after {i}s: pod ns-{i}/web-{i} never became Ready"),
                1 => format!("error creating disk pvc-{i:08x} in zone us-central1-{}", ["a", "b"][i % 2]),
                _ => format!("googleapi: Error 403: Quota 'CPUS' exceeded. Limit: {i}.0 in region r{}", i % 7),
            })
            .collect();
        let fs: Vec<FailureRef> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| FailureRef { test: "t", text: t, job: ["ci-a-1-33", "ci-b", "ci-c"][i % 3], build: "1" })
            .collect();
        let started: Vec<i64> = (0..fs.len() as i64).collect();
        let cat = Catalogue::builtin();
        let (c, normalized) = crate::cluster::cluster_with_texts(&fs, &ClusterConfig::new(Profile::Default));
        let big = c.clusters.iter().max_by_key(|c| c.members.len()).unwrap();
        assert!(big.members.len() >= 500, "{}", big.members.len());
        let whole = sub_patterns_in_chunks(big, &fs, &started, Some(&cat), Some(&normalized), usize::MAX);
        for chunk in [1, 7, 256] {
            let chunked = sub_patterns_in_chunks(big, &fs, &started, Some(&cat), Some(&normalized), chunk);
            assert_eq!(chunked, whole, "chunks of {chunk}");
        }
    }

    #[test]
    fn families() {
        assert_eq!(job_family("ci-kubernetes-e2e-gce-1-33"), "ci-kubernetes-e2e-gce");
        assert_eq!(job_family("e2e-kops-grid-gce-calico-u2404-k35"), "e2e-kops-grid-gce-calico");
        assert_eq!(job_family("pr:pull-kubernetes-e2e-kind"), "pull-kubernetes-e2e-kind");
        assert_eq!(job_family("ci-kubernetes-e2e-gce-master"), "ci-kubernetes-e2e-gce");
    }

    #[test]
    fn splits_by_template_family_and_signature() {
        let texts = [
            "Timed out after 300s: pod dns-1234/web-7d9f8c6b5-x2x4z never became Ready: node n1 is NotReady",
            "Timed out after 60s: pod dns-4321/web-5c4b3a2d1-q8w9z never became Ready: node n2 is NotReady",
            "Timed out after 61s: pod dns-4321/web-5c4b3a2d1-q8w9z never became Ready: node n2 is NotReady",
        ];
        let jobs = ["ci-e2e-gce-1-33", "ci-e2e-gce-1-34", "ci-e2e-kind"];
        let fs: Vec<FailureRef> = texts
            .iter()
            .zip(jobs)
            .enumerate()
            .map(|(i, (t, j))| FailureRef { test: "t", text: t, job: j, build: ["1", "2", "3"][i] })
            .collect();
        let c = cluster(&fs, &ClusterConfig::new(Profile::Default));
        assert_eq!(c.clusters.len(), 1);
        let subs = sub_patterns(&c.clusters[0], &fs, &[10, 20, 30], Some(&Catalogue::builtin()), None);
        let fam: Vec<(&str, usize)> =
            subs.iter().filter(|s| s.kind == SubKind::JobFamily).map(|s| (s.label.as_str(), s.members.len())).collect();
        assert_eq!(fam, vec![("ci-e2e-gce", 2), ("ci-e2e-kind", 1)]);
        let gce = subs.iter().find(|s| s.label == "ci-e2e-gce").expect("family");
        assert_eq!((gce.first_seen, gce.last_seen), (10, 20));
        assert_eq!(gce.evidence.build, "2");
        let tmpl: Vec<&SubPattern> = subs.iter().filter(|s| s.kind == SubKind::Template).collect();
        assert_eq!(tmpl.iter().map(|s| s.members.len()).sum::<usize>(), 3);
        let sig: usize = subs.iter().filter(|s| s.kind == SubKind::Signature).map(|s| s.members.len()).sum();
        assert_eq!(sig, 3);
    }
}
