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

/// Builds known to the store answer build-URL claims.
struct StoreBuilds(Rc<Store>);

impl BuildUrlResolver for StoreBuilds {
    fn check(&self, b: &BuildUrl) -> BuildAnswer {
        match self.0.build_known(&b.job, &b.build_id) {
            Ok((true, _)) => BuildAnswer::Known { evidence: None },
            Ok((false, true)) => {
                BuildAnswer::Missing { why: format!("the store has builds of {} but not {}", b.job, b.build_id) }
            }
            Ok((false, false)) => {
                BuildAnswer::Unchecked { why: format!("no build of {} was ingested (run `citriage fetch`)", b.job) }
            }
            Err(e) => BuildAnswer::Unchecked { why: e.to_string() },
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
        let builds = StoreBuilds(store.clone());
        let opts =
            VerifyOptions { refs: setup.ctx.clone(), prior_report: setup.prior_report, ..VerifyOptions::default() };
        citriage_verify::verify(text, &Resolvers { refs: &gh, code: &setup.checkouts, builds: &builds }, &opts)
    };
    let mut store = Rc::try_unwrap(store).map_err(|_| Failure::other("the store is still in use"))?;
    let value = citriage_verify::render_json(&verification, name, setup.allow_unchecked);
    let json = format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default());
    let recorded =
        if record { Some(crate::documents::record_verification(&mut store, verified, &json)?) } else { None };
    Ok((store, Checked { verification, json, recorded }))
}
