//! citriage's application layer: the command-line interface and the glue that runs
//! the pipeline (sources → formats → store → analysis → report) for each command.
//! The binary in `main.rs` only calls [`cli::main_with_args`].

pub mod bench;
pub mod bench_patterns;
pub mod bench_serve;
pub mod brief_cmd;
pub mod cli;
pub mod code_cmd;
pub mod documents;
pub mod evidence_cmds;
pub mod example_data;
pub mod fetch;
pub mod patterns_cmd;
pub mod payload_cmd;
pub mod pipeline;
pub mod synth;
