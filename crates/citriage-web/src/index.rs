//! The dashboard's in-memory view of the store, built once when the server starts
//! and again whenever the store changes: every build (without tests), each job's
//! summary, daily pass rates and corrected figures with flake signals, each test's
//! history across jobs, the latest clustering run of each profile with per-day,
//! per-job and per-test counts, the stored documents and payload streams, and the
//! overview. Pages are answered from this view, so a request costs a lookup and some
//! formatting, never a scan of the store.
//!
//! Test-level figures (flake signals, failing tests, test histories) cover the
//! builds started within the window (`IndexSettings::window_days`, ending at the
//! end of the newest build's day); build-level views (history strips, pass rates)
//! cover every stored build.

use crate::error::WebError;
use crate::search::SearchIndex;
use crate::summary::{self, ClusterBrief, Count, DayRate, JobSummary, NameCount, Overview, VerificationSummary};
use citriage_analysis::metrics::corrected::{self, JobFigures, TestFigures};
use citriage_analysis::AnalysisConfig;
use citriage_model::time::DAY;
use citriage_model::Day;
use citriage_patterns::normalize::Profile;
use citriage_store::{ClusterRun, DocumentHeader, IndexedBuild, Store, StoredCluster};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Days of the chart of a job's daily pass rate.
pub const CHART_DAYS: usize = 30;
/// Builds whose tests count for a job's most failing tests.
pub const RECENT_BUILDS: usize = 200;
/// Runs kept per (job, test) history.
pub const TEST_HISTORY: usize = 200;
/// SQLite page cache of each connection the dashboard reads through (building the
/// view, its job readers, the requests' pool), in KiB: the view is built reading
/// each page about once and requests read a few builds each, so SQLite's default
/// 128 MiB per connection would mostly hold memory.
pub const READ_PAGE_CACHE_KIB: u64 = 16 * 1024;

/// What the view covers.
#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// Days of test-level history (flake signals, failing tests, test histories).
    pub window_days: i64,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings { window_days: 14 }
    }
}

/// A build as the dashboard shows it.
#[derive(Debug, Clone)]
pub struct BuildLite {
    /// The build's row id in the store.
    pub id: i64,
    /// Index into [`WebIndex::jobs`].
    pub job: u32,
    pub build_id: String,
    pub bucket: String,
    pub path: String,
    pub kind: String,
    pub pr: Option<u64>,
    pub started: Option<i64>,
    pub duration: Option<i64>,
    pub result: Option<String>,
    pub failed_tests: u32,
}

impl BuildLite {
    /// The build's Spyglass page.
    pub fn url(&self) -> String {
        citriage_model::build::prow_url(&self.bucket, &self.path)
    }

    /// The history strip's cell: `pass`, `fail`, `error`, `aborted`, `unknown`, or
    /// `flake` for a passing build in which some test failed before passing (a retry).
    pub fn cell(&self) -> &'static str {
        match summary::outcome(self.result.as_deref()) {
            "pass" if self.failed_tests > 0 => "flake",
            o => o,
        }
    }
}

/// A job with stored builds.
#[derive(Debug, Clone)]
pub struct JobIndex {
    pub name: String,
    /// Its builds in [`WebIndex::builds`], oldest first.
    pub builds: std::ops::Range<usize>,
    pub summary: JobSummary,
    /// Oldest first, the last [`CHART_DAYS`] days with finished builds.
    pub daily: Vec<DayRate>,
    /// Corrected figures over the window (pass rate, streak, flags, flaky tests).
    pub figures: Option<JobFigures>,
    /// Tests failing most often in the last [`RECENT_BUILDS`] builds within the window.
    pub failing_tests: Vec<Count>,
    /// The repository the job's failures are filed against (see [`job_repository`]),
    /// when its builds name any.
    pub repo: Option<String>,
    /// Where TestGrid shows the job: the newest build naming it.
    pub testgrid: Option<citriage_model::build::TestgridPlace>,
}

/// The repository a job belongs to, from the repositories its newest build checked
/// out (`started.json`'s `repos`, as JSON): the one the job's name mentions (kops for
/// `e2e-kops-…`), else the first that is not kubernetes/kubernetes or
/// kubernetes/test-infra, else kubernetes/kubernetes.
pub fn job_repository(job: &str, repos_json: Option<&str>) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(repos_json?).ok()?;
    let names: Vec<String> = match &v {
        serde_json::Value::Object(m) => m.keys().cloned().collect(),
        serde_json::Value::Array(a) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    let names: Vec<String> = names
        .into_iter()
        .map(|n| n.trim_start_matches("github.com/").trim_start_matches("k8s.io/").to_string())
        .map(|n| if n.contains('/') { n } else { format!("kubernetes/{n}") })
        .filter(|n| n.split('/').count() == 2)
        .collect();
    let lower = job.to_ascii_lowercase();
    let mentioned = names.iter().find(|n| {
        let repo = n.rsplit('/').next().unwrap_or("");
        repo.len() > 2 && repo != "kubernetes" && lower.contains(&repo.to_ascii_lowercase())
    });
    mentioned
        .or_else(|| names.iter().find(|n| *n != "kubernetes/kubernetes" && *n != "kubernetes/test-infra"))
        .or_else(|| names.iter().find(|n| *n == "kubernetes/kubernetes"))
        .cloned()
}

