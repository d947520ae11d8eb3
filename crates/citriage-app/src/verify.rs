//! Checking a report's claims (`verify`, `demo`, the MCP server's `verify_report`):
//! against GitHub (through the store's cache), local checkouts and the builds in the
//! store, with the result recorded in the store's documents.

use crate::documents::{find_by_body, split_stored, Verified, MARKDOWN};
use crate::error::{Error, Result};
use citriage_github::RefContext;
use citriage_model::evidence::sha256_hex;
use citriage_model::Evidence;
use citriage_store::{DocumentHeader, Store};
use citriage_verify::rules::{BuildAnswer, BuildUrl, BuildUrlResolver, Resolvers, Verification, VerifyOptions};
use citriage_verify::{Checkout, Checkouts, GitProgram};
use std::path::PathBuf;
use std::rc::Rc;

/// Builds known to the store answer build claims, with their results. A job the store
/// has no build of is a finding only when the store holds builds of the same bucket and
/// tree (`kubernetes-ci-logs/logs`) and no stored dashboard snapshot lists the job:
/// then the job does not exist there; otherwise it was merely not fetched.
pub(crate) struct StoreBuilds {
    store: Rc<Store>,
    /// `bucket/tree` of every stored build, read once when first needed.
    areas: std::cell::OnceCell<std::collections::BTreeSet<String>>,
    /// Jobs named in any stored dashboard snapshot (raw names, `pr:` removed).
    listed: std::cell::OnceCell<std::collections::BTreeSet<String>>,
}

impl StoreBuilds {
    pub(crate) fn new(store: Rc<Store>) -> StoreBuilds {
        StoreBuilds { store, areas: Default::default(), listed: Default::default() }
    }

