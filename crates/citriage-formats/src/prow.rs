//! Prow build metadata: `started.json`, `finished.json` and `prowjob.json` (podutils
//! and legacy bootstrap variants), Deck's job-history `allBuilds` pages and Prow's
//! `prowjobs.js` listing. Parsers are lenient about optional fields and strict about
//! types of the fields they use; errors name the document.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// What a build's `started.json` says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Started {
    /// Unix seconds.
    pub timestamp: Option<i64>,
    pub node: Option<String>,
    /// The PR number for presubmits (`pull`).
    pub pull: Option<String>,
    /// `org/repo` → `base_ref:base_sha,pr:pr_sha` (or just a ref).
    pub repos: BTreeMap<String, String>,
    pub repo_commit: Option<String>,
    pub repo_version: Option<String>,
    /// What kettle takes as the build's commit: the top-level `repo-commit`, else
    /// `repo-version` (never the metadata's).
    pub kettle_repo_commit: Option<String>,
    /// The top-level `repos` as kettle stores it (Python's `json.dumps`), when present.
    pub kettle_repos: Option<String>,
    /// `metadata.repos` as kettle stores it, when it is not a string.
    pub metadata_repos: Option<String>,
    /// What the build ran with: version-like entries (`job-version`, `metadata.KEY`, the
    /// pod spec's images), see [`crate::build_versions`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<(String, String)>,
    /// Fields dropped because their number cannot be held as written, each naming the
    /// file, the field and the number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// What a build's `finished.json` says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    pub timestamp: Option<i64>,
    pub passed: Option<bool>,
    /// `SUCCESS`, `FAILURE`, `ABORTED`, ... (upper-cased).
    pub result: Option<String>,
    pub revision: Option<String>,
    pub metadata_repo_commit: Option<String>,
    /// The result as kettle records it: `result` verbatim when the key exists (any
    /// case, `None` when null), else `SUCCESS`/`FAILURE` from a boolean `passed`.
    pub kettle_result: Option<String>,
    /// `version` (kettle's `version` column).
    pub version: Option<String>,
    /// Whether the file has a `metadata` key (kettle then reads its metadata here, not
    /// in `started.json`).
    pub has_metadata: bool,
    /// `metadata.repos` as kettle stores it, when it is not a string.
    pub metadata_repos: Option<String>,
    /// What the build ran with: version-like entries (`job-version`, `metadata.KEY`, the
    /// pod spec's images), see [`crate::build_versions`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<(String, String)>,
    /// Fields dropped because their number cannot be held as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// The parts of a ProwJob that triage uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProwJob {
    pub job: Option<String>,
    /// `periodic`, `presubmit`, `postsubmit`, `batch`.
    pub job_type: Option<String>,
    /// `triggered`, `pending`, `success`, `failure`, `aborted`, `error`.
    pub state: Option<String>,
    pub description: Option<String>,
    pub start_time: Option<String>,
    pub completion_time: Option<String>,
    pub url: Option<String>,
    pub build_id: Option<String>,
    pub org: Option<String>,
    pub repo: Option<String>,
    pub base_sha: Option<String>,
    pub pulls: Vec<(u64, String)>,
    pub cluster: Option<String>,
    pub creation_timestamp: Option<String>,
    /// Fields dropped because their number cannot be held as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// The job config's `testgrid-dashboards` annotation (comma-separated TestGrid
    /// dashboards, e.g. `sig-release-master-blocking, google-gce`), which Prow copies
    /// onto every ProwJob it creates.
    pub testgrid_dashboards: Option<String>,
    /// The `testgrid-tab-name` annotation: the job's tab on those dashboards.
    pub testgrid_tab: Option<String>,
    /// What the build ran with: version-like entries (the pod spec's images and version
    /// flags; read from `prowjob.json` only), see [`crate::build_versions`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<(String, String)>,
}

fn json(bytes: &[u8], what: &str) -> Result<Value, String> {
    // A UTF-8 byte order mark is accepted.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(format!("{what}: the file is empty"));
    }
    // Prow writes its numbers from 64-bit integers and floats; a listing with a number
    // beyond them is refused with its field, never read with a rounded stand-in.
    if let Some(x) = crate::strict_json::first_inexact_number(bytes) {
        return Err(format!("{what}: field {:?}: {}", x.dotted(), x.problem()));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        if e.classify() == serde_json::error::Category::Eof {
            format!("{what}: truncated JSON at line {} column {}", e.line(), e.column())
        } else {
            format!("{what}: not valid JSON: {e}")
        }
    })
}

