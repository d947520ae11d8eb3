//! `citriage serve`: a local web dashboard over one citriage store. This module owns
//! the server: binding, the tokio runtime, the in-memory view of the store
//! ([`index::WebIndex`], rebuilt in the background when the store changes), the
//! response cache with ETags, the Host-header check against DNS rebinding, gzip,
//! security and caching headers, graceful shutdown, and the router. Every page's data
//! is also served as JSON under `/api/v1/`.
//!
//! The modules, each importing only those below it: `pages` (the HTML) and `svg`
//! (the charts) over `data` (every page's data, the search results included, read
//! from the view) over `index` (the view and how it is built from the store) over
//! `search` (the failure-text index and the query language) and `summary` (figures
//! computed once per view); `html`, `style` and `error` at the bottom (stored Markdown
//! is rendered by `citriage_report::html`).
//! This file uses them all and none uses it.
//!
//! The server reads the store only, and nothing but the store file and what is
//! compiled into the binary.

use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use citriage_store::Store;
use index::{IndexSettings, WebIndex};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

mod blame;
pub mod data;
mod error;
mod feed;
pub mod html;
pub mod index;
pub mod ops;
mod pages;
mod pr;
mod records;
pub mod search;
mod style;
pub mod summary;
pub mod svg;

pub use error::WebError;

use style::{fnv64, STYLE_CSS};

/// The address `citriage serve` listens on unless told otherwise.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// Why the server could not start or stopped.
#[derive(Debug)]
pub enum ServeError {
    /// The store file does not exist (the server never creates one).
    MissingStore(PathBuf),
    /// The store exists but cannot be opened or read.
    Store(citriage_store::StoreError),
    /// The store could be opened but its view could not be built.
    Index(String),
    /// Binding, the runtime or the connection loop failed.
    Io(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::MissingStore(p) => write!(f, "store {} does not exist", p.display()),
            ServeError::Store(e) => write!(f, "{e}"),
            ServeError::Index(e) => write!(f, "reading the store: {e}"),
            ServeError::Io(e) => write!(f, "serve: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// How the dashboard serves a store.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// What the in-memory view covers.
    pub index: IndexSettings,
    /// The GitHub repository (`owner/name`) of the "file an issue" and issue-search links.
    pub issue_repo: String,
    /// Host names accepted in the `Host` header besides `localhost` and IP addresses
    /// (requests naming any other host are refused: DNS-rebinding protection).
    pub allow_hosts: Vec<String>,
    /// Bytes of rendered answers kept in the response cache.
    pub cache_bytes: usize,
    /// Render every job page, cluster page and unfiltered cluster list into the cache
    /// in the background whenever a view is built.
    pub prewarm: bool,
    /// The host name the dashboard is reached by (a team's server); the Host check
    /// accepts it besides `allow_hosts`.
    pub public_name: Option<String>,
    /// Who may ask for write actions (`POST /admin/refresh`); nobody by default.
    pub writes: ops::WriteGate,
    /// The wall clock (Unix seconds) for ingest lag in `/metrics`; none: lag left out.
    pub now: Option<fn() -> i64>,
    /// How long a client has to send a request's headers, counted from when the
    /// connection starts waiting for them: a new connection, and a kept-alive one
    /// after each answer (its idle time). A client that takes longer (headers sent a
    /// byte at a time, a connection held open and silent) is disconnected.
    pub header_timeout: Duration,
    /// How long a client has to send a request's body, counted from when its headers
    /// were read. A body still coming after that (sent a byte at a time) is answered
    /// 408 and its connection closed.
    pub body_timeout: Duration,
    /// The largest request body read, in bytes (every route: the dashboard's, and the
    /// MCP endpoint's JSON-RPC messages). A larger one, declared or sent, is answered
    /// 413 and its connection closed; a body on a request that needs none is read
    /// within this cap and dropped.
    pub body_limit: usize,
    /// The GitHub API base the link form reads references from (through the store's
    /// cache).
    pub github_api: String,
    /// Checkouts of tested repositories (`ORG/REPO=PATH`) the pattern and job pages
    /// read to rank the commits of their regression windows; none: windows only.
    pub checkouts: Vec<String>,
}

/// The default [`ServeOptions::header_timeout`].
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`ServeOptions::body_timeout`].
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`ServeOptions::body_limit`]: 4 MiB, the MCP endpoint's own cap on a
/// message.
pub const BODY_LIMIT: usize = 4 << 20;

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            index: IndexSettings::default(),
            issue_repo: "kubernetes/kubernetes".into(),
            allow_hosts: Vec::new(),
            cache_bytes: 128 << 20,
            prewarm: true,
            public_name: None,
            writes: ops::WriteGate::default(),
            now: None,
            header_timeout: HEADER_TIMEOUT,
            body_timeout: BODY_TIMEOUT,
            body_limit: BODY_LIMIT,
            github_api: citriage_github::DEFAULT_API_BASE.to_string(),
            checkouts: Vec::new(),
        }
    }
}

/// Store reads (documents, a cluster's latest failures) running at once.
const MAX_CONCURRENT_READS: usize = 4;
/// How often the store is checked for changes.
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Rendered answers by (view generation, URI, gzip accepted).
#[derive(Default)]
struct Cache {
    entries: HashMap<(u64, String, bool), Arc<Cached>>,
    order: VecDeque<(u64, String, bool)>,
    bytes: usize,
    /// Requests answered from the cache and requests that had to be rendered.
    hits: u64,
    misses: u64,
}

impl Cache {
    /// Drops every answer (a new view), keeping the counters.
    fn clear(&mut self) {
        self.entries.clear();
        self.order.clear();
        self.bytes = 0;
    }
}

struct Cached {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    etag: HeaderValue,
}

struct Freshness {
    last_check: Instant,
    /// A changed stamp seen at the last check: the view is rebuilt once the stamp
    /// stays the same for a whole check interval (writes have paused).
    pending: Option<String>,
    /// The connection whose `data_version` tells that another one committed.
    watcher: Store,
}

struct Shared {
    db: PathBuf,
    opts: ServeOptions,
    view: RwLock<Arc<WebIndex>>,
    generation: AtomicU64,
    /// The last generation whose pages were all rendered ahead.
    prewarmed: AtomicU64,
    rebuilding: AtomicBool,
    fresh: Mutex<Freshness>,
    cache: Mutex<Cache>,
    pool: Mutex<Vec<Store>>,
    reads: tokio::sync::Semaphore,
    hosts: Vec<String>,
    latency: ops::Latency,
}

/// Shared state of the server's handlers.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Builds the in-memory view of the store at `db`; `stamp` records which state of the
/// store it shows (the watcher's `data_version` read before building).
pub fn build_index(
    db: &std::path::Path,
    stamp: Option<String>,
    settings: &IndexSettings,
) -> Result<WebIndex, WebError> {
    let mut store = Store::open(db)?;
    store.limit_page_cache(index::READ_PAGE_CACHE_KIB)?;
    WebIndex::build(&mut store, stamp, settings)
}

