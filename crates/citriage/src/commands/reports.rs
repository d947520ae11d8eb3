//! `citriage reports`: list the documents recorded in the store, or print one.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_store::Store;
use clap::{Args, Subcommand};
use serde_json::json;

/// List the documents recorded in the store (triage reports, payload analyses,
/// verifier results), or print one with `reports show KIND KEY`.
#[derive(Args, Debug)]
pub struct ReportsArgs {
    /// Only documents of this kind (triage, payload, verify).
    /// Default: every kind.
    #[arg(long)]
    pub kind: Option<String>,
    #[command(subcommand)]
    pub what: Option<ReportsWhat>,
}

#[derive(Subcommand, Debug)]
pub enum ReportsWhat {
    /// Print one stored document's body (with --format json: the document with its
    /// title and date).
    Show {
        /// triage, payload or verify.
        kind: String,
        /// As listed, e.g. failures/2026-11-21 or a payload tag.
        key: String,
        /// text/markdown, application/json or text/html. Default: the first stored of
        /// these, in that order.
        #[arg(long, value_name = "TYPE")]
        media_type: Option<String>,
    },
}

/// Runs `citriage reports`.
pub fn exec(ctx: &Context, a: &ReportsArgs) -> Result<(), Failure> {
    let store = ctx.open_existing_store()?;
    match &a.what {
        None => list(ctx, &store, a.kind.as_deref()),
        Some(ReportsWhat::Show { kind, key, media_type }) => show(ctx, &store, kind, key, media_type.as_deref()),
    }
}

fn list(ctx: &Context, store: &Store, kind: Option<&str>) -> Result<(), Failure> {
    let docs = citriage_app::reports::list(store, kind)?;
    if ctx.json() {
        let rows: Vec<_> = docs
            .iter()
            .map(|d| {
                json!({"kind": d.kind, "key": d.key, "media_type": d.media_type, "title": d.title,
                       "as_of": d.as_of, "bytes": d.bytes})
            })
            .collect();
        print_json(&json!({ "store": store.path(), "documents": rows }));
        return Ok(());
    }
    if docs.is_empty() {
        outln!("no documents in {}", store.path());
    }
    for d in docs {
        outln!(
            "{:<8} {:<40} {:<16} {:>9}  {:<25} {}",
            d.kind,
            d.key,
            d.media_type,
            d.bytes,
            if d.as_of.is_empty() { "-" } else { &d.as_of },
            d.title
        );
    }
    Ok(())
}

fn show(ctx: &Context, store: &Store, kind: &str, key: &str, media_type: Option<&str>) -> Result<(), Failure> {
    let doc = citriage_app::reports::show(store, kind, key, media_type)?;
    if ctx.json() {
        print_json(&json!({"kind": doc.kind, "key": doc.key, "media_type": doc.media_type, "title": doc.title,
                           "as_of": doc.as_of, "body": doc.body}));
    } else {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(doc.body.as_bytes());
        if !doc.body.ends_with('\n') {
            let _ = out.write_all(b"\n");
        }
    }
    Ok(())
}
