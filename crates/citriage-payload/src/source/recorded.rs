//! [`RecordedDir`]: recorded release-controller responses in a directory, with
//! the extras beside them (PR diffs and presubmits, job runs, Sippy, CI-configuration
//! changes); see the module docs of [`crate::source`] for the layout.

use std::path::{Path, PathBuf};

use super::api::{Changelog, CiConfigAnswer, CiWindow, PayloadSource};
use super::ci_config;
use crate::error::{read_optional, PayloadError};
use crate::jobhistory::{self, JobRun};
use crate::release::{self, PullRequest, ReleaseInfo, TagList};

/// Recorded API responses in a directory (see the module docs for the layout).
pub struct RecordedDir {
    rc_root: PathBuf,
    extra_roots: Vec<PathBuf>,
}

impl RecordedDir {
    /// Opens a recorded directory. When `<root>/release-controller/api` exists the
    /// responses are read from there and `<root>` is searched for the extras.
    pub fn open(root: impl Into<PathBuf>) -> RecordedDir {
        let root: PathBuf = root.into();
        let rc = root.join("release-controller");
        if rc.join("api").is_dir() {
            RecordedDir { rc_root: rc.clone(), extra_roots: vec![root, rc] }
        } else {
            RecordedDir { rc_root: root.clone(), extra_roots: vec![root] }
        }
    }

    fn stream_dir(&self, stream: &str) -> PathBuf {
        self.rc_root.join("api").join("v1").join("releasestream").join(stream)
    }

    fn read_first(&self, candidates: &[PathBuf]) -> Result<Option<(Vec<u8>, String)>, PayloadError> {
        for c in candidates {
            if let Some(b) = read_optional(c)? {
                return Ok(Some((b, c.display().to_string())));
            }
        }
        Ok(None)
    }

    fn extra(&self, rel: &[&str]) -> Vec<PathBuf> {
        self.extra_roots.iter().map(|r| rel.iter().fold(r.clone(), |acc, s| acc.join(s))).collect()
    }
}

fn with_json(p: PathBuf) -> [PathBuf; 2] {
    let mut j = p.clone().into_os_string();
    j.push(".json");
    [PathBuf::from(j), p]
}

/// Checks that a path component from the data is safe to join.
fn safe_component(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains('/') && !s.contains('\\') && !s.contains('\0')
}

impl PayloadSource for RecordedDir {
    fn describe(&self) -> String {
        format!("recorded responses in {}", self.rc_root.display())
    }

    fn tags(&self, stream: &str) -> Result<TagList, PayloadError> {
        if !safe_component(stream) {
            return Err(PayloadError::invalid(stream, "not a valid stream name"));
        }
        let p = self.stream_dir(stream).join("tags");
        match self.read_first(&with_json(p.clone()))? {
            Some((b, origin)) => release::parse_tag_list(&b, &origin),
            None => Err(PayloadError::not_found(format!("{}.json", p.display()))),
        }
    }

    fn release(&self, stream: &str, tag: &str) -> Result<ReleaseInfo, PayloadError> {
        if !safe_component(stream) || !safe_component(tag) {
            return Err(PayloadError::invalid(tag, "not a valid stream or tag name"));
        }
        let p = self.stream_dir(stream).join("release").join(tag);
        match self.read_first(&with_json(p.clone()))? {
            Some((b, origin)) => release::parse_release_info(&b, &origin),
            None => Err(PayloadError::not_found(format!("{}.json", p.display()))),
        }
    }

    fn changelog(&self, stream: &str, tag: &str, from: &str) -> Result<Changelog, PayloadError> {
        if !safe_component(stream) || !safe_component(tag) || !safe_component(from) {
            return Err(PayloadError::invalid(tag, "not a valid stream or tag name"));
        }
        let p = self.stream_dir(stream).join("release").join(format!("{tag}?from={from}"));
        match self.read_first(&with_json(p.clone()))? {
            Some((b, origin)) => {
                let (state, nis) = release::parse_changelog_response(&b, &origin)?;
                Ok(Changelog { state, node_image_streams: nis, origin })
            }
            None => Err(PayloadError::not_found(format!("{}.json", p.display()))),
        }
    }

