//! The OpenShift side: a `4.22.0-0.nightly` release stream served as
//! release-controller API responses (tags newest first, release info with
//! blocking/informing job results, retries, upgrade edges, base64 changelog
//! and `changeLogJson`), the payload jobs' GCS folders in
//! `test-platform-results`, the PRs' diffs, CI-configuration changes, and the
//! planted causes: a culprit PR whose diff holds the symbol the failure log
//! names, an infrastructure-only rejection, a CI-config rejection, a
//! pre-existing product bug, retries and a forced accept.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::catalog::{self, Class, SuiteKind};
use crate::junit::{self, Case, JunitFile, Outcome, Root, Style, Suite};
use crate::logs::{self, LogCause, LogSpec, LogTestFailure};
use crate::out::{Sink, SynthError};
use crate::prow::{self, HistoryEntry, JobDoc, Refs, State};
use crate::rng::{fake_sha, Rng};
use crate::suites;
use crate::text::{base64, Vars};
use citriage_model::time::{self, DAY, HOUR, MINUTE};

pub const STREAM: &str = "4.22.0-0.nightly";
const BUCKET: &str = "test-platform-results";
const JOB_PREFIX: &str = "periodic-ci-openshift-release-main-nightly-4.22-";

/// Blocking verification jobs: short name, Prow job name suffix, platform.
const BLOCKING: &[(&str, &str)] = &[
    ("aws-ovn-serial-1of2", "e2e-aws-ovn-serial-1of2"),
    ("aws-ovn-serial-2of2", "e2e-aws-ovn-serial-2of2"),
    ("aws-ovn-techpreview", "e2e-aws-ovn-techpreview"),
    ("gcp-ovn", "e2e-gcp-ovn"),
    ("metal-ipi-ovn-ipv4", "e2e-metal-ipi-ovn-ipv4"),
    ("console-aws", "console-aws"),
    ("aggregated-aws-ovn-upgrade-4.22-micro", "aggregated"),
];
const INFORMING: &[(&str, &str)] = &[
    ("aws-ovn-upgrade-rollback", "e2e-aws-ovn-upgrade-rollback"),
    ("hypershift-aws-upgrade", "e2e-hypershift-aws-upgrade"),
    ("aws-ovn-upgrade-out-of-change", "e2e-aws-ovn-upgrade-out-of-change"),
    ("vsphere-ovn", "e2e-vsphere-ovn"),
    ("azure-ovn-techpreview-serial", "e2e-azure-ovn-techpreview-serial"),
    ("aws-ovn-single-node", "e2e-aws-ovn-single-node"),
];

/// Components: (repo, image names as the changelog lists them).
const COMPONENTS: &[(&str, &str)] = &[
    ("openshift/cluster-network-operator", "cluster-network-operator"),
    ("openshift/ovn-kubernetes", "ovn-kubernetes, ovn-kubernetes-microshift"),
    ("openshift/installer", "baremetal-installer, installer, installer-artifacts"),
    ("openshift/machine-config-operator", "machine-config-operator"),
    ("openshift/cluster-version-operator", "cluster-version-operator"),
    ("openshift/kubernetes", "hyperkube"),
    ("openshift/console", "console"),
    ("openshift/hypershift", "hypershift"),
    ("openshift/cluster-kube-apiserver-operator", "cluster-kube-apiserver-operator"),
    ("openshift/cluster-ingress-operator", "cluster-ingress-operator"),
    ("openshift/api", "cluster-config-api"),
    ("openshift/origin", "tests"),
    ("openshift/oc", "cli, cli-artifacts, deployer"),
    ("openshift/cluster-monitoring-operator", "cluster-monitoring-operator"),
    ("openshift/aws-ebs-csi-driver-operator", "aws-ebs-csi-driver-operator"),
];
const CULPRIT_SYMBOLS: &[&str] = &[
    "reconcileEgressFirewallStatus",
    "renderOVNKubernetesMasterConfig",
    "ensureGatewayRouterPolicy",
    "validateClusterNetworkMTU",
    "syncNetworkDiagnosticsTarget",
];
const PR_SUBJECTS: &[&str] = &[
    "Bump golang.org/x/net to v0.47.0",
    "Update owners for the operator",
    "Add metrics for reconcile latency",
    "Fix typo in condition message",
    "Refactor status reporting",
    "Enable new featuregate in TechPreview",
    "Drop deprecated flag handling",
    "Rebase to upstream 1.35",
    "Improve retry backoff on API conflicts",
    "Add e2e coverage for upgrade path",
    "ART image consistency update",
    "Log the lease holder on timeout",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    Normal,
    CulpritIntroduced,
    /// The culprit's failure continues, but the failing runs lost their artifacts.
    CulpritGap,
    CulpritCarried,
    Revert,
    FlakeRetry,
    PreExisting,
    Infra,
    CiConfig,
    CiConfigFixed,
    ForcedAccept,
    Ready,
}

#[derive(Serialize, Clone, Debug)]
pub struct CulpritTruth {
    pub repo: String,
    pub pr: u32,
    pub component: String,
    pub introduced_in: String,
    pub symbol: String,
    pub diff_file: String,
    pub diff_line: u32,
    pub log_file: String,
    pub log_line: u32,
}

#[derive(Serialize, Clone, Debug)]
pub struct CiConfigTruth {
    pub repo: &'static str,
    pub pr: u32,
    pub file: &'static str,
    pub flag: String,
    pub diff_file: String,
    pub diff_line: u32,
    pub log_file: String,
    pub log_line: u32,
}

#[derive(Serialize, Clone, Debug)]
pub struct TagTruth {
    pub tag: String,
    pub phase: &'static str,
    pub event: Event,
    pub forced: bool,
    /// The release controller answers "the changelog is still loading" for this tag.
    pub changelog_loading: bool,
    /// `culprit-pr`, `infra`, `ci-config`, `pre-existing-product-bug`, `flake`, or null.
    pub cause: Option<&'static str>,
    pub culprit: Option<CulpritTruth>,
    pub ci_config_change: Option<CiConfigTruth>,
    pub failed_blocking_jobs: Vec<String>,
    pub failed_informing_jobs: Vec<String>,
    pub new_prs: Vec<String>,
    /// Patterns of the failed runs: job short name -> pattern id.
    pub patterns: BTreeMap<String, String>,
    /// The failing runs of this payload lost their artifacts: its own analysis
    /// has no evidence (later payloads must still find the culprit).
    pub evidence_missing: bool,
}

#[derive(Serialize, Clone, Debug)]
pub struct PayloadTruth {
    pub stream: &'static str,
    pub tags_file: String,
    pub tags: Vec<TagTruth>,
    pub job_runs: u64,
    pub diffs: u64,
}

#[derive(Serialize)]
struct TagEntry {
    name: String,
    phase: &'static str,
    #[serde(rename = "pullSpec")]
    pull_spec: String,
    #[serde(rename = "downloadURL")]
    download_url: String,
}

#[derive(Serialize)]
struct TagsDoc {
    name: &'static str,
    tags: Vec<TagEntry>,
}

#[derive(Serialize, Clone)]
struct JobResult {
    state: &'static str,
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    retries: Option<u32>,
    #[serde(rename = "previousAttemptURLs", skip_serializing_if = "Vec::is_empty")]
    previous_attempt_urls: Vec<String>,
    #[serde(rename = "transitionTime", skip_serializing_if = "Option::is_none")]
    transition_time: Option<String>,
}

#[derive(Serialize)]
struct Results {
    #[serde(rename = "blockingJobs")]
    blocking: BTreeMap<String, JobResult>,
    #[serde(rename = "informingJobs")]
    informing: BTreeMap<String, JobResult>,
}

#[derive(Serialize, Clone)]
struct HistoryItem {
    state: &'static str,
    url: String,
}

#[derive(Serialize)]
struct Upgrade {
    #[serde(rename = "From")]
    from: String,
    #[serde(rename = "To")]
    to: String,
    #[serde(rename = "Success")]
    success: u32,
    #[serde(rename = "Failure")]
    failure: u32,
    #[serde(rename = "Total")]
    total: u32,
    #[serde(rename = "History")]
    history: BTreeMap<String, HistoryItem>,
}

#[derive(Serialize, Clone)]
struct Commit {
    subject: String,
    #[serde(rename = "pullID")]
    pull_id: u32,
    #[serde(rename = "pullURL")]
    pull_url: String,
    #[serde(rename = "commitID")]
    commit_id: String,
    #[serde(rename = "commitURL")]
    commit_url: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    issues: BTreeMap<String, String>,
}

#[derive(Serialize, Clone)]
struct UpdatedImage {
    name: String,
    path: String,
    #[serde(rename = "shortCommit")]
    short_commit: String,
    commit: String,
    #[serde(rename = "imageRef")]
    image_ref: String,
    commits: Vec<Commit>,
    #[serde(rename = "fullChangeLog")]
    full_change_log: String,
}

