//! The `gh sweep` and `verify` commands: GitHub PR/issue state with answers cached in
//! the store (ETags, offline mode), and checking a triage report's claims (a file or
//! a stored document) against GitHub, local checkouts and the builds in the store,
//! with the result recorded in the store's documents.

use crate::cli::{open_store, print_json, Cli, EvidenceArgs, Format, GhArgs, GhWhat, VerifyArgs};
use crate::documents::{find_by_body, split_stored, Verified, MARKDOWN};
use crate::outln;
use crate::pipeline::Failure;
use citriage_github::{
    extract_refs, render_ambiguous, render_sweep_json, render_sweep_markdown, sweep, unique_refs, CachedResponse,
    ClientConfig, GithubClient, HttpCache, IssueRef, RefContext, RepoRef, SweepOptions, Token,
};
use citriage_model::evidence::sha256_hex;
use citriage_store::{CachedHttp, DocumentHeader, Store};
use citriage_verify::rules::{BuildAnswer, BuildUrl, BuildUrlResolver, Resolvers, Verification, VerifyOptions};
use citriage_verify::{Checkout, Checkouts, Git};
use std::rc::Rc;

/// The store as the GitHub client's HTTP cache.
struct StoreCache(Rc<Store>);

impl HttpCache for StoreCache {
    fn get(&self, url: &str) -> Option<CachedResponse> {
        self.0.http_cache_get(url).ok().flatten().map(|c| CachedResponse {
            status: c.status,
            etag: c.etag,
            body: c.body,
            next: c.next,
            fetched_at: c.fetched_at,
        })
    }
    fn put(&self, url: &str, r: CachedResponse) {
        let _ = self.0.http_cache_put(
            url,
            &CachedHttp { status: r.status, etag: r.etag, body: r.body, next: r.next, fetched_at: r.fetched_at },
        );
    }
}

/// Builds known to the store answer build claims, with their results. A job the store
/// has no build of is a finding only when the store holds builds of the same bucket and
/// tree (`kubernetes-ci-logs/logs`) and no stored dashboard snapshot lists the job:
/// then the job does not exist there; otherwise it was merely not fetched.
struct StoreBuilds {
    store: Rc<Store>,
    /// `bucket/tree` of every stored build, read once when first needed.
    areas: std::cell::OnceCell<std::collections::BTreeSet<String>>,
    /// Jobs named in any stored dashboard snapshot (raw names, `pr:` removed).
    listed: std::cell::OnceCell<std::collections::BTreeSet<String>>,
}

