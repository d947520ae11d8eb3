//! Typed release-controller data and the parsing that absorbs its quirks.
//!
//! Owns: stream tag lists, release info (blocking / informing / async / pending
//! verification jobs with retries and previous attempts, upgrade edges, the
//! changelog in both forms), pull requests and RHCOS RPM changes extracted from a
//! changelog, and payload tag names (version, stream, architecture).
//!
//! Quirks handled here, once, so no caller sees them:
//! - `upgradesTo` / `upgradesFrom` use capitalised keys (`From`, `To`, `Success`,
//!   `Failure`, `Total`, `History`); lower-case spellings are accepted too;
//! - `retries`, `previousAttemptURLs`, `transitionTime`, `results` and whole job
//!   maps may be omitted or `null`; an empty `url` (job not dispatched yet) becomes `None`;
//! - `changeLog` is base64-encoded HTML (Go `[]byte`); older servers put the JSON
//!   changelog object there instead;
//! - a changelog that timed out ("the changelog is still loading...") is a typed
//!   [`ChangeLogState::Loading`], not an error and not an empty changelog;
//! - unknown phases and job states are kept verbatim rather than rejected.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::PayloadError;
use citriage_model::json_kind;
use citriage_model::time::{self, Epoch};

/// Phase of a payload tag.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Phase {
    Pending,
    Failed,
    Ready,
    Accepted,
    Rejected,
    /// Anything else the server says, verbatim.
    Other(String),
}

impl Phase {
    /// Parses a phase string; unknown values are kept.
    pub fn parse(s: &str) -> Phase {
        match s.trim() {
            "Pending" => Phase::Pending,
            "Failed" => Phase::Failed,
            "Ready" => Phase::Ready,
            "Accepted" => Phase::Accepted,
            "Rejected" => Phase::Rejected,
            other => Phase::Other(other.to_string()),
        }
    }

    /// The display name.
    pub fn as_str(&self) -> &str {
        match self {
            Phase::Pending => "Pending",
            Phase::Failed => "Failed",
            Phase::Ready => "Ready",
            Phase::Accepted => "Accepted",
            Phase::Rejected => "Rejected",
            Phase::Other(s) => s,
        }
    }
}

/// State of one verification job on one payload.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum JobState {
    Succeeded,
    Failed,
    Pending,
    Other(String),
}

impl JobState {
    /// Parses a job state; Prow's lower-case states are mapped too.
    pub fn parse(s: &str) -> JobState {
        match s.trim() {
            "Succeeded" | "success" | "SUCCESS" => JobState::Succeeded,
            "Failed" | "failure" | "FAILURE" | "error" | "ERROR" | "aborted" | "ABORTED" => JobState::Failed,
            "Pending" | "pending" | "triggered" | "" => JobState::Pending,
            other => JobState::Other(other.to_string()),
        }
    }

    /// The display name.
    pub fn as_str(&self) -> &str {
        match self {
            JobState::Succeeded => "Succeeded",
            JobState::Failed => "Failed",
            JobState::Pending => "Pending",
            JobState::Other(s) => s,
        }
    }
}

/// One entry of a stream's tag list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagEntry {
    pub name: String,
    pub phase: Phase,
    pub pull_spec: String,
    pub download_url: String,
}

/// A release stream's tags, **newest first** (re-sorted by the tag time stamp,
/// whatever order the server used; tags without a time stamp keep their place
/// after the dated ones).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagList {
    pub name: String,
    pub tags: Vec<TagEntry>,
}

impl TagList {
    /// Position of a tag in the newest-first list.
    pub fn position(&self, tag: &str) -> Option<usize> {
        self.tags.iter().position(|t| t.name == tag)
    }

    /// Sorts newest first by tag time stamp (stable; ties broken by name, descending).
    pub fn sort_newest_first(&mut self) {
        self.tags.sort_by(|a, b| {
            let ta = time::tag_timestamp(&a.name);
            let tb = time::tag_timestamp(&b.name);
            match (ta, tb) {
                (Some(x), Some(y)) => y.cmp(&x).then_with(|| b.name.cmp(&a.name)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
        });
    }
}

/// Result of one verification job on a payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobResult {
    pub state: JobState,
    /// The Prow URL; `None` before the job was dispatched (the API sends `""`).
    pub url: Option<String>,
    /// How many times the release controller retried the job (0 when omitted).
    pub retries: u32,
    /// Prow URLs of earlier attempts, oldest first.
    pub previous_attempt_urls: Vec<String>,
    /// RFC 3339 time of the last state change, when given.
    pub transition_time: Option<String>,
}

impl JobResult {
    /// The Prow job name from the URL path `/view/gs/<bucket>/logs/<job>/<id>`.
    pub fn prow_job(&self) -> Option<String> {
        self.url.as_deref().and_then(prow_job_from_url)
    }

