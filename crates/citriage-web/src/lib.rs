//! `citriage serve`: a local web dashboard over one citriage store. This module owns
//! the server (binding, the tokio runtime, gzip, security and caching headers,
//! graceful shutdown) and the router; the data behind every page lives in `data`,
//! the HTML in `pages`, the charts in `svg` and the bounded failure-text search in
//! `search`. Every page's data is also served as JSON under `/api/v1/`.
//!
//! The server reads the store only: each request opens its own connection on a
//! blocking thread, and nothing but the store file and the embedded stylesheet is
//! ever read.

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use citriage_store::Store;
use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub mod data;
pub mod html;
mod pages;
pub mod search;
pub mod svg;

/// The address `citriage serve` listens on unless told otherwise.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// The embedded stylesheet.
const STYLE_CSS: &str = include_str!("style.css");

/// A short content hash of the stylesheet: pages link `/static/style.css?v=HASH`, so
/// the stylesheet can be cached for long and a new build's is fetched at once.
pub(crate) fn style_version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        // FNV-1a, 64 bits.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in STYLE_CSS.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    })
}

/// Why the server could not start or stopped.
#[derive(Debug)]
pub enum ServeError {
    /// The store file does not exist (the server never creates one).
    MissingStore(PathBuf),
    /// The store exists but cannot be opened.
    Store(citriage_store::StoreError),
    /// Binding, the runtime or the connection loop failed.
    Io(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::MissingStore(p) => write!(f, "store {} does not exist", p.display()),
            ServeError::Store(e) => write!(f, "{e}"),
            ServeError::Io(e) => write!(f, "serve: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// A request that could not be answered: a bad parameter (400), an unknown job (404)
/// or a store failure (500). The message is shown to the user, escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebError {
    BadRequest(String),
    NotFound(String),
    Internal(String),
}

impl WebError {
    fn status(&self) -> StatusCode {
        match self {
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn message(&self) -> &str {
        match self {
            WebError::BadRequest(m) | WebError::NotFound(m) | WebError::Internal(m) => m,
        }
    }
}

impl From<citriage_store::StoreError> for WebError {
    fn from(e: citriage_store::StoreError) -> Self {
        WebError::Internal(e.to_string())
    }
}

/// Store reads running at once; further requests wait their turn.
const MAX_CONCURRENT_READS: usize = 4;

/// Shared state: where the store lives and the permits for reading it.
#[derive(Clone)]
pub struct AppState {
    db: Arc<PathBuf>,
    reads: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    pub fn new(db: PathBuf) -> AppState {
        AppState { db: Arc::new(db), reads: Arc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_READS)) }
    }
}

/// The dashboard's routes (pages, `/api/v1/` and the stylesheet) with gzip and the
/// security and caching headers. The store file must exist.
pub fn router(db: PathBuf) -> Router {
    Router::new()
        .route("/", get(page_overview))
        .route("/jobs", get(page_jobs))
        .route("/jobs/{job}", get(page_job))
        .route("/tests", get(page_test))
        .route("/clusters", get(page_clusters))
        .route("/search", get(page_search))
        .route("/static/style.css", get(style))
        .route("/api/v1/overview", get(api_overview))
        .route("/api/v1/jobs", get(api_jobs))
        .route("/api/v1/jobs/{job}", get(api_job))
        .route("/api/v1/tests", get(api_test))
        .route("/api/v1/clusters", get(api_clusters))
        .route("/api/v1/search", get(api_search))
        .fallback(not_found)
        .with_state(AppState::new(db))
        .layer(axum::middleware::map_response(headers))
        .layer(tower_http::compression::CompressionLayer::new())
}

/// A bound (not yet running) server.
pub struct Server {
    db: PathBuf,
    listener: std::net::TcpListener,
}

impl Server {
    /// Checks that the store exists and opens, and binds the address (port 0 picks a
    /// free port; see [`Server::local_addr`]).
    pub fn bind(db: PathBuf, addr: SocketAddr) -> Result<Server, ServeError> {
        if !db.is_file() {
            return Err(ServeError::MissingStore(db));
        }
        Store::open(&db).map_err(ServeError::Store)?;
        let listener = std::net::TcpListener::bind(addr).map_err(ServeError::Io)?;
        listener.set_nonblocking(true).map_err(ServeError::Io)?;
        Ok(Server { db, listener })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.listener.local_addr().map_err(ServeError::Io)
    }

    /// Serves until `shutdown` completes, then finishes the requests in flight.
    pub fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), ServeError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(ServeError::Io)?;
        let app = router(self.db);
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(self.listener)?;
            axum::serve(listener, app).with_graceful_shutdown(shutdown).await
        })
        .map_err(ServeError::Io)
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

