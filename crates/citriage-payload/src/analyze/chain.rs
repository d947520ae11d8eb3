//! Stage 1: the stream's tags, the chain from the target back to the last
//! payload where every blocking job succeeded, and the changelogs of each hop
//! (the target's new PRs, and the cumulative PRs since the baseline).

use std::collections::BTreeMap;

use citriage_model::time;

use super::options::Target;
use crate::error::PayloadError;
use crate::history::{self, Chain};
use crate::release::{ChangeLogJson, ChangeLogState, NodeImageStream, PullRequest, ReleaseInfo, TagList};
use crate::result::PrSet;
use crate::source::PayloadSource;

/// The chain of the target and what is known of the stream around it.
pub(crate) struct ChainView {
    /// The stream's tags as of the cutoff, newest first.
    pub all_tags: TagList,
    pub chain: Chain,
    /// The target's release info.
    pub target: ReleaseInfo,
    /// The chain's tags, target first.
    pub tags: Vec<String>,
    /// The target's position in `all_tags`.
    pub position: usize,
    /// The payload just before the target in the stream.
    pub predecessor: Option<String>,
    pub last_accepted: Option<String>,
    pub hours_since_baseline: Option<f64>,
}

/// Walks the chain back from the target.
pub(crate) fn walk(
    source: &dyn PayloadSource,
    target: &Target,
    max_chain: usize,
    gaps: &mut Vec<String>,
) -> Result<ChainView, PayloadError> {
    let all_tags: TagList = history::tags_as_of(source.tags(&target.stream)?, target.as_of);
    let chain = history::walk_chain(source, &target.stream, &all_tags, &target.tag, max_chain, target.as_of)?;
    let target_info =
        chain.infos.get(&target.tag).cloned().ok_or_else(|| PayloadError::not_found(target.tag.clone()))?;
    let hours_since_baseline = chain.baseline.as_deref().and_then(time::tag_timestamp).and_then(|b| {
        let reference = target.as_of.or(target.created)?;
        Some(((reference - b) as f64 / 360.0).round() / 10.0)
    });
    if chain.truncated {
        gaps.push(format!(
            "no payload with every blocking job green within {} payloads: the chain is incomplete",
            chain.rows.len()
        ));
    }
    let position = all_tags.position(&target.tag).unwrap_or(0);
    Ok(ChainView {
        predecessor: all_tags.tags.get(position + 1).map(|t| t.name.clone()),
        last_accepted: history::last_accepted(&all_tags, &target.tag),
        tags: chain.tags(),
        position,
        target: target_info,
        hours_since_baseline,
        all_tags,
        chain,
    })
}

/// The PRs and RHCOS node images one hop of the chain brought, from the payload before it.
pub(crate) struct Hop {
    pub prs: Vec<PullRequest>,
    pub node_images: Vec<NodeImageStream>,
    pub from: String,
}

/// The changelogs of the chain.
pub(crate) struct Changelogs {
    /// Each payload of the chain (baseline aside) → what it brought.
    pub hops: BTreeMap<String, Hop>,
    /// The target's PRs from the previous payload.
    pub new_prs: PrSet,
    /// The PRs since the baseline.
    pub cumulative_prs: PrSet,
}

/// A changelog as read: the JSON, the node images, where it came from; or why there is none.
struct ChangelogRead {
    json: Option<ChangeLogJson>,
    node_images: Vec<NodeImageStream>,
    how: String,
    missing: Option<String>,
}

/// Reads the changelog of every hop, then the target's cumulative one.
pub(crate) fn changelogs(
    source: &dyn PayloadSource,
    target: &Target,
    view: &ChainView,
    gaps: &mut Vec<String>,
) -> Changelogs {
    let mut hops: BTreeMap<String, Hop> = BTreeMap::new();
    let mut notes: BTreeMap<String, String> = BTreeMap::new();
    for (i, tag) in view.tags.iter().enumerate() {
        let from = view.tags.get(i + 1).cloned().or_else(|| if i == 0 { view.predecessor.clone() } else { None });
        let Some(from) = from else { continue };
        if Some(tag) == view.chain.baseline.as_ref() {
            continue;
        }
        let read = changelog_between(source, target, &view.chain.infos, tag, &from, gaps);
        match read.json {
            Some(j) => {
                hops.insert(tag.clone(), Hop { prs: j.pull_requests(), node_images: read.node_images, from });
            }
            None => {
                let note = read.missing.unwrap_or_default();
                notes.insert(tag.clone(), note.clone());
                gaps.push(format!("no changelog for {tag} from {from}: {note}"));
            }
        }
    }
    let new_prs = PrSet {
        from: view.predecessor.clone(),
        prs: hops.get(&target.tag).map(|h| h.prs.clone()).unwrap_or_default(),
        how: if hops.contains_key(&target.tag) {
            "changelog from the previous payload".into()
        } else {
            "unavailable".into()
        },
        note: notes.get(&target.tag).cloned(),
    };
    let cumulative_prs = cumulative(source, target, view, &hops, &new_prs, gaps);
    Changelogs { hops, new_prs, cumulative_prs }
}