impl AppState {
    /// Opens the store, builds its view, and prepares the state.
    pub fn new(db: PathBuf, opts: ServeOptions) -> Result<AppState, ServeError> {
        if !citriage_store::Location::from_path(&db).exists() {
            return Err(ServeError::MissingStore(db));
        }
        // A connection kept open for the server's life: its `data_version` moves when
        // another connection commits (reads never move it).
        let watcher = Store::open(&db).map_err(ServeError::Store)?;
        let stamp = watcher.data_version().map_err(ServeError::Store)?.to_string();
        let view = build_index(&db, Some(stamp), &opts.index).map_err(|e| ServeError::Index(e.to_string()))?;
        let mut hosts = vec!["localhost".to_string()];
        hosts.extend(opts.allow_hosts.iter().map(|h| h.to_ascii_lowercase()));
        hosts.extend(opts.public_name.iter().map(|h| h.to_ascii_lowercase()));
        Ok(AppState(Arc::new(Shared {
            db,
            opts,
            view: RwLock::new(Arc::new(view)),
            generation: AtomicU64::new(1),
            prewarmed: AtomicU64::new(0),
            rebuilding: AtomicBool::new(false),
            fresh: Mutex::new(Freshness { last_check: Instant::now(), pending: None, watcher }),
            cache: Mutex::new(Cache::default()),
            pool: Mutex::new(Vec::new()),
            reads: tokio::sync::Semaphore::new(MAX_CONCURRENT_READS),
            hosts,
            latency: ops::Latency::default(),
        })))
    }

    /// The current view.
    pub fn view(&self) -> Arc<WebIndex> {
        self.0.view.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The view's generation; checks (at most once a second) whether the store changed
    /// and, once writes have paused, rebuilds the view in the background.
    fn generation(&self) -> u64 {
        let s = &self.0;
        let gen = s.generation.load(Ordering::Acquire);
        let mut f = lock(&s.fresh);
        if f.last_check.elapsed() < CHECK_EVERY {
            return gen;
        }
        f.last_check = Instant::now();
        let stamp = data_version_stamp(&mut f.watcher);
        if stamp == self.view().stamp {
            f.pending = None;
            return gen;
        }
        if f.pending != stamp {
            f.pending = stamp;
            return gen;
        }
        f.pending = None;
        drop(f);
        if !s.rebuilding.swap(true, Ordering::AcqRel) {
            let me = self.clone();
            std::thread::spawn(move || {
                let s = &me.0;
                let t = Instant::now();
                match build_index(&s.db, stamp, &s.opts.index) {
                    Ok(v) => {
                        let (builds, jobs) = (v.builds.len(), v.jobs.len());
                        *s.view.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(v);
                        let generation = s.generation.fetch_add(1, Ordering::AcqRel) + 1;
                        lock(&s.cache).clear();
                        let seconds = t.elapsed().as_secs_f64();
                        tracing::info!(generation, builds, jobs, seconds, "view rebuilt after the store changed");
                    }
                    Err(e) => tracing::error!(error = %e, "rebuilding the view failed; the previous view is served"),
                }
                s.rebuilding.store(false, Ordering::Release);
            });
        }
        gen
    }

    /// True once the current view's pages have been rendered ahead (see
    /// [`ServeOptions::prewarm`]).
    pub fn prewarmed(&self) -> bool {
        let s = &self.0;
        s.prewarmed.load(Ordering::Acquire) == s.generation.load(Ordering::Acquire)
    }

    /// The store file this state serves.
    pub fn db_path(&self) -> &std::path::Path {
        &self.0.db
    }

    /// The current view, after the same freshness check a request makes (for callers
    /// that answer from the view outside the router, such as the MCP server).
    pub fn fresh_view(&self) -> Arc<WebIndex> {
        self.generation();
        self.view()
    }

    /// Appends evidence items to the store's ledger through the connection that
    /// watches the store: SQLite's `data_version` does not move for a connection's own
    /// commits, so citing evidence does not make the view rebuild. Returns how many
    /// items were new.
    pub fn record_evidence(&self, items: &[citriage_model::Evidence], read_at: &str) -> Result<usize, WebError> {
        Ok(lock(&self.0.fresh).watcher.record_evidence(items, read_at)?)
    }

    /// Rebuilds the view now (tests, and callers that just wrote to the store).
    pub fn refresh(&self) -> Result<(), WebError> {
        let s = &self.0;
        let stamp = lock(&s.fresh).watcher.data_version().ok().map(|v| v.to_string());
        let v = build_index(&s.db, stamp, &s.opts.index)?;
        *s.view.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(v);
        s.generation.fetch_add(1, Ordering::AcqRel);
        lock(&s.cache).clear();
        Ok(())
    }
}

/// The dashboard's routes (pages, `/api/v1/`, the stylesheet) over a prepared state,
/// with the Host check, the response cache, gzip and the security headers.
pub fn router(state: AppState) -> Router {
    router_with(state, Vec::new())
}

/// [`router`] with other routers nested under their prefixes (see [`Server::mount`]).
pub fn router_with(state: AppState, mounted: Vec<(String, Router)>) -> Router {
    let mut r = Router::new();
    for (prefix, service) in mounted {
        r = r.nest_service(&prefix, service);
    }
    r.route("/", get(page_overview))
        .route("/jobs", get(page_jobs))
        .route("/jobs/{job}", get(page_job))
        .route("/builds/{job}/{id}", get(page_build))
        .route("/tests", get(page_test))
        .route("/clusters", get(page_clusters))
        .route("/clusters/{profile}/{id}", get(page_cluster))
        .route("/drift", get(page_drift))
        .route("/search", get(page_search))
        .route("/payloads", get(page_payloads))
        .route("/payloads/{tag}", get(page_payload))
        .route("/reports", get(page_reports))
        .route("/reports/{kind}/{*key}", get(page_report))
        .route("/static/style.css", get(style))
        .route("/favicon.ico", get(favicon))
        .route("/api/v1", get(api_index))
        .route("/api/v1/", get(api_index))
        .route("/api/v1/overview", get(api_overview))
        .route("/api/v1/changes", get(api_changes))
        .route("/api/v1/jobs", get(api_jobs))
        .route("/api/v1/jobs/{job}", get(api_job))
        .route("/api/v1/builds/{job}/{id}", get(api_build))
        .route("/api/v1/tests", get(api_test))
        .route("/api/v1/clusters", get(api_clusters))
        .route("/api/v1/clusters/{profile}/{id}", get(api_cluster))
        .route("/api/v1/drift", get(api_drift))
        .route("/api/v1/search", get(api_search))
        .route("/api/v1/payloads", get(api_payloads))
        .route("/api/v1/payloads/{tag}", get(api_payload))
        .route("/api/v1/reports", get(api_reports))
        .route("/api/v1/reports/{kind}/{*key}", get(api_report))
        .route("/api/v1/status", get(api_status))
        .route("/api/v1/sources", get(api_sources))
        .route("/api/v1/alerts", get(api_alerts))
        .route("/alerts.atom", get(alerts_feed))
        .route("/status", get(page_status))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/admin/refresh", post(admin_refresh))
        .route("/prs/{n}", get(page_pr_number))
        .route("/prs/{org}/{repo}/{n}", get(page_pr))
        .route("/api/v1/prs/{org}/{repo}/{n}", get(api_pr))
        .route("/records", get(page_records))
        .route("/records/link", post(post_record_link))
        .route("/api/v1/records", get(api_records))
        .fallback(not_found)
        .with_state(state.clone())
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(axum::middleware::from_fn_with_state(state.clone(), cache))
        .layer(axum::middleware::from_fn_with_state(state.clone(), body_guard))
        .layer(axum::middleware::from_fn_with_state(state.clone(), host_check))
        // Outside every layer that answers by itself (the Host check, the body guard,
        // the cache's 304s), so every answer carries the security headers.
        .layer(axum::middleware::map_response(headers))
        .layer(axum::middleware::from_fn_with_state(state, timing))
}

/// The store's data version, read from a request's task. PostgreSQL's synchronous
/// client runs a small runtime of its own for each call, which cannot start on a thread
/// that drives the server's runtime: there the version is read on a thread of its own.
fn data_version_stamp(watcher: &mut Store) -> Option<String> {
    if watcher.backend() == citriage_store::Backend::Sqlite {
        return watcher.data_version().ok().map(|v| v.to_string());
    }
    std::thread::scope(|sc| sc.spawn(move || watcher.data_version().ok()).join().ok().flatten()).map(|v| v.to_string())
}

/// Records each request's latency for `/metrics` and logs it (method, path without
/// its query, route class, status, milliseconds; never a header).
async fn timing(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let class = ops::route_class(req.uri().path());
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let t = Instant::now();
    let r = next.run(req).await;
    let secs = t.elapsed().as_secs_f64();
    st.0.latency.record(class, secs);
    tracing::info!(
        method = %method,
        path = %path,
        route = class,
        status = r.status().as_u16(),
        millis = secs * 1000.0,
        "request served"
    );
    r
}

/// Paths that describe the server as it is now: never cached.
fn live_path(path: &str) -> bool {
    matches!(
        path,
        "/api/v1/status"
            | "/api/v1/sources"
            | "/status"
            | "/healthz"
            | "/readyz"
            | "/metrics"
            | "/records"
            | "/api/v1/records"
    )
}

fn text(status: StatusCode, content_type: &'static str, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-store")], body).into_response()
}

/// Liveness: the process answers.
async fn healthz() -> Response {
    text(StatusCode::OK, "text/plain; charset=utf-8", "ok\n".into())
}

/// Readiness: the view is built and the store answers.
async fn readyz(State(st): State<AppState>) -> Response {
    match with_store(&st, |s| Ok(s.schema_version()?)).await {
        Ok(v) => text(StatusCode::OK, "text/plain; charset=utf-8", format!("ready (schema {v})\n")),
        Err(e) => text(StatusCode::SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", format!("not ready: {e}\n")),
    }
}

async fn sources(st: &AppState) -> Result<Vec<citriage_store::SourceStatus>, WebError> {
    with_store(st, |s| Ok(s.source_statuses()?)).await
}

/// Prometheus text: the view's figures, each source's ingest status, request latency.
async fn metrics(State(st): State<AppState>) -> Response {
    let sources = match sources(&st).await {
        Ok(s) => s,
        Err(e) => return text(StatusCode::SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", format!("store: {e}\n")),
    };
    let v = st.view();
    let figures = ops::Figures {
        builds: v.builds.len(),
        jobs: v.jobs.len(),
        view_generation: st.0.generation.load(Ordering::Acquire),
        sources: &sources,
        now: st.0.opts.now.map(|f| f()),
    };
    text(StatusCode::OK, "text/plain; version=0.0.4; charset=utf-8", ops::metrics(&figures, &st.0.latency))
}

async fn api_sources(State(st): State<AppState>) -> Response {
    json_answer(sources(&st).await)
}

/// How many alerts the feed and the API show.
const ALERTS_SHOWN: usize = 200;

async fn alerts(st: &AppState) -> Result<Vec<citriage_store::StoredAlert>, WebError> {
    with_store(st, |s| Ok(s.alerts(None, Some(ALERTS_SHOWN))?)).await
}

/// The newest alerts (held ones included, with why), newest first.
async fn api_alerts(State(st): State<AppState>) -> Response {
    json_answer(alerts(&st).await.map(|mut v| {
        v.reverse();
        v
    }))
}

/// The alerts as an Atom feed.
async fn alerts_feed(State(st): State<AppState>) -> Response {
    match alerts(&st).await {
        Ok(v) => text(StatusCode::OK, "application/atom+xml; charset=utf-8", feed::atom(&v, ALERTS_SHOWN)),
        Err(e) => text(e.status(), "text/plain; charset=utf-8", format!("{}\n", e.message())),
    }
}

async fn page_status(State(st): State<AppState>) -> Response {
    let now = st.0.opts.now.map(|f| f());
    html_answer(sources(&st).await.map(|s| ops::status_page(&s, now)))
}

/// A write action: rebuild the view from the store now. Needs the write token or
/// the trusted proxy's header.
async fn admin_refresh(State(st): State<AppState>, headers: HeaderMap) -> Response {
    if !st.0.opts.writes.open() {
        return text(
            StatusCode::FORBIDDEN,
            "text/plain; charset=utf-8",
            "write actions are off: start serve with CITRIAGE_WRITE_TOKEN set or --trusted-user-header\n".into(),
        );
    }
    if !st.0.opts.writes.allows(&headers) {
        return text(StatusCode::UNAUTHORIZED, "text/plain; charset=utf-8", "a write needs the write token\n".into());
    }
    let me = st.clone();
    match tokio::task::spawn_blocking(move || me.refresh()).await {
        Ok(Ok(())) => text(StatusCode::OK, "text/plain; charset=utf-8", "refreshed\n".into()),
        Ok(Err(e)) => text(StatusCode::INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", format!("{e}\n")),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", format!("{e}\n")),
    }
}

/// A bound (not yet running) server.
pub struct Server {
    state: AppState,
    listener: std::net::TcpListener,
    /// Routers mounted beside the dashboard's ([`Server::mount`]).
    mounted: Vec<(String, Router)>,
}

impl Server {
    /// Checks that the store exists and opens, builds its view, and binds the address
    /// (port 0 picks a free port; see [`Server::local_addr`]).
    pub fn bind(db: PathBuf, addr: SocketAddr) -> Result<Server, ServeError> {
        Server::bind_with(db, addr, ServeOptions::default())
    }

    /// [`Server::bind`] with options.
    pub fn bind_with(db: PathBuf, addr: SocketAddr, opts: ServeOptions) -> Result<Server, ServeError> {
        let state = AppState::new(db, opts)?;
        let listener = std::net::TcpListener::bind(addr).map_err(ServeError::Io)?;
        listener.set_nonblocking(true).map_err(ServeError::Io)?;
        Ok(Server { state, listener, mounted: Vec::new() })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.listener.local_addr().map_err(ServeError::Io)
    }

    /// The server's state (its view of the store).
    pub fn state(&self) -> AppState {
        self.state.clone()
    }

    /// Mounts another service's router under `prefix` (`/mcp`). Its requests pass the
    /// same Host check and security headers as the dashboard's; they are not cached,
    /// and event streams are passed through as they come.
    pub fn mount(mut self, prefix: &str, service: Router) -> Server {
        self.mounted.push((prefix.to_string(), service));
        self
    }

    /// Serves until `shutdown` completes, then finishes the requests in flight.
    pub fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), ServeError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(ServeError::Io)?;
        let state = self.state.clone();
        let header_timeout = state.0.opts.header_timeout;
        let app = router_with(self.state, self.mounted);
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(self.listener)?;
            if state.0.opts.prewarm {
                tokio::spawn(prewarm_loop(state, app.clone()));
            }
            accept_loop(listener, app, header_timeout, shutdown).await;
            Ok(())
        })
        .map_err(ServeError::Io)
    }
}

