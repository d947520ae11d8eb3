//! TestGrid as a source of builds: each column of a tab's table becomes a build (its
//! build id, start, the commit of its `Commit` custom column, the job from the tab's
//! `query`), each row a test result (its status read as [`TestStatus::reading`] says,
//! its message as the failure text). A tab is read whole, checked, then written with
//! its builds in one transaction: a bad tab stores nothing and the rest of the
//! dashboard is still read. A build GCS also has is one row: the richer source wins
//! per field (GCS's artifacts, JUnit and logs; TestGrid fills what GCS lacks) and a
//! disagreement is recorded as the build's problem ([`merge_testgrid`],
//! [`merge_gcs`]).
//!
//! What TestGrid does not carry is not made up: no finish time or duration, no full
//! failure text (its messages are JUnit messages cut to 140 characters), no logs,
//! artifacts or kettle reading.

use citriage_formats::testgrid::{
    parse_summary, parse_table, Reading, TableLimits, TestStatus, TestgridError, TestgridTable,
};
use citriage_model::build::{BuildRecord, StoredTest, TestgridFacts, TestgridPlace};
use citriage_model::evidence::sha256_hex;
use citriage_sources::testgrid::TestgridHttp;
use citriage_sources::SourceError;
use citriage_store::{BuildWrite, Store, StoreError, StoredBuildHead, TestgridTab};
use serde::Serialize;
use std::collections::BTreeMap;

/// The row TestGrid adds to every column for the build's own result.
pub const OVERALL_ROW: &str = "Overall";
/// The row TestGrid's GCS updater adds with what it read of the build's pod.
pub const POD_ROW: &str = "Pod";
/// Every problem a comparison with TestGrid adds to a build starts with this.
pub const DISAGREEMENT: &str = "TestGrid disagrees: ";

/// Where a tab's builds are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabPlace {
    pub dashboard: String,
    pub tab: String,
    pub bucket: String,
    /// The folder of the job's builds (`logs/<job>`, `pr-logs/directory/<job>`).
    pub prefix: String,
    pub job: String,
    /// `periodic`, or `presubmit` for a `pr-logs/` query.
    pub kind: String,
}

/// Where a tab's builds go: its `query` (`bucket/logs/<job>`, a `gs://` prefix
/// allowed) names the bucket, the folder and the job (its last segment); a tab with no
/// query keeps its builds under the bucket `testgrid`, folder `<dashboard>/<tab>`, job
/// the tab's name. A query that is not a safe bucket path is refused.
pub fn tab_place(table: &TestgridTable, dashboard: &str, tab: &str) -> Result<TabPlace, TestgridError> {
    let refuse =
        |problem: String| TestgridError { what: format!("tab {tab:?}"), field: "field \"query\"".into(), problem };
    let Some(query) = table.meta.query.as_deref() else {
        return Ok(TabPlace {
            dashboard: dashboard.into(),
            tab: tab.into(),
            bucket: "testgrid".into(),
            prefix: format!("{dashboard}/{tab}"),
            job: tab.into(),
            kind: "periodic".into(),
        });
    };
    let q = query.strip_prefix("gs://").unwrap_or(query).trim_end_matches('/');
    citriage_sources::paths::check_name(q).map_err(|why| refuse(format!("{query:?} refused: {why}")))?;
    let Some((bucket, prefix)) = q.split_once('/') else {
        return Err(refuse(format!("{query:?} names a bucket but no folder of builds")));
    };
    let job = prefix.rsplit('/').next().unwrap_or(prefix).to_string();
    let kind = if prefix.starts_with("pr-logs/") { "presubmit" } else { "periodic" };
    Ok(TabPlace {
        dashboard: dashboard.into(),
        tab: tab.into(),
        bucket: bucket.into(),
        prefix: prefix.into(),
        job,
        kind: kind.into(),
    })
}

/// Whether a `Commit` column value can stand for a commit: TestGrid writes 9
/// characters of a version (a SHA's prefix, or `v1.30.0-a`), `missing` when there is
/// none; anything shorter than 7 characters (a tab whose column holds `1` in every
/// run) is no commit, and builds are then stored without one.
pub fn is_commit(v: &str) -> bool {
    v.len() >= 7 && v != "missing" && !v.contains(char::is_whitespace)
}

