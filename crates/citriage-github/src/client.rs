//! The GitHub REST client: a blocking `ureq` agent with a configurable API base, an
//! optional token (redacted everywhere), conditional requests with ETags through an
//! [`HttpCache`], `Link: rel="next"` pagination, primary and secondary rate-limit
//! handling, and an offline mode that answers only from the cache and says how old
//! each answer is. Typed lookups (pull requests, issues, timelines, search, commits)
//! sit on top of one `fetch`.

use crate::state::Answered;
use crate::state::{
    decode_commit, decode_events, decode_issue, decode_pull, decode_search_items, decode_timeline, github_locator,
    pr_from_issue, BlockingPolicy, CommitInfo, CrossRef, IssueRef, IssueState, IssueStatus, PrState, PrStatus,
    ReadInfo, RefResolver, RefState, RepoRef, SearchResult, TimelineEvent,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

/// The public GitHub API.
pub const DEFAULT_API_BASE: &str = "https://api.github.com";

/// An API token. It is sent only in the `Authorization` header to the configured API
/// base; `Debug` prints `Token(redacted)` and there is no `Display` or `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A token from a string (as the CLI reads `GITHUB_TOKEN` / `GH_TOKEN`). `None` when
    /// empty or when it holds characters a header cannot carry.
    pub fn new(s: impl Into<String>) -> Option<Token> {
        let s = s.into().trim().to_string();
        if s.is_empty() || !s.bytes().all(|b| (0x21..0x7f).contains(&b)) {
            return None;
        }
        Some(Token(s))
    }

    /// The first usable token among candidates in order (`GITHUB_TOKEN`, then `GH_TOKEN`).
    pub fn first_of<I: IntoIterator<Item = Option<String>>>(candidates: I) -> Option<Token> {
        candidates.into_iter().flatten().find_map(Token::new)
    }

    fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(redacted)")
    }
}

/// One stored HTTP answer. 404s are stored too, so offline mode can say "not found".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedResponse {
    /// 200 or 404.
    pub status: u16,
    pub etag: Option<String>,
    pub body: Vec<u8>,
    /// The `Link: rel="next"` URL of a paginated answer.
    pub next: Option<String>,
    /// Unix seconds when the answer was last confirmed (downloaded or revalidated).
    pub fetched_at: i64,
}

/// Where answers are kept between runs. The CLI implements it over the SQLite store;
/// [`MemoryCache`] serves tests and single runs.
pub trait HttpCache {
    /// The stored answer for a URL.
    fn get(&self, url: &str) -> Option<CachedResponse>;
    /// Stores (replaces) the answer for a URL.
    fn put(&self, url: &str, resp: CachedResponse);
}

impl<C: HttpCache + ?Sized> HttpCache for std::sync::Arc<C> {
    fn get(&self, url: &str) -> Option<CachedResponse> {
        (**self).get(url)
    }
    fn put(&self, url: &str, resp: CachedResponse) {
        (**self).put(url, resp)
    }
}

impl<C: HttpCache + ?Sized> HttpCache for std::rc::Rc<C> {
    fn get(&self, url: &str) -> Option<CachedResponse> {
        (**self).get(url)
    }
    fn put(&self, url: &str, resp: CachedResponse) {
        (**self).put(url, resp)
    }
}

/// An in-memory cache.
#[derive(Debug, Default)]
pub struct MemoryCache {
    map: Mutex<BTreeMap<String, CachedResponse>>,
}

impl MemoryCache {
    /// An empty cache.
    pub fn new() -> MemoryCache {
        MemoryCache::default()
    }

    /// The cached URLs, sorted.
    pub fn urls(&self) -> Vec<String> {
        self.map.lock().map(|m| m.keys().cloned().collect()).unwrap_or_default()
    }

