//! Exports of a clustering: go.k8s.io/triage's `failure_data.json` and citriage's richer JSON.
//!
//! `failure_data.json` (k8s-triage schema): `clustered[]` with `key`, `id`, `text`, `spans`,
//! `tests[{name, jobs[{name, builds[]}]}]`, `owner`, plus columnar `builds` (`jobs`: per job
//! either `[first number, count, first column]` for dense runs or `{number: column}`;
//! `cols`: started, tests_failed, elapsed, tests_run, result, executor, pr; `job_paths`).
//! Ordering follows the reference: clusters by most failures, tests by most failures, jobs
//! by most builds then name, build numbers descending as strings, build columns by job then
//! number. Ties the reference leaves to map order are broken by name, so output is stable.
//! The reference hides single-failure clusters; citriage exports every cluster, so every
//! input failure is in exactly one `clustered[]` entry ([`ExportOptions::hide_singletons`]
//! exists only to reproduce the reference's file for comparison).
//!
//! The richer JSON adds the profile, the no-drop accounting, member indices, stable ids and
//! known-signature matches with their evidence.

use std::collections::{BTreeMap, BTreeSet};

use crate::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::cluster::{Accounting, Clustering, FailureRef, NormalizedTexts};
use crate::normalize::Profile;
use crate::signatures::{Catalogue, SignatureMatch};
use crate::stable::StableAssignment;

/// One build, as in the reference's `builds.json` rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildRecord {
    /// Build path (e.g. `gs://bucket/logs/job/123`); failures refer to builds by this path.
    pub path: String,
    /// Job name.
    pub job: String,
    /// Build number (0 = unknown: not exported, like the reference).
    pub number: u64,
    /// Start time, seconds since the epoch.
    pub started: i64,
    /// Duration in seconds.
    pub elapsed: i64,
    /// Tests run.
    pub tests_run: i64,
    /// Tests failed.
    pub tests_failed: i64,
    /// Result (`SUCCESS`, `FAILURE`, ...).
    pub result: String,
    /// Executor.
    #[serde(default)]
    pub executor: String,
    /// PR number for presubmits.
    #[serde(default)]
    pub pr: String,
}

/// A job inside a test of a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonJob {
    /// Job name.
    pub name: String,
    /// Build numbers, descending (as strings).
    pub builds: Vec<String>,
}

/// A test inside a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonTest {
    /// Test name.
    pub name: String,
    /// Jobs with the builds where the test failed this way.
    pub jobs: Vec<JsonJob>,
}

/// One `clustered[]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonCluster {
    /// Normalized key text.
    pub key: String,
    /// go.k8s.io/triage id.
    pub id: String,
    /// A failure text of the cluster.
    pub text: String,
    /// `commonSpans` of the cluster's failure texts.
    pub spans: Vec<usize>,
    /// Tests, most failures first.
    pub tests: Vec<JsonTest>,
    /// Owning SIG.
    pub owner: String,
}

/// Build numbers of a job → column, dense (`[first, count, first column]`) or sparse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JobCollection {
    /// `[first build number, count, first column]`.
    Dense([u64; 3]),
    /// Build number (as a string key) → column.
    Sparse(BTreeMap<String, usize>),
}

/// Columnar build attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnarBuilds {
    /// Start times.
    pub started: Vec<i64>,
    /// Failed test counts.
    pub tests_failed: Vec<i64>,
    /// Durations.
    pub elapsed: Vec<i64>,
    /// Test counts.
    pub tests_run: Vec<i64>,
    /// Results.
    pub result: Vec<String>,
    /// Executors.
    pub executor: Vec<String>,
    /// PRs.
    pub pr: Vec<String>,
}

/// The `builds` object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Columns {
    /// Per job: where its builds are in `cols`.
    pub jobs: BTreeMap<String, JobCollection>,
    /// Build attributes by column.
    pub cols: ColumnarBuilds,
    /// Job name → build path without the last segment.
    pub job_paths: BTreeMap<String, String>,
}

/// `failure_data.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureData {
    /// Clusters.
    pub clustered: Vec<JsonCluster>,
    /// Builds in columnar form.
    pub builds: Columns,
}