/// Runs `f` against a fresh store connection on a blocking thread.
async fn with_store<T, F>(st: &AppState, f: F) -> Result<T, WebError>
where
    T: Send + 'static,
    F: FnOnce(&mut Store) -> Result<T, WebError> + Send + 'static,
{
    let db = st.db.clone();
    let permit = st.reads.clone().acquire_owned().await.map_err(|e| WebError::Internal(format!("busy: {e}")))?;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        if !db.is_file() {
            return Err(WebError::Internal("the store file is gone".into()));
        }
        let mut store = Store::open(&db)?;
        f(&mut store)
    })
    .await
    .map_err(|e| WebError::Internal(format!("request failed: {e}")))?
}

type Params = Query<BTreeMap<String, String>>;

async fn headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    );
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if !h.contains_key(header::CACHE_CONTROL) {
        // Pages and API answers reflect the store as it is now.
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    res
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "public, max-age=3600")], STYLE_CSS)
        .into_response()
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

async fn api_overview(State(st): State<AppState>) -> Response {
    json_answer(with_store(&st, data::overview).await)
}

async fn api_jobs(State(st): State<AppState>) -> Response {
    json_answer(with_store(&st, data::jobs).await)
}

async fn api_job(State(st): State<AppState>, UrlPath(job): UrlPath<String>) -> Response {
    json_answer(with_store(&st, move |s| data::job(s, &job)).await)
}

async fn api_clusters(State(st): State<AppState>, Query(p): Params) -> Response {
    let q = match data::ClusterQuery::parse(&p) {
        Ok(q) => q,
        Err(e) => return json_answer::<()>(Err(e)),
    };
    json_answer(with_store(&st, move |s| data::clusters(s, &q)).await)
}

async fn api_search(State(st): State<AppState>, Query(p): Params) -> Response {
    let q = match search::SearchQuery::parse(&p) {
        Ok(Some(q)) => q,
        Ok(None) => return json_answer::<()>(Err(WebError::BadRequest("q (a regular expression) is required".into()))),
        Err(e) => return json_answer::<()>(Err(e)),
    };
    json_answer(with_store(&st, move |s| search::search(s, &q)).await)
}

async fn page_overview(State(st): State<AppState>) -> Response {
    html_answer(with_store(&st, data::overview).await.map(|o| pages::overview(&o)))
}

async fn page_jobs(State(st): State<AppState>) -> Response {
    html_answer(with_store(&st, data::jobs).await.map(|j| pages::jobs(&j)))
}

async fn page_job(State(st): State<AppState>, UrlPath(job): UrlPath<String>) -> Response {
    html_answer(with_store(&st, move |s| data::job(s, &job)).await.map(|j| pages::job(&j)))
}

async fn page_clusters(State(st): State<AppState>, Query(p): Params) -> Response {
    let q = match data::ClusterQuery::parse(&p) {
        Ok(q) => q,
        Err(e) => return html_answer(Err(e)),
    };
    html_answer(with_store(&st, move |s| data::clusters(s, &q)).await.map(|c| pages::clusters(&c, &p)))
}

async fn page_search(State(st): State<AppState>, Query(p): Params) -> Response {
    match search::SearchQuery::parse(&p) {
        Err(e) => html_answer(Err(e)),
        Ok(None) => html_answer(Ok(pages::search(&p, None))),
        Ok(Some(q)) => {
            html_answer(with_store(&st, move |s| search::search(s, &q)).await.map(|r| pages::search(&p, Some(&r))))
        }
    }
}

fn test_name(p: &BTreeMap<String, String>) -> Option<String> {
    p.get("name").filter(|n| !n.is_empty()).cloned()
}

async fn api_test(State(st): State<AppState>, Query(p): Params) -> Response {
    let Some(name) = test_name(&p) else {
        return json_answer::<()>(Err(WebError::BadRequest("name (a test name) is required".into())));
    };
    json_answer(with_store(&st, move |s| data::test_history(s, &name)).await)
}

async fn page_test(State(st): State<AppState>, Query(p): Params) -> Response {
    match test_name(&p) {
        None => html_answer(Ok(pages::test(&p, None))),
        Some(name) => {
            html_answer(with_store(&st, move |s| data::test_history(s, &name)).await.map(|h| pages::test(&p, Some(&h))))
        }
    }
}