/// The PRs since the baseline: its own changelog, else the union of the hops.
fn cumulative(
    source: &dyn PayloadSource,
    target: &Target,
    view: &ChainView,
    hops: &BTreeMap<String, Hop>,
    new_prs: &PrSet,
    gaps: &mut Vec<String>,
) -> PrSet {
    let Some(baseline) = &view.chain.baseline else {
        return PrSet { from: None, prs: Vec::new(), how: "no all-green payload in the chain".into(), note: None };
    };
    if view.tags.len() <= 2 {
        return PrSet {
            from: Some(baseline.clone()),
            prs: new_prs.prs.clone(),
            how: new_prs.how.clone(),
            note: new_prs.note.clone(),
        };
    }
    let read = changelog_between(source, target, &view.chain.infos, &target.tag, baseline, gaps);
    if let Some(j) = read.json {
        return PrSet { from: Some(baseline.clone()), prs: j.pull_requests(), how: read.how, note: None };
    }
    let mut union: BTreeMap<String, PullRequest> = BTreeMap::new();
    for hop in hops.values() {
        for p in &hop.prs {
            union.entry(p.url.clone()).or_insert_with(|| p.clone());
        }
    }
    let mut prs: Vec<PullRequest> = union.into_values().collect();
    prs.sort();
    let missing: Vec<&str> = view
        .tags
        .iter()
        .filter(|t| Some(*t) != view.chain.baseline.as_ref() && !hops.contains_key(*t))
        .map(String::as_str)
        .collect();
    PrSet {
        from: Some(baseline.clone()),
        prs,
        how: "union of the changelogs of each hop of the chain".into(),
        note: (!missing.is_empty()).then(|| format!("no changelog for {}", missing.join(", "))),
    }
}

/// Reads the changelog of `tag` from `from`, falling back to the release info's
/// own changelog when it declares that `from`.
fn changelog_between(
    source: &dyn PayloadSource,
    target: &Target,
    infos: &BTreeMap<String, ReleaseInfo>,
    tag: &str,
    from: &str,
    gaps: &mut Vec<String>,
) -> ChangelogRead {
    match source.changelog(&target.stream, tag, from) {
        Ok(c) => match c.state {
            ChangeLogState::Ready(j) => ChangelogRead {
                json: Some(*j),
                node_images: c.node_image_streams,
                how: format!("changelog of {tag} from {from} ({})", c.origin),
                missing: None,
            },
            ChangeLogState::Loading(m) => {
                gaps.push(format!("changelog of {tag} from {from}: {m}"));
                embedded_changelog(infos, tag, from, format!("the release controller said: {m}"))
            }
            ChangeLogState::Absent => embedded_changelog(infos, tag, from, format!("{} had no changelog", c.origin)),
        },
        Err(e) => {
            if !e.is_not_found() {
                gaps.push(format!("changelog of {tag} from {from}: {e}"));
            }
            embedded_changelog(infos, tag, from, e.to_string())
        }
    }
}

/// The changelog embedded in the release info of `tag`, when it is from `from`.
fn embedded_changelog(infos: &BTreeMap<String, ReleaseInfo>, tag: &str, from: &str, why: String) -> ChangelogRead {
    if let Some(info) = infos.get(tag) {
        if let Some(j) = info.change_log.json() {
            if j.from.name == from {
                return ChangelogRead {
                    json: Some(j.clone()),
                    node_images: info.node_image_streams.clone(),
                    how: format!("changelog embedded in the release info of {tag}"),
                    missing: None,
                };
            }
        }
    }
    ChangelogRead { json: None, node_images: Vec::new(), how: String::new(), missing: Some(why) }
}