#[derive(Serialize)]
struct Endpoint {
    name: String,
    created: String,
    digest: String,
    #[serde(rename = "promotedFrom", skip_serializing_if = "Option::is_none")]
    promoted_from: Option<String>,
}

#[derive(Serialize)]
struct Component {
    name: &'static str,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<String>,
}

#[derive(Serialize)]
struct ChangeLogJson {
    from: Endpoint,
    to: Endpoint,
    components: Vec<Component>,
    #[serde(rename = "updatedImages")]
    updated_images: Vec<UpdatedImage>,
}

#[derive(Serialize)]
struct ReleaseInfo {
    name: String,
    phase: &'static str,
    results: Results,
    #[serde(rename = "upgradesTo", skip_serializing_if = "Vec::is_empty")]
    upgrades_to: Vec<Upgrade>,
    #[serde(rename = "upgradesFrom", skip_serializing_if = "Vec::is_empty")]
    upgrades_from: Vec<Upgrade>,
    #[serde(rename = "changeLog")]
    change_log: String,
    #[serde(rename = "changeLogJson", skip_serializing_if = "Option::is_none")]
    change_log_json: Option<ChangeLogJson>,
}

#[derive(Serialize)]
struct CiConfigChange {
    repo: &'static str,
    pr: u32,
    title: String,
    merged_at: String,
    files: Vec<&'static str>,
    diff: String,
}

#[derive(Serialize)]
struct GhUser {
    login: String,
}

#[derive(Serialize)]
struct GhRef {
    #[serde(rename = "ref")]
    name: String,
    sha: String,
}

#[derive(Serialize)]
struct GhLabel {
    name: &'static str,
}

#[derive(Serialize)]
struct GhPull {
    number: u32,
    state: &'static str,
    title: String,
    user: GhUser,
    html_url: String,
    draft: bool,
    merged: bool,
    merged_at: String,
    merge_commit_sha: String,
    head: GhRef,
    base: GhRef,
    labels: Vec<GhLabel>,
}

/// A merged PR that enters one payload.
#[derive(Clone)]
struct Pr {
    repo: String,
    number: u32,
    subject: String,
    author: String,
    merged_at: i64,
    sha: String,
    /// Symbol added (culprit) or reverted.
    symbol: Option<String>,
    revert_of: Option<u32>,
    /// A trap: an innocent PR built to look like the culprit to a careless matcher.
    decoy: Option<Decoy>,
}

/// The traps real payloads hold, planted beside the culprit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decoy {
    /// Adds the culprit's symbol in a vendored copy, generated code and docs.
    VendoredGenerated,
    /// Adds a symbol that only an info line of the failing logs names.
    InfoLine,
    /// Adds the command-line flag the failing test's command used.
    Flag,
}

/// A run of one payload job.
struct Run {
    short: String,
    prowjob: String,
    id: u64,
    start: i64,
    end: Option<i64>,
    state: State,
    url: String,
}

/// Per-prowjob history for Deck pages.
type History = BTreeMap<String, Vec<(u64, i64, Option<i64>, State, String)>>;

fn prowjob_name(suffix: &str) -> String {
    if suffix == "aggregated" {
        "aggregated-aws-ovn-upgrade-4.22-micro-release-openshift-release-analysis-aggregator".to_string()
    } else {
        format!("{JOB_PREFIX}{suffix}")
    }
}

/// Lays the planted events out over `n` payloads (oldest first): groups in
/// chronological order with normal payloads between them; optional groups
/// are dropped when the stream is too short.
fn plan_events(n: usize) -> Vec<Event> {
    if n == 0 {
        return Vec::new();
    }
    // (group, priority: lower is dropped first)
    let mut groups: Vec<(Vec<Event>, u8)> = vec![
        (vec![Event::CulpritIntroduced, Event::CulpritGap, Event::CulpritCarried, Event::Revert], 9),
        (vec![Event::FlakeRetry], 3),
        (vec![Event::PreExisting], 4),
        (vec![Event::Infra], 8),
        (vec![Event::CiConfig, Event::CiConfigFixed], 7),
        (vec![Event::ForcedAccept], 2),
    ];
    let size = |g: &Vec<(Vec<Event>, u8)>| g.iter().map(|x| x.0.len()).sum::<usize>() + 2;
    while size(&groups) > n {
        // Shrink the culprit story before dropping headline groups.
        if let Some(pos) = groups.iter().position(|g| g.1 < 7) {
            let lowest = groups
                .iter()
                .enumerate()
                .filter(|(_, g)| g.1 < 7)
                .min_by_key(|(_, g)| g.1)
                .map(|(i, _)| i)
                .unwrap_or(pos);
            groups.remove(lowest);
        } else if groups[0].0.len() > 2 {
            groups[0].0.remove(1);
        } else if let Some(g) = groups.iter_mut().find(|g| g.0.len() == 2 && g.0[0] == Event::CiConfig) {
            g.0.truncate(1);
        } else if !groups.is_empty() {
            let lowest = groups.iter().enumerate().min_by_key(|(_, g)| g.1).map(|(i, _)| i).unwrap_or(0);
            groups.remove(lowest);
        } else {
            break;
        }
    }
    let mut ev = vec![Event::Normal; n];
    ev[n - 1] = Event::Ready;
    let used: usize = groups.iter().map(|g| g.0.len()).sum();
    let free = n.saturating_sub(used + 2);
    let gaps = groups.len() + 1;
    let mut at = 1;
    for (k, (g, _)) in groups.iter().enumerate() {
        // Spread the spare normal payloads between groups.
        at += free * (k + 1) / gaps - free * k / gaps;
        for e in g {
            if at < n - 1 {
                ev[at] = *e;
                at += 1;
            }
        }
    }
    ev
}

fn phase_of(e: Event) -> &'static str {
    match e {
        Event::CulpritIntroduced
        | Event::CulpritGap
        | Event::CulpritCarried
        | Event::PreExisting
        | Event::Infra
        | Event::CiConfig => "Rejected",
        Event::Ready => "Ready",
        _ => "Accepted",
    }
}

/// Results of the payload stream generation.
pub type Generated = PayloadTruth;

