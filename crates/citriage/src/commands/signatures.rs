//! `citriage signatures`: the known-signature catalogue (the built-in one, optionally
//! extended by a user file), listed or matched against a log.

use std::io::Read;
use std::path::PathBuf;

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_patterns::signatures::{Catalogue, FailureClass, SignatureSpec};
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

/// The largest log `--match` reads.
const MATCH_LIMIT: u64 = 64 << 20;

/// Runs `citriage signatures`.
pub fn exec(ctx: &Context, a: &SignaturesArgs) -> Result<(), Failure> {
    let mut catalogue = Catalogue::builtin_all();
    if let Some(p) = &a.signatures {
        let text =
            std::fs::read_to_string(p).map_err(|e| Failure::input(format!("{}: cannot read: {e}", p.display())))?;
        let user = Catalogue::from_toml(&text).map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
        catalogue.merge(user).map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
    }
    let class = match &a.class {
        None => None,
        Some(c) => Some(parse_class(c)?),
    };
    let scope = a.scope;
    let catalogue = catalogue.only(|s| {
        let in_scope = match scope {
            ScopeFilter::Jobs => s.scope.jobs(),
            ScopeFilter::Payload => s.scope.payload(),
            ScopeFilter::All => true,
        };
        in_scope && class.is_none_or(|c| s.class == c)
    });
    match &a.match_file {
        Some(p) => show_matches(ctx, &catalogue, p),
        None => {
            list(ctx, &catalogue.specs());
            Ok(())
        }
    }
}

fn parse_class(text: &str) -> Result<FailureClass, Failure> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).map_err(|_| {
        Failure::input(format!("--class {text:?}: expected one of infra, product, test, ci-config, by-design"))
    })
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

fn show_matches(ctx: &Context, catalogue: &Catalogue, path: &PathBuf) -> Result<(), Failure> {
    let file =
        std::fs::File::open(path).map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MATCH_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    if bytes.len() as u64 > MATCH_LIMIT {
        return Err(Failure::input(format!(
            "{}: larger than {} MiB; match a tail of it (e.g. `tail -c 8M`)",
            path.display(),
            MATCH_LIMIT >> 20
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    let found = catalogue.match_lines(text.lines().enumerate().map(|(i, l)| (i + 1, l)));
    if ctx.json() {
        print_json(&serde_json::json!({ "file": path.display().to_string(), "matches": found }));
        return Ok(());
    }
    if found.is_empty() {
        outln!("{}: no known signature matches ({} signature(s) tried)", path.display(), catalogue.len());
        return Ok(());
    }
    for m in &found {
        outln!("{} — {} ({})", m.id, m.name, m.class.as_str());
        for e in &m.evidence {
            let line: String = e.text.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect();
            outln!("  {}:{}: {}", path.display(), e.line, line);
        }
        if !m.fix.is_empty() {
            outln!("  fix: {}", m.fix);
        }
    }
    Ok(())
}