    /// The transition time as an epoch.
    pub fn transition_epoch(&self) -> Option<Epoch> {
        self.transition_time.as_deref().and_then(time::parse_rfc3339)
    }
}

/// The Prow job name in a Prow / GCS URL (`.../logs/<job>/<build-id>` or
/// `.../pr-logs/pull/<repo>/<pr>/<job>/<build-id>`).
pub fn prow_job_from_url(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url).trim_end_matches('/');
    let segs: Vec<&str> = path.split('/').collect();
    if let Some(i) = segs.iter().rposition(|s| *s == "logs") {
        if segs.len() > i + 1 && !segs[i + 1].is_empty() {
            return Some(segs[i + 1].to_string());
        }
    }
    if segs.len() >= 2 {
        let last = segs[segs.len() - 1];
        if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) {
            return Some(segs[segs.len() - 2].to_string());
        }
    }
    None
}

/// The build id (last path segment when numeric) of a Prow URL.
pub fn build_id_from_url(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url).trim_end_matches('/');
    let last = path.rsplit('/').next()?;
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())).then(|| last.to_string())
}

/// The verification jobs of a payload, by short verification name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobResults {
    pub blocking: BTreeMap<String, JobResult>,
    pub informing: BTreeMap<String, JobResult>,
    pub async_jobs: BTreeMap<String, JobResult>,
    pub pending: BTreeMap<String, JobResult>,
}

/// One upgrade edge of a payload (`upgradesTo` / `upgradesFrom`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpgradeEdge {
    pub from: String,
    pub to: String,
    pub success: u32,
    pub failure: u32,
    pub total: u32,
    /// Runs by Prow URL.
    pub history: BTreeMap<String, JobResult>,
}

/// The HTML changelog (`changeLog`, base64 on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChangeLogHtml {
    /// Decoded HTML.
    Html(String),
    /// The server said the changelog is still being generated.
    Loading(String),
    /// Not in the response.
    Absent,
    /// Present but not decodable (bad base64 / not UTF-8): the reason.
    Undecodable(String),
}

/// A release in a changelog's `from` / `to`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeLogRelease {
    pub name: String,
    pub created: Option<String>,
    pub digest: Option<String>,
    pub promoted_from: Option<String>,
}

/// A component version line (`Kubernetes 1.35.1`, RHCOS...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeLogComponent {
    pub name: String,
    pub version: String,
    pub from: Option<String>,
}

/// One commit of an updated image.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeLogCommit {
    pub subject: String,
    pub pull_id: Option<u64>,
    pub pull_url: Option<String>,
    pub commit_id: Option<String>,
    pub commit_url: Option<String>,
    pub issues: BTreeMap<String, String>,
    pub bugs: BTreeMap<String, String>,
}

/// An image entry of a changelog (`updatedImages`, `newImages`...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeLogImage {
    /// Image name; may be a comma-joined list of images built from one repository.
    pub name: String,
    pub path: String,
    pub short_commit: Option<String>,
    pub commit: Option<String>,
    pub image_ref: Option<String>,
    pub commits: Vec<ChangeLogCommit>,
    pub full_change_log: Option<String>,
}

impl ChangeLogImage {
    /// The image names (the comma-joined `name` split).
    pub fn image_names(&self) -> Vec<String> {
        self.name.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    }

    /// `org/repo` from `path` (`https://github.com/<org>/<repo>[/tree/<sha>]`).
    pub fn org_repo(&self) -> Option<(String, String)> {
        github_org_repo(&self.path)
    }
}

/// `(org, repo)` of a `https://github.com/<org>/<repo>...` URL.
pub fn github_org_repo(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("https://github.com/").or_else(|| url.strip_prefix("http://github.com/"))?;
    let mut it = rest.split('/');
    let org = it.next().filter(|s| !s.is_empty())?;
    let repo = it.next().filter(|s| !s.is_empty())?;
    Some((org.to_string(), repo.trim_end_matches(".git").to_string()))
}

/// RPM package changes of one RHCOS variant between two payloads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeImageStream {
    /// Human name (`Red Hat Enterprise Linux CoreOS 10.2`).
    pub name: String,
    /// Image stream tag (`rhel-coreos`, `rhel-coreos-10`).
    pub tag: String,
    /// package → (old, new)
    pub changed: BTreeMap<String, (String, String)>,
    /// package → version
    pub added: BTreeMap<String, String>,
    /// package → version
    pub removed: BTreeMap<String, String>,
}

/// The JSON changelog (`changeLogJson`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeLogJson {
    pub from: ChangeLogRelease,
    pub to: ChangeLogRelease,
    pub components: Vec<ChangeLogComponent>,
    pub new_images: Vec<ChangeLogImage>,
    pub removed_images: Vec<ChangeLogImage>,
    pub rebuilt_images: Vec<ChangeLogImage>,
    pub updated_images: Vec<ChangeLogImage>,
}

/// A pull request named by a changelog.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PullRequest {
    pub org: String,
    pub repo: String,
    pub number: u64,
    pub url: String,
    /// The commit subject (usually the PR title).
    pub title: String,
    /// The image names built from the repository (comma-joined name of the changelog entry).
    pub component: String,
    pub images: Vec<String>,
    /// Jira / Bugzilla keys.
    pub issues: Vec<String>,
}

