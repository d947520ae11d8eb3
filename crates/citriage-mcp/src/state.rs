//! What every answer reads and how it fails: the server's state (the dashboard's
//! view of the store, pooled store connections, the options) and [`ToolError`].

use crate::writes::WritePolicy;
use citriage_model::Evidence;
use citriage_store::Store;
use citriage_web::index::WebIndex;
use citriage_web::AppState;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

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

/// Use-case errors keep their word on whose fault they are.
impl From<citriage_app::Error> for ToolError {
    fn from(e: citriage_app::Error) -> Self {
        if e.is_bad_input() {
            ToolError::input(e.to_string())
        } else {
            ToolError::other(e.to_string())
        }
    }
}

/// How the server behaves.
#[derive(Clone)]
pub struct McpOptions {
    /// Who may use the write tool (default: nobody).
    pub writes: WritePolicy,
    /// The GitHub repository bugs of owned failure patterns go to (default `kubernetes/kubernetes`).
    pub issue_repo: Option<String>,
    /// The GitHub API base for pull-request states and applied actions.
    pub api: String,
    /// Read pull-request states from GitHub (and cache them in the store) instead of
    /// the store's cache only.
    pub github_online: bool,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            writes: WritePolicy::default(),
            issue_repo: None,
            api: citriage_github::DEFAULT_API_BASE.to_string(),
            github_online: false,
        }
    }
}

pub(crate) struct Inner {
    pub(crate) state: AppState,
    pub(crate) db: PathBuf,
    pub(crate) opts: McpOptions,
    pub(crate) pool: Mutex<Vec<Store>>,
}

/// Store connections kept for answers.
const POOL: usize = 4;

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
        self.state.record_evidence(items, &citriage_app::clock::now_rfc3339()).map(|_| ()).map_err(ToolError::from)
    }
}