/// One test's runs in one job within the window.
#[derive(Debug, Clone)]
pub struct TestInJobIndex {
    pub job: u32,
    pub runs: u32,
    pub passed: u32,
    pub failed: u32,
    /// Newest first, at most [`TEST_HISTORY`], only for tests that failed at least
    /// once: (index into [`WebIndex::builds`], status code 0 passed, 1 failed, 2 error).
    pub history: Box<[(u32, u8)]>,
    /// The test's corrected figures in the job (flake signals, flip rate, PFS), when
    /// it failed in the window: an index into the job's `figures.tests` (see
    /// [`WebIndex::test_figures`]), so they are held once.
    pub figures: Option<u32>,
}

/// Every test that ran in the window with its runs per job, and the kettle names
/// that differ from stored names: each name held once, sorted, the runs in one
/// vector.
#[derive(Debug, Default)]
pub struct TestTable {
    names: Vec<Box<str>>,
    /// The runs of test `i`, by job: `runs[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    runs: Vec<TestInJobIndex>,
    /// (kettle name, index of a stored name it stands for), sorted, distinct.
    aliases: Vec<(Box<str>, u32)>,
}

impl TestTable {
    /// Distinct test names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.names.binary_search_by(|n| (**n).cmp(name)).ok()
    }

    fn runs_of(&self, i: usize) -> &[TestInJobIndex] {
        &self.runs[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// A test's runs per job, by job.
    pub fn get(&self, name: &str) -> Option<&[TestInJobIndex]> {
        self.position(name).map(|i| self.runs_of(i))
    }

    /// Every test by name with its runs per job.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[TestInJobIndex])> + '_ {
        self.names.iter().enumerate().map(|(i, n)| (&**n, self.runs_of(i)))
    }

    /// The stored names a kettle name stands for (when it differs from them), sorted.
    pub fn aliases_of<'a>(&'a self, kettle: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let from = self.aliases.partition_point(|(k, _)| &**k < kettle);
        self.aliases[from..].iter().take_while(move |(k, _)| &**k == kettle).map(|(_, n)| &*self.names[*n as usize])
    }
}

/// Collects jobs' tests into a [`TestTable`], one job at a time.
#[derive(Default)]
struct TestTableBuilder {
    ids: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    runs: Vec<(u32, TestInJobIndex)>,
    aliases: Vec<(Box<str>, u32)>,
}

impl TestTableBuilder {
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        let name: Box<str> = name.into();
        self.names.push(name.clone());
        self.ids.insert(name, i);
        i
    }

    fn add(&mut self, tests: Vec<(String, TestInJobIndex)>, aliases: Vec<(String, String)>) {
        for (name, t) in tests {
            let i = self.id(&name);
            self.runs.push((i, t));
        }
        for (kettle, name) in aliases {
            let i = self.id(&name);
            self.aliases.push((kettle.into_boxed_str(), i));
        }
    }

    fn finish(self) -> TestTable {
        let TestTableBuilder { ids, names, mut runs, mut aliases } = self;
        drop(ids);
        let mut order: Vec<u32> = (0..names.len() as u32).collect();
        order.sort_by(|a, b| names[*a as usize].cmp(&names[*b as usize]));
        let mut rank = vec![0u32; names.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let mut slots: Vec<Option<Box<str>>> = names.into_iter().map(Some).collect();
        let names: Vec<Box<str>> = order.iter().map(|&i| slots[i as usize].take().unwrap_or_default()).collect();
        drop(slots);
        // A job lists each test once: (test, job) orders the runs completely.
        runs.sort_unstable_by_key(|(i, t)| (rank[*i as usize], t.job));
        let mut starts = Vec::with_capacity(names.len() + 1);
        let mut at = 0usize;
        for i in 0..names.len() as u32 {
            starts.push(at as u32);
            while at < runs.len() && rank[runs[at].0 as usize] == i {
                at += 1;
            }
        }
        starts.push(at as u32);
        let runs: Vec<TestInJobIndex> = runs.into_iter().map(|(_, t)| t).collect();
        for a in &mut aliases {
            a.1 = rank[a.1 as usize];
        }
        aliases.sort_unstable();
        aliases.dedup();
        aliases.shrink_to_fit();
        TestTable { names, starts, runs, aliases }
    }
}

/// Failures of a cluster on one day in one job and test (indices into the profile's
/// job and test name tables; `day` counts from the run's first day).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DailyRow {
    pub day: u16,
    pub job: u32,
    pub test: u32,
    pub failures: u32,
}

