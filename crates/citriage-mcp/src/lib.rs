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
//! stored payload analyses as `citriage payload` recorded them; and the use cases of
//! `citriage-app` the command line runs too (the verifier, pull-request states through
//! the store's GitHub cache, the brief writer, sending a draft). One truth per figure:
//! an agent, the dashboard and the command line answer the same question with the
//! same number.
//!
//! Answers are compact by default (the figures, ids and one-line texts an agent needs to
//! choose its next call) and lists come a page at a time with a deterministic cursor
//! ([`page`]); `detail` gives the long form. Where the store holds no dashboard
//! snapshot, `list_failing_jobs` answers from the stored builds and says so.
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

use citriage_web::AppState;
use rmcp::model as m;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use state::Inner;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub mod answers;
pub mod args;
pub mod page;
pub mod pr_risk;
pub mod resources;
pub mod state;
pub mod tools;
pub mod writes;

pub use state::{McpOptions, ToolError};
pub use writes::WritePolicy;

/// The MCP server: cheap to clone (each HTTP session gets a clone).
#[derive(Clone)]
pub struct McpServer(pub(crate) Arc<Inner>);

impl McpServer {
    /// A server over the dashboard state of a store (its view and its store file).
    pub fn new(state: AppState, opts: McpOptions) -> McpServer {
        let db = state.db_path().to_path_buf();
        McpServer(Arc::new(Inner { state, db, opts, pool: Mutex::new(Vec::new()) }))
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
                let text = serde_json::to_string(&v).unwrap_or_default();
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
