//! Triaging a dashboard snapshot: the rules and settings it is judged by, the triage
//! itself (against its prior, with the stored builds and linked fix PRs when there are
//! any), and its report written to a folder (`report.md`, `report.html`,
//! `report.json`, the data files) and recorded in the store with the evidence it cites.

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::snapshots::{self, Loaded};
use crate::{builds, cluster, documents, files, links};
use citriage_analysis::links::PrLink;
use citriage_analysis::{triage, AnalysisConfig, RuleSet, Triage, TriageBuilds, TriageInput};
use citriage_model::{Dataset, Day};
use citriage_report::{render_all, Artifact};
use citriage_sources::HttpOptions;
use citriage_store::Store;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What a triage is judged by: the categorization rules and the analysis settings
/// (default: the built-in ones).
#[derive(Debug, Clone)]
pub struct Settings {
    pub rules: RuleSet,
    pub config: AnalysisConfig,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { rules: RuleSet::builtin(), config: AnalysisConfig::default() }
    }
}

impl Settings {
    /// The built-in rules and settings, or those of the files given (TOML).
    pub fn load(rules: Option<&Path>, config: Option<&Path>) -> Result<Settings> {
        Ok(Settings { rules: load_rules(rules)?, config: load_config(config)? })
    }
}

/// Loads the rules (built-in or a file).
pub fn load_rules(path: Option<&Path>) -> Result<RuleSet> {
    match path {
        None => Ok(RuleSet::builtin()),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Error::input(format!("{}: cannot read rules: {e}", p.display())))?;
            RuleSet::from_toml(&text, &p.display().to_string()).map_err(|e| Error::input(e.to_string()))
        }
    }
}

/// Loads the analysis config (defaults or a file).
pub fn load_config(path: Option<&Path>) -> Result<AnalysisConfig> {
    match path {
        None => Ok(AnalysisConfig::default()),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Error::input(format!("{}: cannot read config: {e}", p.display())))?;
            AnalysisConfig::from_toml(&text).map_err(|e| Error::input(format!("{}: {e}", p.display())))
        }
    }
}

/// Runs the triage on loaded snapshots.
pub fn run_triage(loaded: &Loaded, settings: &Settings, builds: Option<&TriageBuilds>, links: &[PrLink]) -> Triage {
    triage(&TriageInput {
        snapshot: &loaded.snapshot,
        prior: loaded.prior.as_ref(),
        older: &loaded.older,
        rules: &settings.rules,
        config: &settings.config,
        builds,
        links,
    })
}

/// Writes the report of a triage to `out` (report.md, report.html, report.json and
/// the data files), records it in the store's documents (report.md and report.json,
/// the same bytes) and the evidence it cites in the ledger; returns the paths written.
/// The report gains the pattern drift of the store's latest clustering run, when there
/// is one.
pub fn publish(store: &mut Store, t: &Triage, out: &Path) -> Result<Vec<String>> {
    let files = write_and_record(store, t, out)?;
    record_report_evidence(store, t)?;
    Ok(files)
}

fn write_and_record(store: &mut Store, t: &Triage, out: &Path) -> Result<Vec<String>> {
    let mut with_drift;
    let t = if t.pattern_drift.is_none() && t.jobs_with_builds > 0 {
        with_drift = t.clone();
        with_drift.pattern_drift = cluster::drift_report(store, t.snapshot.date)?;
        // the evidence it cites goes to the ledger like the rest of the report's
        if let Some(pd) = &with_drift.pattern_drift {
            let ev: Vec<citriage_model::Evidence> = pd.patterns.iter().filter_map(|p| p.evidence.clone()).collect();
            store.record_evidence(&ev, &crate::clock::now_rfc3339())?;
        }
        &with_drift
    } else {
        t
    };
    let mut arts = render_all(t);
    // report.html beside report.md: the same content, self-contained, the dashboard's look.
    if let Some(md) = arts.iter().find(|a| a.name == "report.md") {
        let title = format!("{} triage {}", t.snapshot.dataset, t.snapshot.date);
        let html = citriage_report::html::standalone_page(&title, &md.contents);
        let at = arts.iter().position(|a| a.name == "report.json").map(|i| i + 1).unwrap_or(arts.len());
        arts.insert(at, Artifact { name: "report.html".to_string(), contents: html });
    }
    let written = write_rendered(&arts, out)?;
    let body = |name: &str| {
        arts.iter()
            .find(|a| a.name == name)
            .map(|a| a.contents.as_str())
            .ok_or_else(|| Error::failed(format!("the report renderer produced no {name}")))
    };
    documents::record_triage(store, t, body("report.md")?, body("report.json")?)?;
    Ok(written)
}

fn write_rendered(arts: &[Artifact], out: &Path) -> Result<Vec<String>> {
    files::create_folder(out)?;
    let mut written = Vec::new();
    for a in arts {
        written.push(files::write_whole(out, &a.name, a.contents.as_bytes())?.display().to_string());
    }
    Ok(written)
}

/// Records the evidence a triage report cites in the store's ledger; returns how many
/// items were new.
fn record_report_evidence(store: &mut Store, t: &Triage) -> Result<usize> {
    let (_, evidence) = citriage_report::render_markdown(t);
    Ok(store.record_evidence(&evidence, &crate::clock::now_rfc3339())?)
}

/// At most this many drifting patterns are blamed in a report.
const BLAMED_PATTERNS: usize = 10;

