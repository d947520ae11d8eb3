//! What the analysis is asked ([`AnalyzeOptions`]) and what every stage needs to
//! know of the target ([`Target`]): its tag and stream, the cutoff, where its
//! pages are.

use std::path::PathBuf;

use citriage_model::time::{self, Epoch};

use crate::error::PayloadError;
use crate::release::{self, TagParts};
use citriage_suspects::links::Weights;

/// Options of the analysis (`analyze`).
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// The payload tag.
    pub tag: String,
    /// Release-controller stream name; derived from the tag when `None`.
    pub stream: Option<String>,
    /// RFC 3339 cutoff: later events are ignored.
    pub as_of: Option<String>,
    /// Pass-rate window in days (7).
    pub window_days: u32,
    /// Most payloads walked back looking for the baseline (20).
    pub max_chain: usize,
    /// Extra older payloads read for job history when the source has no job-run
    /// records (0 disables; the chain is always used).
    pub history_payloads: usize,
    /// Base URL of the release-controller pages for links; default
    /// `https://<arch>.ocp.releases.ci.openshift.org`.
    pub release_controller_url: Option<String>,
    /// CI-configuration changes: a recorded JSON list, or a git checkout of an
    /// `openshift/release`-like repository. `None` uses the source's own list, if any.
    pub ci_config_changes: Option<PathBuf>,
    /// Paths inside the checkout whose history is read.
    pub ci_config_paths: Vec<String>,
    /// Repository name used in CI-configuration URLs.
    pub ci_config_repo: String,
    /// Read evidence of failed informing / async jobs for the broader context.
    pub systemic_context: bool,
    /// The weights `payload eval --cross-validate` chooses among.
    pub tuning: Tuning,
}

/// What the evaluation may tune: the engine's link weights and how many tied
/// candidates at the top of a root cause are still bisected between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    pub links: Weights,
    /// A tie at the top of a root cause, in the bisect band, of at most this many
    /// candidates is bisected between; a larger one is reported only.
    pub tie_bisect_max: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning { links: Weights::default(), tie_bisect_max: 3 }
    }
}

impl AnalyzeOptions {
    /// Defaults for a tag.
    pub fn new(tag: &str) -> AnalyzeOptions {
        AnalyzeOptions {
            tag: tag.to_string(),
            stream: None,
            as_of: None,
            window_days: 7,
            max_chain: 20,
            history_payloads: 40,
            release_controller_url: None,
            ci_config_changes: None,
            ci_config_paths: vec!["ci-operator/step-registry".to_string(), "ci-operator/config".to_string()],
            ci_config_repo: "openshift/release".to_string(),
            systemic_context: true,
            tuning: Tuning::default(),
        }
    }
}

/// What every stage needs to know of the target: its tag and stream, the
/// cutoff, where its pages are.
pub(crate) struct Target {
    pub tag: String,
    pub stream: String,
    /// The tag's parts, when it parses.
    pub parts: Option<TagParts>,
    pub as_of: Option<Epoch>,
    /// Creation time from the tag.
    pub created: Option<Epoch>,
    /// `4.22`, empty when the tag does not say.
    pub version: String,
    pub architecture: String,
    /// Base URL of the release-controller pages.
    pub pages_base: String,
    pub tuning: Tuning,
}

impl Target {
    /// The target of the options, or why the options cannot be analysed.
    pub fn of(opts: &AnalyzeOptions) -> Result<Target, PayloadError> {
        let parts = release::parse_tag(&opts.tag);
        let stream = match (&opts.stream, &parts) {
            (Some(s), _) => s.clone(),
            (None, Some(p)) => p.stream_name.clone(),
            (None, None) => {
                return Err(PayloadError::Options(format!(
                    "cannot derive the stream from tag {:?}: pass the stream with --stream NAME (e.g. --stream 4.22.0-0.nightly)",
                    opts.tag
                )))
            }
        };
        let as_of = match &opts.as_of {
            Some(s) => Some(
                time::parse_rfc3339(s)
                    .ok_or_else(|| PayloadError::Options(format!("--as-of {s:?} is not an RFC 3339 time")))?,
            ),
            None => None,
        };
        let created = time::tag_timestamp(&opts.tag);
        if let (Some(cut), Some(t)) = (as_of, created) {
            if t > cut {
                return Err(PayloadError::Options(format!(
                    "{} was created at {}, after the as-of time {}",
                    opts.tag,
                    time::rfc3339(t),
                    time::rfc3339(cut)
                )));
            }
        }
        let architecture = parts.as_ref().map(|p| p.architecture.clone()).unwrap_or_else(|| "amd64".into());
        let pages_base = opts
            .release_controller_url
            .clone()
            .unwrap_or_else(|| format!("https://{architecture}.ocp.releases.ci.openshift.org"));
        Ok(Target {
            tag: opts.tag.clone(),
            stream,
            version: parts.as_ref().map(|p| p.version.clone()).unwrap_or_default(),
            parts,
            as_of,
            created,
            architecture,
            pages_base,
            tuning: opts.tuning,
        })
    }
}

/// The release page URL of `tag` under `base`.
pub(crate) fn release_url(base: &str, stream: &str, tag: &str) -> String {
    format!("{}/releasestream/{stream}/release/{tag}", base.trim_end_matches('/'))
}