/// [`json`] for one build's document: a number no field can hold as written is read
/// as absent (`null`) and named in the problems returned (file, field, the number as
/// written), so the rest of the document still counts.
fn json_dropping_inexact(bytes: &[u8], what: &str) -> Result<(Value, Vec<String>), String> {
    let found = crate::strict_json::inexact_numbers(bytes, usize::MAX);
    if found.is_empty() {
        return Ok((json(bytes, what)?, Vec::new()));
    }
    let mut clean = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for x in &found {
        clean.extend_from_slice(&bytes[at..x.span.0]);
        clean.extend_from_slice(b"null");
        at = x.span.1;
    }
    clean.extend_from_slice(&bytes[at..]);
    let problems = found.iter().map(|x| format!("{what}: field {:?}: {}; ignored", x.dotted(), x.problem())).collect();
    Ok((json(&clean, what)?, problems))
}

fn obj<'a>(v: &'a Value, what: &str) -> Result<&'a serde_json::Map<String, Value>, String> {
    v.as_object().ok_or_else(|| format!("{what}: expected a JSON object"))
}

fn int(v: Option<&Value>, what: &str, field: &str) -> Result<Option<i64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        // An integer beyond i64 is refused as written (never saturated); a fraction
        // keeps its whole seconds (the JSON layer refuses fractions beyond 2^53).
        Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(Some(i)),
            (None, Some(f)) if !n.is_u64() && f.is_finite() && f.abs() < 9_007_199_254_740_992.0 => {
                Ok(Some(f.trunc() as i64))
            }
            _ => Err(format!("{what}: field {field:?}: the number {n} is too large (a signed 64-bit integer is read)")),
        },
        // Some producers write timestamps as strings.
        Some(Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| format!("{what}: field {field:?}: expected a number, found {s:?}")),
        Some(other) => Err(format!("{what}: field {field:?}: expected a number, found {other}")),
    }
}

/// [`int`] for a field whose too-large number is dropped (named in `problems`) rather
/// than failing the document.
fn int_or_drop(v: Option<&Value>, what: &str, field: &str, problems: &mut Vec<String>) -> Result<Option<i64>, String> {
    if let Some(Value::Number(n)) = v {
        if n.as_i64().is_none() && n.is_u64() {
            problems.push(format!(
                "{what}: field {field:?}: the number {n} is too large (a signed 64-bit integer is read); ignored"
            ));
            return Ok(None);
        }
    }
    int(v, what, field)
}

/// A timestamp read from CI data, checked at this layer: Unix seconds within the sane
/// window (2000-01-01 to 2100-01-01, [`citriage_model::time::is_sane`]). `Err` names
/// the file, the field and the value; the caller records it as the build's problem and
/// goes on without the timestamp.
pub fn checked_timestamp(t: Option<i64>, what: &str, field: &str) -> Result<Option<i64>, String> {
    match t {
        Some(t) if !citriage_model::time::is_sane(t) => Err(format!(
            "{what}: field {field:?}: {t} is outside the accepted window (2000-01-01 to 2100-01-01); ignored"
        )),
        other => Ok(other),
    }
}

