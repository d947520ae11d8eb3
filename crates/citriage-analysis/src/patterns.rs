//! Patterns and sub-patterns from build data (runbook Phase 3, rule 14): the failures
//! of a selected category's builds in the window are clustered by failure text; each
//! cluster becomes a sub-pattern with its jobs, tests, sample builds, a representative
//! failure with the spans shared by all members, first/last seen, the owning SIG from
//! `[sig-x]` tags, and any known signature that matches. Pure: takes builds, returns data.

use crate::build_findings::build_url;
use citriage_model::build::BuildRecord;
use citriage_model::{Day, Evidence, EvidenceKind};
use citriage_patterns::cluster::{cluster, ClusterConfig, FailureRef};
use citriage_patterns::normalize::Profile;
use citriage_patterns::signatures::Catalogue;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A known failure mode that matched a sub-pattern.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnownSignature {
    pub id: String,
    pub name: String,
    pub class: String,
    pub fix: String,
    /// A mechanical fix shape, when the signature has one.
    pub sketch: String,
}

/// One sub-pattern: a cluster of failures with the same signature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubPattern {
    /// go.k8s.io/triage-compatible id of the cluster key.
    pub cluster_id: String,
    pub failures: usize,
    pub jobs: Vec<String>,
    /// Tests, most failures first.
    pub tests: Vec<(String, usize)>,
    /// A representative failure text (capped) and the byte spans shared by all members
    /// (alternating same/different lengths, go.k8s.io/triage style).
    pub text: String,
    pub spans: Vec<usize>,
    pub first_seen: Option<Day>,
    pub last_seen: Option<Day>,
    /// `sig-x` from the tests' `[sig-x]` tags, most common first.
    pub owner: Option<String>,
    pub signature: Option<KnownSignature>,
    /// JUnit evidence: up to 3 failing cases in distinct builds, newest first.
    pub evidence: Vec<Evidence>,
}

/// The sub-patterns of one category.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryPatterns {
    pub category: String,
    pub failures: usize,
    pub builds: usize,
    /// Largest first.
    pub sub_patterns: Vec<SubPattern>,
}

fn owner_of(tests: &[(String, usize)]) -> Option<String> {
    let mut votes: BTreeMap<String, usize> = BTreeMap::new();
    for (t, n) in tests {
        let mut rest = t.as_str();
        while let Some(i) = rest.find("[sig-") {
            let tail = &rest[i + 1..];
            if let Some(j) = tail.find(']') {
                *votes.entry(citriage_model::owner::canonical(&tail[..j])).or_insert(0) += n;
                rest = &tail[j..];
            } else {
                break;
            }
        }
    }
    votes.into_iter().max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0))).map(|(k, _)| k)
}

fn cap(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut i = n;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    format!("{}…", &s[..i])
}

/// Clusters the failures of `builds` (any jobs; only failed/errored tests with text,
/// harness steps excluded) into sub-patterns.
pub fn sub_patterns(
    category: &str,
    builds: &[&BuildRecord],
    harness: &[String],
    catalogue: &Catalogue,
) -> CategoryPatterns {
    let harness: BTreeSet<&str> = harness.iter().map(String::as_str).collect();
    // (build index, test index) of each failure
    let mut idx: Vec<(usize, usize)> = Vec::new();
    let jobs: Vec<String> = builds.iter().map(|b| b.dashboard_job()).collect();
    for (bi, b) in builds.iter().enumerate() {
        for (ti, t) in b.tests.iter().enumerate() {
            if (t.status == "failed" || t.status == "error")
                && t.failure_text.as_deref().is_some_and(|x| !x.trim().is_empty())
                && !harness.contains(t.name.as_str())
            {
                idx.push((bi, ti));
            }
        }
    }
    let refs: Vec<FailureRef<'_>> = idx
        .iter()
        .map(|&(bi, ti)| {
            let t = &builds[bi].tests[ti];
            FailureRef {
                test: t.name.as_str(),
                text: t.failure_text.as_deref().unwrap_or(""),
                job: jobs[bi].as_str(),
                build: builds[bi].path.as_str(),
            }
        })
        .collect();
    let clustering = cluster(&refs, &ClusterConfig::new(Profile::Default));
    let mut subs = Vec::new();
    for c in &clustering.clusters {
        let members: Vec<(usize, usize)> = c.members.iter().map(|&m| idx[m as usize]).collect();
        let mut js: BTreeSet<String> = BTreeSet::new();
        let mut days: Vec<i64> = Vec::new();
        for &(bi, _) in &members {
            js.insert(jobs[bi].clone());
            if let Some(s) = builds[bi].started {
                days.push(s);
            }
        }
        let tests: Vec<(String, usize)> = c.tests.iter().map(|t| (t.test.clone(), t.members.len())).collect();
        let signature = catalogue.match_text(&c.text).into_iter().next().map(|m| KnownSignature {
            id: m.id,
            name: m.name,
            class: serde_json::to_value(m.class).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            fix: m.fix,
            sketch: m.sketch,
        });
        // Evidence: newest failing cases in distinct builds.
        let mut ordered = members.clone();
        ordered.sort_by(|a, b| {
            builds[b.0].started.cmp(&builds[a.0].started).then_with(|| builds[a.0].path.cmp(&builds[b.0].path))
        });
        let mut seen_builds = BTreeSet::new();
        let mut evidence = Vec::new();
        for (bi, ti) in ordered {
            if evidence.len() >= 3 || !seen_builds.insert(bi) {
                continue;
            }
            let b = builds[bi];
            let t = &b.tests[ti];
            let first = t.failure_text.as_deref().unwrap_or("").lines().next().unwrap_or("").to_string();
            evidence.push(Evidence::new(
                EvidenceKind::JunitCase,
                format!("{}/{} :: {}", build_url(b), t.file, t.name),
                cap(&first, 300),
                String::new(),
                b.started.map(|s| Day::from_unix_seconds(s).to_string()).unwrap_or_default(),
            ));
        }
        subs.push(SubPattern {
            cluster_id: c.k8s_id.clone(),
            failures: c.members.len(),
            jobs: js.into_iter().collect(),
            owner: owner_of(&tests),
            tests,
            text: cap(&c.text, 1500),
            spans: if c.text.len() <= 1500 { c.spans.clone() } else { Vec::new() },
            first_seen: days.iter().min().map(|&s| Day::from_unix_seconds(s)),
            last_seen: days.iter().max().map(|&s| Day::from_unix_seconds(s)),
            signature,
            evidence,
        });
    }
    CategoryPatterns { category: category.to_string(), failures: idx.len(), builds: builds.len(), sub_patterns: subs }
}
