//! Prow's documents: `started.json`, `finished.json`, `prowjob.json`, the
//! `prowjobs.js` item, Deck job-history pages, GCS paths and snowflake build
//! ids. Serialised from structs (fixed field order) and `BTreeMap`s so the
//! bytes never depend on hash order or serde features.

use std::collections::BTreeMap;

use serde::Serialize;

use citriage_model::time;

/// Prow's snowflake epoch (milliseconds).
const SNOWFLAKE_EPOCH_MS: i64 = 1_288_834_974_657;

/// A build id in Prow's snowflake layout: milliseconds since the epoch in
/// the high bits, so ids grow with start time.
pub fn build_id(start: i64, salt: u64) -> u64 {
    let ms = (start * 1000 - SNOWFLAKE_EPOCH_MS).max(0) as u64;
    (ms << 22) | (salt & 0x3f_ffff)
}

/// Final state of a build as Prow records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Success,
    Failure,
    Aborted,
    Error,
    Pending,
}

impl State {
    /// `finished.json` result (none for error/pending).
    pub fn result(self) -> Option<&'static str> {
        match self {
            State::Success => Some("SUCCESS"),
            State::Failure => Some("FAILURE"),
            State::Aborted => Some("ABORTED"),
            State::Error | State::Pending => None,
        }
    }
    pub fn description(self) -> &'static str {
        match self {
            State::Success => "Job succeeded.",
            State::Failure => "Job failed.",
            State::Aborted => "Job aborted.",
            State::Error => "Pod can not be created",
            State::Pending => "Job triggered.",
        }
    }
}

/// One pull request reference.
#[derive(Clone, Debug, Serialize)]
pub struct Pull {
    pub number: u32,
    pub author: String,
    pub sha: String,
    pub title: String,
    pub link: String,
    pub commit_link: String,
    pub author_link: String,
}

/// Git references of a build (`spec.refs`, `spec.extra_refs`).
#[derive(Clone, Debug, Serialize)]
pub struct Refs {
    pub org: String,
    pub repo: String,
    pub repo_link: String,
    pub base_ref: String,
    pub base_sha: String,
    pub base_link: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pulls: Vec<Pull>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_alias: Option<String>,
}

impl Refs {
    pub fn new(full: &str, base_ref: &str, base_sha: &str) -> Refs {
        let (org, repo) = full.split_once('/').unwrap_or((full, full));
        Refs {
            org: org.to_string(),
            repo: repo.to_string(),
            repo_link: format!("https://github.com/{full}"),
            base_ref: base_ref.to_string(),
            base_sha: base_sha.to_string(),
            base_link: format!("https://github.com/{full}/commit/{base_sha}"),
            pulls: Vec::new(),
            path_alias: if org == "kubernetes" {
                Some(format!("k8s.io/{repo}"))
            } else if org == "kubernetes-sigs" {
                Some(format!("sigs.k8s.io/{repo}"))
            } else {
                None
            },
        }
    }

    pub fn full(&self) -> String {
        format!("{}/{}", self.org, self.repo)
    }

    /// The `started.json` value: `base:sha[,pr:sha...]`.
    pub fn started_value(&self) -> String {
        let mut s = format!("{}:{}", self.base_ref, self.base_sha);
        for p in &self.pulls {
            s.push_str(&format!(",{}:{}", p.number, p.sha));
        }
        s
    }
}

#[derive(Serialize)]
pub struct Started {
    pub timestamp: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull: Option<String>,
    pub repos: BTreeMap<String, String>,
    #[serde(rename = "repo-version")]
    pub repo_version: String,
    #[serde(rename = "repo-commit")]
    pub repo_commit: String,
}

