//! Alerts: the rules' remembered state of each subject (`alert_states`), every alert
//! raised (`alerts`, its evidence recorded in the ledger in the same transaction), and
//! the outbox (`alert_outbox`, one row per message and destination, with the alerts it
//! carries in `alert_outbox_items`).
//!
//! - A turn's result is written in one transaction that first re-reads the states the
//!   turn started from ([`Store::commit_alerts`]): when another worker committed a turn
//!   meanwhile nothing is written and the caller evaluates again, so two workers never
//!   raise one state change twice. Alerts are keyed by their idempotency key and
//!   inserted with `ON CONFLICT DO NOTHING`.
//! - A message is `open` (a digest still collecting its day), `pending`, `sent` or
//!   `failed` (given up: a permanent error, kept with it; `retry` re-queues it). A
//!   sender claims one due message at a time with a lease, by one conditional `UPDATE`
//!   as `ingest_status` does for sources: a second worker never sends what the first
//!   holds, and a worker restarted under the same name takes its own lease back at
//!   once. A message is recorded as sent only after the receiver accepted it, whoever
//!   holds the lease by then (the receiver has it); a failure is recorded only by the
//!   lease's holder.
//!
//! Times are Unix seconds given by the caller: the data's time for alerts and digests,
//! the wall clock for leases and retries.

use crate::db::{vals, DbError, Exec, Row, Tx};
use crate::{Store, StoreError};
use citriage_model::Evidence;
use serde::Serialize;
use std::collections::BTreeMap;

/// The lock writers of alert turns take turns on (PostgreSQL).
const LOCK: &str = "citriage-alerts";

/// A subject's state per kind of alert: (kind, subject) → the rules' JSON.
pub type AlertStates = BTreeMap<(String, String), String>;

/// An alert to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAlert {
    pub key: String,
    pub kind: String,
    pub change: String,
    pub subject: String,
    pub owner: String,
    /// When the state changed (the data's time).
    pub at: i64,
    pub title: String,
    /// The alert as JSON.
    pub body: String,
    /// Why it was held back (the verifier flagged it); `None`: it may be sent.
    pub held: Option<String>,
    pub evidence: Vec<Evidence>,
}

/// An alert's place in a message to a destination.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NewDelivery {
    /// The message's key (the alert's own, or its digest's).
    pub message: String,
    pub destination: String,
    pub alert: String,
    /// The digest's day (days since the epoch), for a destination in digest mode.
    pub digest_day: Option<i64>,
}

/// What one turn writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlertTurn {
    /// The data's time of the turn.
    pub as_of: i64,
    /// States that changed: (kind, subject, JSON).
    pub states: Vec<(String, String, String)>,
    pub alerts: Vec<NewAlert>,
    pub deliveries: Vec<NewDelivery>,
    /// Open digests of days before this one (days since the epoch) become due.
    pub close_digests_before: Option<i64>,
}

/// What a committed turn changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TurnWritten {
    pub alerts: u64,
    pub messages: u64,
    pub digests_closed: u64,
}

/// A stored alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredAlert {
    pub key: String,
    pub kind: String,
    pub change: String,
    pub subject: String,
    pub owner: String,
    pub at: i64,
    pub title: String,
    pub body: String,
    pub held: Option<String>,
}

/// A message's delivery state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutboxState {
    /// A digest still collecting its day's alerts.
    Open,
    Pending,
    Sent,
    /// Given up after a permanent error (kept; `retry` re-queues it).
    Failed,
}

impl OutboxState {
    pub fn as_str(self) -> &'static str {
        match self {
            OutboxState::Open => "open",
            OutboxState::Pending => "pending",
            OutboxState::Sent => "sent",
            OutboxState::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Option<OutboxState> {
        [OutboxState::Open, OutboxState::Pending, OutboxState::Sent, OutboxState::Failed]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
}

/// One row of the outbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutboxRow {
    pub message: String,
    pub destination: String,
    pub state: OutboxState,
    pub digest_day: Option<i64>,
    /// The data's time of the turn that created it.
    pub created: i64,
    /// Delivery attempts so far.
    pub attempts: i64,
    /// When it may be tried next (wall clock).
    pub next_attempt: i64,
    pub lease_holder: Option<String>,
    pub lease_until: i64,
    pub last_attempt: Option<i64>,
    pub last_error: Option<String>,
    pub sent_at: Option<i64>,
    /// The keys of the alerts it carries, in order (time, then key).
    pub alerts: Vec<String>,
}

/// How a delivery attempt failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedAttempt {
    /// What went wrong (no secret in it).
    pub error: String,
    /// When to try again (wall clock).
    pub next_attempt: i64,
    /// A permanent error: stop trying (the message stays, `failed`).
    pub give_up: bool,
}

