//! stub
use crate::analysis::PayloadAnalysis;
/// YAML.
pub fn render_results_yaml(_a: &PayloadAnalysis) -> String { String::new() }