/// The build result an `Overall` cell gives: passing statuses `SUCCESS`; TOOL_FAIL
/// (TestGrid could not read the build) `ERROR`; the other failing statuses and FLAKY
/// `FAILURE`; CATEGORIZED_ABORT and CANCEL `ABORTED`; RUNNING, NO_RESULT, UNKNOWN and
/// BLOCKED none.
pub fn overall_result(s: TestStatus) -> Option<&'static str> {
    match s {
        TestStatus::ToolFail => Some("ERROR"),
        TestStatus::CategorizedAbort | TestStatus::Cancel => Some("ABORTED"),
        TestStatus::Flaky => Some("FAILURE"),
        s if s.testgrid_passing() => Some("SUCCESS"),
        s if s.testgrid_failing() => Some("FAILURE"),
        _ => None,
    }
}

/// A checked table seen as builds, one per column, made one at a time (a large tab is
/// never held as builds all at once). Column `i` of [`TabView::build`] counts from the
/// oldest.
pub struct TabView<'t> {
    table: &'t TestgridTable,
    place: &'t TabPlace,
    overall: Option<usize>,
    pod: Option<usize>,
    commit_col: Option<usize>,
}

impl<'t> TabView<'t> {
    pub fn new(table: &'t TestgridTable, place: &'t TabPlace) -> TabView<'t> {
        TabView {
            table,
            place,
            overall: table.rows.iter().position(|r| r.name == OVERALL_ROW),
            pod: table.rows.iter().position(|r| r.name == POD_ROW),
            commit_col: table.custom_column("Commit"),
        }
    }

    /// The number of builds (columns).
    pub fn len(&self) -> usize {
        self.table.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.columns.is_empty()
    }

    /// The table's column of the `i`-th oldest build.
    fn column(&self, i: usize) -> usize {
        self.table.columns.len() - 1 - i
    }

    /// Test results the cells make (a flaky cell makes two), skipped ones aside.
    pub fn results(&self) -> u64 {
        let mut n = 0;
        for (i, row) in self.table.rows.iter().enumerate() {
            if Some(i) == self.overall || Some(i) == self.pod {
                continue;
            }
            n += row
                .cells
                .iter()
                .filter(|c| matches!(c.reading(), Reading::Passed | Reading::Failed | Reading::Flaky))
                .count() as u64;
            n += row.cells.iter().filter(|c| c.reading() == Reading::Flaky).count() as u64;
        }
        n
    }

    /// The `i`-th oldest build and what TestGrid showed of it.
    pub fn build(&self, i: usize) -> (BuildRecord, TestgridFacts) {
        let (table, place) = (self.table, self.place);
        let c = self.column(i);
        let col = &table.columns[c];
        let mut problems = Vec::new();
        let started = match col.started_ms.map(|ms| ms.div_euclid(1000)) {
            Some(t) if !citriage_model::time::is_sane(t) => {
                problems.push(format!(
                    "TestGrid tab {:?} column {:?}: start {t} is outside the accepted window (2000-01-01 to 2100-01-01); ignored",
                    place.tab, col.build
                ));
                None
            }
            other => other,
        };
        let overall_status = self.overall.map(|r| table.rows[r].cells[c]);
        let result = overall_status.and_then(overall_result).map(str::to_string);
        match overall_status {
            None => problems.push(format!(
                "TestGrid tab {:?} has no {OVERALL_ROW:?} row: the build's result is not known",
                place.tab
            )),
            Some(s @ (TestStatus::Unknown | TestStatus::Blocked)) => problems.push(format!(
                "TestGrid tab {:?}: the {OVERALL_ROW:?} row says {s}{}",
                place.tab,
                self.overall.and_then(|r| table.rows[r].message(c)).map(|m| format!(": {m}")).unwrap_or_default()
            )),
            _ => {}
        }
        if let Some(p) = self.pod.filter(|p| table.rows[*p].cells[c].testgrid_failing()) {
            problems.push(format!(
                "TestGrid tab {:?}: the {POD_ROW:?} row fails{}",
                place.tab,
                table.rows[p].message(c).map(|m| format!(": {m}")).unwrap_or_default()
            ));
        }
        let commit = self.commit_col.map(|k| col.custom[k].trim()).filter(|v| is_commit(v)).map(str::to_string);
        let mut tests = Vec::new();
        let mut unsettled: BTreeMap<TestStatus, u64> = BTreeMap::new();
        let (mut results, mut failed) = (0u64, 0u64);
        for (r, row) in table.rows.iter().enumerate() {
            if Some(r) == self.overall || Some(r) == self.pod {
                continue;
            }
            let status = row.cells[c];
            // A JUnit case without a name is an empty row name in TestGrid.
            let name = if row.name.is_empty() { citriage_formats::junit::UNSPECIFIED } else { row.name.as_str() };
            let case = |status: &str, attempt: u32, text: Option<String>| StoredTest {
                file: String::new(),
                suite: String::new(),
                classname: String::new(),
                name: name.to_string(),
                status: status.to_string(),
                duration: None,
                failure_text: text,
                attempt,
                informing: false,
                kettle_name: None,
            };
            match status.reading() {
                Reading::NotRun | Reading::Running => {}
                Reading::Passed => {
                    results += 1;
                    tests.push(case("passed", 0, None));
                }
                Reading::Failed => {
                    results += 1;
                    failed += 1;
                    tests.push(case("failed", 0, row.message(c).map(str::to_string)));
                }
                Reading::Flaky => {
                    results += 1;
                    failed += 1;
                    tests.push(case("failed", 0, row.message(c).map(str::to_string)));
                    tests.push(case("passed", 1, None));
                }
                Reading::Skipped => tests.push(case("skipped", 0, None)),
                Reading::Unsettled => *unsettled.entry(status).or_default() += 1,
            }
        }
        for (s, n) in &unsettled {
            problems.push(format!(
                "TestGrid tab {:?}: {n} test(s) with status {s} (neither a pass nor a failure) not counted",
                place.tab
            ));
        }
        let complete = !matches!(overall_status, Some(TestStatus::Running | TestStatus::NoResult));
        let presubmit = place.kind == "presubmit";
        let facts = TestgridFacts {
            dashboard: place.dashboard.clone(),
            tab: place.tab.clone(),
            result: result.clone(),
            started,
            commit: commit.clone(),
            tests: results,
            failed,
        };
        let build = BuildRecord {
            bucket: place.bucket.clone(),
            path: format!("{}/{}", place.prefix, col.build),
            job: place.job.clone(),
            build_id: col.build.clone(),
            kind: place.kind.clone(),
            pr: None,
            // A presubmit groups by its PR head, which TestGrid does not show.
            commit_sha: commit.clone().filter(|_| !presubmit),
            repo_commit: None,
            repo_version: commit,
            repos: None,
            started,
            finished: None,
            duration: None,
            result,
            state: None,
            executor: None,
            origin: "testgrid".into(),
            problems,
            complete,
            tests,
            artifacts: Vec::new(),
            excerpts: Vec::new(),
            kettle: None,
            testgrid: Some(TestgridPlace { dashboards: vec![place.dashboard.clone()], tab: Some(place.tab.clone()) }),
            versions: Vec::new(),
        };
        (build, facts)
    }
}

