//! Reading TestGrid into the store (`fetch --testgrid`, `fetch --testgrid-file`, and
//! the `testgrid` sources of `watch`): a dashboard's tabs or one tab over HTTP from a
//! URL as users copy it (through `citriage-sources`' one HTTP layer, only that
//! TestGrid's origin contacted), or a saved table answer offline. Each tab is stored
//! whole with its builds in one transaction, merged with the rows other sources wrote
//! for the same builds (`citriage_ingest::testgrid`); a bad tab is named and refused,
//! the dashboard's other tabs still read.

use crate::error::{Error, Result};
use crate::progress::Progress;
use citriage_formats::testgrid::TableLimits;
use citriage_ingest::testgrid::{fetch_url, ingest_saved_table, IngestTestgridError, TestgridOptions, TestgridSummary};
use citriage_sources::testgrid::{check_dashboard, check_tab, parse_target, TestgridTarget};
use citriage_sources::HttpOptions;
use citriage_store::Store;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The dashboard a saved answer is stored under when none is named.
pub const SAVED_DASHBOARD: &str = "saved";

/// What to read from TestGrid.
#[derive(Debug, Clone)]
pub struct TestgridRequest {
    /// A TestGrid URL as users copy it: `BASE/<dashboard>` (every tab),
    /// `BASE/<dashboard>#<tab>` or `BASE/<dashboard>/table?tab=<tab>` (that tab).
    pub url: Option<String>,
    /// A saved table answer (a file, or a URL of one); or `url`.
    pub file: Option<String>,
    /// The dashboard a saved answer is stored under (default [`SAVED_DASHBOARD`]).
    pub dashboard: Option<String>,
    /// The tab a saved answer is stored as (default: its file name without `.json`
    /// and `.table`).
    pub tab: Option<String>,
    /// Each request's timeout (also the longest single wait a server may ask for).
    pub timeout: Duration,
    /// Bytes one table may take once read; a larger one is refused by name.
    pub max_table_bytes: u64,
    /// When set (a shutdown was asked for), no further tab is read.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Default for TestgridRequest {
    fn default() -> Self {
        TestgridRequest {
            url: None,
            file: None,
            dashboard: None,
            tab: None,
            timeout: Duration::from_secs(30),
            max_table_bytes: TableLimits::default().max_bytes,
            stop: None,
        }
    }
}

/// What is read, checked before any store is opened or request made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// A dashboard (every tab) or one tab, over HTTP.
    Url(TestgridTarget),
    /// A saved answer stored as `tab` of `dashboard`.
    Saved { location: String, dashboard: String, tab: String },
}

/// What reading TestGrid did.
#[derive(Debug, Clone)]
pub struct TestgridFetched {
    /// Where the tabs came from (the URL or file as given).
    pub source: String,
    pub summary: TestgridSummary,
    /// Seconds the tabs took to read and store.
    pub seconds: f64,
}

impl TestgridFetched {
    /// A read fails when some tab was refused (bad input when every refusal was the
    /// answer's fault, a failure otherwise); what was read stays stored.
    pub fn outcome(&self) -> Result<()> {
        let f = &self.summary.failures;
        let Some(first) = f.first() else { return Ok(()) };
        let msg = format!(
            "{} TestGrid tab(s) not stored; first: {}/{}: {}",
            f.len(),
            first.dashboard,
            first.tab,
            first.reason
        );
        if f.iter().all(|t| t.bad_input) {
            Err(Error::input(msg))
        } else {
            Err(Error::failed(msg))
        }
    }
}

/// The tab a saved answer is stored as when none is named: its file name without
/// `.json` and then `.table` (`e2e-gcp.table.json` → `e2e-gcp`).
fn tab_of_file(location: &str) -> String {
    let name = location.trim_end_matches('/').rsplit(['/', '\\']).next().unwrap_or(location);
    let name = name.split(['?', '#']).next().unwrap_or(name);
    let name = name.strip_suffix(".json").unwrap_or(name);
    name.strip_suffix(".table").unwrap_or(name).to_string()
}

