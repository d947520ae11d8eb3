//! The one HTTP client layer of citriage: every request any crate makes goes through
//! an [`HttpClient`], so there is one policy for
//!
//! - **timeouts**: each request as a whole ([`HttpOptions::timeout`]);
//! - **retries**: transport errors, 5xx and 429 are retried up to
//!   [`HttpOptions::attempts`] with doubling backoff; every wait is taken from a
//!   [`RetryBudget`] that all the clients of one command share, so a command's total
//!   waiting is bounded, and a spent budget fails with a clear error;
//! - **`Retry-After`** (seconds or an HTTP date) and **rate limits**
//!   (`X-RateLimit-Remaining: 0` with `X-RateLimit-Reset`, a 403/429 that says so in
//!   its body): waited out when shorter than [`HttpOptions::max_retry_after`], refused
//!   with an error naming the wait otherwise; a limit seen on one answer holds back the
//!   client's next request until it resets;
//! - **size and memory**: bodies are read up to [`HttpOptions::max_bytes`] (error
//!   bodies up to 64 KiB), never more, and every body in flight counts against one
//!   [memory budget](set_memory_budget) for the whole process (default
//!   [`DEFAULT_MEMORY_BUDGET`]): a body waits for room while others are read, and a
//!   body larger than the whole budget fails with an error naming the URL and the
//!   budget. A [`Body`] keeps its bytes counted until it is dropped;
//! - **streamed bodies**: [`HttpClient::get_stream`] hands a 200's body to its reader
//!   as the reader goes ([`BodyStream`]), never held whole; a transfer cut off on the
//!   way is resumed where the reader is (`Range: bytes=N-`, or the object again with
//!   what was read skipped), the same object or none, within the attempts and the
//!   retry budget;
//! - **redirects**: followed only within the same origin (scheme, host and port), at
//!   most [`HttpOptions::max_redirects`]; a redirect to another origin is refused with an
//!   error naming both;
//! - **origins**: a client restricted to base URLs contacts nothing else;
//! - **listings**: [`PageGuard`] refuses a server that repeats a page token or link;
//! - **caching**: the [`HttpCache`] hook stores answers, and [`HttpClient::send_cached`]
//!   revalidates them with `If-None-Match`;
//! - **tokens**: a [`Token`] is read from the environment only, sent only in the
//!   `Authorization` header to the client's own origins, never printed (`Debug` says
//!   `Token(redacted)`), and removed from any text that comes back.
//!
//! `ureq` is used here and nowhere else. The wall clock is read only through a
//! [`Pacer`], which tests replace.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The default largest body (2 GiB); the memory budget caps every body further.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// The default memory budget of a process for bodies in flight (512 MiB).
pub const DEFAULT_MEMORY_BUDGET: u64 = 512 << 20;

/// The process's memory budget for bodies in flight: bytes held by [`Hold`]s.
struct Budget {
    limit: AtomicU64,
    used: Mutex<Usage>,
    room: Condvar,
}

static BUDGET: Budget =
    Budget { limit: AtomicU64::new(DEFAULT_MEMORY_BUDGET), used: Mutex::new(Usage::ZERO), room: Condvar::new() };

/// What the budget knows: bytes held, bodies being read, and how many of those wait.
struct Usage {
    bytes: u64,
    readers: u64,
    waiting: u64,
}

impl Usage {
    const ZERO: Usage = Usage { bytes: 0, readers: 0, waiting: 0 };
}

/// How long waiting bodies wait for a kept body to be given back before one of them
/// goes on over the budget (see [`Hold::grow_to`]).
const STALL: Duration = Duration::from_secs(30);

/// Counts a body being read while it lives.
struct Reading;

impl Reading {
    fn start() -> Reading {
        if let Ok(mut u) = BUDGET.used.lock() {
            u.readers += 1;
        }
        Reading
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        if let Ok(mut u) = BUDGET.used.lock() {
            u.readers = u.readers.saturating_sub(1);
        }
        BUDGET.room.notify_all();
    }
}

/// Sets the process's memory budget for bodies in flight (bytes, at least 1 MiB).
/// Every body read by this layer (HTTP answers, inflated gzip, files read through
/// [`read_counted`]) is counted against it until dropped.
pub fn set_memory_budget(bytes: u64) {
    BUDGET.limit.store(bytes.max(1 << 20), Ordering::SeqCst);
    BUDGET.room.notify_all();
}

/// The process's memory budget for bodies in flight.
pub fn memory_budget() -> u64 {
    BUDGET.limit.load(Ordering::SeqCst)
}

/// Bytes of the budget held now.
pub fn memory_in_use() -> u64 {
    BUDGET.used.lock().map(|u| u.bytes).unwrap_or(0)
}

/// Bytes held against the memory budget; given back when dropped. A clone holds
/// nothing (it is not counted).
#[derive(Debug, Default)]
pub struct Hold {
    bytes: u64,
}

impl Hold {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Holds `total` bytes in all, waiting for room while other bodies are read.
    /// `Err(budget)` when `total` is larger than the whole budget. A hold that has to
    /// wait first gives back what it held, so holders never wait on each other.
    pub fn grow_to(&mut self, total: u64) -> Result<(), u64> {
        if total <= self.bytes {
            return Ok(());
        }
        let limit = memory_budget();
        if total > limit {
            return Err(limit);
        }
        let Ok(mut used) = BUDGET.used.lock() else { return Err(limit) };
        if used.bytes + (total - self.bytes) <= limit {
            used.bytes += total - self.bytes;
            self.bytes = total;
            return Ok(());
        }
        used.bytes -= self.bytes.min(used.bytes);
        self.bytes = 0;
        used.waiting += 1;
        BUDGET.room.notify_all();
        loop {
            let limit = memory_budget();
            if total > limit {
                used.waiting -= 1;
                return Err(limit);
            }
            if used.bytes + total <= limit {
                used.waiting -= 1;
                used.bytes += total;
                self.bytes = total;
                return Ok(());
            }
            if used.waiting >= used.readers {
                // No body is being read: what is held belongs to bodies their callers
                // keep. Most are given back soon (parsed, then dropped); if none is
                // within a while, they are kept by waiting readers themselves, and one
                // waiter goes on over the budget rather than wait forever.
                let before = used.bytes;
                let (u, timeout) = match BUDGET.room.wait_timeout(used, STALL) {
                    Ok(r) => r,
                    Err(_) => return Err(limit),
                };
                used = u;
                if timeout.timed_out() && used.bytes >= before && used.waiting >= used.readers {
                    used.waiting -= 1;
                    used.bytes += total;
                    self.bytes = total;
                    return Ok(());
                }
                continue;
            }
            used = match BUDGET.room.wait(used) {
                Ok(u) => u,
                Err(_) => return Err(limit),
            };
        }
    }
}

impl Hold {
    /// Gives back what is held above `total` bytes.
    pub fn shrink_to(&mut self, total: u64) {
        if total >= self.bytes {
            return;
        }
        if let Ok(mut used) = BUDGET.used.lock() {
            used.bytes -= (self.bytes - total).min(used.bytes);
        }
        self.bytes = total;
        BUDGET.room.notify_all();
    }
}

impl Clone for Hold {
    fn clone(&self) -> Self {
        Hold::default()
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        if let Ok(mut used) = BUDGET.used.lock() {
            used.bytes -= self.bytes.min(used.bytes);
        }
        BUDGET.room.notify_all();
    }
}