fn string(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// Parses `started.json`.
pub fn parse_started(bytes: &[u8], what: &str) -> Result<Started, String> {
    let (v, mut problems) = json_dropping_inexact(bytes, what)?;
    let o = obj(&v, what)?;
    let versions = crate::build_versions::of_started_or_finished(o, what);
    problems.extend(versions.problems);
    let meta = o.get("metadata").and_then(Value::as_object);
    let mut repos = BTreeMap::new();
    let repos_v = o.get("repos").or_else(|| meta.and_then(|m| m.get("repos")));
    match repos_v {
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if let Some(s) = v.as_str() {
                    repos.insert(k.clone(), s.to_string());
                }
            }
        }
        // Legacy bootstrap wrote repos as a JSON string.
        Some(Value::String(s)) => {
            if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(s) {
                for (k, v) in m {
                    if let Some(s) = v.as_str() {
                        repos.insert(k, s.to_string());
                    }
                }
            }
        }
        _ => {}
    }
    Ok(Started {
        timestamp: int_or_drop(o.get("timestamp"), what, "timestamp", &mut problems)?,
        node: string(o.get("node")),
        pull: string(o.get("pull")),
        repos,
        repo_commit: string(o.get("repo-commit")).or_else(|| meta.and_then(|m| string(m.get("repo-commit")))),
        repo_version: string(o.get("repo-version")).or_else(|| meta.and_then(|m| string(m.get("repo-version")))),
        kettle_repo_commit: string(o.get("repo-commit")).or_else(|| string(o.get("repo-version"))),
        kettle_repos: o.get("repos").filter(|v| python_truthy(v)).map(python_json),
        metadata_repos: meta.and_then(|m| m.get("repos")).filter(|v| !v.is_string()).map(python_json),
        versions: versions.facts,
        problems,
    })
}

/// Python's truthiness of a JSON value (`if started.get('repos')`).
fn python_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A JSON value spelled as Python's `json.dumps` spells it (`", "` and `": "`
/// separators, non-ASCII escaped), which is how kettle stores `repos`.
pub fn python_json(v: &Value) -> String {
    fn out(v: &Value, s: &mut String) {
        match v {
            Value::String(t) => {
                s.push('"');
                for c in t.chars() {
                    match c {
                        '"' => s.push_str("\\\""),
                        '\\' => s.push_str("\\\\"),
                        '\n' => s.push_str("\\n"),
                        '\r' => s.push_str("\\r"),
                        '\t' => s.push_str("\\t"),
                        '\u{8}' => s.push_str("\\b"),
                        '\u{c}' => s.push_str("\\f"),
                        c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                            let mut buf = [0u16; 2];
                            for u in c.encode_utf16(&mut buf) {
                                s.push_str(&format!("\\u{u:04x}"));
                            }
                        }
                        c => s.push(c),
                    }
                }
                s.push('"');
            }
            Value::Array(a) => {
                s.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    out(x, s);
                }
                s.push(']');
            }
            Value::Object(o) => {
                s.push('{');
                for (i, (k, x)) in o.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    out(&Value::String(k.clone()), s);
                    s.push_str(": ");
                    out(x, s);
                }
                s.push('}');
            }
            other => s.push_str(&other.to_string()),
        }
    }
    let mut s = String::new();
    out(v, &mut s);
    s
}

/// Parses `finished.json`.
pub fn parse_finished(bytes: &[u8], what: &str) -> Result<Finished, String> {
    let (v, mut problems) = json_dropping_inexact(bytes, what)?;
    let o = obj(&v, what)?;
    let versions = crate::build_versions::of_started_or_finished(o, what);
    problems.extend(versions.problems);
    let passed = match o.get("passed") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => return Err(format!("{what}: field \"passed\": expected true or false, found {other}")),
    };
    let result = string(o.get("result"))
        .map(|r| r.to_ascii_uppercase())
        .or_else(|| passed.map(|p| if p { "SUCCESS".to_string() } else { "FAILURE".to_string() }));
    let meta = o.get("metadata").and_then(Value::as_object);
    Ok(Finished {
        timestamp: int_or_drop(o.get("timestamp"), what, "timestamp", &mut problems)?,
        passed,
        result,
        revision: string(o.get("revision")),
        metadata_repo_commit: meta.and_then(|m| string(m.get("repo-commit"))),
        kettle_result: match o.get("result") {
            Some(Value::String(r)) => Some(r.clone()),
            Some(Value::Null) => None,
            Some(other) => Some(other.to_string()),
            None => passed.map(|p| if p { "SUCCESS".to_string() } else { "FAILURE".to_string() }),
        },
        version: string(o.get("version")),
        has_metadata: o.contains_key("metadata"),
        metadata_repos: meta.and_then(|m| m.get("repos")).filter(|v| !v.is_string()).map(python_json),
        versions: versions.facts,
        problems,
    })
}

