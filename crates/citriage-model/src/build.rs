//! Prow builds as citriage stores them: one record per build folder (or per
//! prowjob that never reached GCS) with its test results and artifact index.

use serde::{Deserialize, Serialize};

/// The Prow (Spyglass) page of the build stored at `path` (`logs/<job>/<id>`) in
/// `bucket`: every page citriage links a build to, and the locator its evidence names.
pub fn prow_url(bucket: &str, path: &str) -> String {
    format!("https://prow.k8s.io/view/gs/{bucket}/{path}")
}

/// One test case of a build, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredTest {
    /// The JUnit file it came from, relative to the build folder.
    pub file: String,
    pub suite: String,
    pub classname: String,
    pub name: String,
    /// `passed`, `failed`, `error`, `skipped`.
    pub status: String,
    pub duration: Option<f64>,
    pub failure_text: Option<String>,
    pub attempt: u32,
    pub informing: bool,
    /// The name kettle gives the case, `None` when kettle would not ingest it.
    pub kettle_name: Option<String>,
}

/// One build with everything ingested about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildRecord {
    pub bucket: String,
    /// Folder path inside the bucket (`logs/<job>/<id>`), or `prowjob/<job>/<id>` for
    /// builds only Prow knows (state=error, no GCS folder).
    pub path: String,
    pub job: String,
    pub build_id: String,
    /// `periodic`, `postsubmit`, `presubmit`, `batch`.
    pub kind: String,
    pub pr: Option<u64>,
    /// The commit kettle groups by: the PR head for presubmits, else repo-commit or version.
    pub commit_sha: Option<String>,
    pub repo_commit: Option<String>,
    pub repo_version: Option<String>,
    /// `started.json` repos as JSON text.
    pub repos: Option<String>,
    pub started: Option<i64>,
    pub finished: Option<i64>,
    pub duration: Option<i64>,
    /// `SUCCESS`, `FAILURE`, `ABORTED`, `ERROR`, or `None` while running.
    pub result: Option<String>,
    /// The prowjob state when known.
    pub state: Option<String>,
    pub executor: Option<String>,
    /// `gcs` or `prowjob`.
    pub origin: String,
    /// Malformed or missing files, each with its reason.
    pub problems: Vec<String>,
    /// True once finished: the build's artifacts no longer change.
    pub complete: bool,
    pub tests: Vec<StoredTest>,
    /// Artifact paths (relative to the build folder) and sizes.
    pub artifacts: Vec<(String, Option<u64>)>,
    /// Failure lines extracted from the build's log (failed builds only), in log order.
    #[serde(default)]
    pub excerpts: Vec<LogExcerpt>,
    /// What kettle (the dashboards' ingester) records for the build, where it differs
    /// from citriage's reading; `None` when unknown (builds stored before citriage kept
    /// it, or made by hand), and then kettle's figures fall back to citriage's fields.
    #[serde(default)]
    pub kettle: Option<KettleFacts>,
    /// Where TestGrid shows the job, from the job config's annotations Prow copies onto
    /// the build's `prowjob.json`; `None` when the build names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub testgrid: Option<TestgridPlace>,
    /// What the build ran with, as its Prow documents say: the pod spec's images and
    /// version flags (`prowjob.json`), the version-like entries of `started.json` and
    /// `finished.json` (`job-version`, `metadata.KEY`); sorted by file and key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<BuildVersion>,
}

/// One entry of what a build ran with: the document it is read from (`prowjob.json`,
/// `started.json`, `finished.json`), its key there (`spec.pod_spec.containers[test].image`,
/// `metadata.job-version`) and its value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BuildVersion {
    pub file: String,
    pub key: String,
    pub value: String,
}

/// The TestGrid dashboards and tab of a job (`testgrid-dashboards`,
/// `testgrid-tab-name`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestgridPlace {
    /// The dashboards, in the annotation's order (`sig-release-master-blocking`, …).
    pub dashboards: Vec<String>,
    /// The tab name, when the annotation sets one (else TestGrid uses the job name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
}

