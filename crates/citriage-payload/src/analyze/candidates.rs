//! Stage 5: the candidates. Every PR (and RHCOS RPM change) of every payload
//! since the last all-green one, with its diff and presubmits when the source
//! has them; the CI-configuration changes that landed in the window; and the
//! window's index for specificity (document frequencies over the candidates).

use std::collections::{BTreeMap, BTreeSet};

use citriage_model::time::{Epoch, DAY};

use super::chain::{ChainView, Changelogs};
use super::options::Target;
use super::reader::RunReader;
use crate::candidate::{Candidate, CandidateKind, RpmChange};
use crate::ciconfig::CiConfigChange;
use crate::error::PayloadError;
use crate::release::{JobState, NodeImageStream, PullRequest};
use crate::source::{CiConfigAnswer, CiWindow, PayloadSource};
use citriage_suspects::diff;
use citriage_suspects::window::{CandidateIndex, WindowIndex};

/// The candidates of the window.
pub(crate) struct Candidates {
    /// Payload → the candidates its changelog brought.
    pub by_payload: BTreeMap<String, Vec<Candidate>>,
    /// Every candidate by id (CI-configuration changes included).
    pub all: BTreeMap<String, Candidate>,
    /// The window's specificity index (RHCOS RPM changes aside).
    pub index: WindowIndex,
    /// A CI-configuration source answered (even with nothing).
    pub ci_known: bool,
    /// The window's start: the baseline's (or the chain end's) creation.
    pub window_lo: Option<Epoch>,
}

/// Gathers the candidates of the window.
pub(crate) fn gather(
    source: &dyn PayloadSource,
    reader: &RunReader,
    target: &Target,
    view: &ChainView,
    changelogs: &Changelogs,
    failure_texts: &[String],
    gaps: &mut Vec<String>,
) -> Result<Candidates, PayloadError> {
    let window_lo = view
        .chain
        .baseline
        .as_deref()
        .or(view.tags.last().map(String::as_str))
        .and_then(citriage_model::time::tag_timestamp)
        .or(target.created.map(|t| t - 14 * DAY));
    let (ci_changes, ci_known) = ci_config_changes(source, target, window_lo, gaps)?;
    let mut by_payload: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    let mut all: BTreeMap<String, Candidate> = BTreeMap::new();
    for payload in &view.tags {
        let Some(hop) = changelogs.hops.get(payload) else { continue };
        let mut here: Vec<Candidate> = hop.prs.iter().map(|pr| pr_candidate(source, pr, payload, gaps)).collect();
        here.extend(rpm_candidates(source, &hop.node_images, payload, &hop.from));
        for c in &here {
            all.entry(c.id.clone()).or_insert_with(|| c.clone());
        }
        by_payload.insert(payload.clone(), here);
    }
    let until = [latest_failed_start(reader, view).or(target.created.map(|t| t + DAY)), target.as_of]
        .into_iter()
        .flatten()
        .min();
    for change in &ci_changes {
        let t = change.epoch();
        if t.is_some_and(|t| window_lo.is_none_or(|lo| t > lo - DAY) && until.is_none_or(|hi| t <= hi)) {
            let c = ci_candidate(change, &target.tag);
            all.entry(c.id.clone()).or_insert(c);
        }
    }
    let missing_diffs: Vec<String> =
        all.values().filter(|c| c.kind == CandidateKind::Pr && !c.diff_available).map(|c| c.short()).collect();
    if !missing_diffs.is_empty() {
        gaps.push(format!(
            "no diff for {} PR(s): error-message matching was impossible for {}",
            missing_diffs.len(),
            missing_diffs.join(", ")
        ));
    }
    let index = WindowIndex::new(
        all.values()
            .filter(|c| c.kind != CandidateKind::RhcosRpm)
            .map(|c| (c.id.clone(), CandidateIndex::new(c.diff.as_ref(), &c.title)))
            .collect(),
    )
    .with_failures(failure_texts);
    Ok(Candidates { by_payload, all, index, ci_known, window_lo })
}

/// The CI-configuration changes the source knows, up to the as-of time, and
/// whether it knows any.
fn ci_config_changes(
    source: &dyn PayloadSource,
    target: &Target,
    window_lo: Option<Epoch>,
    gaps: &mut Vec<String>,
) -> Result<(Vec<CiConfigChange>, bool), PayloadError> {
    let until = target.as_of.or(target.created).unwrap_or(0) + DAY;
    let since = window_lo.unwrap_or(until - 14 * DAY) - 2 * DAY;
    let changes = match source.ci_config_changes(&CiWindow { since, until })? {
        CiConfigAnswer::Known(c) => c,
        CiConfigAnswer::Unknown => return Ok((Vec::new(), false)),
        CiConfigAnswer::Unreadable(why) => {
            gaps.push(format!("CI-configuration changes: {why}"));
            return Ok((Vec::new(), false));
        }
    };
    let kept = changes
        .into_iter()
        .filter(|c| match (target.as_of, c.epoch()) {
            (Some(cut), Some(t)) => t <= cut,
            (_, None) => false,
            _ => true,
        })
        .collect();
    Ok((kept, true))
}

