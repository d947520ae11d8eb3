//! The team configuration file (TOML): where builds come from, how often they are
//! fetched, how long they are kept, who owns what, and where the dashboard listens.
//! `citriage config check` validates it; `citriage watch` and `citriage serve
//! --config` read it. Every error names the key it is about
//! (`sources.buckets[0].interval: ...`). The documented example is
//! `docs/citriage.example.toml`.

use crate::error::{Error, Result};
use citriage_model::time::parse_duration;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The store (`sqlite:FILE`, a path, or `postgres://…`); `--db` and `CITRIAGE_DB` win.
    #[serde(default)]
    pub store: Option<String>,
    #[serde(default)]
    pub server: ServerConfig,
    #[serde(default)]
    pub sources: Sources,
    #[serde(default)]
    pub schedule: Schedule,
    #[serde(default)]
    pub retention: Retention,
    /// Owners: a team name → regular expressions of the jobs it owns.
    #[serde(default)]
    pub owners: BTreeMap<String, Vec<String>>,
    /// Alerts: rules, routes by owner, destinations, the SMTP relay (docs/alerts.md).
    #[serde(default)]
    pub alerts: citriage_delivery::AlertsConfig,
    /// Local checkouts of tested repositories and of the job configuration
    /// (`ORG/REPO=PATH`, as `suspects --checkout` takes them): the dashboard's pattern
    /// and job pages rank the commits of their regression windows there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkouts: Vec<String>,
    /// Pull requests (`ORG/REPO#N`) `watch` analyses each turn (docs/pr.md); their
    /// comments are posted only with `watch --apply` and a GitHub token.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prs: Vec<String>,
}

/// The dashboard's address and name.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Address `serve` listens on (loopback unless `serve --listen-public`).
    #[serde(default = "default_listen")]
    pub listen: String,
    /// The host name users reach the dashboard by (accepted by the Host check).
    #[serde(default)]
    pub public_name: Option<String>,
    /// Days of test-level history the dashboard shows.
    #[serde(default = "default_window")]
    pub window_days: i64,
    /// The GitHub API base the dashboard reads references from (the link form's
    /// lookups, the MCP tools): GitHub Enterprise's `https://HOST/api/v3`. Default:
    /// `https://api.github.com`. The token comes from the environment only.
    #[serde(default)]
    pub github_api: Option<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { listen: default_listen(), public_name: None, window_days: default_window(), github_api: None }
    }
}

/// The address `serve` listens on when the file names none: the dashboard's own
/// default (`citriage_web::DEFAULT_ADDR`, which the CLI's tests keep equal).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

fn default_listen() -> String {
    DEFAULT_LISTEN.to_string()
}

fn default_window() -> i64 {
    14
}

/// What is fetched.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Sources {
    /// Prow build buckets (over GCS HTTP, or a local mirror).
    #[serde(default)]
    pub buckets: Vec<BucketSource>,
    /// Daily dashboard snapshots (k8s-metrics `failures-latest.json` and the like).
    #[serde(default)]
    pub dashboards: Vec<DashboardSource>,
    /// OpenShift release streams to follow (release-controller).
    #[serde(default)]
    pub release_streams: Vec<ReleaseStream>,
    /// GitHub repositories whose pull requests and issues the store knows of are kept
    /// up to date: `OWNER/NAME`, or a table with the repository and its options.
    #[serde(default)]
    pub github: Vec<GithubSource>,
    /// TestGrid dashboards or tabs, each a URL as users copy it.
    #[serde(default)]
    pub testgrid: Vec<TestgridSource>,
}

/// One TestGrid dashboard (every tab) or tab.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TestgridSource {
    pub name: String,
    /// `https://testgrid.k8s.io/DASHBOARD` (every tab), `.../DASHBOARD#TAB` or
    /// `.../DASHBOARD/table?tab=TAB` (that tab); only its origin is contacted.
    pub url: String,
    #[serde(default)]
    pub interval: Option<String>,
}

