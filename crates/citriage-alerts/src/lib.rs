//! Alerts people can trust: few, right, verified, said once.
//!
//! Pure: the caller hands in what the store says at one turn ([`observe::Observation`])
//! and the subjects' remembered states; [`rules::evaluate`] returns the alerts of the
//! state changes and the new states. Nothing here reads a file, the network or the
//! clock: times are the data's.
//!
//! - [`alert`]: an alert, its pieces of text (prose apart from CI text), its key;
//! - [`observe`]: the inputs — jobs' runs, failure patterns' daily counts, the tests the
//!   flake signals flag, payloads' verdicts, triage records' transitions;
//! - [`rules`]: the events and their hysteresis (TestGrid's consecutive-failures rule,
//!   new and growing patterns, rejected payloads, failed after fix, fix confirmed);
//! - [`text`]: an alert written for each sink (Markdown, plain text, Slack);
//! - [`check`]: the report verifier's rules run on an alert's Markdown before it is sent;
//! - [`route`]: owners → destinations, digests of a day;
//! - [`message`]: the bytes each destination receives (Slack-compatible JSON, plain JSON,
//!   an e-mail), each carrying its idempotency key;
//! - [`retry`]: when a failed delivery is tried again.

pub mod alert;
pub mod check;
pub mod message;
pub mod observe;
pub mod retry;
pub mod route;
pub mod rules;
pub mod text;

pub use alert::{Alert, AlertKind, Change, Line, Piece};
pub use observe::{
    JobRuns, Observation, PatternDay, PatternSeries, PayloadOutcome, PayloadPhase, RecordState, RecordTransition, Run,
    RunResult,
};
pub use rules::{evaluate, Outcome, Rules, State, StateKey};
