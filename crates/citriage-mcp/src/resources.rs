//! Resources and the prompt.
//!
//! - `citriage://triage/{dataset}/latest`: the newest stored triage report of a
//!   dataset (Markdown), and `citriage://reports/triage/{dataset}/{date}` for every
//!   stored one;
//! - `citriage://reports/payload/{tag}`: a stored payload analysis (Markdown);
//! - `citriage://briefs/{dataset}`: the investigation briefs of the latest triage of a
//!   dataset (each selected cluster's brief, then the cross-check brief), filled with
//!   verified facts and evidence ids;
//! - the prompt `investigate` (arguments `dataset`, `pattern`): one investigation
//!   brief (or all of them) as the user's message.
//!
//! Reading a brief records the evidence it cites in the store's ledger, like any
//! answer.

use crate::state::{Inner, ToolError};
use citriage_app::brief::Written;
use citriage_model::Dataset;
use rmcp::model::{
    GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource, ResourceContents,
    Role,
};

const MARKDOWN: &str = "text/markdown";

fn text(uri: &str, body: String) -> ReadResourceResult {
    ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
        uri: uri.to_string(),
        mime_type: Some(MARKDOWN.into()),
        text: body,
        meta: None,
    }])
}

fn resource(uri: String, name: String, title: String, description: String, size: Option<u64>) -> Resource {
    let mut r = Resource::new(uri, name).with_title(title).with_description(description).with_mime_type(MARKDOWN);
    r.size = size;
    r
}

/// Every resource, in a fixed order: the latest triage of each dataset, the briefs of
/// each dataset with a snapshot, then every stored triage report and payload analysis.
pub(crate) fn list(inner: &Inner) -> Result<Vec<Resource>, ToolError> {
    inner.with_store(|s| {
        let docs = s.documents(None)?;
        let mut out = Vec::new();
        for ds in [Dataset::Failures, Dataset::Flakes] {
            let prefix = format!("{}/", ds.as_str());
            let latest = docs
                .iter()
                .filter(|d| d.kind == "triage" && d.media_type == MARKDOWN && d.key.starts_with(&prefix))
                .max_by(|a, b| a.key.cmp(&b.key));
            if let Some(d) = latest {
                out.push(resource(
                    format!("citriage://triage/{}/latest", ds.as_str()),
                    format!("triage-{}-latest", ds.as_str()),
                    format!("Latest {} triage ({})", ds.as_str(), d.as_of),
                    format!("The newest stored {} triage report: {}", ds.as_str(), d.title),
                    Some(d.bytes),
                ));
            }
            if s.latest(ds)?.is_some() {
                out.push(resource(
                    format!("citriage://briefs/{}", ds.as_str()),
                    format!("briefs-{}", ds.as_str()),
                    format!("Investigation briefs ({})", ds.as_str()),
                    format!(
                        "The investigation brief of each cluster the latest {} triage selects, and the cross-check brief",
                        ds.as_str()
                    ),
                    None,
                ));
            }
        }
        for d in docs.iter().filter(|d| (d.kind == "triage" || d.kind == "payload") && d.media_type == MARKDOWN) {
            out.push(resource(
                format!("citriage://reports/{}/{}", d.kind, d.key),
                format!("{}-{}", d.kind, d.key.replace('/', "-")),
                d.title.clone(),
                format!("Stored {} report {} (as of {})", d.kind, d.key, d.as_of),
                Some(d.bytes),
            ));
        }
        Ok(out)
    })
}

fn dataset(s: &str) -> Result<Dataset, ToolError> {
    s.parse::<Dataset>().map_err(|_| ToolError::input(format!("unknown dataset {s:?} (failures or flakes)")))
}

/// The briefs `brief` writes for the latest triage of `ds`, their evidence recorded.
fn briefs_text(inner: &Inner, ds: Dataset) -> Result<Written, ToolError> {
    let b = inner.with_store(|s| Ok(citriage_app::brief::briefs(s, ds)?))?;
    inner.record(&b.ledger)?;
    Ok(b)
}