/// Parses one ProwJob object (from `prowjob.json` or a `prowjobs.js` item).
pub fn prowjob_from_value(v: &Value, what: &str) -> Result<ProwJob, String> {
    let o = obj(v, what)?;
    let spec = o.get("spec").and_then(Value::as_object);
    let status = o.get("status").and_then(Value::as_object);
    let meta = o.get("metadata").and_then(Value::as_object);
    let labels = meta.and_then(|m| m.get("labels")).and_then(Value::as_object);
    let annotations = meta.and_then(|m| m.get("annotations")).and_then(Value::as_object);
    let refs = spec.and_then(|s| s.get("refs")).and_then(Value::as_object);
    let mut pulls = Vec::new();
    if let Some(Value::Array(ps)) = refs.and_then(|r| r.get("pulls")) {
        for p in ps {
            if let Some(n) = p.get("number").and_then(Value::as_u64) {
                pulls.push((n, p.get("sha").and_then(Value::as_str).unwrap_or_default().to_string()));
            }
        }
    }
    let g = |m: Option<&serde_json::Map<String, Value>>, k: &str| m.and_then(|m| string(m.get(k)));
    Ok(ProwJob {
        job: g(spec, "job").or_else(|| g(labels, "prow.k8s.io/job")),
        job_type: g(spec, "type").or_else(|| g(labels, "prow.k8s.io/type")),
        state: g(status, "state"),
        description: g(status, "description"),
        start_time: g(status, "startTime"),
        completion_time: g(status, "completionTime"),
        url: g(status, "url"),
        build_id: g(status, "build_id").or_else(|| g(labels, "prow.k8s.io/build-id")),
        org: g(refs, "org"),
        repo: g(refs, "repo"),
        base_sha: g(refs, "base_sha"),
        pulls,
        cluster: g(spec, "cluster"),
        creation_timestamp: g(meta, "creationTimestamp"),
        problems: Vec::new(),
        testgrid_dashboards: g(annotations, "testgrid-dashboards").filter(|d| !d.trim().is_empty()),
        testgrid_tab: g(annotations, "testgrid-tab-name").filter(|t| !t.trim().is_empty()),
        versions: Vec::new(),
    })
}

/// Parses `prowjob.json`.
pub fn parse_prowjob(bytes: &[u8], what: &str) -> Result<ProwJob, String> {
    let (v, problems) = json_dropping_inexact(bytes, what)?;
    let mut p = prowjob_from_value(&v, what)?;
    let versions = v.as_object().map(|o| crate::build_versions::of_prowjob(o, what)).unwrap_or_default();
    p.versions = versions.facts;
    p.problems = problems;
    p.problems.extend(versions.problems);
    Ok(p)
}

/// Parses Prow's `prowjobs.js` (`var allBuilds = {items: [...]};` or plain JSON).
pub fn parse_prowjobs_js(bytes: &[u8], what: &str) -> Result<Vec<ProwJob>, String> {
    let text = String::from_utf8_lossy(bytes);
    let t = text.trim();
    let t = t.strip_prefix("var allBuilds =").or_else(|| t.strip_prefix("var allBuilds=")).unwrap_or(t).trim();
    let t = t.strip_suffix(';').unwrap_or(t);
    let v = json(t.as_bytes(), what)?;
    let items = v.get("items").and_then(Value::as_array).ok_or_else(|| format!("{what}: no `items` array"))?;
    items.iter().enumerate().map(|(i, it)| prowjob_from_value(it, &format!("{what} item {i}"))).collect()
}

/// One row of Deck's job history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryBuild {
    pub id: String,
    pub started: Option<String>,
    /// Nanoseconds.
    pub duration_ns: Option<i64>,
    /// `SUCCESS`, `FAILURE`, `ABORTED`, `ERROR`, `Pending`, `Unknown`.
    pub result: String,
    pub spyglass_link: Option<String>,
}