/// A claimed message with its alerts, ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedMessage {
    pub row: OutboxRow,
    pub alerts: Vec<StoredAlert>,
}

const OUTBOX_COLS: &str = "message, destination, state, digest_day, created, attempts, next_attempt, lease_holder,
    lease_until, last_attempt, last_error, sent_at";

fn outbox_row(r: &Row<'_>) -> Result<OutboxRow, DbError> {
    let state = r.string(2)?;
    Ok(OutboxRow {
        message: r.string(0)?,
        destination: r.string(1)?,
        state: OutboxState::parse(&state).ok_or_else(|| DbError::Msg(format!("outbox state {state:?}")))?,
        digest_day: r.opt_i64(3)?,
        created: r.i64(4)?,
        attempts: r.i64(5)?,
        next_attempt: r.i64(6)?,
        lease_holder: r.opt_string(7)?,
        lease_until: r.i64(8)?,
        last_attempt: r.opt_i64(9)?,
        last_error: r.opt_string(10)?,
        sent_at: r.opt_i64(11)?,
        alerts: Vec::new(),
    })
}

const ALERT_COLS: &str = "key, kind, change, subject, owner, at, title, body, held";

fn alert_row(r: &Row<'_>) -> Result<StoredAlert, DbError> {
    Ok(StoredAlert {
        key: r.string(0)?,
        kind: r.string(1)?,
        change: r.string(2)?,
        subject: r.string(3)?,
        owner: r.string(4)?,
        at: r.i64(5)?,
        title: r.string(6)?,
        body: r.string(7)?,
        held: r.opt_string(8)?,
    })
}

fn read_states(e: &mut impl Exec) -> Result<AlertStates, DbError> {
    let rows = e.rows("SELECT kind, subject, state FROM alert_states ORDER BY kind, subject", &[], |r| {
        Ok(((r.string(0)?, r.string(1)?), r.string(2)?))
    })?;
    Ok(rows.into_iter().collect())
}

/// Adds an alert to a message, creating the message when new. A digest that is no
/// longer collecting (its day was closed) does not take late alerts: the alert goes
/// alone, as a message of its own, so nothing is lost.
fn deliver(tx: &mut Tx<'_>, d: &NewDelivery, created: i64) -> Result<u64, DbError> {
    let (mut message, mut day) = (d.message.clone(), d.digest_day);
    if day.is_some() {
        let state: Option<String> = tx.opt(
            "SELECT state FROM alert_outbox WHERE message = ?1 AND destination = ?2",
            vals![&message, &d.destination],
            |r| r.string(0),
        )?;
        if state.is_some_and(|s| s != "open") {
            (message, day) = (d.alert.clone(), None);
        }
    }
    let state = if day.is_some() { "open" } else { "pending" };
    let new = tx.exec(
        "INSERT INTO alert_outbox (message, destination, state, digest_day, created) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (message, destination) DO NOTHING",
        vals![&message, &d.destination, state, day, created],
    )?;
    tx.exec(
        "INSERT INTO alert_outbox_items (message, destination, alert) VALUES (?1, ?2, ?3)
         ON CONFLICT (message, destination, alert) DO NOTHING",
        vals![&message, &d.destination, &d.alert],
    )?;
    Ok(new)
}

impl Store {
    /// The rules' remembered states.
    pub fn alert_states(&self) -> Result<AlertStates, StoreError> {
        read_states(&mut self.conn.reader()).map_err(|e| self.err(e))
    }