/// Bytes read under the memory budget: counted until dropped. Reads as `&[u8]`.
#[derive(Debug, Clone, Default)]
pub struct Body {
    bytes: Vec<u8>,
    hold: Hold,
}

impl Body {
    /// Bytes not counted against the budget (small, or already accounted for).
    pub fn uncounted(bytes: Vec<u8>) -> Body {
        Body { bytes, hold: Hold::default() }
    }

    /// Bytes counted by `hold`.
    pub fn with_hold(bytes: Vec<u8>, hold: Hold) -> Body {
        Body { bytes, hold }
    }

    /// The bytes; they stop being counted.
    pub fn into_vec(self) -> Vec<u8> {
        let mut b = self;
        std::mem::take(&mut b.bytes)
    }

    /// Bytes held against the budget for this body.
    pub fn held(&self) -> u64 {
        self.hold.bytes()
    }

    /// The hold, leaving this body uncounted (to pass it on to what replaces it).
    pub fn take_hold(&mut self) -> Hold {
        std::mem::take(&mut self.hold)
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Body {
        Body::uncounted(bytes)
    }
}

impl std::ops::Deref for Body {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl AsRef<[u8]> for Body {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for Body {}

impl PartialEq<Vec<u8>> for Body {
    fn eq(&self, other: &Vec<u8>) -> bool {
        &self.bytes == other
    }
}

/// Why [`read_counted`] stopped.
#[derive(Debug)]
pub enum ReadLimit {
    /// More than the limit given.
    TooLarge { limit: u64 },
    /// More than the process's whole memory budget.
    OverBudget { budget: u64 },
    /// The reader failed.
    Io(std::io::Error),
}

/// Reads `r` to its end into a [`Body`] counted against the memory budget: at most
/// `limit` bytes (`hint`: the expected size, held up front when known). An endless or
/// oversized stream stops at the limit or the budget, whichever is smaller.
pub fn read_counted(r: &mut dyn Read, limit: u64, hint: Option<u64>) -> Result<Body, ReadLimit> {
    read_counted_carrying(r, limit, hint, Hold::default())
}

/// [`read_counted`] that goes on counting in `carried`, the hold of the bytes `r`
/// reads from (the compressed body being inflated): one hold never waits for room it
/// holds itself. The body's hold keeps the carried bytes too; shrink it when they are
/// dropped.
pub fn read_counted_carrying(
    r: &mut dyn Read,
    limit: u64,
    hint: Option<u64>,
    carried: Hold,
) -> Result<Body, ReadLimit> {
    const CHUNK: usize = 64 * 1024;
    let _reading = Reading::start();
    let mut hold = carried;
    let base = hold.bytes();
    let budget = memory_budget();
    let first = hint.unwrap_or(CHUNK as u64).clamp(1, limit.saturating_add(1)).min(budget.saturating_sub(base).max(1));
    hold.grow_to(base + first).map_err(|budget| ReadLimit::OverBudget { budget })?;
    let mut bytes: Vec<u8> = Vec::new();
    bytes.reserve_exact(first as usize);
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ReadLimit::Io(e)),
        };
        let len = bytes.len() as u64 + n as u64;
        if len > limit {
            return Err(ReadLimit::TooLarge { limit });
        }
        if base + len > hold.bytes() {
            let budget = memory_budget();
            if base + len > budget {
                return Err(ReadLimit::OverBudget { budget });
            }
            let want = len.max((hold.bytes() - base).saturating_mul(2)).min(limit).min(budget - base);
            hold.grow_to(base + want).map_err(|budget| ReadLimit::OverBudget { budget })?;
            bytes.reserve_exact(want as usize - bytes.len());
        }
        bytes.extend_from_slice(&buf[..n]);
    }
    Ok(Body { bytes, hold })
}

/// Bytes of an error answer's body that are kept (for its message).
pub const ERROR_BODY_LIMIT: u64 = 64 * 1024;

/// The HTTP policy of a client.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Whole-request timeout.
    pub timeout: Duration,
    /// Attempts in all (first try included) for transport errors, 5xx and rate limits.
    pub attempts: u32,
    /// The first retry's wait when the server names none; doubled per retry.
    pub backoff: Duration,
    /// The longest single wait honoured (`Retry-After`, a rate-limit reset); a longer
    /// one fails the request at once.
    pub max_retry_after: Duration,
    /// The waiting allowed in all, shared by every client made with clones of these
    /// options (one command's clients).
    pub retry_budget: RetryBudget,
    /// The largest body accepted (also the most a gzip body may inflate to).
    pub max_bytes: u64,
    /// Same-origin redirects followed per request.
    pub max_redirects: u32,
    pub user_agent: String,
    /// Text (case-insensitive) in a 403 or 429 body that marks it a rate limit even
    /// without rate-limit headers (GitHub's "secondary rate limit").
    pub rate_limit_message: Option<String>,
    /// The wait for a rate limit that names no time; `None`: the backoff.
    pub rate_limit_wait: Option<Duration>,
}

impl HttpOptions {
    /// Options whose whole work is bounded by `total`: each request, every wait
    /// (a `Retry-After` longer than `total` fails at once) and all of them together
    /// end by `total` from now.
    pub fn bounded(total: Duration) -> HttpOptions {
        HttpOptions {
            timeout: total,
            max_retry_after: total.min(Duration::from_secs(120)),
            retry_budget: RetryBudget::with_deadline(total),
            ..HttpOptions::default()
        }
    }

    /// Options for a command that makes many requests: `per_request` bounds each
    /// request and each single wait; the waits of all requests share the default
    /// budget.
    pub fn per_request(per_request: Duration) -> HttpOptions {
        HttpOptions {
            timeout: per_request,
            max_retry_after: per_request.min(Duration::from_secs(120)),
            ..HttpOptions::default()
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            timeout: Duration::from_secs(30),
            attempts: 4,
            backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(120),
            retry_budget: RetryBudget::new(Duration::from_secs(300)),
            max_bytes: DEFAULT_MAX_BYTES,
            max_redirects: 5,
            user_agent: concat!("citriage/", env!("CARGO_PKG_VERSION")).to_string(),
            rate_limit_message: None,
            rate_limit_wait: None,
        }
    }
}

/// Waiting allowed in all before retries, shared by the clones of one budget; and,
/// optionally, a deadline for everything (requests, downloads and waits).
#[derive(Clone)]
pub struct RetryBudget {
    limit: Duration,
    spent: Arc<Mutex<Duration>>,
    deadline: Option<std::time::Instant>,
}

impl RetryBudget {
    pub fn new(limit: Duration) -> RetryBudget {
        RetryBudget { limit, spent: Arc::new(Mutex::new(Duration::ZERO)), deadline: None }
    }

    /// A budget that also ends everything `total` from now: no request starts, no
    /// download goes on and no wait begins past it (`--timeout` of a command that
    /// reads one thing).
    pub fn with_deadline(total: Duration) -> RetryBudget {
        RetryBudget { deadline: Some(std::time::Instant::now() + total), ..RetryBudget::new(total) }
    }

    /// Time left before the deadline (`None`: no deadline).
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()))
    }

    /// The waiting allowed in all.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// The waiting done so far.
    pub fn spent(&self) -> Duration {
        self.spent.lock().map(|s| *s).unwrap_or(self.limit)
    }

    /// Takes `wait` from the budget; false (and nothing taken) when it does not fit.
    fn take(&self, wait: Duration) -> bool {
        if self.remaining().is_some_and(|r| wait >= r) {
            return false;
        }
        let Ok(mut spent) = self.spent.lock() else { return false };
        if *spent + wait > self.limit {
            return false;
        }
        *spent += wait;
        true
    }
}