impl PullRequest {
    /// `org/repo#number`.
    pub fn key(&self) -> String {
        format!("{}/{}#{}", self.org, self.repo, self.number)
    }
}

/// Parses `https://github.com/<org>/<repo>/pull/<n>`.
pub fn parse_pr_url(url: &str) -> Option<(String, String, u64)> {
    let (org, repo) = github_org_repo(url)?;
    let rest = url.split("/pull/").nth(1)?;
    let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    Some((org, repo, n.parse().ok()?))
}

impl ChangeLogJson {
    /// Every pull request of the updated and new images, deduplicated by URL and
    /// sorted by (org, repo, number). Commits without a PR URL are skipped.
    pub fn pull_requests(&self) -> Vec<PullRequest> {
        let mut by_url: BTreeMap<String, PullRequest> = BTreeMap::new();
        for img in self.updated_images.iter().chain(self.new_images.iter()) {
            for c in &img.commits {
                let Some(url) = c.pull_url.as_deref().filter(|u| !u.is_empty()) else { continue };
                let Some((org, repo, number)) =
                    parse_pr_url(url).or_else(|| img.org_repo().and_then(|(o, r)| c.pull_id.map(|n| (o, r, n))))
                else {
                    continue;
                };
                let mut issues: Vec<String> = c.issues.keys().chain(c.bugs.keys()).cloned().collect();
                issues.sort();
                issues.dedup();
                by_url.entry(url.to_string()).or_insert_with(|| PullRequest {
                    org,
                    repo,
                    number,
                    url: url.to_string(),
                    title: c.subject.clone(),
                    component: img.name.clone(),
                    images: img.image_names(),
                    issues,
                });
            }
        }
        let mut out: Vec<PullRequest> = by_url.into_values().collect();
        out.sort_by(|a, b| (&a.org, &a.repo, a.number).cmp(&(&b.org, &b.repo, b.number)));
        out
    }

    /// Commits of updated images that carry no pull request (direct pushes).
    pub fn commits_without_pr(&self) -> usize {
        self.updated_images
            .iter()
            .flat_map(|i| i.commits.iter())
            .filter(|c| c.pull_url.as_deref().unwrap_or("").is_empty())
            .count()
    }
}

/// What a changelog request produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChangeLogState {
    Ready(Box<ChangeLogJson>),
    /// "the changelog is still loading": retry later; carries the server's words.
    Loading(String),
    /// The response had no changelog.
    Absent,
}

impl ChangeLogState {
    /// The JSON changelog when ready.
    pub fn json(&self) -> Option<&ChangeLogJson> {
        match self {
            ChangeLogState::Ready(j) => Some(j),
            _ => None,
        }
    }
}

/// Release info of one payload tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseInfo {
    pub name: String,
    pub phase: Phase,
    pub results: JobResults,
    pub upgrades_to: Vec<UpgradeEdge>,
    pub upgrades_from: Vec<UpgradeEdge>,
    pub change_log_html: ChangeLogHtml,
    pub change_log: ChangeLogState,
    pub node_image_streams: Vec<NodeImageStream>,
    /// Where the data came from when a snapshot says so (`_source`: `sippy`...).
    pub provenance: Option<String>,
}

impl ReleaseInfo {
    /// Counts of the blocking jobs by state.
    pub fn blocking_counts(&self) -> JobCounts {
        JobCounts::of(self.results.blocking.values())
    }

    /// True when the payload has at least one blocking job and every one succeeded.
    /// A force-accepted payload with failed blocking jobs is not green.
    pub fn all_blocking_succeeded(&self) -> bool {
        !self.results.blocking.is_empty() && self.results.blocking.values().all(|j| j.state == JobState::Succeeded)
    }
}

/// Job counts by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCounts {
    pub total: u32,
    pub succeeded: u32,
    pub failed: u32,
    pub pending: u32,
}

impl JobCounts {
    /// Counts a set of job results.
    pub fn of<'a>(jobs: impl Iterator<Item = &'a JobResult>) -> JobCounts {
        let mut c = JobCounts::default();
        for j in jobs {
            c.total += 1;
            match j.state {
                JobState::Succeeded => c.succeeded += 1,
                JobState::Failed => c.failed += 1,
                _ => c.pending += 1,
            }
        }
        c
    }

    /// `15 passed, 3 failed` / `18/18 passed` / `7 passed, 7 pending, 4 failed`.
    pub fn describe(&self) -> String {
        if self.total == 0 {
            return "no blocking jobs".to_string();
        }
        if self.succeeded == self.total {
            return format!("{}/{} passed", self.succeeded, self.total);
        }
        let mut parts = vec![format!("{} passed", self.succeeded)];
        if self.pending > 0 {
            parts.push(format!("{} pending", self.pending));
        }
        if self.failed > 0 {
            parts.push(format!("{} failed", self.failed));
        }
        parts.join(", ")
    }
}

