//! The comment on a pull request that says whether its red presubmits are its own
//! doing: the verdict, then each failure of the latest runs with its class, why, and
//! the evidence ids behind it. Written through `citriage_model::escape` (every job,
//! test and failure text is CI text), it starts with a hidden marker so a later
//! analysis updates this comment instead of adding another.

use crate::{ActionKind, Draft, Earned, PlannedRequest, Target, FORMAT_VERSION};
use citriage_model::escape::{md_cell, md_code, md_text};
use citriage_model::Evidence;
use serde_json::json;

/// The hidden marker the comment starts with, per pull request.
pub fn marker(pr: &str) -> String {
    format!("<!-- citriage:pr-risk {} -->", pr.replace("--", "- -"))
}

/// One failure as the comment shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentFailure {
    pub job: String,
    pub test: String,
    /// How the class reads (`known flake`, `new with this PR`).
    pub class: String,
    pub new_with_pr: bool,
    pub reason: String,
    /// The run's Prow page.
    pub url: String,
    pub evidence: Vec<String>,
}

/// What the comment is drafted from.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentInput {
    /// `org/repo#N`.
    pub pr: String,
    pub repo: String,
    pub number: u64,
    pub verdict: String,
    pub safe_to_retest: bool,
    /// The window searched, in words (`14 days to 2026-11-21`).
    pub window: String,
    /// Latest runs still pending.
    pub pending: Vec<String>,
    pub failures: Vec<CommentFailure>,
    /// Every evidence item the failures cite.
    pub evidence: Vec<Evidence>,
}

/// The comment's Markdown body.
pub fn body(c: &CommentInput) -> String {
    let mut s = String::new();
    s.push_str(&marker(&c.pr));
    s.push('\n');
    s.push_str("### citriage: did this PR break its presubmits?\n\n");
    s.push_str(&format!("**{}**\n\n", md_text(&c.verdict)));
    if c.failures.is_empty() {
        s.push_str("No failed test or build step in the latest run of each job.\n\n");
    } else {
        s.push_str("| class | job | failure | why | evidence |\n|---|---|---|---|---|\n");
        for f in &c.failures {
            let class = if f.new_with_pr { format!("**{}**", md_cell(&f.class)) } else { md_cell(&f.class) };
            s.push_str(&format!(
                "| {class} | [{}]({}) | {} | {} | {} |\n",
                md_cell(&f.job),
                f.url.replace(' ', "%20").replace(')', "%29"),
                md_code(&f.test),
                md_cell(&f.reason),
                f.evidence.iter().map(|e| md_code(e)).collect::<Vec<_>>().join(" ")
            ));
        }
        s.push('\n');
    }
    if !c.pending.is_empty() {
        let jobs: Vec<String> = c.pending.iter().map(|j| md_code(j)).collect();
        s.push_str(&format!("Still running: {}.\n\n", jobs.join(", ")));
    }
    s.push_str(&format!(
        "Searched the window {}: flake signals of each job without this PR's runs, the same failure pattern on the base branch and on other PRs' runs, known infrastructure signatures and setup steps, and the files this PR changes. Evidence ids resolve with `citriage evidence ID`.\n",
        md_text(&c.window)
    ));
    s
}

/// The comment as a draft: the body, the evidence that earned it, and the request that
/// posts it (`--apply` updates the comment carrying the marker instead, when there is one).
pub fn draft(c: &CommentInput) -> Draft {
    let body = body(c);
    let earned_by = c
        .evidence
        .iter()
        .map(|e| Earned { evidence: e.clone(), shows: "a failure of the latest runs, or a fact about it".into() })
        .collect();
    let path = format!("/repos/{}/issues/{}/comments", c.repo, c.number);
    Draft {
        format_version: FORMAT_VERSION,
        kind: ActionKind::Comment,
        name: format!("comment-{}", crate::slug(&c.pr)),
        subject: format!("pull request {}", c.pr),
        score: None,
        band: None,
        gate: "every failure of the PR's latest runs classified with its evidence".into(),
        title: format!("citriage: did {} break its presubmits?", c.pr),
        body: body.clone(),
        labels: Vec::new(),
        commands: Vec::new(),
        earned_by,
        would_change: vec![
            "a new run of a job (the latest run is what is classified)".into(),
            "the same failure appearing on the base branch or on other PRs' runs".into(),
            "the PR's diff changing the files a failure names".into(),
        ],
        target: Some(Target {
            repo: c.repo.clone(),
            number: Some(c.number),
            routed_by: "the pull request analysed".into(),
        }),
        suspect: None,
        payload_jobs: Vec::new(),
        merge_sha: None,
        conflict_check: None,
        requests: vec![PlannedRequest {
            method: "POST".into(),
            path,
            body: Some(json!({ "body": body })),
            captures: Vec::new(),
            require: Vec::new(),
            purpose: format!(
                "post the comment (or PATCH /repos/{}/issues/comments/ID of the earlier comment carrying {})",
                c.repo,
                marker(&c.pr)
            ),
        }],
        apply_blocked: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> CommentInput {
        CommentInput {
            pr: "kubernetes/kubernetes#5".into(),
            repo: "kubernetes/kubernetes".into(),
            number: 5,
            verdict: "look at your change: 1 failure is new with this PR".into(),
            safe_to_retest: false,
            window: "14 days to 2026-11-21".into(),
            pending: vec!["pull-x".into()],
            failures: vec![CommentFailure {
                job: "pull-kubernetes-unit".into(),
                test: "Test|Pipe `tick` <b>".into(),
                class: "new with this PR".into(),
                new_with_pr: true,
                reason: "the failure names files this PR changes: pkg/a.go\n| injected | row |".into(),
                url: "https://prow.k8s.io/view/gs/b/pr-logs/pull/5/pull-kubernetes-unit/1".into(),
                evidence: vec!["ev-0123456789ab".into()],
            }],
            evidence: Vec::new(),
        }
    }

    #[test]
    fn the_body_escapes_ci_text_and_starts_with_its_marker() {
        let b = body(&input());
        assert!(b.starts_with("<!-- citriage:pr-risk kubernetes/kubernetes#5 -->\n"));
        let row = b.lines().find(|l| l.starts_with("| **new with this PR**")).unwrap();
        // Five columns: the injected pipe and line break stay inside their cells.
        let bytes = row.as_bytes();
        let bare = (0..bytes.len()).filter(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\')).count();
        assert_eq!(bare, 6, "{row}");
        assert!(row.contains("``Test\\|Pipe `tick` <b>``"), "{row}");
        assert!(!b.contains("\n| injected"));
        assert!(b.contains("Still running: `pull-x`."));
    }

    #[test]
    fn the_draft_posts_the_body() {
        let d = draft(&input());
        assert_eq!(d.kind, ActionKind::Comment);
        assert_eq!(d.requests.len(), 1);
        assert_eq!(d.requests[0].path, "/repos/kubernetes/kubernetes/issues/5/comments");
        assert_eq!(d.requests[0].body.as_ref().unwrap()["body"], d.body);
        assert_eq!(marker("a/b#1 --> x"), "<!-- citriage:pr-risk a/b#1 - -> x -->");
    }
}
