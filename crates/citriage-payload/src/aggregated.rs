//! Aggregated jobs: reading `junit-aggregated.xml`, whose test cases carry in
//! `<system-out>` a YAML document listing the underlying runs
//! (`passes[]` / `failures[]` / `skips[]` with `jobrunid`, `humanurl`,
//! `gcsartifacturl`) and a verdict sentence such as
//! "Failed: Passed 7 times, failed 3 times.  The historical pass rate is 98%.
//! The required number of passes is 8."
//!
//! The YAML is read by a tiny reader for this fixed shape (block mappings,
//! block sequences at the same or deeper indentation as their key, plain /
//! single-quoted / double-quoted scalars that may continue over several lines,
//! `|` and `>` block scalars, `[]` / `{}` empty flows, `#` comments), not a
//! general YAML parser.

use std::collections::BTreeSet;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::junit::{CaseStatus, JunitCase};
use crate::release::prow_job_from_url;

/// A YAML node of the subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Yaml {
    Str(String),
    Seq(Vec<Yaml>),
    Map(Vec<(String, Yaml)>),
}

impl Yaml {
    /// The value of a key in a mapping.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(m) => m.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The scalar text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }
}

struct Line<'a> {
    indent: usize,
    text: &'a str,
}

/// Parses the YAML subset. Errors name the 1-based line.
pub fn parse_yaml(input: &str) -> Result<Yaml, String> {
    let lines: Vec<Line> = input
        .lines()
        .map(|l| {
            let t = l.trim_end_matches('\r');
            let indent = t.len() - t.trim_start_matches(' ').len();
            Line { indent, text: &t[indent..] }
        })
        .collect();
    let mut p = Parser { lines, pos: 0 };
    p.skip_blank();
    if p.pos >= p.lines.len() {
        return Ok(Yaml::Map(Vec::new()));
    }
    if p.lines[p.pos].text == "---" {
        p.pos += 1;
        p.skip_blank();
    }
    let indent = p.lines.get(p.pos).map(|l| l.indent).unwrap_or(0);
    p.block(indent)
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

fn is_blank(l: &Line) -> bool {
    l.text.is_empty() || l.text.starts_with('#')
}

fn split_key(text: &str) -> Option<(String, &str)> {
    // key: value — keys may be quoted.
    if let Some(rest) = text.strip_prefix('"') {
        let end = rest.find('"')?;
        let after = rest[end + 1..].strip_prefix(':')?;
        return Some((rest[..end].to_string(), after.trim_start()));
    }
    if let Some(rest) = text.strip_prefix('\'') {
        let end = rest.find('\'')?;
        let after = rest[end + 1..].strip_prefix(':')?;
        return Some((rest[..end].to_string(), after.trim_start()));
    }
    let idx = text.find(": ").or_else(|| text.strip_suffix(':').map(|s| s.len()))?;
    let key = &text[..idx];
    if key.is_empty() {
        return None;
    }
    Some((key.trim().to_string(), text[idx + 1..].trim_start()))
}

impl<'a> Parser<'a> {
    fn skip_blank(&mut self) {
        while self.pos < self.lines.len() && is_blank(&self.lines[self.pos]) {
            self.pos += 1;
        }
    }

    fn block(&mut self, indent: usize) -> Result<Yaml, String> {
        self.skip_blank();
        let Some(l) = self.lines.get(self.pos) else { return Ok(Yaml::Map(Vec::new())) };
        if l.text == "-" || l.text.starts_with("- ") {
            self.seq(indent)
        } else {
            self.map(indent, None)
        }
    }

    fn seq(&mut self, indent: usize) -> Result<Yaml, String> {
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            let Some(l) = self.lines.get(self.pos) else { break };
            if l.indent != indent || !(l.text == "-" || l.text.starts_with("- ")) {
                if l.indent > indent {
                    return Err(format!("line {}: unexpected indentation in a sequence", self.pos + 1));
                }
                break;
            }
            let content = l.text[1..].trim_start();
            let item_indent = indent + (l.text.len() - content.len());
            if content.is_empty() {
                self.pos += 1;
                self.skip_blank();
                match self.lines.get(self.pos) {
                    Some(n) if n.indent > indent => items.push(self.block(n.indent)?),
                    _ => items.push(Yaml::Str(String::new())),
                }
            } else if content.starts_with("- ") {
                // Nested sequence on the same line: treat as a sequence at the item indent.
                self.lines[self.pos] = Line { indent: item_indent, text: content };
                items.push(self.seq(item_indent)?);
            } else if split_key(content).is_some() {
                self.lines[self.pos] = Line { indent: item_indent, text: content };
                items.push(self.map(item_indent, None)?);
            } else {
                items.push(self.scalar(content, indent)?);
            }
        }
        Ok(Yaml::Seq(items))
    }

    fn map(&mut self, indent: usize, _first: Option<()>) -> Result<Yaml, String> {
        let mut entries = Vec::new();
        loop {
            self.skip_blank();
            let Some(l) = self.lines.get(self.pos) else { break };
            if l.indent < indent {
                break;
            }
            if l.indent > indent {
                return Err(format!("line {}: unexpected indentation", self.pos + 1));
            }
            if l.text == "-" || l.text.starts_with("- ") {
                break;
            }
            let Some((key, value)) = split_key(l.text) else {
                return Err(format!("line {}: expected `key: value`", self.pos + 1));
            };
            let value = strip_comment(value);
            if value.is_empty() {
                self.pos += 1;
                self.skip_blank();
                match self.lines.get(self.pos) {
                    Some(n) if n.indent > indent => {
                        let child = self.block(n.indent)?;
                        entries.push((key, child));
                    }
                    Some(n) if n.indent == indent && (n.text == "-" || n.text.starts_with("- ")) => {
                        let child = self.seq(indent)?;
                        entries.push((key, child));
                    }
                    _ => entries.push((key, Yaml::Str(String::new()))),
                }
            } else {
                let v = self.scalar(value, indent)?;
                entries.push((key, v));
            }
        }
        Ok(Yaml::Map(entries))
    }

    /// Reads a scalar starting on the current line (whose value part is `value`);
    /// continuation lines are those indented deeper than `parent_indent`.
    fn scalar(&mut self, value: &str, parent_indent: usize) -> Result<Yaml, String> {
        let start = self.pos;
        self.pos += 1;
        match value {
            "[]" => return Ok(Yaml::Seq(Vec::new())),
            "{}" => return Ok(Yaml::Map(Vec::new())),
            "~" | "null" => return Ok(Yaml::Str(String::new())),
            _ => {}
        }
        if value.starts_with('|') || value.starts_with('>') {
            let folded = value.starts_with('>');
            let keep_last = !value.contains('-');
            let mut body: Vec<String> = Vec::new();
            let mut block_indent = None;
            while let Some(l) = self.lines.get(self.pos) {
                if !l.text.is_empty() && l.indent <= parent_indent {
                    break;
                }
                if l.text.is_empty() {
                    body.push(String::new());
                } else {
                    let bi = *block_indent.get_or_insert(l.indent);
                    body.push(format!("{}{}", " ".repeat(l.indent.saturating_sub(bi)), l.text));
                }
                self.pos += 1;
            }
            while body.last().is_some_and(|s| s.is_empty()) {
                body.pop();
            }
            let mut s = if folded { body.join(" ") } else { body.join("\n") };
            if keep_last && !s.is_empty() {
                s.push('\n');
            }
            return Ok(Yaml::Str(s));
        }
        if let Some(q) = value.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let mut text = value[1..].to_string();
            loop {
                if let Some(end) = closing_quote(&text, q) {
                    let raw = &text[..end];
                    return Ok(Yaml::Str(if q == '"' { unescape_double(raw) } else { raw.replace("''", "'") }));
                }
                let Some(l) = self.lines.get(self.pos) else {
                    return Err(format!("line {}: unterminated quoted string", start + 1));
                };
                // Line folding: a line break becomes a space; empty lines become newlines.
                if l.text.is_empty() {
                    text.push('\n');
                } else {
                    if !text.ends_with('\n') {
                        text.push(' ');
                    }
                    text.push_str(l.text);
                }
                self.pos += 1;
            }
        }
        let mut s = value.to_string();
        while let Some(l) = self.lines.get(self.pos) {
            if is_blank(l) || l.indent <= parent_indent || l.text.starts_with("- ") {
                break;
            }
            s.push(' ');
            s.push_str(strip_comment(l.text));
            self.pos += 1;
        }
        Ok(Yaml::Str(s))
    }
}