/// Serves connections until `shutdown` completes, then lets the requests in flight
/// finish. This is the one place connections are set up, for the dashboard and the
/// MCP endpoint mounted beside it: HTTP/1.1 with a timer, so a client must send each
/// request's headers within `header_timeout` of the connection waiting for them
/// (slow headers and idle kept-alive connections are dropped), while every other
/// connection is served on its own task meanwhile.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: wait a little, as a busy
                // server must, instead of spinning.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // A client that went away or broke the protocol ends only its connection.
            let _ = conn.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

impl Server {
    /// Serves on a thread of its own until the returned handle is stopped or dropped
    /// (benchmarks, tests, embedding).
    pub fn spawn(self) -> Result<Running, ServeError> {
        let addr = self.local_addr()?;
        let state = self.state();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("citriage-serve".into())
            .spawn(move || {
                self.run(async move {
                    let _ = rx.await;
                })
            })
            .map_err(ServeError::Io)?;
        Ok(Running { addr, state, stop: Some(tx), thread: Some(thread) })
    }
}

/// A server running on its own thread; dropping it stops the server and waits.
pub struct Running {
    pub addr: SocketAddr,
    pub state: AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), ServeError>>>,
}

impl Running {
    /// `http://ADDR`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the server (requests in flight finish) and returns how it ended.
    pub fn stop(mut self) -> Result<(), ServeError> {
        self.halt()
    }

