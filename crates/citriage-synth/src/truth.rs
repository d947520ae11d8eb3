//! `truth.json`: the index of everything planted — parameters, layout, line
//! convention, the pattern catalogue, every job's story and dashboard
//! membership, every flaky test, every payload's cause. Per-build records
//! live in `truth/builds.jsonl` (one JSON object per line) so the index
//! stays small at any scale.

use serde::Serialize;

use crate::build::{FlakyTruth, JobTruth};
use crate::catalog::{Class, FLAKY, PATTERNS};
use crate::fixes::StoryTruth;
use crate::params::{Summary, SynthParams};
use crate::payload::PayloadTruth;
use citriage_model::time;

pub const SCHEMA: &str = "citriage-synth-truth/1";
pub const LINE_CONVENTION: &str =
    "Lines are numbered from 1; a line ends at \\r\\n, at a lone \\r, or at \\n (Java readLine / CiDiff convention).";

#[derive(Serialize)]
pub struct DashboardFile {
    pub date: String,
    pub snapshot_time: String,
    pub failures: String,
    pub flakes: String,
}

#[derive(Serialize)]
struct PatternTruth {
    id: String,
    title: &'static str,
    class: Class,
    signature: &'static str,
    modelled_on: &'static str,
}

#[derive(Serialize)]
struct World {
    start_date: String,
    end_date: String,
    world_end: String,
    line_convention: &'static str,
    snapshot_rule: &'static str,
}

#[derive(Serialize)]
struct Layout {
    gcs: &'static str,
    k8s_bucket: &'static str,
    openshift_bucket: &'static str,
    job_history: &'static str,
    openshift_job_history: &'static str,
    prowjobs_js: &'static str,
    dashboards: &'static str,
    release_controller: &'static str,
    github: &'static str,
    ci_config_changes: &'static str,
    builds_truth: &'static str,
}

#[derive(Serialize)]
pub struct Index {
    schema: &'static str,
    generator: &'static str,
    version: &'static str,
    params: SynthParams,
    world: World,
    layout: Layout,
    summary: Summary,
    patterns: Vec<PatternTruth>,
    jobs: Vec<JobTruth>,
    flaky_tests: Vec<FlakyTruth>,
    dashboards: Vec<DashboardFile>,
    payloads: Option<PayloadTruth>,
    /// The planted fix stories (with `fix_stories`).
    #[serde(skip_serializing_if = "Option::is_none")]
    fixes: Option<Vec<StoryTruth>>,
}

impl Index {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        params: &SynthParams,
        start_day: i64,
        end_day: i64,
        world_end: i64,
        summary: &Summary,
        jobs: Vec<JobTruth>,
        flaky_tests: Vec<FlakyTruth>,
        dashboards: Vec<DashboardFile>,
        payloads: Option<PayloadTruth>,
        fixes: Option<Vec<StoryTruth>>,
    ) -> Index {
        let mut patterns: Vec<PatternTruth> = PATTERNS
            .iter()
            .map(|p| PatternTruth {
                id: p.id.to_string(),
                title: p.title,
                class: p.class,
                signature: p.signature,
                modelled_on: p.modelled_on,
            })
            .collect();
        patterns.extend(FLAKY.iter().map(|f| PatternTruth {
            id: format!("flake/{}", f.id),
            title: f.name,
            class: Class::Flake,
            signature: f.signature,
            modelled_on: f.modelled_on,
        }));
        let mut params = params.clone();
        params.threads = 0;
        Index {
            schema: SCHEMA,
            generator: "citriage-synth",
            version: env!("CARGO_PKG_VERSION"),
            params,
            world: World {
                start_date: citriage_model::Day(start_day).to_string(),
                end_date: citriage_model::Day(end_day).to_string(),
                world_end: time::rfc3339(world_end),
                line_convention: LINE_CONVENTION,
                snapshot_rule: "The dashboard dated D is the kettle query run at D 12:00:00Z: it sees builds whose finished.json timestamp is at or before that instant.",
            },
            layout: Layout {
                gcs: "gcs/<bucket>/<object path>",
                k8s_bucket: "kubernetes-ci-logs",
                openshift_bucket: "test-platform-results",
                job_history: "prow/job-history/gs/<bucket>/<logs/<job>|pr-logs/directory/<job>>/index.html and buildId=<id>.html",
                openshift_job_history: "openshift-prow/job-history/gs/test-platform-results/logs/<job>/index.html",
                prowjobs_js: "prow/prowjobs.js",
                dashboards: "k8s-metrics/{failures,flakes}-latest.json and k8s-metrics/{failures,flakes}/<metric>-YYYY-MM-DD.json",
                release_controller: "release-controller/api/v1/releasestream/<stream>/tags and .../release/<tag>",
                github: "github/<org>/<repo>/pull/<n>.diff and github/api/repos/<org>/<repo>/pulls/<n>",
                ci_config_changes: "openshift/ci-config-changes.json",
                builds_truth: "truth/builds.jsonl",
            },
            summary: summary.clone(),
            patterns,
            jobs,
            flaky_tests,
            dashboards,
            payloads,
            fixes,
        }
    }
}

pub fn to_bytes(i: &Index) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(i).unwrap_or_default();
    v.push(b'\n');
    v
}
