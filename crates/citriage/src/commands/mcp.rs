//! `citriage mcp`: the Model Context Protocol server over the store, on stdio.

use crate::context::{Context, Failure};
use clap::Args;

/// Serve the store to an MCP client (an agent) on stdin/stdout: tools for failing
/// jobs, job and test histories, failure patterns with drift, regex search, a build's
/// failure lines, payload verdicts, pull-request states, report checks, evidence
/// lookups and action drafts; the stored triage reports, payload analyses and
/// investigation briefs as resources; the investigation brief as a prompt. Every
/// answer lists the evidence ids it rests on (recorded in the store's ledger).
/// Read-only unless --allow-writes. Logs go to stderr; stdout is the protocol's.
#[derive(Args, Debug)]
pub struct McpArgs {
    /// Days of test-level history the tools cover (flake signals, test histories,
    /// search), ending with the newest build's day.
    #[arg(long, default_value_t = 14, value_name = "DAYS")]
    pub window: i64,
    /// Offer the write tool `apply_action`, which posts a drafted action through the
    /// GitHub API with the token in GITHUB_TOKEN (GH_TOKEN). Default: read-only, no
    /// write tool is listed.
    #[arg(long)]
    pub allow_writes: bool,
    /// GitHub API base for pull-request states and applied actions.
    #[arg(long, default_value = citriage_github::DEFAULT_API_BASE, value_name = "URL")]
    pub api: String,
    /// Read pull-request states from GitHub (token from GITHUB_TOKEN) and cache them in
    /// the store. Default: answer from the store's cache only, with each answer's age.
    #[arg(long)]
    pub github_online: bool,
    /// The repository bugs of owned failure patterns are drafted for.
    #[arg(long, default_value = "kubernetes/kubernetes", value_name = "OWNER/NAME")]
    pub issue_repo: String,
}

/// Runs `citriage mcp`.
pub fn exec(ctx: &Context, a: &McpArgs) -> Result<(), Failure> {
    let db = ctx.db_path();
    if !db.is_file() {
        return Err(Failure::input(format!(
            "store {} does not exist (the MCP server never creates one)",
            db.display()
        )));
    }
    if a.window < 1 {
        return Err(Failure::input(format!("--window {}: must be at least 1 day", a.window)));
    }
    if a.issue_repo.split('/').filter(|p| !p.is_empty()).count() != 2 {
        return Err(Failure::input(format!("--issue-repo {:?}: expected OWNER/NAME", a.issue_repo)));
    }
    let opts = citriage_web::ServeOptions {
        index: citriage_web::index::IndexSettings { window_days: a.window },
        prewarm: false,
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let state = citriage_web::AppState::new(db.clone(), opts).map_err(|e| match e {
        citriage_web::ServeError::MissingStore(_) | citriage_web::ServeError::Store(_) => Failure::input(e.to_string()),
        other => Failure::other(other.to_string()),
    })?;
    if !ctx.quiet {
        let v = state.view();
        eprintln!(
            "citriage mcp: {} builds of {} jobs, {} documents read in {:.1} s; serving {} on stdio ({})",
            v.builds.len(),
            v.jobs.len(),
            v.documents.len(),
            started.elapsed().as_secs_f64(),
            db.display(),
            if a.allow_writes { "writes allowed" } else { "read-only" }
        );
    }
    let writes = if a.allow_writes { citriage_mcp::WritePolicy::Local } else { citriage_mcp::WritePolicy::ReadOnly };
    let server = citriage_mcp::McpServer::new(
        state,
        citriage_mcp::McpOptions {
            writes,
            issue_repo: Some(a.issue_repo.clone()),
            api: a.api.clone(),
            github_online: a.github_online,
        },
    );
    server.run_stdio().map_err(Failure::other)
}