    fn halt(&mut self) -> Result<(), ServeError> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err(ServeError::Index("the server thread panicked".into()))),
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// The pages rendered ahead of requests for a view: every job page, every cluster
/// page of every profile, the unfiltered cluster lists in each sort, and the other
/// top-level pages.
pub fn prewarm_urls(v: &WebIndex) -> Vec<String> {
    let mut urls: Vec<String> =
        ["/", "/jobs", "/payloads", "/reports", "/clusters", "/clusters?kind=ci", "/clusters?kind=pr"]
            .iter()
            .map(|u| (*u).to_string())
            .collect();
    for sort in ["today", "growth", "last_seen", "first_seen"] {
        urls.push(format!("/clusters?sort={sort}"));
    }
    for (p, pi) in &v.profiles {
        urls.push(format!("/clusters?profile={}", html::pct(p)));
        urls.extend(
            pi.clusters.iter().map(|c| format!("/clusters/{}/{}", html::pct(p), html::pct(&c.stored.stable_id))),
        );
    }
    urls.extend(v.jobs.iter().map(|j| format!("/jobs/{}", html::pct(&j.name))));
    urls
}

/// Renders [`prewarm_urls`] into the response cache, one request at a time, for
/// every new view (gzip-accepting requests, as browsers make them). Answers then cost
/// a cache lookup from the first request on.
async fn prewarm_loop(state: AppState, app: Router) {
    const RELEASE_EVERY_PAGES: usize = 64;
    use tower::ServiceExt;
    let mut done_for = 0u64;
    loop {
        let gen = state.0.generation.load(Ordering::Acquire);
        if gen != done_for {
            let view = state.view();
            for (i, url) in prewarm_urls(&view).into_iter().enumerate() {
                if state.0.generation.load(Ordering::Acquire) != gen {
                    break;
                }
                if i > 0 && i % RELEASE_EVERY_PAGES == 0 {
                    // What the pages so far freed on the runtime's threads goes back
                    // before it adds up across their allocator arenas.
                    index::release_free_memory();
                }
                let Ok(req) = axum::http::Request::get(url)
                    .header(header::HOST, "localhost")
                    .header(header::ACCEPT_ENCODING, "gzip")
                    .body(Body::empty())
                else {
                    continue;
                };
                let _ = app.clone().oneshot(req).await;
                tokio::task::yield_now().await;
            }
            done_for = gen;
            state.0.prewarmed.store(gen, Ordering::Release);
            // The pages were rendered on the runtime's threads: what they freed goes back.
            index::release_free_memory();
        }
        tokio::time::sleep(CHECK_EVERY).await;
    }
}

/// Binds `addr` and serves the store at `db` until `shutdown` completes (pass
/// [`ctrl_c`] for the command line).
pub fn serve(
    db: PathBuf,
    addr: SocketAddr,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    Server::bind(db, addr)?.run(shutdown)
}

/// Completes on Ctrl-C (SIGINT); meant as the `shutdown` of [`serve`].
pub async fn ctrl_c() {
    if tokio::signal::ctrl_c().await.is_err() {
        // No signal handler could be installed: serve until the process is killed.
        std::future::pending::<()>().await;
    }
}

/// Runs `f` against a pooled store connection on a blocking thread.
async fn with_store<T, F>(st: &AppState, f: F) -> Result<T, WebError>
where
    T: Send + 'static,
    F: FnOnce(&mut Store) -> Result<T, WebError> + Send + 'static,
{
    let me = st.clone();
    let _permit = st.0.reads.acquire().await.map_err(|e| WebError::Internal(format!("busy: {e}")))?;
    tokio::task::spawn_blocking(move || {
        let s = &me.0;
        let pooled = lock(&s.pool).pop();
        let mut store = match pooled {
            Some(st) => st,
            None => {
                if !citriage_store::Location::from_path(&s.db).exists() {
                    return Err(WebError::Internal("the store file is gone".into()));
                }
                let store = Store::open(&s.db)?;
                store.limit_page_cache(index::READ_PAGE_CACHE_KIB)?;
                store
            }
        };
        let r = f(&mut store);
        let mut pool = lock(&s.pool);
        if pool.len() < MAX_CONCURRENT_READS {
            pool.push(store);
        }
        r
    })
    .await
    .map_err(|e| WebError::Internal(format!("request failed: {e}")))?
}

/// Runs a computation over the view on a blocking thread (searches and filtered lists
/// can take longer than a worker thread should be held).
async fn on_view<T, F>(st: &AppState, f: F) -> Result<T, WebError>
where
    T: Send + 'static,
    F: FnOnce(&WebIndex) -> Result<T, WebError> + Send + 'static,
{
    let view = st.view();
    tokio::task::spawn_blocking(move || f(&view))
        .await
        .map_err(|e| WebError::Internal(format!("request failed: {e}")))?
}

type Params = Query<BTreeMap<String, String>>;

/// Refuses requests whose `Host` names a host other than this machine: a page on
/// another site cannot reach the dashboard through a DNS name rebound to 127.0.0.1.
/// IP literals and `localhost` are always accepted, other names only when allowed.
async fn host_check(State(st): State<AppState>, req: Request, next: Next) -> Response {
    // Two Host headers: which one a proxy or a handler reads is anyone's guess.
    if req.headers().get_all(header::HOST).iter().count() > 1 {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "more than one Host header",
        )
            .into_response();
    }
    if let Some(host) = req.headers().get(header::HOST) {
        let host = host.to_str().unwrap_or("").to_ascii_lowercase();
        if !host_allowed(&host, &st.0.hosts) {
            let msg = format!(
                "host {host:?} is not allowed (DNS-rebinding protection); open the dashboard through localhost or an IP address, or start serve with --allow-host NAME"
            );
            return (StatusCode::FORBIDDEN, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], msg).into_response();
        }
    }
    next.run(req).await
}

/// How reading a request body ended badly.
enum BodyRead {
    TooLarge,
    Broken,
}

/// Reads a whole body, at most `limit` bytes (trailers are dropped).
async fn read_body(mut body: Body, limit: usize) -> Result<Bytes, BodyRead> {
    use axum::body::HttpBody;
    let mut got: Vec<u8> = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|_| BodyRead::Broken)?;
        if let Ok(data) = frame.into_data() {
            if got.len().saturating_add(data.len()) > limit {
                return Err(BodyRead::TooLarge);
            }
            got.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(got))
}

/// An answer that ends its connection (the rest of a body is not read).
fn closing(status: StatusCode, msg: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONNECTION, "close"),
        ],
        msg,
    )
        .into_response()
}

/// Bounds every request's body in size and time before any route sees it: a body
/// declared or found larger than [`ServeOptions::body_limit`] is answered 413, one not
/// received within [`ServeOptions::body_timeout`] of the headers 408, a broken one
/// 400, each closing the connection. Bodies within bounds are handed on whole (all of
/// this server's are small: JSON-RPC messages, forms); a GET's or HEAD's is dropped.
async fn body_guard(State(st): State<AppState>, req: Request, next: Next) -> Response {
    use axum::body::HttpBody;
    let (limit, timeout) = (st.0.opts.body_limit, st.0.opts.body_timeout);
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return closing(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body of {} bytes is larger than the {limit}-byte limit", declared.unwrap_or(0)),
        );
    }
    let (mut parts, body) = req.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let bytes = match tokio::time::timeout(timeout, read_body(body, limit)).await {
        Err(_) => {
            return closing(
                StatusCode::REQUEST_TIMEOUT,
                format!("request body not received within {} s", timeout.as_secs_f64()),
            )
        }
        Ok(Err(BodyRead::TooLarge)) => {
            return closing(StatusCode::PAYLOAD_TOO_LARGE, format!("request body larger than the {limit}-byte limit"))
        }
        Ok(Err(BodyRead::Broken)) => {
            return closing(StatusCode::BAD_REQUEST, "request body could not be read".to_string())
        }
        Ok(Ok(b)) => b,
    };
    let body = if parts.method == axum::http::Method::GET || parts.method == axum::http::Method::HEAD {
        parts.headers.remove(header::CONTENT_LENGTH);
        Body::empty()
    } else {
        Body::from(bytes)
    };
    next.run(Request::from_parts(parts, body)).await
}

