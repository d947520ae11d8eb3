//! A bug text for a failure pattern (a cluster of the latest clustering run), in the
//! sections of Kubernetes' failing-test issue template, routed by the pattern's owner
//! (its SIG, stored as go.k8s.io/triage names it — `node` — or as `sig-node`: the
//! `sig/<name>` label; no owner: `needs-sig`).

use crate::request::{Capture, PlannedRequest};
use crate::{first_line, slug, ActionKind, Draft, Earned, Refusal, Target, FORMAT_VERSION};
use citriage_model::evidence::sha256_hex;
use citriage_model::{Day, Evidence, EvidenceKind};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::fmt::Write as _;

/// One stored failure of a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleFailure {
    /// The job as the dashboards name it (`pr:` for presubmits).
    pub job: String,
    pub build_id: String,
    /// The build's page.
    pub url: String,
    pub test: String,
    pub started: Option<i64>,
    /// The whole failure text.
    pub text: String,
}

impl SampleFailure {
    /// The evidence item for this failure: the JUnit case at the build's page, its
    /// first line, the hash of the whole text (the triage report cites the same ids).
    pub fn evidence(&self) -> Evidence {
        failure_evidence(&self.url, &self.test, &self.text, self.started)
    }
}

/// Evidence for one failed test of a build: the case at the build's page and test,
/// its failure text's first line (at most 300 characters), the hash of the whole text,
/// dated by the build's start.
pub fn failure_evidence(build_url: &str, test: &str, text: &str, started: Option<i64>) -> Evidence {
    let first: String = text.lines().next().unwrap_or("").chars().take(300).collect();
    Evidence::new(
        EvidenceKind::JunitCase,
        format!("{build_url} :: {test}"),
        first,
        sha256_hex(text.as_bytes()),
        started.map(|s| Day::from_unix_seconds(s).to_string()).unwrap_or_default(),
    )
}

/// What a pattern's bug is written from (the dashboard's figures for the cluster).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternFacts {
    pub profile: String,
    pub stable_id: String,
    /// A representative failure text.
    pub text: String,
    /// The owner (SIG) of the pattern, empty when none.
    pub owner: String,
    /// Known signatures the text matches.
    pub signatures: Vec<String>,
    /// Failures in the run's window, and its first and last day.
    pub total: u64,
    pub window: (Day, Day),
    /// Unix seconds of the first and last failure.
    pub first_seen: i64,
    pub last_seen: i64,
    /// Jobs and tests with their failures, most first.
    pub jobs: Vec<(String, u64)>,
    pub tests: Vec<(String, u64)>,
    /// Newest failures first.
    pub samples: Vec<SampleFailure>,
    /// The last 7 days against the 7 before (`growing: 3 → 12`), when known.
    pub drift: Option<String>,
    /// The pattern's page on a dashboard, when known.
    pub page: Option<String>,
}

/// Where a pattern's bug goes.
#[derive(Debug, Clone)]
pub struct BugRouting {
    /// The repository given explicitly (overrides `default_repo`).
    pub repo: Option<String>,
    /// The repository bugs of owned patterns go to (`kubernetes/kubernetes`).
    pub default_repo: String,
}

impl Default for BugRouting {
    fn default() -> Self {
        BugRouting { repo: None, default_repo: "kubernetes/kubernetes".into() }
    }
}

fn day(t: i64) -> String {
    Day::from_unix_seconds(t).to_string()
}

