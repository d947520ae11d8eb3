//! The one git runner of citriage: every question to a local checkout — a commit
//! and its parents, a range's commits with the files they changed and the pull
//! requests their subjects name, a file at a revision, the history of a string
//! (`git log -S`), ancestry, tracked files and `git grep` — goes through [`Git`],
//! and this crate is the only place that starts the `git` program.
//!
//! - One process per question: a range's commits with their files are one
//!   `git log`, a set of files at a revision one `git cat-file --batch`.
//! - Bounded: a run's stdout is capped ([`DEFAULT_OUTPUT_LIMIT`], or
//!   [`Git::with_output_limit`]); beyond it git is stopped and the error says so.
//! - Never a guess: a revision the checkout does not have is
//!   [`GitError::UnknownRevision`] (or [`GitError::ShallowClone`] when the clone's
//!   history is cut off and cannot tell), an ambiguous short id is
//!   [`GitError::AmbiguousRevision`]; errors name the checkout and the revision.
//! - Histories are written too: a bare repository from one `git fast-import`
//!   stream ([`ImportStream`], [`Git::init_bare`], [`Git::fast_import`]), with the
//!   authors and dates given, so the same stream gives the same commit ids.
//! - Hostile text stays data: revisions are checked (no option, no range, no space)
//!   and paths come after `--`; commit messages and paths are read with NUL
//!   separators, which no message or path can hold.

mod error;
mod log;
mod program;
mod repo;
mod revert;
mod write;

pub use error::GitError;
pub use log::{pr_of_subject, Commit, Detail, LogQuery, PrMerge, PrRef};
pub use program::GitProgram;
pub use repo::{split_lines, Git, GrepHit, PickaxeCommit, PrCommit, DEFAULT_OUTPUT_LIMIT};
pub use revert::RevertCheck;
pub use write::{ImportStream, NewCommit, Signature};