impl fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RetryBudget({:?} of {:?} spent)", self.spent(), self.limit)
    }
}

/// An API token. It is sent only in the `Authorization` header to the origins of the
/// client it is given to; `Debug` prints `Token(redacted)` and there is no `Display`
/// or `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A token from a string. `None` when empty or when it holds characters a header
    /// cannot carry.
    pub fn new(s: impl Into<String>) -> Option<Token> {
        let s = s.into().trim().to_string();
        if s.is_empty() || !s.bytes().all(|b| (0x21..0x7f).contains(&b)) {
            return None;
        }
        Some(Token(s))
    }

    /// The first usable token among candidates, in order.
    pub fn first_of<I: IntoIterator<Item = Option<String>>>(candidates: I) -> Option<Token> {
        candidates.into_iter().flatten().find_map(Token::new)
    }

    /// The first usable token among these environment variables, in order (tokens are
    /// taken from the environment only, never from arguments or files).
    pub fn from_env(names: &[&str]) -> Option<Token> {
        Token::first_of(names.iter().map(|n| std::env::var(n).ok()))
    }

    /// `text` with every occurrence of the token replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        if text.contains(&self.0) {
            text.replace(&self.0, "[redacted]")
        } else {
            text.to_string()
        }
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(redacted)")
    }
}

/// One stored HTTP answer. Not-found answers are stored too, so an offline reader can
/// say "not found".
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

/// Where answers are kept between runs (the CLI keeps them in its SQLite store;
/// [`MemoryCache`] serves tests and single runs).
pub trait HttpCache {
    /// The stored answer for a URL.
    fn get(&self, url: &str) -> Option<CachedResponse>;
    /// Stores (replaces) the answer for a URL.
    fn put(&self, url: &str, resp: CachedResponse);
    /// The newest stored answer whose URL ends with `suffix` (a path and query under
    /// some API base, starting with `/`), with that URL: how an offline reader finds
    /// an answer fetched under another base URL. Default: none.
    fn get_by_suffix(&self, _suffix: &str) -> Option<(String, CachedResponse)> {
        None
    }
}

/// Among `(url, answer)` pairs, the newest answer whose URL ends with `suffix` (ties:
/// the first URL in order): the rule every [`HttpCache::get_by_suffix`] follows.
pub fn newest_with_suffix<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a CachedResponse)>,
    suffix: &str,
) -> Option<(String, CachedResponse)> {
    let mut best: Option<(&str, &CachedResponse)> = None;
    for (u, c) in entries {
        if !suffix.starts_with('/') || !u.ends_with(suffix) {
            continue;
        }
        match best {
            Some((bu, bc)) if (bc.fetched_at, std::cmp::Reverse(bu)) >= (c.fetched_at, std::cmp::Reverse(u)) => {}
            _ => best = Some((u, c)),
        }
    }
    best.map(|(u, c)| (u.to_string(), c.clone()))
}

impl<C: HttpCache + ?Sized> HttpCache for Arc<C> {
    fn get(&self, url: &str) -> Option<CachedResponse> {
        (**self).get(url)
    }
    fn put(&self, url: &str, resp: CachedResponse) {
        (**self).put(url, resp)
    }
    fn get_by_suffix(&self, suffix: &str) -> Option<(String, CachedResponse)> {
        (**self).get_by_suffix(suffix)
    }
}

impl<C: HttpCache + ?Sized> HttpCache for std::rc::Rc<C> {
    fn get(&self, url: &str) -> Option<CachedResponse> {
        (**self).get(url)
    }
    fn put(&self, url: &str, resp: CachedResponse) {
        (**self).put(url, resp)
    }
    fn get_by_suffix(&self, suffix: &str) -> Option<(String, CachedResponse)> {
        (**self).get_by_suffix(suffix)
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
    fn get_by_suffix(&self, suffix: &str) -> Option<(String, CachedResponse)> {
        let m = self.map.lock().ok()?;
        newest_with_suffix(m.iter().map(|(u, c)| (u.as_str(), c)), suffix)
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

/// How a client reads the time and waits. [`SystemPacer`] reads the wall clock and
/// sleeps; tests count waits instead.
pub trait Pacer {
    /// Unix seconds now.
    fn now(&self) -> i64;
    fn sleep(&self, d: Duration);
    /// Told before each wait the client is about to sleep (after it was allowed by the
    /// longest single wait and the retry budget), so a caller can say what it waits for.
    fn waiting(&self, _wait: &Wait) {}
}

/// A wait the client is about to sleep, as told to [`Pacer::waiting`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wait {
    /// The URL waited for, without its query or fragment (never a token: tokens go in
    /// a header).
    pub url: String,
    /// The answer's status that asked for the wait (`None`: a transport error).
    pub status: Option<u16>,
    pub kind: WaitKind,
    pub duration: Duration,
}

/// A URL without its query and fragment, as waits and progress lines show it.
pub fn url_without_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// The wall clock and real sleeps.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemPacer;

impl Pacer for SystemPacer {
    fn now(&self) -> i64 {
        unix_now()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d)
    }
}

/// The wall clock in Unix seconds.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// What a wait was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitKind {
    /// The server said how long (`Retry-After`), or said "rate limit" without a time.
    RetryAfter,
    /// A rate limit's reset time (`X-RateLimit-Reset`).
    RateLimitReset,
    /// Backoff after a transport error or a 5xx.
    Backoff,
}

/// Why a request failed. Messages name the URL; no variant ever holds the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    #[error("{url}: request failed: {detail}")]
    Transport { url: String, detail: String },
    #[error("{url}: HTTP {status}, still after {attempts} attempts{}", suffix(.message))]
    GaveUp { url: String, status: u16, attempts: u32, rate_limited: Option<WaitKind>, message: String },
    #[error("{url}: the server asks to wait {wait_secs}s, longer than the {limit_secs}s allowed")]
    WaitTooLong { url: String, status: Option<u16>, kind: WaitKind, wait_secs: u64, limit_secs: u64 },
    #[error("{url}: the retry budget ({budget_secs}s of waiting in all) is spent")]
    BudgetSpent { url: String, status: Option<u16>, budget_secs: u64 },
    #[error("{url}: the {total_secs}s timeout (requests and retries together) has passed")]
    DeadlinePassed { url: String, total_secs: u64 },
    #[error("{url}: larger than the {limit}-byte limit")]
    TooLarge { url: String, limit: u64 },
    #[error("{url}: larger than the process's memory budget for bodies in flight ({budget} bytes; CITRIAGE_MEMORY_BUDGET_MIB raises it)")]
    OverBudget { url: String, budget: u64 },
    #[error("{url}: HTTP {status} redirects to another origin, {to}: refused")]
    CrossOrigin { url: String, status: u16, to: String },
    #[error("{url}: more than {max} redirects")]
    TooManyRedirects { url: String, max: u32 },
    #[error("{url}: refusing to contact an origin other than {allowed}")]
    ForeignOrigin { url: String, allowed: String },
    #[error("{url}: the listing repeats page {page:?} (the server's pagination loops)")]
    RepeatedPage { url: String, page: String },
    #[error("{url}: the listing has more than {max} pages")]
    TooManyPages { url: String, max: usize },
}