/// Whether a result is a pass (`SUCCESS`) or not, for comparing two readings.
fn passed(result: &str) -> bool {
    result.eq_ignore_ascii_case("SUCCESS")
}

/// Where a build's readings disagree with TestGrid's: the result (a pass against a
/// failure; TestGrid shows ABORTED and ERROR builds as failing, which is no
/// disagreement), the start (more than a second apart) and the commit (TestGrid keeps
/// 9 characters of a version: none of the build's versions starts with it). Each
/// problem starts with [`DISAGREEMENT`].
pub fn disagreements(b: &BuildRecord, f: &TestgridFacts) -> Vec<String> {
    let mut out = Vec::new();
    let at = format!("{DISAGREEMENT}tab {:?} of dashboard {:?}", f.tab, f.dashboard);
    if let (Some(tg), Some(own)) = (f.result.as_deref(), b.result.as_deref()) {
        if passed(tg) != passed(own) {
            out.push(format!("{at} shows the build as {tg}, its own result is {own}"));
        }
    }
    if let (Some(tg), Some(own)) = (f.started, b.started) {
        if (tg - own).abs() > 1 {
            out.push(format!(
                "{at} shows it started at {}, its started.json at {}",
                citriage_model::time::rfc3339(tg),
                citriage_model::time::rfc3339(own)
            ));
        }
    }
    if let Some(tg) = f.commit.as_deref() {
        let versions: Vec<&str> =
            [b.repo_commit.as_deref(), b.repo_version.as_deref(), b.kettle_version(), b.commit_sha.as_deref()]
                .into_iter()
                .flatten()
                .collect();
        let shown = |v: &str| {
            let v = v.rsplit('+').next().unwrap_or(v);
            v.starts_with(tg) || tg.starts_with(v)
        };
        if !versions.is_empty() && !versions.iter().any(|v| shown(v)) {
            out.push(format!("{at} shows commit {tg:?}, the build's own are {versions:?}"));
        }
    }
    out
}