/// Export options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Drop clusters with a single failure (the reference does).
    pub hide_singletons: bool,
    /// List a build once per test even when the test failed in it more than once (the
    /// reference does; citriage lists it once per failure so none is lost).
    pub dedup_builds: bool,
    /// SIG → test-name prefixes (`owners.json`), used when a test name has no `[sig-x]`.
    pub owners: BTreeMap<String, Vec<String>>,
}

impl ExportOptions {
    /// Options reproducing go.k8s.io/triage's file exactly (singletons hidden: failures are
    /// left out; for comparisons only).
    pub fn k8s_triage(owners: BTreeMap<String, Vec<String>>) -> Self {
        ExportOptions { hide_singletons: true, dedup_builds: true, owners }
    }

    /// citriage's export: every cluster, so nothing is left out.
    pub fn complete(owners: BTreeMap<String, Vec<String>>) -> Self {
        ExportOptions { hide_singletons: false, dedup_builds: false, owners }
    }
}

/// Builds in columnar form (reference `buildsToColumns`).
pub fn builds_to_columns<'a, I>(builds: I) -> Columns
where
    I: IntoIterator<Item = &'a BuildRecord>,
{
    let builds: Vec<&BuildRecord> = builds.into_iter().filter(|b| b.number != 0).collect();
    // by job, number, path (stable): jobs compared by their rank among the distinct names
    let mut jobs: Vec<&str> = builds.iter().map(|b| b.job.as_str()).collect::<HashSet<_>>().into_iter().collect();
    jobs.sort_unstable();
    let rank: HashMap<&str, u32> = jobs.iter().enumerate().map(|(i, j)| (*j, i as u32)).collect();
    let mut keyed: Vec<(u32, &BuildRecord)> = builds.iter().map(|b| (rank[b.job.as_str()], *b)).collect();
    keyed.par_sort_by(|(ra, a), (rb, b)| ra.cmp(rb).then(a.number.cmp(&b.number)).then_with(|| a.path.cmp(&b.path)));
    keyed.dedup_by(|(ra, a), (rb, b)| ra == rb && a.number == b.number);
    let sorted = keyed.into_iter().map(|(_, b)| b);
    let mut out = Columns::default();
    let mut per_job: BTreeMap<&str, Vec<(u64, usize)>> = BTreeMap::new();
    for b in sorted {
        let index = out.cols.started.len();
        out.cols.started.push(b.started);
        out.cols.tests_failed.push(b.tests_failed);
        out.cols.elapsed.push(b.elapsed);
        out.cols.tests_run.push(b.tests_run);
        out.cols.result.push(b.result.clone());
        out.cols.executor.push(b.executor.clone());
        out.cols.pr.push(b.pr.clone());
        let e = per_job.entry(b.job.as_str()).or_default();
        if e.is_empty() {
            let dir = b.path.rfind('/').map_or(b.path.as_str(), |i| &b.path[..i]);
            out.job_paths.insert(b.job.clone(), dir.to_string());
        }
        e.push((b.number, index));
    }
    for (job, nums) in per_job {
        // nums are sorted by number
        let (first, base) = nums[0];
        let count = nums.len();
        let dense = nums.iter().enumerate().all(|(i, &(n, idx))| idx == base + i && n == first + i as u64);
        let coll = if dense {
            JobCollection::Dense([first, count as u64, base as u64])
        } else {
            JobCollection::Sparse(nums.iter().map(|&(n, i)| (n.to_string(), i)).collect())
        };
        out.jobs.insert(job.to_string(), coll);
    }
    out
}

/// Reference `normalizeName`: drop `[...]` and `{...}`, collapse whitespace, trim.
pub fn normalize_test_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        let close = match c {
            '[' => Some(']'),
            '{' => Some('}'),
            _ => None,
        };
        if let Some(close) = close {
            // non-greedy: drop up to the first closing bracket, if any
            let rest: String = chars.clone().collect();
            if let Some(p) = rest.find(close) {
                for _ in 0..rest[..p].chars().count() + 1 {
                    chars.next();
                }
                continue;
            }
        }
        out.push(c);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The SIG of a test: `[sig-x]` in its name, else the owner whose prefix starts the normalized
