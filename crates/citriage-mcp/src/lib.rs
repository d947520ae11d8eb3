//! `citriage mcp`: a Model Context Protocol server over a citriage store, so agents
//! call citriage's deterministic readings instead of scraping dashboards.
//!
//! - **Tools** ([`tools`]), each with a JSON schema, each answer carrying the evidence
//!   ids it rests on: `list_failing_jobs`, `job_history`, `test_history`,
//!   `search_failures`, `list_patterns`, `get_pattern`, `extract_failure`,
//!   `analyze_payload`, `pr_state`, `verify_report`, `lookup_evidence`, `draft_action`,
//!   and — only when writes are allowed — `apply_action`.
//! - **Resources** ([`resources`]): the stored triage reports (the latest of each
//!   dataset under a stable URI), the stored payload analyses, and the investigation
//!   briefs of the latest triage. **Prompt**: `investigate`, the investigation brief.
//!
//! Every figure comes from the code that computes it for the dashboard and the CLI:
//! the dashboard's in-memory view of the store ([`citriage_web::index::WebIndex`]) and
//! its data functions ([`citriage_web::data`], [`citriage_web::search`]) for jobs,
//! tests, patterns and search; the analysis crate for categories and severities; the
//! stored payload analyses as `citriage payload` recorded them; and, through
//! [`Backend`], the CLI's own verifier, GitHub cache and brief writer. One truth per
//! figure: an agent, the dashboard and the command line answer the same question
//! with the same number.
//!
//! Evidence: the items an answer cites are appended to the store's ledger before the
//! answer is sent (content-addressed; an item already there keeps its first reading),
//! so every id resolves with `citriage evidence ID` or `lookup_evidence`. That append
//! is the only thing the server writes to the store; it goes through the dashboard's
//! own connection, so it does not make the dashboard rebuild its view.
//!
//! Transports: stdio ([`McpServer::serve_stdio`]) for a local agent; streamable HTTP
//! ([`McpServer::http_router`]) mounted by `citriage serve` at `/mcp`. Read-only by
//! default; see [`writes::WritePolicy`] for the one write tool and its gate.

use citriage_model::Evidence;
use citriage_store::Store;
use citriage_web::index::WebIndex;
use citriage_web::AppState;
use rmcp::model as m;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub mod answers;
pub mod resources;
pub mod tools;
pub mod writes;

pub use writes::WritePolicy;

/// Why a tool could not answer: the caller's arguments (`bad_input`) or the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub bad_input: bool,
    pub message: String,
}