/// A cluster of the latest run, with its counts.
#[derive(Debug, Clone)]
pub struct ClusterIndex {
    pub stored: StoredCluster,
    /// Sorted by day, job, test.
    pub rows: Vec<DailyRow>,
    pub total: u64,
    /// Failures per day of the run's window, oldest first.
    pub per_day: Vec<u32>,
    /// Distinct jobs and tests, and the [`TOP_NAMES`] of each with the most failures.
    pub jobs: usize,
    pub tests: usize,
    pub top_jobs: Vec<NameCount>,
    pub top_tests: Vec<NameCount>,
}

/// Jobs and tests kept per cluster for the unfiltered list.
pub const TOP_NAMES: usize = 3;

/// The latest clustering run of one profile.
#[derive(Debug, Clone)]
pub struct ProfileIndex {
    pub run: ClusterRun,
    /// The run's window: its first day and how many days it has (the last is "today").
    pub first_day: Day,
    pub days: usize,
    /// Dashboard job names (`pr:` for presubmits) and test names, sorted.
    pub jobs: Vec<String>,
    pub tests: Vec<String>,
    /// Owners (SIGs) of the clusters, sorted.
    pub owners: Vec<String>,
    /// Known signatures among the clusters, sorted.
    pub signatures: Vec<String>,
    pub clusters: Vec<ClusterIndex>,
    by_id: HashMap<String, usize>,
}

impl ProfileIndex {
    pub fn cluster(&self, stable_id: &str) -> Option<&ClusterIndex> {
        self.by_id.get(stable_id).map(|&i| &self.clusters[i])
    }

    /// The last day of the window ("today" for "N failures (M today)").
    pub fn last_day(&self) -> Day {
        self.first_day.plus(self.days.saturating_sub(1) as i64)
    }
}

/// One payload of a release stream as the stored analyses record it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PayloadRow {
    pub stream: String,
    pub tag: String,
    pub phase: String,
    pub created: Option<String>,
    pub blocking_failed: Option<u64>,
    pub blocking_total: Option<u64>,
    /// True when an analysis of this very payload is stored.
    pub analyzed: bool,
    /// The stored analysis's verdict, when analyzed.
    pub verdict: Option<String>,
}

impl PayloadRow {
    /// A payload known by name only, so far.
    fn new(stream: &str, tag: &str) -> PayloadRow {
        PayloadRow {
            stream: stream.to_string(),
            tag: tag.to_string(),
            phase: String::new(),
            created: None,
            blocking_failed: None,
            blocking_total: None,
            analyzed: false,
            verdict: None,
        }
    }
}

/// The whole view.
pub struct WebIndex {
    /// Which state of the store this view shows (a `data_version` of the server's
    /// watching connection).
    pub stamp: Option<String>,
    pub settings: IndexSettings,
    /// End of the newest build's day (Unix seconds); the window ends here.
    pub as_of: Option<i64>,
    pub overview: Overview,
    /// By job, then start time.
    pub builds: Vec<BuildLite>,
    /// By name.
    pub jobs: Vec<JobIndex>,
    job_by_name: HashMap<String, u32>,
    build_by_id: HashMap<i64, u32>,
    /// Each test's runs per job, and kettle names that differ from stored names.
    pub tests: TestTable,
    /// By profile name.
    pub profiles: BTreeMap<String, ProfileIndex>,
    pub documents: Vec<DocumentHeader>,
    /// By stream, then creation time (newest first), then tag.
    pub payloads: Vec<PayloadRow>,
    /// Stored verifier results by their key (`{kind}/{key}` of the verified document,
    /// or a file name).
    pub verifications: BTreeMap<String, VerificationSummary>,
    /// Failure texts and log excerpts for the regex search.
    pub search: SearchIndex,
    /// Every stored build with what *Which change started it* reads of it (row id,
    /// bucket, path, job, build id, kind, PR, start, result, the repositories and
    /// commit it tested), in the store's build-index order; other fields are left empty.
    pub suspect_builds: Arc<Vec<IndexedBuild>>,
    /// Misclassifications the newest stored triage reports flag, by job.
    pub job_flags: BTreeMap<String, Vec<ReportFlag>>,
    /// How long each part of building the view took (milliseconds): for the status
    /// route and the command line, never shown in pages.
    pub timings: Vec<(&'static str, u64)>,
}

/// Laps of building the view.
struct Timings {
    last: std::time::Instant,
    laps: Vec<(&'static str, u64)>,
}

impl Default for Timings {
    fn default() -> Self {
        Timings { last: std::time::Instant::now(), laps: Vec::new() }
    }
}

impl Timings {
    fn lap(&mut self, what: &'static str) {
        let now = std::time::Instant::now();
        self.laps.push((what, (now - self.last).as_millis() as u64));
        self.last = now;
    }
}

impl WebIndex {
    /// The clustering run shown when no profile is asked for: the `default`
    /// profile's when it is stored, else the first stored.
    pub fn default_profile(&self) -> Option<(&String, &ProfileIndex)> {
        self.profiles.get_key_value(Profile::Default.name()).or_else(|| self.profiles.iter().next())
    }

    pub fn job(&self, name: &str) -> Option<&JobIndex> {
        self.job_by_name.get(name).map(|&i| &self.jobs[i as usize])
    }

