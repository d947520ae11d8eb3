//! `citriage alerts`: a turn of the alert rules over the store (or what it would
//! send, `--dry-run`), sending the outbox, a day's digest, the outbox's state and
//! re-queueing messages given up. The use cases are `citriage_app::alerts`.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::alerts::{self, AlertOptions, SendOptions, TurnReport};
use citriage_app::config::Config;
use citriage_store::{Location, Store};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// Alerts people can trust (docs/alerts.md). Without a subcommand: a turn — the
/// rules evaluated over the store as it stands (red jobs by TestGrid's
/// consecutive-failures rule and green again, new and growing failure patterns,
/// rejected payloads, failed after fix, fix confirmed), once per state change; each
/// alert checked with the report verifier's rules (a flagged one is held, not sent);
/// the rest routed by owner (the configuration's `[alerts.routes]`) and queued in the
/// store's outbox in one transaction; then the outbox sent. Webhook URLs named by
/// `url_env` and the SMTP user and password come from the environment only and are
/// never printed.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AlertsArgs {
    #[command(subcommand)]
    pub command: Option<AlertsCommand>,
    #[command(flatten)]
    pub turn: TurnArgs,
}

/// A turn's options.
#[derive(Args, Debug)]
pub struct TurnArgs {
    /// The configuration file: rules, routes, destinations, SMTP relay, owners (see
    /// docs/citriage.example.toml). Default: the rules' defaults, no destination (the
    /// alerts are stored, and shown by the dashboard's feed).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Show what would be raised, withdrawn and sent (and to where), and why an alert
    /// would be held; write nothing, send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Queue the turn's messages without sending them (`alerts send` sends them).
    #[arg(long, conflicts_with = "dry_run")]
    pub no_send: bool,
    /// The instant the turn describes (a date or Unix seconds).
    /// Default: the end of the newest stored build.
    #[arg(long, value_name = "WHEN")]
    pub as_of: Option<String>,
    /// Check the alerts' references against GitHub (token from GITHUB_TOKEN or
    /// GH_TOKEN). Default: the store's cached answers only.
    #[arg(long)]
    pub online: bool,
    #[command(flatten)]
    pub sender: SenderArgs,
}

