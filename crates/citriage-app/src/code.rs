//! Evidence from a local checkout the user names (`code`): a Prow job's configuration
//! (file:line, testgrid annotations, alert email), the OWNERS for a path, the text at
//! `path:line`, and the commit that introduced a string (`git log -S`). Every answer's
//! evidence is recorded in the store's ledger.

use crate::error::{Error, Result};
use citriage_model::Evidence;
use citriage_store::Store;
use citriage_verify::code::{History, JobConfig, LineHit, LineLookup, Owners};
use citriage_verify::{Checkout, GitProgram};

/// What is asked of the checkout.
#[derive(Debug, Clone)]
pub enum CodeQuery {
    /// Where a Prow job is configured.
    JobConfig { job: String },
    /// OWNERS approvers, reviewers and SIG labels for a path.
    Owners { path: String },
    /// The text at `PATH:LINE`.
    Line { at: String },
    /// The commit that introduced a string, optionally under a path.
    Introduced { needle: String, path: Option<String> },
}

/// The checkout's answer.
#[derive(Debug, Clone)]
pub enum CodeAnswer {
    JobConfig(Vec<JobConfig>),
    Owners(Owners),
    /// The line found (the lookup as the checkout answered it, and the line).
    Line(LineLookup, Box<LineHit>),
    Introduced {
        needle: String,
        history: Box<History>,
    },
}

impl CodeAnswer {
    /// The evidence the answer rests on.
    pub fn evidence(&self) -> Vec<Evidence> {
        match self {
            CodeAnswer::JobConfig(found) => found.iter().map(|j| j.evidence.clone()).collect(),
            CodeAnswer::Owners(o) => o.files.iter().map(|f| f.evidence.clone()).collect(),
            CodeAnswer::Line(_, hit) => vec![hit.evidence.clone()],
            CodeAnswer::Introduced { history, .. } => history.evidence.clone(),
        }
    }

    /// The answer as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let v = match self {
            CodeAnswer::JobConfig(found) => serde_json::to_value(found),
            CodeAnswer::Owners(o) => serde_json::to_value(o),
            CodeAnswer::Line(lookup, _) => serde_json::to_value(lookup),
            CodeAnswer::Introduced { history, .. } => serde_json::to_value(history),
        };
        v.unwrap_or_default()
    }
}

/// `code`: the answer of the checkout `name=path` (`--checkout`) to `query`.
pub fn ask(checkout: &str, query: &CodeQuery) -> Result<CodeAnswer> {
    let spec = crate::checkouts::parse_checkout(checkout)?;
    let (name, path) = (spec.name.as_str(), spec.path.as_str());
    let co = Checkout::open(name, path, GitProgram::locate().ok())
        .map_err(|e| Error::input(format!("--checkout {checkout}: {e}")))?;
    let bad = |e: citriage_verify::CodeError| Error::input(e.to_string());
    Ok(match query {
        CodeQuery::JobConfig { job } => {
            let found = co.find_job_config(job).map_err(bad)?;
            if found.is_empty() {
                return Err(Error::input(format!(
                    "{job}: no job config found under config/jobs or ci-operator/jobs in {path}"
                )));
            }
            CodeAnswer::JobConfig(found)
        }
        CodeQuery::Owners { path } => CodeAnswer::Owners(co.owners(path).map_err(bad)?),
        CodeQuery::Line { at } => {
            let (p, l) = at
                .rsplit_once(':')
                .and_then(|(p, l)| l.parse::<usize>().ok().map(|l| (p, l)))
                .ok_or_else(|| Error::input(format!("{at:?}: expected path:line")))?;
            match co.resolve(p, l).map_err(bad)? {
                LineLookup::Found(h) => CodeAnswer::Line(LineLookup::Found(h.clone()), h),
                other => {
                    return Err(Error::input(format!("{at}: {}", serde_json::to_value(other).unwrap_or_default())))
                }
            }
        }
        CodeQuery::Introduced { needle, path } => {
            let history = Box::new(co.history(needle, path.as_deref()).map_err(bad)?);
            CodeAnswer::Introduced { needle: needle.clone(), history }
        }
    })
}

/// Records an answer's evidence in the store's ledger.
pub fn record(store: &mut Store, answer: &CodeAnswer) -> Result<()> {
    store.record_evidence(&answer.evidence(), &crate::clock::now_rfc3339())?;
    Ok(())
}
