//! Delivering alerts: the store's outbox drained by a [`sender::Sender`] — each due
//! message claimed under a lease, composed from its alerts (`citriage-alerts`' message
//! bodies), sent to its destination, and recorded as sent only after the receiver
//! accepted it; a failure waits its backoff (at least what the receiver asked) or, when
//! permanent, is kept as failed with its reason. Webhooks go through the one HTTP layer
//! (`citriage_sources::http`, writes with an idempotency key); e-mail through the small
//! SMTP client in [`smtp`]. Destinations and the SMTP relay are configured in
//! [`destination`]; secrets (webhook URLs, the SMTP password) come from the
//! environment and never appear in a message, an error or a log.

pub mod destination;
pub mod sender;
pub mod smtp;
pub mod webhook;

pub use destination::{DestinationConfig, DestinationKind, SmtpConfig};
pub use sender::{Delivered, DrainReport, Sender};

/// How one delivery attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver accepted the message (a 2xx answer, SMTP's 250 to the data).
    Accepted,
    /// Worth another try: not before `after` seconds when the receiver said so.
    Retry { error: String, after: Option<i64> },
    /// It will not work as configured (a 4xx answer, SMTP 5xx, a bad address or URL).
    GiveUp { error: String },
}
