//! The git program and the one place it is started: a neutral environment (no
//! terminal prompt, no pager, no colour, the C locale so messages can be read, no
//! `GIT_DIR` or `-c` settings inherited from a calling git), stdout bounded by a
//! limit (the process is stopped beyond it), stderr kept to its first lines.

use crate::error::GitError;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Settings every run passes with `-c`: plain output whatever the user's
/// configuration says, paths written as they are, no signature checks, no
/// file-system monitor started.
const CONFIG: [&str; 10] = [
    "-c",
    "color.ui=never",
    "-c",
    "core.quotepath=off",
    "-c",
    "log.showSignature=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "diff.noprefix=false",
];

/// Variables a calling git (a hook, a test run from one) may have set that would
/// point the run at another repository or add settings.
const INHERITED: [&str; 10] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
];

/// Bytes of stderr kept for an error message.
const STDERR_KEPT: usize = 4096;

/// The git program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitProgram {
    path: PathBuf,
}

/// One finished run.
pub(crate) struct Ran {
    /// The exit code; `None` when a signal ended the process.
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Ran {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

/// What to run: arguments after `git -C DIR <settings>`, optional stdin, the
/// stdout limit, and the checkout's name for errors.
pub(crate) struct Run<'a> {
    pub dir: &'a Path,
    pub checkout: &'a str,
    pub args: &'a [&'a str],
    pub stdin: Option<&'a [u8]>,
    pub limit: usize,
}

impl GitProgram {
    /// `git` from `PATH`, checked by running `git --version`.
    pub fn locate() -> Result<GitProgram, GitError> {
        GitProgram::with_program("git")
    }

    /// A specific git binary, checked by running `--version`.
    pub fn with_program(program: impl Into<PathBuf>) -> Result<GitProgram, GitError> {
        let path = program.into();
        match Command::new(&path).arg("--version").stdin(Stdio::null()).output() {
            Ok(o) if o.status.success() => Ok(GitProgram { path }),
            Ok(o) => Err(GitError::Missing {
                detail: format!("{}: {}", path.display(), String::from_utf8_lossy(&o.stderr).trim()),
            }),
            Err(e) => Err(GitError::Missing { detail: format!("{}: {e}", path.display()) }),
        }
    }

    /// The program's path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs git; stdout is read up to `limit` bytes (beyond it the process is killed
    /// and the run fails), stderr up to its first few kilobytes.
    pub(crate) fn run(&self, r: &Run<'_>) -> Result<Ran, GitError> {
        let mut cmd = Command::new(&self.path);
        cmd.arg("-C").arg(r.dir).args(CONFIG).args(r.args);
        for v in INHERITED {
            cmd.env_remove(v);
        }
        cmd.env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("PAGER", "cat")
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .stdin(if r.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child =
            cmd.spawn().map_err(|e| GitError::Missing { detail: format!("{}: {e}", self.path.display()) })?;
        let feeder = match (r.stdin, child.stdin.take()) {
            (Some(bytes), Some(mut pipe)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || {
                    // A broken pipe only means git stopped reading; its exit says why.
                    let _ = pipe.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let mut err_pipe = child.stderr.take();
        let stderr_reader = std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(p) = err_pipe.as_mut() {
                let mut buf = [0u8; 8192];
                while let Ok(n) = p.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let room = STDERR_KEPT.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
            kept
        });
        let mut stdout = Vec::new();
        let mut too_large = false;
        if let Some(mut out) = child.stdout.take() {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match out.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) if stdout.len() + n > r.limit => {
                        too_large = true;
                        break;
                    }
                    Ok(n) => stdout.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        }
        if too_large {
            let _ = child.kill();
        }
        let status = child.wait().map_err(|e| GitError::Failed {
            checkout: r.checkout.to_string(),
            command: r.args.first().copied().unwrap_or("").to_string(),
            stderr: e.to_string(),
        })?;
        if let Some(f) = feeder {
            let _ = f.join();
        }
        let stderr = String::from_utf8_lossy(&stderr_reader.join().unwrap_or_default()).trim().to_string();
        if too_large {
            return Err(GitError::OutputTooLarge {
                checkout: r.checkout.to_string(),
                command: r.args.first().copied().unwrap_or("").to_string(),
                limit: r.limit,
            });
        }
        Ok(Ran { code: status.code(), stdout, stderr })
    }
}