/// A request: a GET (retried, redirected within the origin, cacheable) or a write
/// (`POST`/`PATCH` with a body: sent once, never retried, redirects not followed),
/// unless the write carries an idempotency key ([`Request::idempotent`]): then a
/// receiver drops a repeat, and the write is retried under the GET's rules (transport
/// errors, 5xx, rate limits and `Retry-After`), redirects still not followed.
#[derive(Debug, Clone)]
pub struct Request {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    /// `GET`, `POST` or `PATCH`.
    pub method: &'static str,
    /// The body of a write.
    pub body: Option<Vec<u8>>,
    /// Set by [`Request::idempotent`]: a repeat of this write is harmless.
    retry_safe: bool,
}

impl Request {
    pub fn get(url: impl Into<String>) -> Request {
        Request { url: url.into(), headers: Vec::new(), method: "GET", body: None, retry_safe: true }
    }

    /// A `POST` (or, with `patch`, a `PATCH`) carrying `body`.
    pub fn write(patch: bool, url: impl Into<String>, body: Vec<u8>) -> Request {
        Request {
            url: url.into(),
            headers: Vec::new(),
            method: if patch { "PATCH" } else { "POST" },
            body: Some(body),
            retry_safe: false,
        }
    }

    /// Sends the write's idempotency key in the `Idempotency-Key` header, so the
    /// receiver can drop a repeat; the write is then retried like a GET.
    pub fn idempotent(mut self, key: impl Into<String>) -> Request {
        self.headers.push(("Idempotency-Key", key.into()));
        self.retry_safe = true;
        self
    }

    fn is_write(&self) -> bool {
        self.method != "GET"
    }

    /// Adds a header (never `Authorization`: the client adds the token itself).
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Request {
        self.headers.push((name, value.into()));
        self
    }
}

/// A final answer (any status the client does not retry).
#[derive(Debug, Clone)]
pub struct Response {
    /// The URL that answered (after same-origin redirects).
    pub url: String,
    pub status: u16,
    /// Header names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body: at most [`HttpOptions::max_bytes`] for a 2xx, [`ERROR_BODY_LIMIT`]
    /// otherwise.
    pub body: Vec<u8>,
    /// The body's bytes held against the memory budget.
    hold: Hold,
}

impl Response {
    /// The first value of a header (name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim())
    }

    /// The `Link: rel="next"` URL.
    pub fn next_link(&self) -> Option<String> {
        self.header("link").and_then(next_link)
    }

    /// The body, still counted against the memory budget until dropped.
    pub fn into_body(self) -> Body {
        Body { bytes: self.body, hold: self.hold }
    }
}

/// Whether an answer came from the network or was confirmed unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Downloaded now.
    Live,
    /// The stored answer, confirmed unchanged by a 304.
    Revalidated,
}

/// What [`HttpClient::send_cached`] got.
#[derive(Debug, Clone)]
pub enum CachedAnswer {
    /// A 200 or a not-found (404, 410 stored as 404), as stored in the cache.
    Stored { answer: CachedResponse, freshness: Freshness },
    /// Any other final status (not stored).
    Other(Response),
    /// A 200 whose body the caller's check refused: not stored, so a later request
    /// asks again (unconditionally) instead of trusting it.
    Malformed { answer: CachedResponse, why: String },
}

/// Request counters of one client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpStats {
    /// Requests sent (redirects and retries included).
    pub requests: u64,
    /// Retries after transport errors, 5xx or rate limits.
    pub retries: u64,
    /// Time spent waiting (retries and rate limits).
    pub waited: Duration,
}

#[derive(Debug, Default)]
struct State {
    /// A rate limit seen on an earlier answer holds requests back until then.
    blocked_until: Option<i64>,
    stats: HttpStats,
}

/// A blocking HTTP client with the policy of its [`HttpOptions`].
pub struct HttpClient {
    agent: ureq::Agent,
    opts: HttpOptions,
    /// Origins this client may contact; empty: any.
    origins: Vec<String>,
    token: Option<Token>,
    state: Mutex<State>,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("origins", &self.origins)
            .field("token", &self.token.as_ref().map(|_| "redacted"))
            .field("opts", &self.opts)
            .finish()
    }
}

impl HttpClient {
    /// A client that may contact any origin (redirects still stay within one).
    pub fn new(opts: HttpOptions) -> HttpClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(opts.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(opts.user_agent.as_str())
            .build()
            .into();
        HttpClient { agent, opts, origins: Vec::new(), token: None, state: Mutex::new(State::default()) }
    }

    /// Also allows the origin of `base` and restricts the client to its allowed
    /// origins; an error when `base` is not an http(s) URL.
    pub fn allow(&mut self, base: &str) -> Result<(), HttpError> {
        let o = origin(base)
            .ok_or_else(|| HttpError::ForeignOrigin { url: base.to_string(), allowed: "http(s) URLs".to_string() })?;
        if !self.origins.contains(&o) {
            self.origins.push(o);
        }
        Ok(())
    }

    /// [`HttpClient::allow`] in a chain.
    pub fn restricted_to(mut self, base: &str) -> Result<HttpClient, HttpError> {
        self.allow(base)?;
        Ok(self)
    }

    /// Sends `token` as a bearer token to the allowed origins (only to them: a client
    /// allowed everywhere sends it nowhere).
    pub fn with_token(mut self, token: Option<Token>) -> HttpClient {
        self.token = token;
        self
    }

    pub fn options(&self) -> &HttpOptions {
        &self.opts
    }

    /// The counters so far.
    pub fn stats(&self) -> HttpStats {
        self.state.lock().map(|s| s.stats).unwrap_or_default()
    }

    /// The allowed origins, for messages (`any` when unrestricted).
    pub fn describe_origins(&self) -> String {
        if self.origins.is_empty() {
            "any".to_string()
        } else {
            self.origins.join(", ")
        }
    }

    /// True when the client may contact `url`.
    pub fn allows(&self, url: &str) -> bool {
        match origin(url) {
            Some(o) => self.origins.is_empty() || self.origins.contains(&o),
            None => false,
        }
    }

    /// `text` without the token.
    pub fn redact(&self, text: &str) -> String {
        match &self.token {
            Some(t) => t.redact(text),
            None => text.to_string(),
        }
    }

    /// GETs a URL's body: a 200's bytes, or the error a caller maps (another status
    /// comes back as `Ok(Err(response))`).
    pub fn get(&self, url: &str) -> Result<Result<Vec<u8>, Response>, HttpError> {
        let r = self.send(&Request::get(url))?;
        Ok(if r.status == 200 { Ok(r.body) } else { Err(r) })
    }

    /// [`HttpClient::get`] with the body still counted against the memory budget.
    pub fn get_body(&self, url: &str) -> Result<Result<Body, Response>, HttpError> {
        let r = self.send(&Request::get(url))?;
        Ok(if r.status == 200 { Ok(r.into_body()) } else { Err(r) })
    }

    /// GETs a URL's body as a stream: a 200's [`BodyStream`] (read as the caller goes,
    /// never held whole: nothing of it counts against the memory budget but its
    /// buffers), or another status's answer (`Ok(Err(response))`, its body read as
    /// [`HttpClient::send`] reads it). Reaching the answer follows the client's whole
    /// policy (retries, waits, redirects, origins); see [`BodyStream`] for a body cut
    /// off on the way.
    pub fn get_stream(self: &Arc<Self>, url: &str) -> Result<Result<BodyStream, Response>, HttpError> {
        let (r, body) = self.exchange(&Request::get(url), &SystemPacer, true)?;
        match body {
            Some(body) if r.status == 200 => Ok(Ok(BodyStream::new(self.clone(), url, &r, body))),
            _ => Ok(Err(r)),
        }
    }

