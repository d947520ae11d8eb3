//! citriage-search: an in-memory trigram index for regex search over failure texts.
//!
//! [`IndexBuilder`] collects texts (identical texts stored once, dense ids in first-seen
//! order) and builds a [`TextIndex`]: for every trigram of the ASCII-lowercased texts,
//! the ascending ids of the texts containing it, delta + varint encoded in one buffer.
//! [`TextIndex::search`] plans a regex into a trigram [`Query`] ([`plan_pattern`]),
//! evaluates it over the posting lists, verifies the candidates with the regex and
//! visits the matches in ascending id order, within a [`SearchBudget`].
//!
//! The plan never excludes a text that has a match: correctness over selectivity. A
//! plan of [`Query::All`] means a scan of every text (reported as `used_index: false`).
//!
//! Pure: no file system, network or clock. The only time read is the caller's optional
//! deadline, compared with `Instant::now()` during a search.

mod builder;
mod index;
mod plan;
mod query;
mod search;

pub use builder::IndexBuilder;
pub use index::{Postings, TextId, TextIndex};
pub use plan::{plan_hir, plan_pattern, MAX_PLAN_TRIGRAMS};
pub use query::{trigrams_of, Query, Trigram};
pub use search::{SearchBudget, SearchStats};
