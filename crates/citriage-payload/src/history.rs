//! The payload chain and its history table: walking back from the target through
//! the stream's tags to the last payload where **every blocking job succeeded**
//! (stricter than `Accepted`: a force-accepted payload with failed blocking jobs
//! does not stop the walk), the last accepted payload, and the `as_of` view of a
//! release (job results that changed after the cutoff are reported as pending).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::PayloadError;
use crate::release::{JobCounts, JobState, Phase, ReleaseInfo, TagList};
use crate::source::PayloadSource;
use citriage_model::time::{self, Epoch};

/// One row of the payload history table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRow {
    pub tag: String,
    pub phase: Phase,
    /// RFC 3339 creation time from the tag name.
    pub created: Option<String>,
    pub blocking: JobCounts,
    /// Every blocking job succeeded.
    pub all_blocking_green: bool,
    /// Accepted although some blocking job did not succeed.
    pub force_accepted: bool,
    /// Why the row is incomplete (garbage-collected tag, unreadable info...).
    pub note: Option<String>,
}

/// The chain from the target (first) back to the baseline (last, when found).
#[derive(Debug, Clone)]
pub struct Chain {
    pub rows: Vec<HistoryRow>,
    /// Release info of each row that could be read, by tag.
    pub infos: BTreeMap<String, ReleaseInfo>,
    /// The last all-blocking-green payload, when reached.
    pub baseline: Option<String>,
    /// The walk stopped at `max_chain` (or the end of the tag list) without a baseline.
    pub truncated: bool,
}

impl Chain {
    /// Tags of the chain, newest first.
    pub fn tags(&self) -> Vec<String> {
        self.rows.iter().map(|r| r.tag.clone()).collect()
    }
}

/// Applies an `as_of` cutoff to a release: job results whose transition time is
/// after the cutoff become `Pending` (their outcome was not known yet), and the
/// phase falls back to `Ready` when that changed anything. Returns whether it did.
pub fn apply_as_of(info: &mut ReleaseInfo, as_of: Option<Epoch>) -> bool {
    let Some(cut) = as_of else { return false };
    let mut changed = false;
    for map in [&mut info.results.blocking, &mut info.results.informing, &mut info.results.async_jobs] {
        for jr in map.values_mut() {
            if jr.state != JobState::Pending && jr.transition_epoch().is_some_and(|t| t > cut) {
                jr.state = JobState::Pending;
                changed = true;
            }
        }
    }
    if changed && matches!(info.phase, Phase::Accepted | Phase::Rejected) {
        info.phase = Phase::Ready;
    }
    changed
}

/// Drops tags created after `as_of`.
pub fn tags_as_of(mut tags: TagList, as_of: Option<Epoch>) -> TagList {
    if let Some(cut) = as_of {
        tags.tags.retain(|t| time::tag_timestamp(&t.name).is_none_or(|ts| ts <= cut));
    }
    tags
}

/// Walks back from `target` (which must be in `tags`) at most `max_chain` payloads.
pub fn walk_chain(
    source: &dyn PayloadSource,
    stream: &str,
    tags: &TagList,
    target: &str,
    max_chain: usize,
    as_of: Option<Epoch>,
) -> Result<Chain, PayloadError> {
    let start = tags.position(target).ok_or_else(|| PayloadError::NotFound {
        origin: format!("{} tags of {stream}", source.describe()),
        detail: format!(": no tag {target}"),
    })?;
    let mut chain = Chain { rows: Vec::new(), infos: BTreeMap::new(), baseline: None, truncated: false };
    for (i, entry) in tags.tags.iter().enumerate().skip(start) {
        if chain.rows.len() >= max_chain.max(1) {
            chain.truncated = true;
            break;
        }
        let created = time::tag_timestamp(&entry.name).map(time::rfc3339);
        match source.release(stream, &entry.name) {
            Ok(mut info) => {
                let cut = apply_as_of(&mut info, as_of);
                let counts = info.blocking_counts();
                let green = info.all_blocking_succeeded();
                let phase =
                    if info.phase == Phase::Other(String::new()) { entry.phase.clone() } else { info.phase.clone() };
                chain.rows.push(HistoryRow {
                    tag: entry.name.clone(),
                    force_accepted: phase == Phase::Accepted && !green && counts.total > 0,
                    phase,
                    created,
                    blocking: counts,
                    all_blocking_green: green,
                    note: cut.then(|| "job results after the as-of time shown as pending".to_string()),
                });
                chain.infos.insert(entry.name.clone(), info);
                // The target itself is never its own baseline.
                if green && i > start {
                    chain.baseline = Some(entry.name.clone());
                    break;
                }
            }
            Err(e) if i == start => return Err(e),
            Err(e) => chain.rows.push(HistoryRow {
                tag: entry.name.clone(),
                phase: entry.phase.clone(),
                created,
                blocking: JobCounts::default(),
                all_blocking_green: false,
                force_accepted: false,
                note: Some(if e.is_not_found() {
                    "release info not available (garbage-collected or not recorded)".to_string()
                } else {
                    format!("release info unreadable: {e}")
                }),
            }),
        }
    }
    if chain.baseline.is_none() && !chain.truncated {
        chain.truncated = true;
    }
    Ok(chain)
}

/// The newest Accepted tag older than the target.
pub fn last_accepted(tags: &TagList, target: &str) -> Option<String> {
    let start = tags.position(target)?;
    tags.tags.iter().skip(start + 1).find(|t| t.phase == Phase::Accepted).map(|t| t.name.clone())
}
