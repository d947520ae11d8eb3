//! GitHub state for citriage: a REST client (pull requests, issues, issue timelines,
//! search, commits) with ETag caching through a pluggable store, rate-limit handling
//! and an offline mode; typed PR/issue states that keep MERGED and CLOSED-unmerged
//! apart; a reference extractor for Markdown reports; and the runbook's Phase 5 sweep
//! table. The token is never printed, logged, or put in an error.

pub mod client;
pub mod mentions;
pub mod pulls;
pub mod refs;
pub mod state;
pub mod sweep;

pub use client::{
    next_link, percent_encode, CachedResponse, ClientConfig, ClientStats, CommitQuery, Fetched, GithubClient,
    GithubError, HttpCache, MemoryCache, NoCache, Shape, Token, DEFAULT_API_BASE,
};
pub use mentions::{
    search_many, search_mentions, summarize, AnsweredQuery, Mention, Mentions, RefSummary, TermKind, Terms,
};
pub use pulls::{IssueComment, PullFiles, RepoFacts};
pub use refs::{extract_refs, fenced_lines, unique_refs, FoundRef, RefContext, RefTarget, Resolution};
pub use state::{
    replay_timeline, Answered, BlockingPolicy, CommitInfo, CrossRef, IssueRef, IssueState, IssueStatus, PrState,
    PrStatus, ReadInfo, RefResolver, RefState, ReplayedState, RepoRef, SearchItem, SearchResult, StaticResolver,
    TimelineAnswer, TimelineEvent, GITHUB_EVIDENCE_KIND,
};
pub use sweep::{
    mark_counts, render_ambiguous, render_sweep_json, render_sweep_markdown, row_for, sweep, sweep_with_evidence, Mark,
    SweepOptions, SweepRow,
};