/// Extracts `var allBuilds = [...]` from a Deck job-history HTML page.
pub fn parse_job_history(html: &[u8], what: &str) -> Result<Vec<HistoryBuild>, String> {
    let text = String::from_utf8_lossy(html);
    let start = text.find("var allBuilds = ").ok_or_else(|| format!("{what}: no `var allBuilds` in the page"))?;
    let rest = &text[start + "var allBuilds = ".len()..];
    // The array ends at the first `];` that closes it; scan brackets outside strings.
    let bytes = rest.as_bytes();
    let (mut depth, mut in_str, mut esc, mut end) = (0i32, false, false, None);
    for (i, &b) in bytes.iter().enumerate() {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end.ok_or_else(|| format!("{what}: `allBuilds` array is not closed (truncated page?)"))?;
    let v = json(&rest.as_bytes()[..end], what)?;
    let arr = v.as_array().ok_or_else(|| format!("{what}: `allBuilds` is not an array"))?;
    Ok(arr
        .iter()
        .filter_map(|b| {
            Some(HistoryBuild {
                id: string(b.get("ID"))?,
                started: string(b.get("Started")),
                duration_ns: b.get("Duration").and_then(Value::as_i64).filter(|d| *d >= 0),
                result: string(b.get("Result")).unwrap_or_else(|| "Unknown".into()),
                spyglass_link: string(b.get("SpyglassLink")),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn started_variants() {
        let s = parse_started(br#"{"timestamp": 1595277241, "pull": "93264", "repos": {"kubernetes/kubernetes": "master:5feab0,93264:abc"}, "repo-commit": "30f6"}"#, "s").unwrap();
        assert_eq!(s.pull.as_deref(), Some("93264"));
        assert_eq!(s.repo_commit.as_deref(), Some("30f6"));
        let s = parse_started(
            br#"{"timestamp": 1, "metadata": {"repos": "{\"k/k\": \"master\"}", "repo-commit": "ab"}}"#,
            "s",
        )
        .unwrap();
        assert_eq!(s.repos["k/k"], "master");
        assert_eq!(s.repo_commit.as_deref(), Some("ab"));
        assert!(parse_started(b"", "started.json").unwrap_err().contains("empty"));
        assert!(parse_started(br#"{"timestamp": "x"}"#, "started.json").unwrap_err().contains("timestamp"));
        assert!(parse_started(br#"{"timestamp": 1"#, "started.json").unwrap_err().contains("truncated"));
    }

    #[test]
    fn testgrid_annotations() {
        let p = parse_prowjob(
            br#"{"spec": {"job": "ci-a"}, "metadata": {"annotations": {"testgrid-dashboards": "sig-release-master-blocking, google-gce", "testgrid-tab-name": "gce"}}}"#,
            "prowjob.json",
        )
        .unwrap();
        assert_eq!(p.testgrid_dashboards.as_deref(), Some("sig-release-master-blocking, google-gce"));
        assert_eq!(p.testgrid_tab.as_deref(), Some("gce"));
        let place = citriage_model::build::TestgridPlace::from_annotations(
            p.testgrid_dashboards.as_deref(),
            p.testgrid_tab.as_deref(),
        )
        .unwrap();
        assert_eq!(place.dashboards, ["sig-release-master-blocking", "google-gce"]);
        assert!(place.is_release_blocking());
        let none = parse_prowjob(br#"{"metadata": {"annotations": {"testgrid-dashboards": " "}}}"#, "p").unwrap();
        assert_eq!((none.testgrid_dashboards, none.testgrid_tab), (None, None));
        assert!(!citriage_model::build::TestgridPlace::from_annotations(Some("sig-release-master-informing"), None)
            .unwrap()
            .is_release_blocking());
    }

    #[test]
    fn finished_variants() {
        let f = parse_finished(br#"{"timestamp": 10, "passed": false}"#, "f").unwrap();
        assert_eq!(f.result.as_deref(), Some("FAILURE"));
        let f = parse_finished(br#"{"timestamp": 10, "passed": true, "result": "aborted"}"#, "f").unwrap();
        assert_eq!(f.result.as_deref(), Some("ABORTED"));
        assert!(parse_finished(br#"{"passed": "yes"}"#, "finished.json").unwrap_err().contains("passed"));
        assert!(parse_finished(b"[]", "finished.json").unwrap_err().contains("object"));
    }

    #[test]
    fn numbers_too_large_are_named_as_written() {
        // A build's document keeps its other fields; the number is dropped and named.
        for (doc, field, raw) in [
            (
                r#"{"timestamp": 123456789012345678901234567890, "passed": true}"#,
                "timestamp",
                "123456789012345678901234567890",
            ),
            (r#"{"timestamp": 1e400, "passed": true}"#, "timestamp", "1e400"),
            (r#"{"timestamp": 1e300, "passed": true}"#, "timestamp", "1e300"),
            (r#"{"timestamp": 1, "passed": true, "metadata": {"n": [1, -1e400]}}"#, "metadata.n[1]", "-1e400"),
        ] {
            let f = parse_finished(doc.as_bytes(), "finished.json").unwrap();
            assert_eq!(f.result.as_deref(), Some("SUCCESS"));
            assert_eq!(f.problems.len(), 1, "{:?}", f.problems);
            let p = &f.problems[0];
            assert!(p.contains(&format!("finished.json: field {field:?}: the number {raw} is too large")), "{p}");
            assert!(!p.contains("9223372036854775807"), "{p}");
            assert_eq!(f.timestamp.is_some(), field != "timestamp");
        }
        let f = parse_finished(br#"{"timestamp": 9223372036854775808}"#, "finished.json").unwrap();
        assert_eq!(f.timestamp, None);
        assert!(
            f.problems[0].contains(r#"finished.json: field "timestamp": the number 9223372036854775808 is too large"#),
            "{:?}",
            f.problems
        );
        let s = parse_started(br#"{"timestamp": 99999999999999999999, "pull": "7"}"#, "started.json").unwrap();
        assert_eq!((s.timestamp, s.pull.as_deref()), (None, Some("7")));
        assert!(s.problems[0].contains(r#"field "timestamp": the number 99999999999999999999"#), "{:?}", s.problems);
        let p =
            parse_prowjob(br#"{"spec": {"job": "j", "refs": {"pulls": [{"number": 1e30}]}}}"#, "prowjob.json").unwrap();
        assert_eq!((p.job.as_deref(), p.pulls.len()), (Some("j"), 0));
        assert!(p.problems[0].contains(r#"prowjob.json: field "spec.refs.pulls[0].number": the number 1e30"#));
        // Listings are refused whole, naming the field.
        let e = parse_job_history(br#"var allBuilds = [{"ID": 123456789012345678901234567890, "Duration": 1}];"#, "h")
            .unwrap_err();
        assert!(e.contains(r#"field "[0].ID": the number 123456789012345678901234567890"#), "{e}");
        // A key with escapes is named decoded; numbers inside strings are text.
        let f = parse_finished(br#"{"a\"b": 1e999, "s": "1e999"}"#, "f").unwrap();
        assert!(f.problems[0].contains(r#"field "a\"b""#), "{:?}", f.problems);
        assert!(parse_finished(br#"{"timestamp": 1595277241, "x": "99999999999999999999999"}"#, "f")
            .unwrap()
            .problems
            .is_empty());
        // The extremes that fit still pass, exactly.
        assert_eq!(parse_finished(br#"{"timestamp": -9223372036854775808}"#, "f").unwrap().timestamp, Some(i64::MIN));
    }

    #[test]
    fn prowjobs_and_history() {
        let js = br#"var allBuilds = {"items": [{"spec": {"job": "ci-a", "type": "periodic"}, "status": {"state": "error", "description": "Pod can not be created"}, "metadata": {"labels": {"prow.k8s.io/build-id": "17"}, "creationTimestamp": "2026-11-20T00:00:00Z"}}]};"#;
        let p = parse_prowjobs_js(js, "prowjobs.js").unwrap();
        assert_eq!(p[0].state.as_deref(), Some("error"));
        assert_eq!(p[0].build_id.as_deref(), Some("17"));
        let html = br#"<html><script>var allBuilds = [{"SpyglassLink":"/view/gs/b/logs/j/2","ID":"2","Started":"2026-11-20T00:00:00Z","Duration":60000000000,"Result":"FAILURE","Refs":{"x":"a]b"}}];</script>"#;
        let h = parse_job_history(html, "h").unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].result, "FAILURE");
        assert!(parse_job_history(b"<html>nothing</html>", "h").is_err());
        assert!(parse_job_history(br#"var allBuilds = [{"ID":"1""#, "h").unwrap_err().contains("truncated"));
    }
}