/// Generates the payload stream.
pub fn generate(
    seed: u64,
    payloads: usize,
    end_day: i64,
    world_end: i64,
    log_lines: usize,
    sink: &mut Sink,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<Generated, SynthError> {
    let mut r = Rng::for_key(seed, &["payload-stream"]);
    let events = plan_events(payloads);
    // Creation times, oldest first; the newest is a few hours before the end.
    let mut created = vec![0i64; payloads];
    let mut t = world_end - 3 * HOUR - r.below(HOUR as u64) as i64;
    for i in (0..payloads).rev() {
        created[i] = t;
        t -= 5 * HOUR + r.below(4 * HOUR as u64) as i64;
    }
    let _ = end_day;
    let tags: Vec<String> = created.iter().map(|&c| format!("{STREAM}-{}", time::tag_stamp(c))).collect();
    let symbol = CULPRIT_SYMBOLS[r.index(CULPRIT_SYMBOLS.len())].to_string();
    let flag = r
        .pick_str(&["--use-node-image-overrides", "--enable-confidential-nodes", "--skip-bootstrap-gather"])
        .to_string();

    // PRs per payload.
    let mut pr_counter: BTreeMap<String, u32> = BTreeMap::new();
    let mut next_pr = |repo: &str, r: &mut Rng| -> u32 {
        let base = 1000 + (crate::rng::hash_parts(seed, &[repo]) % 9000) as u32;
        let c = pr_counter.entry(repo.to_string()).or_insert(base);
        *c += 1 + r.below(6) as u32;
        *c
    };
    let mut prs_by_payload: Vec<Vec<Pr>> = Vec::with_capacity(payloads);
    let mut culprit: Option<(Pr, usize)> = None;
    for (i, e) in events.iter().enumerate() {
        let prev = if i == 0 { created[0] - 8 * HOUR } else { created[i - 1] };
        let n = r.range(4, 11) as usize;
        let mut list = Vec::new();
        for _ in 0..n {
            let (repo, _) = COMPONENTS[r.index(COMPONENTS.len())];
            let number = next_pr(repo, &mut r);
            list.push(Pr {
                repo: repo.to_string(),
                number,
                subject: r.pick_str(PR_SUBJECTS).to_string(),
                author: r
                    .pick_str(&[
                        "openshift-bot",
                        "jluhrsen",
                        "kyrtapz",
                        "sdodson",
                        "wking",
                        "petr-muller",
                        "deads2k",
                        "jacobsee",
                        "openshift-art",
                    ])
                    .to_string(),
                merged_at: prev + r.below((created[i] - prev).max(1) as u64) as i64,
                sha: r.hex(40),
                symbol: None,
                revert_of: None,
                decoy: None,
            });
        }
        match e {
            Event::CulpritIntroduced => {
                let repo = "openshift/cluster-network-operator";
                let number = next_pr(repo, &mut r);
                let pr = Pr {
                    repo: repo.to_string(),
                    number,
                    subject: "Check the cluster network while rendering OVN-Kubernetes".to_string(),
                    author: "kyrtapz".to_string(),
                    merged_at: created[i] - HOUR - r.below(3 * HOUR as u64) as i64,
                    sha: r.hex(40),
                    symbol: Some(symbol.clone()),
                    revert_of: None,
                    decoy: None,
                };
                // Decoys: the symbol in vendored / generated / documentation files of
                // another repository, a symbol only an info line names, the flag of
                // the failing command.
                for (repo, subject, decoy) in [
                    ("openshift/installer", "Bump the vendored cluster-network-operator API", Decoy::VendoredGenerated),
                    ("openshift/cluster-version-operator", "Log each proxy reconciliation", Decoy::InfoLine),
                    ("openshift/machine-config-operator", "Pass the kubeconfig explicitly to the daemon", Decoy::Flag),
                ] {
                    let number = next_pr(repo, &mut r);
                    list.push(Pr {
                        repo: repo.to_string(),
                        number,
                        subject: subject.to_string(),
                        author: "openshift-bot".to_string(),
                        merged_at: created[i] - 3 * HOUR,
                        sha: r.hex(40),
                        symbol: Some(symbol.clone()),
                        revert_of: None,
                        decoy: Some(decoy),
                    });
                }
                // Two innocent PRs in the same component, so component alone does not
                // decide: they tie (the same evidence), below the culprit.
                for subject in ["Update owners for the operator", "Drop deprecated flag handling"] {
                    let n2 = next_pr(repo, &mut r);
                    list.push(Pr {
                        repo: repo.to_string(),
                        number: n2,
                        subject: subject.to_string(),
                        author: "openshift-bot".to_string(),
                        merged_at: created[i] - 2 * HOUR,
                        sha: r.hex(40),
                        symbol: None,
                        revert_of: None,
                        decoy: None,
                    });
                }
                // A title sharing one generic word with the failing test's name
                // ("should report Available=True"): a match on it says nothing.
                let n3 = next_pr("openshift/console", &mut r);
                list.push(Pr {
                    repo: "openshift/console".to_string(),
                    number: n3,
                    subject: "Report console plugin load times".to_string(),
                    author: "openshift-bot".to_string(),
                    merged_at: created[i] - 2 * HOUR,
                    sha: r.hex(40),
                    symbol: None,
                    revert_of: None,
                    decoy: None,
                });
                culprit = Some((pr.clone(), i));
                list.push(pr);
            }
            Event::Revert => {
                if let Some((c, _)) = &culprit {
                    let number = next_pr(&c.repo, &mut r);
                    list.push(Pr {
                        repo: c.repo.clone(),
                        number,
                        subject: format!("Revert \"{}\"", c.subject),
                        author: "openshift-bot".to_string(),
                        merged_at: created[i] - HOUR,
                        sha: r.hex(40),
                        symbol: Some(c.symbol.clone().unwrap_or_default()),
                        revert_of: Some(c.number),
                        decoy: None,
                    });
                }
            }
            _ => {}
        }
        list.sort_by(|a, b| a.repo.cmp(&b.repo).then(a.number.cmp(&b.number)));
        prs_by_payload.push(list);
    }
    // The CI-config change (openshift/release) and an unrelated one.
    let ci_idx = events.iter().position(|e| *e == Event::CiConfig);
    let release_pr_base = 68_000 + (crate::rng::hash_parts(seed, &["release-pr"]) % 900) as u32;
    let ci_pr = release_pr_base + 17;
    let mut ci_changes: Vec<CiConfigChange> = Vec::new();
    let mut ci_truth: Option<CiConfigTruth> = None;
    let step_file = "ci-operator/step-registry/ipi/install/install/ipi-install-install-commands.sh";
    let mut diffs = 0u64;
    if let Some(ci) = ci_idx {
        let merged = created[ci] - 2 * HOUR;
        let (diff, line) = ci_config_diff(&flag, step_file);
        let diff_path = format!("github/openshift/release/pull/{ci_pr}.diff");
        sink.write(&diff_path, diff.as_bytes())?;
        write_gh_pull(
            sink,
            "openshift/release",
            ci_pr,
            &format!("ipi-install: pass {flag} to openshift-install"),
            "ci-config-author",
            merged,
            &r.hex(40),
        )?;
        diffs += 1;
        ci_changes.push(CiConfigChange {
            repo: "openshift/release",
            pr: ci_pr,
            title: format!("ipi-install: pass {flag} to openshift-install"),
            merged_at: time::rfc3339(merged),
            files: vec![step_file],
            diff: diff_path.clone(),
        });
        ci_truth = Some(CiConfigTruth {
            repo: "openshift/release",
            pr: ci_pr,
            file: step_file,
            flag: flag.clone(),
            diff_file: diff_path,
            diff_line: line,
            log_file: String::new(),
            log_line: 0,
        });
        // Its revert lands before the next payload.
        if ci + 1 < payloads {
            let rv = ci_pr + 5;
            let merged2 = created[ci + 1] - HOUR;
            let (d2, _) = ci_config_revert_diff(&flag, step_file);
            let p2 = format!("github/openshift/release/pull/{rv}.diff");
            sink.write(&p2, d2.as_bytes())?;
            write_gh_pull(
                sink,
                "openshift/release",
                rv,
                &format!("Revert \"ipi-install: pass {flag} to openshift-install\""),
                "openshift-bot",
                merged2,
                &r.hex(40),
            )?;
            diffs += 1;
            ci_changes.push(CiConfigChange {
                repo: "openshift/release",
                pr: rv,
                title: format!("Revert \"ipi-install: pass {flag} to openshift-install\""),
                merged_at: time::rfc3339(merged2),
                files: vec![step_file],
                diff: p2,
            });
        }
    }
    // Unrelated step-registry changes, one per couple of payloads.
    for i in (0..payloads).step_by(2) {
        let n = release_pr_base + 100 + i as u32;
        let merged = created[i] - 3 * HOUR;
        let file = "ci-operator/step-registry/gather/extra/gather-extra-commands.sh";
        let diff = format!(
            "diff --git a/{file} b/{file}\nindex {}..{} 100755\n--- a/{file}\n+++ b/{file}\n@@ -41,6 +41,7 @@ queue() {{\n   \"$@\" > \"${{TARGET}}\" 2>&1 &\n }}\n \n+echo \"Gathering artifacts ...\"\n mkdir -p ${{ARTIFACT_DIR}}/pods\n oc --insecure-skip-tls-verify --request-timeout=5s get nodes -o jsonpath --template '{{range .items[*]}}{{.metadata.name}}{{\"\\n\"}}{{end}}' > \"${{ARTIFACT_DIR}}/nodes.txt\"\n",
            r.hex(7),
            r.hex(7)
        );
        let path = format!("github/openshift/release/pull/{n}.diff");
        sink.write(&path, diff.as_bytes())?;
        write_gh_pull(sink, "openshift/release", n, "gather-extra: print progress", "ci-helper", merged, &r.hex(40))?;
        diffs += 1;
        ci_changes.push(CiConfigChange {
            repo: "openshift/release",
            pr: n,
            title: "gather-extra: print progress".into(),
            merged_at: time::rfc3339(merged),
            files: vec![file],
            diff: path,
        });
    }
    ci_changes.sort_by(|a, b| a.merged_at.cmp(&b.merged_at).then(a.pr.cmp(&b.pr)));
    let mut ci_bytes = serde_json::to_vec_pretty(&ci_changes).unwrap_or_default();
    ci_bytes.push(b'\n');
    sink.write("openshift/ci-config-changes.json", &ci_bytes)?;

    // PR diffs and GitHub JSON.
    let mut culprit_truth: Option<CulpritTruth> = None;
    for list in &prs_by_payload {
        for pr in list {
            let (diff, line) = pr_diff(pr, &mut r);
            let path = format!("github/{}/pull/{}.diff", pr.repo, pr.number);
            sink.write(&path, diff.as_bytes())?;
            write_gh_pull(sink, &pr.repo, pr.number, &pr.subject, &pr.author, pr.merged_at, &pr.sha)?;
            diffs += 1;
            if pr.symbol.is_some() && pr.revert_of.is_none() && pr.decoy.is_none() {
                if let Some((_, at)) = &culprit {
                    culprit_truth = Some(CulpritTruth {
                        repo: pr.repo.clone(),
                        pr: pr.number,
                        component: "cluster-network-operator".into(),
                        introduced_in: tags[*at].clone(),
                        symbol: symbol.clone(),
                        diff_file: path.clone(),
                        diff_line: line,
                        log_file: String::new(),
                        log_line: 0,
                    });
                }
            }
        }
    }

    // Runs, release info.
    let mut history: History = BTreeMap::new();
    let mut tag_truths: Vec<TagTruth> = Vec::new();
    let mut job_runs = 0u64;
    let mut releases: Vec<ReleaseInfo> = Vec::with_capacity(payloads);
    for (i, e) in events.iter().enumerate() {
        let mut pr_rng = Rng::for_key(seed, &["payload", &tags[i]]);
        let pr = &mut pr_rng;
        let mut blocking = BTreeMap::new();
        let mut informing = BTreeMap::new();
        let mut failed_blocking = Vec::new();
        let mut failed_informing = Vec::new();
        let mut patterns = BTreeMap::new();
        let mut first_culprit_log: Option<(String, u32)> = None;
        let mut first_ci_log: Option<(String, u32)> = None;
        let infra_victims = ["aws-ovn-serial-1of2", "aws-ovn-techpreview", "console-aws"];
        let all: Vec<(bool, &str, &str)> = BLOCKING
            .iter()
            .map(|(s, x)| (true, *s, *x))
            .chain(INFORMING.iter().map(|(s, x)| (false, *s, *x)))
            .collect();
        for (is_blocking, short, suffix) in all {
            let prowjob = prowjob_name(suffix);
            // Decide what breaks this job in this payload.
            let cause: Option<(&str, bool)> = match e {
                Event::CulpritIntroduced | Event::CulpritGap | Event::CulpritCarried
                    if matches!(short, "aws-ovn-serial-1of2" | "aws-ovn-serial-2of2" | "gcp-ovn") =>
                {
                    Some(("culprit-pr-symbol", false))
                }
                Event::CulpritIntroduced | Event::CulpritGap | Event::CulpritCarried
                    if short.starts_with("aggregated-") =>
                {
                    Some(("culprit-aggregated", false))
                }
                Event::Infra if infra_victims.contains(&short) => Some(("cloud-vcpu-quota", false)),
                Event::CiConfig if matches!(short, "gcp-ovn" | "metal-ipi-ovn-ipv4" | "aws-ovn-serial-2of2") => {
                    Some(("ci-config-step-change", false))
                }
                Event::PreExisting if short == "aws-ovn-techpreview" || short == "azure-ovn-techpreview-serial" => {
                    Some(("admission-no-nodes", false))
                }
                Event::FlakeRetry if short == "aws-ovn-serial-1of2" => Some(("flake/openshift-monitor-alerts", true)),
                Event::ForcedAccept if short == "metal-ipi-ovn-ipv4" => Some(("cloud-vcpu-quota", false)),
                _ if !is_blocking => {
                    let roll = pr.below(100);
                    match (short, roll) {
                        ("aws-ovn-upgrade-rollback", 0..=34) => Some(("crd-enum-unsupported-value", false)),
                        ("hypershift-aws-upgrade", 0..=29) => Some(("featuregate-missing-version", false)),
                        ("aws-ovn-upgrade-out-of-change", 0..=24) => Some(("version-pod-deadline", false)),
                        (_, 0..=7) => Some(("flake/openshift-monitor-alerts", false)),
                        _ => None,
                    }
                }
                _ => None,
            };
            let ready_pending = *e == Event::Ready && pr.chance(0.5);
            let mut attempts: Vec<Run> = Vec::new();
            let mut start = created[i] + 10 * MINUTE + pr.below(20 * MINUTE as u64) as i64;
            // Blocking jobs retry a failed attempt (up to two retries) when the failure is retryable.
            let max_attempts = if is_blocking && *e != Event::ForcedAccept { 2 } else { 1 };
            for attempt in 0..max_attempts {
                let fails = match cause {
                    Some((_, true)) => attempt == 0,
                    Some(_) => true,
                    None => false,
                };
                let dur = 90 * MINUTE + pr.below(150 * MINUTE as u64) as i64;
                let end = start + dur;
                let undispatched = ready_pending && attempt == 0 && pr.chance(0.3);
                if undispatched {
                    attempts.push(Run {
                        short: short.to_string(),
                        prowjob: prowjob.clone(),
                        id: 0,
                        start,
                        end: None,
                        state: State::Pending,
                        url: String::new(),
                    });
                    break;
                }
                let state = if end > world_end {
                    State::Pending
                } else if fails {
                    State::Failure
                } else {
                    State::Success
                };
                let id = prow::build_id(start, crate::rng::hash_parts(seed, &[&tags[i], short, &attempt.to_string()]));
                let url = format!("https://prow.ci.openshift.org/view/gs/{BUCKET}/logs/{prowjob}/{id}");
                let run = Run {
                    short: short.to_string(),
                    prowjob: prowjob.clone(),
                    id,
                    start,
                    end: if state == State::Pending { None } else { Some(end) },
                    state,
                    url,
                };
                let pattern_id = if fails { cause.map(|c| c.0) } else { None };
                let artifacts = !(*e == Event::CulpritGap && pattern_id.is_some());
                let (log_path, line) = write_run(
                    sink,
                    seed,
                    &run,
                    &tags[i],
                    pattern_id,
                    (&symbol, &flag),
                    artifacts,
                    log_lines,
                    &mut history,
                )?;
                job_runs += 1;
                if pattern_id == Some("culprit-pr-symbol") && first_culprit_log.is_none() {
                    first_culprit_log = line.map(|l| (log_path.clone(), l));
                }
                if pattern_id == Some("ci-config-step-change") && first_ci_log.is_none() {
                    first_ci_log = line.map(|l| (log_path.clone(), l));
                }
                let retry = state == State::Failure && is_blocking;
                attempts.push(run);
                if !retry {
                    break;
                }
                start = end + 5 * MINUTE;
            }
            let last = attempts.last();
            let state = match last.map(|a| a.state) {
                Some(State::Success) => "Succeeded",
                Some(State::Failure) => "Failed",
                _ => "Pending",
            };
            if state == "Failed" {
                if is_blocking {
                    failed_blocking.push(short.to_string());
                } else {
                    failed_informing.push(short.to_string());
                }
                if let Some((p, _)) = cause {
                    patterns.insert(short.to_string(), p.to_string());
                }
            } else if let Some((p, true)) = cause {
                patterns.insert(short.to_string(), format!("{p} (passed on retry)"));
            }
            let prev: Vec<String> = attempts.iter().rev().skip(1).rev().map(|a| a.url.clone()).collect();
            let res = JobResult {
                state,
                url: last.map(|a| a.url.clone()).unwrap_or_default(),
                retries: if prev.is_empty() { None } else { Some(prev.len() as u32) },
                previous_attempt_urls: prev,
                transition_time: last.and_then(|a| a.end).filter(|_| pr.chance(0.7)).map(time::rfc3339),
            };
            if is_blocking {
                blocking.insert(short.to_string(), res);
            } else {
                informing.insert(short.to_string(), res);
            }
        }
        if let (Some(ct), Some((p, l))) = (culprit_truth.as_mut(), first_culprit_log.as_ref()) {
            if ct.log_line == 0 {
                ct.log_file = p.clone();
                ct.log_line = *l;
            }
        }
        if let (Some(ct), Some((p, l))) = (ci_truth.as_mut(), first_ci_log.as_ref()) {
            if ct.log_line == 0 {
                ct.log_file = p.clone();
                ct.log_line = *l;
            }
        }
        let phase = phase_of(*e);
        // Upgrade edges from the previous payload.
        let mut upgrades_to = Vec::new();
        if i > 0 {
            let url = format!(
                "https://prow.ci.openshift.org/view/gs/{BUCKET}/logs/{}/{}",
                prowjob_name("aggregated"),
                prow::build_id(created[i] + HOUR, i as u64)
            );
            let ok = !matches!(e, Event::CulpritIntroduced | Event::CulpritGap | Event::CulpritCarried);
            let mut h = BTreeMap::new();
            h.insert(url.clone(), HistoryItem { state: if ok { "Succeeded" } else { "Failed" }, url });
            upgrades_to.push(Upgrade {
                from: tags[i - 1].clone(),
                to: tags[i].clone(),
                success: u32::from(ok),
                failure: u32::from(!ok),
                total: 1,
                history: h,
            });
        }
        let prev_tag =
            if i == 0 { format!("{STREAM}-{}", time::tag_stamp(created[0] - 7 * HOUR)) } else { tags[i - 1].clone() };
        let loading = payloads >= 3 && i + 2 == payloads;
        let (change_log, clj) = if loading {
            (base64(b"<p>the changelog is still loading, try again in a few moments</p>\n"), None)
        } else {
            let prev_created = if i == 0 { created[0] - 7 * HOUR } else { created[i - 1] };
            let j = changelog_json(&prev_tag, &tags[i], prev_created, created[i], &prs_by_payload[i], pr);
            (base64(changelog_html(&prev_tag, &tags[i], &j).as_bytes()), Some(j))
        };
        releases.push(ReleaseInfo {
            name: tags[i].clone(),
            phase,
            results: Results { blocking, informing },
            upgrades_to,
            upgrades_from: Vec::new(),
            change_log,
            change_log_json: clj,
        });
        let cause = match e {
            Event::CulpritIntroduced | Event::CulpritGap | Event::CulpritCarried => Some("culprit-pr"),
            Event::Infra => Some("infra"),
            Event::CiConfig => Some("ci-config"),
            Event::PreExisting => Some("pre-existing-product-bug"),
            Event::FlakeRetry => Some("flake"),
            Event::ForcedAccept => Some("infra"),
            _ => None,
        };
        tag_truths.push(TagTruth {
            tag: tags[i].clone(),
            phase,
            event: *e,
            forced: *e == Event::ForcedAccept,
            changelog_loading: loading,
            cause,
            culprit: None,
            ci_config_change: None,
            failed_blocking_jobs: failed_blocking,
            failed_informing_jobs: failed_informing,
            new_prs: prs_by_payload[i].iter().map(|p| format!("{}#{}", p.repo, p.number)).collect(),
            patterns,
            evidence_missing: *e == Event::CulpritGap,
        });
        progress(i as u64 + 1, payloads as u64, job_runs);
    }
    // upgradesFrom mirrors the next payload's upgradesTo edge.
    for i in 0..releases.len().saturating_sub(1) {
        if let Some(u) = releases[i + 1].upgrades_to.first() {
            let copy = Upgrade {
                from: u.from.clone(),
                to: u.to.clone(),
                success: u.success,
                failure: u.failure,
                total: u.total,
                history: u.history.clone(),
            };
            releases[i].upgrades_from.push(copy);
        }
    }
    for t in tag_truths.iter_mut() {
        if matches!(t.event, Event::CulpritIntroduced | Event::CulpritGap | Event::CulpritCarried) {
            t.culprit = culprit_truth.clone();
        }
        if t.event == Event::CiConfig {
            t.ci_config_change = ci_truth.clone();
        }
    }
    let base = format!("release-controller/api/v1/releasestream/{STREAM}");
    for rel in &releases {
        let mut b = serde_json::to_vec_pretty(rel).unwrap_or_default();
        b.push(b'\n');
        sink.write(&format!("{base}/release/{}", rel.name), &b)?;
    }
    let tags_doc = TagsDoc {
        name: STREAM,
        tags: releases
            .iter()
            .rev()
            .map(|rel| TagEntry {
                name: rel.name.clone(),
                phase: rel.phase,
                pull_spec: format!("registry.ci.openshift.org/ocp/release:{}", rel.name),
                download_url: format!(
                    "https://openshift-release-artifacts.apps.ci.l2s4.p1.openshiftapps.com/{}",
                    rel.name
                ),
            })
            .collect(),
    };
    let mut b = serde_json::to_vec_pretty(&tags_doc).unwrap_or_default();
    b.push(b'\n');
    let tags_file = format!("{base}/tags");
    sink.write(&tags_file, &b)?;
    // Deck job history for the payload jobs.
    for (job, runs) in history.iter_mut() {
        runs.sort_by_key(|r| std::cmp::Reverse(r.0));
        let entries: Vec<HistoryEntry> = runs
            .iter()
            .map(|(id, start, end, state, dir)| HistoryEntry {
                spyglass_link: format!("/view/gs/{BUCKET}/{dir}"),
                id: id.to_string(),
                started: time::rfc3339(*start),
                duration: end.map(|e| (e - start) * 1_000_000_000).unwrap_or(0),
                result: state.result().unwrap_or("Pending").to_string(),
                refs: None,
            })
            .collect();
        for (pi, page) in entries.chunks(20).enumerate() {
            let older = entries.get((pi + 1) * 20).map(|e| format!("?buildId={}", e.id));
            let name = if pi == 0 { "index.html".to_string() } else { format!("buildId={}.html", page[0].id) };
            let html = prow::history_page(&format!("{BUCKET}/logs/{job}"), page, older.as_deref(), None, entries.len());
            sink.write(&format!("openshift-prow/job-history/gs/{BUCKET}/logs/{job}/{name}"), &html)?;
        }
        if let Some(first) = runs.first() {
            sink.write(&format!("gcs/{BUCKET}/logs/{job}/latest-build.txt"), first.0.to_string().as_bytes())?;
        }
    }
    Ok(PayloadTruth { stream: STREAM, tags_file, tags: tag_truths, job_runs, diffs })
}

fn write_gh_pull(
    sink: &mut Sink,
    repo: &str,
    n: u32,
    title: &str,
    author: &str,
    merged_at: i64,
    sha: &str,
) -> Result<(), SynthError> {
    let p = GhPull {
        number: n,
        state: "closed",
        title: title.to_string(),
        user: GhUser { login: author.to_string() },
        html_url: format!("https://github.com/{repo}/pull/{n}"),
        draft: false,
        merged: true,
        merged_at: time::rfc3339(merged_at),
        merge_commit_sha: sha.to_string(),
        head: GhRef { name: format!("pr-{n}"), sha: fake_sha(u64::from(n), &[repo, "head"]) },
        base: GhRef { name: "main".into(), sha: fake_sha(u64::from(n), &[repo, "base"]) },
        labels: vec![GhLabel { name: "lgtm" }, GhLabel { name: "approved" }],
    };
    let mut b = serde_json::to_vec_pretty(&p).unwrap_or_default();
    b.push(b'\n');
    sink.write(&format!("github/api/repos/{repo}/pulls/{n}"), &b)
}

/// A unified diff; returns it and the 1-based line that carries the symbol
/// (0 when none).
fn pr_diff(pr: &Pr, r: &mut Rng) -> (String, u32) {
    if let Some(d) = pr.decoy {
        return (decoy_diff(d, pr.symbol.as_deref().unwrap_or("reconcileStatus"), r), 0);
    }
    let (file, pkg) = if pr.repo.ends_with("cluster-network-operator") {
        ("pkg/network/ovn_kubernetes.go", "network")
    } else if pr.repo.ends_with("installer") {
        ("pkg/asset/installconfig/aws/validation.go", "aws")
    } else {
        ("pkg/operator/status.go", "operator")
    };
    let mut lines: Vec<String> = vec![
        format!("diff --git a/{file} b/{file}"),
        format!("index {}..{} 100644", r.hex(7), r.hex(7)),
        format!("--- a/{file}"),
        format!("+++ b/{file}"),
    ];
    let mut symbol_line = 0u32;
    match (&pr.symbol, pr.revert_of) {
        (Some(sym), None) => {
            lines.push(format!(
                "@@ -{},6 +{},18 @@ func renderOVNKubernetes(conf *operv1.NetworkSpec) ([]*uns.Unstructured, error) {{",
                212, 212
            ));
            lines.push(" \tobjs := []*uns.Unstructured{}".into());
            lines.push(" ".into());
            lines.push(format!("+\tif err := {sym}(conf, bootstrapResult); err != nil {{"));
            symbol_line = lines.len() as u32;
            lines.push(format!("+\t\treturn nil, fmt.Errorf(\"{sym}: %w\", err)"));
            lines.push("+\t}".into());
            lines.push(" \treturn objs, nil".into());
            lines.push(" }".into());
            lines.push("+".into());
            lines.push(format!("+// {sym} runs while the OVN-Kubernetes manifests are rendered."));
            lines.push(format!("+func {sym}(conf *operv1.NetworkSpec, br *bootstrap.BootstrapResult) error {{"));
            lines.push("+\tfor i, rule := range br.OVN.EgressFirewallRules {".into());
            lines.push("+\t\tconf.DefaultNetwork.OVNKubernetesConfig.EgressFirewall[i].Status = rule.Status".into());
            lines.push("+\t}".into());
            lines.push("+\treturn nil".into());
            lines.push("+}".into());
        }
        (Some(sym), Some(_)) => {
            lines.push("@@ -212,18 +212,6 @@ func renderOVNKubernetes(conf *operv1.NetworkSpec) ([]*uns.Unstructured, error) {".into());
            lines.push(format!("-\tif err := {sym}(conf, bootstrapResult); err != nil {{"));
            symbol_line = lines.len() as u32;
            lines.push(format!("-\t\treturn nil, fmt.Errorf(\"{sym}: %w\", err)"));
            lines.push("-\t}".into());
        }
        _ => {
            let at = r.range(20, 400);
            let header = lines.len();
            lines.push(String::new());
            lines.push(" ".into());
            lines.push(format!(
                " func {}(ctx context.Context) error {{",
                r.pick_str(&["syncStatus", "applyDefaults", "validateConfig", "updateConditions"])
            ));
            lines.push(format!("-\ttimeout := {}*time.Second", r.range(10, 60)));
            lines.push(format!("+\ttimeout := {}*time.Second", r.range(61, 120)));
            if r.chance(0.4) {
                // A field every network-touching change reads: common, never specific.
                lines.push("+\tcidrs := cfg.Object(\"spec.clusterNetwork\")".into());
            }
            lines.push(format!(
                "+\tklog.V(4).Infof(\"{}\", timeout)",
                r.pick_str(&["using timeout %v", "waiting up to %v", "sync deadline %v"])
            ));
            lines.push(" \treturn wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, check)".into());
            lines.push(" }".into());
            let body = &lines[header + 1..];
            let old = body.iter().filter(|l| !l.starts_with('+')).count();
            let new = body.iter().filter(|l| !l.starts_with('-')).count();
            lines[header] = format!("@@ -{at},{old} +{at},{new} @@ package {pkg}");
        }
    }
    let mut s = lines.join("\n");
    s.push('\n');
    (s, symbol_line)
}

/// The diff of a decoy PR: what a careless matcher takes for the culprit.
fn decoy_diff(d: Decoy, symbol: &str, r: &mut Rng) -> String {
    let file_header = |path: &str, r: &mut Rng| {
        vec![
            format!("diff --git a/{path} b/{path}"),
            format!("index {}..{} 100644", r.hex(7), r.hex(7)),
            format!("--- a/{path}"),
            format!("+++ b/{path}"),
        ]
    };
    let mut lines: Vec<String> = Vec::new();
    match d {
        Decoy::VendoredGenerated => {
            let v = "vendor/github.com/openshift/cluster-network-operator/pkg/network/ovn_kubernetes.go";
            lines.extend(file_header(v, r));
            lines.push(
                "@@ -210,3 +210,6 @@ func renderOVNKubernetes(conf *operv1.NetworkSpec) ([]*uns.Unstructured, error) {"
                    .into(),
            );
            lines.push(" \tobjs := []*uns.Unstructured{}".into());
            lines.push(format!("+\tif err := {symbol}(conf, bootstrapResult); err != nil {{"));
            lines.push(format!("+\t\treturn nil, fmt.Errorf(\"{symbol}: %w\", err)"));
            lines.push("+\t}".into());
            lines.push(" \treturn objs, nil".into());
            lines.push(" }".into());
            let g = "pkg/types/network/zz_generated.deepcopy.go";
            lines.extend(file_header(g, r));
            lines.push("@@ -40,2 +40,5 @@ func (in *NetworkSpec) DeepCopyInto(out *NetworkSpec) {".into());
            lines.push(" \t*out = *in".into());
            lines.push("+\tif in.clusterNetwork != nil {".into());
            lines.push(format!("+\t\tout.{symbol} = in.{symbol}"));
            lines.push("+\t}".into());
            lines.push(" }".into());
            let doc = "docs/user/troubleshooting-network.md";
            lines.extend(file_header(doc, r));
            lines.push("@@ -1,1 +1,3 @@".into());
            lines.push(" # Network troubleshooting".into());
            lines.push("+If the operator reports `failed to render manifests: runtime error: invalid memory address or nil pointer dereference`,".into());
            lines.push(format!("+check the `{symbol}` step in the operator logs."));
        }
        Decoy::InfoLine => {
            let f = "pkg/cvo/proxy.go";
            lines.extend(file_header(f, r));
            lines.push("@@ -88,2 +88,6 @@ func (optr *Operator) syncProxy(ctx context.Context) error {".into());
            lines.push(" \tproxy := optr.proxyLister.Get(\"cluster\")".into());
            lines.push("+\treturn reconcileProxyStatus(ctx, proxy)".into());
            lines.push("+}".into());
            lines.push("+".into());
            lines.push("+func reconcileProxyStatus(ctx context.Context, p *configv1.Proxy) error {".into());
            lines.push(" }".into());
        }
        Decoy::Flag => {
            let f = "templates/common/_base/files/kubelet-wrapper.sh";
            lines.extend(file_header(f, r));
            lines.push("@@ -12,2 +12,2 @@ set -euo pipefail".into());
            lines.push("-exec /usr/bin/machine-config-daemon start".into());
            lines.push("+exec /usr/bin/machine-config-daemon start --kubeconfig=/var/lib/kubelet/kubeconfig".into());
            lines.push(" exit 0".into());
        }
    }
    lines.join("\n") + "\n"
}

fn ci_config_diff(flag: &str, file: &str) -> (String, u32) {
    let lines = [
        format!("diff --git a/{file} b/{file}"),
        "index 3f2a9c1..8b7e0d4 100755".to_string(),
        format!("--- a/{file}"),
        format!("+++ b/{file}"),
        "@@ -118,7 +118,7 @@ echo \"Installing cluster from ${RELEASE_IMAGE_LATEST}\"".to_string(),
        " set +o errexit".to_string(),
        "-openshift-install --dir=\"${dir}\" create cluster 2>&1 | grep --line-buffered -v 'password\\|X-Auth-Token\\|UserData:' &".to_string(),
        format!("+openshift-install --dir=\"${{dir}}\" create cluster {flag} 2>&1 | grep --line-buffered -v 'password\\|X-Auth-Token\\|UserData:' &"),
        " wait \"$!\"".to_string(),
        " ret=\"$?\"".to_string(),
    ];
    (lines.join("\n") + "\n", 8)
}

fn ci_config_revert_diff(flag: &str, file: &str) -> (String, u32) {
    let lines = [
        format!("diff --git a/{file} b/{file}"),
        "index 8b7e0d4..3f2a9c1 100755".to_string(),
        format!("--- a/{file}"),
        format!("+++ b/{file}"),
        "@@ -118,7 +118,7 @@ echo \"Installing cluster from ${RELEASE_IMAGE_LATEST}\"".to_string(),
        " set +o errexit".to_string(),
        format!("-openshift-install --dir=\"${{dir}}\" create cluster {flag} 2>&1 | grep --line-buffered -v 'password\\|X-Auth-Token\\|UserData:' &"),
        "+openshift-install --dir=\"${dir}\" create cluster 2>&1 | grep --line-buffered -v 'password\\|X-Auth-Token\\|UserData:' &".to_string(),
        " wait \"$!\"".to_string(),
    ];
    (lines.join("\n") + "\n", 7)
}

fn changelog_json(from: &str, to: &str, from_created: i64, created: i64, prs: &[Pr], r: &mut Rng) -> ChangeLogJson {
    let mut by_repo: BTreeMap<&str, Vec<&Pr>> = BTreeMap::new();
    for p in prs {
        by_repo.entry(p.repo.as_str()).or_default().push(p);
    }
    let updated = by_repo
        .into_iter()
        .map(|(repo, list)| {
            let names = COMPONENTS.iter().find(|(r, _)| *r == repo).map(|(_, n)| *n).unwrap_or("unknown");
            let commit = list.last().map(|p| p.sha.clone()).unwrap_or_default();
            UpdatedImage {
                name: names.to_string(),
                path: format!("https://github.com/{repo}/tree/{commit}"),
                short_commit: commit.chars().take(8).collect(),
                commit: commit.clone(),
                image_ref: format!("sha256:{}", r.hex(64)),
                commits: list
                    .iter()
                    .map(|p| {
                        let mut issues = BTreeMap::new();
                        if r.chance(0.5) {
                            let k = format!("OCPBUGS-{}", 40_000 + r.below(9000));
                            issues.insert(k.clone(), format!("https://issues.redhat.com/browse/{k}"));
                        }
                        Commit {
                            subject: p.subject.clone(),
                            pull_id: p.number,
                            pull_url: format!("https://github.com/{}/pull/{}", p.repo, p.number),
                            commit_id: p.sha.clone(),
                            commit_url: format!("https://github.com/{}/commit/{}", p.repo, p.sha),
                            issues,
                        }
                    })
                    .collect(),
                full_change_log: format!("https://github.com/{repo}/compare/{}...{commit}", r.hex(40)),
            }
        })
        .collect();
    ChangeLogJson {
        from: Endpoint {
            name: from.to_string(),
            created: time::rfc3339(from_created),
            digest: format!("sha256:{}", r.hex(64)),
            promoted_from: None,
        },
        to: Endpoint {
            name: to.to_string(),
            created: time::rfc3339(created),
            digest: format!("sha256:{}", r.hex(64)),
            promoted_from: None,
        },
        components: vec![
            Component { name: "Kubernetes", version: "1.35.2".into(), from: None },
            Component {
                name: "Red Hat Enterprise Linux CoreOS",
                version: format!("9.6.2026{:04}-0", 1100 + r.below(30)),
                from: Some(format!("9.6.2026{:04}-0", 1000 + r.below(30))),
            },
        ],
        updated_images: updated,
    }
}

fn changelog_html(from: &str, to: &str, j: &ChangeLogJson) -> String {
    let mut s = format!("<h2>Changes from <a target=\"_blank\" href=\"/releasetag/{from}\">{from}</a></h2>\n\n<p>Created: {}</p>\n\n<p>Image Digest: <code>{}</code></p>\n\n<h3>Components</h3>\n\n<ul>\n", j.to.created, j.to.digest);
    for c in &j.components {
        s.push_str(&format!("<li>{} {}</li>\n", c.name, c.version));
    }
    s.push_str("</ul>\n\n<h3>New images</h3>\n\n<ul>\n");
    for u in &j.updated_images {
        s.push_str(&format!("<li><a target=\"_blank\" href=\"{}\">{}</a>\n<ul>\n", u.path, u.name));
        for c in &u.commits {
            s.push_str(&format!("<li>{} <a href=\"{}\">#{}</a></li>\n", c.subject, c.pull_url, c.pull_id));
        }
        s.push_str("</ul>\n</li>\n");
    }
    s.push_str(&format!("</ul>\n<p>Release {to}</p>\n"));
    s
}

/// Writes one payload job run's GCS folder; returns the build-log path and
/// the first error line of the planted cause (if any).
#[allow(clippy::too_many_arguments)]
fn write_run(
    sink: &mut Sink,
    seed: u64,
    run: &Run,
    tag: &str,
    pattern: Option<&str>,
    (symbol, flag): (&str, &str),
    artifacts: bool,
    log_lines: usize,
    history: &mut History,
) -> Result<(String, Option<u32>), SynthError> {
    let dir = format!("logs/{}/{}", run.prowjob, run.id);
    let prefix = format!("gcs/{BUCKET}/{dir}");
    let mut r = Rng::for_key(seed, &["payload-run", &run.prowjob, &run.id.to_string()]);
    history.entry(run.prowjob.clone()).or_default().push((run.id, run.start, run.end, run.state, dir.clone()));
    let release_sha = fake_sha(seed, &["release", tag]);
    let mut repos = BTreeMap::new();
    repos.insert("openshift/release".to_string(), "main".to_string());
    let started = prow::Started {
        timestamp: run.start,
        pull: None,
        repos,
        repo_version: release_sha.clone(),
        repo_commit: release_sha.clone(),
    };
    sink.write(&format!("{prefix}/started.json"), &serde_json::to_vec_pretty(&started).unwrap_or_default())?;
    let doc = JobDoc {
        uid: r.uuid(),
        job: &run.prowjob,
        prow_type: "periodic",
        cluster: "build05",
        bucket: BUCKET,
        build_id: run.id,
        start: run.start,
        end: run.end,
        state: run.state,
        description: run.state.description().to_string(),
        url: run.url.clone(),
        refs: None,
        extra_refs: vec![Refs::new("openshift/release", "main", &release_sha)],
        image: "registry.ci.openshift.org/ci/ci-operator:latest".into(),
        args: vec![format!("--target={}", run.short), format!("--input-hash={}", r.hex(16))],
    };
    sink.write(&format!("{prefix}/prowjob.json"), &prow::prowjob_json(&doc, true))?;
    let Some(end) = run.end else {
        return Ok((String::new(), None));
    };
    let fin = prow::Finished {
        timestamp: end,
        passed: run.state == State::Success,
        result: run.state.result().unwrap_or("FAILURE"),
        revision: release_sha.clone(),
        metadata: BTreeMap::new(),
    };
    if !artifacts {
        // The run finished, but its log and JUnit are gone.
        sink.write(&format!("{prefix}/finished.json"), &serde_json::to_vec_pretty(&fin).unwrap_or_default())?;
        return Ok((String::new(), None));
    }
    let mut vars = Vars::new(r.fork("vars"), run.start);
    // The planted cause as log lines and a failing test.
    let (cause, test_fail): (Option<LogCause>, Option<(String, String)>) = match pattern {
        Some("culprit-pr-symbol") => {
            let e1 = format!("{} controller.go:{}] \"Reconciler error\" err=\"failed to render manifests: {symbol}: runtime error: invalid memory address or nil pointer dereference\" controller=\"operconfig-controller\"", vars.klog_header('E'), r.range(200, 400));
            let ctx = vec![
                // Traps: an info line naming a symbol a decoy adds.
                format!(
                    "time=\"{}\" level=info msg=\"reconcileProxyStatus: proxy configuration unchanged\"",
                    time::rfc3339(run.start + 5 * MINUTE)
                ),
                "panic: runtime error: invalid memory address or nil pointer dereference [recovered]".to_string(),
                format!(
                    "github.com/openshift/cluster-network-operator/pkg/network.{symbol}(0xc00{}, 0xc00{})",
                    r.hex(6),
                    r.hex(6)
                ),
                format!(
                    "\t/go/src/github.com/openshift/cluster-network-operator/pkg/network/ovn_kubernetes.go:{} +0x{:x}",
                    r.range(220, 240),
                    r.range(16, 200)
                ),
            ];
            (
                Some(LogCause { errors: vec![e1], context: ctx, setup: false }),
                Some((
                    "[sig-network] network operator should report Available=True within 30 minutes [Suite:openshift/conformance/parallel]".to_string(),
                    // Traps: the command's flag (a decoy adds it) and a field every
                    // network change touches (spec.clusterNetwork).
                    format!(
                        "fail [github.com/openshift/origin/test/extended/networking/operator.go:{}]: clusteroperator/network is Degraded: failed to render manifests: {symbol}: runtime error: invalid memory address or nil pointer dereference\nError running oc --kubeconfig=/tmp/kubeconfig-{} get clusteroperator network -o yaml: exit status 1\nlast condition while reading spec.clusterNetwork: Degraded",
                        r.range(50, 300),
                        r.range(100_000, 999_999)
                    ),
                )),
            )
        }
        Some("ci-config-step-change") => (
            Some(LogCause {
                errors: vec![format!("Error: unknown flag: {flag}")],
                context: vec![
                    "Usage:".to_string(),
                    "  openshift-install create cluster [flags]".to_string(),
                    format!(
                        "INFO[{}] Step {}-ipi-install-install failed after {}.",
                        time::rfc3339(run.start + 12 * MINUTE),
                        run.short,
                        time::go_duration(12 * 60 + r.range(1, 59) as i64)
                    ),
                ],
                setup: true,
            }),
            None,
        ),
        Some(p) if p.starts_with("flake/") => {
            let def = catalog::flaky(&p[6..]);
            let msg = def.map(|d| vars.render(d.message)).unwrap_or_default();
            (Some(LogCause { errors: vec![], context: vec![], setup: false }), def.map(|d| (d.name.to_string(), msg)))
        }
        Some(p) => {
            let pat = catalog::pattern(p);
            match pat {
                Some(pat) => {
                    let errors = pat.errors.iter().map(|e| vars.render(e)).collect();
                    let context = pat.context.iter().map(|e| vars.render(e)).collect();
                    let setup = pat.class == Class::Infra;
                    let tf = match pat.junit {
                        catalog::JunitEffect::Named(n) => Some((n.to_string(), vars.render(pat.message))),
                        _ => None,
                    };
                    (Some(LogCause { errors, context, setup }), tf)
                }
                None => (None, None),
            }
        }
        None => (None, None),
    };
    let causes: Vec<LogCause> = cause.into_iter().collect();
    let failures: Vec<LogTestFailure> = match (&test_fail, causes.first()) {
        (Some((n, m)), Some(c)) if !c.setup => {
            vec![LogTestFailure { cause: 0, name: n.clone(), message: m.clone(), retried_ok: false }]
        }
        _ => vec![],
    };
    // Tests: a handful of openshift-tests cases.
    let mut tr = Rng::for_key(seed, &["payload-suite", &run.prowjob]);
    let tests = suites::build_suite(SuiteKind::OpenShift, &mut tr, 25, false, "openshift/origin");
    let passing: Vec<&str> = tests.iter().take(20).map(|t| t.name.as_str()).collect();
    let spec = LogSpec {
        suite: SuiteKind::OpenShift,
        job: &run.prowjob,
        build_id: &run.id.to_string(),
        start: run.start,
        end,
        target_lines: (log_lines / 2).max(40),
        passed: run.state == State::Success,
        aborted: false,
        tests_run: tests.len(),
        tests_skipped: 0,
        passing,
        causes: &causes,
        failures: &failures,
    };
    let mut lr = r.fork("log");
    let (text, ev) = logs::render(&spec, &mut lr, &mut vars);
    let log_path = format!("{prefix}/build-log.txt");
    sink.write(&log_path, &text.buf)?;
    let first_error = ev.first().and_then(|e| e.errors.first().copied());
    // JUnit: the step graph and the nested openshift-tests report.
    let failed = run.state == State::Failure;
    let setup_fail = causes.first().is_some_and(|c| c.setup);
    let steps =
        ["ipi-conf", "ipi-install-install", "openshift-e2e-test", "gather-extra", "ipi-deprovision-deprovision"];
    let mut step_cases = Vec::new();
    for st in steps {
        let fail_here =
            failed && ((setup_fail && st == "ipi-install-install") || (!setup_fail && st == "openshift-e2e-test"));
        step_cases.push(Case {
            classname: String::new(),
            name: Some(format!("Run multi-stage test {} - {}-{st} container test", run.short, run.short)),
            time_ms: 1000 + r.below(3_000_000),
            outcome: if fail_here {
                Outcome::Fail {
                    message: format!(
                        "\"{}\" pod \"{}-{st}\" failed: the pod ci-op-{}/{}-{st} failed after {}",
                        run.short,
                        run.short,
                        r.alnum(8),
                        run.short,
                        time::go_duration(r.range(300, 4000) as i64)
                    ),
                    body: String::new(),
                    cause: 0,
                }
            } else {
                Outcome::Pass
            },
            lifecycle: None,
        });
        if setup_fail && st == "ipi-install-install" {
            break;
        }
    }
    let files = vec![JunitFile {
        rel: "artifacts/junit_operator.xml".into(),
        style: Style::OpenShift,
        root: Root::Suite(Suite { name: Some("job".into()), cases: step_cases, ..Default::default() }),
        truncate_permille: None,
    }];
    let mut all = files;
    if !setup_fail {
        let mut cases = Vec::new();
        for t in &tests {
            cases.push(Case {
                classname: String::new(),
                name: Some(t.name.clone()),
                time_ms: 100 + r.below(120_000),
                outcome: Outcome::Pass,
                lifecycle: if r.chance(0.1) { Some("informing") } else { None },
            });
        }
        if let Some((n, m)) = &test_fail {
            let retried = pattern.is_some_and(|p| p.starts_with("flake/"));
            cases.push(Case {
                classname: String::new(),
                name: Some(n.clone()),
                time_ms: 30_000 + r.below(600_000),
                outcome: Outcome::Fail {
                    message: m.clone(),
                    body: format!("{m}\n\nstdout:\n  waited {}", time::go_duration(r.range(60, 1800) as i64)),
                    cause: 0,
                },
                lifecycle: None,
            });
            if retried && !failed {
                cases.push(Case {
                    classname: String::new(),
                    name: Some(n.clone()),
                    time_ms: 20_000,
                    outcome: Outcome::Pass,
                    lifecycle: None,
                });
            }
        }
        let inner = Suite { name: Some("openshift-tests".into()), cases, ..Default::default() };
        all.push(JunitFile {
            rel: format!(
                "artifacts/{}/openshift-e2e-test/artifacts/junit/junit_e2e__{}.xml",
                run.short,
                time::compact(end)
            ),
            style: Style::OpenShift,
            root: Root::Suites(vec![Suite {
                name: Some("openshift-tests".into()),
                nested: vec![inner],
                ..Default::default()
            }]),
            truncate_permille: None,
        });
    }
    for f in &all {
        let (bytes, _, _) = junit::render(f);
        sink.write(&format!("{prefix}/{}", f.rel), &bytes)?;
    }
    if pattern == Some("culprit-aggregated") {
        // Only the snapshot's results.json: the aggregated XML is not there.
        sink.write(&format!("{prefix}/artifacts/junit/results.json"), aggregated_results_json(&mut r).as_bytes())?;
    } else if run.short.starts_with("aggregated-") {
        let under = run.short.trim_start_matches("aggregated-");
        let path = format!(
            "{prefix}/artifacts/release-analysis-aggregator/openshift-release-analysis-aggregator/artifacts/release-analysis-aggregator/{under}/{tag}/junit-aggregated.xml"
        );
        sink.write(&path, aggregated_junit(&mut r, under, run.state == State::Success).as_bytes())?;
    }
    sink.write(&format!("{prefix}/finished.json"), &serde_json::to_vec_pretty(&fin).unwrap_or_default())?;
    let _ = DAY;
    Ok((log_path, first_error))
}

/// The payload snapshot's `results.json` of a failed aggregated job: a mass
/// failure of the network area (one cause, many symptoms: the same onset, the
/// same "Passed N times, failed M times" shape), each test failing a different
/// subset of the underlying runs (so the runs did not break: the tests did).
fn aggregated_results_json(r: &mut Rng) -> String {
    let job = format!("{JOB_PREFIX}e2e-aws-ovn-upgrade");
    let run = |id: u64| {
        serde_json::json!({
            "jobrunid": id.to_string(),
            "humanurl": format!("https://prow.ci.openshift.org/view/gs/{BUCKET}/logs/{job}/{id}"),
            "gcsartifacturl": format!("https://gcsweb-ci.apps.ci.l2s4.p1.openshiftapps.com/gcs/{BUCKET}/logs/{job}/{id}/artifacts"),
        })
    };
    let base = 2_124_000_000_000_000_000u64 + r.below(999_999_999) * 1000;
    let area = [
        "[sig-network][bz-Networking] clusteroperator/network should stay Available=True during upgrade",
        "[sig-network] pods should successfully create sandboxes by adding pod to network",
        "[sig-network] services should keep serving their endpoints during upgrade",
        "[sig-network] egress firewall should keep blocking denied destinations during upgrade",
        "[sig-network] network policy should keep isolating namespaces during upgrade",
        "[sig-network] ovnkube-node pods should stay ready during upgrade",
    ];
    let mut v = vec![serde_json::json!(
        {"name": "Run multi-stage test release-analysis-aggregator - release-analysis-aggregator-openshift-release-analysis-aggregator container test",
         "status": "failed", "suite_name": "step graph", "failure_text": "Some tests failed aggregation.  See above for details."})];
    for (ti, name) in area.iter().enumerate() {
        let failed = 6 + (ti as u64 % 3);
        let offset = ti as u64;
        let failures: Vec<_> = (0..failed).map(|k| run(base + (k + offset) % 10)).collect();
        let passes: Vec<_> = (failed..10).map(|k| run(base + (k + offset) % 10)).collect();
        v.push(serde_json::json!({
            "name": name,
            "status": "failed",
            "suite_name": "openshift-tests-upgrade",
            "failure_message": format!("Failed: Passed {} times, failed {failed} times.  The historical pass rate is 99%.  The required number of passes is 8.", 10 - failed),
            "aggregated": {"passes": passes, "failures": failures, "skips": []}
        }));
    }
    let mut s = serde_json::to_string_pretty(&serde_json::Value::Array(v)).unwrap_or_default();
    s.push('\n');
    s
}

/// The aggregator's `junit-aggregated.xml`: one case per test, its
/// `<system-out>` a YAML list of the underlying runs, its verdict in the
/// failure message when too few passed.
fn aggregated_junit(r: &mut Rng, under: &str, ok: bool) -> String {
    let job = format!("{JOB_PREFIX}e2e-aws-ovn-upgrade");
    let tests = [
        "[sig-network] pods should successfully create sandboxes by adding pod to network",
        "[sig-arch] Check if alerts are firing during or after upgrade success",
        "[sig-cluster-lifecycle] Cluster completes upgrade",
        "[bz-kube-apiserver] kube-apiserver should not be unreachable during upgrade",
    ];
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<testsuite name=\"{under}\" tests=\"{}\" skipped=\"0\" failures=\"{}\" time=\"0\">\n",
        tests.len(),
        usize::from(!ok)
    ));
    for (ti, t) in tests.iter().enumerate() {
        let runs = 10u32;
        let fails = if !ok && ti == 2 { 3 } else { r.below(2) as u32 };
        let mut out = String::from("passes:\n");
        let mut failed = String::from("failures:\n");
        for k in 0..runs {
            let id = 2_124_000_000_000_000_000u64 + r.below(999_999_999_999) * 1000 + u64::from(k);
            let entry = format!(
                "- jobrunid: \"{id}\"\n  humanurl: https://prow.ci.openshift.org/view/gs/{BUCKET}/logs/{job}/{id}\n  gcsartifacturl: https://gcsweb-ci.apps.ci.l2s4.p1.openshiftapps.com/gcs/{BUCKET}/logs/{job}/{id}/artifacts\n"
            );
            if k < fails {
                failed.push_str(&entry);
            } else {
                out.push_str(&entry);
            }
        }
        if fails == 0 {
            failed.push_str("[]\n");
        }
        s.push_str(&format!(
            "  <testcase name=\"{}\" classname=\"\" time=\"0\">\n",
            t.replace('&', "&amp;").replace('<', "&lt;")
        ));
        let passes = runs - fails;
        if !ok && ti == 2 {
            s.push_str(&format!("    <failure message=\"Passed {passes} times, failed {fails} times.  The historical pass rate is 98%.  The required number of passes is 8.\"></failure>\n"));
        }
        s.push_str("    <system-out>");
        s.push_str(&out);
        s.push_str(&failed);
        s.push_str(&format!("Passed {passes} times, failed {fails} times.  The historical pass rate is 98%.  The required number of passes is 8.\n"));
        s.push_str("</system-out>\n  </testcase>\n");
    }
    s.push_str("</testsuite>\n");
    s
}
