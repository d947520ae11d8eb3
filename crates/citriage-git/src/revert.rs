//! Would reverting a commit apply cleanly on HEAD? Tried in a scratch worktree of the
//! checkout (detached at HEAD, removed afterwards), so the checkout itself is left
//! as it was.

use crate::error::GitError;
use crate::program::Run;
use crate::repo::Git;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// What `git revert --no-commit` did on HEAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertCheck {
    /// HEAD's commit, where the revert was tried.
    pub base: String,
    /// The full id of the reverted commit.
    pub sha: String,
    /// True when the revert applied without conflicts.
    pub clean: bool,
    /// The conflicting paths, sorted.
    pub conflicts: Vec<String>,
    /// Why git refused without conflicts (an empty revert, ...), when it did.
    pub refused: Option<String>,
}

/// Removes the scratch worktree however the check ends.
struct Scratch<'a> {
    git: &'a Git,
    path: PathBuf,
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        let p = self.path.display().to_string();
        let _ = self.git.program().run(&Run {
            dir: self.git.dir(),
            checkout: "",
            args: &["worktree", "remove", "--force", p.as_str()],
            stdin: None,
            limit: 1 << 20,
        });
        let _ = std::fs::remove_dir_all(&self.path);
        let _ = self.git.program().run(&Run {
            dir: self.git.dir(),
            checkout: "",
            args: &["worktree", "prune"],
            stdin: None,
            limit: 1 << 20,
        });
    }
}

impl Git {
    /// Tries `git revert --no-commit` of `rev` (`-m 1` for a merge) on HEAD in a
    /// scratch worktree and reports the conflicting paths.
    pub fn revert_check(&self, rev: &str) -> Result<RevertCheck, GitError> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let commit = self.commit(rev)?;
        let base = self.rev_parse("HEAD")?;
        let path = std::env::temp_dir().join(format!(
            "citriage-revert-check-{}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed),
            &commit.sha[..12]
        ));
        let _ = std::fs::remove_dir_all(&path);
        let shown = path.display().to_string();
        let name = self.dir().display().to_string();
        let add = self.program().run(&Run {
            dir: self.dir(),
            checkout: &name,
            args: &["worktree", "add", "--detach", "--quiet", shown.as_str(), base.as_str()],
            stdin: None,
            limit: 1 << 20,
        })?;
        if !add.ok() {
            return Err(GitError::Failed { checkout: name, command: "worktree add".into(), stderr: add.stderr });
        }
        let scratch = Scratch { git: self, path };
        let mut args = vec!["-c", "user.name=citriage", "-c", "user.email=citriage@localhost", "revert", "--no-commit"];
        if commit.is_merge() {
            args.extend(["-m", "1"]);
        }
        args.push(commit.sha.as_str());
        let in_scratch = |args: &[&str]| {
            self.program().run(&Run { dir: &scratch.path, checkout: &name, args, stdin: None, limit: 64 << 20 })
        };
        let reverted = in_scratch(&args)?;
        let unmerged = in_scratch(&["diff", "--name-only", "-z", "--diff-filter=U"])?;
        let mut conflicts: Vec<String> = String::from_utf8_lossy(&unmerged.stdout)
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        conflicts.sort();
        let clean = reverted.ok();
        let refused = (!clean && conflicts.is_empty()).then(|| reverted.stderr.clone());
        drop(scratch);
        Ok(RevertCheck { base, sha: commit.sha, clean, conflicts, refused })
    }
}