/// Reads one resource.
pub(crate) fn read(inner: &Inner, uri: &str) -> Result<ReadResourceResult, ToolError> {
    let rest = uri.strip_prefix("citriage://").ok_or_else(|| ToolError::input(format!("unknown resource {uri:?}")))?;
    let parts: Vec<&str> = rest.splitn(3, '/').collect();
    match parts.as_slice() {
        ["triage", ds, "latest"] => {
            let ds = dataset(ds)?;
            let prefix = format!("{}/", ds.as_str());
            inner.with_store(|s| {
                let latest = s
                    .documents(Some("triage"))?
                    .into_iter()
                    .filter(|d| d.media_type == MARKDOWN && d.key.starts_with(&prefix))
                    .max_by(|a, b| a.key.cmp(&b.key))
                    .ok_or_else(|| ToolError::input(format!("no {} triage report is stored", ds.as_str())))?;
                let doc = s
                    .document("triage", &latest.key, MARKDOWN)?
                    .ok_or_else(|| ToolError::other(format!("triage/{} vanished", latest.key)))?;
                Ok(text(uri, doc.body))
            })
        }
        ["reports", kind @ ("triage" | "payload"), key] => inner.with_store(|s| {
            let doc = s
                .document(kind, key, MARKDOWN)?
                .ok_or_else(|| ToolError::input(format!("no stored {kind} report {key:?}")))?;
            Ok(text(uri, doc.body))
        }),
        ["briefs", ds] => {
            let b = briefs_text(inner, dataset(ds)?)?;
            let mut body = String::new();
            for (name, t) in &b.files {
                body.push_str(&format!("<!-- {name} -->\n{t}\n"));
            }
            Ok(text(uri, body))
        }
        _ => Err(ToolError::input(format!("unknown resource {uri:?}"))),
    }
}

/// The prompts.
pub fn prompts() -> Vec<Prompt> {
    vec![Prompt::new(
        "investigate",
        Some(
            "The investigation brief of a failure cluster the latest triage selected, filled with verified facts \
             and evidence ids: start an investigation from it.",
        ),
        Some(vec![
            PromptArgument::new("dataset").with_description("failures (default) or flakes").with_required(false),
            PromptArgument::new("pattern")
                .with_description("the brief's letter (A, B, ...); default: every brief")
                .with_required(false),
        ]),
    )]
}

/// Fills a prompt.
pub(crate) fn prompt(inner: &Inner, name: &str, args: Option<&JsonObject>) -> Result<GetPromptResult, ToolError> {
    if name != "investigate" {
        return Err(ToolError::input(format!("unknown prompt {name:?}")));
    }
    let arg = |k: &str| args.and_then(|a| a.get(k)).and_then(|v| v.as_str()).map(str::trim).filter(|v| !v.is_empty());
    let ds = dataset(arg("dataset").unwrap_or("failures"))?;
    let b = briefs_text(inner, ds)?;
    let chosen: Vec<&(String, String)> = match arg("pattern") {
        None => b.files.iter().filter(|(n, _)| n.starts_with("brief-")).collect(),
        Some(p) => {
            let want = format!("brief-{}-", p.to_ascii_uppercase());
            let v: Vec<&(String, String)> = b.files.iter().filter(|(n, _)| n.starts_with(&want)).collect();
            if v.is_empty() {
                let known: Vec<&str> =
                    b.files.iter().filter_map(|(n, _)| n.strip_prefix("brief-")?.split('-').next()).collect();
                return Err(ToolError::input(format!("no brief {p:?} (known: {})", known.join(", "))));
            }
            v
        }
    };
    if chosen.is_empty() {
        return Err(ToolError::input(format!("the latest {} triage selects no cluster to investigate", ds.as_str())));
    }
    let mut body = format!(
        "Investigate with the citriage tools (every figure below carries an evidence id; lookup_evidence shows what it says). {} snapshot of {}.\n\n",
        ds.as_str(),
        b.date
    );
    for (_, t) in chosen {
        body.push_str(t);
        body.push('\n');
    }
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, body)])
        .with_description(format!("Investigation brief(s) of the latest {} triage", ds.as_str())))
}