    /// Sends a request with the wall clock and real sleeps.
    pub fn send(&self, req: &Request) -> Result<Response, HttpError> {
        self.send_with(req, &SystemPacer)
    }

    fn bump(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
        }
    }

    /// Waits `wait` (for `kind`), within the longest single wait and the budget.
    fn pause(
        &self,
        url: &str,
        status: Option<u16>,
        kind: WaitKind,
        wait: Duration,
        pacer: &dyn Pacer,
    ) -> Result<(), HttpError> {
        if kind != WaitKind::Backoff && wait > self.opts.max_retry_after {
            return Err(HttpError::WaitTooLong {
                url: url.to_string(),
                status,
                kind,
                wait_secs: wait.as_secs(),
                limit_secs: self.opts.max_retry_after.as_secs(),
            });
        }
        if !self.opts.retry_budget.take(wait) {
            if self.opts.retry_budget.remaining().is_some() {
                return Err(HttpError::DeadlinePassed {
                    url: url.to_string(),
                    total_secs: self.opts.retry_budget.limit().as_secs(),
                });
            }
            return Err(HttpError::BudgetSpent {
                url: url.to_string(),
                status,
                budget_secs: self.opts.retry_budget.limit().as_secs(),
            });
        }
        pacer.waiting(&Wait { url: url_without_query(url).to_string(), status, kind, duration: wait });
        pacer.sleep(wait);
        self.bump(|s| s.stats.waited += wait);
        Ok(())
    }

    fn backoff(&self, retry: u32) -> Duration {
        self.opts.backoff.saturating_mul(2u32.saturating_pow(retry)).min(self.opts.max_retry_after)
    }

    /// Sends a GET under the client's policy and returns the final answer: any status
    /// that is not retried (2xx, 304, 4xx other than rate limits). Transport errors,
    /// 5xx and rate limits are retried; redirects are followed within the origin.
    pub fn send_with(&self, req: &Request, pacer: &dyn Pacer) -> Result<Response, HttpError> {
        self.exchange(req, pacer, false).map(|(r, _)| r)
    }

    /// [`HttpClient::send_with`]; with `stream`, a 2xx answer comes back with its body
    /// unread (the second value) for a [`BodyStream`] to read, and the request's
    /// timeout bounds reaching the answer and each read instead of the whole exchange
    /// (see [`HttpClient::get_stream`]).
    fn exchange(
        &self,
        req: &Request,
        pacer: &dyn Pacer,
        stream: bool,
    ) -> Result<(Response, Option<ureq::Body>), HttpError> {
        if !self.allows(&req.url) {
            return Err(HttpError::ForeignOrigin { url: req.url.clone(), allowed: self.describe_origins() });
        }
        // A write is sent once (a retried write could be applied twice), unless its
        // idempotency key lets the receiver drop a repeat.
        let attempts = if req.retry_safe { self.opts.attempts.max(1) } else { 1 };
        let mut url = req.url.clone();
        let mut retries = 0u32;
        let mut redirects = 0u32;
        loop {
            // A rate limit seen on an earlier answer: wait for its reset first.
            let blocked = self.state.lock().ok().and_then(|s| s.blocked_until);
            if let Some(until) = blocked {
                let now = pacer.now();
                if until >= now {
                    self.pause(&url, None, WaitKind::RateLimitReset, secs(until - now + 1), pacer)?;
                }
                self.bump(|s| s.blocked_until = None);
            }
            let auth = self
                .token
                .as_ref()
                .filter(|_| !self.origins.is_empty() && self.allows(&url))
                .map(|t| format!("Bearer {}", t.0));
            let left = self.opts.retry_budget.remaining();
            if left.is_some_and(|l| l.is_zero()) {
                return Err(HttpError::DeadlinePassed { url, total_secs: self.opts.retry_budget.limit().as_secs() });
            }
            let this_timeout = left.map_or(self.opts.timeout, |l| l.min(self.opts.timeout));
            self.bump(|s| s.stats.requests += 1);
            let sent = if req.is_write() {
                let mut call = if req.method == "PATCH" { self.agent.patch(&url) } else { self.agent.post(&url) };
                call = call.config().timeout_global(Some(this_timeout)).build();
                for (k, v) in &req.headers {
                    call = call.header(*k, v.as_str());
                }
                if let Some(a) = &auth {
                    call = call.header("Authorization", a.as_str());
                }
                call.send(req.body.as_deref().unwrap_or_default())
            } else {
                let config = self.agent.get(&url).config();
                let mut call = if stream {
                    // The body is read as its reader goes: time between reads is the
                    // reader's. Reaching the answer and each read are bounded here,
                    // the body's transfer time by the stream (`BodyStream`), and
                    // everything by the deadline when there is one.
                    config
                        .timeout_global(left)
                        .timeout_connect(Some(this_timeout))
                        .timeout_send_request(Some(this_timeout))
                        .timeout_recv_response(Some(this_timeout))
                        .timeout_per_read(Some(this_timeout))
                        .build()
                } else {
                    config.timeout_global(Some(this_timeout)).build()
                };
                for (k, v) in &req.headers {
                    call = call.header(*k, v.as_str());
                }
                if let Some(a) = &auth {
                    call = call.header("Authorization", a.as_str());
                }
                call.call()
            };
            let mut resp = match sent {
                Ok(r) => r,
                Err(e) => {
                    let detail = self.redact(&e.to_string());
                    if retries + 1 < attempts {
                        self.pause(&url, None, WaitKind::Backoff, self.backoff(retries), pacer)?;
                        retries += 1;
                        self.bump(|s| s.stats.retries += 1);
                        continue;
                    }
                    return Err(HttpError::Transport { url, detail });
                }
            };
            let status = resp.status().as_u16();
            let headers: Vec<(String, String)> = resp
                .headers()
                .iter()
                .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str().to_ascii_lowercase(), v.trim().to_string())))
                .collect();
            let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
            let remaining: Option<u64> = header("x-ratelimit-remaining").and_then(|v| v.parse().ok());
            let reset: Option<i64> = header("x-ratelimit-reset").and_then(|v| v.parse().ok());
            let now = pacer.now();
            let retry_after: Option<i64> = header("retry-after").and_then(|v| {
                v.parse::<i64>().ok().or_else(|| citriage_model::time::parse_http_date(v).map(|t| (t - now).max(0)))
            });
            if remaining == Some(0) {
                if let Some(r) = reset {
                    self.bump(|s| s.blocked_until = Some(r));
                }
            }
            // Redirects: within the origin only, and never for a write.
            if matches!(status, 301 | 302 | 303 | 307 | 308) && !req.is_write() {
                if let Some(loc) = header("location") {
                    let to = resolve(&url, loc);
                    if origin(&to).is_none() || origin(&to) != origin(&url) {
                        return Err(HttpError::CrossOrigin { url, status, to: self.redact(&to) });
                    }
                    if redirects >= self.opts.max_redirects {
                        return Err(HttpError::TooManyRedirects { url: req.url.clone(), max: self.opts.max_redirects });
                    }
                    redirects += 1;
                    url = to;
                    continue;
                }
            }
            if stream && (200..300).contains(&status) {
                let body = resp.into_body();
                let r = Response { url, status, headers, body: Vec::new(), hold: Hold::default() };
                return Ok((r, Some(body)));
            }
            let limit = if (200..300).contains(&status) { self.opts.max_bytes } else { ERROR_BODY_LIMIT };
            let hint: Option<u64> = header("content-length")
                .and_then(|v| v.parse().ok())
                .filter(|_| header("content-encoding").is_none_or(|e| e.eq_ignore_ascii_case("identity")));
            let mut reader = resp.body_mut().as_reader();
            let read = if (200..300).contains(&status) {
                match read_counted(&mut reader, limit, hint) {
                    Ok(b) => Ok(b),
                    Err(ReadLimit::TooLarge { limit }) => return Err(HttpError::TooLarge { url, limit }),
                    Err(ReadLimit::OverBudget { budget }) => return Err(HttpError::OverBudget { url, budget }),
                    Err(ReadLimit::Io(e)) => Err(e),
                }
            } else {
                // An error answer's body is only kept in part (small: not counted).
                let mut part = Vec::new();
                reader.take(limit).read_to_end(&mut part).map(|_| Body::uncounted(part))
            };
            if let Err(e) = read {
                // A cut-off body is retried like a transport error.
                let detail = self.redact(&format!("body read failed (truncated download?): {e}"));
                if retries + 1 < attempts {
                    self.pause(&url, Some(status), WaitKind::Backoff, self.backoff(retries), pacer)?;
                    retries += 1;
                    self.bump(|s| s.stats.retries += 1);
                    continue;
                }
                return Err(HttpError::Transport { url, detail });
            }
            let Body { bytes: body, hold } = read.unwrap_or_default();
            let says_limited = matches!(status, 403 | 429)
                && self.opts.rate_limit_message.as_deref().is_some_and(|m| {
                    String::from_utf8_lossy(&body).to_ascii_lowercase().contains(&m.to_ascii_lowercase())
                });
            let rate_limited =
                matches!(status, 403 | 429) && (retry_after.is_some() || remaining == Some(0) || says_limited);
            let wait = if rate_limited || status == 429 {
                Some(match (retry_after, remaining, reset) {
                    (Some(s), _, _) => (WaitKind::RetryAfter, secs(s)),
                    (None, Some(0), Some(r)) => (WaitKind::RateLimitReset, secs((r - now + 1).max(1))),
                    _ => match self.opts.rate_limit_wait {
                        Some(w) => (WaitKind::RetryAfter, w),
                        None => (WaitKind::Backoff, self.backoff(retries)),
                    },
                })
            } else if status >= 500 {
                Some(match retry_after {
                    Some(s) => (WaitKind::RetryAfter, secs(s)),
                    None => (WaitKind::Backoff, self.backoff(retries)),
                })
            } else {
                None
            };
            let Some((kind, wait)) = wait else {
                return Ok((Response { url, status, headers, body, hold }, None));
            };
            let limited = (rate_limited || status == 429).then_some(kind);
            if kind != WaitKind::Backoff && wait > self.opts.max_retry_after {
                return Err(HttpError::WaitTooLong {
                    url,
                    status: Some(status),
                    kind,
                    wait_secs: wait.as_secs(),
                    limit_secs: self.opts.max_retry_after.as_secs(),
                });
            }
            if retries + 1 >= attempts {
                let message = self.redact(&message_of(&body));
                return Err(HttpError::GaveUp { url, status, attempts, rate_limited: limited, message });
            }
            self.pause(&url, Some(status), kind, wait, pacer)?;
            if kind == WaitKind::RateLimitReset {
                self.bump(|s| s.blocked_until = None);
            }
            retries += 1;
            self.bump(|s| s.stats.retries += 1);
        }
    }

    /// A GET answered from or through `cache`: a stored 200 with an ETag is
    /// revalidated with `If-None-Match` (a 304 serves the stored body, its time
    /// updated); a 200, 404 or 410 (stored as 404) is stored with its ETag, next link
    /// and time. Other statuses come back unstored.
    pub fn send_cached(
        &self,
        req: &Request,
        cache: &dyn HttpCache,
        pacer: &dyn Pacer,
    ) -> Result<CachedAnswer, HttpError> {
        self.send_cached_checked(req, cache, pacer, &|_| Ok(()))
    }

    /// [`HttpClient::send_cached`], storing a 200 only when `check` accepts its body
    /// (otherwise the answer is [`CachedAnswer::Malformed`] and the cache is left as it
    /// was). A stored answer `check` refuses is not revalidated: the request is sent
    /// without `If-None-Match`, so a good answer can replace it.
    pub fn send_cached_checked(
        &self,
        req: &Request,
        cache: &dyn HttpCache,
        pacer: &dyn Pacer,
        check: &dyn Fn(&[u8]) -> Result<(), String>,
    ) -> Result<CachedAnswer, HttpError> {
        let cached = cache.get(&req.url);
        let conditional =
            cached.as_ref().filter(|c| c.status == 200 && check(&c.body).is_ok()).and_then(|c| c.etag.clone());
        let mut req = req.clone();
        if let Some(etag) = &conditional {
            req = req.header("If-None-Match", etag.as_str());
        }
        let r = self.send_with(&req, pacer)?;
        let now = pacer.now();
        match r.status {
            200 | 404 | 410 => {
                let status = if r.status == 200 { 200 } else { 404 };
                let answer = CachedResponse {
                    status,
                    etag: if status == 200 { r.header("etag").map(str::to_string) } else { None },
                    next: r.next_link(),
                    body: r.body,
                    fetched_at: now,
                };
                if status == 200 {
                    if let Err(why) = check(&answer.body) {
                        return Ok(CachedAnswer::Malformed { answer, why });
                    }
                }
                cache.put(&req.url, answer.clone());
                Ok(CachedAnswer::Stored { answer, freshness: Freshness::Live })
            }
            304 => match cached.filter(|_| conditional.is_some()) {
                Some(mut c) => {
                    c.fetched_at = now;
                    if let Some(e) = r.header("etag") {
                        c.etag = Some(e.to_string());
                    }
                    cache.put(&req.url, c.clone());
                    Ok(CachedAnswer::Stored { answer: c, freshness: Freshness::Revalidated })
                }
                None => Ok(CachedAnswer::Other(r)),
            },
            _ => Ok(CachedAnswer::Other(r)),
        }
    }
}