    pub fn job_name(&self, i: u32) -> &str {
        &self.jobs[i as usize].name
    }

    /// A test's corrected figures in its job (see [`TestInJobIndex::figures`]).
    pub fn test_figures(&self, t: &TestInJobIndex) -> Option<&TestFigures> {
        let f = self.jobs.get(t.job as usize)?.figures.as_ref()?;
        f.tests.get(t.figures? as usize)
    }

    /// The position of a build (by store row id) in [`WebIndex::builds`].
    pub fn build_position(&self, id: i64) -> Option<u32> {
        self.build_by_id.get(&id).copied()
    }

    /// Builds, reads and computes the whole view from a store.
    pub fn build(store: &mut Store, stamp: Option<String>, settings: &IndexSettings) -> Result<WebIndex, WebError> {
        let mut timings = Timings::default();
        let indexed = store.build_index()?;
        let suspect_builds = Arc::new(indexed.iter().map(for_suspects).collect());
        let (builds, mut jobs, job_by_name) = builds_and_jobs(indexed);
        let build_by_id: HashMap<i64, u32> = builds.iter().enumerate().map(|(i, b)| (b.id, i as u32)).collect();
        let newest = citriage_model::time::robust_newest(builds.iter().filter_map(|b| b.started));
        let as_of = newest.map(|n| Day::from_unix_seconds(n).end_seconds());
        timings.lap("builds");
        let mut tests = TestTable::default();
        let mut window_results = 0u64;
        if let Some(as_of) = as_of {
            let mut cfg = corrected::Settings::new(as_of, AnalysisConfig::default().harness_test_names);
            cfg.window_days = settings.window_days;
            let since = as_of - settings.window_days * DAY;
            let mut figures: Vec<Option<JobFigures>> = jobs.iter().map(|_| None).collect();
            let mut failing: Vec<Vec<Count>> = jobs.iter().map(|_| Vec::new()).collect();
            let mut table = TestTableBuilder::default();
            each_job_work(store, &jobs, since, &cfg, |ji, w| {
                window_results += w.results;
                figures[ji as usize] = w.figures;
                failing[ji as usize] = w.failing_tests;
                table.add(w.tests, w.aliases);
            })?;
            for ((job, f), t) in jobs.iter_mut().zip(figures).zip(failing) {
                job.figures = f;
                job.failing_tests = t;
            }
            tests = table.finish();
            release_free_memory();
        }
        timings.lap("job figures and test histories");
        let window = (window_results, settings.window_days);
        let mut overview = summary::overview_from(store, builds.len() as u64, jobs.len(), window)?;
        let mut profiles = BTreeMap::new();
        for p in Profile::ALL {
            if let Some(pi) = profile_index(store, p.name())? {
                profiles.insert(p.name().to_string(), pi);
            }
        }
        timings.lap("overview and clusters");
        let documents = store.documents(None)?;
        // One per document (kind and key), whatever the formats it is stored in.
        let distinct: BTreeSet<(&str, &str)> = documents.iter().map(|d| (d.kind.as_str(), d.key.as_str())).collect();
        fill_overview_clusters(&mut overview, &profiles, distinct.len());
        let payloads = payload_rows(store, &documents)?;
        let mut verifications = BTreeMap::new();
        for d in documents.iter().filter(|d| d.kind == "verify" && d.media_type == "application/json") {
            if let Some(doc) = store.document(&d.kind, &d.key, &d.media_type)? {
                if let Some(v) = summary::verification_summary(&d.key, &doc.body) {
                    verifications.insert(d.key.clone(), v);
                }
            }
        }
        let job_flags = report_flags(store, &documents)?;
        // Search covers the window's builds, like the test-level views.
        let since = as_of.map(|a| a - settings.window_days * DAY);
        timings.lap("documents");
        let search = SearchIndex::build(store, &build_by_id, since)?;
        release_free_memory();
        timings.lap("search index");
        Ok(WebIndex {
            timings: timings.laps,
            stamp,
            settings: settings.clone(),
            as_of,
            overview,
            builds,
            jobs,
            job_by_name,
            build_by_id,
            tests,
            profiles,
            documents,
            payloads,
            verifications,
            search,
            suspect_builds,
            job_flags,
        })
    }
}

/// A misclassification a stored triage report flags on a job.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReportFlag {
    /// `consistency-paradox`, `always-failing-consistent`, `single-pr-pollution`, ...
    pub kind: String,
    /// What the report says the entry really is.
    pub reality: String,
    /// The report (`triage/{dataset}/{date}`).
    pub report: String,
}

/// The misclassifications of the newest stored triage report of each dataset, by job
/// (without a `pr:` prefix).
fn report_flags(store: &Store, documents: &[DocumentHeader]) -> Result<BTreeMap<String, Vec<ReportFlag>>, WebError> {
    let mut newest: BTreeMap<&str, &DocumentHeader> = BTreeMap::new();
    for d in documents.iter().filter(|d| d.kind == "triage" && d.media_type == "application/json") {
        let dataset = d.key.split('/').next().unwrap_or("");
        if newest.get(dataset).is_none_or(|n| n.as_of < d.as_of) {
            newest.insert(dataset, d);
        }
    }
    let mut out: BTreeMap<String, Vec<ReportFlag>> = BTreeMap::new();
    for d in newest.values() {
        let Some(doc) = store.document(&d.kind, &d.key, &d.media_type)? else { continue };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&doc.body) else { continue };
        for m in v["triage"]["misclassifications"].as_array().into_iter().flatten() {
            let kind = m["kind"].as_str().unwrap_or("").to_string();
            // A harness step is a test's flag, shown wherever the test is listed.
            if kind == "harness-test-name" {
                continue;
            }
            let reality = m["reality"].as_str().unwrap_or("").to_string();
            for j in m["jobs"].as_array().into_iter().flatten().filter_map(|j| j.as_str()) {
                let job = j.strip_prefix("pr:").unwrap_or(j).to_string();
                out.entry(job).or_default().push(ReportFlag {
                    kind: kind.clone(),
                    reality: reality.clone(),
                    report: format!("triage/{}", d.key),
                });
            }
        }
    }
    Ok(out)
}

