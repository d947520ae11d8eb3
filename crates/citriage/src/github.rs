//! GitHub for the commands: the client with the store as its HTTP cache (ETags,
//! offline answers), the repository context of refs, and the fix-PR links file
//! `triage --links` reads.

use crate::context::Failure;
use citriage_github::{CachedResponse, ClientConfig, GithubClient, HttpCache, IssueRef, RefContext, RepoRef, Token};
use citriage_store::{CachedHttp, Store};
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
    fn get_by_suffix(&self, suffix: &str) -> Option<(String, CachedResponse)> {
        self.0.http_cache_get_by_suffix(suffix).ok().flatten().map(|(url, c)| {
            (
                url,
                CachedResponse { status: c.status, etag: c.etag, body: c.body, next: c.next, fetched_at: c.fetched_at },
            )
        })
    }
    fn put(&self, url: &str, r: CachedResponse) {
        let _ = self.0.http_cache_put(
            url,
            &CachedHttp { status: r.status, etag: r.etag, body: r.body, next: r.next, fetched_at: r.fetched_at },
        );
    }
}

/// The environment variables a GitHub token is read from, in order.
pub const TOKEN_VARS: &[&str] = &["GITHUB_TOKEN", "GH_TOKEN"];

/// A GitHub client for the API base, with the store as its HTTP cache; the token comes
/// from `GITHUB_TOKEN` or `GH_TOKEN` (never printed).
pub fn client(store: Rc<Store>, api: &str, offline: bool) -> GithubClient {
    let token = Token::from_env(TOKEN_VARS);
    let cfg =
        ClientConfig { api_base: api.trim_end_matches('/').to_string(), token, offline, ..ClientConfig::default() };
    GithubClient::new(cfg, Box::new(StoreCache(store)))
}

/// [`client`] whose waiting is bounded by `total` in all: each request, each
/// rate-limit or `Retry-After` wait (a longer one fails at once) and all of them
/// together.
pub fn client_bounded(store: Rc<Store>, api: &str, offline: bool, total: std::time::Duration) -> GithubClient {
    let cfg = ClientConfig {
        api_base: api.trim_end_matches('/').to_string(),
        token: Token::from_env(TOKEN_VARS),
        offline,
        timeout: total,
        max_wait: total.min(std::time::Duration::from_secs(120)),
        retry_budget: citriage_sources::http::RetryBudget::with_deadline(total),
        ..ClientConfig::default()
    };
    GithubClient::new(cfg, Box::new(StoreCache(store)))
}

/// The repository context of refs: Kubernetes' repositories, with `--repo` as the
/// repository of bare `#N` refs.
pub fn ref_context(repo: Option<&str>) -> Result<RefContext, Failure> {
    let mut ctx = RefContext::kubernetes();
    if let Some(r) = repo {
        let rr = RepoRef::parse(r).ok_or_else(|| Failure::input(format!("--repo {r:?}: expected owner/repo")))?;
        ctx = ctx.with_default(rr);
    }
    Ok(ctx)
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
pub fn read_links(
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