/// name (owners in name order, prefixes in given order). None when neither applies.
pub fn test_owner(name: &str, owners: &BTreeMap<String, Vec<String>>) -> Option<String> {
    // One spelling whatever the source (`[sig-testing]`, an owners file's
    // `sig-testing`): `testing`, as go.k8s.io/triage keeps it.
    if let Some(p) = name.find("[sig-") {
        let rest = &name[p + 5..];
        if let Some(end) = rest.find(']') {
            return Some(citriage_model::owner::canonical(&rest[..end]));
        }
    }
    if owners.is_empty() {
        return None;
    }
    let norm = normalize_test_name(name);
    for (sig, prefixes) in owners {
        if prefixes.iter().any(|p| !p.is_empty() && norm.starts_with(p.as_str())) {
            return Some(citriage_model::owner::canonical(sig));
        }
    }
    None
}

/// Reference `testsGroupByJob`: builds of `members` grouped by job. Unlike the reference,
/// a build appears once per failure (a test that failed twice in one build, e.g. retried,
/// is listed twice), so no failure is lost.
fn jobs_of(
    members: &[u32],
    failures: &[FailureRef<'_>],
    by_path: &HashMap<&str, &BuildRecord>,
    dedup: bool,
) -> Vec<JsonJob> {
    let mut groups: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for &m in members {
        if let Some(b) = by_path.get(failures[m as usize].build) {
            if b.number != 0 {
                groups.entry(b.job.as_str()).or_default().push(b.number.to_string());
            }
        }
    }
    let mut jobs: Vec<JsonJob> = groups
        .into_iter()
        .map(|(name, mut builds)| {
            builds.sort_by(|a, b| b.cmp(a));
            if dedup {
                builds.dedup();
            }
            JsonJob { name: name.to_string(), builds }
        })
        .collect();
    jobs.sort_by(|a, b| b.builds.len().cmp(&a.builds.len()).then_with(|| a.name.cmp(&b.name)));
    jobs
}

/// Reference `annotateOwners` for one cluster: hits in the last day, then older hits, then
/// the alphabetically first owner; `testing` when no test has an owner.
fn cluster_owner(
    tests: &[JsonTest],
    cols: &Columns,
    yesterday: i64,
    by_path: &HashMap<&str, &BuildRecord>,
    owners: &BTreeMap<String, Vec<String>>,
) -> String {
    let mut counts: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut path = String::new();
    for t in tests {
        let Some(owner) = test_owner(&t.name, owners) else {
            continue;
        };
        let c = counts.entry(owner).or_insert((0, 0));
        for j in &t.jobs {
            if j.name.contains(':') {
                continue;
            }
            let Some(dir) = cols.job_paths.get(&j.name) else {
                continue;
            };
            path.clear();
            path.push_str(dir);
            path.push('/');
            let base = path.len();
            for n in &j.builds {
                path.truncate(base);
                path.push_str(n);
                if let Some(b) = by_path.get(path.as_str()) {
                    if b.started > yesterday {
                        c.0 += 1;
                    } else {
                        c.1 += 1;
                    }
                }
            }
        }
    }
    if counts.is_empty() {
        return "testing".to_string();
    }
    let mut top = (String::new(), (0u64, 0u64));
    for (owner, c) in counts {
        let better = if c.0 == top.1 .0 {
            if c.1 == top.1 .1 {
                owner < top.0
            } else {
                c.1 > top.1 .1
            }
        } else {
            c.0 > top.1 .0
        };
        if better {
            top = (owner, c);
        }
    }
    top.0
}

/// Render a clustering as `failure_data.json` (see the module docs).
pub fn failure_data(
    clustering: &Clustering,
    failures: &[FailureRef<'_>],
    builds: &[BuildRecord],
    opts: &ExportOptions,
) -> FailureData {
    let by_path: HashMap<&str, &BuildRecord> = builds.iter().map(|b| (b.path.as_str(), b)).collect();
    let cols = builds_to_columns(builds);
    // the reference's "last day": before the newest build's start
    let yesterday = cols.cols.started.iter().max().map_or(0, |m| m - 86_400);
    // Clusters and their tests are independent: built in parallel, collected in order.
    let clustered: Vec<JsonCluster> = clustering
        .clusters
        .par_iter()
        .filter(|c| !(opts.hide_singletons && c.members.len() <= 1))
        .map(|c| {
            let tests: Vec<JsonTest> = c
                .tests
                .par_iter()
                .with_min_len(8)
                .map(|t| JsonTest {
                    name: t.test.clone(),
                    jobs: jobs_of(&t.members, failures, &by_path, opts.dedup_builds),
                })
                .collect();
            let owner = cluster_owner(&tests, &cols, yesterday, &by_path, &opts.owners);
            JsonCluster {
                key: c.key.clone(),
                id: c.k8s_id.clone(),
                text: c.text.clone(),
                spans: c.spans.clone(),
                tests,
                owner,
            }
        })
        .collect();
    FailureData { clustered, builds: cols }
}

/// Reference `renderSlice`: the clusters owned by `owner` or whose id starts with `prefix`,
/// with the builds of their jobs only.
pub fn render_slice(
    data: &FailureData,
    builds: &[BuildRecord],
    prefix: Option<&str>,
    owner: Option<&str>,
) -> FailureData {
    let clustered: Vec<JsonCluster> = data
        .clustered
        .iter()
        .filter(|c| {
            owner.is_some_and(|o| !o.is_empty() && c.owner == o)
                || prefix.is_some_and(|p| !p.is_empty() && c.id.starts_with(p))
        })
        .cloned()
        .collect();
    let jobs: BTreeSet<&str> =
        clustered.iter().flat_map(|c| c.tests.iter().flat_map(|t| t.jobs.iter().map(|j| j.name.as_str()))).collect();
    let cols = builds_to_columns(builds.iter().filter(|b| jobs.contains(b.job.as_str())));
    FailureData { clustered, builds: cols }
}

/// A test in the rich export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RichTest {
    /// Test name.
    pub name: String,
    /// Failures of this test in the cluster.
    pub failures: usize,
    /// Jobs and builds (`build` values of the failures, grouped by job).
    pub jobs: Vec<JsonJob>,
}

/// A cluster in the rich export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RichCluster {
    /// Position in the clustering (largest first).
    pub index: usize,
    /// go.k8s.io/triage id of the key (links to go.k8s.io/triage).
    pub k8s_id: String,
    /// citriage's stable id, when assigned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stable_id: Option<String>,
    /// How the stable id was obtained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stable_origin: Option<crate::stable::IdOrigin>,
    /// Normalized key.
    pub key: String,
    /// Representative failure text.
    pub text: String,
    /// `commonSpans` relative to `text`.
    pub spans: Vec<usize>,
    /// Number of failures.
    pub size: usize,
    /// Distinct normalized texts merged.
    pub distinct_normalized: usize,
    /// Owner SIG (`testing` when unknown).
    pub owner: String,
    /// Tests, most failures first.
    pub tests: Vec<RichTest>,
    /// Input indices of all members, ascending.
    pub members: Vec<u32>,
    /// Known signatures matching the representative text, with evidence.
    pub signatures: Vec<SignatureMatch>,
    /// Sub-patterns by template, job family and signature (see [`attach_sub_patterns`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sub_patterns: Vec<crate::hierarchy::SubPattern>,
}