/// How messages are sent.
#[derive(Args, Debug, Clone)]
pub struct SenderArgs {
    /// This sender's name in the outbox's leases (default: host name and process id).
    /// A restarted sender with the same name takes its leases back at once.
    #[arg(long, value_name = "NAME")]
    pub worker: Option<String>,
    /// Send at most N messages. Default: every message that is due.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// HTTP timeout of a webhook request, in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

#[derive(Subcommand, Debug)]
pub enum AlertsCommand {
    /// Send the outbox's due messages (one at a time under a lease: several senders may
    /// run on one store), each recorded as sent only after its receiver accepted it.
    /// Exit 1 when a message failed for good (kept, with why: `alerts status`).
    Send {
        /// The configuration file (destinations, SMTP relay, lease, backoff).
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        #[command(flatten)]
        sender: SenderArgs,
    },
    /// A day's alerts batched into one message, as a destination in digest mode
    /// receives it (held alerts left out).
    Digest {
        /// The day (YYYY-MM-DD). Default: the day of the newest stored alert.
        #[arg(long, value_name = "DAY", value_parser = crate::context::parse_day)]
        day: Option<citriage_model::Day>,
    },
    /// The outbox: every message with its destination, state, attempts and last error.
    Status,
    /// Re-queue the messages given up after a permanent error (after fixing the
    /// destination).
    Retry {
        /// Only this destination's messages. Default: all.
        #[arg(long, value_name = "NAME")]
        destination: Option<String>,
    },
}

/// The configuration, when given, and the store (the file's `store` unless `--db` or
/// `CITRIAGE_DB` says otherwise). A store that does not exist is refused.
fn open(ctx: &Context, config: Option<&PathBuf>) -> Result<(Config, Store), Failure> {
    let cfg = match config {
        Some(f) => Config::load(f)?,
        None => Config::default(),
    };
    let location = match (&ctx.db, &cfg.store) {
        (None, Some(s)) => Location::parse(s),
        _ => ctx.db_location(),
    };
    if !location.exists() {
        return Err(Failure::input(format!("the store {location} does not exist (`citriage fetch` fills one)")));
    }
    Ok((cfg, crate::context::open(&location)?))
}

fn send_options(cfg: &Config, a: &SenderArgs) -> SendOptions {
    let mut o = SendOptions {
        alerts: cfg.alerts.clone(),
        limit: a.limit,
        http: citriage_sources::HttpOptions {
            timeout: Duration::from_secs(a.timeout.max(1)),
            ..citriage_sources::HttpOptions::default()
        },
        ..SendOptions::default()
    };
    if let Some(w) = &a.worker {
        o.worker = w.clone();
    }
    o
}

/// Runs `citriage alerts`.
pub fn exec(ctx: &Context, a: &AlertsArgs) -> Result<(), Failure> {
    match &a.command {
        None => turn(ctx, &a.turn),
        Some(AlertsCommand::Send { config, sender }) => {
            let (cfg, mut store) = open(ctx, Some(config))?;
            send(ctx, &cfg, &mut store, sender)
        }
        Some(AlertsCommand::Digest { day }) => {
            let store = ctx.open_existing_store()?;
            let d = alerts::digest(&store, *day)?;
            if ctx.json() {
                print_json(&serde_json::to_value(&d).unwrap_or_default());
            } else {
                outln!("{}", d.text.trim_end());
            }
            Ok(())
        }
        Some(AlertsCommand::Status) => {
            let store = ctx.open_existing_store()?;
            let rows = alerts::outbox(&store)?;
            if ctx.json() {
                print_json(&serde_json::to_value(&rows).unwrap_or_default());
            } else if rows.is_empty() {
                outln!("the outbox is empty");
            } else {
                for r in &rows {
                    let err = r.last_error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
                    outln!(
                        "{} to {}: {} ({} alert(s), {} attempt(s)){err}",
                        r.message,
                        r.destination,
                        r.state.as_str(),
                        r.alerts.len(),
                        r.attempts
                    );
                }
            }
            Ok(())
        }
        Some(AlertsCommand::Retry { destination }) => {
            let mut store = ctx.open_existing_store()?;
            let n = alerts::retry(&mut store, destination.as_deref())?;
            if ctx.json() {
                print_json(&serde_json::json!({ "requeued": n }));
            } else {
                outln!("{n} message(s) queued again");
            }
            Ok(())
        }
    }
}

fn turn(ctx: &Context, a: &TurnArgs) -> Result<(), Failure> {
    let (cfg, mut store) = open(ctx, a.config.as_ref())?;
    let mut opts = AlertOptions::from_config(&cfg)?;
    opts.dry_run = a.dry_run;
    opts.offline = !a.online;
    opts.as_of = a.as_of.as_deref().map(citriage_app::builds::parse_as_of).transpose()?;
    let pb = ctx.spinner("evaluating the alert rules");
    let report = alerts::turn(&mut store, &opts, &pb)?;
    pb.clear();
    let sent = if a.dry_run || a.no_send {
        None
    } else {
        let pb = ctx.spinner("sending");
        let r = alerts::send(&mut store, &send_options(&cfg, &a.sender), &pb)?;
        pb.clear();
        Some(r)
    };
    if ctx.json() {
        let mut v = serde_json::to_value(&report).unwrap_or_default();
        if let Some(s) = &sent {
            v["sent"] = serde_json::to_value(s).unwrap_or_default();
        }
        print_json(&v);
    } else {
        print_turn(&report, a.dry_run);
        if let Some(s) = &sent {
            outln!("sent {}, to retry {}, failed {}", s.sent, s.retried, s.failed);
            for d in s.messages.iter().filter(|d| d.error.is_some()) {
                outln!("  {} to {}: {}: {}", d.message, d.destination, d.outcome, d.error.as_deref().unwrap_or(""));
            }
        }
    }
    match sent {
        Some(s) if s.failed > 0 => Err(Failure::other(format!(
            "{} message(s) failed for good (kept in the outbox with why: `citriage alerts status`)",
            s.failed
        ))),
        _ => Ok(()),
    }
}

fn print_turn(r: &TurnReport, dry_run: bool) {
    let when = citriage_model::time::rfc3339(r.as_of);
    let verb = if dry_run { "would be said" } else { "said" };
    outln!("alerts as of {when}: {} {verb}", r.alerts.len());
    for a in &r.alerts {
        outln!();
        outln!("{}", a.text.trim_end());
        match (&a.held, a.destinations.is_empty()) {
            (Some(why), _) => outln!("held back (not sent): {why}"),
            (None, true) => outln!("to: no destination (stored; the dashboard's feed shows it)"),
            (None, false) => outln!("to: {}", a.destinations.join(", ")),
        }
    }
    if let Some(w) = &r.written {
        outln!();
        outln!("queued {} message(s)", w.messages);
    }
}

/// Sends the outbox and prints what happened.
fn send(ctx: &Context, cfg: &Config, store: &mut Store, a: &SenderArgs) -> Result<(), Failure> {
    let pb = ctx.spinner("sending");
    let r = alerts::send(store, &send_options(cfg, a), &pb)?;
    pb.clear();
    if ctx.json() {
        print_json(&serde_json::to_value(&r).unwrap_or_default());
    } else {
        for d in &r.messages {
            match &d.error {
                Some(e) => outln!("{} to {}: {}: {e}", d.message, d.destination, d.outcome),
                None => outln!("{} to {}: {}", d.message, d.destination, d.outcome),
            }
        }
        outln!("sent {}, to retry {}, failed {}", r.sent, r.retried, r.failed);
    }
    if r.failed > 0 {
        return Err(Failure::other(format!(
            "{} message(s) failed for good (kept in the outbox with why: `citriage alerts status`)",
            r.failed
        )));
    }
    Ok(())
}