/// One bucket of Prow builds.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BucketSource {
    /// A short unique name: the source's key in the status page and metrics.
    pub name: String,
    /// The bucket (`kubernetes-ci-logs`).
    pub bucket: String,
    /// GCS base URL (`https://storage.googleapis.com`); or `mirror`.
    #[serde(default)]
    pub gcs: Option<String>,
    /// A local folder laid out like the bucket; or `gcs`.
    #[serde(default)]
    pub mirror: Option<PathBuf>,
    /// Jobs to fetch (dashboard naming; `pr:` for presubmits).
    #[serde(default)]
    pub jobs: Vec<String>,
    /// Also every job of the bucket whose name matches this regular expression.
    #[serde(default)]
    pub job_regex: Option<String>,
    /// Only the newest N builds of each job per tick.
    #[serde(default)]
    pub max_builds: Option<usize>,
    /// Builds fetched at once.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// How often (overrides `schedule.interval`).
    #[serde(default)]
    pub interval: Option<String>,
    /// Keep failure-line excerpts of failed builds' logs.
    #[serde(default = "yes")]
    pub log_excerpts: bool,
}

fn default_concurrency() -> usize {
    8
}

fn yes() -> bool {
    true
}

/// One dashboard snapshot URL or file.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DashboardSource {
    pub name: String,
    /// `failures` or `flakes`.
    pub dataset: String,
    /// URL or path of the snapshot.
    pub location: String,
    #[serde(default)]
    pub interval: Option<String>,
}

/// One release stream.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReleaseStream {
    pub name: String,
    /// The release controller's base URL.
    pub controller: String,
    /// The stream (`4.18.0-0.nightly`).
    pub stream: String,
    #[serde(default)]
    pub interval: Option<String>,
    /// The newest N payloads of the stream are analysed (again when their phase changes).
    #[serde(default = "default_max_payloads")]
    pub max_payloads: usize,
    /// A local folder laid out like the GCS bucket of the payload jobs' artifacts
    /// (JUnit, build logs): the analyses' evidence; or `gcs`. Without either,
    /// analyses have none.
    #[serde(default)]
    pub mirror: Option<PathBuf>,
    /// A GCS base URL (`https://storage.googleapis.com`) the payload jobs' artifacts
    /// are read from over HTTP (its origin is then contacted too); or `mirror`.
    #[serde(default)]
    pub gcs: Option<String>,
    /// Where pull-request diffs are read from (`https://patch-diff.githubusercontent.com/raw`).
    #[serde(default)]
    pub github_diffs: Option<String>,
}

fn default_max_payloads() -> usize {
    5
}

/// The GitHub API base used when a repository names none.
pub const GITHUB_API: &str = citriage_github::DEFAULT_API_BASE;

/// One GitHub repository: `"OWNER/NAME"`, or a table.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum GithubSource {
    Repo(String),
    Table(GithubRepo),
}

/// A GitHub repository with its options.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GithubRepo {
    /// `OWNER/NAME`.
    pub repo: String,
    /// The source's key on the status page and in /metrics (default: `OWNER/NAME`).
    #[serde(default)]
    pub name: Option<String>,
    /// The API base (default `https://api.github.com`).
    #[serde(default)]
    pub api: Option<String>,
    #[serde(default)]
    pub interval: Option<String>,
    /// At most this many pull requests and issues are looked up per tick (newest numbers first).
    #[serde(default = "default_max_refs")]
    pub max_refs: usize,
}

fn default_max_refs() -> usize {
    200
}

impl GithubSource {
    /// `OWNER/NAME`.
    pub fn repo(&self) -> &str {
        match self {
            GithubSource::Repo(r) => r,
            GithubSource::Table(t) => &t.repo,
        }
    }
    /// The source's name.
    pub fn name(&self) -> &str {
        match self {
            GithubSource::Table(GithubRepo { name: Some(n), .. }) => n,
            _ => self.repo(),
        }
    }
    pub fn api(&self) -> &str {
        match self {
            GithubSource::Table(GithubRepo { api: Some(a), .. }) => a,
            _ => GITHUB_API,
        }
    }
    pub fn interval(&self) -> Option<&str> {
        match self {
            GithubSource::Table(t) => t.interval.as_deref(),
            GithubSource::Repo(_) => None,
        }
    }
    pub fn max_refs(&self) -> usize {
        match self {
            GithubSource::Table(t) => t.max_refs,
            GithubSource::Repo(_) => default_max_refs(),
        }
    }
}