/// Version, stream kind and architecture of a payload tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagParts {
    /// `4.22`
    pub version: String,
    /// `nightly`, `ci`...
    pub stream: String,
    /// `amd64` unless the tag names another.
    pub architecture: String,
    /// The release-controller stream name: `4.22.0-0.nightly[-arm64]`.
    pub stream_name: String,
}

/// Parses `<X.Y.Z>-0.<stream>[-<arch>]-YYYY-MM-DD-HHMMSS`.
pub fn parse_tag(tag: &str) -> Option<TagParts> {
    time::tag_timestamp(tag)?;
    let stream_name = tag[..tag.len() - 17].strip_suffix('-')?;
    let (ver, rest) = stream_name.split_once("-0.")?;
    let mut vparts = ver.split('.');
    let major = vparts.next()?;
    let minor = vparts.next()?;
    let (stream, arch) = match rest.rsplit_once('-') {
        Some((s, a)) if ["arm64", "ppc64le", "s390x", "multi", "amd64"].contains(&a) => (s, a),
        _ => (rest, "amd64"),
    };
    Some(TagParts {
        version: format!("{major}.{minor}"),
        stream: stream.to_string(),
        architecture: arch.to_string(),
        stream_name: stream_name.to_string(),
    })
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// A JSON number no field can hold as written (beyond 64-bit integers, or a fraction or
/// exponent beyond 2^53) refuses the answer, naming the field and the number as written.
pub(crate) fn refuse_inexact_numbers(json: &[u8], origin: &str) -> Result<(), PayloadError> {
    match citriage_formats::strict_json::first_inexact_number(json) {
        Some(x) => Err(PayloadError::invalid(origin, format!("field {:?}: {}", x.dotted(), x.problem()))),
        None => Ok(()),
    }
}

fn parse_json(bytes: &[u8], origin: &str) -> Result<Value, PayloadError> {
    let text = std::str::from_utf8(bytes).map_err(|e| PayloadError::invalid(origin, format!("not UTF-8: {e}")))?;
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.is_empty() {
        return Err(PayloadError::invalid(origin, "empty response"));
    }
    if is_loading_text(trimmed) && !trimmed.starts_with('{') {
        return Err(PayloadError::invalid(origin, "the changelog is still loading (HTML answer instead of JSON)"));
    }
    refuse_inexact_numbers(trimmed.as_bytes(), origin)?;
    serde_json::from_str(trimmed).map_err(|e| {
        let what = if trimmed.starts_with('<') { "HTML instead of JSON" } else { "malformed JSON" };
        PayloadError::invalid(origin, format!("{what}: {e}"))
    })
}

/// True when a text is the release controller's "still loading" answer.
pub fn is_loading_text(text: &str) -> bool {
    let l = text.to_ascii_lowercase();
    l.contains("changelog is still loading") || l.contains("loading changelog, this may take a while")
}

fn as_str(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn get<'a>(obj: &'a serde_json::Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| obj.get(*k)).filter(|v| !v.is_null())
}

fn get_str(obj: &serde_json::Map<String, Value>, keys: &[&str]) -> Option<String> {
    get(obj, keys).and_then(as_str)
}

fn get_u32(
    obj: &serde_json::Map<String, Value>,
    keys: &[&str],
    origin: &str,
    field: &str,
) -> Result<u32, PayloadError> {
    match get(obj, keys) {
        None => Ok(0),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(|x| x.min(u32::MAX as u64) as u32)
            .ok_or_else(|| PayloadError::invalid(origin, format!("{field}: expected a non-negative integer, got {n}"))),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map_err(|_| PayloadError::invalid(origin, format!("{field}: expected an integer, got {s:?}"))),
        Some(other) => Err(PayloadError::invalid(origin, format!("{field}: expected an integer, got {other}"))),
    }
}

fn obj<'a>(v: &'a Value, origin: &str, field: &str) -> Result<&'a serde_json::Map<String, Value>, PayloadError> {
    v.as_object().ok_or_else(|| PayloadError::invalid(origin, format!("{field}: expected an object")))
}

/// Parses `GET /api/v1/releasestream/<stream>/tags`.
pub fn parse_tag_list(bytes: &[u8], origin: &str) -> Result<TagList, PayloadError> {
    let v = parse_json(bytes, origin)?;
    let o = obj(&v, origin, "tag list")?;
    let name = get_str(o, &["name"]).unwrap_or_default();
    let mut tags = Vec::new();
    if let Some(arr) = get(o, &["tags"]) {
        let arr = arr.as_array().ok_or_else(|| PayloadError::invalid(origin, "tags: expected an array"))?;
        for (i, t) in arr.iter().enumerate() {
            let to = obj(t, origin, &format!("tags[{i}]"))?;
            let Some(tname) = get_str(to, &["name"]).filter(|s| !s.is_empty()) else {
                return Err(PayloadError::invalid(origin, format!("tags[{i}]: missing name")));
            };
            tags.push(TagEntry {
                name: tname,
                phase: Phase::parse(&get_str(to, &["phase"]).unwrap_or_default()),
                pull_spec: get_str(to, &["pullSpec"]).unwrap_or_default(),
                download_url: get_str(to, &["downloadURL", "downloadUrl"]).unwrap_or_default(),
            });
        }
    }
    let mut list = TagList { name, tags };
    list.sort_newest_first();
    Ok(list)
}