impl ToolError {
    pub fn input(message: impl Into<String>) -> ToolError {
        ToolError { bad_input: true, message: message.into() }
    }
    pub fn other(message: impl Into<String>) -> ToolError {
        ToolError { bad_input: false, message: message.into() }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<citriage_store::StoreError> for ToolError {
    fn from(e: citriage_store::StoreError) -> Self {
        ToolError::other(e.to_string())
    }
}

impl From<citriage_web::WebError> for ToolError {
    fn from(e: citriage_web::WebError) -> Self {
        match e {
            citriage_web::WebError::BadRequest(m) | citriage_web::WebError::NotFound(m) => ToolError::input(m),
            citriage_web::WebError::Internal(m) => ToolError::other(m),
        }
    }
}

/// The investigation briefs of the latest triage of a dataset.
#[derive(Debug, Clone, Default)]
pub struct Briefs {
    pub dataset: String,
    /// The snapshot's date.
    pub date: String,
    /// (file name, Markdown): one investigation brief per selected cluster, then the
    /// cross-check brief.
    pub items: Vec<(String, String)>,
    /// The evidence the briefs cite.
    pub evidence: Vec<Evidence>,
}

/// What the server asks of the program that embeds it: the parts of citriage that
/// live in the command line (the report verifier with its GitHub cache and build
/// checks, pull-request states through the store's cache, the brief writer, posting
/// through the GitHub API, the clock).
pub trait Backend: Send + Sync + 'static {
    /// The current time, RFC 3339 (for the ledger's `read_at`).
    fn now(&self) -> String;
    /// Checks a Markdown report offline; returns the verifier's JSON (as `citriage
    /// verify --format json` prints it) and the evidence its verified claims cite.
    fn verify_report(&self, db: &Path, text: &str, name: &str) -> Result<(Value, Vec<Evidence>), ToolError>;
    /// The states of pull requests and issues (`org/repo#n`) as the store's GitHub
    /// cache (or GitHub) answers them, with their evidence.
    fn pr_state(&self, db: &Path, refs: &[String]) -> Result<(Value, Vec<Evidence>), ToolError>;
    /// The investigation briefs of the latest triage of `dataset`.
    fn briefs(&self, db: &Path, dataset: citriage_model::Dataset) -> Result<Briefs, ToolError>;
    /// Sends a draft's requests through the GitHub API; returns what was sent. Called
    /// only after the write policy allowed the call.
    fn apply(&self, draft: &citriage_actions::Draft) -> Result<Value, ToolError>;
}

/// How the server behaves.
#[derive(Clone, Default)]
pub struct McpOptions {
    /// Who may use the write tool (default: nobody).
    pub writes: WritePolicy,
    /// The GitHub repository bugs of owned failure patterns go to (default `kubernetes/kubernetes`).
    pub issue_repo: Option<String>,
}

pub(crate) struct Inner {
    pub(crate) state: AppState,
    pub(crate) db: PathBuf,
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) opts: McpOptions,
    pool: Mutex<Vec<Store>>,
}

/// The MCP server: cheap to clone (each HTTP session gets a clone).
#[derive(Clone)]
pub struct McpServer(pub(crate) Arc<Inner>);

/// Store connections kept for answers.
const POOL: usize = 4;

impl McpServer {
    /// A server over the dashboard state of a store (its view and its store file).
    pub fn new(state: AppState, backend: Arc<dyn Backend>, opts: McpOptions) -> McpServer {
        let db = state.db_path().to_path_buf();
        McpServer(Arc::new(Inner { state, db, backend, opts, pool: Mutex::new(Vec::new()) }))
    }

    /// The store's path.
    pub fn db(&self) -> &Path {
        &self.0.db
    }

    /// Serves one client on stdin/stdout until it disconnects.
    pub async fn serve_stdio(self) -> Result<(), String> {
        use rmcp::ServiceExt;
        let running = self.serve(rmcp::transport::stdio()).await.map_err(|e| format!("mcp: {e}"))?;
        running.waiting().await.map_err(|e| format!("mcp: {e}"))?;
        Ok(())
    }

    /// [`McpServer::serve_stdio`] on a runtime of its own, for a synchronous caller.
    pub fn run_stdio(self) -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("mcp: {e}"))?;
        rt.block_on(self.serve_stdio())
    }

    /// The streamable-HTTP endpoint as a router to mount (`citriage serve` nests it at
    /// `/mcp`). The Host check is the dashboard's (it runs before any route), so the
    /// transport's own is off here.
    pub fn http_router(self) -> axum::Router {
        use rmcp::transport::streamable_http_server::{
            session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
        };
        let me = self.clone();
        let config = StreamableHttpServerConfig::default().disable_allowed_hosts();
        let svc = StreamableHttpService::new(move || Ok(me.clone()), Arc::new(LocalSessionManager::default()), config);
        axum::Router::new().fallback_service(svc)
    }
}

impl Inner {
    /// The dashboard's view, refreshed when the store changed.
    pub(crate) fn view(&self) -> Arc<WebIndex> {
        self.state.fresh_view()
    }

    /// Runs `f` with a pooled store connection.
    pub(crate) fn with_store<T>(&self, f: impl FnOnce(&mut Store) -> Result<T, ToolError>) -> Result<T, ToolError> {
        let pooled = self.pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut store = match pooled {
            Some(s) => s,
            None => {
                if !self.db.is_file() {
                    return Err(ToolError::other(format!("the store {} is gone", self.db.display())));
                }
                Store::open(&self.db)?
            }
        };
        let r = f(&mut store);
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < POOL {
            pool.push(store);
        }
        r
    }