/// Whether a `Host` header value (lowercase) names an allowed host.
pub fn host_allowed(host: &str, names: &[String]) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        // [v6]:port
        match rest.split_once(']') {
            Some((ip, _)) => return ip.parse::<std::net::Ipv6Addr>().is_ok(),
            None => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
            _ => host,
        }
    };
    let name = name.trim_end_matches('.');
    name.parse::<std::net::IpAddr>().is_ok() || names.iter().any(|n| n == name)
}

/// Answers repeated GETs from rendered copies (per view generation), with ETags and
/// 304s for conditional requests.
async fn cache(State(st): State<AppState>, req: Request, next: Next) -> Response {
    // The status route describes the server itself, as it is now.
    if req.method() != axum::http::Method::GET || live_path(req.uri().path()) {
        return next.run(req).await;
    }
    let gen = st.generation();
    let gzip = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
    let key = (gen, req.uri().to_string(), gzip);
    let inm = req.headers().get(header::IF_NONE_MATCH).cloned();
    let hit = {
        let mut cache = lock(&st.0.cache);
        let hit = cache.entries.get(&key).cloned();
        if hit.is_some() {
            cache.hits += 1;
        } else {
            cache.misses += 1;
        }
        hit
    };
    if let Some(c) = hit {
        return cached_response(&c, inm.as_ref());
    }
    let res = next.run(req).await;
    // An event stream never ends while its client listens: pass it through.
    let streaming = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if res.status() != StatusCode::OK || streaming {
        return res;
    }
    let (parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 256 << 20).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "response too large").into_response();
    };
    let etag = HeaderValue::from_str(&format!("W/\"{:016x}\"", fnv64(&bytes)))
        .unwrap_or_else(|_| HeaderValue::from_static("W/\"0\""));
    let c = Arc::new(Cached { status: parts.status, headers: parts.headers, body: bytes, etag });
    {
        let mut cache = lock(&st.0.cache);
        let size = c.body.len() + key.1.len();
        if size <= st.0.opts.cache_bytes && st.0.generation.load(Ordering::Acquire) == gen {
            while cache.bytes + size > st.0.opts.cache_bytes {
                let Some(old) = cache.order.pop_front() else { break };
                if let Some(o) = cache.entries.remove(&old) {
                    cache.bytes -= o.body.len() + old.1.len();
                }
            }
            if cache.entries.insert(key.clone(), c.clone()).is_none() {
                cache.order.push_back(key);
                cache.bytes += size;
            }
        }
    }
    cached_response(&c, inm.as_ref())
}

fn cached_response(c: &Cached, if_none_match: Option<&HeaderValue>) -> Response {
    let matches = if_none_match
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == c.etag.to_str().unwrap_or("") || t.trim() == "*"));
    let mut res = if matches {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        for k in [header::CACHE_CONTROL, header::VARY, header::CONTENT_SECURITY_POLICY] {
            if let Some(v) = c.headers.get(&k) {
                r.headers_mut().insert(k, v.clone());
            }
        }
        r
    } else {
        let mut r = Response::new(Body::from(c.body.clone()));
        *r.status_mut() = c.status;
        *r.headers_mut() = c.headers.clone();
        r
    };
    res.headers_mut().insert(header::ETAG, c.etag.clone());
    res
}

/// The security policy of the dashboard's own pages: no scripts at all.
const CSP_PAGES: &str =
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
/// The policy of stored payload reports (self-contained HTML with an inline stylesheet; still no scripts).
const CSP_REPORT: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

async fn headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP_PAGES));
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if !h.contains_key(header::CACHE_CONTROL) {
        // Pages and API answers reflect the store as it is now: revalidate (ETag).
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    res
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "public, max-age=86400")], STYLE_CSS)
        .into_response()
}

/// Browsers ask for an icon on every page; there is none, and saying so with "no
/// content" keeps their consoles clean.
async fn favicon() -> Response {
    (StatusCode::NO_CONTENT, [(header::CACHE_CONTROL, "public, max-age=86400")]).into_response()
}

fn json_answer<T: serde::Serialize>(r: Result<T, WebError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => (e.status(), Json(serde_json::json!({ "error": e.message() }))).into_response(),
    }
}

fn html_answer(r: Result<String, WebError>) -> Response {
    match r {
        Ok(body) => Html(body).into_response(),
        Err(e) => (e.status(), Html(pages::error_page(&e))).into_response(),
    }
}

async fn not_found() -> Response {
    html_answer(Err(WebError::NotFound("no such page".into())))
}

/// The API's routes, for discovery.
async fn api_index() -> Response {
    Json(serde_json::json!({
        "routes": [
            "/api/v1/overview", "/api/v1/changes", "/api/v1/jobs", "/api/v1/jobs/{job}", "/api/v1/tests?name=",
            "/api/v1/clusters", "/api/v1/clusters/{profile}/{stable_id}", "/api/v1/drift", "/api/v1/search?q=",
            "/api/v1/payloads", "/api/v1/payloads/{tag}", "/api/v1/reports", "/api/v1/reports/{kind}/{key}", "/api/v1/records",
            "/api/v1/status", "/api/v1/alerts"
        ]
    }))
    .into_response()
}

async fn api_status(State(st): State<AppState>) -> Response {
    let v = st.view();
    let cache = {
        let c = lock(&st.0.cache);
        serde_json::json!({"entries": c.entries.len(), "bytes": c.bytes, "hits": c.hits, "misses": c.misses})
    };
    json_answer::<serde_json::Value>(Ok(serde_json::json!({
        "generation": st.0.generation.load(Ordering::Acquire),
        "prewarmed": st.prewarmed(),
        "cache": cache,
        "builds": v.builds.len(),
        "jobs": v.jobs.len(),
        "tests": v.tests.len(),
        "profiles": v.profiles.keys().collect::<Vec<_>>(),
        "documents": v.documents.len(),
        "search": {"entries": v.search.entries, "distinct_texts": v.search.distinct()},
        "window_days": v.settings.window_days,
        "as_of": v.as_of,
        "build_ms": v.timings.iter().map(|(k, ms)| (k.to_string(), *ms)).collect::<BTreeMap<String, u64>>(),
    })))
}

async fn api_overview(State(st): State<AppState>) -> Response {
    json_answer(Ok(st.view().overview.clone()))
}

async fn api_changes(State(st): State<AppState>) -> Response {
    json_answer(Ok(data::changes(&st.view())))
}

async fn page_overview(State(st): State<AppState>) -> Response {
    html_answer(on_view(&st, |v| Ok(pages::overview(&v.overview, &data::changes(v)))).await)
}

async fn api_jobs(State(st): State<AppState>) -> Response {
    json_answer(Ok(data::jobs(&st.view())))
}

async fn page_jobs(State(st): State<AppState>, Query(p): Params) -> Response {
    let view = st.view();
    match data::jobs_list(&view, &p) {
        Ok(l) => html_answer(Ok(pages::jobs(&l, &p))),
        Err(e) => {
            // The form keeps the user's input; the list is the unfiltered default.
            let l = data::jobs_list(&view, &BTreeMap::new());
            error_with_page(e, l.map(|l| pages::jobs(&l, &p)))
        }
    }
}