/// The merge rule for a build read from TestGrid: over nothing or over TestGrid's own
/// earlier copy, the build as TestGrid shows it (left alone when nothing changed);
/// over a build read from its artifacts (GCS, or Prow's record), that build's fields
/// and tests kept, gaps (start, commit, TestGrid place) filled from TestGrid, and the
/// disagreements recorded as problems (replacing the earlier comparison's).
pub fn merge_testgrid(incoming: &BuildRecord, facts: &TestgridFacts, stored: Option<&StoredBuildHead>) -> BuildWrite {
    let Some(s) = stored else {
        return BuildWrite::Incoming { extra_problems: Vec::new(), testgrid: Some(facts.clone()) };
    };
    if s.record.origin == "testgrid" {
        if s.testgrid.as_ref() == Some(facts) && s.record.complete && incoming.complete {
            return BuildWrite::Unchanged;
        }
        return BuildWrite::Incoming { extra_problems: Vec::new(), testgrid: Some(facts.clone()) };
    }
    let mut head = s.record.clone();
    head.problems.retain(|p| !p.starts_with(DISAGREEMENT));
    head.problems.extend(disagreements(&s.record, facts));
    if head.started.is_none() {
        head.started = facts.started;
    }
    if head.commit_sha.is_none() && head.kind != "presubmit" && head.kind != "batch" {
        head.commit_sha = facts.commit.clone();
    }
    if head.testgrid.is_none() {
        head.testgrid = incoming.testgrid.clone();
    }
    if s.testgrid.as_ref() == Some(facts) && head == s.record {
        return BuildWrite::Unchanged;
    }
    BuildWrite::StoredWith { head: Box::new(head), testgrid: Some(facts.clone()) }
}

/// The merge rule for a build read from its artifacts (GCS): it replaces what is
/// stored; TestGrid's facts of it, if stored, are kept and compared with it.
pub fn merge_gcs(incoming: &BuildRecord, stored: Option<&StoredBuildHead>) -> BuildWrite {
    match stored.and_then(|s| s.testgrid.as_ref()) {
        Some(f) => BuildWrite::Incoming { extra_problems: disagreements(incoming, f), testgrid: Some(f.clone()) },
        None => BuildWrite::Incoming { extra_problems: Vec::new(), testgrid: None },
    }
}

/// What reading one tab did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TabOutcome {
    pub dashboard: String,
    pub tab: String,
    pub job: String,
    pub columns: usize,
    pub rows: usize,
    /// Cells per status, every status of TestGrid's enum listed by name.
    pub cells: BTreeMap<&'static str, u64>,
    /// Test results stored from the cells (a flaky cell gives a failed and a passed one).
    pub results: u64,
    /// Builds written, and builds already stored as the tab shows them.
    pub builds_written: usize,
    pub builds_unchanged: usize,
    /// Builds of the tab that other sources also have (merged into their rows).
    pub builds_merged: usize,
    /// Remarks of the reader (fields not read).
    pub warnings: Vec<String>,
    /// The newest start of the tab's builds.
    pub newest_started: Option<i64>,
}

/// A tab that could not be read or stored.
#[derive(Debug, Clone, Serialize)]
pub struct TabFailure {
    pub dashboard: String,
    pub tab: String,
    pub reason: String,
    /// Whether the answer was at fault (refused, or a 4xx), not the network.
    pub bad_input: bool,
}

/// What reading TestGrid did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TestgridSummary {
    pub tabs: Vec<TabOutcome>,
    pub failures: Vec<TabFailure>,
    /// The run stopped early because a shutdown was asked for.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
}

impl TestgridSummary {
    pub fn builds_written(&self) -> usize {
        self.tabs.iter().map(|t| t.builds_written).sum()
    }

    pub fn newest_started(&self) -> Option<i64> {
        self.tabs.iter().filter_map(|t| t.newest_started).max()
    }
}