    /// Appends evidence items to the store's ledger (through the dashboard's own
    /// connection, so the view is not rebuilt for it).
    pub(crate) fn record(&self, items: &[Evidence]) -> Result<(), ToolError> {
        if items.is_empty() {
            return Ok(());
        }
        self.state.record_evidence(items, &self.backend.now()).map(|_| ()).map_err(ToolError::from)
    }
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> m::ServerConfig {
        let caps = m::ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().build();
        let mut info = m::ServerConfig::new(caps).with_instructions(
            "citriage answers CI-triage questions from its store: failing jobs, job and test histories, failure \
             patterns with drift, regex search over failure texts, a build's failure lines, OpenShift payload \
             verdicts, pull-request states and report checks. Every answer lists the evidence ids it rests on; \
             lookup_evidence (or `citriage evidence ID`) shows what each one says. draft_action writes the next \
             step (revert, bisect, bug) only when the evidence meets the action's band.",
        );
        info.server_info = m::Implementation::new("citriage", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<m::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<m::ListToolsResult, ErrorData> {
        Ok(m::ListToolsResult::with_all_items(tools::catalogue(self.0.opts.writes.offers_writes())))
    }

    fn get_tool(&self, name: &str) -> Option<m::Tool> {
        tools::catalogue(self.0.opts.writes.offers_writes()).into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: m::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<m::CallToolResponse, ErrorData> {
        let parts = context.extensions.get::<http::request::Parts>().cloned();
        let inner = self.0.clone();
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let out = tokio::task::spawn_blocking(move || tools::call(&inner, &name, args, parts.as_ref()))
            .await
            .map_err(internal)?;
        Ok(match out {
            tools::Outcome::Unknown(name) => {
                return Err(ErrorData::invalid_params(format!("unknown tool {name:?}"), None));
            }
            tools::Outcome::Answer(v) => {
                let text = serde_json::to_string_pretty(&v).unwrap_or_default();
                let mut r = m::CallToolResult::success(vec![m::ContentBlock::text(text)]);
                r.structured_content = Some(v);
                r.into()
            }
            tools::Outcome::Failed(e) => m::CallToolResult::error(vec![m::ContentBlock::text(e.message)]).into(),
        })
    }

    async fn list_resources(
        &self,
        _request: Option<m::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<m::ListResourcesResult, ErrorData> {
        let inner = self.0.clone();
        let list = tokio::task::spawn_blocking(move || resources::list(&inner)).await.map_err(internal)?;
        Ok(m::ListResourcesResult::with_all_items(list.map_err(|e| ErrorData::internal_error(e.message, None))?))
    }

    async fn read_resource(
        &self,
        request: m::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<m::ReadResourceResponse, ErrorData> {
        let inner = self.0.clone();
        let uri = request.uri.clone();
        let out = tokio::task::spawn_blocking(move || resources::read(&inner, &uri)).await.map_err(internal)?;
        match out {
            Ok(r) => Ok(r.into()),
            Err(e) if e.bad_input => Err(ErrorData::resource_not_found(e.message, None)),
            Err(e) => Err(ErrorData::internal_error(e.message, None)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<m::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<m::ListPromptsResult, ErrorData> {
        Ok(m::ListPromptsResult::with_all_items(resources::prompts()))
    }

    async fn get_prompt(
        &self,
        request: m::GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<m::GetPromptResponse, ErrorData> {
        let inner = self.0.clone();
        let out =
            tokio::task::spawn_blocking(move || resources::prompt(&inner, &request.name, request.arguments.as_ref()))
                .await
                .map_err(internal)?;
        match out {
            Ok(r) => Ok(r.into()),
            Err(e) if e.bad_input => Err(ErrorData::invalid_params(e.message, None)),
            Err(e) => Err(ErrorData::internal_error(e.message, None)),
        }
    }
}
