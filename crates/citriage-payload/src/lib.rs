//! OpenShift payload analysis: why a release payload failed its blocking jobs and
//! which change (if any) caused it, reproduced deterministically from the release
//! controller, job artifacts and pull-request diffs.
//!
//! The pipeline ([`analyze`], one module per stage): walk the stream's tags back
//! to the last payload where every blocking job succeeded ([`history`]); read the
//! changelogs of each hop ([`release`]); compute pass rates, trends and streaks
//! ([`jobhistory`]); split each failed blocking job into failure modes with their
//! onsets ([`evidence`], [`modes`], [`signature`], [`aggregated`]) and classify
//! them ([`classify`]); group modes sharing a signature into root causes and look
//! for the same signature in other jobs; gather the candidates ([`candidate`]),
//! link each to each failure mode ([`links`], through the suspect engine `citriage_suspects`) and
//! score it with an itemized rubric ([`scoring`]); decide ([`action`]); and
//! return the [`result`], which [`report`] renders as HTML, Markdown, JSON and
//! the payload-results YAML.
//!
//! Inputs come through two traits: [`source::PayloadSource`] (release controller
//! over HTTP, recorded responses, payload-snapshot directories, CI-configuration
//! changes) and
//! [`evidence::EvidenceProvider`] (JUnit and build logs of a Prow run).

pub mod action;
pub mod aggregated;
pub mod analyze;
pub mod candidate;
pub mod ciconfig;
pub mod classify;
pub mod components;
pub mod crossval;
pub mod error;
pub mod eval;
pub mod evidence;
pub mod history;
pub mod jobhistory;
pub mod junit;
pub mod lines;
pub mod links;
pub mod modes;
pub mod release;
pub mod report;
pub mod result;
pub mod scoring;
pub mod signature;
pub mod snapshot;
pub mod source;
#[cfg(test)]
mod test_support;

pub use analyze::{analyze, analyze_with, AnalyzeOptions};
pub use error::PayloadError;
pub use evidence::{EvidenceProvider, GcsMirror, NoEvidence, RunEvidence};
pub use report::{render_html, render_json, render_markdown, render_results_yaml, write_reports};
pub use result::PayloadAnalysis;
pub use signature::{MaskingSigner, Signer};
pub use snapshot::SnapshotDir;
pub use source::{HttpConfig, HttpSource, PayloadSource, RecordedDir};