    /// Number of cached answers.
    pub fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl HttpCache for MemoryCache {
    fn get(&self, url: &str) -> Option<CachedResponse> {
        self.map.lock().ok()?.get(url).cloned()
    }
    fn put(&self, url: &str, resp: CachedResponse) {
        if let Ok(mut m) = self.map.lock() {
            m.insert(url.to_string(), resp);
        }
    }
}

/// A cache that stores nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCache;

impl HttpCache for NoCache {
    fn get(&self, _url: &str) -> Option<CachedResponse> {
        None
    }
    fn put(&self, _url: &str, _resp: CachedResponse) {}
}

/// Client settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// API base URL without a trailing slash (`https://api.github.com`).
    pub api_base: String,
    pub token: Option<Token>,
    /// Answer only from the cache; never contact GitHub.
    pub offline: bool,
    /// Per-request timeout.
    pub timeout: Duration,
    /// The longest rate-limit wait accepted; longer waits fail with a clear error.
    pub max_wait: Duration,
    /// Retries after a secondary limit, a primary-limit reset, a 5xx or a transport error.
    pub max_retries: u32,
    /// Pages followed per paginated request.
    pub max_pages: usize,
    /// Largest response body accepted.
    pub max_body_bytes: u64,
    pub user_agent: String,
    /// What counts as blocking an open pull request.
    pub policy: BlockingPolicy,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            api_base: DEFAULT_API_BASE.to_string(),
            token: None,
            offline: false,
            timeout: Duration::from_secs(30),
            max_wait: Duration::from_secs(120),
            max_retries: 3,
            max_pages: 20,
            max_body_bytes: 20 * 1024 * 1024,
            user_agent: concat!("citriage/", env!("CARGO_PKG_VERSION")).to_string(),
            policy: BlockingPolicy::default(),
        }
    }
}

/// Why a request failed. No variant ever holds the token.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GithubError {
    #[error("{url}: transport error: {detail}")]
    Transport { url: String, detail: String },
    #[error("{url}: HTTP {status}: {message}")]
    Status { url: String, status: u16, message: String },
    #[error("{url}: {kind} rate limit: GitHub asks to wait {wait_secs}s, longer than the {limit_secs}s allowed (raise the wait limit or retry later)")]
    RateLimited { url: String, kind: &'static str, wait_secs: u64, limit_secs: u64 },
    #[error("{url}: {kind} rate limit still in force after {retries} retries")]
    RetriesExhausted { url: String, kind: &'static str, retries: u32 },
    #[error("{url}: undecodable answer: {detail}")]
    Decode { url: String, detail: String },
    #[error("{url}: offline and not in the cache")]
    NotCached { url: String },
    #[error("{url}: refusing to follow a link outside the API base: {link}")]
    ForeignUrl { url: String, link: String },
}

/// Request counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClientStats {
    /// HTTP requests sent.
    pub requests: u64,
    /// Answers downloaded with a body (200/404).
    pub downloads: u64,
    /// 304 answers (served from the cache, not counted against the primary limit).
    pub not_modified: u64,
    /// Answers served from the cache without a request (offline mode).
    pub cache_answers: u64,
    /// Retries after rate limits, 5xx or transport errors.
    pub retries: u64,
    /// Seconds spent waiting for rate limits.
    pub waited_secs: u64,
}

/// One answer of [`GithubClient::fetch`].
#[derive(Debug, Clone)]
pub struct Fetched {
    pub url: String,
    /// 200 or 404.
    pub status: u16,
    pub body: Vec<u8>,
    pub next: Option<String>,
    pub read: ReadInfo,
}

impl Fetched {
    fn json(&self) -> Result<Value, GithubError> {
        serde_json::from_slice(&self.body)
            .map_err(|e| GithubError::Decode { url: self.url.clone(), detail: e.to_string() })
    }
}

/// Filters of [`GithubClient::commits`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitQuery {
    /// Branch or SHA to start from.
    pub sha: Option<String>,
    /// Only commits touching this path.
    pub path: Option<String>,
    pub author: Option<String>,
    /// ISO 8601 bounds.
    pub since: Option<String>,
    pub until: Option<String>,
    /// Most commits returned.
    pub max: usize,
}

struct Inner {
    blocked_until: Option<i64>,
    stats: ClientStats,
}

type Clock = Box<dyn Fn() -> i64>;
type Sleeper = Box<dyn Fn(Duration)>;

/// The client. Methods take `&self`; counters and the rate-limit state are internal.
pub struct GithubClient {
    cfg: ClientConfig,
    agent: ureq::Agent,
    cache: Box<dyn HttpCache>,
    clock: Clock,
    sleeper: Sleeper,
    inner: Mutex<Inner>,
}

impl fmt::Debug for GithubClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GithubClient")
            .field("api_base", &self.cfg.api_base)
            .field("token", &self.cfg.token.as_ref().map(|_| "redacted"))
            .field("offline", &self.cfg.offline)
            .finish()
    }
}

const OFFLINE_WHY: &str = "offline: no cached answer";