/// An error answered with the page it concerns (its form and the user's input kept),
/// the message in a box under the title.
fn error_with_page(e: WebError, page: Result<String, WebError>) -> Response {
    match page {
        Ok(page) => (e.status(), Html(pages::with_alert(page, &e))).into_response(),
        Err(_) => html_answer(Err(e)),
    }
}

async fn build_page(st: &AppState, job: String, id: String) -> Result<data::BuildPage, WebError> {
    let view = st.view();
    let b = data::find_build(&view, &job, &id)?.clone();
    let job_name = view.job_name(b.job).to_string();
    let (row, bid, since) = (b.id, b.build_id.clone(), b.started.map(|t| t - 1));
    let (rec, artifacts, members) = with_store(st, move |s| {
        let rec = s.job_builds_with_tests(&job_name, since)?.into_iter().find(|r| r.build_id == bid);
        Ok::<_, WebError>((rec, s.build_artifacts(row)?, s.build_cluster_members(row)?))
    })
    .await?;
    let rec = rec.ok_or_else(|| WebError::NotFound(format!("build {id:?} of {job:?} is no longer stored")))?;
    Ok(data::build_page(&view, &b, &rec, artifacts, &members))
}

async fn api_build(State(st): State<AppState>, UrlPath((job, id)): UrlPath<(String, String)>) -> Response {
    json_answer(build_page(&st, job, id).await)
}

async fn page_build(State(st): State<AppState>, UrlPath((job, id)): UrlPath<(String, String)>) -> Response {
    match build_page(&st, job.clone(), id).await {
        Ok(p) => html_answer(Ok(pages::build(&p))),
        Err(e @ WebError::NotFound(_)) => {
            let mut q = BTreeMap::new();
            q.insert("q".to_string(), job);
            let page = data::jobs_list(&st.view(), &q).map(|l| pages::jobs(&l, &q));
            error_with_page(e, page)
        }
        Err(e) => html_answer(Err(e)),
    }
}

async fn api_job(State(st): State<AppState>, UrlPath(job): UrlPath<String>) -> Response {
    json_answer(data::job(&st.view(), &job))
}

/// The job page, with the job's triage record when it has one (and the link form
/// behind the write gate).
async fn page_job(State(st): State<AppState>, UrlPath(job): UrlPath<String>) -> Response {
    let view = st.view();
    match data::job(&view, &job) {
        Ok(j) => {
            let subject = format!("job:{job}");
            let key = subject.clone();
            let rec = with_store(&st, move |s| citriage_app::records::record(s, &key).map_err(app_error)).await;
            let blamed = suspects_section(&st, "default", &job).await;
            let page = records::splice(pages::job(&j), &blamed);
            match rec {
                Ok(rec) if rec.is_some() || st.0.opts.writes.open() => {
                    let section = records::section(&subject, rec.as_ref(), st.0.opts.writes.open());
                    html_answer(Ok(records::splice(page, &section)))
                }
                Ok(_) => html_answer(Ok(page)),
                Err(e) => html_answer(Err(e)),
            }
        }
        Err(e) => {
            // An unknown job: the jobs whose names contain it, under the message.
            let mut q = BTreeMap::new();
            q.insert("q".to_string(), job);
            error_with_page(e, data::jobs_list(&view, &q).map(|l| pages::jobs(&l, &q)))
        }
    }
}

async fn api_clusters(State(st): State<AppState>, Query(p): Params) -> Response {
    let q = match data::ClusterQuery::parse(&p) {
        Ok(q) => q,
        Err(e) => return json_answer::<()>(Err(e)),
    };
    json_answer(on_view(&st, move |v| data::clusters(v, &q)).await)
}

async fn page_clusters(State(st): State<AppState>, Query(p): Params) -> Response {
    let q = match data::ClusterQuery::parse(&p) {
        Ok(q) => q,
        Err(e) => {
            // The form with the user's input, no list: fix the request in place.
            let page = on_view(&st, move |v| {
                let q = data::ClusterQuery::parse(&BTreeMap::new())?;
                let mut c = data::clusters(v, &q)?;
                c.clusters.clear();
                c.matching = 0;
                Ok(pages::clusters(&c, &p))
            })
            .await;
            return error_with_page(e, page);
        }
    };
    html_answer(on_view(&st, move |v| data::clusters(v, &q).map(|c| pages::clusters(&c, &p))).await)
}

async fn api_drift(State(st): State<AppState>, Query(p): Params) -> Response {
    json_answer(on_view(&st, move |v| data::drift(v, &p)).await)
}

async fn page_drift(State(st): State<AppState>, Query(p): Params) -> Response {
    html_answer(on_view(&st, move |v| data::drift(v, &p).map(|d| pages::drift(&d, &p))).await)
}

async fn cluster_detail(st: &AppState, profile: String, id: String) -> Result<data::ClusterDetail, WebError> {
    let view = st.view();
    // Unknown clusters are answered without touching the store.
    data::cluster_detail(&view, &profile, &id, || Ok((Vec::new(), Vec::new())))?;
    let (p, i, v) = (profile.clone(), id.clone(), view.clone());
    let latest = with_store(st, move |s| {
        let latest = latest_failures(s, &v, &p, &i)?;
        Ok::<_, WebError>((latest, s.cluster_subpatterns(&p, &i)?))
    })
    .await?;
    data::cluster_detail(&view, &profile, &id, || Ok(latest))
}

/// A cluster's newest failures: its members ordered by their builds' start (newest
/// first; ties by job, build, position) in memory, then only those read in full.
fn latest_failures(
    store: &mut Store,
    view: &WebIndex,
    profile: &str,
    id: &str,
) -> Result<Vec<citriage_store::ClusterFailure>, WebError> {
    let mut members: Vec<(u32, u32)> = store
        .cluster_member_rows(profile, id)?
        .into_iter()
        .filter_map(|(b, seq)| view.build_position(b).map(|p| (p, seq)))
        .collect();
    let key = |&(p, seq): &(u32, u32)| {
        let b = &view.builds[p as usize];
        (std::cmp::Reverse(b.started), view.job_name(b.job), b.build_id.as_str(), seq)
    };
    let n = data::LATEST_FAILURES.min(members.len());
    if n > 0 && members.len() > n {
        members.select_nth_unstable_by(n - 1, |a, b| key(a).cmp(&key(b)));
        members.truncate(n);
    }
    members.sort_by(|a, b| key(a).cmp(&key(b)));
    let at: Vec<(i64, u32)> = members.iter().map(|&(p, seq)| (view.builds[p as usize].id, seq)).collect();
    let details = store.test_results_at(&at)?;
    Ok(members
        .iter()
        .zip(details)
        .filter_map(|(&(p, _), d)| {
            let b = &view.builds[p as usize];
            d.map(|(test, failure_text)| citriage_store::ClusterFailure {
                job: view.job_name(b.job).to_string(),
                build_id: b.build_id.clone(),
                bucket: b.bucket.clone(),
                path: b.path.clone(),
                kind: b.kind.clone(),
                pr: b.pr,
                started: b.started,
                test,
                failure_text,
            })
        })
        .collect())
}

async fn api_cluster(State(st): State<AppState>, UrlPath((profile, id)): UrlPath<(String, String)>) -> Response {
    json_answer(cluster_detail(&st, profile, id).await)
}

