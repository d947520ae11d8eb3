//! The `citriage` command: a thin command-line front end over the use cases of
//! `citriage-app` (and the benchmarks of `citriage-bench`). The binary in `main.rs`
//! only calls [`cli::main_with_args`].
//!
//! Layout (no module imports one above it in this list):
//! - [`cli`]: the dispatcher — global options, the subcommand list, exit codes.
//! - [`commands`]: one file per subcommand: its arguments, turned into a use case's
//!   options, the use case run, its result printed.
//! - [`render`] (how results several commands print look) and [`logging`] (the
//!   structured logs of `watch` and `serve`).
//! - [`context`]: what every command uses — global options, where the store is,
//!   output, progress bars, how to spell a command, [`context::Failure`] (the exit
//!   code); it imports nothing of this crate.

pub mod cli;
pub mod commands;
pub mod context;
pub mod logging;
pub mod render;
