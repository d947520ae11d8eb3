//! Command-line interface: argument parsing (clap), output in text or JSON, progress
//! on stderr, and exit codes (0 success, 1 failure, 2 bad input).

use crate::pipeline::{self, Failure};
use citriage_model::{Dataset, Day};
use citriage_sources::HttpOptions;
use citriage_store::Store;
use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Prints a line on stdout, ignoring a closed pipe (`citriage ... | head`).
#[macro_export]
macro_rules! outln {
    () => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout());
    }};
    ($($t:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// citriage — CI triage as software: ingest CI dashboards, categorize and score the
/// failing and flaking jobs, detect drift, flag misclassifications and write an
/// evidence-backed triage report.
#[derive(Parser, Debug)]
#[command(name = "citriage", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// The store (SQLite file). Default: $CITRIAGE_DB, else
    /// $XDG_DATA_HOME/citriage/citriage.db, else ~/.local/share/citriage/citriage.db.
    #[arg(long, global = true, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// Output format of the results printed on stdout.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// No progress output on stderr.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the whole triage on the bundled example dashboards (no network):
    /// import three days of failures and flakes snapshots into a fresh store and
    /// write both reports; then the same over a synthetic world, with its payload
    /// stream analysed and every report verified (all recorded in the stores).
    Demo(DemoArgs),
    /// Import dashboard snapshots (files or URLs) into the store.
    Import(ImportArgs),
    /// Triage a snapshot: categorize, select clusters, drift, misclassifications;
    /// write report.md, report.json and the data files.
    Triage(TriageArgs),
    /// List the snapshots in the store.
    Snapshots(SnapshotsArgs),
    /// Show the drift between the latest stored snapshot of a dataset and its prior.
    Drift(DriftArgs),
    /// Print the category of job names under the built-in or a given rule set.
    Categorize(CategorizeArgs),
    /// Ingest Prow build artifacts (started/finished/prowjob JSON, JUnit) from a GCS
    /// bucket over HTTP or a local mirror into the store; resumable.
    Fetch(FetchArgs),
    /// Job and test metrics from the stored builds: kettle's dashboard figures
    /// reproduced, and corrected figures with flake signals and bias flags.
    Metrics(MetricsArgs),
    /// GitHub PR and issue state (answers cached in the store; `--offline` reads only the cache).
    Gh(GhArgs),
    /// Check a Markdown triage report's claims: PR/issue states, file:line references in
    /// local checkouts, build URLs against the store, and the runbook's structural rules.
    /// The result is recorded in the store (when it exists). Exits 1 when anything is
    /// flagged or could not be checked.
    Verify(VerifyArgs),
    /// List the documents recorded in the store (triage reports, payload analyses,
    /// verifier results), or print one with `reports show KIND KEY`.
    Reports(ReportsArgs),
    /// Cluster the stored builds' failure texts (go.k8s.io/triage-compatible ids, stable
    /// citriage ids carried in the store, known signatures); writes failure_data.json
    /// and clusters.json.
    Cluster(ClusterArgs),
    /// The lines that explain one build's failure (build log and JUnit), with 1-based
    /// line ranges and content hashes; prefers lines absent from a passing build's log.
    Extract(ExtractArgs),
    /// Analyze an OpenShift release payload: chain back to the last all-green payload,
    /// failed blocking jobs with evidence, root causes, scored suspect PRs and the
    /// action. `citriage payload eval --from DIR [--truth FILE]` scores the verdicts over a
    /// synthetic world or a folder of payload snapshots.
    Payload(PayloadArgs),
    /// Write agent briefs for the latest triage: a Phase 3 investigation brief per
    /// selected cluster, filled with verified facts and evidence ids, and a Phase 4
    /// cross-check brief of the highest-leverage claims.
    Brief(BriefArgs),
    /// Serve the local web dashboard over the store (127.0.0.1 by default): overview,
    /// jobs, tests, failure patterns, search, and a JSON API under /api/v1/.
    Serve(ServeArgs),
    /// Evidence from a local checkout: a job's Prow config, OWNERS for a path, the text
    /// at path:line, the commit that introduced a string. Answers go into the ledger.
    Code(CodeArgs),
    /// Look up the evidence ledger: one item by id (`ev-…`), or every item whose locator
    /// starts with a prefix (a build URL, a snapshot file).
    Evidence(EvidenceArgs),
    /// Generate a synthetic CI world (Prow/GCS mirror, dashboards, payload stream and
    /// truth.json) into a folder; same seed and parameters, same bytes.
    Synth(SynthArgs),
    /// Benchmarks that print timings and peak memory.
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Where to write the store and the reports.
    #[arg(long, default_value = "demo-report")]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct SnapshotSourceArgs {
    /// Force the dataset instead of detecting it from the fields.
    #[arg(long, value_parser = parse_dataset)]
    pub dataset: Option<Dataset>,
    /// The day the snapshot describes (YYYY-MM-DD). Default: a date in the file
    /// name, else today (UTC).
    #[arg(long, value_parser = parse_day)]
    pub date: Option<Day>,
    /// HTTP timeout in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Snapshot files or URLs (e.g. https://storage.googleapis.com/k8s-metrics/failures-latest.json).
    #[arg(required = true)]
    pub locations: Vec<String>,
    #[command(flatten)]
    pub source: SnapshotSourceArgs,
}

#[derive(Args, Debug)]
pub struct TriageArgs {
    /// A snapshot file or URL to import and triage. Without it, the latest stored
    /// snapshot of --dataset is used.
    #[arg(long)]
    pub snapshot: Option<String>,
    /// Compare against this snapshot instead of the prior one in the store.
    #[arg(long)]
    pub prior: Option<String>,
    /// Categorization rules (TOML); default: the built-in runbook rules.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Analysis settings (TOML): harness names, by-design patterns, thresholds.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Output folder for the report and data files.
    #[arg(long, default_value = "triage-report")]
    pub out: PathBuf,
    /// Fix PRs linked to failures (TOML: `[[link]] ref = "owner/repo#N"`, `matches =
    /// "regex over categories, test names and failure text"`, `note = "..."`); their
    /// states are read from GitHub (token from GITHUB_TOKEN or GH_TOKEN) and placed in
    /// Tier 0 (merged) or Tier 1 (open, or closed unmerged).
    #[arg(long, value_name = "FILE")]
    pub links: Option<PathBuf>,
    /// Read PR states only from the store's cache.
    #[arg(long)]
    pub offline: bool,
    /// GitHub API base URL.
    #[arg(long, default_value = "https://api.github.com")]
    pub api: String,
    #[command(flatten)]
    pub source: SnapshotSourceArgs,
}

#[derive(Args, Debug)]
pub struct SnapshotsArgs {
    /// Only this dataset.
    #[arg(long, value_parser = parse_dataset)]
    pub dataset: Option<Dataset>,
}

#[derive(Args, Debug)]
pub struct DriftArgs {
    #[arg(long, value_parser = parse_dataset, default_value = "failures")]
    pub dataset: Dataset,
}

#[derive(Args, Debug)]
pub struct CategorizeArgs {
    /// Job names (as they appear in the dashboards, `pr:` prefix included).
    #[arg(required = true)]
    pub jobs: Vec<String>,
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct FetchArgs {
    /// A local folder laid out like the bucket (`<DIR>/logs/<job>/<id>/...`).
    #[arg(long, value_name = "DIR", conflicts_with = "gcs")]
    pub mirror: Option<PathBuf>,
    /// GCS base URL, e.g. https://storage.googleapis.com (the only host contacted).
    #[arg(long, value_name = "URL")]
    pub gcs: Option<String>,
    /// The bucket.
    #[arg(long, default_value = "kubernetes-ci-logs")]
    pub bucket: String,
    /// Jobs to fetch (dashboard naming; `pr:` for presubmits). Repeatable.
    #[arg(long = "job", value_name = "JOB")]
    pub jobs: Vec<String>,
    /// Fetch every job named in the latest stored snapshot of this dataset.
    #[arg(long, value_parser = parse_dataset, value_name = "DATASET")]
    pub from_snapshot: Option<Dataset>,
    /// Fetch every job the source has.
    #[arg(long)]
    pub all: bool,
    /// Only the newest N builds of each job.
    #[arg(long, value_name = "N")]
    pub max_builds: Option<usize>,
    /// Builds fetched at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Prow's prowjobs.js (file or URL): stores state=error builds that have no GCS folder.
    #[arg(long, value_name = "FILE|URL")]
    pub prowjobs: Option<String>,
    /// Cache folder for immutable artifacts fetched over HTTP.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// List builds from Deck's job history (a Deck URL such as https://prow.k8s.io, or
    /// a folder of recorded pages) instead of listing the bucket.
    #[arg(long, value_name = "URL|DIR")]
    pub deck: Option<String>,
    /// Job-history pages read per job with --deck (20 builds a page).
    #[arg(long, default_value_t = 5)]
    pub deck_pages: usize,
    /// Skip jobs whose latest-build.txt names a build already stored complete.
    #[arg(long)]
    pub incremental: bool,
    /// Do not store failure-line excerpts of failed builds' build-log.txt (stored by
    /// default: at most 20 excerpts and 64 KiB of text per build, from the log's last 16 MiB).
    #[arg(long)]
    pub no_log_excerpts: bool,
    /// HTTP timeout in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// End of the window: a date (its end, UTC) or Unix seconds. Default: the end of
    /// the day of the newest stored build.
    #[arg(long, value_name = "DATE|SECONDS")]
    pub as_of: Option<String>,
    /// Window length in days for the corrected figures.
    #[arg(long, default_value_t = 7)]
    pub window: i64,
    /// Only these jobs (dashboard naming). Repeatable.
    #[arg(long = "job", value_name = "JOB")]
    pub jobs: Vec<String>,
    /// Write the dashboards' JSON (`failures-latest.json`, `flakes-latest.json`) as
    /// kettle would compute them from the stored builds.
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// Where `--emit` writes.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Kettle,
}

#[derive(Args, Debug)]
pub struct GhArgs {
    #[command(subcommand)]
    pub what: GhWhat,
}

#[derive(Subcommand, Debug)]
pub enum GhWhat {
    /// The runbook's Phase 5 table (✅ merged, 🟢 open mergeable, 🟡 open blocked, ❌ closed
    /// unmerged, ⚪ none) for refs given or found in a report. Token from GITHUB_TOKEN or GH_TOKEN.
    Sweep {
        /// owner/repo#N, GitHub PR/issue URLs, or #N with --repo.
        refs: Vec<String>,
        /// Check every ref a Markdown report mentions.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// Repository for bare #N refs.
        #[arg(long, value_name = "OWNER/REPO")]
        repo: Option<String>,
        /// Answer only from the cache (says how old each answer is).
        #[arg(long)]
        offline: bool,
        /// GitHub API base URL.
        #[arg(long, default_value = "https://api.github.com")]
        api: String,
        /// Do not walk issue timelines for fix PRs.
        #[arg(long)]
        no_timelines: bool,
    },
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The Markdown report to check.
    #[arg(required_unless_present = "stored", conflicts_with = "stored")]
    pub report: Option<PathBuf>,
    /// Check a Markdown document recorded in the store instead of a file: KIND/KEY as
    /// `citriage reports` lists it (e.g. triage/failures/2026-11-21).
    #[arg(long, value_name = "KIND/KEY")]
    pub stored: Option<String>,
    /// A local checkout for file:line claims: name=path[=owner/repo]. Repeatable.
    #[arg(long = "checkout", value_name = "NAME=PATH[=OWNER/REPO]")]
    pub checkouts: Vec<String>,
    /// The prior report this one follows (allows a Lessons section).
    #[arg(long, value_name = "FILE")]
    pub prior: Option<PathBuf>,
    /// Repository for bare #N refs.
    #[arg(long, value_name = "OWNER/REPO")]
    pub repo: Option<String>,
    /// Answer PR/issue state only from the cache.
    #[arg(long)]
    pub offline: bool,
    /// Exit 0 when nothing is flagged even if some claims could not be checked.
    #[arg(long)]
    pub allow_unchecked: bool,
    /// GitHub API base URL.
    #[arg(long, default_value = "https://api.github.com")]
    pub api: String,
}

#[derive(Args, Debug)]
pub struct ReportsArgs {
    /// Only documents of this kind (triage, payload, verify).
    #[arg(long)]
    pub kind: Option<String>,
    #[command(subcommand)]
    pub what: Option<ReportsWhat>,
}

#[derive(Subcommand, Debug)]
pub enum ReportsWhat {
    /// Print one stored document's body (with --format json: the document with its
    /// title and date).
    Show {
        /// triage, payload or verify.
        kind: String,
        /// As listed, e.g. failures/2026-11-21 or a payload tag.
        key: String,
        /// text/markdown, application/json or text/html. Default: the first stored of
        /// these, in that order.
        #[arg(long, value_name = "TYPE")]
        media_type: Option<String>,
    },
}

#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// Days of failures before --as-of.
    #[arg(long, default_value_t = 14)]
    pub window: i64,
    /// End of the window: a date (its end, UTC) or Unix seconds. Default: the newest build's day.
    #[arg(long, value_name = "DATE|SECONDS")]
    pub as_of: Option<String>,
    /// Normalization: `default` (citriage) or `k8s-triage` (go.k8s.io/triage exactly).
    #[arg(long, default_value = "default")]
    pub profile: String,
    /// Extra known signatures (TOML) merged over the built-in catalogue.
    #[arg(long, value_name = "FILE")]
    pub signatures: Option<PathBuf>,
    /// Owners by test-name prefix for tests without a `[sig-x]` tag:
    /// JSON `{"sig-node": ["Kubelet", "NodeProblemDetector"], ...}`.
    #[arg(long, value_name = "FILE")]
    pub owners: Option<PathBuf>,
    /// Only these jobs (dashboard naming). Repeatable.
    #[arg(long = "job", value_name = "JOB")]
    pub jobs: Vec<String>,
    /// Output folder.
    #[arg(long, default_value = "clusters")]
    pub out: PathBuf,
    /// Clusters listed on stdout.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
}

#[derive(Args, Debug)]
pub struct ExtractArgs {
    /// A build folder (with build-log.txt and artifacts/), a log file, or with --mirror a
    /// bucket path such as logs/<job>/<id>.
    pub build: String,
    /// A local mirror of the bucket; the passing build is then found through the store.
    #[arg(long, value_name = "DIR")]
    pub mirror: Option<PathBuf>,
    /// The bucket (for evidence links with --mirror).
    #[arg(long, default_value = "kubernetes-ci-logs")]
    pub bucket: String,
    /// A passing build's folder or log to diff against.
    #[arg(long, value_name = "DIR|FILE")]
    pub pass: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct PayloadArgs {
    /// The payload tag, e.g. 4.22.0-0.nightly-2026-11-20-041530, or `eval` to score the
    /// verdicts of every payload under --from against a truth.
    pub tag: String,
    /// Offline: a folder of recorded release-controller responses (with `gcs/` and
    /// `github/` beside them) or a payload-snapshot directory. For `eval`: a synthetic
    /// world, or a folder of payload snapshots (one per payload, as the snapshot
    /// repositories lay them out).
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Online: the release controller, e.g. https://amd64.ocp.releases.ci.openshift.org.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A local GCS mirror of the jobs' artifacts (JUnit, build logs) for evidence.
    #[arg(long, value_name = "DIR")]
    pub mirror: Option<PathBuf>,
    /// Online: where PR diffs are read from (e.g. https://github.com); that host is then allowed too.
    #[arg(long, value_name = "URL")]
    pub github: Option<String>,
    /// Online: a Sippy instance for pass-rate enrichment; that host is then allowed too.
    #[arg(long, value_name = "URL")]
    pub sippy: Option<String>,
    /// The release stream (default: derived from the tag).
    #[arg(long)]
    pub stream: Option<String>,
    /// Ignore everything after this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    pub as_of: Option<String>,
    /// CI-configuration changes: a recorded JSON list, or a local openshift/release
    /// checkout whose commits to ci-operator/step-registry and ci-operator/config since
    /// the last all-green payload become candidates (default: the source's own list, if any).
    #[arg(long, value_name = "FILE|DIR")]
    pub ci_config: Option<PathBuf>,
    /// Write payload-analysis-<tag>-summary.html, payload-analysis-<tag>.md,
    /// payload-analysis-<tag>.json and payload-results-<tag>.yaml here (default: write no files).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not record the analysis (JSON, HTML, Markdown) in the store's documents.
    #[arg(long)]
    pub no_store: bool,
    /// For `eval`: the truth, a TOML ([[payload]] tag, culprits = ["org/repo#n"],
    /// optional force_accept) or YAML (payloads:) file. Default: a synthetic world's own
    /// truth.json; for snapshots without a truth only crashes and contradictions are checked.
    #[arg(long, value_name = "FILE")]
    pub truth: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct BriefArgs {
    #[arg(long, value_parser = parse_dataset)]
    pub dataset: Option<Dataset>,
    /// Output folder.
    #[arg(long, default_value = "briefs")]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = citriage_web::DEFAULT_ADDR)]
    pub addr: std::net::SocketAddr,
    /// Days of test-level history shown (flake signals, failing tests, test pages),
    /// ending with the newest build's day.
    #[arg(long, default_value_t = 14, value_name = "DAYS")]
    pub window: i64,
    /// GitHub repository of the "file an issue" and issue-search links.
    #[arg(long, default_value = "kubernetes/kubernetes", value_name = "OWNER/NAME")]
    pub issue_repo: String,
    /// A host name the dashboard may be reached by besides localhost and IP addresses
    /// (requests naming other hosts are refused against DNS rebinding). Repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CodeArgs {
    /// The checkout: name=path (e.g. test-infra=~/src/test-infra).
    #[arg(long, value_name = "NAME=PATH")]
    pub checkout: String,
    #[command(subcommand)]
    pub what: CodeWhat,
}

#[derive(Subcommand, Debug)]
pub enum CodeWhat {
    /// Where a Prow job is configured (file:line), with its testgrid annotations.
    JobConfig { job: String },
    /// OWNERS approvers, reviewers and SIG labels for a path.
    Owners { path: String },
    /// The text at path:line.
    Line { at: String },
    /// The commit that introduced a string (`git log -S`).
    Introduced {
        needle: String,
        /// Limit to a path.
        #[arg(long)]
        path: Option<String>,
    },
}

#[derive(Args, Debug)]
pub struct EvidenceArgs {
    /// Evidence ids as cited in reports.
    pub ids: Vec<String>,
    /// Every item whose locator starts with this.
    #[arg(long, value_name = "PREFIX")]
    pub locator: Option<String>,
}

#[derive(Args, Debug)]
pub struct SynthArgs {
    /// Size preset: tiny (tests), demo, k8s (1,500 jobs, ~100k builds; benchmarks).
    #[arg(long, default_value = "demo")]
    pub preset: String,
    /// Output folder (must be missing or empty).
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub jobs: Option<usize>,
    #[arg(long)]
    pub builds_per_job: Option<usize>,
    #[arg(long)]
    pub days: Option<u32>,
    /// Last day of the world (YYYY-MM-DD).
    #[arg(long)]
    pub end_date: Option<String>,
    #[arg(long)]
    pub failure_rate: Option<f64>,
    #[arg(long)]
    pub log_lines: Option<usize>,
    #[arg(long)]
    pub payloads: Option<usize>,
    /// Worker threads (0 = all cores); does not change the output.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Import and triage a generated snapshot of N jobs (both datasets).
    Triage {
        #[arg(long, default_value_t = 100_000)]
        jobs: usize,
        /// Repetitions; the median is printed.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
    },
    /// Generate a synthetic world, ingest it from the local mirror into a fresh
    /// store, and compute metrics: builds per minute, metrics time, peak RSS.
    Ingest {
        /// Synthetic world preset (tiny, demo, k8s).
        #[arg(long, default_value = "demo")]
        preset: String,
        /// Builds fetched at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Keep the generated world here instead of a temporary folder.
        #[arg(long)]
        world: Option<PathBuf>,
    },
    /// Load-test the dashboard on loopback: serve the store (--db) in-process and let
    /// concurrent clients request cluster lists, cluster pages and job pages; prints
    /// latency percentiles, errors and throughput.
    Serve {
        /// Concurrent clients (keep-alive connections).
        #[arg(long, default_value_t = 100)]
        clients: usize,
        /// Requests in all, at most.
        #[arg(long, default_value_t = 20_000)]
        requests: usize,
        /// Seconds in all, at most.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Cluster pages and job pages requested (each, at most).
        #[arg(long, default_value_t = 300)]
        pages: usize,
        /// Do not let the server render its pages ahead: measure every URL's first
        /// request rendering it.
        #[arg(long)]
        no_prewarm: bool,
    },
}

fn parse_dataset(s: &str) -> Result<Dataset, String> {
    s.parse()
}

fn parse_day(s: &str) -> Result<Day, String> {
    Day::parse(s).ok_or_else(|| format!("{s:?} is not a YYYY-MM-DD date"))
}

/// Runs the CLI; returns the process exit code.
pub fn main_with_args<I: IntoIterator<Item = OsString>>(args: I) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match run(&cli) {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("error: {f}");
            f.exit_code()
        }
    }
}

pub(crate) fn spinner(quiet: bool, msg: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    let style = if std::env::var_os("NO_COLOR").is_some() {
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
    } else {
        ProgressStyle::with_template("{spinner:.cyan} {msg} [{elapsed}]")
    };
    if let Ok(s) = style {
        pb.set_style(s);
    }
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

pub(crate) fn open_store(cli: &Cli) -> Result<Store, Failure> {
    let path = cli.db.clone().unwrap_or_else(citriage_store::default_path);
    Ok(Store::open(&path)?)
}

fn http(args: &SnapshotSourceArgs) -> HttpOptions {
    HttpOptions { timeout: Duration::from_secs(args.timeout.max(1)), ..HttpOptions::default() }
}

pub(crate) fn print_json(v: &serde_json::Value) {
    outln!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
}

fn run(cli: &Cli) -> Result<(), Failure> {
    match &cli.command {
        Command::Demo(a) => demo(cli, a),
        Command::Import(a) => import(cli, a),
        Command::Triage(a) => triage_cmd(cli, a),
        Command::Snapshots(a) => snapshots(cli, a),
        Command::Drift(a) => drift_cmd(cli, a),
        Command::Categorize(a) => categorize(cli, a),
        Command::Fetch(a) => crate::fetch::fetch(cli, a),
        Command::Metrics(a) => crate::fetch::metrics(cli, a),
        Command::Synth(a) => crate::synth::synth(cli, a),
        Command::Gh(a) => crate::evidence_cmds::gh(cli, a),
        Command::Evidence(a) => crate::evidence_cmds::evidence(cli, a),
        Command::Brief(a) => crate::brief_cmd::brief(cli, a),
        Command::Code(a) => crate::code_cmd::code(cli, a),
        Command::Serve(a) => serve(cli, a),
        Command::Payload(a) => crate::payload_cmd::payload(cli, a),
        Command::Cluster(a) => crate::patterns_cmd::cluster_cmd(cli, a),
        Command::Extract(a) => crate::patterns_cmd::extract_cmd(cli, a),
        Command::Reports(a) => crate::documents::reports(cli, a),
        Command::Verify(a) => match crate::evidence_cmds::verify(cli, a)? {
            0 => Ok(()),
            _ => Err(Failure {
                bad_input: false,
                message: "the report has findings or unchecked claims (see above)".into(),
            }),
        },
        Command::Bench(a) => match &a.what {
            BenchWhat::Triage { jobs, repeat } => crate::bench::triage(*jobs, *repeat, cli.format == Format::Json),
            BenchWhat::Ingest { preset, concurrency, world } => {
                crate::bench::ingest(preset, *concurrency, world.as_deref(), cli.format == Format::Json)
            }
            BenchWhat::Serve { clients, requests, seconds, pages, no_prewarm } => {
                let db = cli.db.clone().unwrap_or_else(citriage_store::default_path);
                let spec = crate::bench_serve::LoadSpec {
                    clients: *clients,
                    requests: *requests,
                    seconds: *seconds,
                    pages_per_kind: *pages,
                    prewarm: !*no_prewarm,
                };
                let report = crate::bench_serve::serve(&db, &spec, cli.format == Format::Json)?;
                if report.errors > 0 {
                    return Err(Failure::other(format!("{} of {} requests failed", report.errors, report.requests)));
                }
                Ok(())
            }
        },
    }
}

fn import(cli: &Cli, a: &ImportArgs) -> Result<(), Failure> {
    let mut store = open_store(cli)?;
    let opts = http(&a.source);
    // Validate everything first: one bad file stores nothing.
    let pb = spinner(cli.quiet, "reading snapshots");
    let mut snaps = Vec::new();
    for loc in &a.locations {
        pb.set_message(format!("reading {loc}"));
        let (s, warnings) = pipeline::read_snapshot(loc, a.source.dataset, a.source.date, &opts)?;
        for w in warnings {
            pb.suspend(|| eprintln!("warning: {w}"));
        }
        snaps.push(s);
    }
    pb.set_message("storing");
    let mut results = Vec::new();
    for s in &snaps {
        results.push(pipeline::import(&mut store, s)?);
    }
    pb.finish_and_clear();
    if cli.format == Format::Json {
        print_json(&json!({ "store": store.path(), "imported": results }));
    } else {
        for r in &results {
            outln!(
                "{} {} snapshot of {} ({} jobs) from {} as #{}",
                if r.inserted { "imported" } else { "already stored:" },
                r.snapshot.dataset,
                r.snapshot.date,
                r.snapshot.job_count,
                r.snapshot.source,
                r.snapshot.id
            );
        }
    }
    Ok(())
}

fn triage_cmd(cli: &Cli, a: &TriageArgs) -> Result<(), Failure> {
    let rules = pipeline::load_rules(a.rules.as_deref())?;
    let config = pipeline::load_config(a.config.as_deref())?;
    let mut store = open_store(cli)?;
    let opts = http(&a.source);
    let pb = spinner(cli.quiet, "reading");
    let id = match &a.snapshot {
        Some(loc) => {
            let (s, warnings) = pipeline::read_snapshot(loc, a.source.dataset, a.source.date, &opts)?;
            for w in warnings {
                pb.suspend(|| eprintln!("warning: {w}"));
            }
            pipeline::import(&mut store, &s)?.snapshot.id
        }
        None => {
            let ds = a.source.dataset.unwrap_or(Dataset::Failures);
            match store.latest(ds)? {
                Some(s) => s.id,
                None => {
                    return Err(Failure::input(format!(
                        "the store {} has no {ds} snapshot: pass --snapshot FILE|URL or run `citriage import` first",
                        store.path()
                    )))
                }
            }
        }
    };
    let mut loaded = pipeline::load_with_history(&store, id)?;
    if let Some(p) = &a.prior {
        let (prior, _) = pipeline::read_snapshot(p, Some(loaded.snapshot.meta.dataset), None, &opts)?;
        loaded.prior = Some(prior);
        loaded.older.clear();
    }
    pb.set_message("loading builds");
    let builds = if store.build_counts()?.0 > 0 {
        // The listed jobs' builds, with tests of the last 8 days before the snapshot date.
        let listed: std::collections::BTreeSet<String> = loaded.snapshot.jobs.iter().map(|j| j.job.clone()).collect();
        let since = loaded.snapshot.meta.date.0 * 86_400 - 8 * 86_400;
        Some(crate::fetch::load_builds_filtered(&mut store, Some(since), Some(&listed))?)
    } else {
        None
    };
    let links = match &a.links {
        Some(p) => {
            pb.set_message("reading linked PRs");
            let store_rc = std::rc::Rc::new(store);
            let l = crate::evidence_cmds::read_links(p, store_rc.clone(), &a.api, a.offline)?;
            store = std::rc::Rc::try_unwrap(store_rc).map_err(|_| Failure::other("store still in use"))?;
            l
        }
        None => Vec::new(),
    };
    pb.set_message("triaging");
    let t = pipeline::run_triage(&loaded, &rules, &config, builds.as_deref(), &links);
    pb.set_message("writing report");
    let files = pipeline::write_and_record(&mut store, &t, &a.out)?;
    pipeline::record_report_evidence(&mut store, &t)?;
    pb.finish_and_clear();
    print_summary(cli, &t, &files);
    Ok(())
}

fn print_summary(cli: &Cli, t: &citriage_analysis::Triage, files: &[String]) {
    if cli.format == Format::Json {
        print_json(&json!({
            "dataset": t.snapshot.dataset,
            "date": t.snapshot.date,
            "source": t.snapshot.source,
            "jobs": t.job_count,
            "categories": t.categorized.categories.len(),
            "selected": t.selection.picks,
            "misclassifications": t.misclassifications.iter().map(|f| json!({"kind": f.kind, "subject": f.subject, "jobs": f.jobs.len()})).collect::<Vec<_>>(),
            "drift": t.drift.as_ref().map(|d| json!({"prior": d.prior_date, "added": d.added.len(), "removed": d.removed.len(), "reappeared": d.reappeared.len(), "integrity_violations": d.integrity.as_ref().map(|i| i.violations.len())})),
            "files": files,
        }));
        return;
    }
    outln!(
        "{} snapshot of {}: {} jobs in {} categories",
        t.snapshot.dataset.title(),
        t.snapshot.date,
        t.job_count,
        t.categorized.categories.len()
    );
    outln!("Selected {} clusters:", t.selection.picks.len());
    for (i, p) in t.selection.picks.iter().enumerate() {
        outln!(
            "  {:>2}. {:<28} {:>5} jobs  score {:>6.3}  {}",
            i + 1,
            p.category,
            p.count,
            p.score,
            p.reasons.first().map(String::as_str).unwrap_or("")
        );
    }
    outln!("Misclassifications: {}", t.misclassifications.len());
    for f in &t.misclassifications {
        outln!("  - {}: {} ({} jobs)", f.kind.title(), f.subject, f.jobs.len());
    }
    match &t.drift {
        Some(d) => outln!(
            "Drift since {}: {} added, {} removed, {} reappeared{}",
            d.prior_date,
            d.added.len(),
            d.removed.len(),
            d.reappeared.len(),
            d.integrity
                .as_ref()
                .map(|i| format!(", {} integrity violation(s)", i.violations.len()))
                .unwrap_or_default()
        ),
        None => outln!("Drift: no prior snapshot"),
    }
    outln!("Wrote:");
    for f in files {
        outln!("  {f}");
    }
}

/// The bundled example snapshots, embedded so the demo runs from any folder.
pub const BUNDLED: &[(&str, &str)] = &[
    ("failures-2026-11-19.json", include_str!("../../../examples/k8s/failures-2026-11-19.json")),
    ("failures-2026-11-20.json", include_str!("../../../examples/k8s/failures-2026-11-20.json")),
    ("failures-2026-11-21.json", include_str!("../../../examples/k8s/failures-2026-11-21.json")),
    ("flakes-2026-11-19.json", include_str!("../../../examples/k8s/flakes-2026-11-19.json")),
    ("flakes-2026-11-20.json", include_str!("../../../examples/k8s/flakes-2026-11-20.json")),
    ("flakes-2026-11-21.json", include_str!("../../../examples/k8s/flakes-2026-11-21.json")),
];

fn demo(cli: &Cli, a: &DemoArgs) -> Result<(), Failure> {
    std::fs::create_dir_all(&a.out).map_err(|e| Failure::other(format!("{}: cannot create: {e}", a.out.display())))?;
    let db = cli.db.clone().unwrap_or_else(|| a.out.join("citriage.db"));
    let mut store = Store::open(&db)?;
    let pb = spinner(cli.quiet, "importing the bundled snapshots");
    let mut latest = std::collections::BTreeMap::new();
    for (name, text) in BUNDLED {
        let loc = format!("examples/k8s/{name}");
        let (s, _) = pipeline::snapshot_from_bytes(text.as_bytes(), &loc, None, None)?;
        let r = pipeline::import(&mut store, &s)?;
        latest.insert(r.snapshot.dataset, r.snapshot.id);
    }
    let rules = pipeline::load_rules(None)?;
    let config = pipeline::load_config(None)?;
    let mut all_files = Vec::new();
    let mut triages = Vec::new();
    for (ds, id) in latest {
        pb.set_message(format!("triaging {ds}"));
        let loaded = pipeline::load_with_history(&store, id)?;
        let t = pipeline::run_triage(&loaded, &rules, &config, None, &[]);
        let files = pipeline::write_and_record(&mut store, &t, &a.out.join(ds.as_str()))?;
        pipeline::record_report_evidence(&mut store, &t)?;
        all_files.extend(files.clone());
        triages.push((t, files));
    }
    let bundled = triages.len();
    // The synthetic world: a Prow mirror with builds and JUnit, ingested for real.
    pb.set_message("generating the synthetic world (tiny preset)");
    let world = a.out.join("world");
    if !world.join("truth.json").exists() {
        let _ = std::fs::remove_dir_all(&world);
        let params = citriage_synth::SynthParams::preset("tiny").ok_or_else(|| Failure::other("no tiny preset"))?;
        citriage_synth::generate(&params, &world, &mut |_| {}).map_err(|e| Failure::other(e.to_string()))?;
    }
    let world_db = a.out.join("world.db");
    let mut wstore = Store::open(&world_db)?;
    pb.set_message("ingesting the world's builds");
    let src = citriage_sources::artifacts::LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = citriage_ingest::discover_jobs(&src).map_err(|e| Failure::other(e.to_string()))?;
    let ingest = citriage_ingest::ingest_jobs(&src, &mut wstore, &jobs, &Default::default(), &|_| {})
        .map_err(|e| Failure::other(e.to_string()))?;
    let mut wlatest = std::collections::BTreeMap::new();
    for ds in [Dataset::Failures, Dataset::Flakes] {
        let dir = world.join("k8s-metrics").join(ds.as_str());
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| Failure::other(format!("{}: {e}", dir.display())))?
            .flatten()
            .map(|e| e.path())
            .collect();
        names.sort();
        for p in names {
            let bytes = std::fs::read(&p).map_err(|e| Failure::other(format!("{}: {e}", p.display())))?;
            let loc =
                format!("world/k8s-metrics/{}/{}", ds.as_str(), p.file_name().unwrap_or_default().to_string_lossy());
            let (snap, _) = pipeline::snapshot_from_bytes(&bytes, &loc, Some(ds), None)?;
            let r = pipeline::import(&mut wstore, &snap)?;
            wlatest.insert(ds, r.snapshot.id);
        }
    }
    let builds = crate::fetch::load_builds(&mut wstore)?;
    for (ds, id) in wlatest {
        pb.set_message(format!("triaging the world's {ds}"));
        let loaded = pipeline::load_with_history(&wstore, id)?;
        let t = pipeline::run_triage(&loaded, &rules, &config, Some(&builds), &[]);
        let files = pipeline::write_and_record(&mut wstore, &t, &a.out.join(format!("world-{ds}")))?;
        pipeline::record_report_evidence(&mut wstore, &t)?;
        triages.push((t, files));
    }
    // The world's payload stream, analysed as `payload TAG --from WORLD` would, so the
    // dashboard over the world store has payloads to show.
    pb.set_message("analysing the world's payloads");
    let payloads = crate::payload_cmd::analyze_world_payloads(&world)?;
    for p in &payloads {
        crate::documents::record_payload(&mut wstore, p)?;
    }
    // The world's failures clustered with both profiles, so the dashboard over the world
    // store has patterns to show.
    pb.set_message("clustering the world's failures");
    let mut clustered = Vec::new();
    for profile in [citriage_patterns::normalize::Profile::Default, citriage_patterns::normalize::Profile::K8sTriage] {
        let c = crate::patterns_cmd::cluster_store(
            &mut wstore,
            profile,
            14,
            None,
            &[],
            &citriage_patterns::signatures::Catalogue::builtin(),
            &Default::default(),
            &pb,
        )?;
        clustered.push((crate::patterns_cmd::profile_name(profile), c.rows.len(), c.clustering.clusters.len()));
    }
    // Each report verified as stored, the result recorded beside it. Findings are
    // reported below; they do not fail the demo.
    pb.set_message("verifying the reports");
    let mut checks = Vec::new();
    for (t, _) in &triages[..bundled] {
        let (s, c) = verify_demo_report(store, t, &db)?;
        store = s;
        checks.push(c);
    }
    for (t, _) in &triages[bundled..] {
        let (s, c) = verify_demo_report(wstore, t, &world_db)?;
        wstore = s;
        checks.push(c);
    }
    drop((store, wstore));
    pb.finish_and_clear();
    if cli.format == Format::Json {
        print_json(&json!({
            "store": db.display().to_string(),
            "world_store": world_db.display().to_string(),
            "world_builds": ingest.builds_found,
            "reports": triages.iter().map(|(t, f)| json!({"dataset": t.snapshot.dataset, "date": t.snapshot.date, "jobs": t.job_count, "jobs_with_builds": t.jobs_with_builds, "selected": t.selection.picks.len(), "misclassifications": t.misclassifications.len(), "files": f})).collect::<Vec<_>>(),
            "payloads": payloads.iter().map(|p| json!({"tag": p.payload.tag, "phase": p.payload.phase.as_str(), "verdict": p.decision.verdict.as_str()})).collect::<Vec<_>>(),
            "clusters": clustered.iter().map(|(p, f, c)| json!({"profile": p, "failures": f, "clusters": c})).collect::<Vec<_>>(),
            "verifications": checks.iter().map(|c| json!({"store": c.store, "key": c.key, "verdict": c.verdict, "findings": c.findings, "unchecked": c.unchecked})).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    for (t, files) in &triages {
        print_summary(cli, t, files);
        outln!();
    }
    match payloads.first() {
        Some(first) => outln!(
            "Payloads: {} of the world's {} stream analysed and recorded in {}",
            payloads.len(),
            first.payload.stream_name,
            world_db.display()
        ),
        None => outln!("Payloads: the world has no payload stream"),
    }
    for (p, f, c) in &clustered {
        outln!(
            "Clusters ({p} profile): {f} failures of the last 14 days in {c} clusters, recorded in {}",
            world_db.display()
        );
    }
    outln!("Verification of the reports (recorded in the stores; `citriage reports` lists them):");
    for c in &checks {
        outln!("  {}", c.describe());
    }
    outln!(
        "Stores: {} (bundled dashboards), {} (synthetic world: {} builds)",
        db.display(),
        world_db.display(),
        builds.len()
    );
    outln!("Open {} to read the failures report.", Path::new(&a.out).join("failures").join("report.md").display());
    outln!(
        "Open {} for the same triage backed by build data.",
        Path::new(&a.out).join("world-failures").join("report.md").display()
    );
    outln!("Browse it all: citriage serve --db {}", world_db.display());
    Ok(())
}

/// A demo report's verification, for the summary.
struct DemoCheck {
    store: String,
    key: String,
    verdict: &'static str,
    /// Findings per rule id.
    findings: std::collections::BTreeMap<String, usize>,
    unchecked: usize,
}

impl DemoCheck {
    fn describe(&self) -> String {
        let mut s = format!("{} in {}: {}", self.key, self.store, self.verdict);
        if !self.findings.is_empty() {
            let rules: Vec<String> = self.findings.iter().map(|(r, n)| format!("{r} ×{n}")).collect();
            s.push_str(&format!(" — {} finding(s): {}", self.findings.values().sum::<usize>(), rules.join(", ")));
        }
        if self.unchecked > 0 {
            s.push_str(&format!("; {} claim(s) not checked (offline, no checkout)", self.unchecked));
        }
        s
    }
}

/// Verifies a demo report as stored (offline, no checkouts) and records the result.
fn verify_demo_report(store: Store, t: &citriage_analysis::Triage, db: &Path) -> Result<(Store, DemoCheck), Failure> {
    let key = crate::documents::triage_key(t);
    let header = store
        .documents(Some("triage"))?
        .into_iter()
        .find(|h| h.key == key && h.media_type == crate::documents::MARKDOWN)
        .ok_or_else(|| Failure::other(format!("the report triage/{key} was not recorded in {}", store.path())))?;
    let text = store
        .document("triage", &key, crate::documents::MARKDOWN)?
        .map(|d| d.body)
        .ok_or_else(|| Failure::other(format!("the report triage/{key} was not recorded in {}", store.path())))?;
    let name = format!("triage/{key}");
    let verified = crate::documents::Verified { document: Some(&header), file_name: &name, text: &text };
    let setup = crate::evidence_cmds::VerifySetup::offline();
    let (store, c) = crate::evidence_cmds::check_report(store, &text, &name, &verified, &setup, true)?;
    let mut findings = std::collections::BTreeMap::new();
    for f in &c.verification.findings {
        *findings.entry(f.rule_id.clone()).or_insert(0) += 1;
    }
    let check = DemoCheck {
        store: db.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| db.display().to_string()),
        key: c.recorded.unwrap_or(name),
        verdict: c.verification.verdict(),
        findings,
        unchecked: c.verification.unchecked.len(),
    };
    Ok((store, check))
}

fn serve(cli: &Cli, a: &ServeArgs) -> Result<(), Failure> {
    let db = cli.db.clone().unwrap_or_else(citriage_store::default_path);
    if a.window < 1 {
        return Err(Failure::input(format!("--window {}: must be at least 1 day", a.window)));
    }
    if a.issue_repo.split('/').filter(|p| !p.is_empty()).count() != 2 {
        return Err(Failure::input(format!("--issue-repo {:?}: expected OWNER/NAME", a.issue_repo)));
    }
    let opts = citriage_web::ServeOptions {
        index: citriage_web::index::IndexSettings { window_days: a.window },
        issue_repo: a.issue_repo.clone(),
        allow_hosts: a.allow_hosts.clone(),
        ..Default::default()
    };
    let pb = spinner(cli.quiet, &format!("reading {}", db.display()));
    let started = std::time::Instant::now();
    let server = citriage_web::Server::bind_with(db, a.addr, opts).map_err(|e| match e {
        citriage_web::ServeError::MissingStore(_) | citriage_web::ServeError::Store(_) => Failure::input(e.to_string()),
        other => Failure::other(other.to_string()),
    })?;
    pb.finish_and_clear();
    let addr = server.local_addr().map_err(|e| Failure::other(e.to_string()))?;
    let view = server.state().view();
    eprintln!(
        "read {} builds of {} jobs, {} failure texts and log excerpts, {} documents in {:.1} s",
        view.builds.len(),
        view.jobs.len(),
        view.search.entries,
        view.documents.len(),
        started.elapsed().as_secs_f64()
    );
    drop(view);
    eprintln!("serving on http://{addr} (Ctrl-C to stop)");
    server.run(citriage_web::ctrl_c()).map_err(|e| Failure::other(e.to_string()))
}

fn snapshots(cli: &Cli, a: &SnapshotsArgs) -> Result<(), Failure> {
    let store = open_store(cli)?;
    let list = store.list_snapshots(a.dataset)?;
    if cli.format == Format::Json {
        print_json(&json!({ "store": store.path(), "snapshots": list }));
        return Ok(());
    }
    if list.is_empty() {
        outln!("no snapshots in {}", store.path());
    }
    for s in list {
        outln!("#{:<5} {:<9} {}  {:>7} jobs  {}", s.id, s.dataset, s.date, s.job_count, s.source);
    }
    Ok(())
}

fn drift_cmd(cli: &Cli, a: &DriftArgs) -> Result<(), Failure> {
    let store = open_store(cli)?;
    let Some(latest) = store.latest(a.dataset)? else {
        return Err(Failure::input(format!("the store {} has no {} snapshot", store.path(), a.dataset)));
    };
    let loaded = pipeline::load_with_history(&store, latest.id)?;
    let Some(prior) = &loaded.prior else {
        return Err(Failure::input(format!(
            "only one {} snapshot date in {}: drift needs an earlier one",
            a.dataset,
            store.path()
        )));
    };
    let cfg = citriage_analysis::AnalysisConfig::default();
    let d = citriage_analysis::drift::drift(&loaded.snapshot, prior, &loaded.older, cfg.consistency_drift_threshold);
    if cli.format == Format::Json {
        print_json(&serde_json::to_value(&d).unwrap_or_default());
        return Ok(());
    }
    outln!("{} drift from {} to {} ({} day(s))", a.dataset, d.prior_date, d.now_date, d.days_between);
    outln!("  added {}, removed {}, reappeared {}", d.added.len(), d.removed.len(), d.reappeared.len());
    for j in &d.added {
        outln!("  + {}", j.entry.job);
    }
    for j in &d.removed {
        outln!("  - {}", j.entry.job);
    }
    for r in &d.reappeared {
        outln!("  ↺ {} (last listed {})", r.job, r.last_listed);
    }
    if let Some(i) = &d.integrity {
        outln!("  integrity: {} of {} common jobs consistent", i.consistent, i.common);
        for v in &i.violations {
            outln!("  ! {} {} -> {} (expected {})", v.job, v.prior, v.now, v.expected);
        }
    }
    for m in d.worsened.iter().chain(&d.improved) {
        outln!("  ~ {} {:.3} -> {:.3}", m.job, m.prior, m.now);
    }
    Ok(())
}

fn categorize(cli: &Cli, a: &CategorizeArgs) -> Result<(), Failure> {
    let rules = pipeline::load_rules(a.rules.as_deref())?;
    let rows: Vec<(String, String)> = a.jobs.iter().map(|j| (j.clone(), rules.categorize(j).to_string())).collect();
    if cli.format == Format::Json {
        print_json(&json!(rows.iter().map(|(j, c)| json!({"job": j, "category": c})).collect::<Vec<_>>()));
    } else {
        for (j, c) in rows {
            outln!("{c:<28} {j}");
        }
    }
    Ok(())
}
