//! Why a question to a checkout found no answer. Every error names the checkout and,
//! where there is one, the revision or path asked about.

/// A failed git question.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// The git program cannot be run.
    #[error("git is not available ({detail}); install git or put it on PATH to search history")]
    Missing { detail: String },
    /// The folder is not inside a git repository (or does not exist).
    #[error("{checkout}: not a git repository ({detail})")]
    NotARepository { checkout: String, detail: String },
    /// No commit (or object) of that name in the repository, whose history is complete.
    #[error("{checkout}: unknown revision {revision:?}")]
    UnknownRevision { checkout: String, revision: String },
    /// Not found in a shallow clone: its history is cut off, so the revision may
    /// exist beyond it (`git fetch --unshallow` completes it).
    #[error("{checkout}: revision {revision:?} is not in this shallow clone (its history is cut off; `git fetch --unshallow` completes it)")]
    ShallowClone { checkout: String, revision: String },
    /// A short commit id that names several objects.
    #[error("{checkout}: revision {revision:?} is ambiguous (several objects start with it; give more characters)")]
    AmbiguousRevision { checkout: String, revision: String },
    /// An argument refused before git runs (an option where a revision belongs, a
    /// line break in a path, ...).
    #[error("{checkout}: {what} {value:?}: {why}")]
    BadArgument { checkout: String, what: &'static str, value: String, why: String },
    /// git wrote more than the checkout's output limit; it was stopped.
    #[error("{checkout}: git {command} wrote more than {limit} bytes; stopped (narrow the range or raise the limit)")]
    OutputTooLarge { checkout: String, command: String, limit: usize },
    /// git ran and failed.
    #[error("{checkout}: git {command} failed: {stderr}")]
    Failed { checkout: String, command: String, stderr: String },
    /// git's answer was not in the shape asked for.
    #[error("{checkout}: git {command}: unexpected output: {detail}")]
    Unexpected { checkout: String, command: String, detail: String },
}
