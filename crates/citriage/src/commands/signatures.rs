//! `citriage signatures`: the known-signature catalogue (the built-in one, optionally
//! extended by a user file), listed or matched against a log.

use std::path::{Path, PathBuf};

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::signatures::{self, CatalogueRequest, Scope};
use citriage_patterns::signatures::{Catalogue, SignatureMatch, SignatureSpec};
use clap::{Args, ValueEnum};

/// List the known failure signatures (id, class, where they apply, what to do), or
/// show which of them match a log file, line by line. The same catalogue serves
/// `cluster`, `extract`, the triage report and the payload analysis.
#[derive(Args, Debug)]
pub struct SignaturesArgs {
    /// Extra signatures (TOML, the built-in file's shape) merged over the built-in
    /// catalogue; an entry with an existing id replaces it. Default: the built-in
    /// catalogue only.
    #[arg(long, value_name = "FILE")]
    pub signatures: Option<PathBuf>,
    /// Only signatures that apply here: `jobs` (test failures and build logs of CI
    /// jobs), `payload` (the failed steps of release payloads' jobs) or `all`.
    #[arg(long, value_enum, default_value_t = ScopeFilter::All)]
    pub scope: ScopeFilter,
    /// Only signatures of this class (infra, product, test, ci-config, by-design).
    /// Default: every class.
    #[arg(long, value_name = "CLASS")]
    pub class: Option<String>,
    /// Match the signatures against this log file (read up to 64 MiB) and print the
    /// ones that fire with the line that fired them, instead of listing the catalogue.
    /// Default: list the catalogue.
    #[arg(long = "match", value_name = "FILE")]
    pub match_file: Option<PathBuf>,
}

/// Where listed signatures apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScopeFilter {
    /// Test failures and build logs of CI jobs.
    Jobs,
    /// The failed steps of release payloads' jobs.
    Payload,
    /// Every signature.
    All,
}

/// Runs `citriage signatures`.
pub fn exec(ctx: &Context, a: &SignaturesArgs) -> Result<(), Failure> {
    let scope = match a.scope {
        ScopeFilter::Jobs => Scope::Jobs,
        ScopeFilter::Payload => Scope::Payload,
        ScopeFilter::All => Scope::All,
    };
    let req = CatalogueRequest { signatures: a.signatures.clone(), scope, class: a.class.clone() };
    let catalogue = signatures::catalogue(&req)?;
    match &a.match_file {
        Some(p) => {
            let found = signatures::match_file(&catalogue, p)?;
            show_matches(ctx, &catalogue, p, &found);
        }
        None => list(ctx, &catalogue.specs()),
    }
    Ok(())
}

fn list(ctx: &Context, specs: &[&SignatureSpec]) {
    if ctx.json() {
        print_json(&serde_json::json!({ "signatures": specs }));
        return;
    }
    outln!("{} signature(s)", specs.len());
    for s in specs {
        let scope = match (s.scope.jobs(), s.scope.payload()) {
            (true, true) => "jobs+payload",
            (false, true) => "payload",
            _ => "jobs",
        };
        let transient = if s.transient { ", transient" } else { "" };
        outln!();
        outln!("{} — {}", s.id, s.name);
        outln!("  class {} · applies to {scope}{transient}", s.class.as_str());
        if !s.fix.is_empty() {
            outln!("  fix: {}", s.fix);
        }
        if !s.references.is_empty() {
            outln!("  references: {}", s.references.join(", "));
        }
    }
}

fn show_matches(ctx: &Context, catalogue: &Catalogue, path: &Path, found: &[SignatureMatch]) {
    if ctx.json() {
        print_json(&serde_json::json!({ "file": path.display().to_string(), "matches": found }));
        return;
    }
    if found.is_empty() {
        outln!("{}: no known signature matches ({} signature(s) tried)", path.display(), catalogue.len());
        return;
    }
    for m in found {
        outln!("{} — {} ({})", m.id, m.name, m.class.as_str());
        for e in &m.evidence {
            let line: String = e.text.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect();
            outln!("  {}:{}: {}", path.display(), e.line, line);
        }
        if !m.fix.is_empty() {
            outln!("  fix: {}", m.fix);
        }
    }
}
