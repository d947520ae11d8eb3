//! `citriage categorize`: the category of job names under the built-in or a given rule
//! set.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

/// Print the category of job names under the built-in or a given rule set.
#[derive(Args, Debug)]
pub struct CategorizeArgs {
    /// Job names (as they appear in the dashboards, `pr:` prefix included).
    #[arg(required = true)]
    pub jobs: Vec<String>,
    /// Categorization rules (TOML) replacing the built-in ones
    /// (crates/citriage-analysis/rules/default.toml is the template). Default: the
    /// built-in rules.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
}

/// Runs `citriage categorize`.
pub fn exec(ctx: &Context, a: &CategorizeArgs) -> Result<(), Failure> {
    let rows = citriage_app::categorize::categorize(&a.jobs, a.rules.as_deref())?;
    if ctx.json() {
        print_json(&json!(rows.iter().map(|(j, c)| json!({"job": j, "category": c})).collect::<Vec<_>>()));
    } else {
        for (j, c) in rows {
            outln!("{c:<28} {}", citriage_model::escape::one_line(&j));
        }
    }
    Ok(())
}