impl TestgridPlace {
    /// From the two annotations; `None` when neither names anything.
    pub fn from_annotations(dashboards: Option<&str>, tab: Option<&str>) -> Option<TestgridPlace> {
        let dashboards: Vec<String> =
            dashboards.unwrap_or("").split(',').map(str::trim).filter(|d| !d.is_empty()).map(str::to_string).collect();
        let tab = tab.map(str::trim).filter(|t| !t.is_empty()).map(str::to_string);
        (!dashboards.is_empty() || tab.is_some()).then_some(TestgridPlace { dashboards, tab })
    }

    /// Whether one of the dashboards is a release-blocking board
    /// (`sig-release-…-blocking`; `…-informing` and presubmit boards are not).
    pub fn is_release_blocking(&self) -> bool {
        self.dashboards.iter().any(|d| d.starts_with("sig-release-") && d.ends_with("-blocking"))
    }
}

/// What a TestGrid tab showed of a build, kept on the build's row when the build's
/// fields come from another source (GCS), so the two readings can be compared each
/// time either is read again; and on a build only TestGrid has, as where it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestgridFacts {
    pub dashboard: String,
    pub tab: String,
    /// The result its `Overall` row gives (`SUCCESS`, `FAILURE`, `ERROR`, `ABORTED`),
    /// `None` while running or when it gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The column's start (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<i64>,
    /// The column's `Commit` custom column (TestGrid keeps 9 characters of a version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Rows with a result in the column, and those failing (the `Overall` row aside).
    pub tests: u64,
    pub failed: u64,
}

/// The fields of kettle's row for a build that citriage reads differently.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KettleFacts {
    /// `finished.json`'s `result` verbatim (any case; `None` when absent or null),
    /// else `SUCCESS`/`FAILURE` from a boolean `passed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// `finished.json`'s `version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `started.json`'s top-level `repo-commit`, else its `repo-version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_commit: Option<String>,
    /// `started.json`'s top-level `repos`, else the `repos` of the metadata kettle reads
    /// (`finished.json`'s when it has a `metadata` key, else `started.json`'s), as
    /// Python's `json.dumps` spells them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repos: Option<String>,
    /// Why kettle writes no row for the build at all (a JUnit `time` its `float()`
    /// refuses), `None` when it writes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<String>,
}

/// A run of failure lines from one of a build's logs, with where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogExcerpt {
    /// The log's path relative to the build folder (`build-log.txt`).
    pub source: String,
    /// First and last line of the excerpt, 1-based and inclusive.
    pub line_start: u32,
    pub line_end: u32,
    pub text: String,
}

impl BuildRecord {
    /// The result kettle records: its own reading when known, else citriage's.
    pub fn kettle_result(&self) -> Option<&str> {
        match &self.kettle {
            Some(k) => k.result.as_deref(),
            None => self.result.as_deref(),
        }
    }

    /// Kettle's `version` column (`finished.json`'s `version`); for builds stored
    /// without kettle's reading, `started.json`'s `repo-version` as before.
    pub fn kettle_version(&self) -> Option<&str> {
        match &self.kettle {
            Some(k) => k.version.as_deref(),
            None => self.repo_version.as_deref(),
        }
    }

    /// Kettle's `repo_commit` column: `started.json`'s `repo-commit`, else its `repo-version`.
    pub fn kettle_repo_commit(&self) -> Option<&str> {
        match &self.kettle {
            Some(k) => k.repo_commit.as_deref(),
            None => self.repo_commit.as_deref().or(self.repo_version.as_deref()),
        }
    }

    /// Kettle's `repos` (with the metadata fallback its flakes query applies).
    pub fn kettle_repos(&self) -> Option<&str> {
        match &self.kettle {
            Some(k) => k.repos.as_deref(),
            None => self.repos.as_deref(),
        }
    }

    /// Why kettle writes no row for the build, if it writes none.
    pub fn kettle_dropped(&self) -> Option<&str> {
        self.kettle.as_ref().and_then(|k| k.dropped.as_deref())
    }

    /// The job name as the k8s-metrics dashboards write it (`pr:` for presubmits).
    pub fn dashboard_job(&self) -> String {
        dashboard_job_name(&self.kind, &self.job)
    }
}

/// A job of this kind as the k8s-metrics dashboards name it: `pr:` before presubmit and
/// batch jobs, the job's name for the others.
pub fn dashboard_job_name(kind: &str, job: &str) -> String {
    if kind == "presubmit" || kind == "batch" {
        format!("pr:{job}")
    } else {
        job.to_string()
    }
}