impl<'de> Deserialize<'de> for GithubSource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = GithubSource;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"OWNER/NAME\" or a table with repo = \"OWNER/NAME\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<GithubSource, E> {
                Ok(GithubSource::Repo(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<GithubSource, A::Error> {
                GithubRepo::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(GithubSource::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// When sources are fetched and how failures are retried.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// How often each source is fetched (`15m`, `1h`, ...).
    #[serde(default = "default_interval")]
    pub interval: String,
    /// First wait after a failure; doubled each failure up to `backoff_max`.
    #[serde(default = "default_backoff")]
    pub backoff: String,
    #[serde(default = "default_backoff_max")]
    pub backoff_max: String,
    /// Re-cluster the window's failures after a tick that stored builds.
    #[serde(default = "yes")]
    pub recluster: bool,
    /// How long a worker's claim on a source lasts without renewal.
    #[serde(default = "default_lease")]
    pub lease: String,
    /// Run the alert rules after a tick that stored new data, and send the alerts'
    /// outbox after every tick (`[alerts]` says where they go). Default: when
    /// `[alerts]` names a destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<bool>,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            interval: default_interval(),
            backoff: default_backoff(),
            backoff_max: default_backoff_max(),
            recluster: true,
            lease: default_lease(),
            alerts: None,
        }
    }
}

fn default_interval() -> String {
    "15m".into()
}
fn default_backoff() -> String {
    "1m".into()
}
fn default_backoff_max() -> String {
    "1h".into()
}
fn default_lease() -> String {
    "10m".into()
}

/// What is kept.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Retention {
    /// Days of builds kept (older ones may be pruned).
    #[serde(default = "default_keep")]
    pub window_days: i64,
    /// Days log excerpts are kept (at most `window_days`).
    #[serde(default = "default_keep")]
    pub log_days: i64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { window_days: default_keep(), log_days: default_keep() }
    }
}

fn default_keep() -> i64 {
    30
}

/// Durations of the schedule in seconds, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub interval: i64,
    pub backoff: i64,
    pub backoff_max: i64,
    pub lease: i64,
}

