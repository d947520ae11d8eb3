//! citriage's application layer: the command-line interface and the glue that runs
//! the pipeline (sources → formats → store → analysis → report) for each command.
//! The binary in `main.rs` only calls [`cli::main_with_args`].
//!
//! Layout (no module imports one above it in this list):
//! - [`cli`]: the dispatcher — global options, the subcommand list, exit codes.
//! - [`commands`]: one file per subcommand, declaring its arguments and running itself.
//! - Library modules the commands share: [`pipeline`] (snapshots: read, import,
//!   triage, write), [`builds`] (stored builds, `--as-of`), [`documents`] (what is
//!   recorded for the dashboard), [`clustering`], [`payloads`], [`gcs_evidence`] (payload
//!   jobs' evidence from GCS over HTTP), [`github`],
//!   [`verification`], [`config`] (the team configuration file), [`watching`] (continuous ingestion), [`briefs`], [`actions`] (drafts as files, git pre-checks,
//!   sending), [`agents`] (what the MCP server asks of the CLI), [`bench`],
//!   [`bench_serve`], [`bench_store`], [`example_data`], [`logging`] (structured logs).
//! - [`context`]: what every command and library module uses — global options, the
//!   store, output, progress, [`context::Failure`]; it imports nothing of this crate.

pub mod actions;
pub mod agents;
pub mod alerting;
pub mod bench;
pub mod bench_alerts;
pub mod bench_flakes;
pub mod bench_patterns;
pub mod bench_serve;
pub mod bench_store;
pub mod briefs;
pub mod builds;
pub mod cli;
pub mod clustering;
pub mod commands;
pub mod config;
pub mod context;
pub mod documents;
pub mod example_data;
pub mod gcs_evidence;
pub mod github;
pub mod logging;
pub mod payloads;
pub mod pipeline;
pub mod verification;
pub mod watching;
