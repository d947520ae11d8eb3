//! What the MCP server (`mcp`, `serve`) asks of the command line: the report
//! verifier with the store's GitHub cache and builds, pull-request states through the
//! same cache, the briefs `brief` writes, posting an action's requests, the clock.
//! The answers are the commands' own: `verify_report` is `verify --offline
//! --format json` on a text, `pr_state` what `gh sweep --offline` reads.

use crate::context::Failure;
use crate::documents::Verified;
use crate::verification::{check_report, VerifySetup};
use citriage_github::{IssueRef, RefState};
use citriage_mcp::{Briefs, ToolError};
use citriage_model::{Dataset, Evidence};
use citriage_store::Store;
use serde_json::{json, Value};
use std::path::Path;
use std::rc::Rc;

/// The command line as the MCP server's backend.
pub struct CliBackend {
    /// The GitHub API base for PR states and applied actions.
    pub api: String,
    /// Read PR states from GitHub (and cache them in the store) instead of the cache only.
    pub online: bool,
}

fn tool_err(f: Failure) -> ToolError {
    if f.bad_input {
        ToolError::input(f.message)
    } else {
        ToolError::other(f.message)
    }
}

/// A reference as `org/repo#n` or a GitHub pull-request or issue URL.
pub fn parse_ref(s: &str) -> Option<IssueRef> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix("https://github.com/") {
        let p: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        if p.len() >= 4 && (p[2] == "pull" || p[2] == "issues") {
            return IssueRef::parse(&format!("{}/{}#{}", p[0], p[1], p[3]));
        }
        return None;
    }
    IssueRef::parse(s)
}

impl citriage_mcp::Backend for CliBackend {
    fn now(&self) -> String {
        crate::pipeline::now_rfc3339()
    }

    fn verify_report(&self, db: &Path, text: &str, name: &str) -> Result<(Value, Vec<Evidence>), ToolError> {
        let store = Store::open(db)?;
        let setup = VerifySetup { api: self.api.clone(), offline: !self.online, ..VerifySetup::offline() };
        let verified = Verified { document: None, file_name: name, text };
        let (_, checked) = check_report(store, text, name, &verified, &setup, false).map_err(tool_err)?;
        let v: Value = serde_json::from_str(&checked.json).map_err(|e| ToolError::other(e.to_string()))?;
        let mut ev: Vec<Evidence> = checked.verification.findings.iter().flat_map(|f| f.evidence.clone()).collect();
        ev.extend(checked.verification.claims.iter().flat_map(|c| c.evidence.clone()));
        Ok((v, ev))
    }

    fn pr_state(&self, db: &Path, refs: &[String]) -> Result<(Value, Vec<Evidence>), ToolError> {
        let store = Rc::new(Store::open(db)?);
        let gh = crate::github::client(store, &self.api, !self.online);
        let mut rows = Vec::new();
        let mut evidence = Vec::new();
        for r in refs {
            let Some(ir) = parse_ref(r) else {
                return Err(ToolError::input(format!("{r:?} is not org/repo#N or a GitHub pull-request or issue URL")));
            };
            let state = gh.lookup(&ir);
            let ev = state.evidence();
            let (kind, title) = match &state {
                RefState::Pr(p) => ("pull request", p.title.clone()),
                RefState::Issue(i) => ("issue", i.title.clone()),
                RefState::NotFound { .. } => ("not found", String::new()),
                RefState::Unknown { .. } => ("unknown", String::new()),
            };
            rows.push(json!({
                "ref": format!("{}/{}#{}", ir.repo.owner, ir.repo.name, ir.number),
                "url": ir.html_url(),
                "kind": kind,
                "title": title,
                "state": state.state_text(),
                "why_unknown": state.unknown_reason(),
                "read": state.read().map(|r| r.describe(gh.now())),
                "evidence": ev.as_ref().map(|e| vec![e.id.clone()]).unwrap_or_default(),
            }));
            evidence.extend(ev);
        }
        Ok((json!({"offline": !self.online, "refs": rows}), evidence))
    }

    fn briefs(&self, db: &Path, dataset: Dataset) -> Result<Briefs, ToolError> {
        let mut store = Store::open(db)?;
        let w = crate::briefs::briefs(&mut store, dataset).map_err(tool_err)?;
        Ok(Briefs {
            dataset: dataset.as_str().to_string(),
            date: w.date.to_string(),
            items: w.files,
            evidence: w.ledger,
        })
    }

    fn apply(&self, draft: &citriage_actions::Draft) -> Result<Value, ToolError> {
        // The log of what is sent goes to stderr: stdout may be the protocol's channel.
        let sent = crate::actions::apply(draft, &self.api, &mut std::io::stderr()).map_err(tool_err)?;
        serde_json::to_value(&sent).map_err(|e| ToolError::other(e.to_string()))
    }
}