    /// Writes a turn in one transaction, if the states are still `expected` (those the
    /// turn was evaluated from): false, and nothing written, when another worker
    /// changed them meanwhile (evaluate again).
    pub fn commit_alerts(
        &mut self,
        expected: &AlertStates,
        turn: &AlertTurn,
        read_at: &str,
    ) -> Result<Option<TurnWritten>, StoreError> {
        self.conn
            .write(&mut |tx| {
                tx.take_turns(LOCK)?;
                if &read_states(tx)? != expected {
                    return Ok(None);
                }
                let mut w = TurnWritten::default();
                for (kind, subject, state) in &turn.states {
                    tx.exec(
                        "INSERT INTO alert_states (kind, subject, state) VALUES (?1, ?2, ?3)
                         ON CONFLICT (kind, subject) DO UPDATE SET state = excluded.state",
                        vals![kind, subject, state],
                    )?;
                }
                for a in &turn.alerts {
                    w.alerts += tx.exec(
                        "INSERT INTO alerts (key, kind, change, subject, owner, at, title, body, held, raised_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (key) DO NOTHING",
                        vals![
                            &a.key, &a.kind, &a.change, &a.subject, &a.owner, a.at, &a.title, &a.body, &a.held,
                            turn.as_of
                        ],
                    )?;
                    crate::ledger::insert_evidence(tx, &a.evidence, read_at)?;
                }
                for d in &turn.deliveries {
                    w.messages += deliver(tx, d, turn.as_of)?;
                }
                if let Some(day) = turn.close_digests_before {
                    w.digests_closed = tx.exec(
                        "UPDATE alert_outbox SET state = 'pending' WHERE state = 'open' AND digest_day < ?1",
                        vals![day],
                    )?;
                }
                Ok(Some(w))
            })
            .map_err(|e| self.err(e))
    }

    /// Alerts by time (then key), at or after `since`; the newest `limit` when given.
    pub fn alerts(&self, since: Option<i64>, limit: Option<usize>) -> Result<Vec<StoredAlert>, StoreError> {
        let sql = format!("SELECT {ALERT_COLS} FROM alerts WHERE at >= ?1 ORDER BY at DESC, key DESC LIMIT ?2");
        let limit = limit.map_or(i64::MAX, |l| l.min(i64::MAX as usize) as i64);
        let mut v = self
            .conn
            .reader()
            .rows(&sql, vals![since.unwrap_or(i64::MIN), limit], alert_row)
            .map_err(|e| self.err(e))?;
        v.reverse();
        Ok(v)
    }

    /// One alert by key.
    pub fn alert(&self, key: &str) -> Result<Option<StoredAlert>, StoreError> {
        self.conn
            .reader()
            .opt(&format!("SELECT {ALERT_COLS} FROM alerts WHERE key = ?1"), vals![key], alert_row)
            .map_err(|e| self.err(e))
    }

    /// The outbox, by creation then message and destination (with each message's
    /// alert keys).
    pub fn outbox(&self) -> Result<Vec<OutboxRow>, StoreError> {
        self.conn
            .read(&mut |tx| {
                let mut rows = tx.rows(
                    &format!("SELECT {OUTBOX_COLS} FROM alert_outbox ORDER BY created, message, destination"),
                    &[],
                    outbox_row,
                )?;
                let items = tx.rows(
                    "SELECT i.message, i.destination, i.alert FROM alert_outbox_items i JOIN alerts a ON a.key = i.alert
                     ORDER BY i.message, i.destination, a.at, a.key",
                    &[],
                    |r| Ok(((r.string(0)?, r.string(1)?), r.string(2)?)),
                )?;
                let mut by: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
                for (k, a) in items {
                    by.entry(k).or_default().push(a);
                }
                for r in &mut rows {
                    r.alerts = by.remove(&(r.message.clone(), r.destination.clone())).unwrap_or_default();
                }
                Ok(rows)
            })
            .map_err(|e| self.err(e))
    }

