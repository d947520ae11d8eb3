//! The GitHub client as every use case sets it up: the store as its HTTP cache (ETags,
//! offline answers), the token from the environment, and the repository context of
//! refs.

use crate::error::{Error, Result};
use citriage_github::{CachedResponse, ClientConfig, GithubClient, HttpCache, RefContext, RepoRef, Token};
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
pub fn ref_context(repo: Option<&str>) -> Result<RefContext> {
    let mut ctx = RefContext::kubernetes();
    if let Some(r) = repo {
        let rr = RepoRef::parse(r).ok_or_else(|| Error::input(format!("--repo {r:?}: expected owner/repo")))?;
        ctx = ctx.with_default(rr);
    }
    Ok(ctx)
}
