//! Exposing changes, for `suspects`: what a job ran with that moved between its last
//! pass and its first failure. Each build's versions (the pod spec's images and version
//! flags of `prowjob.json`, the version entries of `started.json` and `finished.json`,
//! kept by ingest in the store) are compared between the two ends of every job's
//! window. An entry counts when its value differs between the ends, neither value is
//! the tested code itself (it names neither end's tested commit, nor the build's
//! `repo-version`), and it held still before: the builds just before the last pass that
//! carry it (up to [`BEFORE`]) all had the last pass's value, so an entry that changes
//! with every build (a pod name, a version built from each commit) is never named. The
//! same move seen in several jobs is one move; one seen in every job's window is the
//! stronger for it.

use std::collections::{BTreeMap, BTreeSet};

use citriage_analysis::windows::{End, JobWindow};
use citriage_model::build::{prow_url, BuildVersion};
use citriage_store::{IndexedBuild, Store};
use serde::Serialize;

use crate::error::Result;

/// At most this many builds before the last pass show whether an entry held still.
pub const BEFORE: usize = 3;

/// An image or version that moved between the ends of job windows.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VersionMove {
    /// `image` (a container image of the pod spec) or `version` (any other entry).
    pub kind: &'static str,
    /// The document (`prowjob.json`, `finished.json`, `started.json`) and its key.
    pub file: String,
    pub key: String,
    pub from: String,
    pub to: String,
    /// The windows that show it, by job.
    pub windows: Vec<MovedIn>,
    /// Every job window of the target that has a last pass shows it.
    pub every_job: bool,
}

/// One job window's ends, as the move's evidence.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MovedIn {
    pub job: String,
    pub good_build: String,
    pub good_url: String,
    pub bad_build: String,
    pub bad_url: String,
    /// Builds before the last pass that had the same value (up to [`BEFORE`]).
    pub held_before: usize,
}

impl VersionMove {
    /// `image A → B`, or `KEY A → B`.
    pub fn describe(&self) -> String {
        let what = if self.kind == "image" { "image".to_string() } else { self.key.clone() };
        format!("{what} {} → {}", self.from, self.to)
    }

    /// Where it is read and the windows that show it, one line each.
    pub fn evidence(&self) -> Vec<String> {
        self.windows
            .iter()
            .map(|w| {
                format!(
                    "{} {}: {} in {} #{} ({}) → {} in #{} ({})",
                    self.file, self.key, self.from, w.job, w.good_build, w.good_url, self.to, w.bad_build, w.bad_url
                )
            })
            .collect()
    }
}

