//! Checking a report's claims for `verify` and `demo`: against GitHub (through the
//! store's cache), local checkouts and the builds in the store, with the result
//! recorded in the store's documents.

use crate::context::Failure;
use crate::documents::Verified;
use citriage_github::RefContext;
use citriage_store::Store;
use citriage_verify::rules::{BuildAnswer, BuildUrl, BuildUrlResolver, Resolvers, Verification, VerifyOptions};
use citriage_verify::Checkouts;
use std::rc::Rc;

/// Builds known to the store answer build claims, with their results. A job the store
/// has no build of is a finding only when the store holds builds of the same bucket and
/// tree (`kubernetes-ci-logs/logs`) and no stored dashboard snapshot lists the job:
/// then the job does not exist there; otherwise it was merely not fetched.
pub struct StoreBuilds {
    store: Rc<Store>,
    /// `bucket/tree` of every stored build, read once when first needed.
    areas: std::cell::OnceCell<std::collections::BTreeSet<String>>,
    /// Jobs named in any stored dashboard snapshot (raw names, `pr:` removed).
    listed: std::cell::OnceCell<std::collections::BTreeSet<String>>,
}

impl StoreBuilds {
    pub fn new(store: Rc<Store>) -> StoreBuilds {
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

/// Checks a report's text against GitHub (through the store's cache), the checkouts and
/// the store's builds; records the result in the store when `record`. Gives the store back.
pub fn check_report(
    store: Store,
    text: &str,
    name: &str,
    verified: &Verified<'_>,
    setup: &VerifySetup,
    record: bool,
) -> Result<(Store, Checked), Failure> {
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
    let mut store = Rc::try_unwrap(store).map_err(|_| Failure::other("the store is still in use"))?;
    let value = citriage_verify::render_json(&verification, name, setup.allow_unchecked);
    let json = format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default());
    let recorded =
        if record { Some(crate::documents::record_verification(&mut store, verified, &json)?) } else { None };
    Ok((store, Checked { verification, json, recorded }))
}