async fn page_cluster_body(st: AppState, profile: String, id: String) -> Result<String, WebError> {
    let default_repo = st.0.opts.issue_repo.clone();
    let view = st.view();
    cluster_detail(&st, profile, id).await.map(|d| {
        // Route by the repository of the job with the most failures, when its builds name one.
        let routed = d.jobs.first().and_then(|j| {
            let name = j.name.as_str();
            view.job(name.strip_prefix("pr:").unwrap_or(name)).and_then(|ji| ji.repo.as_deref()).map(|r| (r, name))
        });
        let route = match routed {
            Some((repo, job)) => pages::IssueRoute { repo, job: Some(job) },
            None => pages::IssueRoute { repo: &default_repo, job: None },
        };
        pages::cluster(&d, &route)
    })
}

/// The pattern page with its triage record (and the link form behind the write gate).
async fn page_cluster(State(st): State<AppState>, UrlPath((profile, id)): UrlPath<(String, String)>) -> Response {
    let subject = format!("pattern:{profile}/{id}");
    let key = subject.clone();
    let rec = with_store(&st, move |s| citriage_app::records::record(s, &key).map_err(app_error)).await;
    let blamed = suspects_section(&st, &profile, &id).await;
    let page = page_cluster_body(st.clone(), profile, id).await;
    match (page, rec) {
        (Ok(body), Ok(rec)) => {
            let section = records::section(&subject, rec.as_ref(), st.0.opts.writes.open());
            Html(records::splice(records::splice(body, &blamed), &section)).into_response()
        }
        (Err(e), _) | (_, Err(e)) => html_answer(Err(e)),
    }
}

/// The "Which change started it" section of a pattern or job page: its windows, and
/// with the dashboard's checkouts its ranked commits; empty when there is nothing to
/// say (no window) or the store cannot answer.
async fn suspects_section(st: &AppState, profile: &str, target: &str) -> String {
    let Some(profile) = citriage_patterns::normalize::Profile::parse(profile) else { return String::new() };
    let opts = citriage_app::suspects::SuspectsOptions {
        target: target.to_string(),
        profile,
        checkouts: st.0.opts.checkouts.clone(),
    };
    let index = st.view().suspect_builds.clone();
    let answer = with_store(st, move |s| {
        citriage_app::suspects::suspects_in(s, &index, &opts, &citriage_app::Silent).map_err(app_error)
    })
    .await;
    match answer {
        Ok(s) if !s.jobs.is_empty() => blame::section(&s),
        _ => String::new(),
    }
}

fn app_error(e: citriage_app::Error) -> WebError {
    if e.is_bad_input() {
        WebError::BadRequest(e.to_string())
    } else {
        WebError::Internal(e.to_string())
    }
}

async fn list_records(
    st: &AppState,
    p: std::collections::BTreeMap<String, String>,
) -> Result<Vec<citriage_app::records::RecordView>, WebError> {
    let opts = citriage_app::records::ListOptions {
        state: p.get("state").cloned().filter(|s| !s.is_empty()),
        open_only: p.get("open").is_some_and(|v| v == "1" || v == "true"),
        ..Default::default()
    };
    with_store(st, move |s| citriage_app::records::list(s, &opts).map_err(app_error)).await
}

/// `/api/v1/records`: every record (`?state=S`, `?open=1`), or one (`?subject=...`).
async fn api_records(State(st): State<AppState>, Query(p): Params) -> Response {
    if let Some(subject) = p.get("subject").cloned() {
        let r = with_store(&st, move |s| {
            let (sub, _, _) = citriage_app::records::resolve_subject(s, &subject).map_err(app_error)?;
            citriage_app::records::record(s, &sub.key())
                .map_err(app_error)?
                .ok_or_else(|| WebError::NotFound(format!("{} has no triage record", sub.key())))
        })
        .await;
        return json_answer(r);
    }
    json_answer(list_records(&st, p).await)
}

/// `/records`: the open records by state and age.
/// A PR's analysis from the store (GitHub from the store's cache only; nothing recorded).
async fn pr_risk(st: &AppState, org: String, repo: String, n: String) -> Result<citriage_app::pr::PrRisk, WebError> {
    let target = citriage_app::pr::PrTarget::parse(&format!("{org}/{repo}#{n}")).map_err(app_error)?;
    with_store(st, move |s| {
        let opts = citriage_app::pr::PrOptions {
            github: Some(citriage_app::records::GithubAccess { offline: true, ..Default::default() }),
            record: false,
            ..Default::default()
        };
        citriage_app::pr::analyse(s, &target, &opts, &citriage_app::Silent).map_err(app_error)
    })
    .await
}

async fn page_pr(State(st): State<AppState>, UrlPath((org, repo, n)): UrlPath<(String, String, String)>) -> Response {
    html_answer(pr_risk(&st, org, repo, n).await.map(|r| pr::page(&r)))
}

async fn api_pr(State(st): State<AppState>, UrlPath((org, repo, n)): UrlPath<(String, String, String)>) -> Response {
    json_answer(pr_risk(&st, org, repo, n).await)
}

/// `/prs/N` (what a build page links to): the PR of the one repository with runs of it.
async fn page_pr_number(State(st): State<AppState>, UrlPath(n): UrlPath<String>) -> Response {
    let Ok(number) = n.parse::<u64>() else {
        return html_answer(Err(WebError::BadRequest(format!("{n:?} is not a pull request number"))));
    };
    let repos = with_store(&st, move |s| citriage_app::pr::repos_of(s, number).map_err(app_error)).await;
    match repos {
        Ok(r) if r.len() == 1 => {
            let (org, repo) = r[0].split_once('/').map(|(a, b)| (a.to_string(), b.to_string())).unwrap_or_default();
            html_answer(pr_risk(&st, org, repo, n).await.map(|r| pr::page(&r)))
        }
        Ok(r) if r.is_empty() => {
            html_answer(Err(WebError::NotFound(format!("no stored run of pull request #{number}"))))
        }
        Ok(r) => html_answer(Ok(pr::choose(number, &r))),
        Err(e) => html_answer(Err(e)),
    }
}

async fn page_records(State(st): State<AppState>) -> Response {
    html_answer(list_records(&st, Default::default()).await.map(|v| records::list_page(&v)))
}

/// `POST /records/link` (the pattern page's form): links a reference by hand, behind
/// the write gate; who links it is the trusted proxy's user, else the form's `by`.
async fn post_record_link(State(st): State<AppState>, headers: HeaderMap, body: String) -> Response {
    let gate = &st.0.opts.writes;
    if !gate.open() {
        return text(
            StatusCode::FORBIDDEN,
            "text/plain; charset=utf-8",
            "write actions are off: start serve with CITRIAGE_WRITE_TOKEN set or --trusted-user-header\n".into(),
        );
    }
    if !gate.allows(&headers) {
        return text(StatusCode::UNAUTHORIZED, "text/plain; charset=utf-8", "a write needs the write token\n".into());
    }
    // A form posted from another site (the trusted proxy would add its user header to
    // it all the same) is refused: the Origin, when sent, must name this host.
    let host = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    let origin = headers.get(axum::http::header::ORIGIN).and_then(|v| v.to_str().ok());
    if origin.is_some_and(|o| o.split_once("://").map_or(o, |x| x.1) != host) {
        return text(
            StatusCode::FORBIDDEN,
            "text/plain; charset=utf-8",
            "a link form posted from another site\n".into(),
        );
    }
    let fields = records::form(&body);
    let field = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.trim().to_string()).unwrap_or_default();
    let user = gate
        .trusted_header
        .as_deref()
        .and_then(|h| headers.get(h))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .filter(|v| !v.trim().is_empty());
    let opts = citriage_app::records::LinkOptions {
        subject: field("subject"),
        reference: field("reference"),
        by: user.unwrap_or_else(|| field("by")),
        github: citriage_app::records::GithubAccess { api: st.0.opts.github_api.clone(), offline: false },
        ..Default::default()
    };
    let r =
        with_store(&st, move |s| citriage_app::records::link(s, &opts, &citriage_app::Silent).map_err(app_error)).await;
    match r {
        Ok(l) => {
            // Pages showing the record were rendered before the link.
            lock(&st.0.cache).clear();
            let status = if l.problem.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
            let page = layout_link_result(&l);
            (status, Html(page)).into_response()
        }
        Err(e) => html_answer(Err(e)),
    }
}