/// How to read TestGrid.
#[derive(Clone, Default)]
pub struct TestgridOptions {
    /// What a table may take in memory once read (the process's memory budget).
    pub limits: TableLimits,
    /// When the tabs are read (Unix seconds), recorded with each tab.
    pub now: i64,
    /// When set (a shutdown was asked for), no further tab is read.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Why one tab was refused: its answer (bad input) or the store.
#[derive(Debug)]
pub enum TabError {
    Input(String),
    Store(StoreError),
}

impl std::fmt::Display for TabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TabError::Input(e) => f.write_str(e),
            TabError::Store(e) => write!(f, "{e}"),
        }
    }
}

/// Reads one tab's table answer and stores it with its builds in one transaction.
pub fn ingest_table(
    store: &mut Store,
    dashboard: &str,
    tab: &str,
    answer: &[u8],
    opts: &TestgridOptions,
) -> Result<TabOutcome, TabError> {
    let table = parse_table(answer, tab, &opts.limits).map_err(|e| TabError::Input(e.to_string()))?;
    let place = tab_place(&table, dashboard, tab).map_err(|e| TabError::Input(e.to_string()))?;
    let view = TabView::new(&table, &place);
    let status_counts = table.status_counts();
    let mut warnings = table.warnings.clone();
    if let Some(i) = table.custom_column("Commit") {
        let odd: std::collections::BTreeSet<&str> =
            table.columns.iter().map(|c| c.custom[i].trim()).filter(|v| !v.is_empty() && !is_commit(v)).collect();
        if !odd.is_empty() {
            let shown: Vec<String> = odd.iter().take(3).map(|v| format!("{v:?}")).collect();
            warnings.push(format!(
                "tab {tab:?}: the Commit column holds {}, which is no commit; those builds are stored without one",
                shown.join(", ")
            ));
        }
    }
    let counts: serde_json::Map<String, serde_json::Value> =
        status_counts.iter().map(|(s, n)| (s.name().to_string(), (*n).into())).collect();
    let row = TestgridTab {
        dashboard: dashboard.into(),
        tab: tab.into(),
        test_group: table.meta.test_group.clone(),
        query: table.meta.query.clone(),
        bucket: place.bucket.clone(),
        job: place.job.clone(),
        meta: serde_json::to_string(&table.meta).unwrap_or_else(|_| "{}".into()),
        columns: table.columns.len() as i64,
        rows: table.rows.len() as i64,
        status_counts: serde_json::Value::Object(counts).to_string(),
        sha256: sha256_hex(answer),
        read_at: opts.now,
    };
    // Each build is made when it is written; its facts wait for its merge.
    let mut merged = 0usize;
    let pending: std::cell::RefCell<Option<TestgridFacts>> = std::cell::RefCell::new(None);
    let written = store
        .put_testgrid_tab(
            &row,
            view.len(),
            &mut |i| {
                let (b, f) = view.build(i);
                *pending.borrow_mut() = Some(f);
                b
            },
            &mut |b, stored| {
                let facts = pending.borrow_mut().take().unwrap_or_default();
                if stored.is_some_and(|s| s.record.origin != "testgrid") {
                    merged += 1;
                }
                merge_testgrid(b, &facts, stored)
            },
        )
        .map_err(TabError::Store)?;
    Ok(TabOutcome {
        dashboard: dashboard.into(),
        tab: tab.into(),
        job: place.job.clone(),
        columns: table.columns.len(),
        rows: table.rows.len(),
        cells: status_counts.iter().map(|(s, n)| (s.name(), *n)).collect(),
        results: view.results(),
        builds_written: written.written,
        builds_unchanged: written.unchanged,
        builds_merged: merged,
        warnings,
        newest_started: table
            .columns
            .iter()
            .filter_map(|c| c.started_ms.map(|ms| ms.div_euclid(1000)))
            .filter(|t| citriage_model::time::is_sane(*t))
            .max(),
    })
}

