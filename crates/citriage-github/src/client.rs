//! The GitHub REST client: a thin user of citriage's HTTP layer
//! ([`citriage_sources::http`], which owns timeouts, retries and their budget,
//! `Retry-After` and rate limits, size limits, same-origin redirects, conditional
//! requests through an [`HttpCache`] and the token rule) with a configurable API base,
//! `Link: rel="next"` pagination, and an offline mode that answers only from the cache
//! and says how old each answer is. Typed lookups (pull requests, issues, timelines,
//! search, commits) sit on top of one `fetch`.

use crate::state::Answered;
use crate::state::{
    decode_commit, decode_events, decode_issue, decode_pull, decode_search_items, decode_timeline, github_locator,
    pr_from_issue, BlockingPolicy, CommitInfo, CrossRef, IssueRef, IssueState, IssueStatus, PrState, PrStatus,
    ReadInfo, RefResolver, RefState, RepoRef, SearchResult, TimelineEvent,
};
use citriage_model::json_kind;
use citriage_sources::http::{
    message_of, CachedAnswer, Freshness, HttpClient, HttpError, HttpOptions, Pacer, PageGuard, Request, RetryBudget,
    Wait, WaitKind,
};
pub use citriage_sources::http::{next_link, percent_encode, CachedResponse, HttpCache, MemoryCache, NoCache, Token};
use serde_json::Value;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

/// The public GitHub API.
pub const DEFAULT_API_BASE: &str = "https://api.github.com";

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
    /// The waiting allowed in all (shared with the other clients of the command that
    /// hold a clone).
    pub retry_budget: RetryBudget,
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
            retry_budget: RetryBudget::new(Duration::from_secs(300)),
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
    /// A 200 answer that is not the GitHub object asked for (not JSON, or JSON of
    /// another shape). It is not cached, and the lookup counts as failed.
    #[error("{url}: malformed answer (not cached): {detail}")]
    Malformed { url: String, detail: String },
    #[error("{url}: offline and not in the cache")]
    NotCached { url: String },
    #[error("{url}: refusing to follow a link outside the API base: {link}")]
    ForeignUrl { url: String, link: String },
    /// The HTTP policy refused to go on (the retry budget spent, a body over the size
    /// limit, a redirect loop, a listing that repeats itself).
    #[error("{detail}")]
    Refused { url: String, detail: String },
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
    /// Seconds spent waiting (rate limits and retries).
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

/// What a 200 answer must be to be used and cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Any JSON document.
    Json,
    /// An issue or pull request object: a JSON object whose `number` is this one and
    /// whose `state` is a string.
    Numbered(u64),
}

impl Shape {
    /// `Ok` when the body has the shape; otherwise what is wrong with it.
    pub fn check(self, body: &[u8]) -> Result<(), String> {
        let v: Value = serde_json::from_slice(body).map_err(|e| {
            let start: String = String::from_utf8_lossy(body).chars().take(40).collect();
            format!("not JSON ({e}); it starts {start:?}")
        })?;
        match self {
            Shape::Json => Ok(()),
            Shape::Numbered(n) => {
                let Some(o) = v.as_object() else {
                    return Err(format!(
                        "expected a JSON object of issue or pull request #{n}, found {}",
                        json_kind(&v)
                    ));
                };
                match o.get("number") {
                    Some(Value::Number(got)) if got.as_u64() == Some(n) => {}
                    Some(other) => return Err(format!("expected \"number\": {n}, found {other}")),
                    None => return Err(format!("expected issue or pull request #{n}: the object has no \"number\"")),
                }
                match o.get("state") {
                    Some(Value::String(_)) => Ok(()),
                    Some(other) => Err(format!("expected \"state\" to be a string, found {}", json_kind(other))),
                    None => Err("the object has no \"state\"".into()),
                }
            }
        }
    }
}

/// The counters the HTTP layer does not keep.
#[derive(Default)]
struct Inner {
    downloads: u64,
    not_modified: u64,
    cache_answers: u64,
}

type Clock = Box<dyn Fn() -> i64>;
type Sleeper = Box<dyn Fn(Duration)>;
type WaitNotice = Box<dyn Fn(&Wait)>;

