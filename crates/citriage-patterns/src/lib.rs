//! citriage-patterns: the pure algorithm core of failure triage.
//!
//! Works on strings and bytes handed in by callers and performs no I/O of its own:
//! line splitting ([`lines`]), failure-text normalization ([`normalize`]), the
//! go.k8s.io/triage similarity measure and ids ([`similarity`]), clustering ([`cluster`]),
//! stable cluster ids across days ([`stable`]), log template mining ([`drain`], token classes in
//! [`tokens`], leave-one-system-out evaluation in [`mining_eval`]), failure-line
//! extraction from build logs ([`extract`], cross-validated in [`extract_eval`]), the known-signature knowledge base
//! ([`signatures`]) and `failure_data.json` export ([`export`]).

pub mod benchgen;
pub mod cluster;
pub mod drain;
pub mod drift;
pub mod export;
pub mod extract;
pub mod extract_eval;
mod extract_shape;
pub mod fxhash;
pub mod hierarchy;
pub mod lines;
pub mod mining_eval;
pub mod normalize;
pub mod signatures;
pub mod similarity;
pub mod stable;
pub mod tokens;