/// What identifies the object a streamed body comes from, to check that a resumed
/// transfer carries the same object.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    /// `ETag`.
    etag: Option<String>,
    /// GCS's `x-goog-generation`.
    generation: Option<String>,
    /// The transfer's `Content-Encoding` (decoded on the way, so offsets in the
    /// stream are not offsets in the transfer).
    encoded: bool,
    /// The `Content-Length` of a body sent as it is stored.
    length: Option<u64>,
}

impl Identity {
    fn of(r: &Response) -> Identity {
        let encoded = r.header("content-encoding").is_some_and(|e| !e.eq_ignore_ascii_case("identity"));
        Identity {
            etag: r.header("etag").map(str::to_string),
            generation: r.header("x-goog-generation").map(str::to_string),
            encoded,
            length: r.header("content-length").and_then(|v| v.parse().ok()).filter(|_| !encoded),
        }
    }

    /// Why `other` (a later answer for the same URL) is not this object, if it is not.
    fn differs(&self, other: &Identity) -> Option<String> {
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_string());
        if self.etag.is_some() && other.etag != self.etag {
            return Some(format!("its ETag changed from {} to {}", show(&self.etag), show(&other.etag)));
        }
        if self.generation.is_some() && other.generation != self.generation {
            return Some(format!(
                "its generation changed from {} to {}",
                show(&self.generation),
                show(&other.generation)
            ));
        }
        None
    }
}

