//! `citriage extract`: the lines that explain one build's failure (build log and
//! JUnit), with line ranges and content hashes, preferring lines absent from a passing
//! build's log.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_patterns::extract::{extract_junit, extract_log, Excerpt, ExtractConfig};
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The lines that explain one build's failure (build log and JUnit), with 1-based
/// line ranges and content hashes; prefers lines absent from a passing build's log.
#[derive(Args, Debug)]
pub struct ExtractArgs {
    /// A build folder (with build-log.txt and artifacts/), a log file, or with --mirror a
    /// bucket path such as logs/<job>/<id>.
    pub build: String,
    /// A local mirror of the bucket; the passing build is then found through the store.
    #[arg(long, value_name = "DIR")]
    pub mirror: Option<PathBuf>,
    /// The bucket (for evidence links with --mirror).
    #[arg(long, default_value = "kubernetes-ci-logs")]
    pub bucket: String,
    /// A passing build's folder or log to diff against.
    #[arg(long, value_name = "DIR|FILE")]
    pub pass: Option<PathBuf>,
}

fn read_maybe(path: &Path) -> Result<Option<Vec<u8>>, Failure> {
    if !path.exists() {
        return Ok(None);
    }
    citriage_sources::read(&path.display().to_string(), &Default::default())
        .map(|f| Some(f.bytes))
        .map_err(|e| Failure::input(e.to_string()))
}

fn find_log(dir: &Path) -> Option<PathBuf> {
    ["build-log.txt", "build-log.txt.gz"].iter().map(|n| dir.join(n)).find(|p| p.exists())
}

/// Runs `citriage extract`.
pub fn exec(ctx: &Context, a: &ExtractArgs) -> Result<(), Failure> {
    let dir = match &a.mirror {
        Some(m) => m.join(a.build.trim_start_matches('/')),
        None => PathBuf::from(&a.build),
    };
    if !dir.exists() {
        return Err(Failure::input(format!("{}: no such build folder or log", dir.display())));
    }
    let (log_path, build_dir) = if dir.is_dir() {
        (find_log(&dir), dir.clone())
    } else {
        (Some(dir.clone()), dir.parent().map(Path::to_path_buf).unwrap_or_default())
    };
    let source = match &a.mirror {
        Some(_) => format!("https://prow.k8s.io/view/gs/{}/{}", a.bucket, a.build.trim_matches('/')),
        None => build_dir.display().to_string(),
    };
    let cfg = ExtractConfig::default();
    let fail = match &log_path {
        Some(p) => read_maybe(p)?,
        None => None,
    };
    // The passing log: given, or the newest passing build of the same job before this one.
    let mut pass_from = a.pass.clone();
    if pass_from.is_none() && a.mirror.is_some() {
        let parts: Vec<&str> = a.build.trim_matches('/').split('/').collect();
        if parts.len() >= 2 {
            let (job, id) = (parts[parts.len() - 2], parts[parts.len() - 1]);
            if let Ok(store) = ctx.open_store() {
                if let Ok(bs) = store.builds(Some(job)) {
                    let mine = bs.iter().find(|b| b.build_id == id).and_then(|b| b.started);
                    if let Some(t) = mine {
                        if let Some(p) = bs
                            .iter()
                            .rev()
                            .find(|b| b.result.as_deref() == Some("SUCCESS") && b.started.is_some_and(|s| s < t))
                        {
                            pass_from = a.mirror.as_ref().map(|m| m.join(&p.path));
                        }
                    }
                }
            }
        }
    }
    let pass = match &pass_from {
        Some(p) if p.is_dir() => match find_log(p) {
            Some(l) => read_maybe(&l)?,
            None => None,
        },
        Some(p) => read_maybe(p)?,
        None => None,
    };
    let mut excerpts: Vec<Excerpt> = Vec::new();
    let mut used_pass = false;
    let mut first_failure = None;
    if let Some(f) = &fail {
        let x = extract_log(f, pass.as_deref(), &format!("{source}/build-log.txt"), &cfg);
        used_pass = x.used_pass_log;
        first_failure = x.first_failure_line;
        excerpts.extend(x.excerpts);
    }
    // JUnit failures under artifacts/.
    let mut junit_files = Vec::new();
    let mut stack = vec![build_dir.join("artifacts")];
    while let Some(d) = stack.pop() {
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("junit") && n.to_string_lossy().ends_with(".xml"))
                {
                    junit_files.push(p);
                }
            }
        }
    }
    junit_files.sort();
    let mut junit_failures = 0;
    for jf in &junit_files {
        let Some(bytes) = read_maybe(jf)? else { continue };
        let rel = jf.strip_prefix(&build_dir).unwrap_or(jf).display().to_string();
        let parsed = citriage_formats::junit::parse_junit(&bytes, &rel);
        for c in parsed.cases.iter().filter(|c| {
            matches!(c.status, citriage_formats::junit::Status::Failed | citriage_formats::junit::Status::Error)
        }) {
            junit_failures += 1;
            let text = c.failure_text.clone().unwrap_or_default();
            excerpts.extend(extract_junit(&text, "", &format!("{source}/{rel} :: {}", c.name), &cfg));
        }
    }
    if fail.is_none() && junit_files.is_empty() {
        return Err(Failure::input(format!("{}: no build-log.txt and no JUnit files", build_dir.display())));
    }
    if ctx.json() {
        print_json(&json!({
            "build": source, "log": log_path.map(|p| p.display().to_string()),
            "passing_log": pass_from.map(|p| p.display().to_string()), "used_passing_log": used_pass,
            "first_failure_line": first_failure, "junit_failures": junit_failures, "excerpts": excerpts,
        }));
        return Ok(());
    }
    outln!(
        "{}: {} excerpt(s){}; first failure at line {}",
        source,
        excerpts.len(),
        if used_pass { " (lines absent from the passing log preferred)" } else { " (no passing log)" },
        first_failure.map(|l| l.to_string()).unwrap_or_else(|| "?".into())
    );
    for e in &excerpts {
        outln!("\n{}:{}-{}  {}", e.source, e.line_start, e.line_end, e.hash);
        for l in e.text.lines().take(12) {
            outln!("    {l}");
        }
    }
    Ok(())
}
