//! `citriage config`: the team configuration file.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::config::Config;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// The team configuration file (TOML: sources, schedule, retention, owners, alerts,
/// the dashboard's address and public name); see docs/citriage.example.toml.
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
                let mut v = serde_json::to_value(&cfg).unwrap_or_default();
                redact_urls(&mut v);
                print_json(&v);
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
                let al = &cfg.alerts;
                if !al.destinations.is_empty() {
                    let relay = al.smtp.as_ref().map(|s| format!(", SMTP relay {}:{}", s.host, s.port));
                    outln!(
                        "alerts: {} destination(s), {} route(s){}",
                        al.destinations.len(),
                        al.routes.len(),
                        relay.unwrap_or_default()
                    );
                }
            }
            Ok(())
        }
    }
}

/// Alert destinations' webhook URLs shown by their scheme only (a Slack URL is a
/// secret, wherever it is written).
fn redact_urls(v: &mut serde_json::Value) {
    let Some(ds) = v.pointer_mut("/alerts/destinations").and_then(|d| d.as_array_mut()) else { return };
    for d in ds {
        if let Some(u) = d.get_mut("url") {
            let scheme = u.as_str().and_then(|s| s.split_once("://")).map(|(s, _)| s.to_string()).unwrap_or_default();
            *u = serde_json::Value::String(format!("{scheme}://(redacted)"));
        }
    }
}
