//! `citriage code`: evidence from a local checkout the user names — a Prow job's
//! configuration (file:line, testgrid annotations, alert email), the OWNERS for a path,
//! the text at `path:line`, and the commit that introduced a string (`git log -S`).
//! Every answer is recorded in the store's evidence ledger.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::code::{self, CodeAnswer, CodeQuery};
use clap::{Args, Subcommand};

/// Evidence from a local checkout: a job's Prow config, OWNERS for a path, the text
/// at path:line, the commit that introduced a string. Answers go into the ledger.
#[derive(Args, Debug)]
pub struct CodeArgs {
    /// The checkout: name=path (e.g. test-infra=~/src/test-infra).
    #[arg(long, value_name = "NAME=PATH")]
    pub checkout: String,
    #[command(subcommand)]
    pub what: CodeWhat,
}

#[derive(Subcommand, Debug)]
pub enum CodeWhat {
    /// Where a Prow job is configured (file:line), with its testgrid annotations.
    JobConfig {
        /// The job's name, e.g. ci-kubernetes-e2e-gce.
        job: String,
    },
    /// OWNERS approvers, reviewers and SIG labels for a path.
    Owners {
        /// A path inside the checkout, e.g. pkg/kubelet.
        path: String,
    },
    /// The text at path:line.
    Line {
        /// PATH:LINE inside the checkout, e.g. pkg/kubelet/kubelet.go:120.
        at: String,
    },
    /// The commit that introduced a string (`git log -S`).
    Introduced {
        /// The exact string to look for.
        needle: String,
        /// Limit to a path. Default: the whole checkout.
        #[arg(long)]
        path: Option<String>,
    },
}

/// Runs `citriage code`.
pub fn exec(ctx: &Context, a: &CodeArgs) -> Result<(), Failure> {
    let query = match &a.what {
        CodeWhat::JobConfig { job } => CodeQuery::JobConfig { job: job.clone() },
        CodeWhat::Owners { path } => CodeQuery::Owners { path: path.clone() },
        CodeWhat::Line { at } => CodeQuery::Line { at: at.clone() },
        CodeWhat::Introduced { needle, path } => CodeQuery::Introduced { needle: needle.clone(), path: path.clone() },
    };
    let answer = code::ask(&a.checkout, &query)?;
    let mut store = ctx.open_store()?;
    code::record(&mut store, &answer)?;
    if ctx.json() {
        print_json(&answer.to_json());
        return Ok(());
    }
    for l in lines(&answer) {
        outln!("{l}");
    }
    for e in &answer.evidence() {
        outln!("  evidence {}  {}", e.id, e.locator);
    }
    Ok(())
}

/// The answer in a few lines.
fn lines(answer: &CodeAnswer) -> Vec<String> {
    match answer {
        CodeAnswer::JobConfig(found) => found
            .iter()
            .map(|j| format!("{}:{}  {}  alert email: {}", j.file, j.line, j.job, j.alert_email().unwrap_or("none")))
            .collect(),
        CodeAnswer::Owners(o) => vec![
            format!("approvers: {}", o.approvers.join(", ")),
            format!("reviewers: {}", o.reviewers.join(", ")),
            format!("SIG labels: {}", o.sig_labels.join(", ")),
            format!("from: {}", o.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ")),
        ],
        CodeAnswer::Line(_, h) => vec![format!("{}:{}: {}", h.path, h.line, h.text)],
        CodeAnswer::Introduced { needle, history: h } => match &h.introduced {
            Some(c) => vec![format!("introduced by {} ({}, {}): {}", c.sha, c.date, c.author, c.subject)],
            None => vec![format!(
                "{needle:?} is not in HEAD{}",
                h.removed_by.as_ref().map(|c| format!("; removed by {}", c.sha)).unwrap_or_default()
            )],
        },
    }
}