/// citriage's JSON for a clustering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RichExport {
    /// Schema tag.
    pub schema: String,
    /// Normalization profile.
    pub profile: Profile,
    /// No-drop accounting.
    pub accounting: Accounting,
    /// Clusters, largest first (single-failure clusters included).
    pub clusters: Vec<RichCluster>,
}

/// Build the rich export. `stable` (if given) is indexed like `clustering.clusters`.
pub fn rich_export(
    clustering: &Clustering,
    failures: &[FailureRef<'_>],
    stable: Option<&[StableAssignment]>,
    catalogue: Option<&Catalogue>,
    owners: &BTreeMap<String, Vec<String>>,
) -> RichExport {
    let clusters = clustering
        .clusters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let tests: Vec<RichTest> = c
                .tests
                .iter()
                .map(|t| {
                    let mut by_job: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
                    for &m in &t.members {
                        let f = &failures[m as usize];
                        by_job.entry(f.job).or_default().insert(f.build);
                    }
                    let mut jobs: Vec<JsonJob> = by_job
                        .into_iter()
                        .map(|(j, bs)| {
                            let mut builds: Vec<String> = bs.into_iter().map(str::to_string).collect();
                            builds.sort_by(|a, b| b.cmp(a));
                            JsonJob { name: j.to_string(), builds }
                        })
                        .collect();
                    jobs.sort_by(|a, b| b.builds.len().cmp(&a.builds.len()).then_with(|| a.name.cmp(&b.name)));
                    RichTest { name: t.test.clone(), failures: t.members.len(), jobs }
                })
                .collect();
            // owner by failures per SIG (no build times here), ties by name
            let mut per_owner: BTreeMap<String, usize> = BTreeMap::new();
            for t in &tests {
                if let Some(o) = test_owner(&t.name, owners) {
                    *per_owner.entry(o).or_insert(0) += t.failures;
                }
            }
            let owner = per_owner
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
                .map_or_else(|| "testing".to_string(), |(o, _)| o);
            let st = stable.and_then(|s| s.get(i));
            RichCluster {
                index: i,
                k8s_id: c.k8s_id.clone(),
                stable_id: st.map(|s| s.stable_id.clone()),
                stable_origin: st.map(|s| s.origin),
                key: c.key.clone(),
                text: c.text.clone(),
                spans: c.spans.clone(),
                size: c.members.len(),
                distinct_normalized: c.distinct_normalized,
                owner,
                tests,
                members: c.members.clone(),
                signatures: catalogue.map(|cat| cat.match_text(&c.text)).unwrap_or_default(),
                sub_patterns: Vec::new(),
            }
        })
        .collect();
    RichExport {
        schema: "citriage.clusters/v1".to_string(),
        profile: clustering.profile,
        accounting: clustering.accounting.clone(),
        clusters,
    }
}