    fn areas(&self) -> &std::collections::BTreeSet<String> {
        self.areas.get_or_init(|| {
            self.store
                .build_index()
                .map(|all| {
                    all.iter()
                        .filter_map(|b| {
                            let tree = b.record.path.split('/').next()?;
                            (tree == "logs" || tree == "pr-logs").then(|| format!("{}/{tree}", b.record.bucket))
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
    }

    fn listed(&self) -> &std::collections::BTreeSet<String> {
        self.listed.get_or_init(|| {
            let mut out = std::collections::BTreeSet::new();
            for s in self.store.list_snapshots(None).unwrap_or_default() {
                for j in self.store.snapshot_job_names(s.id).unwrap_or_default() {
                    out.insert(j.trim_start_matches("pr:").to_string());
                }
            }
            out
        })
    }
}

impl BuildUrlResolver for StoreBuilds {
    fn check(&self, b: &BuildUrl) -> BuildAnswer {
        let builds = match self.store.builds(Some(&b.job)) {
            Ok(v) => v,
            Err(e) => return BuildAnswer::Unchecked { why: e.to_string() },
        };
        if let Some(rec) = builds.iter().find(|r| r.build_id == b.build_id) {
            return BuildAnswer::Known {
                outcome: rec.result.clone(),
                evidence: Some(citriage_analysis::build_findings::build_evidence(rec)),
            };
        }
        if !builds.is_empty() {
            return BuildAnswer::Missing {
                why: format!("the store has {} build(s) of {} but not {}", builds.len(), b.job, b.build_id),
            };
        }
        if self.listed().contains(&b.job) {
            return BuildAnswer::Unchecked {
                why: format!(
                    "{} is on a stored dashboard but none of its builds were fetched (`citriage fetch`)",
                    b.job
                ),
            };
        }
        match b.area() {
            Some(area) if self.areas().contains(&area) => BuildAnswer::Missing {
                why: format!("the store holds builds of {area} and no job {} (nor does any stored dashboard)", b.job),
            },
            _ => BuildAnswer::Unchecked { why: format!("no build of {} was ingested (run `citriage fetch`)", b.job) },
        }
    }
}

/// How reports are checked: repository context, checkouts and GitHub access.
pub struct VerifySetup {
    pub ctx: RefContext,
    pub checkouts: Checkouts,
    pub api: String,
    pub offline: bool,
    pub prior_report: bool,
    pub allow_unchecked: bool,
    /// The day claims are judged as of (`None`: the report's date).
    pub as_of: Option<citriage_model::Day>,
}

impl VerifySetup {
    /// Offline, no checkouts, no prior report: what the demo verifies its reports with.
    pub fn offline() -> VerifySetup {
        VerifySetup {
            ctx: RefContext::kubernetes(),
            checkouts: Checkouts::new(),
            api: "https://api.github.com".into(),
            offline: true,
            prior_report: false,
            allow_unchecked: false,
            as_of: None,
        }
    }
}

/// A finished verification: the verifier's answer, the JSON `--format json` prints
/// (and the store records), and the key it was recorded under.
pub struct Checked {
    pub verification: Verification,
    pub json: String,
    pub recorded: Option<String>,
}

impl Checked {
    /// The evidence the verified claims and the findings cite.
    pub fn evidence(&self) -> Vec<Evidence> {
        let mut ev: Vec<Evidence> = self.verification.findings.iter().flat_map(|f| f.evidence.clone()).collect();
        ev.extend(self.verification.claims.iter().flat_map(|c| c.evidence.clone()));
        ev
    }

    /// A check fails when anything is flagged, or could not be checked unless that is allowed.
    pub fn outcome(&self, allow_unchecked: bool) -> Result<()> {
        match self.verification.exit_code(allow_unchecked) {
            0 => Ok(()),
            _ => Err(Error::failed("the report has findings or unchecked claims (see above)")),
        }
    }
}

/// Checks a report's text against GitHub (through the store's cache), the checkouts and
/// the store's builds; records the result in the store when `record`. Gives the store back.
pub fn check_report(
    store: Store,
    text: &str,
    name: &str,
    verified: &Verified<'_>,
    setup: &VerifySetup,
    record: bool,
) -> Result<(Store, Checked)> {
    let store = Rc::new(store);
    let verification = {
        let gh = crate::github::client(store.clone(), &setup.api, setup.offline);
        let builds = StoreBuilds::new(store.clone());
        let opts = VerifyOptions {
            refs: setup.ctx.clone(),
            prior_report: setup.prior_report,
            as_of: setup.as_of,
            ..VerifyOptions::default()
        };
        citriage_verify::verify(text, &Resolvers { refs: &gh, code: &setup.checkouts, builds: &builds }, &opts)
    };
    let mut store = Rc::try_unwrap(store).map_err(|_| Error::failed("the store is still in use"))?;
    let value = citriage_verify::render_json(&verification, name, setup.allow_unchecked);
    let json = format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default());
    let recorded =
        if record { Some(crate::documents::record_verification(&mut store, verified, &json)?) } else { None };
    Ok((store, Checked { verification, json, recorded }))
}

/// What `verify` is asked: the report (a file or a stored document) and how to check it.
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    /// The Markdown report to check; or `stored`.
    pub report: Option<PathBuf>,
    /// A Markdown document recorded in the store: `KIND/KEY`.
    pub stored: Option<String>,
    /// Local checkouts for file:line claims: `name=path[=owner/repo]`.
    pub checkouts: Vec<String>,
    /// A prior report this one follows (allows a Lessons section).
    pub prior: bool,
    /// The repository of bare `#N` refs.
    pub repo: Option<String>,
    /// Answer PR/issue states only from the store's cache.
    pub offline: bool,
    /// Unchecked claims alone do not fail the check.
    pub allow_unchecked: bool,
    pub api: String,
    /// The day claims are judged as of (`YYYY-MM-DD`); default: the report's date.
    pub as_of: Option<String>,
}

impl Default for VerifyRequest {
    fn default() -> Self {
        VerifyRequest {
            report: None,
            stored: None,
            checkouts: Vec::new(),
            prior: false,
            repo: None,
            offline: false,
            allow_unchecked: false,
            api: citriage_github::DEFAULT_API_BASE.to_string(),
            as_of: None,
        }
    }
}

/// A `verify` that ran.
pub struct VerifyOutcome {
    pub checked: Checked,
    /// The name the report was checked under (its path, or `KIND/KEY`).
    pub name: String,
    /// The store the result was recorded in, when there is one.
    pub store: Option<String>,
}

/// `verify`: finds the text (the stored document, or the file, named after a stored
/// document with the same bytes), checks it and records the result in the store. Without
/// a store, the check runs against an empty one in memory and nothing is recorded. The
/// store is the GitHub client's cache while the check runs.
pub fn verify_report(store: Option<Store>, req: &VerifyRequest) -> Result<VerifyOutcome> {
    let record = store.is_some();
    let store = match store {
        Some(s) => s,
        None => Store::open_in_memory()?,
    };
    let (text, name, document) = match (&req.stored, &req.report) {
        (Some(spec), _) => {
            let (kind, key) = split_stored(spec)?;
            let doc = store.document(kind, key, MARKDOWN)?.ok_or_else(|| {
                Error::remedy(
                    format!(
                        "--stored {spec}: no {MARKDOWN} document of kind {kind:?} with key {key:?} in {} (",
                        store.path()
                    ),
                    "reports",
                    " lists them)",
                )
            })?;
            let header = DocumentHeader {
                kind: doc.kind,
                key: doc.key,
                media_type: doc.media_type,
                title: doc.title,
                as_of: doc.as_of,
                bytes: doc.body.len() as u64,
                sha256: sha256_hex(doc.body.as_bytes()),
            };
            (doc.body, spec.clone(), Some(header))
        }
        (None, Some(path)) => {
            let text = crate::files::read_input(path)?;
            let header = if record { find_by_body(&store, text.as_bytes())? } else { None };
            (text, path.display().to_string(), header)
        }
        (None, None) => return Err(Error::input("give a report file or --stored KIND/KEY")),
    };
    let setup = setup(req)?;
    let file_name = req
        .report
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.clone());
    let verified = Verified { document: document.as_ref(), file_name: &file_name, text: &text };
    let (store, checked) = check_report(store, &text, &name, &verified, &setup, record)?;
    Ok(VerifyOutcome { checked, name, store: record.then(|| store.path().to_string()) })
}

/// The checkouts, refs context and GitHub access a request asks for.
fn setup(req: &VerifyRequest) -> Result<VerifySetup> {
    let git = GitProgram::locate().ok();
    let mut checkouts = Checkouts::new();
    for spec in &req.checkouts {
        let s = crate::checkouts::parse_checkout(spec)?;
        let co = Checkout::open(&s.name, &s.path, git.clone())
            .map_err(|e| Error::input(format!("--checkout {spec}: {e}")))?;
        checkouts.add(co, &s.repo, &[]);
    }
    let as_of = match &req.as_of {
        Some(d) => Some(
            citriage_model::Day::parse(d)
                .ok_or_else(|| Error::input(format!("--as-of {d:?}: expected a day as YYYY-MM-DD")))?,
        ),
        None => None,
    };
    Ok(VerifySetup {
        as_of,
        ctx: crate::github::ref_context(req.repo.as_deref())?,
        checkouts,
        api: req.api.clone(),
        offline: req.offline,
        prior_report: req.prior,
        allow_unchecked: req.allow_unchecked,
    })
}

/// Checks a report's text offline (or reading GitHub when `online`), recording
/// nothing: the MCP server's `verify_report`.
pub fn check_text(store: Store, text: &str, name: &str, api: &str, online: bool) -> Result<Checked> {
    let setup = VerifySetup { api: api.to_string(), offline: !online, ..VerifySetup::offline() };
    let verified = Verified { document: None, file_name: name, text };
    let (_, checked) = check_report(store, text, name, &verified, &setup, false)?;
    Ok(checked)
}