impl Config {
    /// Reads and validates a configuration file; errors name the file and the key.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        Config::parse(&text).map_err(|e| Error::input(format!("{}: {e}", path.display())))
    }

    /// Parses and validates configuration text; the error names the key.
    pub fn parse(text: &str) -> Result<Config, String> {
        let de = toml::Deserializer::parse(text).map_err(|e| e.to_string().trim_end().to_string())?;
        let cfg: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = inner.message().trim_end().to_string();
            let line = inner.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            match (path.as_str(), line) {
                (".", Some(l)) => format!("line {l}: {msg}"),
                (".", None) => msg,
                (p, Some(l)) => format!("{p} (line {l}): {msg}"),
                (p, None) => format!("{p}: {msg}"),
            }
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The checks types alone cannot make.
    fn validate(&self) -> Result<(), String> {
        for c in &self.checkouts {
            crate::checkouts::parse_checkout(c).map_err(|e| format!("checkouts: {e}"))?;
        }
        let addr: Result<std::net::SocketAddr, _> = self.server.listen.parse();
        if addr.is_err() {
            return Err(format!("server.listen: {:?} is not an address such as 127.0.0.1:8080", self.server.listen));
        }
        if let Some(n) = &self.server.public_name {
            if n.is_empty() || n.contains(['/', ':', ' ']) {
                return Err(format!("server.public_name: {n:?} is not a host name"));
            }
        }
        if let Some(g) = &self.server.github_api {
            if !(g.starts_with("https://") || g.starts_with("http://")) || g.contains(char::is_whitespace) {
                return Err(format!("server.github_api: {g:?} is not an http(s) URL"));
            }
        }
        if self.server.window_days < 1 {
            return Err("server.window_days: must be at least 1".into());
        }
        for p in &self.prs {
            crate::pr::PrTarget::parse(p).map_err(|e| format!("prs: {e}"))?;
        }
        if let Some(db) = &self.store {
            if db.trim().is_empty() {
                return Err("store: empty".into());
            }
        }
        self.timing()?;
        let mut names = std::collections::BTreeSet::new();
        // `derived`: a name the file does not give (a GitHub repository's OWNER/NAME).
        let mut name = |key: String, n: &str, derived: bool| -> Result<(), String> {
            if !derived && (n.is_empty() || !n.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))) {
                return Err(format!("{key}.name: {n:?} must be letters, digits, '-', '_' or '.'"));
            }
            if !names.insert(n.to_string()) {
                let key = if derived { key } else { format!("{key}.name") };
                return Err(format!("{key}: {n:?} is used by another source"));
            }
            Ok(())
        };
        for (i, b) in self.sources.buckets.iter().enumerate() {
            let key = format!("sources.buckets[{i}]");
            name(key.clone(), &b.name, false)?;
            match (&b.gcs, &b.mirror) {
                (Some(_), Some(_)) => return Err(format!("{key}: give gcs or mirror, not both")),
                (None, None) => return Err(format!("{key}: say where builds come from: gcs = URL or mirror = DIR")),
                (Some(u), None) if !citriage_sources::is_url(u) => {
                    return Err(format!("{key}.gcs: {u:?} is not an http(s) URL"))
                }
                _ => {}
            }
            if b.bucket.is_empty() {
                return Err(format!("{key}.bucket: empty"));
            }
            if b.jobs.is_empty() && b.job_regex.is_none() {
                return Err(format!("{key}: no jobs: give jobs = [...] or job_regex"));
            }
            if let Some(r) = &b.job_regex {
                regex::Regex::new(r).map_err(|e| format!("{key}.job_regex: {e}"))?;
            }
            if b.concurrency == 0 {
                return Err(format!("{key}.concurrency: must be at least 1"));
            }
            if let Some(iv) = &b.interval {
                duration(&format!("{key}.interval"), iv)?;
            }
        }
        for (i, d) in self.sources.dashboards.iter().enumerate() {
            let key = format!("sources.dashboards[{i}]");
            name(key.clone(), &d.name, false)?;
            if !matches!(d.dataset.as_str(), "failures" | "flakes") {
                return Err(format!("{key}.dataset: {:?} is not failures or flakes", d.dataset));
            }
            if let Some(iv) = &d.interval {
                duration(&format!("{key}.interval"), iv)?;
            }
        }
        for (i, r) in self.sources.release_streams.iter().enumerate() {
            let key = format!("sources.release_streams[{i}]");
            name(key.clone(), &r.name, false)?;
            if !citriage_sources::is_url(&r.controller) {
                return Err(format!("{key}.controller: {:?} is not an http(s) URL", r.controller));
            }
            if r.stream.is_empty() {
                return Err(format!("{key}.stream: empty"));
            }
            if let Some(iv) = &r.interval {
                duration(&format!("{key}.interval"), iv)?;
            }
            if r.max_payloads == 0 {
                return Err(format!("{key}.max_payloads: must be at least 1"));
            }
            if let Some(g) = &r.github_diffs {
                if !citriage_sources::is_url(g) {
                    return Err(format!("{key}.github_diffs: {g:?} is not an http(s) URL"));
                }
            }
            match (&r.gcs, &r.mirror) {
                (Some(_), Some(_)) => {
                    return Err(format!("{key}: give gcs or mirror for the jobs' artifacts, not both"))
                }
                (Some(u), None) if !citriage_sources::is_url(u) => {
                    return Err(format!("{key}.gcs: {u:?} is not an http(s) URL"))
                }
                _ => {}
            }
        }
        for (i, g) in self.sources.github.iter().enumerate() {
            let key = format!("sources.github[{i}]");
            let repo = g.repo();
            if repo.split('/').filter(|p| !p.is_empty()).count() != 2 || repo.matches('/').count() != 1 {
                let key = if matches!(g, GithubSource::Table(_)) { format!("{key}.repo") } else { key };
                return Err(format!("{key}: {repo:?} is not OWNER/NAME"));
            }
            match g {
                GithubSource::Table(GithubRepo { name: Some(n), .. }) => name(key.clone(), n, false)?,
                _ => name(key.clone(), repo, true)?,
            }
            if let GithubSource::Table(t) = g {
                if let Some(a) = &t.api {
                    if !citriage_sources::is_url(a) {
                        return Err(format!("{key}.api: {a:?} is not an http(s) URL"));
                    }
                }
                if let Some(iv) = &t.interval {
                    duration(&format!("{key}.interval"), iv)?;
                }
                if t.max_refs == 0 {
                    return Err(format!("{key}.max_refs: must be at least 1"));
                }
            }
        }
        for (i, t) in self.sources.testgrid.iter().enumerate() {
            let key = format!("sources.testgrid[{i}]");
            name(key.clone(), &t.name, false)?;
            citriage_sources::testgrid::parse_target(&t.url).map_err(|e| {
                let why = e.strip_prefix(&format!("--testgrid {}: ", t.url)).unwrap_or(&e);
                format!("{key}.url: {:?}: {why}", t.url)
            })?;
            if let Some(iv) = &t.interval {
                duration(&format!("{key}.interval"), iv)?;
            }
        }
        if self.retention.window_days < 1 {
            return Err("retention.window_days: must be at least 1".into());
        }
        if self.retention.log_days < 1 || self.retention.log_days > self.retention.window_days {
            return Err("retention.log_days: must be between 1 and retention.window_days".into());
        }
        for (team, patterns) in &self.owners {
            for (i, p) in patterns.iter().enumerate() {
                regex::Regex::new(p).map_err(|e| format!("owners.{team}[{i}]: {e}"))?;
            }
        }
        self.alerts.check()?;
        Ok(())
    }

    /// The schedule's durations in seconds.
    pub fn timing(&self) -> Result<Timing, String> {
        let s = &self.schedule;
        let t = Timing {
            interval: duration("schedule.interval", &s.interval)?,
            backoff: duration("schedule.backoff", &s.backoff)?,
            backoff_max: duration("schedule.backoff_max", &s.backoff_max)?,
            lease: duration("schedule.lease", &s.lease)?,
        };
        if t.backoff_max < t.backoff {
            return Err("schedule.backoff_max: shorter than schedule.backoff".into());
        }
        Ok(t)
    }

    /// How often a bucket source is fetched, in seconds.
    pub fn bucket_interval(&self, b: &BucketSource) -> i64 {
        self.interval(b.interval.as_deref())
    }

    /// Whether `watch` runs the alert rules and sends their outbox (`schedule.alerts`,
    /// by default when `[alerts]` names a destination).
    pub fn watch_alerts(&self) -> bool {
        self.schedule.alerts.unwrap_or(!self.alerts.destinations.is_empty())
    }

    /// How many sources the file lists.
    pub fn source_count(&self) -> usize {
        let s = &self.sources;
        s.buckets.len() + s.dashboards.len() + s.release_streams.len() + s.github.len() + s.testgrid.len()
    }

    /// A source's own interval, else `schedule.interval`, in seconds.
    pub fn interval(&self, own: Option<&str>) -> i64 {
        let base = self.timing().map(|t| t.interval).unwrap_or(900);
        own.and_then(parse_duration).unwrap_or(base)
    }

    /// The owner of a job: the first team (in name order) with a matching pattern.
    pub fn owner_of(&self, job: &str) -> Option<&str> {
        self.owners
            .iter()
            .find(|(_, ps)| ps.iter().any(|p| regex::Regex::new(p).is_ok_and(|r| r.is_match(job))))
            .map(|(t, _)| t.as_str())
    }
}