/// The bug draft of a pattern. A pattern without a stored failure text is refused.
pub fn bug(f: &PatternFacts, r: &BugRouting) -> Result<Draft, Refusal> {
    let what = format!("pattern {}/{}", f.profile, f.stable_id);
    let samples: Vec<&SampleFailure> = f.samples.iter().filter(|s| !s.text.trim().is_empty()).take(5).collect();
    if samples.is_empty() || f.total == 0 {
        return Err(Refusal::MissingEvidence { what, missing: "no stored failure text of the pattern".into() });
    }
    let earned: Vec<Earned> = samples
        .iter()
        .map(|s| Earned {
            evidence: s.evidence(),
            shows: format!("{} fails {} in build {}", s.job, s.test, s.build_id),
        })
        .collect();
    // The store keeps owners as go.k8s.io/triage does (`node`, `apps`); `sig-node` is read too.
    let canonical = citriage_model::owner::canonical(&f.owner);
    let sig = Some(canonical.as_str()).filter(|s| !s.is_empty());
    let mut labels = vec!["kind/failing-test".to_string()];
    let routed_by = match (sig, &r.repo) {
        (Some(s), _) => {
            labels.push(format!("sig/{s}"));
            format!("owner {s} (label sig/{s})")
        }
        (None, _) => {
            labels.push("needs-sig".into());
            "no owner known (label needs-sig)".to_string()
        }
    };
    let repo = r.repo.clone().unwrap_or_else(|| r.default_repo.clone());
    let routed_by = if r.repo.is_some() { format!("{routed_by}; repository given with --repo") } else { routed_by };
    let top_test = f.tests.first().map(|t| t.0.as_str()).unwrap_or("");
    let top_job = f.jobs.first().map(|j| j.0.as_str()).unwrap_or("");
    let title = format!("[Failing Test] {} ({}): {}", first_line(top_test, 120), top_job, first_line(&f.text, 100));
    let mut b = String::new();
    let _ = writeln!(b, "### Which jobs are failing?\n");
    for (j, n) in f.jobs.iter().take(20) {
        let _ = writeln!(b, "- {j}: {n} failure(s)");
    }
    if f.jobs.len() > 20 {
        let _ = writeln!(b, "- … and {} more job(s)", f.jobs.len() - 20);
    }
    let _ = writeln!(b, "\n### Which tests are failing?\n");
    for (t, n) in f.tests.iter().take(20) {
        let _ = writeln!(b, "- {t}: {n} failure(s)");
    }
    let _ = writeln!(b, "\n### Since when has it been failing?\n");
    let _ = writeln!(
        b,
        "First seen {}, last seen {}: {} failure(s) from {} to {}{}.",
        day(f.first_seen),
        day(f.last_seen),
        f.total,
        f.window.0,
        f.window.1,
        f.drift.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
    );
    let _ = writeln!(b, "\n### Sample builds\n");
    for (s, e) in samples.iter().zip(&earned) {
        let _ = writeln!(
            b,
            "- [{} {}]({}) {} `{}` [{}]",
            s.job,
            s.build_id,
            s.url,
            s.started.map(day).unwrap_or_default(),
            s.test.replace('`', "'"),
            e.evidence.id
        );
    }
    let _ = writeln!(b, "\n### Reason for failure (if possible)\n");
    let lines: Vec<&str> = samples[0].text.lines().take(12).collect();
    let text = lines.join("\n");
    let fence = if text.contains("```") { "~~~~" } else { "```" };
    let _ = writeln!(b, "{fence}\n{text}\n{fence}");
    let _ = writeln!(b, "\n### Anything else we need to know?\n");
    if f.signatures.is_empty() {
        let _ = writeln!(b, "- No known failure signature matches this text.");
    } else {
        let _ =
            writeln!(b, "- Known signature(s): {} — look for an existing issue or fix first.", f.signatures.join(", "));
    }
    let _ = writeln!(
        b,
        "- citriage pattern {} ({} profile){}.",
        f.stable_id,
        f.profile,
        f.page.as_deref().map(|p| format!(": {p}")).unwrap_or_default()
    );
    let _ = writeln!(b, "- Evidence ids resolve with `citriage evidence ID`.");
    let would_change = vec![
        format!(
            "Closed if {} stops failing with this text for the rest of the window (last seen {}).",
            top_test,
            day(f.last_seen)
        ),
        if f.signatures.is_empty() {
            "Becomes a duplicate if the text matches a known signature with an open issue.".to_string()
        } else {
            format!("Likely a duplicate: known signature(s) {} may already have an issue.", f.signatures.join(", "))
        },
        "Re-routed if the failing code belongs to another SIG than the owner the test names.".into(),
    ];
    let requests = vec![PlannedRequest {
        method: "POST".into(),
        path: format!("/repos/{repo}/issues"),
        body: Some(json!({"title": title, "body": b, "labels": labels})),
        captures: vec![Capture { name: "issue_url".into(), pointer: "/html_url".into() }],
        require: Vec::new(),
        purpose: format!("file the bug in {repo}"),
    }];
    Ok(Draft {
        format_version: FORMAT_VERSION,
        kind: ActionKind::Bug,
        name: format!("bug-pattern-{}-{}", slug(&f.profile), slug(&f.stable_id)),
        subject: what,
        score: None,
        band: None,
        gate: "a pattern of the latest clustering run with its stored failure texts".into(),
        title,
        body: b,
        labels,
        commands: Vec::new(),
        earned_by: earned,
        would_change,
        target: Some(Target { repo, number: None, routed_by }),
        suspect: None,
        payload_jobs: Vec::new(),
        merge_sha: None,
        conflict_check: None,
        requests,
        apply_blocked: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(owner: &str, samples: Vec<SampleFailure>) -> PatternFacts {
        PatternFacts {
            profile: "default".into(),
            stable_id: "abc123".into(),
            text: "error: connection refused".into(),
            owner: owner.into(),
            signatures: vec![],
            total: 3,
            window: (Day(20000), Day(20013)),
            first_seen: 20000 * 86400,
            last_seen: 20013 * 86400,
            jobs: vec![("ci-a".into(), 2), ("ci-b".into(), 1)],
            tests: vec![("[sig-node] X".into(), 3)],
            samples,
            drift: Some("growing: 1 → 2".into()),
            page: None,
        }
    }

    fn sample() -> SampleFailure {
        SampleFailure {
            job: "ci-a".into(),
            build_id: "1".into(),
            url: "https://prow.k8s.io/view/gs/b/logs/ci-a/1".into(),
            test: "[sig-node] X".into(),
            started: Some(20013 * 86400),
            text: "error: connection refused\nmore".into(),
        }
    }

    #[test]
    fn a_bug_is_routed_by_its_owner_and_cites_its_failures() {
        let d = bug(&facts("sig-node", vec![sample()]), &BugRouting::default()).expect("drafted");
        assert_eq!(d.labels, vec!["kind/failing-test", "sig/node"]);
        assert_eq!(d.target.as_ref().map(|t| t.repo.as_str()), Some("kubernetes/kubernetes"));
        assert_eq!(d.earned_by.len(), 1);
        assert!(d.body.contains(&d.earned_by[0].evidence.id));
        assert_eq!(d.earned_by[0].evidence.excerpt, "error: connection refused");
        let d = bug(&facts("", vec![sample()]), &BugRouting { repo: Some("o/r".into()), ..Default::default() })
            .expect("drafted");
        assert!(d.labels.contains(&"needs-sig".to_string()));
        assert_eq!(d.requests[0].path, "/repos/o/r/issues");
    }

    #[test]
    fn no_failure_text_no_bug() {
        let r = bug(&facts("sig-node", vec![]), &BugRouting::default()).expect_err("refused");
        assert!(matches!(r, Refusal::MissingEvidence { .. }), "{r}");
    }
}