/// The moves of the windows' ends, best first: seen in every job's window, in more
/// windows, images before other entries, then by file, key and values.
pub fn version_moves(store: &Store, index: &[IndexedBuild], jobs: &[JobWindow]) -> Result<Vec<VersionMove>> {
    // The windows' jobs' builds, read in one pass over the index.
    let wanted: BTreeSet<&str> = jobs.iter().filter(|w| w.last_pass.is_some()).map(|w| w.job.as_str()).collect();
    let mut by_job: BTreeMap<&str, Vec<&IndexedBuild>> = BTreeMap::new();
    for b in index.iter().filter(|b| wanted.contains(b.record.job.as_str())) {
        by_job.entry(b.record.job.as_str()).or_default().push(b);
    }
    let mut ends: Vec<(&JobWindow, &IndexedBuild, &IndexedBuild, Vec<&IndexedBuild>)> = Vec::new();
    for w in jobs {
        let Some(pass) = &w.last_pass else { continue };
        let builds = by_job.get(w.job.as_str()).map_or(&[][..], Vec::as_slice);
        let (Some(good), Some(bad)) = (find(builds, pass), find(builds, &w.first_fail)) else { continue };
        let mut before: Vec<&IndexedBuild> =
            builds.iter().copied().filter(|b| b.record.started.is_some_and(|t| t < pass.started)).collect();
        before.sort_by_key(|b| std::cmp::Reverse((b.record.started, b.id)));
        before.truncate(BEFORE);
        ends.push((w, good, bad, before));
    }
    let ids: Vec<i64> =
        ends.iter().flat_map(|(_, g, b, before)| [g.id, b.id].into_iter().chain(before.iter().map(|x| x.id))).collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let versions = store.build_versions(&ids)?;
    let none = Vec::new();
    let of = |b: &IndexedBuild| versions.get(&b.id).unwrap_or(&none);
    let mut moves: BTreeMap<(String, String, String, String), Vec<MovedIn>> = BTreeMap::new();
    for (w, good, bad, before) in &ends {
        let after: BTreeMap<(&str, &str), &str> =
            of(bad).iter().map(|v| ((v.file.as_str(), v.key.as_str()), v.value.as_str())).collect();
        for v in of(good) {
            let Some(to) = after.get(&(v.file.as_str(), v.key.as_str())) else { continue };
            if *to == v.value
                || is_tested_code(&v.value, good, w.last_pass.as_ref())
                || is_tested_code(to, bad, Some(&w.first_fail))
            {
                continue;
            }
            let earlier: Vec<&str> = before.iter().filter_map(|b| value_of(of(b), v)).collect();
            if earlier.iter().any(|e| *e != v.value) {
                continue;
            }
            moves.entry((v.file.clone(), v.key.clone(), v.value.clone(), to.to_string())).or_default().push(MovedIn {
                job: w.job.clone(),
                good_build: good.record.build_id.clone(),
                good_url: prow_url(&good.record.bucket, &good.record.path),
                bad_build: bad.record.build_id.clone(),
                bad_url: prow_url(&bad.record.bucket, &bad.record.path),
                held_before: earlier.len(),
            });
        }
    }
    let placed = ends.len();
    let mut out: Vec<VersionMove> = moves
        .into_iter()
        .map(|((file, key, from, to), windows)| VersionMove {
            kind: if key.ends_with(".image") { "image" } else { "version" },
            every_job: windows.iter().map(|w| &w.job).collect::<BTreeSet<_>>().len() == placed,
            file,
            key,
            from,
            to,
            windows,
        })
        .collect();
    out.sort_by(|a, b| {
        (!a.every_job, std::cmp::Reverse(a.windows.len()), a.kind != "image", &a.file, &a.key, &a.from, &a.to).cmp(&(
            !b.every_job,
            std::cmp::Reverse(b.windows.len()),
            b.kind != "image",
            &b.file,
            &b.key,
            &b.from,
            &b.to,
        ))
    });
    Ok(out)
}

/// The stored build of a window's end among its job's builds.
fn find<'a>(builds: &[&'a IndexedBuild], end: &End) -> Option<&'a IndexedBuild> {
    builds.iter().copied().find(|b| b.record.build_id == end.build_id && b.record.started == Some(end.started))
}

fn value_of<'a>(versions: &'a [BuildVersion], like: &BuildVersion) -> Option<&'a str> {
    versions.iter().find(|v| v.file == like.file && v.key == like.key).map(|v| v.value.as_str())
}

/// Whether a value is the tested code itself: it names a commit the end tested (seven
/// hex digits of it at least) or is the build's `repo-version` or `repo-commit`.
fn is_tested_code(value: &str, b: &IndexedBuild, end: Option<&End>) -> bool {
    let r = &b.record;
    if [&r.repo_version, &r.repo_commit, &r.commit_sha].into_iter().flatten().any(|v| v == value) {
        return true;
    }
    let mut shas: Vec<&str> = [&r.repo_commit, &r.commit_sha].into_iter().flatten().map(String::as_str).collect();
    if let Some(e) = end {
        for refs in e.tested.repos.values() {
            shas.extend(refs.base.as_deref());
            shas.extend(refs.pulls.iter().map(|(_, h)| h.as_str()));
        }
    }
    let lower = value.to_ascii_lowercase();
    shas.iter()
        .filter(|s| s.len() >= 7 && s.bytes().all(|c| c.is_ascii_hexdigit()))
        .any(|s| lower.contains(&s[..7].to_ascii_lowercase()))
}
