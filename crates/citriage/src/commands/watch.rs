//! `citriage watch`: continuous ingestion of the configured sources.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::config::Config;
use citriage_app::watch::{default_worker_name, Worker};
use citriage_sources::HttpOptions;
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Keep the store up to date: fetch the configuration's sources on their schedule
/// (new builds of the buckets' jobs, dashboard snapshots, the release streams'
/// payloads analysed, the GitHub repositories' pull-request and issue states),
/// re-cluster after new builds, and record each source's status (last success, last error, backoff) for
/// the dashboard. Runs beside a read-only `serve`; several workers on one store
/// share the sources through leases. SIGINT/SIGTERM finish the build being stored
/// and stop.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// The configuration file (see docs/citriage.example.toml).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// One tick over every source, due or not, then exit (1 if a source failed).
    #[arg(long)]
    pub once: bool,
    /// This worker's name in the sources' leases (default: host name and process id).
    /// A restarted worker with the same name takes its leases back at once.
    #[arg(long, value_name = "NAME")]
    pub worker: Option<String>,
    /// HTTP timeout in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Post the comment of each pull request the configuration lists (`prs`), or update
    /// the earlier one, each turn (token from GITHUB_TOKEN or GH_TOKEN). Default: the
    /// pull requests are analysed and logged only.
    #[arg(long)]
    pub apply: bool,
}

/// Runs `citriage watch`.
pub fn exec(ctx: &Context, a: &WatchArgs) -> Result<(), Failure> {
    crate::logging::init(ctx.log_format, ctx.quiet);
    let config = Config::load(&a.config)?;
    let location = match (&ctx.db, &config.store) {
        (None, Some(s)) => citriage_store::Location::parse(s),
        _ => ctx.db_location(),
    };
    let mut store = crate::context::open(&location)?;
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(stop.clone());
    let http = HttpOptions { timeout: Duration::from_secs(a.timeout.max(1)), ..HttpOptions::default() };
    let name = a.worker.clone().unwrap_or_else(default_worker_name);
    let mut worker = Worker::new(config, name, location, stop.clone(), http)?;
    worker.apply_pr_comments = a.apply;
    tracing::info!(
        sources = worker.config.source_count(),
        store = %store.path(),
        worker = worker.name.as_str(),
        once = a.once,
        "watching"
    );
    loop {
        let report = worker.tick(&mut store, a.once)?;
        if ctx.json() {
            print_json(&serde_json::to_value(&report).unwrap_or_default());
        } else {
            for s in &report.sources {
                match (&s.error, s.kind.as_str()) {
                    (Some(e), _) => outln!("{}: {}: {}", s.source, s.outcome, e),
                    (None, "release-stream") => outln!(
                        "{}: {} ({} payload(s) analysed, {} unchanged)",
                        s.source,
                        s.outcome,
                        s.payloads_analysed.unwrap_or(0),
                        s.payloads_unchanged.unwrap_or(0)
                    ),
                    (None, "github") => {
                        outln!("{}: {} ({} reference(s) refreshed)", s.source, s.outcome, s.refs_refreshed.unwrap_or(0))
                    }
                    (None, "dashboard") => outln!("{}: {}", s.source, s.outcome),
                    (None, _) => outln!(
                        "{}: {} ({} build(s) stored, {} already complete)",
                        s.source,
                        s.outcome,
                        s.builds_stored,
                        s.builds_skipped
                    ),
                }
            }
            if report.pruned_builds + report.pruned_excerpts > 0 {
                outln!(
                    "retention removed {} build(s) and the log excerpts of {} more",
                    report.pruned_builds,
                    report.pruned_excerpts
                );
            }
            if let Some(n) = report.reclustered {
                outln!("re-clustered {n} failure(s)");
            }
        }
        if a.once {
            if report.sources.iter().any(|s| s.outcome == "failed") {
                return Err(Failure::other("a source failed; its status and backoff are recorded in the store"));
            }
            return Ok(());
        }
        let mut wait = worker.until_next(&store);
        while wait > 0 && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_secs(1));
            wait -= 1;
        }
        if stop.load(Ordering::SeqCst) {
            tracing::info!(worker = worker.name.as_str(), "stopped");
            return Ok(());
        }
    }
}

/// Sets `flag` on SIGINT or SIGTERM (on a thread of its own).
fn stop_on_signals(flag: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
            return;
        };
        rt.block_on(async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                match signal(SignalKind::terminate()) {
                    Ok(mut term) => {
                        tokio::select! {
                            _ = tokio::signal::ctrl_c() => {}
                            _ = term.recv() => {}
                        }
                    }
                    Err(_) => {
                        let _ = tokio::signal::ctrl_c().await;
                    }
                }
            }
            #[cfg(not(unix))]
            {
                let _ = tokio::signal::ctrl_c().await;
            }
        });
        flag.store(true, Ordering::SeqCst);
    });
}