fn parse_job_result(v: &Value, origin: &str, field: &str) -> Result<JobResult, PayloadError> {
    let o = obj(v, origin, field)?;
    let url = get_str(o, &["url", "URL"]).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let mut previous = Vec::new();
    if let Some(p) = get(o, &["previousAttemptURLs", "previousAttemptUrls"]) {
        let arr = p
            .as_array()
            .ok_or_else(|| PayloadError::invalid(origin, format!("{field}.previousAttemptURLs: expected an array")))?;
        for u in arr {
            if let Some(s) = as_str(u).filter(|s| !s.trim().is_empty()) {
                previous.push(s.trim().to_string());
            }
        }
    }
    Ok(JobResult {
        state: JobState::parse(&get_str(o, &["state"]).unwrap_or_default()),
        url,
        retries: get_u32(o, &["retries"], origin, &format!("{field}.retries"))?,
        previous_attempt_urls: previous,
        transition_time: get_str(o, &["transitionTime"]).filter(|s| !s.is_empty()),
    })
}

fn parse_job_map(v: Option<&Value>, origin: &str, field: &str) -> Result<BTreeMap<String, JobResult>, PayloadError> {
    let mut out = BTreeMap::new();
    let Some(v) = v else { return Ok(out) };
    let o = obj(v, origin, field)?;
    for (k, jv) in o {
        if jv.is_null() {
            continue;
        }
        out.insert(k.clone(), parse_job_result(jv, origin, &format!("{field}.{k}"))?);
    }
    Ok(out)
}

fn parse_upgrades(v: Option<&Value>, origin: &str, field: &str) -> Result<Vec<UpgradeEdge>, PayloadError> {
    let mut out = Vec::new();
    let Some(v) = v else { return Ok(out) };
    let arr = v.as_array().ok_or_else(|| PayloadError::invalid(origin, format!("{field}: expected an array")))?;
    for (i, e) in arr.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let o = obj(e, origin, &f)?;
        let mut history = BTreeMap::new();
        if let Some(h) = get(o, &["History", "history"]) {
            let ho = obj(h, origin, &format!("{f}.History"))?;
            for (k, hv) in ho {
                if !hv.is_null() {
                    history.insert(k.clone(), parse_job_result(hv, origin, &format!("{f}.History"))?);
                }
            }
        }
        out.push(UpgradeEdge {
            from: get_str(o, &["From", "from"]).unwrap_or_default(),
            to: get_str(o, &["To", "to"]).unwrap_or_default(),
            success: get_u32(o, &["Success", "success"], origin, &format!("{f}.Success"))?,
            failure: get_u32(o, &["Failure", "failure"], origin, &format!("{f}.Failure"))?,
            total: get_u32(o, &["Total", "total"], origin, &format!("{f}.Total"))?,
            history,
        });
    }
    Ok(out)
}

/// Decodes standard or URL-safe base64 (padding optional, whitespace ignored).
pub fn decode_base64(input: &str) -> Result<Vec<u8>, String> {
    fn val(c: u8) -> Option<u8> {
        match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' | b'-' => Some(62),
            b'/' | b'_' => Some(63),
            _ => None,
        }
    }
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut seen_pad = false;
    for (i, &c) in input.as_bytes().iter().enumerate() {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            seen_pad = true;
            continue;
        }
        if seen_pad {
            return Err(format!("data after padding at byte {i}"));
        }
        let v = val(c).ok_or_else(|| format!("invalid base64 character {:?} at byte {i}", c as char))?;
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return Err("truncated base64 input".into());
    }
    Ok(out)
}

fn parse_release(o: &serde_json::Map<String, Value>, origin: &str) -> Result<ChangeLogRelease, PayloadError> {
    let _ = origin;
    Ok(ChangeLogRelease {
        name: get_str(o, &["name"]).unwrap_or_default(),
        created: get_str(o, &["created"]),
        digest: get_str(o, &["digest"]),
        promoted_from: get_str(o, &["promotedFrom"]),
    })
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    if let Some(Value::Object(o)) = v {
        for (k, v) in o {
            m.insert(k.clone(), as_str(v).unwrap_or_default());
        }
    }
    m
}

