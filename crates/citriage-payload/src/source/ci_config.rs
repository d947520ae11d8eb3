//! Reading CI-configuration changes: a recorded list (a JSON file whose `diff`
//! paths are read beside it) or a local git checkout (`git log -p` over the
//! configuration paths, bounded by the analysis' window: the only process this
//! crate starts). The analysis asks for them through
//! [`PayloadSource::ci_config_changes`]; [`WithCiConfig`] answers from what the
//! caller named and everything else from the source it wraps.

use std::path::{Path, PathBuf};
use std::process::Command;

use citriage_model::time::{self, Epoch};

use super::api::{Changelog, CiConfigAnswer, CiWindow, PayloadSource};
use crate::ciconfig::{self, CiConfigChange};
use crate::error::{read_file, read_optional, PayloadError};
use crate::jobhistory::{JobRun, SippyJob};
use crate::release::{PullRequest, ReleaseInfo, TagList};

/// Where the caller's CI-configuration changes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CiConfigOrigin {
    /// A recorded JSON list (its `diff` paths are read beside the file, else in
    /// the nearest folder above it that holds them).
    Recorded(PathBuf),
    /// A git checkout of an `openshift/release`-like repository: the commits to
    /// `paths` in the window; `repo` names it in URLs.
    Checkout { dir: PathBuf, paths: Vec<String>, repo: String },
}

impl CiConfigOrigin {
    /// A folder is a checkout, anything else a recorded list.
    pub fn of(path: &Path, paths: &[String], repo: &str) -> CiConfigOrigin {
        if path.is_dir() {
            CiConfigOrigin::Checkout { dir: path.to_path_buf(), paths: paths.to_vec(), repo: repo.to_string() }
        } else {
            CiConfigOrigin::Recorded(path.to_path_buf())
        }
    }

    /// The changes within `window`: a recorded list answers whole (the analysis
    /// filters it); a checkout that cannot be read is a gap, not a failure.
    pub fn read(&self, window: &CiWindow) -> Result<CiConfigAnswer, PayloadError> {
        match self {
            CiConfigOrigin::Recorded(file) => Ok(CiConfigAnswer::Known(read_recorded_file(file)?)),
            CiConfigOrigin::Checkout { dir, paths, repo } => {
                match from_checkout(dir, paths, window.since, window.until, repo) {
                    Ok(changes) => Ok(CiConfigAnswer::Known(changes)),
                    Err(e) => Ok(CiConfigAnswer::Unreadable(e.to_string())),
                }
            }
        }
    }
}

/// A source whose CI-configuration changes come from an origin the caller names.
pub struct WithCiConfig<'a> {
    pub inner: &'a dyn PayloadSource,
    pub origin: CiConfigOrigin,
}

impl PayloadSource for WithCiConfig<'_> {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn tags(&self, stream: &str) -> Result<TagList, PayloadError> {
        self.inner.tags(stream)
    }

    fn release(&self, stream: &str, tag: &str) -> Result<ReleaseInfo, PayloadError> {
        self.inner.release(stream, tag)
    }

    fn changelog(&self, stream: &str, tag: &str, from: &str) -> Result<Changelog, PayloadError> {
        self.inner.changelog(stream, tag, from)
    }

    fn pr_diff(&self, pr: &PullRequest) -> Result<Option<String>, PayloadError> {
        self.inner.pr_diff(pr)
    }

    fn pr_presubmits(&self, pr: &PullRequest) -> Result<Option<Vec<String>>, PayloadError> {
        self.inner.pr_presubmits(pr)
    }

    fn job_runs(&self, stream: &str) -> Result<Option<Vec<JobRun>>, PayloadError> {
        self.inner.job_runs(stream)
    }

    fn ci_config_changes(&self, window: &CiWindow) -> Result<CiConfigAnswer, PayloadError> {
        self.origin.read(window)
    }

    fn sippy_jobs(&self, release: &str) -> Result<Option<Vec<SippyJob>>, PayloadError> {
        self.inner.sippy_jobs(release)
    }

    fn rpm_changelog(&self, tag: &str, variant: &str, from: &str) -> Result<Option<String>, PayloadError> {
        self.inner.rpm_changelog(tag, variant, from)
    }
}