/// Reads a dashboard's tabs over HTTP (every tab of its summary, or the ones named)
/// and stores each tab whole. A tab that cannot be read or stored is a failure of the
/// summary (named, with why); the other tabs are still read. Only a failure to read
/// the summary (or the store failing) ends the run.
pub fn ingest_dashboard(
    store: &mut Store,
    tg: &TestgridHttp,
    dashboard: &str,
    tabs: Option<&[String]>,
    opts: &TestgridOptions,
    progress: &dyn Fn(&str),
) -> Result<TestgridSummary, IngestTestgridError> {
    let names: Vec<String> = match tabs {
        Some(t) => t.to_vec(),
        None => {
            let body = tg.summary(dashboard).map_err(IngestTestgridError::Source)?;
            parse_summary(&body, dashboard)
                .map_err(|e| IngestTestgridError::Input(e.to_string()))?
                .tabs
                .into_iter()
                .map(|t| t.tab)
                .collect()
        }
    };
    let mut summary = TestgridSummary::default();
    for tab in names {
        if opts.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst)) {
            summary.stopped = true;
            break;
        }
        progress(&tab);
        let fail = |reason: String, bad_input: bool| TabFailure {
            dashboard: dashboard.into(),
            tab: tab.clone(),
            reason,
            bad_input,
        };
        let body = match tg.table(dashboard, &tab) {
            Ok(b) => b,
            Err(e) if e.is_bad_input() || matches!(e, SourceError::Http { .. }) => {
                summary.failures.push(fail(e.to_string(), e.is_bad_input()));
                continue;
            }
            Err(e) => return Err(IngestTestgridError::Source(e)),
        };
        match ingest_table(store, dashboard, &tab, &body, opts) {
            Ok(o) => summary.tabs.push(o),
            Err(TabError::Input(e)) => summary.failures.push(fail(e, true)),
            Err(TabError::Store(e)) => return Err(IngestTestgridError::Store(e)),
        }
    }
    Ok(summary)
}

/// Reads TestGrid from a URL as a user copies it (`BASE/<dashboard>`: every tab of the
/// dashboard; `BASE/<dashboard>#<tab>` or `BASE/<dashboard>/table?tab=<tab>`: that tab),
/// contacting only that TestGrid's origin.
pub fn fetch_url(
    store: &mut Store,
    url: &str,
    http: citriage_sources::HttpOptions,
    opts: &TestgridOptions,
    progress: &dyn Fn(&str),
) -> Result<TestgridSummary, IngestTestgridError> {
    let target = citriage_sources::testgrid::parse_target(url).map_err(IngestTestgridError::Input)?;
    let tg = TestgridHttp::new(&target.base, http).map_err(IngestTestgridError::Source)?;
    let tabs = target.tab.map(|t| vec![t]);
    ingest_dashboard(store, &tg, &target.dashboard, tabs.as_deref(), opts, progress)
}

/// Reads a saved table answer (a file, or a URL of one), read within `http.max_bytes`
/// and the memory budget, as the tab `tab` of `dashboard`. A bad table is refused (bad
/// input) and nothing of it is stored.
pub fn ingest_saved_table(
    store: &mut Store,
    location: &str,
    dashboard: &str,
    tab: &str,
    http: &citriage_sources::HttpOptions,
    opts: &TestgridOptions,
) -> Result<TestgridSummary, IngestTestgridError> {
    citriage_sources::testgrid::check_dashboard(dashboard)
        .map_err(|why| IngestTestgridError::Input(format!("dashboard {dashboard:?} refused: {why}")))?;
    citriage_sources::testgrid::check_tab(tab)
        .map_err(|why| IngestTestgridError::Input(format!("tab {tab:?} refused: {why}")))?;
    let f = citriage_sources::read(location, http).map_err(IngestTestgridError::Source)?;
    match ingest_table(store, dashboard, tab, &f.bytes, opts) {
        Ok(o) => Ok(TestgridSummary { tabs: vec![o], ..TestgridSummary::default() }),
        Err(TabError::Input(e)) => Err(IngestTestgridError::Input(format!("{location}: {e}"))),
        Err(TabError::Store(e)) => Err(IngestTestgridError::Store(e)),
    }
}

/// What ends a TestGrid run: the summary unreadable, or the store failing.
#[derive(Debug)]
pub enum IngestTestgridError {
    Input(String),
    Source(SourceError),
    Store(StoreError),
}

impl IngestTestgridError {
    /// True when the input was at fault (exit 2), not the network or the store.
    pub fn is_bad_input(&self) -> bool {
        match self {
            IngestTestgridError::Input(_) => true,
            IngestTestgridError::Source(e) => e.is_bad_input(),
            IngestTestgridError::Store(e) => e.is_bad_input(),
        }
    }
}

