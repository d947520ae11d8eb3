//! The dispatcher: the program's global options ([`Context`]), the list of
//! subcommands, and [`main_with_args`], which parses the arguments, runs the command
//! and turns its [`Failure`] into the exit code (0 success, 1 failure, 2 bad input).
//! It only wires: each command declares its arguments and runs itself in
//! [`crate::commands`].

use crate::commands::*;
use crate::context::{Context, Failure};
use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// citriage — CI triage as software: ingest CI dashboards, categorize and score the
/// failing and flaking jobs, detect drift, flag misclassifications and write an
/// evidence-backed triage report.
#[derive(Parser, Debug)]
#[command(name = "citriage", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub context: Context,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands, in the order `--help` lists them; each one's description is its
/// arguments' doc comment.
#[derive(Subcommand, Debug)]
pub enum Command {
    Demo(demo::DemoArgs),
    Import(import::ImportArgs),
    Triage(triage::TriageArgs),
    Snapshots(snapshots::SnapshotsArgs),
    Drift(drift::DriftArgs),
    Categorize(categorize::CategorizeArgs),
    Fetch(fetch::FetchArgs),
    Metrics(metrics::MetricsArgs),
    Gh(gh::GhArgs),
    Verify(verify::VerifyArgs),
    Reports(reports::ReportsArgs),
    Cluster(cluster::ClusterArgs),
    Extract(extract::ExtractArgs),
    Signatures(signatures::SignaturesArgs),
    Payload(payload::PayloadArgs),
    Brief(brief::BriefArgs),
    Serve(serve::ServeArgs),
    Watch(watch::WatchArgs),
    Alerts(alerts::AlertsArgs),
    Config(config::ConfigArgs),
    Store(store::StoreArgs),
    Mcp(mcp::McpArgs),
    Act(act::ActArgs),
    Code(code::CodeArgs),
    Suspects(suspects::SuspectsArgs),
    Pr(pr::PrArgs),
    Evidence(evidence::EvidenceArgs),
    Synth(synth::SynthArgs),
    Bench(bench::BenchArgs),
}

/// Runs the CLI; returns the process exit code.
pub fn main_with_args<I: IntoIterator<Item = OsString>>(args: I) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidUtf8 => {
            // Name the argument (clap's message does not).
            let bad: Vec<String> =
                args.iter().skip(1).filter(|a| a.to_str().is_none()).map(|a| format!("{a:?}")).collect();
            eprintln!("error: not valid UTF-8 (names must be UTF-8 here): {}", bad.join(", "));
            return 2;
        }
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    citriage_sources::http::set_memory_budget(cli.context.memory_budget.saturating_mul(1 << 20));
    match run(&cli.context, &cli.command) {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("error: {f}");
            f.exit_code()
        }
    }
}

fn run(ctx: &Context, command: &Command) -> Result<(), Failure> {
    match command {
        Command::Demo(a) => demo::exec(ctx, a),
        Command::Import(a) => import::exec(ctx, a),
        Command::Triage(a) => triage::exec(ctx, a),
        Command::Snapshots(a) => snapshots::exec(ctx, a),
        Command::Drift(a) => drift::exec(ctx, a),
        Command::Categorize(a) => categorize::exec(ctx, a),
        Command::Fetch(a) => fetch::exec(ctx, a),
        Command::Metrics(a) => metrics::exec(ctx, a),
        Command::Gh(a) => gh::exec(ctx, a),
        Command::Verify(a) => verify::exec(ctx, a),
        Command::Reports(a) => reports::exec(ctx, a),
        Command::Cluster(a) => cluster::exec(ctx, a),
        Command::Extract(a) => extract::exec(ctx, a),
        Command::Signatures(a) => signatures::exec(ctx, a),
        Command::Payload(a) => payload::exec(ctx, a),
        Command::Brief(a) => brief::exec(ctx, a),
        Command::Serve(a) => serve::exec(ctx, a),
        Command::Watch(a) => watch::exec(ctx, a),
        Command::Alerts(a) => alerts::exec(ctx, a),
        Command::Config(a) => config::exec(ctx, a),
        Command::Store(a) => store::exec(ctx, a),
        Command::Mcp(a) => mcp::exec(ctx, a),
        Command::Act(a) => act::exec(ctx, a),
        Command::Code(a) => code::exec(ctx, a),
        Command::Suspects(a) => suspects::exec(ctx, a),
        Command::Pr(a) => pr::exec(ctx, a),
        Command::Evidence(a) => evidence::exec(ctx, a),
        Command::Synth(a) => synth::exec(ctx, a),
        Command::Bench(a) => bench::exec(ctx, a),
    }
}