/// The client. Methods take `&self`; counters and the rate-limit state are internal.
pub struct GithubClient {
    cfg: ClientConfig,
    http: HttpClient,
    cache: Box<dyn HttpCache>,
    clock: Clock,
    sleeper: Sleeper,
    notice: Option<WaitNotice>,
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
        let opts = HttpOptions {
            timeout: cfg.timeout,
            attempts: cfg.max_retries + 1,
            backoff: Duration::from_secs(1),
            max_retry_after: cfg.max_wait,
            retry_budget: cfg.retry_budget.clone(),
            max_bytes: cfg.max_body_bytes,
            user_agent: cfg.user_agent.clone(),
            // GitHub's secondary limit may come without headers: wait at least a minute.
            rate_limit_message: Some("secondary rate limit".into()),
            rate_limit_wait: Some(Duration::from_secs(60)),
            ..HttpOptions::default()
        };
        let mut http = HttpClient::new(opts);
        // The token goes to the API base's origin only (to none when the base is not
        // an http(s) URL).
        let _ = http.allow(&cfg.api_base);
        let http = http.with_token(cfg.token.clone());
        GithubClient {
            cfg,
            http,
            cache,
            clock: Box::new(citriage_sources::http::unix_now),
            sleeper: Box::new(std::thread::sleep),
            notice: None,
            inner: Mutex::new(Inner::default()),
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

    /// Tells `notice` of each wait before the client sleeps it (`Retry-After`, a rate
    /// limit's reset, a backoff), with the URL without its query; callers show it as
    /// progress.
    pub fn with_wait_notice(mut self, notice: impl Fn(&Wait) + 'static) -> GithubClient {
        self.notice = Some(Box::new(notice));
        self
    }

    /// The settings.
    pub fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    /// The counters so far.
    pub fn stats(&self) -> ClientStats {
        let h = self.http.stats();
        let (downloads, not_modified, cache_answers) =
            self.inner.lock().map(|i| (i.downloads, i.not_modified, i.cache_answers)).unwrap_or_default();
        ClientStats {
            requests: h.requests,
            downloads,
            not_modified,
            cache_answers,
            retries: h.retries,
            waited_secs: h.waited.as_secs(),
        }
    }

    /// The client's clock.
    pub fn now(&self) -> i64 {
        (self.clock)()
    }

    fn bump(&self, f: impl FnOnce(&mut Inner)) {
        if let Ok(mut i) = self.inner.lock() {
            f(&mut i);
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
        self.http.redact(s)
    }

    /// A failed request in GitHub's terms (rate limits named primary or secondary).
    fn failed(&self, e: HttpError) -> GithubError {
        let kind = |k: WaitKind| if k == WaitKind::RateLimitReset { "primary" } else { "secondary" };
        match e {
            HttpError::Transport { url, detail } => GithubError::Transport { url, detail },
            HttpError::WaitTooLong { url, kind: k, wait_secs, limit_secs, .. } => {
                GithubError::RateLimited { url, kind: kind(k), wait_secs, limit_secs }
            }
            HttpError::GaveUp { url, rate_limited: Some(k), attempts, .. } => {
                GithubError::RetriesExhausted { url, kind: kind(k), retries: attempts.saturating_sub(1) }
            }
            HttpError::GaveUp { url, status, message, .. } => GithubError::Status { url, status, message },
            HttpError::CrossOrigin { url, to, .. } => GithubError::ForeignUrl { url, link: to },
            HttpError::ForeignOrigin { url, .. } => {
                GithubError::ForeignUrl { url: self.cfg.api_base.clone(), link: url }
            }
            other => {
                let url = match &other {
                    HttpError::BudgetSpent { url, .. }
                    | HttpError::TooLarge { url, .. }
                    | HttpError::TooManyRedirects { url, .. }
                    | HttpError::RepeatedPage { url, .. }
                    | HttpError::TooManyPages { url, .. } => url.clone(),
                    _ => String::new(),
                };
                GithubError::Refused { url, detail: self.scrub(&other.to_string()) }
            }
        }
    }

    /// The cached answer for a URL, offline: the answer stored for this very URL, else
    /// the newest one for the same API path under another base (a cache filled with
    /// `--api http://…` answers an offline run that does not repeat it), its `next`
    /// link moved under this client's base. Returns the URL the answer was read from.
    fn cached_anywhere(&self, url: &str) -> Option<(String, CachedResponse)> {
        if let Some(c) = self.cache.get(url) {
            return Some((url.to_string(), c));
        }
        let path = url.strip_prefix(self.cfg.api_base.as_str())?;
        let (found, mut c) = self.cache.get_by_suffix(path)?;
        let other_base = found.strip_suffix(path)?.to_string();
        if let Some(n) = &c.next {
            if let Some(rest) = n.strip_prefix(other_base.as_str()) {
                c.next = Some(format!("{}{rest}", self.cfg.api_base));
            }
        }
        Some((found, c))
    }

    /// GET one URL (or API path): from the cache when offline; otherwise with
    /// `If-None-Match` when a cached ETag exists (a 304 answers from the cache),
    /// waiting out rate limits within the configured bounds. 200 and 404 are answers;
    /// everything else is an error.
    pub fn fetch(&self, path_or_url: &str) -> Result<Fetched, GithubError> {
        self.fetch_checked(path_or_url, Shape::Json)
    }

    /// [`GithubClient::fetch`] of an answer that must have a shape: a 200 of another
    /// shape is [`GithubError::Malformed`] and is not cached (nor answered from the
    /// cache when an earlier version stored it).
    pub fn fetch_checked(&self, path_or_url: &str, shape: Shape) -> Result<Fetched, GithubError> {
        let url = self.url_for(path_or_url)?;
        let check = |body: &[u8]| shape.check(body);
        if self.cfg.offline {
            return match self.cached_anywhere(&url) {
                Some((_, c)) if c.status == 200 && check(&c.body).is_err() => {
                    Err(GithubError::Malformed { detail: check(&c.body).unwrap_err(), url })
                }
                Some((read_url, c)) => {
                    self.bump(|i| i.cache_answers += 1);
                    Ok(Fetched {
                        read: ReadInfo {
                            read_at: Some(c.fetched_at),
                            answered: Answered::Cache,
                            api_url: read_url,
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
        let req = Request::get(&url)
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28");
        match self
            .http
            .send_cached_checked(&req, self.cache.as_ref(), &ClientPacer(self), &check)
            .map_err(|e| self.failed(e))?
        {
            CachedAnswer::Malformed { why, .. } => {
                self.bump(|i| i.downloads += 1);
                Err(GithubError::Malformed { url, detail: self.scrub(&why) })
            }
            CachedAnswer::Stored { answer, freshness } => {
                let answered = match freshness {
                    Freshness::Live => {
                        if let Some(n) = &answer.next {
                            if !n.starts_with(&format!("{}/", self.cfg.api_base)) {
                                return Err(GithubError::ForeignUrl { url, link: n.clone() });
                            }
                        }
                        self.bump(|i| i.downloads += 1);
                        Answered::Live
                    }
                    Freshness::Revalidated => {
                        self.bump(|i| i.not_modified += 1);
                        Answered::Revalidated
                    }
                };
                Ok(Fetched {
                    read: ReadInfo {
                        read_at: Some(answer.fetched_at),
                        answered,
                        api_url: url.clone(),
                        body_sha256: citriage_model::evidence::sha256_hex(&answer.body),
                    },
                    url,
                    status: answer.status,
                    body: answer.body,
                    next: answer.next,
                })
            }
            CachedAnswer::Other(r) if r.status == 304 => Err(GithubError::Status {
                url,
                status: 304,
                message: "304 Not Modified without a cached answer".into(),
            }),
            CachedAnswer::Other(r) => {
                Err(GithubError::Status { url, status: r.status, message: self.scrub(&message_of(&r.body)) })
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
        let mut pages = PageGuard::new(url.clone());
        for page in 0..self.cfg.max_pages.max(1) {
            let f = self.fetch(&url)?;
            if f.status == 404 {
                return Err(GithubError::Status { url: f.url, status: 404, message: message_of(&f.body) });
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
                Some(n) => {
                    pages.next(&n).map_err(|e| self.failed(e))?;
                    url = n;
                }
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
        if self.cfg.token.is_none() {
            return Err(refuse("no token: set GITHUB_TOKEN (or GH_TOKEN)"));
        }
        let req = match (method, body) {
            ("GET", None) => Request::get(url.clone()),
            ("POST" | "PATCH", body) => Request::write(
                method == "PATCH",
                url.clone(),
                body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
            )
            .header("Content-Type", "application/json"),
            _ => return Err(refuse(&format!("{method} with this body is not a request citriage sends"))),
        };
        let req = req.header("Accept", "application/vnd.github+json").header("X-GitHub-Api-Version", "2022-11-28");
        let resp = self.http.send(&req).map_err(|e| self.failed(e))?;
        let (status, bytes) = (resp.status, resp.body);
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
        match self.fetch_checked(&path, Shape::Numbered(r.number)) {
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
        match self.fetch_checked(&path, Shape::Numbered(r.number)) {
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
                            citriage_model::time::date_of(t),
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

/// The client's clock and sleeps, as the HTTP layer asks for them.
struct ClientPacer<'a>(&'a GithubClient);

impl Pacer for ClientPacer<'_> {
    fn now(&self) -> i64 {
        self.0.now()
    }
    fn sleep(&self, d: Duration) {
        (self.0.sleeper)(d)
    }
    fn waiting(&self, wait: &Wait) {
        if let Some(n) = &self.0.notice {
            n(wait)
        }
    }
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
    fn offline_finds_answers_fetched_under_another_base() {
        let cache = MemoryCache::new();
        let body = br#"{"number": 7, "title": "t", "state": "open", "labels": []}"#.to_vec();
        let at = |fetched_at| CachedResponse {
            status: 200,
            etag: None,
            body: body.clone(),
            next: Some("http://127.0.0.1:9/repos/a/b/issues/7/timeline?page=2".into()),
            fetched_at,
        };
        cache.put("http://127.0.0.1:8/repos/a/b/issues/7", at(100));
        cache.put("http://127.0.0.1:9/repos/a/b/issues/7", at(200));
        cache.put("http://127.0.0.1:9/repos/a/b/issues/77", at(300));
        let c = GithubClient::new(ClientConfig { offline: true, ..Default::default() }, Box::new(cache));
        let f = c.fetch("/repos/a/b/issues/7").expect("answered from the cache");
        // The newest answer for the same path, its next link under this client's base.
        assert_eq!(f.read.api_url, "http://127.0.0.1:9/repos/a/b/issues/7");
        assert_eq!(f.next.as_deref(), Some("https://api.github.com/repos/a/b/issues/7/timeline?page=2"));
        assert!(matches!(c.fetch("/repos/a/b/issues/8"), Err(GithubError::NotCached { .. })));
        assert_eq!(c.stats().requests, 0);
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
