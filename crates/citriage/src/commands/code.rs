//! `citriage code`: evidence from a local checkout the user names — a Prow job's
//! configuration (file:line, testgrid annotations, alert email), the OWNERS for a path,
//! the text at `path:line`, and the commit that introduced a string (`git log -S`).
//! Every answer is recorded in the store's evidence ledger.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use crate::pipeline;
use citriage_model::Evidence;
use citriage_verify::code::LineLookup;
use citriage_verify::{Checkout, GitProgram};
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
    let (name, path) = a
        .checkout
        .split_once('=')
        .ok_or_else(|| Failure::input(format!("--checkout {:?}: expected name=path", a.checkout)))?;
    let co = Checkout::open(name, path, GitProgram::locate().ok())
        .map_err(|e| Failure::input(format!("--checkout {}: {e}", a.checkout)))?;
    let bad = |e: citriage_verify::CodeError| Failure::input(e.to_string());
    let (value, evidence, text): (serde_json::Value, Vec<Evidence>, Vec<String>) = match &a.what {
        CodeWhat::JobConfig { job } => {
            let found = co.find_job_config(job).map_err(bad)?;
            if found.is_empty() {
                return Err(Failure::input(format!(
                    "{job}: no job config found under config/jobs or ci-operator/jobs in {path}"
                )));
            }
            let lines = found
                .iter()
                .map(|j| {
                    format!("{}:{}  {}  alert email: {}", j.file, j.line, j.job, j.alert_email().unwrap_or("none"))
                })
                .collect();
            (
                serde_json::to_value(&found).unwrap_or_default(),
                found.iter().map(|j| j.evidence.clone()).collect(),
                lines,
            )
        }
        CodeWhat::Owners { path: p } => {
            let o = co.owners(p).map_err(bad)?;
            let lines = vec![
                format!("approvers: {}", o.approvers.join(", ")),
                format!("reviewers: {}", o.reviewers.join(", ")),
                format!("SIG labels: {}", o.sig_labels.join(", ")),
                format!("from: {}", o.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ")),
            ];
            (serde_json::to_value(&o).unwrap_or_default(), o.files.iter().map(|f| f.evidence.clone()).collect(), lines)
        }
        CodeWhat::Line { at } => {
            let (p, l) = at
                .rsplit_once(':')
                .and_then(|(p, l)| l.parse::<usize>().ok().map(|l| (p, l)))
                .ok_or_else(|| Failure::input(format!("{at:?}: expected path:line")))?;
            let r = co.resolve(p, l).map_err(bad)?;
            match &r {
                LineLookup::Found(h) => {
                    let ev = vec![h.evidence.clone()];
                    (
                        serde_json::to_value(&r).unwrap_or_default(),
                        ev,
                        vec![format!("{}:{}: {}", h.path, h.line, h.text)],
                    )
                }
                other => {
                    return Err(Failure::input(format!("{at}: {}", serde_json::to_value(other).unwrap_or_default())))
                }
            }
        }
        CodeWhat::Introduced { needle, path: spec } => {
            let h = co.history(needle, spec.as_deref()).map_err(bad)?;
            let lines = match &h.introduced {
                Some(c) => vec![format!("introduced by {} ({}, {}): {}", c.sha, c.date, c.author, c.subject)],
                None => vec![format!(
                    "{needle:?} is not in HEAD{}",
                    h.removed_by.as_ref().map(|c| format!("; removed by {}", c.sha)).unwrap_or_default()
                )],
            };
            (serde_json::to_value(&h).unwrap_or_default(), h.evidence.clone(), lines)
        }
    };
    let mut store = ctx.open_store()?;
    store.record_evidence(&evidence, &pipeline::now_rfc3339())?;
    if ctx.json() {
        print_json(&value);
    } else {
        for l in text {
            outln!("{l}");
        }
        for e in &evidence {
            outln!("  evidence {}  {}", e.id, e.locator);
        }
    }
    Ok(())
}