impl StoreBuilds {
    fn new(store: Rc<Store>) -> StoreBuilds {
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
                why: format!("{} is on a stored dashboard but none of its builds were fetched (`citriage fetch`)", b.job),
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

fn client(store: Rc<Store>, api: &str, offline: bool) -> GithubClient {
    let token = Token::first_of([std::env::var("GITHUB_TOKEN").ok(), std::env::var("GH_TOKEN").ok()]);
    let cfg =
        ClientConfig { api_base: api.trim_end_matches('/').to_string(), token, offline, ..ClientConfig::default() };
    GithubClient::new(cfg, Box::new(StoreCache(store)))
}

fn context(repo: Option<&str>) -> Result<RefContext, Failure> {
    let mut ctx = RefContext::kubernetes();
    if let Some(r) = repo {
        let rr = RepoRef::parse(r).ok_or_else(|| Failure::input(format!("--repo {r:?}: expected owner/repo")))?;
        ctx = ctx.with_default(rr);
    }
    Ok(ctx)
}

pub(crate) fn gh(cli: &Cli, a: &GhArgs) -> Result<(), Failure> {
    match &a.what {
        GhWhat::Sweep { refs, report, repo, offline, api, no_timelines } => {
            let store = Rc::new(open_store(cli)?);
            let ctx = context(repo.as_deref())?;
            let mut wanted: Vec<IssueRef> = Vec::new();
            for r in refs {
                let parsed = IssueRef::parse(r).or_else(|| {
                    r.strip_prefix('#')
                        .and_then(|n| n.parse::<u64>().ok())
                        .and_then(|n| ctx.default_repo.clone().map(|repo| IssueRef::new(repo, n)))
                });
                wanted.push(parsed.ok_or_else(|| {
                    Failure::input(format!("{r:?}: expected owner/repo#N, a GitHub PR/issue URL, or #N with --repo"))
                })?);
            }
            let mut ambiguous = String::new();
            if let Some(path) = report {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
                let found = extract_refs(&text, &ctx);
                wanted.extend(unique_refs(&found));
                ambiguous = render_ambiguous(&found);
            }
            if wanted.is_empty() {
                return Err(Failure::input("no refs to check: give refs or --report FILE"));
            }
            let c = client(store.clone(), api, *offline);
            let rows = sweep(&c, &wanted, SweepOptions { walk_timelines: !no_timelines });
            // What was read goes into the evidence ledger.
            let items: Vec<citriage_model::Evidence> =
                wanted.iter().filter_map(|r| citriage_github::RefResolver::resolve(&c, r).evidence()).collect();
            let now = c.now();
            drop(c);
            if let Ok(mut st) = Rc::try_unwrap(store) {
                st.record_evidence(&items, &crate::pipeline::now_rfc3339())?;
            }
            if cli.format == Format::Json {
                print_json(&render_sweep_json(&rows, now));
            } else {
                outln!("{}", render_sweep_markdown(&rows, now));
                if !ambiguous.is_empty() {
                    outln!("Not checked (ambiguous):\n{ambiguous}");
                }
            }
            Ok(())
        }
    }
}

/// How reports are checked: repository context, checkouts and GitHub access.
pub(crate) struct VerifySetup {
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
    pub(crate) fn offline() -> VerifySetup {
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
pub(crate) struct Checked {
    pub verification: Verification,
    pub json: String,
    pub recorded: Option<String>,
}

/// Checks a report's text against GitHub (through the store's cache), the checkouts and
/// the store's builds; records the result in the store when `record`. Gives the store back.
pub(crate) fn check_report(
    store: Store,
    text: &str,
    name: &str,
    verified: &Verified<'_>,
    setup: &VerifySetup,
    record: bool,
) -> Result<(Store, Checked), Failure> {
    let store = Rc::new(store);
    let verification = {
        let gh = client(store.clone(), &setup.api, setup.offline);
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

pub(crate) fn verify(cli: &Cli, a: &VerifyArgs) -> Result<i32, Failure> {
    let db = cli.db.clone().unwrap_or_else(citriage_store::default_path);
    // Results are recorded only in a store that exists; without one, the check runs
    // against an empty in-memory store and nothing is written.
    let exists = db.exists();
    let store = if exists {
        Store::open(&db)?
    } else if a.stored.is_some() {
        return Err(Failure::input(format!(
            "{}: no store there, so no stored document to verify (pass --db FILE)",
            db.display()
        )));
    } else {
        Store::open_in_memory()?
    };
    let (text, name, document) = match (&a.stored, &a.report) {
        (Some(spec), _) => {
            let (kind, key) = split_stored(spec)?;
            let doc = store.document(kind, key, MARKDOWN)?.ok_or_else(|| {
                Failure::input(format!(
                    "--stored {spec}: no {MARKDOWN} document of kind {kind:?} with key {key:?} in {} (`citriage reports` lists them)",
                    store.path()
                ))
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
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
            let header = if exists { find_by_body(&store, text.as_bytes())? } else { None };
            (text, path.display().to_string(), header)
        }
        (None, None) => return Err(Failure::input("give a report file or --stored KIND/KEY")),
    };
    let git = Git::locate().ok();
    let mut checkouts = Checkouts::new();
    for spec in &a.checkouts {
        let mut parts = spec.splitn(3, '=');
        let (Some(co_name), Some(path)) = (parts.next(), parts.next()) else {
            return Err(Failure::input(format!("--checkout {spec:?}: expected name=path[=owner/repo]")));
        };
        let repo = parts.next().unwrap_or(co_name);
        let co = Checkout::open(co_name, path, git.clone())
            .map_err(|e| Failure::input(format!("--checkout {spec}: {e}")))?;
        checkouts.add(co, repo, &[]);
    }
    let as_of = match &a.as_of {
        Some(d) => Some(
            citriage_model::Day::parse(d)
                .ok_or_else(|| Failure::input(format!("--as-of {d:?}: expected a day as YYYY-MM-DD")))?,
        ),
        None => None,
    };
    let setup = VerifySetup {
        as_of,
        ctx: context(a.repo.as_deref())?,
        checkouts,
        api: a.api.clone(),
        offline: a.offline,
        prior_report: a.prior.is_some(),
        allow_unchecked: a.allow_unchecked,
    };
    let file_name = a
        .report
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.clone());
    let verified = Verified { document: document.as_ref(), file_name: &file_name, text: &text };
    let (store, checked) = check_report(store, &text, &name, &verified, &setup, exists)?;
    if cli.format == Format::Json {
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(checked.json.as_bytes());
    } else {
        outln!("{}", citriage_verify::render_markdown(&checked.verification, &name));
    }
    match &checked.recorded {
        Some(key) if !cli.quiet => eprintln!("recorded as verify {key} in {}", store.path()),
        Some(_) => {}
        None => eprintln!("note: no store at {}: the result is not recorded", db.display()),
    }
    Ok(checked.verification.exit_code(a.allow_unchecked))
}

pub(crate) fn evidence(cli: &Cli, a: &EvidenceArgs) -> Result<(), Failure> {
    let store = open_store(cli)?;
    let mut found = Vec::new();
    for id in &a.ids {
        match store.evidence(id)? {
            Some(e) => found.push(e),
            None => return Err(Failure::input(format!("{id}: not in the evidence ledger of {}", store.path()))),
        }
    }
    if let Some(p) = &a.locator {
        found.extend(store.evidence_by_locator(p)?);
    }
    if a.ids.is_empty() && a.locator.is_none() {
        return Err(Failure::input("give evidence ids or --locator PREFIX"));
    }
    if cli.format == Format::Json {
        print_json(&serde_json::to_value(&found).unwrap_or_default());
        return Ok(());
    }
    for e in &found {
        let ev = &e.evidence;
        outln!("{}  {:?}  read {}  (describes {})", ev.id, ev.kind, e.read_at, ev.as_of);
        outln!("  at:   {}", ev.locator);
        outln!("  says: {}", ev.excerpt);
        if !ev.source_sha256.is_empty() {
            outln!("  source sha256: {}", ev.source_sha256);
        }
    }
    Ok(())
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LinksFile {
    #[serde(default)]
    link: Vec<LinkEntry>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkEntry {
    #[serde(rename = "ref")]
    reference: String,
    matches: String,
    #[serde(default)]
    note: String,
}

/// Reads a links file and each PR's state (through the store's cache).
pub(crate) fn read_links(
    path: &std::path::Path,
    store: Rc<Store>,
    api: &str,
    offline: bool,
) -> Result<Vec<citriage_analysis::links::PrLink>, Failure> {
    use citriage_analysis::links::{LinkState, PrLink};
    use citriage_github::{PrStatus, RefResolver, RefState};
    let text =
        std::fs::read_to_string(path).map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    let file: LinksFile = toml::from_str(&text).map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let gh = client(store, api, offline);
    let mut out = Vec::new();
    for (i, l) in file.link.into_iter().enumerate() {
        let r = IssueRef::parse(&l.reference).ok_or_else(|| {
            Failure::input(format!("{}: link #{}: {:?} is not owner/repo#N", path.display(), i + 1, l.reference))
        })?;
        regex::RegexBuilder::new(&l.matches).size_limit(1 << 20).build().map_err(|e| {
            Failure::input(format!("{}: link #{}: bad regex {:?}: {e}", path.display(), i + 1, l.matches))
        })?;
        let state = gh.resolve(&r);
        let evidence = state.evidence();
        let (title, st) = match &state {
            RefState::Pr(p) => (
                p.title.clone(),
                match &p.status {
                    PrStatus::Merged { at } => match at.get(0..10).and_then(citriage_model::Day::parse) {
                        Some(d) => LinkState::Merged { at: d },
                        None => LinkState::Unknown { why: format!("merged at an unreadable time {at:?}") },
                    },
                    PrStatus::Open { draft, blocking_labels, .. } => {
                        LinkState::Open { draft: *draft, blocking: blocking_labels.clone() }
                    }
                    PrStatus::ClosedUnmerged { .. } => LinkState::ClosedUnmerged,
                    PrStatus::NotFound => LinkState::Unknown { why: "GitHub answered 404".into() },
                    PrStatus::Unknown { why } => LinkState::Unknown { why: why.clone() },
                },
            ),
            RefState::Issue(i) => (i.title.clone(), LinkState::Unknown { why: "an issue, not a pull request".into() }),
            RefState::NotFound { .. } => (String::new(), LinkState::Unknown { why: "GitHub answered 404".into() }),
            RefState::Unknown { why, .. } => (String::new(), LinkState::Unknown { why: why.clone() }),
        };
        out.push(PrLink {
            url: format!("https://github.com/{}/{}/pull/{}", r.repo.owner, r.repo.name, r.number),
            reference: l.reference,
            title,
            matches: l.matches,
            note: l.note,
            state: st,
            evidence,
        });
    }
    Ok(out)
}