impl GithubClient {
    /// A client with the given settings and cache, the system clock and real sleeps.
    pub fn new(mut cfg: ClientConfig, cache: Box<dyn HttpCache>) -> GithubClient {
        cfg.api_base = cfg.api_base.trim_end_matches('/').to_string();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(cfg.timeout))
            .http_status_as_error(false)
            .user_agent(cfg.user_agent.as_str())
            .build()
            .into();
        GithubClient {
            cfg,
            agent,
            cache,
            clock: Box::new(crate::time::system_now),
            sleeper: Box::new(std::thread::sleep),
            inner: Mutex::new(Inner { blocked_until: None, stats: ClientStats::default() }),
        }
    }

    /// Replaces the clock (Unix seconds).
    pub fn with_clock(mut self, clock: impl Fn() -> i64 + 'static) -> GithubClient {
        self.clock = Box::new(clock);
        self
    }

    /// Replaces how the client waits (tests record waits instead of sleeping).
    pub fn with_sleeper(mut self, sleeper: impl Fn(Duration) + 'static) -> GithubClient {
        self.sleeper = Box::new(sleeper);
        self
    }

    /// The settings.
    pub fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    /// The counters so far.
    pub fn stats(&self) -> ClientStats {
        self.inner.lock().map(|i| i.stats).unwrap_or_default()
    }

    /// The client's clock.
    pub fn now(&self) -> i64 {
        (self.clock)()
    }

    fn bump(&self, f: impl FnOnce(&mut ClientStats)) {
        if let Ok(mut i) = self.inner.lock() {
            f(&mut i.stats);
        }
    }

    /// A full URL for an API path (`/repos/...`); full URLs must be under the API base.
    pub fn url_for(&self, path_or_url: &str) -> Result<String, GithubError> {
        if path_or_url.starts_with("http://") || path_or_url.starts_with("https://") {
            if path_or_url.starts_with(&format!("{}/", self.cfg.api_base)) {
                Ok(path_or_url.to_string())
            } else {
                Err(GithubError::ForeignUrl { url: self.cfg.api_base.clone(), link: path_or_url.to_string() })
            }
        } else {
            Ok(format!("{}/{}", self.cfg.api_base, path_or_url.trim_start_matches('/')))
        }
    }

    /// Removes the token from a text that came back from the server, should it echo it.
    fn scrub(&self, s: &str) -> String {
        match &self.cfg.token {
            Some(t) if s.contains(t.secret()) => s.replace(t.secret(), "[redacted]"),
            _ => s.to_string(),
        }
    }

    fn wait(&self, url: &str, kind: &'static str, secs: u64) -> Result<(), GithubError> {
        if Duration::from_secs(secs) > self.cfg.max_wait {
            return Err(GithubError::RateLimited {
                url: url.to_string(),
                kind,
                wait_secs: secs,
                limit_secs: self.cfg.max_wait.as_secs(),
            });
        }
        (self.sleeper)(Duration::from_secs(secs));
        self.bump(|s| s.waited_secs += secs);
        Ok(())
    }

    /// GET one URL (or API path): from the cache when offline; otherwise with
    /// `If-None-Match` when a cached ETag exists (a 304 answers from the cache),
    /// waiting out rate limits within the configured bounds. 200 and 404 are answers;
    /// everything else is an error.
    pub fn fetch(&self, path_or_url: &str) -> Result<Fetched, GithubError> {
        let url = self.url_for(path_or_url)?;
        let cached = self.cache.get(&url);
        if self.cfg.offline {
            return match cached {
                Some(c) => {
                    self.bump(|s| s.cache_answers += 1);
                    Ok(Fetched {
                        read: ReadInfo {
                            read_at: Some(c.fetched_at),
                            answered: Answered::Cache,
                            api_url: url.clone(),
                            body_sha256: citriage_model::evidence::sha256_hex(&c.body),
                        },
                        url,
                        status: c.status,
                        body: c.body,
                        next: c.next,
                    })
                }
                None => Err(GithubError::NotCached { url }),
            };
        }
        let mut retries = 0u32;
        loop {
            // A primary limit seen on an earlier answer: wait for its reset first.
            let blocked = self.inner.lock().ok().and_then(|i| i.blocked_until);
            if let Some(until) = blocked {
                let now = self.now();
                if until >= now {
                    self.wait(&url, "primary", (until - now + 1) as u64)?;
                }
                if let Ok(mut i) = self.inner.lock() {
                    i.blocked_until = None;
                }
            }
            let mut req = self
                .agent
                .get(&url)
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28");
            if let Some(t) = &self.cfg.token {
                req = req.header("Authorization", format!("Bearer {}", t.secret()));
            }
            let conditional = cached.as_ref().filter(|c| c.status == 200).and_then(|c| c.etag.clone());
            if let Some(etag) = &conditional {
                req = req.header("If-None-Match", etag.as_str());
            }
            self.bump(|s| s.requests += 1);
            let mut resp = match req.call() {
                Ok(r) => r,
                Err(e) => {
                    let detail = self.scrub(&e.to_string());
                    if retries < self.cfg.max_retries {
                        retries += 1;
                        self.bump(|s| s.retries += 1);
                        (self.sleeper)(Duration::from_secs(u64::from(retries)));
                        continue;
                    }
                    return Err(GithubError::Transport { url, detail });
                }
            };
            let status = resp.status().as_u16();
            let header =
                |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(|v| v.trim().to_string());
            let remaining: Option<u64> = header("x-ratelimit-remaining").and_then(|v| v.parse().ok());
            let reset: Option<i64> = header("x-ratelimit-reset").and_then(|v| v.parse().ok());
            let retry_after: Option<u64> = header("retry-after").and_then(|v| v.parse().ok());
            let etag = header("etag");
            let next = header("link").and_then(|l| next_link(&l));
            let now = self.now();
            if remaining == Some(0) {
                if let (Some(r), Ok(mut i)) = (reset, self.inner.lock()) {
                    i.blocked_until = Some(r);
                }
            }
            match status {
                200 | 404 | 410 => {
                    let body =
                        resp.body_mut().with_config().limit(self.cfg.max_body_bytes).read_to_vec().map_err(|e| {
                            GithubError::Transport { url: url.clone(), detail: self.scrub(&e.to_string()) }
                        })?;
                    let status = if status == 200 { 200 } else { 404 };
                    if let Some(n) = &next {
                        if !n.starts_with(&format!("{}/", self.cfg.api_base)) {
                            return Err(GithubError::ForeignUrl { url, link: n.clone() });
                        }
                    }
                    self.bump(|s| s.downloads += 1);
                    let etag = if status == 200 { etag } else { None };
                    self.cache.put(
                        &url,
                        CachedResponse { status, etag, body: body.clone(), next: next.clone(), fetched_at: now },
                    );
                    return Ok(Fetched {
                        read: ReadInfo {
                            read_at: Some(now),
                            answered: Answered::Live,
                            api_url: url.clone(),
                            body_sha256: citriage_model::evidence::sha256_hex(&body),
                        },
                        url,
                        status,
                        body,
                        next,
                    });
                }
                304 => {
                    let Some(mut c) = cached.clone().filter(|_| conditional.is_some()) else {
                        return Err(GithubError::Status {
                            url,
                            status,
                            message: "304 Not Modified without a cached answer".into(),
                        });
                    };
                    self.bump(|s| s.not_modified += 1);
                    c.fetched_at = now;
                    if let Some(e) = etag {
                        c.etag = Some(e);
                    }
                    self.cache.put(&url, c.clone());
                    return Ok(Fetched {
                        read: ReadInfo {
                            read_at: Some(now),
                            answered: Answered::Revalidated,
                            api_url: url.clone(),
                            body_sha256: citriage_model::evidence::sha256_hex(&c.body),
                        },
                        url,
                        status: c.status,
                        body: c.body,
                        next: c.next,
                    });
                }
                403 | 429 => {
                    let body = resp.body_mut().with_config().limit(64 * 1024).read_to_vec().unwrap_or_default();
                    let message = self.scrub(&api_message(&body));
                    if let Some(secs) = retry_after {
                        if retries >= self.cfg.max_retries {
                            return Err(GithubError::RetriesExhausted { url, kind: "secondary", retries });
                        }
                        retries += 1;
                        self.bump(|s| s.retries += 1);
                        self.wait(&url, "secondary", secs.max(1))?;
                        if let Ok(mut i) = self.inner.lock() {
                            i.blocked_until = None;
                        }
                        continue;
                    }
                    if remaining == Some(0) {
                        if retries >= self.cfg.max_retries {
                            return Err(GithubError::RetriesExhausted { url, kind: "primary", retries });
                        }
                        retries += 1;
                        self.bump(|s| s.retries += 1);
                        let wait = reset.map(|r| (r - now + 1).max(1) as u64).unwrap_or(60);
                        self.wait(&url, "primary", wait)?;
                        if let Ok(mut i) = self.inner.lock() {
                            i.blocked_until = None;
                        }
                        continue;
                    }
                    // A secondary limit without `retry-after`: wait at least a minute.
                    if status == 429 || message.to_ascii_lowercase().contains("secondary rate limit") {
                        if retries >= self.cfg.max_retries {
                            return Err(GithubError::RetriesExhausted { url, kind: "secondary", retries });
                        }
                        retries += 1;
                        self.bump(|s| s.retries += 1);
                        self.wait(&url, "secondary", 60)?;
                        continue;
                    }
                    return Err(GithubError::Status { url, status, message });
                }
                500..=599 if retries < self.cfg.max_retries => {
                    retries += 1;
                    self.bump(|s| s.retries += 1);
                    (self.sleeper)(Duration::from_secs(u64::from(retries)));
                    continue;
                }
                _ => {
                    let body = resp.body_mut().with_config().limit(64 * 1024).read_to_vec().unwrap_or_default();
                    return Err(GithubError::Status { url, status, message: self.scrub(&api_message(&body)) });
                }
            }
        }
    }

    /// Follows `rel="next"` links from a first page, collecting the array each page
    /// holds (`extract`), up to `max_items` items and the configured page limit. The
    /// read info is the oldest page's. A 404 first page is an error with status 404.
    pub fn fetch_pages(
        &self,
        first: &str,
        max_items: usize,
        extract: impl Fn(&Value) -> Vec<Value>,
    ) -> Result<(Vec<Value>, ReadInfo, Value), GithubError> {
        let mut url = self.url_for(first)?;
        let mut items = Vec::new();
        let mut read: Option<ReadInfo> = None;
        let mut hashes = String::new();
        let mut first_page = Value::Null;
        for page in 0..self.cfg.max_pages.max(1) {
            let f = self.fetch(&url)?;
            if f.status == 404 {
                return Err(GithubError::Status { url: f.url, status: 404, message: api_message(&f.body) });
            }
            let v = f.json()?;
            items.extend(extract(&v));
            if page == 0 {
                first_page = v;
            }
            hashes.push_str(&f.read.body_sha256);
            read = Some(match read {
                None => f.read.clone(),
                Some(r) => ReadInfo {
                    read_at: match (r.read_at, f.read.read_at) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    },
                    answered: r.answered.max(f.read.answered),
                    api_url: r.api_url,
                    body_sha256: String::new(),
                },
            });
            if items.len() >= max_items {
                items.truncate(max_items);
                break;
            }
            match f.next {
                Some(n) => url = n,
                None => break,
            }
        }
        let mut read = read.unwrap_or_else(|| ReadInfo::none(first));
        read.body_sha256 = citriage_model::evidence::sha256_hex(hashes.as_bytes());
        Ok((items, read, first_page))
    }

    /// Sends one request of an action (`GET`, `POST` or `PATCH`, with an optional JSON
    /// body) and returns its JSON answer (`null` for an empty one). For writes: never
    /// retried (a retried write could be applied twice), never cached, refused offline
    /// and without a token. A status outside 2xx is an error naming it and GitHub's
    /// message.
    pub fn send_json(&self, method: &str, path_or_url: &str, body: Option<&Value>) -> Result<Value, GithubError> {
        let url = self.url_for(path_or_url)?;
        let refuse = |message: &str| GithubError::Status { url: url.clone(), status: 0, message: message.into() };
        if self.cfg.offline {
            return Err(refuse("offline: nothing is sent"));
        }
        let Some(token) = &self.cfg.token else {
            return Err(refuse("no token: set GITHUB_TOKEN (or GH_TOKEN)"));
        };
        let auth = format!("Bearer {}", token.secret());
        let json = body.map(|b| b.to_string());
        self.bump(|s| s.requests += 1);
        let sent = match (method, json) {
            ("GET", None) => self
                .agent
                .get(&url)
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28")
                .header("Authorization", auth.as_str())
                .call(),
            ("POST" | "PATCH", json) => {
                let b = if method == "POST" { self.agent.post(&url) } else { self.agent.patch(&url) };
                b.header("Accept", "application/vnd.github+json")
                    .header("X-GitHub-Api-Version", "2022-11-28")
                    .header("Authorization", auth.as_str())
                    .header("Content-Type", "application/json")
                    .send(json.unwrap_or_default())
            }
            _ => return Err(refuse(&format!("{method} with this body is not a request citriage sends"))),
        };
        let mut resp = sent.map_err(|e| GithubError::Transport { url: url.clone(), detail: self.scrub(&e.to_string()) })?;
        let status = resp.status().as_u16();
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(self.cfg.max_body_bytes)
            .read_to_vec()
            .map_err(|e| GithubError::Transport { url: url.clone(), detail: self.scrub(&e.to_string()) })?;
        if !(200..300).contains(&status) {
            let message = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|v| v["message"].as_str().map(String::from))
                .unwrap_or_else(|| String::from_utf8_lossy(&bytes).chars().take(300).collect());
            return Err(GithubError::Status { url, status, message: self.scrub(&message) });
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&bytes).map_err(|e| GithubError::Decode { url, detail: e.to_string() })
    }

    /// `GET /repos/{o}/{r}/pulls/{n}`. 404 is `NotFound`; offline without a cached
    /// answer is `Unknown`.
    pub fn pull(&self, r: &IssueRef) -> Result<PrState, GithubError> {
        let path = format!("/repos/{}/{}/pulls/{}", r.repo.owner, r.repo.name, r.number);
        match self.fetch(&path) {
            Ok(f) if f.status == 404 => {
                Ok(PrState { status: PrStatus::NotFound, read: f.read, ..PrState::unknown(r.clone(), "", f.url) })
            }
            Ok(f) => {
                let v = f.json()?;
                Ok(decode_pull(r, &v, f.read, &self.cfg.policy))
            }
            Err(GithubError::NotCached { url }) => Ok(PrState::unknown(r.clone(), OFFLINE_WHY, url)),
            Err(e) => Err(e),
        }
    }

    /// `GET /repos/{o}/{r}/issues/{n}` (pull requests answer here too, with a
    /// `pull_request` key).
    pub fn issue(&self, r: &IssueRef) -> Result<IssueState, GithubError> {
        let path = format!("/repos/{}/{}/issues/{}", r.repo.owner, r.repo.name, r.number);
        let unknown = |why: String, url: String| IssueState {
            reference: r.clone(),
            is_pr: false,
            status: IssueStatus::Unknown { why },
            title: String::new(),
            labels: Vec::new(),
            url: r.html_url(),
            pr_merged_at: None,
            pr_draft: None,
            created_at: None,
            updated_at: None,
            read: ReadInfo::none(url),
        };
        match self.fetch(&path) {
            Ok(f) if f.status == 404 => {
                let mut s = unknown(String::new(), f.url.clone());
                s.status = IssueStatus::NotFound;
                s.read = f.read;
                Ok(s)
            }
            Ok(f) => {
                let v = f.json()?;
                Ok(decode_issue(r, &v, f.read))
            }
            Err(GithubError::NotCached { url }) => Ok(unknown(OFFLINE_WHY.into(), url)),
            Err(e) => Err(e),
        }
    }

    /// What a reference is and its state: the issues endpoint first (one request for
    /// issues and closed PRs), then the pulls endpoint for open PRs (mergeability) or
    /// when the merge time is not in the issue answer. Never fails: errors and offline
    /// misses become `Unknown` with the reason.
    pub fn lookup(&self, r: &IssueRef) -> RefState {
        let issue = match self.issue(r) {
            Ok(i) => i,
            Err(e) => return RefState::Unknown { reference: r.clone(), why: e.to_string() },
        };
        match &issue.status {
            IssueStatus::NotFound => return RefState::NotFound { reference: r.clone(), read: issue.read },
            IssueStatus::Unknown { .. } => {
                // Offline: an earlier run may have cached the pulls answer only.
                return match self.pull(r) {
                    Ok(p) if !matches!(p.status, PrStatus::Unknown { .. } | PrStatus::NotFound) => RefState::Pr(p),
                    _ => RefState::Unknown {
                        reference: r.clone(),
                        why: issue.unknown_why().unwrap_or(OFFLINE_WHY).to_string(),
                    },
                };
            }
            _ => {}
        }
        if !issue.is_pr {
            return RefState::Issue(issue);
        }
        let from_issue = pr_from_issue(&issue, &self.cfg.policy);
        let needs_pull = match &from_issue {
            None => true,
            Some(p) => matches!(p.status, PrStatus::Open { .. }),
        };
        if needs_pull {
            match self.pull(r) {
                Ok(p) if !matches!(p.status, PrStatus::Unknown { .. } | PrStatus::NotFound) => return RefState::Pr(p),
                Ok(_) | Err(_) => {}
            }
        }
        match from_issue {
            Some(p) => RefState::Pr(p),
            None => RefState::Unknown {
                reference: r.clone(),
                why: "a pull request whose merge state could not be read".into(),
            },
        }
    }

    /// Cross-references from an issue's timeline (paginated), sorted.
    pub fn timeline(&self, r: &IssueRef) -> Result<(Vec<CrossRef>, ReadInfo), GithubError> {
        let path = format!("/repos/{}/{}/issues/{}/timeline?per_page=100", r.repo.owner, r.repo.name, r.number);
        let (events, read, _) = self.fetch_pages(&path, usize::MAX, |v| v.as_array().cloned().unwrap_or_default())?;
        Ok((decode_timeline(&events), read))
    }

    /// Every timeline event of an issue or pull request (paginated, the same requests
    /// as [`GithubClient::timeline`], so one cached answer serves both), in GitHub's order.
    pub fn timeline_events(&self, r: &IssueRef) -> Result<(Vec<TimelineEvent>, ReadInfo), GithubError> {
        let path = format!("/repos/{}/{}/issues/{}/timeline?per_page=100", r.repo.owner, r.repo.name, r.number);
        let (events, read, _) = self.fetch_pages(&path, usize::MAX, |v| v.as_array().cloned().unwrap_or_default())?;
        Ok((decode_events(&events), read))
    }

    /// Pull requests cross-referenced from an issue's timeline, each looked up (the
    /// runbook's "walk the timeline to find fix PRs"). At most 50.
    pub fn fix_prs(&self, r: &IssueRef) -> Result<Vec<RefState>, GithubError> {
        let (refs, _) = self.timeline(r)?;
        Ok(refs.iter().filter(|c| c.is_pr).take(50).map(|c| self.lookup(&c.reference)).collect())
    }

    /// `GET /search/issues?q=...`, up to `max` items (search allows 1,000).
    pub fn search_issues(&self, query: &str, max: usize) -> Result<SearchResult, GithubError> {
        let path = format!("/search/issues?q={}&per_page=100", percent_encode(query));
        let (items, read, first) = self.fetch_pages(&path, max.min(1000), |v| {
            v.get("items").and_then(Value::as_array).cloned().unwrap_or_default()
        })?;
        Ok(SearchResult {
            query: query.to_string(),
            total_count: first.get("total_count").and_then(Value::as_u64).unwrap_or(items.len() as u64),
            incomplete_results: first.get("incomplete_results").and_then(Value::as_bool).unwrap_or(false),
            items: decode_search_items(&items),
            read,
        })
    }

    /// `GET /repos/{o}/{r}/commits/{sha}`; `None` on 404, and on the 422 GitHub answers
    /// for a SHA that names no commit ("No commit found for SHA").
    pub fn commit(&self, repo: &RepoRef, sha: &str) -> Result<Option<CommitInfo>, GithubError> {
        self.commit_read(repo, sha).map(|(c, _)| c)
    }

    /// Like [`GithubClient::commit`], with how the answer was read.
    pub fn commit_read(&self, repo: &RepoRef, sha: &str) -> Result<(Option<CommitInfo>, ReadInfo), GithubError> {
        let path = format!("/repos/{}/{}/commits/{}", repo.owner, repo.name, percent_encode(sha));
        let f = match self.fetch(&path) {
            Ok(f) => f,
            Err(GithubError::Status { status: 422, url, .. }) => {
                return Ok((None, ReadInfo { read_at: Some(self.now()), ..ReadInfo::none(url) }))
            }
            Err(e) => return Err(e),
        };
        if f.status == 404 {
            return Ok((None, f.read));
        }
        let v = f.json()?;
        Ok((decode_commit(repo, &v), f.read))
    }

    /// `GET /repos/{o}/{r}/commits?...` (paginated), newest first.
    pub fn commits(&self, repo: &RepoRef, q: &CommitQuery) -> Result<Vec<CommitInfo>, GithubError> {
        let mut path = format!("/repos/{}/{}/commits?per_page=100", repo.owner, repo.name);
        for (k, v) in
            [("sha", &q.sha), ("path", &q.path), ("author", &q.author), ("since", &q.since), ("until", &q.until)]
        {
            if let Some(v) = v {
                path.push_str(&format!("&{k}={}", percent_encode(v)));
            }
        }
        let max = if q.max == 0 { 100 } else { q.max };
        let (items, _, _) = self.fetch_pages(&path, max, |v| v.as_array().cloned().unwrap_or_default())?;
        Ok(items.iter().filter_map(|c| decode_commit(repo, c)).collect())
    }
}