fn layout_link_result(l: &citriage_app::records::Linked) -> String {
    let back = match citriage_store::Subject::parse(&l.subject) {
        Some(citriage_store::Subject::Pattern { profile, id }) => {
            format!("/clusters/{}/{}#record", html::pct(&profile), html::pct(&id))
        }
        _ => "/records".to_string(),
    };
    let mut b = format!(
        "<p>{} {} → {}: {}</p>",
        html::esc(&l.action),
        html::esc(&l.reference),
        html::esc(&l.subject),
        html::esc(l.record.summary.state.label())
    );
    if let Some(p) = &l.problem {
        b.push_str(&format!("<p class=\"warning\">{}</p>", html::esc(p)));
    }
    b.push_str(&format!("<p><a href=\"{back}\">back</a></p>"));
    html::layout("Link", "/records", &b)
}

async fn api_search(State(st): State<AppState>, Query(p): Params) -> Response {
    let q = match search::SearchQuery::parse(&p) {
        Ok(Some(q)) => q,
        Ok(None) => return json_answer::<()>(Err(WebError::BadRequest("q (a regular expression) is required".into()))),
        Err(e) => return json_answer::<()>(Err(e)),
    };
    json_answer(on_view(&st, move |v| Ok(data::search(v, &q))).await)
}

async fn page_search(State(st): State<AppState>, Query(p): Params) -> Response {
    match search::SearchQuery::parse(&p) {
        Err(e) => error_with_page(e, Ok(pages::search(&p, None))),
        Ok(None) => html_answer(Ok(pages::search(&p, None))),
        Ok(Some(q)) => html_answer(on_view(&st, move |v| Ok(pages::search(&p, Some(&data::search(v, &q))))).await),
    }
}

/// Tests listed on `/tests` at most.
const TEST_LIST_ROWS: usize = 500;

fn test_name(p: &BTreeMap<String, String>) -> Option<String> {
    p.get("name").filter(|n| !n.is_empty()).cloned()
}

async fn api_test(State(st): State<AppState>, Query(p): Params) -> Response {
    let Some(name) = test_name(&p) else {
        return json_answer::<()>(Err(WebError::BadRequest("name (a test name) is required".into())));
    };
    json_answer(data::test_history(&st.view(), &name))
}

async fn page_test(State(st): State<AppState>, Query(p): Params) -> Response {
    let view = st.view();
    let list = |p: &BTreeMap<String, String>| data::test_list(&view, p, TEST_LIST_ROWS);
    match test_name(&p) {
        None => match list(&p) {
            Ok(l) => html_answer(Ok(pages::test_list(&p, &l))),
            Err(e) => error_with_page(e, list(&BTreeMap::new()).map(|l| pages::test_list(&p, &l))),
        },
        Some(name) => match data::test_history(&view, &name) {
            Ok(h) => html_answer(Ok(pages::test(&p, Some(&h)))),
            // Not an exact name: the tests whose names contain it.
            Err(WebError::NotFound(_)) => {
                let mut q = p.clone();
                q.insert("q".to_string(), name.clone());
                html_answer(list(&q).map(|l| pages::test_list(&q, &l)))
            }
            Err(e) => html_answer(Err(e)),
        },
    }
}

async fn api_payloads(State(st): State<AppState>) -> Response {
    json_answer(Ok(data::payloads(&st.view())))
}

async fn page_payloads(State(st): State<AppState>) -> Response {
    html_answer(Ok(pages::payloads(&data::payloads(&st.view()))))
}

async fn stored(st: &AppState, kind: &str, key: &str, media: &str) -> Result<citriage_store::Document, WebError> {
    let (k, key2, m) = (kind.to_string(), key.to_string(), media.to_string());
    with_store(st, move |s| Ok(s.document(&k, &key2, &m)?))
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no stored {kind} document {key:?} ({media})")))
}

async fn api_payload(State(st): State<AppState>, UrlPath(tag): UrlPath<String>) -> Response {
    match stored(&st, "payload", &tag, "application/json").await {
        Ok(d) => ([(header::CONTENT_TYPE, "application/json")], d.body).into_response(),
        Err(e) => json_answer::<()>(Err(e)),
    }
}

/// The stored HTML report of a payload, as `citriage payload` wrote it, with the
/// dashboard's navigation above it.
/// A stored payload report, with the triage records of its root causes
/// (`payload:TAG/RC`) and their timelines.
async fn page_payload(State(st): State<AppState>, UrlPath(tag): UrlPath<String>) -> Response {
    let prefix = format!("payload:{tag}/");
    let recs = with_store(&st, move |s| {
        let all = citriage_app::records::list(s, &Default::default()).map_err(app_error)?;
        Ok(all.into_iter().filter(|v| v.record.subject.starts_with(&prefix)).collect::<Vec<_>>())
    })
    .await;
    let recs = match recs {
        Ok(r) => r,
        Err(e) => return html_answer(Err(e)),
    };
    match stored(&st, "payload", &tag, "text/html").await {
        Ok(d) => {
            let mut body = pages::payload_report(&d.body, &tag);
            for v in &recs {
                body = records::splice(body, &records::section(&v.record.subject, Some(v), false));
            }
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_SECURITY_POLICY, CSP_REPORT)], body)
                .into_response()
        }
        Err(e) => html_answer(Err(e)),
    }
}

async fn api_reports(State(st): State<AppState>) -> Response {
    json_answer(Ok(data::reports(&st.view())))
}

async fn page_reports(State(st): State<AppState>) -> Response {
    html_answer(Ok(pages::reports(&data::reports(&st.view()))))
}

/// A stored report: its Markdown (or JSON) and the stored verifier result on it.
#[derive(Debug, serde::Serialize)]
struct ReportDoc {
    kind: String,
    key: String,
    title: String,
    as_of: String,
    media_type: String,
    body: String,
    /// The stored verifier result on this report (the JSON `citriage verify` prints).
    verification: Option<serde_json::Value>,
}

async fn report_doc(st: &AppState, kind: String, key: String) -> Result<ReportDoc, WebError> {
    let view = st.view();
    let header = view
        .documents
        .iter()
        .filter(|d| d.kind == kind && d.key == key)
        .min_by_key(|d| match d.media_type.as_str() {
            "text/markdown" => 0,
            "application/json" => 1,
            _ => 2,
        })
        .ok_or_else(|| WebError::NotFound(format!("no stored document {kind}/{key}")))?;
    let doc = stored(st, &kind, &key, &header.media_type).await?;
    let verification = match view.verifications.get(&format!("{kind}/{key}")) {
        Some(v) => {
            stored(st, "verify", &v.key, "application/json").await.ok().and_then(|d| serde_json::from_str(&d.body).ok())
        }
        None => None,
    };
    Ok(ReportDoc {
        kind,
        key,
        title: doc.title,
        as_of: doc.as_of,
        media_type: doc.media_type,
        body: doc.body,
        verification,
    })
}

async fn api_report(State(st): State<AppState>, UrlPath((kind, key)): UrlPath<(String, String)>) -> Response {
    json_answer(report_doc(&st, kind, key).await)
}

async fn page_report(State(st): State<AppState>, UrlPath((kind, key)): UrlPath<(String, String)>) -> Response {
    html_answer(
        report_doc(&st, kind, key).await.map(|d| {
            pages::report(&d.kind, &d.key, &d.title, &d.as_of, &d.media_type, &d.body, d.verification.as_ref())
        }),
    )
}