/// A 200's body read as a stream ([`HttpClient::get_stream`]). It implements
/// [`Read`]; the bytes are the body's (a `Content-Encoding: gzip` transfer is inflated
/// by the transport, as [`HttpClient::send`] does).
///
/// **A transfer cut off on the way** (a transport error, a stalled read, more time
/// waiting for the body's bytes than the request timeout) is resumed where the reader
/// is, so the reader sees one unbroken body and never a partial one:
///
/// - the object is asked for again after the client's backoff, taken from the same
///   retry budget as every other retry, and with the client's whole policy (5xx and
///   rate limits retried, same-origin redirects, the deadline);
/// - when the body was sent as stored (no `Content-Encoding`), with
///   `Range: bytes=N-` (N: bytes read so far) and `If-Range` (its ETag): a `206` whose
///   `Content-Range` starts at N goes on where the cut was (GCS honours ranges);
/// - otherwise, or when the server answers `200` (no ranges, or the object changed),
///   the whole object is read again and its first N bytes skipped;
/// - either way the answer must be the same object (its `ETag` and GCS generation
///   unchanged, the same length): an object that changed fails the stream.
///
/// A body has [`HttpOptions::attempts`] transfers in all (the first included); after
/// the last one is cut, or when the retry budget or the deadline is spent, the read
/// fails with an I/O error whose inner error is the [`HttpError`] naming the URL and
/// how far it got. The reader must then discard what it parsed: ingestion does (see
/// `citriage_ingest`), so no half-read object is ever stored.
pub struct BodyStream {
    client: Arc<HttpClient>,
    /// The URL asked for (a resumption follows its redirects again).
    url: String,
    reader: Option<ureq::BodyReader<'static>>,
    identity: Identity,
    /// Bytes handed to the reader so far.
    delivered: u64,
    /// Bytes of the current transfer to drop before handing any out (a resumption
    /// that had to start from the beginning).
    skip: u64,
    /// Transfers made (the first included).
    transfers: u32,
    /// Time spent waiting for the current transfer's bytes.
    waited: Duration,
    failed: Option<HttpError>,
}

impl fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyStream")
            .field("url", &self.url)
            .field("delivered", &self.delivered)
            .field("transfers", &self.transfers)
            .finish()
    }
}

impl BodyStream {
    fn new(client: Arc<HttpClient>, url: &str, r: &Response, body: ureq::Body) -> BodyStream {
        BodyStream {
            client,
            url: url.to_string(),
            reader: Some(body.into_reader()),
            identity: Identity::of(r),
            delivered: 0,
            skip: 0,
            transfers: 1,
            waited: Duration::ZERO,
            failed: None,
        }
    }

    /// Bytes read so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Transfers made so far (1 when the body was never cut).
    pub fn transfers(&self) -> u32 {
        self.transfers
    }

    /// After a cut (`why`): a new transfer that goes on where the reader is, or the
    /// error that ends the stream.
    fn resume(&mut self, why: &str) -> Result<(), HttpError> {
        self.reader = None;
        let attempts = self.client.opts.attempts.max(1);
        let gave_up = |detail: String| HttpError::Transport { url: self.url.clone(), detail };
        if self.transfers >= attempts {
            return Err(gave_up(format!(
                "the body was cut after {} bytes, still after {} attempts: {why}",
                self.delivered, self.transfers
            )));
        }
        let retry = self.transfers - 1;
        self.client.pause(&self.url, None, WaitKind::Backoff, self.client.backoff(retry), &SystemPacer)?;
        self.client.bump(|s| s.stats.retries += 1);
        self.transfers += 1;
        let ranged = !self.identity.encoded && self.delivered > 0;
        let mut req = Request::get(&self.url);
        if ranged {
            req = req.header("Range", format!("bytes={}-", self.delivered));
            if let Some(e) = &self.identity.etag {
                req = req.header("If-Range", e.as_str());
            }
        }
        let (r, body) = match self.client.exchange(&req, &SystemPacer, true) {
            Ok(x) => x,
            // Asking again failed, after its own retries.
            Err(HttpError::Transport { detail, .. }) => {
                return Err(gave_up(format!(
                    "the body was cut after {} bytes ({why}) and asking for the rest failed: {detail}",
                    self.delivered
                )))
            }
            Err(e) => return Err(e),
        };
        let Some(body) = body else {
            return Err(gave_up(format!(
                "the body was cut after {} bytes ({why}) and resuming it got HTTP {}",
                self.delivered, r.status
            )));
        };
        let now = Identity::of(&r);
        if let Some(change) = self.identity.differs(&now) {
            return Err(gave_up(format!(
                "the object changed while it was read ({change}); {} bytes had been read",
                self.delivered
            )));
        }
        match r.status {
            206 if ranged => {
                // `bytes START-END/TOTAL`: it must go on exactly where the cut was.
                let range = r.header("content-range").unwrap_or_default().to_string();
                let start = range.strip_prefix("bytes ").and_then(|x| x.split('-').next()).and_then(|x| x.parse().ok());
                let total = range.rsplit('/').next().and_then(|x| x.parse::<u64>().ok());
                let same_total = match (self.identity.length, total) {
                    (Some(a), Some(b)) => a == b,
                    _ => true,
                };
                if start != Some(self.delivered) || !same_total {
                    return Err(gave_up(format!(
                        "resuming at byte {} got Content-Range {range:?}, not the rest of the object",
                        self.delivered
                    )));
                }
                self.skip = 0;
            }
            200 => {
                if now.length.is_some() && self.identity.length.is_some() && now.length != self.identity.length {
                    return Err(gave_up(format!(
                        "the object changed while it was read (length {:?}, then {:?})",
                        self.identity.length, now.length
                    )));
                }
                self.skip = self.delivered;
            }
            other => {
                return Err(gave_up(format!(
                    "the body was cut after {} bytes ({why}) and resuming it got HTTP {other}",
                    self.delivered
                )))
            }
        }
        self.waited = Duration::ZERO;
        self.reader = Some(body.into_reader());
        Ok(())
    }
}

impl Read for BodyStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(e) = &self.failed {
            return Err(std::io::Error::other(e.clone()));
        }
        if buf.is_empty() {
            return Ok(0);
        }
        let timeout = self.client.opts.timeout;
        let mut scratch = Vec::new();
        loop {
            let Some(reader) = self.reader.as_mut() else {
                return Ok(0);
            };
            let started = std::time::Instant::now();
            let got = if self.skip > 0 {
                scratch.resize(buf.len().max(64 << 10).min(usize::try_from(self.skip).unwrap_or(usize::MAX)), 0);
                reader.read(&mut scratch)
            } else {
                reader.read(buf)
            };
            self.waited += started.elapsed();
            let cut = match got {
                Ok(0) if self.skip > 0 => Some("the object ended before the bytes already read".to_string()),
                Ok(0) => return Ok(0),
                Ok(n) if self.skip > 0 => {
                    self.skip -= (n as u64).min(self.skip);
                    None
                }
                Ok(n) => {
                    self.delivered += n as u64;
                    if self.waited > timeout {
                        // Handed out; the next read goes on with a new transfer.
                        self.reader = None;
                        if let Err(e) = self.resume(&format!(
                            "its bytes took longer than the {}s request timeout to arrive",
                            timeout.as_secs()
                        )) {
                            self.failed = Some(e);
                        }
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => None,
                Err(e) => Some(self.client.redact(&e.to_string())),
            };
            if let Some(why) = cut {
                if let Err(e) = self.resume(&format!("body read failed (truncated download?): {why}")) {
                    self.failed = Some(e.clone());
                    return Err(std::io::Error::other(e));
                }
            }
        }
    }
}