impl IssueState {
    fn unknown_why(&self) -> Option<&str> {
        match &self.status {
            IssueStatus::Unknown { why } => Some(why),
            _ => None,
        }
    }
}

impl RefResolver for GithubClient {
    fn resolve(&self, r: &IssueRef) -> RefState {
        self.lookup(r)
    }

    fn cross_referenced_prs(&self, issue: &IssueRef) -> Option<Result<Vec<RefState>, String>> {
        Some(self.fix_prs(issue).map_err(why_not))
    }

    fn timeline_events(&self, r: &IssueRef) -> crate::state::TimelineAnswer {
        Some(
            self.timeline_events(r)
                .map(|(events, read)| {
                    let ev = read.read_at.map(|t| {
                        citriage_model::Evidence::new(
                            citriage_model::EvidenceKind::IssueState,
                            github_locator(&read.api_url),
                            format!("{r} timeline: {} event(s)", events.len()),
                            &read.body_sha256,
                            crate::time::day_of(t),
                        )
                    });
                    (events, ev)
                })
                .map_err(why_not),
        )
    }

    fn commit_info(&self, repo: &RepoRef, sha: &str) -> Option<Result<Option<CommitInfo>, String>> {
        Some(self.commit(repo, sha).map_err(why_not))
    }
}