fn parse_images(v: Option<&Value>, origin: &str, field: &str) -> Result<Vec<ChangeLogImage>, PayloadError> {
    let mut out = Vec::new();
    let Some(v) = v else { return Ok(out) };
    let arr = v.as_array().ok_or_else(|| PayloadError::invalid(origin, format!("{field}: expected an array")))?;
    for (i, e) in arr.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let o = obj(e, origin, &f)?;
        let mut commits = Vec::new();
        if let Some(cv) = get(o, &["commits"]) {
            let ca = cv
                .as_array()
                .ok_or_else(|| PayloadError::invalid(origin, format!("{f}.commits: expected an array")))?;
            for (j, c) in ca.iter().enumerate() {
                let co = obj(c, origin, &format!("{f}.commits[{j}]"))?;
                let pull_id = match get(co, &["pullID", "pullId"]) {
                    Some(Value::Number(n)) => n.as_u64().filter(|n| *n > 0),
                    Some(Value::String(s)) => s.parse().ok().filter(|n| *n > 0),
                    _ => None,
                };
                commits.push(ChangeLogCommit {
                    subject: get_str(co, &["subject"]).unwrap_or_default(),
                    pull_id,
                    pull_url: get_str(co, &["pullURL", "pullUrl"]).filter(|s| !s.is_empty()),
                    commit_id: get_str(co, &["commitID", "commitId"]).filter(|s| !s.is_empty()),
                    commit_url: get_str(co, &["commitURL", "commitUrl"]).filter(|s| !s.is_empty()),
                    issues: string_map(get(co, &["issues"])),
                    bugs: string_map(get(co, &["bugs"])),
                });
            }
        }
        out.push(ChangeLogImage {
            name: get_str(o, &["name"]).unwrap_or_default(),
            path: get_str(o, &["path"]).unwrap_or_default(),
            short_commit: get_str(o, &["shortCommit"]),
            commit: get_str(o, &["commit"]),
            image_ref: get_str(o, &["imageRef"]),
            commits,
            full_change_log: get_str(o, &["fullChangeLog"]),
        });
    }
    Ok(out)
}

/// Parses a `changeLogJson` object.
pub fn parse_changelog_json(v: &Value, origin: &str) -> Result<ChangeLogJson, PayloadError> {
    let o = obj(v, origin, "changeLogJson")?;
    let from = match get(o, &["from"]) {
        Some(f) => parse_release(obj(f, origin, "changeLogJson.from")?, origin)?,
        None => ChangeLogRelease::default(),
    };
    let to = match get(o, &["to"]) {
        Some(f) => parse_release(obj(f, origin, "changeLogJson.to")?, origin)?,
        None => ChangeLogRelease::default(),
    };
    let mut components = Vec::new();
    if let Some(cv) = get(o, &["components"]) {
        let ca = cv
            .as_array()
            .ok_or_else(|| PayloadError::invalid(origin, "changeLogJson.components: expected an array"))?;
        for c in ca {
            if let Some(co) = c.as_object() {
                components.push(ChangeLogComponent {
                    name: get_str(co, &["name"]).unwrap_or_default(),
                    version: get_str(co, &["version"]).unwrap_or_default(),
                    from: get_str(co, &["from"]),
                });
            }
        }
    }
    Ok(ChangeLogJson {
        from,
        to,
        components,
        new_images: parse_images(get(o, &["newImages"]), origin, "changeLogJson.newImages")?,
        removed_images: parse_images(get(o, &["removedImages"]), origin, "changeLogJson.removedImages")?,
        rebuilt_images: parse_images(get(o, &["rebuiltImages"]), origin, "changeLogJson.rebuiltImages")?,
        updated_images: parse_images(get(o, &["updatedImages"]), origin, "changeLogJson.updatedImages")?,
    })
}

fn parse_node_image_streams(v: Option<&Value>, origin: &str) -> Result<Vec<NodeImageStream>, PayloadError> {
    let mut out = Vec::new();
    let Some(v) = v else { return Ok(out) };
    let arr = v.as_array().ok_or_else(|| PayloadError::invalid(origin, "nodeImageStreams: expected an array"))?;
    for (i, s) in arr.iter().enumerate() {
        let so = obj(s, origin, &format!("nodeImageStreams[{i}]"))?;
        let mut nis = NodeImageStream {
            name: get_str(so, &["name"]).unwrap_or_default(),
            tag: get_str(so, &["tag"]).unwrap_or_default(),
            ..Default::default()
        };
        if let Some(Value::Object(d)) = get(so, &["rpmDiff"]) {
            if let Some(Value::Object(ch)) = d.get("changed") {
                for (pkg, pv) in ch {
                    let (old, new) = match pv {
                        Value::Object(po) => {
                            (get_str(po, &["old"]).unwrap_or_default(), get_str(po, &["new"]).unwrap_or_default())
                        }
                        other => (String::new(), as_str(other).unwrap_or_default()),
                    };
                    nis.changed.insert(pkg.clone(), (old, new));
                }
            }
            nis.added = string_map(d.get("added"));
            nis.removed = string_map(d.get("removed"));
        }
        out.push(nis);
    }
    Ok(out)
}

