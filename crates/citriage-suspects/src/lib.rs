//! The suspect engine: which changes of a window are linked to a failure, how
//! strongly, and how specifically — pure (no I/O), shared by the payload
//! analysis (PRs of the payloads since the last green one) and by regression
//! windows of CI jobs (the commits between the last pass and the first failure).
//!
//! - the **failure side** ([`failure::Failure`]): the lines that explain a
//!   failure, each cited ([`lines`]), the failing tests, the components it is
//!   about; its distinctive tokens, the files its stack names, its failing
//!   commands and subject words ([`tokens`]);
//! - the **change side** ([`links::Change`] and its diff, [`diff`]): title,
//!   what it owns, the product lines it adds and removes ([`paths`]: vendored,
//!   generated, documentation and metadata files are left out);
//! - the **window** ([`window`]): document frequencies of tokens, basenames and
//!   title words over the window's changes, so a match counts only when it is
//!   specific; words, symbols and file names too common to say anything are
//!   never specific ([`words`]);
//! - **links** ([`links`]) of kinds grouped in independent families, each
//!   quoting its evidence (the diff file:line and the failure line it matches);
//! - **ties** ([`rank`]): changes with the same evidence are one group, never
//!   ordered by input order;
//! - **bands** ([`band`]): a regression window's *window only*, *suspect* and
//!   *likely introducing change* (two independent kinds of link); the payload
//!   analysis maps its scores to its own bands and actions.

pub mod band;
pub mod diff;
pub mod failure;
pub mod formats;
pub mod lines;
pub mod links;
pub mod owners;
pub mod paths;
pub mod rank;
pub mod tokens;
pub mod window;
pub mod words;
