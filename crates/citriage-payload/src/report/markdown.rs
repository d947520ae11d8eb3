//! stub
use crate::analysis::PayloadAnalysis;
/// MD.
pub fn render_markdown(_a: &PayloadAnalysis) -> String { String::new() }
