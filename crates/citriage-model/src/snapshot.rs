//! Dashboard snapshots: one parsed `failures-latest.json` or `flakes-latest.json`
//! with its dataset, date and source. Jobs are kept sorted by name so every consumer
//! iterates in the same order.

use crate::Day;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Which k8s-metrics dashboard a snapshot belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dataset {
    /// `failures-latest.json`: `{job: {failing_days}}`.
    Failures,
    /// `flakes-latest.json`: `{job: {consistency, flakes, test_flakes}}`.
    Flakes,
}

impl Dataset {
    pub fn as_str(self) -> &'static str {
        match self {
            Dataset::Failures => "failures",
            Dataset::Flakes => "flakes",
        }
    }

    /// Capitalised name for titles.
    pub fn title(self) -> &'static str {
        match self {
            Dataset::Failures => "Failures",
            Dataset::Flakes => "Flakes",
        }
    }

    /// The public URL of the latest snapshot of this dataset.
    pub fn public_json_url(self) -> String {
        format!("https://storage.googleapis.com/k8s-metrics/{}-latest.json", self.as_str())
    }

    /// The public URL of the dashboard page of this dataset.
    pub fn public_html_url(self) -> String {
        format!("https://storage.googleapis.com/k8s-metrics/{}-latest.html", self.as_str())
    }
}

impl fmt::Display for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dataset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "failures" => Ok(Dataset::Failures),
            "flakes" => Ok(Dataset::Flakes),
            other => Err(format!("unknown dataset {other:?} (expected failures or flakes)")),
        }
    }
}

/// One job's figures in a flakes snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlakeStats {
    /// Commit consistency, 0..1, three decimals.
    pub consistency: f64,
    /// Commits that flaked in the window.
    pub flakes: u64,
    /// Per-test flake counts; `None` when the snapshot had `null`.
    pub test_flakes: Option<BTreeMap<String, u64>>,
}

/// One job's figures, by dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JobStats {
    Failures { failing_days: u32 },
    Flakes(FlakeStats),
}

impl JobStats {
    pub fn dataset(&self) -> Dataset {
        match self {
            JobStats::Failures { .. } => Dataset::Failures,
            JobStats::Flakes(_) => Dataset::Flakes,
        }
    }

    pub fn failing_days(&self) -> Option<u32> {
        match self {
            JobStats::Failures { failing_days } => Some(*failing_days),
            JobStats::Flakes(_) => None,
        }
    }

    pub fn flake(&self) -> Option<&FlakeStats> {
        match self {
            JobStats::Flakes(f) => Some(f),
            JobStats::Failures { .. } => None,
        }
    }
}

/// One job of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobEntry {
    pub job: String,
    #[serde(flatten)]
    pub stats: JobStats,
}

/// Where a snapshot came from and when it describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMeta {
    pub dataset: Dataset,
    /// The day the snapshot describes.
    pub date: Day,
    /// The file path or URL it was read from.
    pub source: String,
    /// SHA-256 of the raw bytes read.
    pub sha256: String,
}

/// A validated snapshot. `jobs` is sorted by job name and has no duplicates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub meta: SnapshotMeta,
    pub jobs: Vec<JobEntry>,
}

impl Snapshot {
    /// Builds a snapshot, sorting jobs by name.
    pub fn new(meta: SnapshotMeta, mut jobs: Vec<JobEntry>) -> Snapshot {
        jobs.sort_by(|a, b| a.job.cmp(&b.job));
        Snapshot { meta, jobs }
    }

    /// Looks a job up by name (binary search over the sorted list).
    pub fn get(&self, job: &str) -> Option<&JobEntry> {
        self.jobs.binary_search_by(|e| e.job.as_str().cmp(job)).ok().map(|i| &self.jobs[i])
    }
}