/// A worker's default name in leases (sources', the alerts' outbox): host name and
/// process id.
pub fn default_worker_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
    format!("{}:{}", host.unwrap_or_else(|| "localhost".into()), std::process::id())
}

fn duration(key: &str, v: &str) -> Result<i64, String> {
    match parse_duration(v) {
        Some(s) if s > 0 => Ok(s),
        _ => Err(format!("{key}: {v:?} is not a duration such as 90s, 15m, 1h30m or 2d")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alerts_section_is_checked_and_turns_watch_alerts_on() {
        let e = Config::parse("[[alerts.destinations]]\nname = \"h\"\nkind = \"webhook\"\nurl = \"ftp://x/y\"\n")
            .unwrap_err();
        assert!(e.starts_with("alerts.destinations[0].url:"), "{e}");
        let e = Config::parse("[alerts.routes]\nnode = [\"nowhere\"]\n").unwrap_err();
        assert!(e.starts_with("alerts.routes.node[0]:"), "{e}");
        assert!(!Config::parse("").unwrap().watch_alerts(), "no destination: watch alerts nothing");
        let hook = "[[alerts.destinations]]\nname = \"h\"\nkind = \"webhook\"\nurl_env = \"HOOK\"\n";
        assert!(Config::parse(hook).unwrap().watch_alerts());
        assert!(!Config::parse(&format!("[schedule]\nalerts = false\n{hook}")).unwrap().watch_alerts());
        assert!(Config::parse("[schedule]\nalerts = true\n").unwrap().watch_alerts());
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::parse("[schedule]\ninterval = \"soon\"\n").unwrap_err();
        assert!(e.starts_with("schedule.interval:"), "{e}");
        let e = Config::parse("[[sources.buckets]]\nname = \"k8s\"\nbucket = \"b\"\ngcs = \"https://x\"\njobs = [\"a\"]\nconcurrency = \"many\"\n").unwrap_err();
        assert!(e.starts_with("sources.buckets[0].concurrency"), "{e}");
        let e = Config::parse("[server]\nlisten_on = \"x\"\n").unwrap_err();
        assert!(e.contains("server") && e.contains("listen_on"), "{e}");
        let e = Config::parse("[owners]\nsig-node = [\"(\"]\n").unwrap_err();
        assert!(e.starts_with("owners.sig-node[0]:"), "{e}");
    }

    #[test]
    fn testgrid_sources_are_checked_by_key() {
        let ok = "[[sources.testgrid]]\nname = \"blocking\"\nurl = \"https://testgrid.k8s.io/sig-release-master-blocking\"\ninterval = \"30m\"\n";
        let c = Config::parse(ok).unwrap();
        assert_eq!(c.source_count(), 1);
        assert_eq!(c.interval(c.sources.testgrid[0].interval.as_deref()), 1800);
        let e = Config::parse(&ok.replace("sig-release-master-blocking", "../etc")).unwrap_err();
        assert!(e.starts_with("sources.testgrid[0].url: \"https://testgrid.k8s.io/../etc\": a `.` or `..`"), "{e}");
        let e = Config::parse(&ok.replace("https://", "ftp://")).unwrap_err();
        assert!(e.starts_with("sources.testgrid[0].url:") && e.contains("not an http(s) URL"), "{e}");
        let e = Config::parse(&ok.replace("30m", "often")).unwrap_err();
        assert!(e.starts_with("sources.testgrid[0].interval:"), "{e}");
        let e = Config::parse(&ok.replace("name =", "nme =")).unwrap_err();
        assert!(e.contains("sources.testgrid[0]") && e.contains("nme"), "{e}");
        let twice = format!("{ok}{}", ok.replace("sig-release-master-blocking", "other"));
        let e = Config::parse(&twice).unwrap_err();
        assert!(e.starts_with("sources.testgrid[1].name: \"blocking\" is used by another source"), "{e}");
    }

    #[test]
    fn an_empty_file_is_the_defaults() {
        let c = Config::parse("").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.timing().unwrap().interval, 900);
    }
}