impl std::fmt::Display for IngestTestgridError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IngestTestgridError::Input(e) => f.write_str(e),
            IngestTestgridError::Source(e) => write!(f, "{e}"),
            IngestTestgridError::Store(e) => write!(f, "{e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gcs_build() -> BuildRecord {
        BuildRecord {
            bucket: "b".into(),
            path: "logs/j/7".into(),
            job: "j".into(),
            build_id: "7".into(),
            kind: "periodic".into(),
            pr: None,
            commit_sha: Some("v1.30.0-alpha.1.123+abcdef0123456".into()),
            repo_commit: None,
            repo_version: Some("v1.30.0-alpha.1.123+abcdef0123456".into()),
            repos: None,
            started: Some(1_700_000_000),
            finished: Some(1_700_000_600),
            duration: Some(600),
            result: Some("SUCCESS".into()),
            state: None,
            executor: None,
            origin: "gcs".into(),
            problems: vec!["junit_02.xml: truncated".into()],
            complete: true,
            tests: Vec::new(),
            artifacts: Vec::new(),
            excerpts: Vec::new(),
            kettle: None,
            testgrid: None,
            versions: Vec::new(),
        }
    }

    fn facts(result: &str, started: i64, commit: &str) -> TestgridFacts {
        TestgridFacts {
            dashboard: "d".into(),
            tab: "t".into(),
            result: Some(result.into()),
            started: Some(started),
            commit: Some(commit.into()),
            tests: 3,
            failed: 1,
        }
    }

    #[test]
    fn disagreements_are_named_and_agreement_is_quiet() {
        let b = gcs_build();
        assert!(disagreements(&b, &facts("SUCCESS", 1_700_000_000, "abcdef012")).is_empty());
        let d = disagreements(&b, &facts("FAILURE", 1_700_000_100, "123456789"));
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(
            d[0].starts_with(DISAGREEMENT) && d[0].contains("shows the build as FAILURE, its own result is SUCCESS")
        );
        assert!(d[1].contains("started at 2023-11-14T22:15:00Z"), "{}", d[1]);
        assert!(d[2].contains("commit \"123456789\""));
        // TestGrid shows an aborted build as failing: no disagreement.
        let mut aborted = gcs_build();
        aborted.result = Some("ABORTED".into());
        assert!(disagreements(&aborted, &facts("FAILURE", 1_700_000_000, "abcdef012")).is_empty());
    }

    #[test]
    fn the_richer_source_wins_and_comparisons_are_replaced_not_piled_up() {
        let gcs = gcs_build();
        let stored = StoredBuildHead { record: gcs.clone(), testgrid: None };
        let mut tg = gcs.clone();
        tg.origin = "testgrid".into();
        let f = facts("FAILURE", 1_700_000_000, "abcdef012");
        let BuildWrite::StoredWith { head, testgrid } = merge_testgrid(&tg, &f, Some(&stored)) else { panic!() };
        assert_eq!(head.origin, "gcs");
        assert_eq!(head.problems.len(), 2, "{:?}", head.problems);
        assert_eq!(testgrid.as_ref(), Some(&f));
        // Merging again over the merged row: the same one comparison, nothing to write.
        let again = StoredBuildHead { record: *head.clone(), testgrid: testgrid.clone() };
        assert_eq!(merge_testgrid(&tg, &f, Some(&again)), BuildWrite::Unchanged);
        // TestGrid changes its mind: the old comparison goes.
        let f2 = facts("SUCCESS", 1_700_000_000, "abcdef012");
        let BuildWrite::StoredWith { head: h2, .. } = merge_testgrid(&tg, &f2, Some(&again)) else { panic!() };
        assert_eq!(h2.problems, ["junit_02.xml: truncated"]);
        // GCS read again over the merged row: its own fields, the facts kept and compared.
        let BuildWrite::Incoming { extra_problems, testgrid } = merge_gcs(&gcs, Some(&again)) else { panic!() };
        assert_eq!(extra_problems.len(), 1);
        assert_eq!(testgrid, Some(f));
        assert_eq!(merge_gcs(&gcs, None), BuildWrite::Incoming { extra_problems: vec![], testgrid: None });
    }

    #[test]
    fn every_status_gives_a_result_or_none() {
        for s in TestStatus::ALL {
            let r = overall_result(s);
            match s.reading() {
                Reading::Passed | Reading::Skipped => assert_eq!(r, Some("SUCCESS"), "{s}"),
                Reading::NotRun | Reading::Running => assert_eq!(r, None, "{s}"),
                _ => {}
            }
        }
        assert_eq!(overall_result(TestStatus::ToolFail), Some("ERROR"));
        assert_eq!(overall_result(TestStatus::Cancel), Some("ABORTED"));
        assert_eq!(overall_result(TestStatus::Unknown), None);
    }
}
