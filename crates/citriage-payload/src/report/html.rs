//! stub
use crate::analysis::PayloadAnalysis;
/// HTML.
pub fn render_html(_a: &PayloadAnalysis) -> String { String::new() }