fn why_not(e: GithubError) -> String {
    match e {
        GithubError::NotCached { .. } => OFFLINE_WHY.to_string(),
        e => e.to_string(),
    }
}

/// The `rel="next"` URL of a `Link` header.
pub fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let mut pieces = part.split(';');
        let url = pieces.next()?.trim();
        let is_next = pieces.any(|p| {
            let p = p.trim();
            p == "rel=\"next\"" || p == "rel=next"
        });
        if is_next && url.starts_with('<') && url.ends_with('>') {
            Some(url[1..url.len() - 1].to_string())
        } else {
            None
        }
    })
}

/// The `message` of a GitHub error body, else a short prefix of the body.
fn api_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        if let Some(m) = v.get("message").and_then(Value::as_str) {
            return m.to_string();
        }
    }
    let text = String::from_utf8_lossy(body);
    text.chars().take(200).collect::<String>().trim().to_string()
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_redacted() {
        let t = Token::new("ghp_secret123").unwrap();
        assert_eq!(format!("{t:?}"), "Token(redacted)");
        let cfg = ClientConfig { token: Some(t), ..Default::default() };
        assert!(!format!("{cfg:?}").contains("ghp_secret123"));
        let c = GithubClient::new(cfg, Box::new(NoCache));
        assert!(!format!("{c:?}").contains("ghp_secret123"));
        assert!(Token::new("  ").is_none());
        assert!(Token::new("a\nb").is_none());
        assert_eq!(Token::first_of([None, Some("".into()), Some("x".into())]), Token::new("x"));
    }

    #[test]
    fn links_and_encoding() {
        let l = r#"<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last""#;
        assert_eq!(next_link(l).as_deref(), Some("https://api.github.com/x?page=2"));
        assert_eq!(next_link(r#"<https://a/x?page=1>; rel="prev""#), None);
        assert_eq!(percent_encode("repo:a/b is:pr \"x y\""), "repo%3Aa%2Fb%20is%3Apr%20%22x%20y%22");
    }

    #[test]
    fn foreign_urls_are_refused() {
        let c = GithubClient::new(ClientConfig::default(), Box::new(NoCache));
        assert!(c.url_for("https://evil.example/repos/a/b").is_err());
        assert_eq!(c.url_for("/repos/a/b").unwrap(), "https://api.github.com/repos/a/b");
    }

    #[test]
    fn offline_miss_is_unknown() {
        let c = GithubClient::new(ClientConfig { offline: true, ..Default::default() }, Box::new(MemoryCache::new()));
        let r = IssueRef::parse("kubernetes/kubernetes#1").unwrap();
        match c.lookup(&r) {
            RefState::Unknown { why, .. } => assert!(why.contains("offline")),
            other => panic!("expected unknown, got {other:?}"),
        }
        assert_eq!(c.stats().requests, 0);
    }
}
