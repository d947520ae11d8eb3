//! The [`PayloadSource`] trait: everything the analysis reads, asked for by
//! what it means (tags, a release, a changelog, a PR's diff, job runs, the
//! CI-configuration changes of a window...).

use citriage_model::time::Epoch;

use crate::ciconfig::CiConfigChange;
use crate::error::PayloadError;
use crate::jobhistory::{self, JobRun};
use crate::release::{ChangeLogState, NodeImageStream, PullRequest, ReleaseInfo, TagList};

/// The answer to a changelog request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changelog {
    pub state: ChangeLogState,
    pub node_image_streams: Vec<NodeImageStream>,
    /// The file or URL it came from.
    pub origin: String,
}

/// The window CI-configuration changes are asked for: commits in `[since, until]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CiWindow {
    pub since: Epoch,
    pub until: Epoch,
}

/// What a source knows of the CI-configuration changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CiConfigAnswer {
    /// The source has no list of them.
    Unknown,
    /// These are the changes.
    Known(Vec<CiConfigChange>),
    /// They could not be read (a checkout git cannot read): a gap of the analysis.
    Unreadable(String),
}

/// A source of release-controller data and the extras the analysis can use.
pub trait PayloadSource {
    /// A one-line description (base URL, directory).
    fn describe(&self) -> String;

    /// The stream's tags, newest first.
    fn tags(&self, stream: &str) -> Result<TagList, PayloadError>;

    /// Release info of one tag.
    fn release(&self, stream: &str, tag: &str) -> Result<ReleaseInfo, PayloadError>;

    /// The changelog of `tag` relative to `from` (`?from=`); `NotFound` when the
    /// source cannot answer for this pair.
    fn changelog(&self, stream: &str, tag: &str, from: &str) -> Result<Changelog, PayloadError>;

    /// The unified diff of a pull request, when available.
    fn pr_diff(&self, _pr: &PullRequest) -> Result<Option<String>, PayloadError> {
        Ok(None)
    }

    /// The presubmit job names that ran on a pull request, when known.
    fn pr_presubmits(&self, _pr: &PullRequest) -> Result<Option<Vec<String>>, PayloadError> {
        Ok(None)
    }

    /// Recorded job runs (BigQuery export shape), when the source has them.
    fn job_runs(&self, _stream: &str) -> Result<Option<Vec<JobRun>>, PayloadError> {
        Ok(None)
    }

    /// The CI-configuration changes of the window, when the source has them (a
    /// recorded list may answer whole: the analysis filters by date).
    fn ci_config_changes(&self, _window: &CiWindow) -> Result<CiConfigAnswer, PayloadError> {
        Ok(CiConfigAnswer::Unknown)
    }

    /// Sippy's per-job pass rates for a release (`4.22`), when available.
    fn sippy_jobs(&self, _release: &str) -> Result<Option<Vec<jobhistory::SippyJob>>, PayloadError> {
        Ok(None)
    }

    /// RHCOS RPM changelog text for a variant between two payloads, when available.
    fn rpm_changelog(&self, _tag: &str, _variant: &str, _from: &str) -> Result<Option<String>, PayloadError> {
        Ok(None)
    }
}