    /// Claims the next due message for `holder` (a pending message whose retry time has
    /// come and whose lease is free, expired or already `holder`'s) until `now +
    /// lease_secs`; `None` when nothing is due. Oldest first.
    pub fn claim_message(
        &mut self,
        holder: &str,
        now: i64,
        lease_secs: i64,
    ) -> Result<Option<ClaimedMessage>, StoreError> {
        let until = now.saturating_add(lease_secs.max(1));
        loop {
            let candidates: Vec<(String, String)> = self
                .conn
                .reader()
                .rows(
                    "SELECT message, destination FROM alert_outbox
                     WHERE state = 'pending' AND next_attempt <= ?2
                       AND (lease_holder IS NULL OR lease_holder = ?1 OR lease_until < ?2)
                     ORDER BY CASE WHEN lease_holder = ?1 THEN 0 ELSE 1 END, created, message, destination LIMIT 8",
                    vals![holder, now],
                    |r| Ok((r.string(0)?, r.string(1)?)),
                )
                .map_err(|e| self.err(e))?;
            if candidates.is_empty() {
                return Ok(None);
            }
            for (message, destination) in candidates {
                let claimed = self
                    .conn
                    .write(&mut |tx| {
                        let n = tx.exec(
                            "UPDATE alert_outbox SET lease_holder = ?3, lease_until = ?4
                             WHERE message = ?1 AND destination = ?2 AND state = 'pending' AND next_attempt <= ?5
                               AND (lease_holder IS NULL OR lease_holder = ?3 OR lease_until < ?5)",
                            vals![&message, &destination, holder, until, now],
                        )?;
                        if n != 1 {
                            return Ok(None);
                        }
                        let row = tx.one(
                            &format!("SELECT {OUTBOX_COLS} FROM alert_outbox WHERE message = ?1 AND destination = ?2"),
                            vals![&message, &destination],
                            outbox_row,
                        )?;
                        let alerts = tx.rows(
                            &format!(
                                "SELECT {} FROM alert_outbox_items i JOIN alerts a ON a.key = i.alert
                                 WHERE i.message = ?1 AND i.destination = ?2 ORDER BY a.at, a.key",
                                ALERT_COLS.split(", ").map(|c| format!("a.{c}")).collect::<Vec<_>>().join(", ")
                            ),
                            vals![&message, &destination],
                            alert_row,
                        )?;
                        Ok(Some((row, alerts)))
                    })
                    .map_err(|e| self.err(e))?;
                if let Some((mut row, alerts)) = claimed {
                    row.alerts = alerts.iter().map(|a| a.key.clone()).collect();
                    return Ok(Some(ClaimedMessage { row, alerts }));
                }
            }
        }
    }

    /// Records that the receiver accepted a message: sent, whoever holds the lease now
    /// (the receiver has it). False when it was already recorded as sent.
    pub fn message_sent(&mut self, message: &str, destination: &str, now: i64) -> Result<bool, StoreError> {
        self.conn
            .write(&mut |tx| {
                let n = tx.exec(
                    "UPDATE alert_outbox SET state = 'sent', sent_at = ?3, last_attempt = ?3, attempts = attempts + 1,
                        last_error = NULL, lease_holder = NULL, lease_until = 0
                     WHERE message = ?1 AND destination = ?2 AND state <> 'sent'",
                    vals![message, destination, now],
                )?;
                Ok(n == 1)
            })
            .map_err(|e| self.err(e))
    }

    /// Records a failed attempt of `holder`'s: tried again at `next_attempt`, or given up
    /// (`give_up`: a permanent error). Nothing is recorded (false) when `holder` no
    /// longer holds the lease.
    pub fn message_failed(
        &mut self,
        message: &str,
        destination: &str,
        holder: &str,
        now: i64,
        f: &FailedAttempt,
    ) -> Result<bool, StoreError> {
        let (error, next_attempt) = (f.error.as_str(), f.next_attempt);
        let state = if f.give_up { "failed" } else { "pending" };
        self.conn
            .write(&mut |tx| {
                let n = tx.exec(
                    "UPDATE alert_outbox SET state = ?6, attempts = attempts + 1, last_attempt = ?4, last_error = ?5,
                        next_attempt = ?7, lease_holder = NULL, lease_until = 0
                     WHERE message = ?1 AND destination = ?2 AND lease_holder = ?3 AND state = 'pending'",
                    vals![message, destination, holder, now, error, state, next_attempt],
                )?;
                Ok(n == 1)
            })
            .map_err(|e| self.err(e))
    }

    /// Re-queues messages given up (of one destination, or all): due at once, their
    /// attempts kept. Returns how many.
    pub fn retry_failed_messages(&mut self, destination: Option<&str>) -> Result<u64, StoreError> {
        self.conn
            .write(&mut |tx| {
                tx.exec(
                    "UPDATE alert_outbox SET state = 'pending', next_attempt = 0
                     WHERE state = 'failed' AND (CAST(?1 AS TEXT) IS NULL OR destination = ?1)",
                    vals![destination],
                )
            })
            .map_err(|e| self.err(e))
    }
}