fn builds_and_jobs(indexed: Vec<IndexedBuild>) -> (Vec<BuildLite>, Vec<JobIndex>, HashMap<String, u32>) {
    let mut builds = Vec::with_capacity(indexed.len());
    let mut jobs: Vec<JobIndex> = Vec::new();
    let mut job_by_name: HashMap<String, u32> = HashMap::new();
    // `build_index` orders by job, then start time.
    for ib in indexed {
        let r = ib.record;
        if jobs.last().map(|j| j.name != r.job).unwrap_or(true) {
            job_by_name.insert(r.job.clone(), jobs.len() as u32);
            jobs.push(JobIndex {
                name: r.job.clone(),
                builds: builds.len()..builds.len(),
                summary: JobSummary::default(),
                daily: Vec::new(),
                figures: None,
                failing_tests: Vec::new(),
                repo: None,
                testgrid: None,
            });
        }
        let ji = jobs.len() - 1;
        // Builds come oldest first: the newest build naming repositories wins.
        if let Some(repo) = job_repository(&r.job, r.repos.as_deref()) {
            jobs[ji].repo = Some(repo);
        }
        if r.testgrid.is_some() {
            jobs[ji].testgrid = r.testgrid.clone();
        }
        builds.push(BuildLite {
            id: ib.id,
            job: ji as u32,
            build_id: r.build_id,
            bucket: r.bucket,
            path: r.path,
            kind: r.kind,
            pr: r.pr,
            started: r.started,
            duration: r.duration,
            result: r.result,
            failed_tests: ib.failed_tests,
        });
        jobs[ji].builds.end = builds.len();
    }
    for j in &mut jobs {
        let bs = &builds[j.builds.clone()];
        j.summary = summary::summarize(&j.name, bs.iter().map(|b| (b.result.as_deref(), b.started)));
        if let Some(t) = &j.testgrid {
            j.summary.dashboards = t.dashboards.clone();
            j.summary.tab = t.tab.clone();
            j.summary.release_blocking = t.is_release_blocking();
        }
        j.daily = daily_rates(bs);
    }
    (builds, jobs, job_by_name)
}

fn daily_rates(builds: &[BuildLite]) -> Vec<DayRate> {
    let mut daily: BTreeMap<Day, DayRate> = BTreeMap::new();
    for b in builds {
        let Some(t) = b.started else { continue };
        let o = summary::outcome(b.result.as_deref());
        if !matches!(o, "pass" | "fail" | "error") {
            continue;
        }
        let day = Day::from_unix_seconds(t);
        let e = daily.entry(day).or_insert(DayRate { day, passed: 0, finished: 0 });
        e.finished += 1;
        e.passed += usize::from(o == "pass");
    }
    let mut daily: Vec<DayRate> = daily.into_values().collect();
    let skip = daily.len().saturating_sub(CHART_DAYS);
    daily.drain(..skip);
    daily
}

/// A test's runs in a job as they are counted.
struct Runs {
    job: u32,
    runs: u32,
    passed: u32,
    failed: u32,
    history: Vec<(u32, u8)>,
}

/// What one job contributes to the view beyond its builds: corrected figures, most
/// failing tests, its tests' runs, histories and signals, and kettle-name aliases.
struct JobWork {
    figures: Option<JobFigures>,
    failing_tests: Vec<Count>,
    tests: Vec<(String, TestInJobIndex)>,
    aliases: Vec<(String, String)>,
    /// Test results of the job's builds in the window.
    results: u64,
}

