//! Reading CI-configuration changes: a recorded list (a JSON file whose `diff`
//! paths are read beside it) or a local git checkout (`git log -p` over the
//! configuration paths, bounded by the analysis' window: the only process this
//! crate starts). The analysis asks for them through
//! [`PayloadSource::ci_config_changes`]; [`WithCiConfig`] answers from what the
//! caller named and everything else from the source it wraps.

use std::path::{Path, PathBuf};

use citriage_model::time::Epoch;

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

/// Reads the changes of a local checkout under `paths` between two times: one
/// `git log -p` through `citriage-git` (first parents, no merges). `repo` names the
/// repository in URLs (`openshift/release`).
pub fn from_checkout(
    checkout: &Path,
    paths: &[String],
    since: Epoch,
    until: Epoch,
    repo: &str,
) -> Result<Vec<CiConfigChange>, PayloadError> {
    let origin = checkout.display().to_string();
    let git = citriage_git::Git::open(checkout).map_err(|e| PayloadError::invalid(&origin, e.to_string()))?;
    let mut q = citriage_git::LogQuery::of("HEAD").with_patches().paths(paths);
    q.first_parent = true;
    q.no_merges = true;
    q.since = Some(since);
    q.until = Some(until);
    let commits = git.log(&q).map_err(|e| PayloadError::invalid(&origin, e.to_string()))?;
    Ok(ciconfig::from_commits(&commits, repo))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str], when: &str) {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .env("GIT_AUTHOR_DATE", when)
            .env("GIT_COMMITTER_DATE", when)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn a_checkout_s_changes_under_the_paths_in_the_window() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        git(dir, &["init", "-q", "-b", "main"], "2026-03-01T00:00:00Z");
        let cfg = dir.join("ci-operator/step-registry/ipi");
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::write(cfg.join("install.sh"), "openshift-install --old\n").unwrap();
        git(dir, &["add", "."], "2026-03-01T00:00:00Z");
        git(dir, &["commit", "-q", "-m", "Add the install step (#700)"], "2026-03-01T00:00:00Z");
        std::fs::write(cfg.join("install.sh"), "openshift-install --log-level-v2=debug\n").unwrap();
        std::fs::write(dir.join("README.md"), "outside the paths\n").unwrap();
        git(dir, &["add", "."], "2026-03-03T10:00:00Z");
        git(dir, &["commit", "-q", "-m", "Switch installer flag (#777)"], "2026-03-03T10:00:00Z");
        let since = citriage_model::time::parse_rfc3339("2026-03-02T00:00:00Z").unwrap();
        let until = citriage_model::time::parse_rfc3339("2026-03-04T00:00:00Z").unwrap();
        let paths = vec!["ci-operator".to_string()];
        let got = from_checkout(dir, &paths, since, until, "openshift/release").unwrap();
        assert_eq!(got.len(), 1, "only the change inside the window: {got:?}");
        let c = &got[0];
        assert_eq!((c.pr_number, c.title.as_str()), (Some(777), "Switch installer flag (#777)"));
        assert_eq!(c.url.as_deref(), Some("https://github.com/openshift/release/pull/777"));
        assert_eq!(c.date, "2026-03-03T10:00:00Z");
        assert_eq!(c.diff.files.len(), 1, "README.md is outside the paths");
        assert_eq!(c.diff.files[0].added[0].1, "openshift-install --log-level-v2=debug");
        let not_a_repo = tempfile::tempdir().unwrap();
        let err = from_checkout(not_a_repo.path(), &paths, since, until, "o/r").unwrap_err().to_string();
        assert!(err.contains(&not_a_repo.path().display().to_string()), "{err}");
    }
}
