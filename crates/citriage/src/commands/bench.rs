//! `citriage bench`: benchmarks that print timings and peak memory (the benchmarks
//! themselves are in `crate::bench` and `crate::bench_serve`).

use crate::context::{Context, Failure};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Benchmarks that print timings and peak memory.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Import and triage a generated snapshot of N jobs (both datasets).
    Triage {
        #[arg(long, default_value_t = 100_000)]
        jobs: usize,
        /// Repetitions; the median is printed.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
    },
    /// Generate a synthetic world, ingest it from the local mirror into a fresh
    /// store, and compute metrics: builds per minute, metrics time, peak RSS.
    Ingest {
        /// Synthetic world preset (tiny, demo, k8s).
        #[arg(long, default_value = "demo")]
        preset: String,
        /// Builds fetched at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Keep the generated world here instead of a temporary folder.
        #[arg(long)]
        world: Option<PathBuf>,
    },
    /// Load-test the dashboard on loopback: serve the store (--db) in-process and let
    /// concurrent clients request cluster lists, cluster pages and job pages; prints
    /// latency percentiles, errors and throughput.
    Serve {
        /// Concurrent clients (keep-alive connections).
        #[arg(long, default_value_t = 100)]
        clients: usize,
        /// Requests in all, at most.
        #[arg(long, default_value_t = 20_000)]
        requests: usize,
        /// Seconds in all, at most.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Cluster pages and job pages requested (each, at most).
        #[arg(long, default_value_t = 300)]
        pages: usize,
        /// Do not let the server render its pages ahead: measure every URL's first
        /// request rendering it.
        #[arg(long)]
        no_prewarm: bool,
    },
}

/// Runs `citriage bench`.
pub fn exec(ctx: &Context, a: &BenchArgs) -> Result<(), Failure> {
    match &a.what {
        BenchWhat::Triage { jobs, repeat } => crate::bench::triage(*jobs, *repeat, ctx.json()),
        BenchWhat::Ingest { preset, concurrency, world } => {
            crate::bench::ingest(preset, *concurrency, world.as_deref(), ctx.json())
        }
        BenchWhat::Serve { clients, requests, seconds, pages, no_prewarm } => {
            let spec = crate::bench_serve::LoadSpec {
                clients: *clients,
                requests: *requests,
                seconds: *seconds,
                pages_per_kind: *pages,
                prewarm: !*no_prewarm,
            };
            let report = crate::bench_serve::serve(&ctx.db_path(), &spec, ctx.json())?;
            if report.errors > 0 {
                return Err(Failure::other(format!("{} of {} requests failed", report.errors, report.requests)));
            }
            Ok(())
        }
    }
}