/// Which change started each new or growing pattern of the latest clustering run
/// (`suspects` with the checkouts); a pattern whose input had problems says them as
/// warnings and is still reported.
pub fn blame_patterns(
    store: &mut Store,
    checkouts: &[String],
    date: citriage_model::Day,
    progress: &dyn Progress,
) -> Result<Vec<citriage_analysis::triage::PatternBlame>> {
    use citriage_analysis::triage::DriftKind;
    let Some(drift) = cluster::drift_report(store, date)? else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for p in
        drift.patterns.iter().filter(|p| matches!(p.kind, DriftKind::New | DriftKind::Growing)).take(BLAMED_PATTERNS)
    {
        let opts = crate::suspects::SuspectsOptions {
            target: p.stable_id.clone(),
            profile: cluster::parse_profile(&drift.profile)?,
            checkouts: checkouts.to_vec(),
        };
        let s = crate::suspects::suspects(store, &opts, &crate::progress::Silent)?;
        for problem in &s.problems {
            progress.warning(&format!("pattern {}: {problem}", p.stable_id));
        }
        out.push(s.blame());
    }
    Ok(out)
}

/// What `triage` is asked: which snapshot, against what, with which fix PRs, and where
/// the report goes.
#[derive(Debug, Clone)]
pub struct TriageRequest {
    /// A snapshot file or URL to import and triage; else the latest stored of `dataset`.
    pub snapshot: Option<String>,
    /// A snapshot to compare against instead of the stored prior.
    pub prior: Option<String>,
    /// The snapshot's dataset, instead of detecting it (without `snapshot`: which one's
    /// latest; default failures).
    pub dataset: Option<Dataset>,
    /// The day the snapshot describes, instead of a date in its name (or today).
    pub date: Option<Day>,
    /// How snapshot URLs are read.
    pub http: HttpOptions,
    /// A links file of fix PRs (TOML) whose states are read from GitHub.
    pub links: Option<PathBuf>,
    /// The GitHub API base, and whether to read PR states from the store's cache only.
    pub api: String,
    pub offline: bool,
    /// The report's folder.
    pub out: PathBuf,
    /// Checkouts of tested repositories (`ORG/REPO=PATH`): the drifting patterns' windows
    /// are read there and the report says which change started each.
    pub checkouts: Vec<String>,
}

impl Default for TriageRequest {
    fn default() -> Self {
        TriageRequest {
            snapshot: None,
            prior: None,
            dataset: None,
            date: None,
            http: HttpOptions::default(),
            links: None,
            api: citriage_github::DEFAULT_API_BASE.to_string(),
            offline: false,
            out: PathBuf::from("triage-report"),
            checkouts: Vec::new(),
        }
    }
}

/// A triage and the files its report was written to.
pub struct Triaged {
    pub triage: Triage,
    pub files: Vec<String>,
}

/// `triage`: the snapshot (imported when given, else the latest stored) against its
/// prior, with the stored builds of its jobs and the linked fix PRs' states; writes and
/// records the report ([`publish`]). The store is the GitHub client's cache while the
/// PR states are read, so it is taken whole.
pub fn triage_snapshot(
    mut store: Store,
    req: &TriageRequest,
    settings: &Settings,
    progress: &dyn Progress,
) -> Result<Triaged> {
    progress.doing("reading");
    let id = match &req.snapshot {
        Some(loc) => {
            let read = snapshots::read(loc, req.dataset, req.date, &req.http)?;
            for w in &read.warnings {
                progress.warning(w);
            }
            snapshots::store(&mut store, &read.snapshot)?.snapshot.id
        }
        None => {
            let ds = req.dataset.unwrap_or(Dataset::Failures);
            match store.latest(ds)? {
                Some(s) => s.id,
                None => {
                    return Err(Error::remedy(
                        format!("the store {} has no {ds} snapshot: pass --snapshot FILE|URL or run ", store.path()),
                        "import",
                        " first",
                    ))
                }
            }
        }
    };
    let mut loaded = snapshots::load_with_history(&store, id)?;
    if let Some(p) = &req.prior {
        let prior = snapshots::read(p, Some(loaded.snapshot.meta.dataset), None, &req.http)?;
        loaded.prior = Some(prior.snapshot);
        loaded.older.clear();
    }
    progress.doing("loading builds");
    // The listed jobs' builds, with tests of the last 8 days before the snapshot date.
    let builds = builds::for_snapshot(&mut store, &loaded.snapshot, &settings.rules, &settings.config)?;
    let links = match &req.links {
        Some(p) => {
            progress.doing("reading linked PRs");
            let shared = Rc::new(store);
            let l = links::read_links(p, shared.clone(), &req.api, req.offline)?;
            store = Rc::try_unwrap(shared).map_err(|_| Error::failed("store still in use"))?;
            l
        }
        None => Vec::new(),
    };
    progress.doing("triaging");
    let mut t = run_triage(&loaded, settings, builds.as_ref(), &links);
    // The records' news since the report of the prior snapshot.
    let prior_day = loaded.prior.as_ref().map(|p| p.meta.date);
    t.records = crate::records::report_digest(&store, prior_day, loaded.snapshot.meta.date)?;
    if !req.checkouts.is_empty() {
        progress.doing("reading the patterns' windows");
        t.blame = blame_patterns(&mut store, &req.checkouts, loaded.snapshot.meta.date, progress)?;
    }
    progress.doing("writing report");
    let files = publish(&mut store, &t, &req.out)?;
    Ok(Triaged { triage: t, files })
}
