//! The analysis core of citriage for dashboard snapshots: categorization by rules,
//! severity rubrics, cluster selection, drift between snapshots, flakes roll-ups and
//! misclassification findings. Pure: everything takes parsed data and returns data;
//! no file, network or database access happens here.

pub mod build_findings;
pub mod categorize;
pub mod config;
pub mod drift;
pub mod expr;
pub mod flakes;
pub mod links;
pub mod metrics;
pub mod misclass;
pub mod patterns;
pub mod pr_risk;
pub mod resolution;
pub mod rules;
pub mod select;
pub mod severity;
pub mod triage;
pub mod triage_builds;
pub mod windows;

/// Pattern drift between two dates (from the patterns crate).
pub use citriage_patterns::drift as pattern_drift;

pub use categorize::{categorize_snapshot, Categorized, CategorizedJob, Category};
pub use config::AnalysisConfig;
pub use rules::{RuleSet, RulesError};
pub use triage::{triage, Triage, TriageInput};
pub use triage_builds::TriageBuilds;