fn strip_comment(v: &str) -> &str {
    if v.starts_with('"') || v.starts_with('\'') {
        return v;
    }
    match v.find(" #") {
        Some(i) => v[..i].trim_end(),
        None => v,
    }
}

fn closing_quote(text: &str, q: char) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if q == '"' && c == '\\' {
            i += 2;
            continue;
        }
        if c == q {
            if q == '\'' && i + 1 < b.len() && b[i + 1] == b'\'' {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

fn unescape_double(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('0') => out.push('\0'),
            Some(' ') => out.push(' '),
            Some('x') => {
                let h: String = chars.by_ref().take(2).collect();
                if let Some(ch) = u32::from_str_radix(&h, 16).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some('u') => {
                let h: String = chars.by_ref().take(4).collect();
                if let Some(ch) = u32::from_str_radix(&h, 16).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// One underlying run named by an aggregated test.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct UnderlyingRun {
    pub job_run_id: String,
    pub human_url: String,
    pub gcs_artifact_url: String,
    /// The Prow job name from `humanurl` (the underlying job).
    pub job: Option<String>,
}

/// The aggregator's tally sentence ("Passed 7 times, failed 3 times ..."), parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassTally {
    pub passed: bool,
    pub passes: u32,
    pub failures: u32,
    pub historical_pass_rate: Option<u32>,
    pub required_passes: Option<u32>,
    /// The sentence as written.
    pub sentence: String,
}

/// One test case of `junit-aggregated.xml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AggregatedTest {
    pub name: String,
    pub suite: String,
    /// True when the aggregated test case failed.
    pub failed: bool,
    /// The test's lifecycle is informing (`*** NON-BLOCKING FAILURE`): its
    /// failure cannot fail the job.
    #[serde(default)]
    pub informing: bool,
    pub verdict: Option<PassTally>,
    pub passes: Vec<UnderlyingRun>,
    pub failures: Vec<UnderlyingRun>,
    pub skips: Vec<UnderlyingRun>,
    /// Runs that did not finish or wrote no JUnit.
    pub incomplete: Vec<UnderlyingRun>,
    /// 1-based line of the test case in the XML.
    pub line: u32,
    /// Problem reading the YAML, if any.
    pub problem: Option<String>,
}

fn runs_of(y: Option<&Yaml>) -> Vec<UnderlyingRun> {
    let mut out = Vec::new();
    if let Some(Yaml::Seq(items)) = y {
        for it in items {
            let s = |k: &str| it.get(k).and_then(Yaml::as_str).unwrap_or("").to_string();
            let human = s("humanurl");
            out.push(UnderlyingRun {
                job_run_id: s("jobrunid"),
                job: prow_job_from_url(&human),
                human_url: human,
                gcs_artifact_url: s("gcsartifacturl"),
            });
        }
    }
    out
}

/// Parses the verdict sentence.
pub fn parse_verdict(summary: &str) -> Option<PassTally> {
    let counts = Regex::new(r"Passed (\d+) times?, failed (\d+) times?").ok()?;
    let c = counts.captures(summary)?;
    let passes: u32 = c[1].parse().ok()?;
    let failures: u32 = c[2].parse().ok()?;
    let hist = Regex::new(r"historical pass rate is (\d+)%").ok()?.captures(summary).and_then(|c| c[1].parse().ok());
    let req = Regex::new(r"required number of passes is (\d+)|requiredPasses=(\d+)|require at least (\d+)")
        .ok()?
        .captures(summary)
        .and_then(|c| c.iter().skip(1).flatten().next().and_then(|m| m.as_str().parse().ok()));
    let t = summary.trim_start();
    let passed = if t.starts_with("Failed") {
        false
    } else if t.starts_with("Passed:") {
        true
    } else {
        req.map(|r| passes >= r).unwrap_or(failures == 0)
    };
    Some(PassTally {
        passed,
        passes,
        failures,
        historical_pass_rate: hist,
        required_passes: req,
        sentence: summary.split_whitespace().collect::<Vec<_>>().join(" "),
    })
}

/// True for an aggregator message saying the failure is not terminal (informing lifecycle).
pub fn is_non_blocking(message: &str) -> bool {
    message.contains("NON-BLOCKING FAILURE") || message.contains("lifecycle is 'informing'")
}

/// Reads the aggregated tests of a parsed `junit-aggregated.xml`. Test cases
/// without YAML in `<system-out>` are skipped.
pub fn aggregated_tests(cases: &[JunitCase]) -> Vec<AggregatedTest> {
    let mut out = Vec::new();
    for c in cases {
        let so = c.system_out.trim();
        if so.is_empty() {
            continue;
        }
        let (y, problem) = match parse_yaml(so) {
            Ok(y) => (y, None),
            Err(e) => (Yaml::Map(Vec::new()), Some(format!("system-out YAML: {e}"))),
        };
        let passes = runs_of(y.get("passes"));
        let failures = runs_of(y.get("failures"));
        if problem.is_none() && passes.is_empty() && failures.is_empty() && y.get("summary").is_none() {
            continue;
        }
        let summary = y.get("summary").and_then(Yaml::as_str).unwrap_or("").to_string();
        let verdict = parse_verdict(&summary).or_else(|| parse_verdict(&c.message));
        let mut incomplete = runs_of(y.get("unfinished"));
        incomplete.extend(runs_of(y.get("missingJUnits")));
        let failed =
            matches!(c.status, CaseStatus::Failed | CaseStatus::Error) || verdict.as_ref().is_some_and(|v| !v.passed);
        out.push(AggregatedTest {
            name: y.get("name").and_then(Yaml::as_str).filter(|s| !s.is_empty()).unwrap_or(&c.name).to_string(),
            suite: y.get("testsuitename").and_then(Yaml::as_str).unwrap_or(&c.suite).to_string(),
            failed,
            informing: c.informing || is_non_blocking(&c.message) || is_non_blocking(&summary),
            verdict,
            passes,
            failures,
            skips: runs_of(y.get("skips")),
            incomplete,
            line: c.line,
            problem,
        });
    }
    out
}

/// The underlying Prow job names of a set of aggregated tests.
pub fn underlying_jobs(tests: &[AggregatedTest]) -> BTreeSet<String> {
    tests
        .iter()
        .flat_map(|t| t.passes.iter().chain(&t.failures).chain(&t.skips).chain(&t.incomplete))
        .filter_map(|r| r.job.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_v2_shape() {
        let y = r#"name: '[sig-network] pods should be reachable: it''s long and
  wraps onto the next line'
testsuitename: openshift-tests
summary: 'Failed: Passed 7 times, failed 3 times.  The historical pass rate is 98%.  The
  required number of passes is 8.'
passes:
- jobrunid: "1001"
  humanurl: https://prow.ci.openshift.org/view/gs/test-platform-results/logs/periodic-ci-openshift-release-main-ci-4.22-e2e-aws-upgrade/1001
  gcsartifacturl: https://gcsweb/1001
failures:
- jobrunid: "1002"
  humanurl: https://prow.ci.openshift.org/view/gs/test-platform-results/logs/periodic-ci-openshift-release-main-ci-4.22-e2e-aws-upgrade/1002
skips: []
"#;
        let v = parse_yaml(y).unwrap();
        assert_eq!(
            v.get("name").unwrap().as_str().unwrap(),
            "[sig-network] pods should be reachable: it's long and wraps onto the next line"
        );
        let sum = v.get("summary").unwrap().as_str().unwrap();
        let verdict = parse_verdict(sum).unwrap();
        assert!(!verdict.passed);
        assert_eq!(
            (verdict.passes, verdict.failures, verdict.historical_pass_rate, verdict.required_passes),
            (7, 3, Some(98), Some(8))
        );
        let passes = runs_of(v.get("passes"));
        assert_eq!(passes[0].job_run_id, "1001");
        assert_eq!(passes[0].job.as_deref(), Some("periodic-ci-openshift-release-main-ci-4.22-e2e-aws-upgrade"));
        assert_eq!(runs_of(v.get("failures")).len(), 1);
        assert!(matches!(v.get("skips"), Some(Yaml::Seq(s)) if s.is_empty()));
    }

    #[test]
    fn indented_sequences_and_blocks() {
        let y = "a:\n  - x: \"1\"\n    y: two\n  - x: \"3\"\nb: |\n  line one\n  line two\nc: plain\n  continued\n";
        let v = parse_yaml(y).unwrap();
        match v.get("a").unwrap() {
            Yaml::Seq(items) => {
                assert_eq!(items.len(), 2);
                assert_eq!(items[0].get("y").unwrap().as_str(), Some("two"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(v.get("b").unwrap().as_str(), Some("line one\nline two\n"));
        assert_eq!(v.get("c").unwrap().as_str(), Some("plain continued"));
        assert!(parse_yaml("a: 'open\n").is_err());
    }
}