/// Fill every cluster's sub-patterns (by template, job family and signature; see
/// [`crate::hierarchy`]). `started` is each failure's time, indexed like `failures`;
/// `normalized`, the clustering's normalized texts (see [`crate::hierarchy::sub_patterns`]).
pub fn attach_sub_patterns(
    rich: &mut RichExport,
    clustering: &Clustering,
    failures: &[FailureRef<'_>],
    started: &[i64],
    catalogue: Option<&Catalogue>,
    normalized: Option<&NormalizedTexts>,
) {
    let subs: Vec<Vec<crate::hierarchy::SubPattern>> = clustering
        .clusters
        .par_iter()
        .map(|c| crate::hierarchy::sub_patterns(c, failures, started, catalogue, normalized))
        .collect();
    for (rc, s) in rich.clusters.iter_mut().zip(subs) {
        rc.sub_patterns = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_normalize_like_reference() {
        assert_eq!(normalize_test_name("[sig-node] Node {x} reboots  [Slow]"), "Node reboots");
        assert_eq!(normalize_test_name("a [b"), "a [b");
    }

    #[test]
    fn owners_have_one_spelling_whatever_the_source() {
        let mut o = BTreeMap::new();
        o.insert("sig-testing".to_string(), vec!["Kubectl".to_string()]);
        // The owners file's `sig-testing` and the tag's `[sig-testing]` are one owner.
        assert_eq!(test_owner("Kubectl logs should work", &o).as_deref(), Some("testing"));
        assert_eq!(test_owner("[sig-testing] harness works", &o).as_deref(), Some("testing"));
    }

    #[test]
    fn owners() {
        let mut o = BTreeMap::new();
        o.insert("node".to_string(), vec!["Variable".to_string()]);
        assert_eq!(test_owner("[sig-node] Node reboots", &o).as_deref(), Some("node"));
        assert_eq!(test_owner("Suffixes too [sig-storage]", &o).as_deref(), Some("storage"));
        assert_eq!(test_owner("Variable test with old-style prefixes", &o).as_deref(), Some("node"));
        assert_eq!(test_owner("unknown test name", &o), None);
    }
}
