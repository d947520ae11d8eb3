//! What `citriage pr` asks GitHub about a pull request, beyond its state: the files its
//! diff changes, whether the repository is a fork (whose pull requests Prow does not
//! test), and the PR's conversation comments, to find and update citriage's own
//! comment by a hidden marker instead of adding another.

use crate::client::{GithubClient, GithubError};
use crate::state::{IssueRef, RepoRef};
use serde_json::Value;

/// The most changed files read of one pull request (GitHub lists at most 3000).
pub const MAX_FILES: usize = 3000;

/// The files a pull request changes, as GitHub lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullFiles {
    /// Repository paths, sorted (renames give their new path).
    pub files: Vec<String>,
    /// The API URL read.
    pub url: String,
}

/// A repository as GitHub describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoFacts {
    pub full_name: String,
    /// The repository it was forked from, when it is a fork.
    pub fork_of: Option<String>,
}

/// A comment of a pull request's conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueComment {
    pub id: u64,
    pub body: String,
    pub author: String,
}

fn is_404(e: &GithubError) -> bool {
    matches!(e, GithubError::Status { status: 404, .. })
}

impl GithubClient {
    /// `GET /repos/{o}/{r}/pulls/{n}/files` (every page): `None` when GitHub answers
    /// 404. Offline without a cached answer is `GithubError::NotCached`.
    pub fn pull_files(&self, r: &IssueRef) -> Result<Option<PullFiles>, GithubError> {
        let path = format!("/repos/{}/{}/pulls/{}/files?per_page=100", r.repo.owner, r.repo.name, r.number);
        let url = self.url_for(&path)?;
        let items = match self.fetch_pages(&path, MAX_FILES, |v| v.as_array().cloned().unwrap_or_default()) {
            Ok((items, _, _)) => items,
            Err(e) if is_404(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut files: Vec<String> = items
            .iter()
            .filter_map(|f| f.get("filename").and_then(Value::as_str))
            .filter(|f| !f.is_empty() && f.len() <= 4096 && !f.contains('\0'))
            .map(str::to_string)
            .collect();
        files.sort();
        files.dedup();
        Ok(Some(PullFiles { files, url }))
    }

    /// `GET /repos/{o}/{r}`: `None` when GitHub answers 404.
    pub fn repository(&self, repo: &RepoRef) -> Result<Option<RepoFacts>, GithubError> {
        let f = self.fetch(&format!("/repos/{}/{}", repo.owner, repo.name))?;
        if f.status == 404 {
            return Ok(None);
        }
        let v: Value = serde_json::from_slice(&f.body)
            .map_err(|e| GithubError::Decode { url: f.url.clone(), detail: e.to_string() })?;
        let full_name = v["full_name"].as_str().unwrap_or_default().to_string();
        let fork_of = if v["fork"].as_bool() == Some(true) {
            Some(v["parent"]["full_name"].as_str().unwrap_or("its parent").to_string())
        } else {
            None
        };
        Ok(Some(RepoFacts { full_name, fork_of }))
    }

    /// `GET /repos/{o}/{r}/issues/{n}/comments` (every page, at most `max`).
    pub fn issue_comments(&self, r: &IssueRef, max: usize) -> Result<Vec<IssueComment>, GithubError> {
        let path = format!("/repos/{}/{}/issues/{}/comments?per_page=100", r.repo.owner, r.repo.name, r.number);
        let (items, _, _) = self.fetch_pages(&path, max, |v| v.as_array().cloned().unwrap_or_default())?;
        Ok(items
            .iter()
            .filter_map(|c| {
                Some(IssueComment {
                    id: c["id"].as_u64()?,
                    body: c["body"].as_str().unwrap_or_default().to_string(),
                    author: c["user"]["login"].as_str().unwrap_or_default().to_string(),
                })
            })
            .collect())
    }
}