/// `: message`, or nothing for an empty message.
fn suffix(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

fn secs(s: i64) -> Duration {
    Duration::from_secs(s.max(0) as u64)
}

/// A short message from an error body: a JSON `message`, else its first 200 characters.
pub fn message_of(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
        if let Some(m) = v.get("message").and_then(serde_json::Value::as_str) {
            return m.to_string();
        }
    }
    String::from_utf8_lossy(body).chars().take(200).collect::<String>().trim().to_string()
}

/// Guards a paginated listing: every page token or next link must be new, and there
/// are at most so many pages.
#[derive(Debug)]
pub struct PageGuard {
    url: String,
    seen: BTreeSet<String>,
    max: usize,
}

impl PageGuard {
    /// Pages a listing may have unless told otherwise.
    pub const MAX_PAGES: usize = 100_000;

    /// A guard for the listing at `url` (for messages).
    pub fn new(url: impl Into<String>) -> PageGuard {
        PageGuard { url: url.into(), seen: BTreeSet::new(), max: PageGuard::MAX_PAGES }
    }

    /// At most `max` pages after the first.
    pub fn with_max(mut self, max: usize) -> PageGuard {
        self.max = max;
        self
    }

    /// Records the next page's token or link; an error when the server gave it before
    /// or the listing is longer than allowed.
    pub fn next(&mut self, page: &str) -> Result<(), HttpError> {
        if self.seen.len() >= self.max {
            return Err(HttpError::TooManyPages { url: self.url.clone(), max: self.max });
        }
        if self.seen.insert(page.to_string()) {
            Ok(())
        } else {
            Err(HttpError::RepeatedPage { url: self.url.clone(), page: page.to_string() })
        }
    }
}

/// `scheme://host[:port]` of an http(s) URL, lowercased, default ports dropped.
pub fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let hostport = authority.rsplit('@').next()?.to_ascii_lowercase();
    if hostport.is_empty() {
        return None;
    }
    let hostport = match (scheme.as_str(), hostport.rsplit_once(':')) {
        ("http", Some((h, "80"))) | ("https", Some((h, "443"))) => h.to_string(),
        _ => hostport,
    };
    Some(format!("{scheme}://{hostport}"))
}

/// A `Location` resolved against the URL that sent it.
fn resolve(base: &str, loc: &str) -> String {
    if loc.starts_with("http://") || loc.starts_with("https://") {
        return loc.to_string();
    }
    let Some(o) = origin(base) else { return loc.to_string() };
    if let Some(rest) = loc.strip_prefix("//") {
        let scheme = o.split("://").next().unwrap_or("https");
        return format!("{scheme}://{rest}");
    }
    if loc.starts_with('/') {
        return format!("{o}{loc}");
    }
    // A relative path: against the base's folder.
    let path_start = base.split_once("://").map_or(0, |(s, r)| s.len() + 3 + r.find('/').unwrap_or(r.len()));
    let path = base[path_start..].split(['?', '#']).next().unwrap_or("");
    let folder = match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    };
    format!("{o}{folder}{loc}")
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

/// Percent-encodes everything but RFC 3986 unreserved characters (a path segment or a
/// query value).
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
    fn origins_and_redirect_targets() {
        assert_eq!(origin("HTTPS://Api.GitHub.com/repos/a").as_deref(), Some("https://api.github.com"));
        assert_eq!(origin("http://127.0.0.1:80/x").as_deref(), Some("http://127.0.0.1"));
        assert_eq!(origin("http://127.0.0.1:8080?x").as_deref(), Some("http://127.0.0.1:8080"));
        assert_eq!(origin("https://a.b:443"), origin("https://a.b/"));
        assert_ne!(origin("http://a.b"), origin("https://a.b"));
        assert_eq!(origin("ftp://a.b/x"), None);
        assert_eq!(origin("http:///x"), None);
        assert_eq!(resolve("http://h:1/a/b?q", "/c"), "http://h:1/c");
        assert_eq!(resolve("http://h:1/a/b?q", "c/d"), "http://h:1/a/c/d");
        assert_eq!(resolve("https://h/a", "//o/x"), "https://o/x");
        assert_eq!(resolve("https://h/a", "http://o/x"), "http://o/x");
    }

    #[test]
    fn waits_show_urls_without_their_query() {
        assert_eq!(url_without_query("https://h/a/b?access_token=x&p=2#f"), "https://h/a/b");
        assert_eq!(url_without_query("https://h/a#f?x"), "https://h/a");
        assert_eq!(url_without_query("https://h/a"), "https://h/a");
    }

    #[test]
    fn tokens_are_redacted_and_only_from_candidates() {
        let t = Token::new("ghp_secret123").unwrap();
        assert_eq!(format!("{t:?}"), "Token(redacted)");
        assert_eq!(t.redact("bad ghp_secret123 here"), "bad [redacted] here");
        assert!(Token::new("  ").is_none());
        assert!(Token::new("a\nb").is_none());
        assert_eq!(Token::first_of([None, Some("".into()), Some("x".into())]), Token::new("x"));
        let c = HttpClient::new(HttpOptions::default()).with_token(Some(t));
        assert!(!format!("{c:?}").contains("ghp_secret123"));
    }

    #[test]
    fn links_pages_and_encoding() {
        let l = r#"<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last""#;
        assert_eq!(next_link(l).as_deref(), Some("https://api.github.com/x?page=2"));
        assert_eq!(next_link(r#"<https://a/x?page=1>; rel="prev""#), None);
        assert_eq!(percent_encode("repo:a/b is:pr \"x y\""), "repo%3Aa%2Fb%20is%3Apr%20%22x%20y%22");
        let mut g = PageGuard::new("http://h/list");
        assert!(g.next("t1").is_ok() && g.next("t2").is_ok());
        assert!(matches!(g.next("t1"), Err(HttpError::RepeatedPage { .. })));
        let mut g = PageGuard::new("http://h/list").with_max(2);
        assert!(g.next("a").is_ok() && g.next("b").is_ok());
        assert!(matches!(g.next("c"), Err(HttpError::TooManyPages { max: 2, .. })));
    }

    #[test]
    fn the_budget_is_shared_by_clones() {
        let opts = HttpOptions { retry_budget: RetryBudget::new(Duration::from_secs(3)), ..Default::default() };
        let other = opts.clone();
        assert!(opts.retry_budget.take(Duration::from_secs(2)));
        assert!(!other.retry_budget.take(Duration::from_secs(2)), "the clone sees the wait taken");
        assert!(other.retry_budget.take(Duration::from_secs(1)));
        assert_eq!(opts.retry_budget.spent(), Duration::from_secs(3));
    }

    #[test]
    fn error_messages() {
        assert_eq!(message_of(br#"{"message":"API rate limit exceeded"}"#), "API rate limit exceeded");
        assert_eq!(message_of(b"  plain text "), "plain text");
        let c = HttpClient::new(HttpOptions::default()).restricted_to("https://api.github.com").unwrap();
        assert!(c.allows("https://api.github.com/repos"));
        assert!(!c.allows("https://evil.example/repos"));
        assert!(matches!(c.send(&Request::get("https://evil.example/x")), Err(HttpError::ForeignOrigin { .. })));
    }
}