/// Decodes the `changeLog` field: base64 HTML, or (older servers) an object.
fn decode_change_log(v: Option<&Value>, origin: &str) -> Result<(ChangeLogHtml, Option<ChangeLogJson>), PayloadError> {
    match v {
        None => Ok((ChangeLogHtml::Absent, None)),
        Some(Value::String(s)) if s.trim().is_empty() => Ok((ChangeLogHtml::Absent, None)),
        Some(Value::String(s)) => {
            // Plain HTML (not base64) is accepted as is.
            if s.trim_start().starts_with('<') {
                let html = s.clone();
                return Ok(if is_loading_text(&html) {
                    (ChangeLogHtml::Loading(first_text(&html)), None)
                } else {
                    (ChangeLogHtml::Html(html), None)
                });
            }
            match decode_base64(s) {
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(html) if is_loading_text(&html) => Ok((ChangeLogHtml::Loading(first_text(&html)), None)),
                    Ok(html) => Ok((ChangeLogHtml::Html(html), None)),
                    Err(e) => Ok((
                        ChangeLogHtml::Undecodable(format!("changeLog is not UTF-8 after base64 decoding: {e}")),
                        None,
                    )),
                },
                Err(e) => Ok((ChangeLogHtml::Undecodable(format!("changeLog is not base64: {e}")), None)),
            }
        }
        Some(o @ Value::Object(_)) => Ok((ChangeLogHtml::Absent, Some(parse_changelog_json(o, origin)?))),
        Some(other) => {
            Err(PayloadError::invalid(origin, format!("changeLog: expected a base64 string, got {}", json_kind(other))))
        }
    }
}

/// The first sentence-like text of an HTML fragment (tags stripped), for messages.
pub fn first_text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = out.split_whitespace().collect();
    let text = words.join(" ");
    let lower = text.to_ascii_lowercase();
    if let Some(i) = lower.find("the changelog is still loading") {
        let end = text[i..].find('.').map(|e| i + e + 1).unwrap_or(text.len());
        return text[i..end].to_string();
    }
    text.chars().take(200).collect()
}

/// Parses `GET /api/v1/releasestream/<stream>/release/<tag>[?from=...]`.
pub fn parse_release_info(bytes: &[u8], origin: &str) -> Result<ReleaseInfo, PayloadError> {
    let v = parse_json(bytes, origin)?;
    release_info_from_value(&v, origin)
}

/// Builds a [`ReleaseInfo`] from already parsed JSON.
pub fn release_info_from_value(v: &Value, origin: &str) -> Result<ReleaseInfo, PayloadError> {
    let o = obj(v, origin, "release info")?;
    let results = match get(o, &["results"]) {
        None => JobResults::default(),
        Some(r) => {
            let ro = obj(r, origin, "results")?;
            JobResults {
                blocking: parse_job_map(get(ro, &["blockingJobs"]), origin, "results.blockingJobs")?,
                informing: parse_job_map(get(ro, &["informingJobs"]), origin, "results.informingJobs")?,
                async_jobs: parse_job_map(get(ro, &["asyncJobs"]), origin, "results.asyncJobs")?,
                pending: parse_job_map(get(ro, &["pendingJobs"]), origin, "results.pendingJobs")?,
            }
        }
    };
    let (html, legacy_json) = decode_change_log(get(o, &["changeLog"]), origin)?;
    let change_log = match get(o, &["changeLogJson"]) {
        Some(j @ Value::Object(_)) => ChangeLogState::Ready(Box::new(parse_changelog_json(j, origin)?)),
        Some(Value::String(s)) if is_loading_text(s) => ChangeLogState::Loading(first_text(s)),
        Some(other @ (Value::Array(_) | Value::Number(_) | Value::Bool(_))) => {
            return Err(PayloadError::invalid(
                origin,
                format!("changeLogJson: expected an object, got {}", json_kind(other)),
            ))
        }
        _ => match (legacy_json, &html) {
            (Some(j), _) => ChangeLogState::Ready(Box::new(j)),
            (None, ChangeLogHtml::Loading(m)) => ChangeLogState::Loading(m.clone()),
            _ => match get_str(o, &["error", "message"]) {
                Some(m) if is_loading_text(&m) => ChangeLogState::Loading(first_text(&m)),
                _ => ChangeLogState::Absent,
            },
        },
    };
    let node_image_streams = parse_node_image_streams(get(o, &["nodeImageStreams"]), origin)?;
    Ok(ReleaseInfo {
        name: get_str(o, &["name"]).unwrap_or_default(),
        phase: Phase::parse(&get_str(o, &["phase"]).unwrap_or_default()),
        results,
        upgrades_to: parse_upgrades(get(o, &["upgradesTo"]), origin, "upgradesTo")?,
        upgrades_from: parse_upgrades(get(o, &["upgradesFrom"]), origin, "upgradesFrom")?,
        change_log_html: html,
        change_log,
        node_image_streams,
        provenance: get_str(o, &["_source"]),
    })
}

/// Parses the answer to a changelog request (`.../release/<tag>?from=<from>` or a
/// snapshot's `changelog.json`): a release-info-shaped JSON, a bare changelog
/// object, or the HTML "still loading" page.
pub fn parse_changelog_response(
    bytes: &[u8],
    origin: &str,
) -> Result<(ChangeLogState, Vec<NodeImageStream>), PayloadError> {
    let text = String::from_utf8_lossy(bytes);
    let t = text.trim();
    if !t.starts_with('{') && is_loading_text(t) {
        return Ok((ChangeLogState::Loading(first_text(t)), Vec::new()));
    }
    let v = parse_json(bytes, origin)?;
    let o = obj(&v, origin, "changelog")?;
    if o.contains_key("updatedImages")
        || (o.contains_key("from") && o.contains_key("to") && !o.contains_key("changeLogJson"))
    {
        return Ok((
            ChangeLogState::Ready(Box::new(parse_changelog_json(&v, origin)?)),
            parse_node_image_streams(get(o, &["nodeImageStreams"]), origin)?,
        ));
    }
    let info = release_info_from_value(&v, origin)?;
    Ok((info.change_log, info.node_image_streams))
}

