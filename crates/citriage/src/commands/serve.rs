//! `citriage serve`: the local web dashboard over the store.

use crate::context::{Context, Failure};
use clap::Args;

/// Serve the local web dashboard over the store (127.0.0.1 by default): overview,
/// jobs, tests, failure patterns, search, and a JSON API under /api/v1/.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = citriage_web::DEFAULT_ADDR)]
    pub addr: std::net::SocketAddr,
    /// Days of test-level history shown (flake signals, failing tests, test pages),
    /// ending with the newest build's day.
    #[arg(long, default_value_t = 14, value_name = "DAYS")]
    pub window: i64,
    /// GitHub repository of the "file an issue" and issue-search links.
    #[arg(long, default_value = "kubernetes/kubernetes", value_name = "OWNER/NAME")]
    pub issue_repo: String,
    /// A host name the dashboard may be reached by besides localhost and IP addresses
    /// (requests naming other hosts are refused against DNS rebinding). Repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
}

/// Runs `citriage serve`.
pub fn exec(ctx: &Context, a: &ServeArgs) -> Result<(), Failure> {
    let db = ctx.db_path();
    if a.window < 1 {
        return Err(Failure::input(format!("--window {}: must be at least 1 day", a.window)));
    }
    if a.issue_repo.split('/').filter(|p| !p.is_empty()).count() != 2 {
        return Err(Failure::input(format!("--issue-repo {:?}: expected OWNER/NAME", a.issue_repo)));
    }
    let opts = citriage_web::ServeOptions {
        index: citriage_web::index::IndexSettings { window_days: a.window },
        issue_repo: a.issue_repo.clone(),
        allow_hosts: a.allow_hosts.clone(),
        ..Default::default()
    };
    let pb = ctx.spinner(&format!("reading {}", ctx.db_location()));
    let started = std::time::Instant::now();
    let server = citriage_web::Server::bind_with(db, a.addr, opts).map_err(|e| match e {
        citriage_web::ServeError::MissingStore(_) | citriage_web::ServeError::Store(_) => Failure::input(e.to_string()),
        other => Failure::other(other.to_string()),
    })?;
    pb.finish_and_clear();
    let addr = server.local_addr().map_err(|e| Failure::other(e.to_string()))?;
    let view = server.state().view();
    eprintln!(
        "read {} builds of {} jobs, {} failure texts and log excerpts, {} documents in {:.1} s",
        view.builds.len(),
        view.jobs.len(),
        view.search.entries,
        view.documents.len(),
        started.elapsed().as_secs_f64()
    );
    drop(view);
    eprintln!("serving on http://{addr} (Ctrl-C to stop)");
    server.run(citriage_web::ctrl_c()).map_err(|e| Failure::other(e.to_string()))
}