    fn pr_diff(&self, pr: &PullRequest) -> Result<Option<String>, PayloadError> {
        if !safe_component(&pr.org) || !safe_component(&pr.repo) {
            return Ok(None);
        }
        let n = pr.number.to_string();
        let mut cands = Vec::new();
        for rel in [
            vec!["github", &pr.org, &pr.repo, "pull", &format!("{n}.diff")],
            vec!["github", &pr.org, &pr.repo, "pulls", &format!("{n}.diff")],
            vec!["github", &pr.org, &pr.repo, "pull", &n, "code.diff"],
        ] {
            let rel: Vec<&str> = rel.iter().map(|s| s.as_ref()).collect();
            cands.extend(self.extra(&rel));
        }
        Ok(self.read_first(&cands)?.map(|(b, _)| String::from_utf8_lossy(&b).into_owned()))
    }

    fn pr_presubmits(&self, pr: &PullRequest) -> Result<Option<Vec<String>>, PayloadError> {
        if !safe_component(&pr.org) || !safe_component(&pr.repo) {
            return Ok(None);
        }
        let name = format!("{}.jobs.json", pr.number);
        let cands = self.extra(&["github", &pr.org, &pr.repo, "pull", &name]);
        match self.read_first(&cands)? {
            Some((b, origin)) => Ok(Some(parse_presubmits(&b, &origin)?)),
            None => Ok(None),
        }
    }

    fn job_runs(&self, _stream: &str) -> Result<Option<Vec<JobRun>>, PayloadError> {
        let mut files: Vec<PathBuf> = Vec::new();
        for root in &self.extra_roots {
            let single = root.join("job-runs.json");
            if single.is_file() {
                files.push(single);
            }
            if let Ok(rd) = std::fs::read_dir(root.join("job-runs")) {
                let mut v: Vec<PathBuf> =
                    rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
                v.sort();
                files.extend(v);
            }
        }
        files.dedup();
        if files.is_empty() {
            return Ok(None);
        }
        let mut runs = Vec::new();
        for f in files {
            let b = crate::error::read_file(&f)?;
            runs.extend(jobhistory::parse_job_runs(&b, &f.display().to_string())?);
        }
        Ok(Some(runs))
    }

    fn sippy_jobs(&self, release: &str) -> Result<Option<Vec<jobhistory::SippyJob>>, PayloadError> {
        let mut cands = self.extra(&["sippy", "api", &format!("jobs?release={release}.json")]);
        cands.extend(self.extra(&["sippy", "jobs.json"]));
        match self.read_first(&cands)? {
            Some((b, origin)) => Ok(Some(jobhistory::parse_sippy_jobs(&b, &origin)?)),
            None => Ok(None),
        }
    }

    fn ci_config_changes(&self, _window: &CiWindow) -> Result<CiConfigAnswer, PayloadError> {
        ci_config::read_recorded_in(&self.extra_roots)
    }
}

/// Parses presubmit job names: a JSON array of names, or `{"statusCheckRollup": [{"name"}]}`.
pub fn parse_presubmits(bytes: &[u8], origin: &str) -> Result<Vec<String>, PayloadError> {
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| PayloadError::invalid(origin, format!("malformed JSON: {e}")))?;
    let arr = match &v {
        serde_json::Value::Array(a) => a.clone(),
        serde_json::Value::Object(o) => {
            o.get("statusCheckRollup").and_then(|x| x.as_array()).cloned().unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let mut names: Vec<String> = arr
        .iter()
        .filter_map(|x| {
            x.as_str().map(str::to_string).or_else(|| x.get("name").and_then(|n| n.as_str()).map(str::to_string))
        })
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// Reads a file relative to a base directory, refusing paths that leave it.
pub(crate) fn read_under(base: &Path, rel: &str) -> Result<Option<Vec<u8>>, PayloadError> {
    if rel.split('/').any(|s| s == "..") || rel.starts_with('/') {
        return Err(PayloadError::invalid(rel, "path leaves the snapshot directory"));
    }
    read_optional(&rel.split('/').filter(|s| !s.is_empty()).fold(base.to_path_buf(), |acc, s| acc.join(s)))
}