/// Reads a diff named by a recorded entry under the first of `bases` that holds it.
fn diff_under(bases: &[&Path], rel: &str) -> Result<String, PayloadError> {
    let under = |base: &Path| rel.split('/').fold(base.to_path_buf(), |a, c| a.join(c));
    let p = bases.iter().map(|b| under(b)).find(|p| p.is_file()).unwrap_or_else(|| under(bases[0]));
    Ok(String::from_utf8_lossy(&read_file(&p)?).into_owned())
}

/// Parses a recorded list whose `diff` paths are read under `bases`.
fn parse_under(bytes: &[u8], origin: &str, bases: &[&Path]) -> Result<Vec<CiConfigChange>, PayloadError> {
    let resolve = |rel: &str| diff_under(bases, rel);
    let resolver: Option<ciconfig::DiffResolver> = if bases.is_empty() { None } else { Some(&resolve) };
    ciconfig::parse_recorded(bytes, origin, resolver)
}

/// Reads a recorded list from a file given on its own (`payload --ci-config FILE`):
/// its `diff` file paths are resolved beside the file, else in the nearest folder
/// above it that holds them (a recorded world keeps `openshift/ci-config-changes.json`
/// with paths relative to the world's root).
pub fn read_recorded_file(path: &Path) -> Result<Vec<CiConfigChange>, PayloadError> {
    let bytes = read_file(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let bases: Vec<&Path> = dir.ancestors().filter(|d| !d.as_os_str().is_empty()).collect();
    parse_under(&bytes, &path.display().to_string(), &bases)
}

/// The recorded list a folder of recorded responses keeps at one of its usual
/// places (`ci-config/changes.json`, `ci-config-changes.json`,
/// `openshift/ci-config-changes.json`), `diff` paths read under that root.
pub fn read_recorded_in(roots: &[PathBuf]) -> Result<CiConfigAnswer, PayloadError> {
    for root in roots {
        for rel in [
            &["ci-config", "changes.json"][..],
            &["ci-config-changes.json"][..],
            &["openshift", "ci-config-changes.json"][..],
        ] {
            let p = rel.iter().fold(root.clone(), |a, s| a.join(s));
            if let Some(b) = read_optional(&p)? {
                return Ok(CiConfigAnswer::Known(parse_under(&b, &p.display().to_string(), &[root.as_path()])?));
            }
        }
    }
    Ok(CiConfigAnswer::Unknown)
}

/// Reads the changes of a local checkout under `paths` between two times with
/// `git log -p`. `repo` names the repository in URLs (`openshift/release`).
pub fn from_checkout(
    checkout: &Path,
    paths: &[String],
    since: Epoch,
    until: Epoch,
    repo: &str,
) -> Result<Vec<CiConfigChange>, PayloadError> {
    let origin = checkout.display().to_string();
    let out = Command::new("git")
        .arg("-C")
        .arg(checkout)
        .args([
            "log",
            "--no-color",
            "--no-merges",
            "--first-parent",
            &format!("--since={}", time::rfc3339(since)),
            &format!("--until={}", time::rfc3339(until)),
            "--format=%x00commit %H%n%cI%n%s",
            "-p",
            "--",
        ])
        .args(paths)
        .output()
        .map_err(|e| PayloadError::invalid(&origin, format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(PayloadError::invalid(
            &origin,
            format!("git log failed: {}", String::from_utf8_lossy(&out.stderr).trim()),
        ));
    }
    Ok(ciconfig::parse_git_log(&String::from_utf8_lossy(&out.stdout), repo))
}
