//! citriage-search: an in-memory trigram index for regex search over failure texts.
//!
//! [`IndexBuilder`] collects texts (identical texts stored once, LZ4-compressed in
//! blocks, dense ids in first-seen order) and builds a [`TextIndex`]: for every trigram
//! of the ASCII-lowercased texts,
//! the ascending ids of the texts containing it, delta + varint encoded in one buffer.
//! [`TextIndex::search`] plans a regex into a trigram [`Query`] ([`plan_pattern`]),
//! evaluates it over the posting lists, verifies the candidates with the regex and
//! visits the matches in ascending id order, within a [`SearchBudget`].
//!
//! The plan never excludes a text that has a match: correctness over selectivity. A
//! plan of [`Query::All`] means a scan of every text (reported as `used_index: false`).
//!
//! ```
//! use citriage_search::{IndexBuilder, SearchBudget};
//! use std::ops::ControlFlow;
//!
//! let mut b = IndexBuilder::new();
//! let a = b.add("dial tcp 10.0.0.1:6443: i/o timeout");
//! b.add("pods \"web-1\" not found");
//! assert_eq!(b.add("dial tcp 10.0.0.1:6443: i/o timeout"), a);
//! let ix = b.finish();
//!
//! let re = regex::Regex::new(r"(?i)I/O timeout").unwrap();
//! let mut found = Vec::new();
//! let stats = ix.search(&re, SearchBudget::max_candidates(10_000), |id, text, m| {
//!     found.push((id, text[m.range()].to_string()));
//!     ControlFlow::Continue(())
//! });
//! assert_eq!(found, vec![(a, "i/o timeout".to_string())]);
//! assert!(stats.used_index && stats.candidates == 1 && !stats.stopped_early);
//! ```
//!
//! Pure: no file system, network or clock. The only time read is the caller's optional
//! deadline, compared with `Instant::now()` during a search.

mod builder;
mod index;
mod plan;
mod query;
mod search;
mod texts;

pub use builder::IndexBuilder;
pub use index::{Postings, TextIndex};
pub use plan::{plan_hir, plan_pattern, MAX_PLAN_TRIGRAMS};
pub use query::{trigrams_of, Query, Trigram};
pub use search::{SearchBudget, SearchStats};
pub use texts::{TextId, TextReader};
