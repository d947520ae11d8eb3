//! The outbox's sender: claims one due message at a time under a lease (a second worker
//! never sends what this one holds; this worker restarted under its name takes its own
//! lease back first), composes it from its stored alerts, sends it, and records the
//! answer — sent only after the receiver accepted it, so a receiver that is down loses
//! nothing and only a crash between acceptance and the record can repeat a message,
//! then with the same key.

use crate::destination::{DestinationConfig, Target};
use crate::smtp::{Mail, SmtpSettings};
use crate::{smtp, webhook, Outcome};
use citriage_alerts::message::{email, webhook_body, Email};
use citriage_alerts::retry::Backoff;
use citriage_alerts::Alert;
use citriage_model::Day;
use citriage_sources::http::HttpClient;
use citriage_store::{ClaimedMessage, FailedAttempt, Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// What happened to one message in a drain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivered {
    pub message: String,
    pub destination: String,
    pub alerts: usize,
    /// `sent`, `retry` or `failed`.
    pub outcome: &'static str,
    /// Why it was not sent (never a secret).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When it is tried again (wall clock), for a retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt: Option<i64>,
}

/// A drain's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DrainReport {
    pub sent: u64,
    pub retried: u64,
    pub failed: u64,
    pub messages: Vec<Delivered>,
}

/// The e-mail relay and its sender address.
#[derive(Debug, Clone)]
pub struct Relay {
    pub settings: SmtpSettings,
    pub from: String,
}

/// A sender over one store.
pub struct Sender<'a> {
    /// This worker's name (its leases).
    pub worker: String,
    /// How long a claim holds (longer than one send can take).
    pub lease_secs: i64,
    pub backoff: Backoff,
    pub destinations: BTreeMap<String, DestinationConfig>,
    pub relay: Option<Relay>,
    pub http: HttpClient,
    /// Reads an environment variable (webhook URLs named by `url_env`).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The wall clock (Unix seconds).
    pub now: &'a dyn Fn() -> i64,
    /// Stops between messages when set (SIGINT/SIGTERM).
    pub stop: Option<&'a AtomicBool>,
    /// The most messages one drain handles (`None`: until nothing is due).
    pub limit: Option<usize>,
}

fn decode(c: &ClaimedMessage) -> Result<Vec<Alert>, String> {
    c.alerts
        .iter()
        .map(|a| {
            serde_json::from_str::<Alert>(&a.body).map_err(|e| format!("stored alert {} is unreadable: {e}", a.key))
        })
        .collect()
}

impl Sender<'_> {
    /// Sends one claimed message; never records anything.
    pub fn attempt(&self, c: &ClaimedMessage) -> Outcome {
        let row = &c.row;
        let Some(dest) = self.destinations.get(&row.destination) else {
            return Outcome::Retry {
                error: format!("destination {:?} is not configured (kept until it is)", row.destination),
                after: None,
            };
        };
        let alerts = match decode(c) {
            Ok(a) if !a.is_empty() => a,
            Ok(_) => return Outcome::GiveUp { error: "the message carries no alert".into() },
            Err(e) => return Outcome::GiveUp { error: e },
        };
        let digest = row.digest_day.map(Day);
        match dest.target(self.env) {
            Err(e) => Outcome::GiveUp { error: e },
            Ok(Target::Webhook { url, format }) => {
                webhook::post(&self.http, &url, &row.message, webhook_body(format, &row.message, &alerts, digest))
            }
            Ok(Target::Email { to }) => {
                let Some(relay) = &self.relay else {
                    return Outcome::Retry { error: "no SMTP relay is configured ([alerts.smtp])".into(), after: None };
                };
                let e = Email { from: &relay.from, to: &to, key: &row.message, alerts: &alerts, digest };
                match email(&e) {
                    Ok(data) => smtp::send(&relay.settings, &Mail { from: &relay.from, to: &to, data: &data }),
                    Err(err) => Outcome::GiveUp { error: err },
                }
            }
        }
    }

    /// Records how an attempt ended.
    fn record(&self, store: &mut Store, c: &ClaimedMessage, outcome: Outcome) -> Result<Delivered, StoreError> {
        let row = &c.row;
        let now = (self.now)();
        let mut d = Delivered {
            message: row.message.clone(),
            destination: row.destination.clone(),
            alerts: c.alerts.len(),
            outcome: "sent",
            error: None,
            next_attempt: None,
        };
        match outcome {
            Outcome::Accepted => {
                store.message_sent(&row.message, &row.destination, now)?;
            }
            Outcome::Retry { error, after } => {
                let failures = (row.attempts + 1).clamp(1, u32::MAX as i64) as u32;
                let next = now + self.backoff.wait(failures, after, &row.message);
                let f = FailedAttempt {
                    error: format!("{}: {error}", row.destination),
                    next_attempt: next,
                    give_up: false,
                };
                store.message_failed(&row.message, &row.destination, &self.worker, now, &f)?;
                (d.outcome, d.error, d.next_attempt) = ("retry", Some(f.error), Some(next));
            }
            Outcome::GiveUp { error } => {
                let f =
                    FailedAttempt { error: format!("{}: {error}", row.destination), next_attempt: 0, give_up: true };
                store.message_failed(&row.message, &row.destination, &self.worker, now, &f)?;
                (d.outcome, d.error) = ("failed", Some(f.error));
            }
        }
        Ok(d)
    }

    /// Sends every due message (up to `limit`), one at a time, and says what happened.
    pub fn drain(&self, store: &mut Store) -> Result<DrainReport, StoreError> {
        self.drain_with(store, &mut |_| {})
    }

    /// [`Sender::drain`], calling `progress` after each message.
    pub fn drain_with(
        &self,
        store: &mut Store,
        progress: &mut dyn FnMut(&Delivered),
    ) -> Result<DrainReport, StoreError> {
        let mut report = DrainReport::default();
        loop {
            if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                break;
            }
            if self.limit.is_some_and(|l| report.messages.len() >= l) {
                break;
            }
            let Some(c) = store.claim_message(&self.worker, (self.now)(), self.lease_secs)? else { break };
            let outcome = self.attempt(&c);
            let d = self.record(store, &c, outcome)?;
            match d.outcome {
                "sent" => report.sent += 1,
                "retry" => report.retried += 1,
                _ => report.failed += 1,
            }
            progress(&d);
            report.messages.push(d);
        }
        Ok(report)
    }
}