/// All the image names, repositories and PR numbers a changelog mentions, for lookups.
pub fn changelog_repos(cl: &ChangeLogJson) -> BTreeSet<String> {
    cl.updated_images.iter().filter_map(|i| i.org_repo()).map(|(o, r)| format!("{o}/{r}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_too_large_are_refused_as_written() {
        let e = parse_release_info(
            br#"{"results": {"blockingJobs": {"j": {"state": "Failed", "retries": 123456789012345678901234567890}}}}"#,
            "info.json",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(
                r#"field "results.blockingJobs.j.retries": the number 123456789012345678901234567890 is too large"#
            ),
            "{e}"
        );
        let e = parse_tag_list(
            br#"{"name": "4.18", "tags": [{"name": "t", "phase": "Accepted", "n": 1e400}]}"#,
            "tags.json",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(r#"field "tags[0].n": the number 1e400 is too large"#), "{e}");
        let e =
            crate::jobhistory::parse_job_runs(b"{\"prowjob_start\": 1e999}\n", "runs.json").unwrap_err().to_string();
        assert!(e.contains("the number 1e999 is too large"), "{e}");
    }

    #[test]
    fn base64_decodes() {
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64("aGVsbG8").unwrap(), b"hello");
        assert_eq!(decode_base64("aGVs\nbG8=").unwrap(), b"hello");
        assert!(decode_base64("aGV$").is_err());
        assert!(decode_base64("a").is_err());
    }

    #[test]
    fn tag_parts() {
        let p = parse_tag("4.22.0-0.nightly-2026-03-04-084819").unwrap();
        assert_eq!((p.version.as_str(), p.stream.as_str(), p.architecture.as_str()), ("4.22", "nightly", "amd64"));
        assert_eq!(p.stream_name, "4.22.0-0.nightly");
        let p = parse_tag("4.22.0-0.nightly-arm64-2026-03-04-084819").unwrap();
        assert_eq!((p.stream.as_str(), p.architecture.as_str()), ("nightly", "arm64"));
        assert_eq!(p.stream_name, "4.22.0-0.nightly-arm64");
        let p = parse_tag("4.18.0-0.okd-scos-2026-06-10-003203").unwrap();
        assert_eq!(p.stream, "okd-scos");
        assert!(parse_tag("4.12.1").is_none());
        assert!(parse_tag("é2026-03-04-084819").is_none());
        assert!(parse_tag("4.22.0-0.nightlyé2026-03-04-084819").is_none());
    }

    #[test]
    fn prow_urls() {
        let u = "https://prow.ci.openshift.org/view/gs/test-platform-results/logs/periodic-ci-x-e2e-aws/2029149691546963968";
        assert_eq!(prow_job_from_url(u).as_deref(), Some("periodic-ci-x-e2e-aws"));
        assert_eq!(build_id_from_url(u).as_deref(), Some("2029149691546963968"));
        assert_eq!(prow_job_from_url("").as_deref(), None);
    }

    #[test]
    fn quirks() {
        let j = br#"{"name":"t","phase":"Ready","results":{"blockingJobs":{"a":{"state":"Pending","url":""},"b":{"state":"Failed","url":"https://prow/view/gs/b/logs/job-b/12","retries":2,"previousAttemptURLs":["https://prow/view/gs/b/logs/job-b/11"]}},"informingJobs":null},
          "upgradesTo":[{"From":"x","To":"t","Success":1,"Failure":0,"Total":1,"History":{"u":{"state":"Succeeded","url":"u"}}}],
          "changeLog":"PHA+dGhlIGNoYW5nZWxvZyBpcyBzdGlsbCBsb2FkaW5nLCBpZiB0aGlzIGlzIHRoZSBmaXJzdCBhY2Nlc3M8L3A+"}"#;
        let r = parse_release_info(j, "test").unwrap();
        assert_eq!(r.results.blocking["a"].url, None);
        assert_eq!(r.results.blocking["a"].retries, 0);
        assert_eq!(r.results.blocking["b"].retries, 2);
        assert_eq!(r.upgrades_to[0].from, "x");
        assert!(matches!(r.change_log, ChangeLogState::Loading(_)));
        assert!(parse_release_info(b"<p>oops</p>", "x").is_err());
        let e =
            parse_release_info(br#"{"results":{"blockingJobs":{"a":{"state":"Failed","retries":"lots"}}}}"#, "f.json")
                .unwrap_err();
        assert!(e.to_string().contains("f.json") && e.to_string().contains("retries"), "{e}");
    }
}
