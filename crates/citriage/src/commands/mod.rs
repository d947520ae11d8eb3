//! The subcommands, one file each (as cargo lays out its own): each declares its
//! arguments (a clap `Args` struct whose doc comment is the command's description in
//! `--help`) and runs itself with `exec(&Context, &Args)`: the arguments become a use
//! case's options, `citriage-app` runs it, the command prints the result. Commands use
//! [`crate::context`], [`crate::render`] and [`crate::logging`], never each other and
//! never the dispatcher in [`crate::cli`].

pub mod act;
pub mod alerts;
pub mod bench;
pub mod brief;
pub mod categorize;
pub mod cluster;
pub mod code;
pub mod config;
pub mod demo;
pub mod drift;
pub mod evidence;
pub mod extract;
pub mod fetch;
pub mod gh;
pub mod import;
pub mod mcp;
pub mod metrics;
pub mod payload;
pub mod pr;
pub mod reports;
pub mod serve;
pub mod signatures;
pub mod snapshots;
pub mod store;
pub mod suspects;
pub mod synth;
pub mod triage;
pub mod verify;
pub mod watch;
