//! `citriage config`: the team configuration file.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::config::Config;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// The team configuration file (TOML: sources, schedule, retention, owners, the
/// dashboard's address and public name); see docs/citriage.example.toml.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Validate a configuration file: errors name the key (exit 2); with
    /// --format json, print the parsed configuration with its defaults filled in.
    Check {
        /// The configuration file.
        file: PathBuf,
    },
}

/// Runs `citriage config`.
pub fn exec(ctx: &Context, a: &ConfigArgs) -> Result<(), Failure> {
    match &a.command {
        ConfigCommand::Check { file } => {
            let cfg = Config::load(file)?;
            if ctx.json() {
                print_json(&serde_json::to_value(&cfg).unwrap_or_default());
            } else {
                let s = &cfg.sources;
                outln!(
                    "{}: valid ({} bucket(s), {} dashboard(s), {} release stream(s), {} GitHub repo(s), {} TestGrid source(s), {} owner(s))",
                    file.display(),
                    s.buckets.len(),
                    s.dashboards.len(),
                    s.release_streams.len(),
                    s.github.len(),
                    s.testgrid.len(),
                    cfg.owners.len()
                );
            }
            Ok(())
        }
    }
}
