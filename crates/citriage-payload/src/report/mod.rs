//! Rendering a [`PayloadAnalysis`]: a self-contained HTML report, its Markdown
//! and JSON twins, and `payload-results-<tag>.yaml` in the openshift-eng/ai-helpers shape.

use std::path::{Path, PathBuf};

use crate::error::PayloadError;
use crate::result::PayloadAnalysis;

pub mod consistency;
mod html;
mod markdown;
mod yaml;

pub use html::render_html;
pub use markdown::render_markdown;
pub use yaml::render_results_yaml;

/// The JSON twin: the analysis itself, pretty-printed, newline-terminated.
pub fn render_json(a: &PayloadAnalysis) -> String {
    let mut s = serde_json::to_string_pretty(a).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// A tag made safe for a file name.
pub fn sanitize(tag: &str) -> String {
    tag.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// Writes `payload-analysis-<tag>-summary.html`, `payload-analysis-<tag>.md`,
/// `payload-analysis-<tag>.json` and `payload-results-<tag>.yaml` into `dir`.
pub fn write_reports(a: &PayloadAnalysis, dir: &Path) -> Result<Vec<PathBuf>, PayloadError> {
    std::fs::create_dir_all(dir).map_err(|source| PayloadError::Io { path: dir.display().to_string(), source })?;
    let t = sanitize(&a.payload.tag);
    let files = [
        (format!("payload-analysis-{t}-summary.html"), render_html(a)),
        (format!("payload-analysis-{t}.md"), render_markdown(a)),
        (format!("payload-analysis-{t}.json"), render_json(a)),
        (format!("payload-results-{t}.yaml"), render_results_yaml(a)),
    ];
    let mut out = Vec::new();
    for (name, body) in files {
        let p = dir.join(name);
        std::fs::write(&p, body).map_err(|source| PayloadError::Io { path: p.display().to_string(), source })?;
        out.push(p);
    }
    Ok(out)
}
