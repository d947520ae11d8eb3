//! The comment on a pull request (`act comment ORG/REPO#N`): the PR's analysis
//! ([`crate::pr`]) drafted as a Markdown comment (`citriage_actions::pr_comment`), and
//! `--apply`: posted through the GitHub client, or the earlier comment carrying the
//! draft's hidden marker updated in place, so the PR keeps one citriage comment.

use crate::error::{Error, Result};
use crate::pr::PrRisk;
use citriage_actions::pr_comment::{self, CommentFailure, CommentInput};
use citriage_actions::Draft;
use citriage_github::{ClientConfig, GithubClient, IssueRef, NoCache, RepoRef};
use serde::Serialize;
use std::io::Write;

/// The comment's input from a PR's analysis.
pub fn input(r: &PrRisk) -> CommentInput {
    let (repo, number) =
        r.pr.split_once('#').map_or((r.pr.clone(), 0), |(a, b)| (a.to_string(), b.parse().unwrap_or(0)));
    CommentInput {
        pr: r.pr.clone(),
        repo,
        number,
        verdict: r.verdict.line.clone(),
        safe_to_retest: r.verdict.safe_to_retest,
        window: format!("{} days to {}", r.window_days, r.as_of),
        pending: r.pending.clone(),
        failures: r
            .failures
            .iter()
            .map(|f| CommentFailure {
                job: f.job.clone(),
                test: f.test.clone(),
                class: f.class.label().to_string(),
                new_with_pr: f.class == citriage_analysis::pr_risk::Class::NewWithPr,
                reason: f.reason.clone(),
                url: f.url.clone(),
                evidence: f.evidence.clone(),
            })
            .collect(),
        evidence: r.evidence.clone(),
    }
}

/// The comment draft of a PR's analysis.
pub fn draft(r: &PrRisk) -> Draft {
    pr_comment::draft(&input(r))
}

/// What the report checks said of a draft: the verifier's rules that judge claims and
/// wording (those an alert passes before it is sent: cited builds ended as said,
/// cited PRs and issues exist, no placeholder, no hedge); the structural rules of a
/// triage report do not apply to a comment.
#[derive(Debug, Clone, Serialize)]
pub struct Checks {
    /// Findings, one line each (`line N: message (rule)`); empty: the draft may be posted.
    pub findings: Vec<String>,
    /// Claims the checks confirmed, and those they could not check.
    pub verified: usize,
    pub unchecked: usize,
}

/// Runs the checks on a draft's body, against the store's builds and GitHub's answers
/// in the store's cache (nothing is fetched).
pub fn check(store: &citriage_store::Store, d: &Draft) -> Result<Checks> {
    let cache = std::rc::Rc::new(store.location().open()?);
    let gh = crate::github::client(cache.clone(), citriage_github::DEFAULT_API_BASE, true);
    let builds = crate::verify::StoreBuilds::new(cache);
    let code = citriage_verify::NoCode;
    let resolvers = citriage_verify::Resolvers { refs: &gh, code: &code, builds: &builds };
    let v = citriage_verify::verify(&d.body, &resolvers, &citriage_verify::VerifyOptions::default());
    let findings: Vec<String> = v
        .findings
        .iter()
        .filter(|f| citriage_alerts::check::ALERT_RULES.contains(&f.rule_id.as_str()))
        .map(|f| format!("line {}: {} ({})", f.line, f.message, f.rule_id))
        .collect();
    let verified = v.claims.iter().filter(|c| c.verdict == citriage_verify::Verdict::Verified).count();
    Ok(Checks { findings, verified, unchecked: v.unchecked.len() })
}

/// What `--apply` did.
#[derive(Debug, Clone, Serialize)]
pub struct Posted {
    /// `posted` (a new comment) or `updated` (the earlier one carrying the marker).
    pub action: &'static str,
    pub comment_id: Option<u64>,
    pub url: Option<String>,
}