#[derive(Serialize)]
pub struct Finished {
    pub timestamp: i64,
    pub passed: bool,
    pub result: &'static str,
    pub revision: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct Meta {
    name: String,
    namespace: &'static str,
    #[serde(rename = "resourceVersion")]
    resource_version: String,
    #[serde(rename = "creationTimestamp")]
    creation_timestamp: String,
    labels: BTreeMap<&'static str, String>,
    annotations: BTreeMap<&'static str, String>,
}

#[derive(Serialize)]
struct Resources {
    requests: BTreeMap<&'static str, &'static str>,
    limits: BTreeMap<&'static str, &'static str>,
}

#[derive(Serialize)]
struct Container {
    image: String,
    command: Vec<String>,
    args: Vec<String>,
    resources: Resources,
}

#[derive(Serialize)]
struct PodSpec {
    containers: Vec<Container>,
}

#[derive(Serialize)]
struct GcsConfig {
    bucket: String,
    path_strategy: &'static str,
    default_org: &'static str,
    default_repo: &'static str,
}

#[derive(Serialize)]
struct Decoration {
    timeout: &'static str,
    grace_period: &'static str,
    gcs_configuration: GcsConfig,
    gcs_credentials_secret: &'static str,
}

#[derive(Serialize)]
struct Spec {
    #[serde(rename = "type")]
    kind: &'static str,
    agent: &'static str,
    cluster: &'static str,
    namespace: &'static str,
    job: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    refs: Option<Refs>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    extra_refs: Vec<Refs>,
    report: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<String>,
    rerun_command: String,
    pod_spec: PodSpec,
    decoration_config: Decoration,
}

#[derive(Serialize)]
struct Status {
    #[serde(rename = "startTime")]
    start_time: String,
    #[serde(rename = "pendingTime", skip_serializing_if = "Option::is_none")]
    pending_time: Option<String>,
    #[serde(rename = "completionTime", skip_serializing_if = "Option::is_none")]
    completion_time: Option<String>,
    state: State,
    description: String,
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pod_name: Option<String>,
    build_id: String,
}

#[derive(Serialize)]
struct ProwJob {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: Meta,
    spec: Spec,
    status: Status,
}

/// Everything `prowjob.json` needs.
pub struct JobDoc<'a> {
    pub uid: String,
    pub job: &'a str,
    pub prow_type: &'static str,
    pub cluster: &'static str,
    pub bucket: &'a str,
    pub build_id: u64,
    pub start: i64,
    pub end: Option<i64>,
    pub state: State,
    pub description: String,
    pub url: String,
    /// Main refs (presubmit/postsubmit) or `None` for periodics.
    pub refs: Option<Refs>,
    pub extra_refs: Vec<Refs>,
    pub image: String,
    pub args: Vec<String>,
}

/// Where TestGrid shows a job, as its config's annotations would say: presubmits on
/// `presubmits-kubernetes-blocking`, periodics by their name on the release-blocking
/// board (conformance, the default GCE e2e and node suites, unit and verify jobs),
/// the informing board (other e2e suites) or their SIG's board; the tab drops the
/// `ci-kubernetes-` prefix. OpenShift's payload jobs (`periodic-ci-…`) name none.
pub fn testgrid_of(job: &str) -> Option<(String, Option<String>)> {
    if job.starts_with("periodic-ci-") || job.starts_with("release-openshift-") {
        return None;
    }
    if job.starts_with("pull-") || job.starts_with("pr:") {
        return Some(("presubmits-kubernetes-blocking".into(), None));
    }
    let blocking = ["conformance", "e2e-gci-gce", "e2e-gce", "node-kubelet", "unit", "verify", "build"];
    let board = if blocking.iter().any(|b| job.contains(b)) {
        "sig-release-master-blocking, google-gce".to_string()
    } else if job.contains("e2e") {
        "sig-release-master-informing".to_string()
    } else {
        let sig = ["node", "storage", "network", "scalability", "apps", "cli"]
            .into_iter()
            .find(|s| job.contains(s))
            .unwrap_or("testing");
        format!("sig-{sig}-misc")
    };
    let tab = job.strip_prefix("ci-kubernetes-").map(str::to_string);
    Some((board, tab))
}