/// Computes a job's [`JobWork`] from its builds (`loaded`, with the window's tests,
/// in the same order as the view's builds `positions`).
fn job_work(
    ji: u32,
    loaded: &[citriage_model::build::BuildRecord],
    positions: &[u32],
    since: i64,
    cfg: &corrected::Settings,
) -> JobWork {
    let figures = corrected::job_figures(loaded, cfg).into_iter().next();
    let mut per_test: BTreeMap<&str, Runs> = BTreeMap::new();
    let mut failing: BTreeMap<&str, usize> = BTreeMap::new();
    let mut aliases: BTreeSet<(&str, &str)> = BTreeSet::new();
    let recent_from = loaded.len().saturating_sub(RECENT_BUILDS);
    let mut results = 0u64;
    for (i, b) in loaded.iter().enumerate().rev() {
        if b.started.is_none_or(|t| t <= since) {
            continue;
        }
        results += b.tests.len() as u64;
        let pos = positions.get(i).copied().unwrap_or(0);
        for t in &b.tests {
            if let Some(k) = t.kettle_name.as_deref().filter(|k| *k != t.name) {
                aliases.insert((k, t.name.as_str()));
            }
            let e = per_test.entry(t.name.as_str()).or_insert_with(|| Runs {
                job: ji,
                runs: 0,
                passed: 0,
                failed: 0,
                history: Vec::new(),
            });
            e.runs += 1;
            let code = match t.status.as_str() {
                "failed" => 1,
                "error" => 2,
                _ => 0,
            };
            if code == 0 {
                e.passed += 1;
            } else {
                e.failed += 1;
                if i >= recent_from {
                    *failing.entry(t.name.as_str()).or_insert(0) += 1;
                }
            }
            if e.history.len() < TEST_HISTORY {
                e.history.push((pos, code));
            }
        }
    }
    // By name; of two figures with one name (two classnames), the later.
    let by_name: HashMap<&str, u32> =
        figures.iter().flat_map(|f| f.tests.iter().enumerate()).map(|(i, t)| (t.name.as_str(), i as u32)).collect();
    let tests = per_test
        .into_iter()
        .map(|(name, t)| {
            let t = TestInJobIndex {
                job: t.job,
                runs: t.runs,
                passed: t.passed,
                failed: t.failed,
                // Always passed: the counts say it all.
                history: if t.failed == 0 { Box::default() } else { t.history.into_boxed_slice() },
                figures: by_name.get(name).copied(),
            };
            (name.to_string(), t)
        })
        .collect();
    let mut failing: Vec<Count> =
        failing.into_iter().map(|(name, count)| Count { name: name.to_string(), count }).collect();
    failing.sort_by(|a, b| b.count.cmp(&a.count).then(a.name.cmp(&b.name)));
    failing.truncate(20);
    JobWork {
        figures,
        failing_tests: failing,
        tests,
        aliases: aliases.into_iter().map(|(k, n)| (k.to_string(), n.to_string())).collect(),
        results,
    }
}