/// A change can only break runs that started after it: the latest first start
/// of the target's failed blocking jobs (their earliest attempt).
fn latest_failed_start(reader: &RunReader, view: &ChainView) -> Option<Epoch> {
    let mut latest: Option<Epoch> = None;
    for result in view.target.results.blocking.values().filter(|j| j.state == JobState::Failed) {
        let mut first: Option<Epoch> = result.transition_epoch();
        for url in result.previous_attempt_urls.iter().chain(result.url.iter()) {
            if let Some(t) = reader.evidence(url).and_then(|e| e.started.or(e.finished)) {
                first = Some(first.map_or(t, |b| b.min(t)));
            }
        }
        if let Some(t) = first {
            latest = Some(latest.map_or(t, |l| l.max(t)));
        }
    }
    latest
}

fn pr_candidate(source: &dyn PayloadSource, pr: &PullRequest, payload: &str, gaps: &mut Vec<String>) -> Candidate {
    let diff = match source.pr_diff(pr) {
        Ok(Some(d)) => Some(diff::parse_unified(&d)),
        Ok(None) => None,
        Err(e) => {
            gaps.push(format!("diff of {}: {e}", pr.url));
            None
        }
    };
    let presubmits = source.pr_presubmits(pr).unwrap_or_else(|e| {
        gaps.push(format!("presubmits of {}: {e}", pr.url));
        None
    });
    let title = pr.title.to_ascii_lowercase();
    Candidate {
        id: format!("pr:{}", pr.key()),
        kind: CandidateKind::Pr,
        title: pr.title.clone(),
        url: Some(pr.url.clone()),
        component: pr.repo.clone(),
        repo: Some(format!("{}/{}", pr.org, pr.repo)),
        number: Some(pr.number),
        images: pr.images.clone(),
        payload: Some(payload.to_string()),
        date: None,
        rpm: None,
        diff_available: diff.is_some(),
        diff,
        presubmits,
        is_rebase: pr.repo == "kubernetes"
            && (title.contains("rebase") || (title.contains("bump") && title.contains("1."))),
    }
}

fn rpm_candidates(
    source: &dyn PayloadSource,
    streams: &[NodeImageStream],
    payload: &str,
    from: &str,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for stream in streams {
        let changelog = source.rpm_changelog(payload, &stream.tag, from).ok().flatten();
        let mut seen_versions: BTreeSet<(String, String)> = BTreeSet::new();
        for (package, (old, new)) in &stream.changed {
            // Subpackages of one source package share the version bump: keep the first.
            if !seen_versions.insert((old.clone(), new.clone())) && package.contains('-') {
                continue;
            }
            let section = changelog.as_ref().and_then(|t| package_section(t, package));
            let variant = if stream.name.is_empty() { &stream.tag } else { &stream.name };
            out.push(Candidate {
                id: format!("rpm:{}/{package}", stream.tag),
                kind: CandidateKind::RhcosRpm,
                title: format!("{package} {old} → {new} ({variant})"),
                url: None,
                component: stream.tag.clone(),
                repo: None,
                number: None,
                images: Vec::new(),
                payload: Some(payload.to_string()),
                date: None,
                rpm: Some(RpmChange {
                    variant_tag: stream.tag.clone(),
                    variant_name: stream.name.clone(),
                    package: package.clone(),
                    old_version: old.clone(),
                    new_version: new.clone(),
                    changelog: section,
                }),
                diff: None,
                diff_available: false,
                presubmits: None,
                is_rebase: false,
            });
        }
    }
    out
}

/// The part of an RPM changelog under the heading that names the package.
fn package_section(text: &str, package: &str) -> Option<String> {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with('#') {
            inside = line.contains(package);
            continue;
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    (!out.trim().is_empty()).then_some(out)
}

fn ci_candidate(c: &CiConfigChange, payload: &str) -> Candidate {
    Candidate {
        id: format!("ci:{}@{}", c.repo, c.id.chars().take(12).collect::<String>()),
        kind: CandidateKind::CiConfig,
        title: c.title.clone(),
        url: c.url.clone(),
        component: "CI configuration".into(),
        repo: Some(c.repo.clone()),
        number: c.pr_number,
        images: Vec::new(),
        payload: Some(payload.to_string()),
        date: Some(c.date.clone()),
        rpm: None,
        diff_available: !c.diff.files.is_empty(),
        diff: Some(c.diff.clone()),
        presubmits: None,
        is_rebase: false,
    }
}
