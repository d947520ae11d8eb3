//! The category of job names under the built-in or a given rule set (`categorize`).

use crate::error::Result;
use std::path::Path;

/// (job, category) for each job name, under the rules of `rules` (TOML) or the built-in ones.
pub fn categorize(jobs: &[String], rules: Option<&Path>) -> Result<Vec<(String, String)>> {
    let rules = crate::triage::load_rules(rules)?;
    Ok(jobs.iter().map(|j| (j.clone(), rules.categorize(j).to_string())).collect())
}