/// Posts the draft through the GitHub API at `api` (token from the environment), or
/// updates the PR's earlier comment that carries the draft's marker; writes to `log`
/// what it sends before sending it. Nothing is sent without a token.
pub fn apply(d: &Draft, api: &str, log: &mut dyn Write) -> Result<Posted> {
    let Some(target) = &d.target else { return Err(Error::input(format!("{}: no pull request to post to", d.name))) };
    let number = target.number.ok_or_else(|| Error::input(format!("{}: no pull request number", d.name)))?;
    let Some(token) = crate::act::token_from_env() else {
        return Err(Error::input(format!(
            "{}: --apply needs a GitHub token in GITHUB_TOKEN (or GH_TOKEN); nothing was sent",
            d.name
        )));
    };
    let repo = RepoRef::parse(&target.repo)
        .ok_or_else(|| Error::input(format!("{}: {:?} is not OWNER/NAME", d.name, target.repo)))?;
    let api = api.trim_end_matches('/');
    let client = GithubClient::new(
        ClientConfig { api_base: api.to_string(), token: Some(token), ..ClientConfig::default() },
        Box::new(NoCache),
    );
    let pr = IssueRef::new(repo.clone(), number);
    let marker = pr_comment::marker(&format!("{}/{}#{number}", repo.owner, repo.name));
    let _ = writeln!(log, "{}: reading the comments of {pr} to find an earlier one carrying {marker}", d.name);
    let earlier = client
        .issue_comments(&pr, 3000)
        .map_err(|e| Error::failed(e.to_string()))?
        .into_iter()
        .filter(|c| c.body.starts_with(&marker))
        .map(|c| c.id)
        .min();
    let body = serde_json::json!({ "body": d.body });
    let (action, method, path) = match earlier {
        Some(id) => ("updated", "PATCH", format!("/repos/{}/{}/issues/comments/{id}", repo.owner, repo.name)),
        None => ("posted", "POST", format!("/repos/{}/{}/issues/{number}/comments", repo.owner, repo.name)),
    };
    let _ = writeln!(log, "sending {method} {api}{path} with the comment's body ({} bytes)", d.body.len());
    let answer = client.send_json(method, &path, Some(&body)).map_err(|e| Error::failed(e.to_string()))?;
    let _ = writeln!(log, "{}: comment {action}", d.name);
    Ok(Posted {
        action,
        comment_id: answer["id"].as_u64().or(earlier),
        url: answer["html_url"].as_str().map(str::to_string),
    })
}

/// What `watch` did with one of its configured pull requests in a turn.
#[derive(Debug, Clone, Serialize)]
pub struct PrTick {
    pub pr: String,
    /// The verdict line, or why there is none.
    pub verdict: String,
    pub safe_to_retest: bool,
    pub new_failures: usize,
    /// `posted` or `updated` with `--apply`; why not when it was asked and failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// `watch`'s turn over its configured pull requests: each analysed from the store
/// (GitHub from the store's cache, which the GitHub sources keep fresh) and logged;
/// with `apply`, its comment posted or updated when it passes the report checks and a
/// token is set. A PR that cannot be analysed (no stored run yet) is said, never the
/// turn's failure.
pub fn watch_turn(store: &mut citriage_store::Store, prs: &[String], api: &str, apply: bool) -> Vec<PrTick> {
    let mut out = Vec::new();
    for p in prs {
        let analysed = crate::pr::PrTarget::parse(p).and_then(|t| {
            let opts = crate::pr::PrOptions {
                github: Some(crate::records::GithubAccess { api: api.to_string(), offline: true }),
                ..Default::default()
            };
            crate::pr::analyse(store, &t, &opts, &crate::progress::Silent)
        });
        let tick = match analysed {
            Ok(r) => {
                let comment = apply.then(|| {
                    let d = draft(&r);
                    match check(store, &d) {
                        Ok(c) if c.findings.is_empty() => match self::apply(&d, api, &mut std::io::sink()) {
                            Ok(posted) => posted.action.to_string(),
                            Err(e) => format!("not sent: {e}"),
                        },
                        Ok(c) => format!("not sent: the report checks found {}", c.findings.join("; ")),
                        Err(e) => format!("not sent: {e}"),
                    }
                });
                PrTick {
                    pr: r.pr.clone(),
                    verdict: r.verdict.line.clone(),
                    safe_to_retest: r.verdict.safe_to_retest,
                    new_failures: r.verdict.new_failures,
                    comment,
                }
            }
            Err(e) => PrTick {
                pr: p.clone(),
                verdict: format!("not analysed: {e}"),
                safe_to_retest: false,
                new_failures: 0,
                comment: None,
            },
        };
        tracing::info!(pr = tick.pr.as_str(), verdict = tick.verdict.as_str(), comment = ?tick.comment, "pull request");
        out.push(tick);
    }
    out
}