/// Every job's [`JobWork`], each handed to `take` on this thread as soon as it is
/// computed (in no set order), so only the jobs in flight are held. Jobs are read on
/// as many workers as rayon has threads, each with one connection of its own and a
/// small page cache (an in-memory store is read on this one).
fn each_job_work(
    store: &mut Store,
    jobs: &[JobIndex],
    since: i64,
    cfg: &corrected::Settings,
    mut take: impl FnMut(u32, JobWork),
) -> Result<(), WebError> {
    let one = |s: &mut Store, ji: usize| -> Result<JobWork, WebError> {
        let j = &jobs[ji];
        // With failure texts: the flake signals leave out failures whose text names an
        // infra signature or a cause many tests share, as `citriage metrics` does.
        let loaded = s.job_builds_with_tests_opts(&j.name, Some(since), true)?;
        let positions: Vec<u32> = j.builds.clone().map(|p| p as u32).collect();
        Ok(job_work(ji as u32, &loaded, &positions, since, cfg))
    };
    let location = store.location().clone();
    if !location.exists() {
        for ji in 0..jobs.len() {
            take(ji as u32, one(store, ji)?);
        }
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().clamp(1, jobs.len().max(1));
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(u32, JobWork), WebError>>(workers * 2);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (tx, next, one, location) = (tx.clone(), &next, &one, &location);
            scope.spawn(move || {
                let opened = location.open().map_err(WebError::from);
                let mut s = match opened
                    .and_then(|s| s.limit_page_cache(READ_PAGE_CACHE_KIB).map(|()| s).map_err(WebError::from))
                {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                loop {
                    let ji = next.fetch_add(1, Ordering::Relaxed);
                    if ji >= jobs.len() {
                        break;
                    }
                    let r = one(&mut s, ji).map(|w| (ji as u32, w));
                    let failed = r.is_err();
                    if tx.send(r).is_err() || failed {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut first_error = None;
        for r in rx {
            match r {
                Ok((ji, w)) => take(ji, w),
                Err(e) => {
                    // Stop handing out jobs; the workers finish the ones they hold.
                    next.store(jobs.len(), Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    })
}

/// Hands the allocator's free pages back to the kernel. The view is built on several
/// threads, and glibc keeps what a thread's arena freed until the arena's top is
/// free: without this, each job's results read by the workers (or the search index's
/// chunks) would stay resident beside what is built after them. Nothing to do with
/// other allocators.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free pages of the allocator's own arenas to
    // the kernel; it touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// What *Which change started it* reads of a build (see [`WebIndex::suspect_builds`]).
fn for_suspects(b: &IndexedBuild) -> IndexedBuild {
    let r = &b.record;
    IndexedBuild {
        id: b.id,
        failed_tests: b.failed_tests,
        record: citriage_model::build::BuildRecord {
            bucket: r.bucket.clone(),
            path: r.path.clone(),
            job: r.job.clone(),
            build_id: r.build_id.clone(),
            kind: r.kind.clone(),
            pr: r.pr,
            commit_sha: None,
            repo_commit: r.repo_commit.clone(),
            repo_version: None,
            repos: r.repos.clone(),
            started: r.started,
            finished: None,
            duration: None,
            result: r.result.clone(),
            state: None,
            executor: None,
            origin: String::new(),
            problems: Vec::new(),
            complete: false,
            tests: Vec::new(),
            artifacts: Vec::new(),
            excerpts: Vec::new(),
            kettle: None,
            testgrid: None,
            versions: Vec::new(),
        },
    }
}

fn profile_index(store: &Store, profile: &str) -> Result<Option<ProfileIndex>, WebError> {
    let Some(run) = store.cluster_run(profile)? else { return Ok(None) };
    let last = Day::from_unix_seconds(run.as_of);
    let days = run.window_days.clamp(1, 366) as usize;
    let first_day = last.plus(1 - days as i64);
    let stored: Vec<StoredCluster> =
        store.clusters(profile)?.into_iter().filter(|c| c.run_as_of == run.as_of).collect();
    let daily = store.cluster_daily(profile)?;
    let jobs: Vec<String> = daily.iter().map(|d| d.job.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let tests: Vec<String> = daily.iter().map(|d| d.test.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let job_ix: HashMap<&str, u32> = jobs.iter().enumerate().map(|(i, j)| (j.as_str(), i as u32)).collect();
    let test_ix: HashMap<&str, u32> = tests.iter().enumerate().map(|(i, t)| (t.as_str(), i as u32)).collect();
    let mut rows: HashMap<&str, Vec<DailyRow>> = HashMap::new();
    for d in &daily {
        let offset = d.day - first_day.0;
        if offset < 0 || offset >= days as i64 {
            continue;
        }
        rows.entry(d.stable_id.as_str()).or_default().push(DailyRow {
            day: offset as u16,
            job: job_ix[d.job.as_str()],
            test: test_ix[d.test.as_str()],
            failures: d.failures.min(u64::from(u32::MAX)) as u32,
        });
    }
    // Stores written before owners had one spelling may hold `sig-testing`.
    let stored: Vec<StoredCluster> = stored
        .into_iter()
        .map(|mut c| {
            c.owner = citriage_model::owner::canonical(&c.owner);
            c
        })
        .collect();
    let mut clusters: Vec<ClusterIndex> = stored
        .into_iter()
        .map(|c| {
            let mut r = rows.remove(c.stable_id.as_str()).unwrap_or_default();
            r.sort_by_key(|x| (x.day, x.job, x.test));
            let mut per_day = vec![0u32; days];
            for x in &r {
                per_day[x.day as usize] += x.failures;
            }
            let total = r.iter().map(|x| u64::from(x.failures)).sum();
            let (jobs_n, top_jobs) = by_name(r.iter(), &jobs, |x| x.job, days, TOP_NAMES);
            let (tests_n, top_tests) = by_name(r.iter(), &tests, |x| x.test, days, TOP_NAMES);
            ClusterIndex { stored: c, rows: r, total, per_day, jobs: jobs_n, tests: tests_n, top_jobs, top_tests }
        })
        .collect();
    clusters.sort_by(|a, b| b.total.cmp(&a.total).then(a.stored.stable_id.cmp(&b.stored.stable_id)));
    let by_id = clusters.iter().enumerate().map(|(i, c)| (c.stored.stable_id.clone(), i)).collect();
    let owners = clusters.iter().map(|c| c.stored.owner.clone()).filter(|o| !o.is_empty()).collect::<BTreeSet<_>>();
    let signatures = clusters.iter().flat_map(|c| c.stored.signatures.iter().cloned()).collect::<BTreeSet<_>>();
    Ok(Some(ProfileIndex {
        run,
        first_day,
        days,
        jobs,
        tests,
        owners: owners.into_iter().collect(),
        signatures: signatures.into_iter().collect(),
        clusters,
        by_id,
    }))
}

/// The payloads named by the stored analyses: each analysis's own payload and the
/// history it walked, merged per stream (an analysed payload's own record wins).
fn payload_rows(store: &Store, docs: &[DocumentHeader]) -> Result<Vec<PayloadRow>, WebError> {
    let mut rows: BTreeMap<(String, String), PayloadRow> = BTreeMap::new();
    for d in docs.iter().filter(|d| d.kind == "payload" && d.media_type == "application/json") {
        let Some(doc) = store.document(&d.kind, &d.key, &d.media_type)? else { continue };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&doc.body) else { continue };
        let s = |v: &serde_json::Value| v.as_str().map(str::to_string);
        let stream = s(&v["payload"]["stream_name"]).unwrap_or_default();
        let tag = s(&v["payload"]["tag"]).unwrap_or_else(|| d.key.clone());
        for h in v["history"].as_array().into_iter().flatten() {
            let Some(htag) = s(&h["tag"]) else { continue };
            let e = rows.entry((stream.clone(), htag.clone())).or_insert_with(|| PayloadRow::new(&stream, &htag));
            if !e.analyzed {
                e.phase = phase(&h["phase"]);
                e.created = s(&h["created"]).or(e.created.take());
                e.blocking_failed = h["blocking"]["failed"].as_u64().or(e.blocking_failed);
                e.blocking_total = h["blocking"]["total"].as_u64().or(e.blocking_total);
            }
        }
        let e = rows.entry((stream.clone(), tag.clone())).or_insert_with(|| PayloadRow::new(&stream, &tag));
        e.analyzed = true;
        e.phase = phase(&v["payload"]["phase"]);
        e.created = s(&v["payload"]["created"]).or(e.created.take());
        e.blocking_failed = v["blocking"]["failed"].as_u64();
        e.blocking_total = v["blocking"]["total"].as_u64();
        e.verdict = s(&v["decision"]["verdict"]).map(|v| verdict_text(&v));
    }
    let mut out: Vec<PayloadRow> = rows.into_values().collect();
    out.sort_by(|a, b| a.stream.cmp(&b.stream).then(b.created.cmp(&a.created)).then(b.tag.cmp(&a.tag)));
    Ok(out)
}

/// A payload phase as JSON writes it: a string, or `{"Other": "..."}` for phases the
/// release controller invented later.
fn phase(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(m) => m.values().next().and_then(|x| x.as_str()).unwrap_or("").to_string(),
        _ => String::new(),
    }
}

/// A verdict as the payload report writes it: `StageRevert` → `STAGE REVERT`.
fn verdict_text(v: &str) -> String {
    let mut out = String::new();
    for (i, c) in v.chars().enumerate() {
        if i > 0 && c.is_ascii_uppercase() {
            out.push(' ');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Completes the overview with the indexed clusters and documents.
pub fn fill_overview_clusters(o: &mut Overview, profiles: &BTreeMap<String, ProfileIndex>, documents: usize) {
    o.clusters = profiles.iter().map(|(p, pi)| (p.clone(), pi.clusters.len())).collect();
    o.documents = documents;
    let Some((name, p)) = profiles.iter().next() else { return };
    let mut newest: Vec<&ClusterIndex> = p.clusters.iter().collect();
    newest.sort_by(|a, b| {
        b.stored
            .first_seen
            .cmp(&a.stored.first_seen)
            .then(b.total.cmp(&a.total))
            .then(a.stored.stable_id.cmp(&b.stored.stable_id))
    });
    o.newest_clusters = newest
        .into_iter()
        .take(10)
        .map(|c| ClusterBrief {
            profile: name.clone(),
            stable_id: c.stored.stable_id.clone(),
            key: c.stored.key.clone(),
            text: c.stored.text.clone(),
            total: c.total,
            first_seen: c.stored.first_seen,
        })
        .collect();
}

/// Failures by job or test name within a cluster's kept rows: how many distinct
/// names, and the `limit` with the most failures (ties by name) with their per-day
/// counts. Linear in the rows; per-day series are built for the names shown only.
pub(crate) fn by_name<'r>(
    rows: impl Iterator<Item = &'r DailyRow> + Clone,
    names: &[String],
    key: impl Fn(&DailyRow) -> u32,
    days: usize,
    limit: usize,
) -> (usize, Vec<NameCount>) {
    let mut totals: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
    for r in rows.clone() {
        *totals.entry(key(r)).or_insert(0) += u64::from(r.failures);
    }
    let distinct = totals.len();
    let mut top: Vec<(u32, u64)> = totals.into_iter().collect();
    let order =
        |a: &(u32, u64), b: &(u32, u64)| b.1.cmp(&a.1).then_with(|| names[a.0 as usize].cmp(&names[b.0 as usize]));
    if top.len() > limit && limit > 0 {
        top.select_nth_unstable_by(limit - 1, order);
        top.truncate(limit);
    } else if limit == 0 {
        top.clear();
    }
    top.sort_by(order);
    let slot: std::collections::HashMap<u32, usize> = top.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect();
    let mut per_day = vec![vec![0u32; days]; top.len()];
    for r in rows {
        if let Some(&i) = slot.get(&key(r)) {
            per_day[i][r.day as usize] += r.failures;
        }
    }
    let out = top
        .into_iter()
        .zip(per_day)
        .map(|((k, failures), per_day)| NameCount { name: names[k as usize].clone(), failures, per_day })
        .collect();
    (distinct, out)
}
