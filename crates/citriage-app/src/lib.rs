//! citriage's use cases, one file each, that every front end sits on: the CLI
//! (`citriage`, thin `commands/*.rs` over these), the MCP server (`citriage-mcp`) and
//! the continuous worker of `watch` ([`watch`]). A use case takes the store and an
//! options struct (with `Default`), reports progress through [`Progress`], and returns
//! data or an [`Error`] that says once whether the input was at fault. It prints
//! nothing, parses no arguments and never exits the process: how results look, and how
//! a command is spelled for the user, is the front end's.
//!
//! Layers (a file imports only files of lower layers):
//! - the front ends' entry points: [`demo`], [`watch`] (the worker's ticks, leases,
//!   backoff, re-clustering) and the commands' use cases: [`import`], [`triage`],
//!   [`drift`], [`categorize`], [`fetch`], [`metrics`], [`cluster`], [`extract`],
//!   [`signatures`], [`payload`], [`verify`], [`brief`], [`evidence`], [`code`],
//!   [`gh`], [`act`], [`reports`], [`store_admin`], [`alerts`], [`testgrid`], [`suspects`],
//!   [`suspects_history`] (the engine measured on real reverts; `bench suspects-history`);
//! - what several of them share: [`snapshots`] (read, store, load with history),
//!   [`builds`] (stored builds, `--as-of`), [`documents`] (what is recorded for the
//!   dashboard), [`github`] (the client over the store's cache), [`links`] (the fix-PR
//!   links file), [`gcs_evidence`] (payload jobs' evidence from GCS over HTTP),
//!   [`config`] (the team configuration file), [`checkouts`] (the `--checkout` spelling),
//!   [`revert_text`] (the failure a revert's message quotes), [`example_data`] (the bundled
//!   dashboards and their generator), [`files`] (writing output files whole);
//! - at the bottom: [`error`], [`progress`], [`clock`] (the one place the use cases
//!   read the wall clock).

pub mod act;
pub mod alerts;
pub mod brief;
pub mod builds;
pub mod categorize;
pub mod checkouts;
pub mod clock;
pub mod cluster;
pub mod code;
pub mod config;
pub mod containment;
pub mod demo;
pub mod documents;
pub mod drift;
pub mod error;
pub mod evidence;
pub mod example_data;
pub mod exposing;
pub mod extract;
pub mod fetch;
pub mod files;
pub mod gcs_evidence;
pub mod gh;
pub mod github;
pub mod import;
pub mod links;
pub mod mentions;
pub mod metrics;
pub mod payload;
pub mod pr;
pub mod pr_comment;
pub mod progress;
pub mod records;
pub mod reports;
pub mod revert_text;
pub mod signatures;
pub mod snapshots;
pub mod store_admin;
pub mod suspects;
pub mod suspects_history;
pub mod testgrid;
pub mod triage;
pub mod verify;
pub mod version_moves;
pub mod watch;

pub use error::{Error, Result};
pub use progress::{Progress, Silent};