/// Checks the request (the URL read, the names a saved answer is stored under) before
/// any store is opened or request made; bad input names the URL or file.
pub fn plan(req: &TestgridRequest) -> Result<Plan> {
    match (&req.url, &req.file) {
        (Some(_), Some(_)) => Err(Error::input("give --testgrid URL or --testgrid-file FILE, not both")),
        (None, None) => Err(Error::input("say what to read: --testgrid URL or --testgrid-file FILE")),
        (Some(url), None) => {
            if req.dashboard.is_some() || req.tab.is_some() {
                return Err(Error::input(format!(
                    "--testgrid {url}: the URL names the dashboard and tab (--testgrid-dashboard and --testgrid-tab go with --testgrid-file)"
                )));
            }
            Ok(Plan::Url(parse_target(url).map_err(Error::input)?))
        }
        (None, Some(file)) => {
            if !citriage_sources::is_url(file) && !std::path::Path::new(file).is_file() {
                return Err(Error::input(format!("--testgrid-file {file}: no such file")));
            }
            let dashboard = req.dashboard.clone().unwrap_or_else(|| SAVED_DASHBOARD.to_string());
            check_dashboard(&dashboard).map_err(|why| {
                Error::input(format!("--testgrid-file {file}: dashboard name {dashboard:?} refused: {why}"))
            })?;
            let tab = req.tab.clone().unwrap_or_else(|| tab_of_file(file));
            check_tab(&tab).map_err(|why| {
                Error::input(format!(
                    "--testgrid-file {file}: tab name {tab:?} refused: {why} (name it with --testgrid-tab)"
                ))
            })?;
            Ok(Plan::Saved { location: file.clone(), dashboard, tab })
        }
    }
}

/// The ingestion's errors in the use cases' terms, keeping their word on whose fault.
fn from_ingest(e: IngestTestgridError) -> Error {
    match e {
        IngestTestgridError::Input(m) => Error::input(m),
        IngestTestgridError::Source(e) => Error::Source(e),
        IngestTestgridError::Store(e) => Error::Store(e),
    }
}

/// Reads what `plan` says into the store, the time of the read recorded with each tab;
/// progress names each tab as it is read, counts the tabs, and passes on the reader's
/// warnings (fields of a table not read, values that are no commit).
pub fn fetch_testgrid(
    store: &mut Store,
    plan: &Plan,
    req: &TestgridRequest,
    progress: &dyn Progress,
) -> Result<TestgridFetched> {
    let http = HttpOptions::per_request(req.timeout.max(Duration::from_secs(1)));
    let opts = TestgridOptions {
        limits: TableLimits { max_bytes: req.max_table_bytes },
        now: crate::clock::now(),
        stop: req.stop.clone(),
    };
    let started = std::time::Instant::now();
    let (source, summary) = match plan {
        Plan::Url(target) => {
            let url = req.url.clone().unwrap_or_default();
            progress.doing(&format!("reading TestGrid dashboard {}", target.dashboard));
            let on_tab = |tab: &str| {
                progress.found(1);
                progress.doing(&format!("reading TestGrid {}: tab {tab}", target.dashboard));
            };
            let s = fetch_url(store, &url, http, &opts, &on_tab).map_err(from_ingest)?;
            (url, s)
        }
        Plan::Saved { location, dashboard, tab } => {
            progress.doing(&format!("reading the saved TestGrid table {location}"));
            let s = ingest_saved_table(store, location, dashboard, tab, &http, &opts).map_err(from_ingest)?;
            (location.clone(), s)
        }
    };
    progress.advance(summary.tabs.len() as u64);
    for w in summary.tabs.iter().flat_map(|t| &t.warnings) {
        progress.warning(w);
    }
    Ok(TestgridFetched { source, summary, seconds: started.elapsed().as_secs_f64() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_answer_is_named_after_its_file_unless_told() {
        assert_eq!(tab_of_file("dir/e2e-gcp-rt-4.4.table.json"), "e2e-gcp-rt-4.4");
        assert_eq!(tab_of_file("https://h/x/ci-kind.json?alt=media"), "ci-kind");
        let file = std::env::current_exe().unwrap().display().to_string();
        let req = TestgridRequest { file: Some(file.clone()), tab: Some("t".into()), ..Default::default() };
        assert_eq!(
            plan(&req).unwrap(),
            Plan::Saved { location: file.clone(), dashboard: SAVED_DASHBOARD.into(), tab: "t".into() }
        );
        let bad = TestgridRequest { file: Some(file.clone()), dashboard: Some("../etc".into()), ..Default::default() };
        let e = plan(&bad).unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("dashboard name \"../etc\" refused"), "{e}");
        let ctl = TestgridRequest { file: Some(file), tab: Some("a\u{1b}[31m".into()), ..Default::default() };
        assert!(plan(&ctl).unwrap_err().to_string().contains("control character"));
        let none = TestgridRequest { file: Some("no/such/table.json".into()), ..Default::default() };
        assert!(plan(&none).unwrap_err().to_string().contains("no/such/table.json: no such file"));
        let both = TestgridRequest { url: Some("https://h/d".into()), tab: Some("t".into()), ..Default::default() };
        assert!(plan(&both).unwrap_err().is_bad_input());
    }
}