/// Serialises a ProwJob (pretty for `prowjob.json`, compact for `prowjobs.js`).
pub fn prowjob_json(d: &JobDoc, pretty: bool) -> Vec<u8> {
    let mut labels = BTreeMap::new();
    labels.insert("created-by-prow", "true".to_string());
    labels.insert("prow.k8s.io/build-id", d.build_id.to_string());
    labels.insert("prow.k8s.io/id", d.uid.clone());
    labels.insert("prow.k8s.io/job", d.job.chars().take(63).collect());
    labels.insert("prow.k8s.io/type", d.prow_type.to_string());
    if let Some(r) = &d.refs {
        labels.insert("prow.k8s.io/refs.org", r.org.clone());
        labels.insert("prow.k8s.io/refs.repo", r.repo.clone());
        labels.insert("prow.k8s.io/refs.base_ref", r.base_ref.clone());
        if let Some(p) = r.pulls.first() {
            labels.insert("prow.k8s.io/refs.pull", p.number.to_string());
        }
    }
    let mut annotations = BTreeMap::new();
    annotations.insert("prow.k8s.io/job", d.job.to_string());
    if let Some((dashboards, tab)) = testgrid_of(d.job) {
        annotations.insert("testgrid-dashboards", dashboards);
        if let Some(t) = tab {
            annotations.insert("testgrid-tab-name", t);
        }
    }
    let presubmit = d.prow_type == "presubmit";
    let mut req = BTreeMap::new();
    req.insert("cpu", "4");
    req.insert("memory", "14Gi");
    let job = ProwJob {
        kind: "ProwJob",
        api_version: "prow.k8s.io/v1",
        metadata: Meta {
            name: d.uid.clone(),
            namespace: "default",
            resource_version: (d.build_id % 1_000_000_007).to_string(),
            creation_timestamp: time::rfc3339(d.start),
            labels,
            annotations,
        },
        spec: Spec {
            kind: d.prow_type,
            agent: "kubernetes",
            cluster: d.cluster,
            namespace: "test-pods",
            job: d.job.to_string(),
            refs: d.refs.clone(),
            extra_refs: d.extra_refs.clone(),
            report: presubmit,
            context: if presubmit { Some(d.job.to_string()) } else { None },
            rerun_command: if presubmit { format!("/test {}", d.job) } else { String::new() },
            pod_spec: PodSpec {
                containers: vec![Container {
                    image: d.image.clone(),
                    command: vec!["runner.sh".to_string()],
                    args: d.args.clone(),
                    resources: Resources { requests: req.clone(), limits: req },
                }],
            },
            decoration_config: Decoration {
                timeout: "2h0m0s",
                grace_period: "15m0s",
                gcs_configuration: GcsConfig {
                    bucket: d.bucket.to_string(),
                    path_strategy: "legacy",
                    default_org: "kubernetes",
                    default_repo: "kubernetes",
                },
                gcs_credentials_secret: "gcs-credentials",
            },
        },
        status: Status {
            start_time: time::rfc3339(d.start),
            pending_time: if d.state == State::Error { None } else { Some(time::rfc3339(d.start + 20)) },
            completion_time: d.end.map(time::rfc3339),
            state: d.state,
            description: d.description.clone(),
            url: d.url.clone(),
            pod_name: if d.state == State::Error { None } else { Some(d.uid.clone()) },
            build_id: d.build_id.to_string(),
        },
    };
    let r = if pretty { serde_json::to_vec_pretty(&job) } else { serde_json::to_vec(&job) };
    r.unwrap_or_default()
}

/// The GCS folder of a build relative to the bucket.
pub fn build_dir(prow_type: &str, job: &str, id: u64, repo_full: &str, pr: Option<u32>) -> String {
    match (prow_type, pr) {
        ("batch", _) => format!("pr-logs/pull/batch/{job}/{id}"),
        ("presubmit", Some(n)) => {
            let seg = pr_segment(repo_full);
            if seg.is_empty() {
                format!("pr-logs/pull/{n}/{job}/{id}")
            } else {
                format!("pr-logs/pull/{seg}/{n}/{job}/{id}")
            }
        }
        _ => format!("logs/{job}/{id}"),
    }
}

/// The `pr-logs/pull/<segment>/` part: empty for kubernetes/kubernetes, the
/// repository name for other kubernetes repos, `org_repo` otherwise.
pub fn pr_segment(full: &str) -> String {
    match full.split_once('/') {
        Some(("kubernetes", "kubernetes")) => String::new(),
        Some(("kubernetes", repo)) => repo.to_string(),
        Some((org, repo)) => format!("{org}_{repo}"),
        None => full.to_string(),
    }
}

/// One entry of Deck's job-history `allBuilds`.
#[derive(Serialize, Clone, Debug)]
pub struct HistoryEntry {
    #[serde(rename = "SpyglassLink")]
    pub spyglass_link: String,
    #[serde(rename = "ID")]
    pub id: String,
    #[serde(rename = "Started")]
    pub started: String,
    #[serde(rename = "Duration")]
    pub duration: i64,
    #[serde(rename = "Result")]
    pub result: String,
    #[serde(rename = "Refs")]
    pub refs: Option<Refs>,
}

/// Renders one job-history page (Deck's HTML with `var allBuilds = [...]`).
pub fn history_page(
    name: &str,
    entries: &[HistoryEntry],
    older: Option<&str>,
    newer: Option<&str>,
    total: usize,
) -> Vec<u8> {
    let json = serde_json::to_string(entries).unwrap_or_else(|_| "[]".to_string());
    let mut s = String::with_capacity(json.len() + 1024);
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"UTF-8\">\n");
    s.push_str(&format!("<title>Job History: {name}</title>\n"));
    s.push_str("<script type=\"text/javascript\">\n");
    s.push_str(&format!("var allBuilds = {json};\n"));
    s.push_str("</script>\n</head>\n<body>\n");
    s.push_str(&format!("<h2>Job History: {name}</h2>\n"));
    s.push_str(&format!("<p>Showing {} of {total} builds</p>\n", entries.len()));
    if let Some(n) = newer {
        s.push_str(&format!("<a href=\"{n}\">&lt;- Newer Runs</a>\n"));
    }
    if let Some(o) = older {
        s.push_str(&format!("<a href=\"{o}\">Older Runs -&gt;</a>\n"));
    }
    s.push_str("<table id=\"builds\"></table>\n</body>\n</html>\n");
    s.into_bytes()
}
