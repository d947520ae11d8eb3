//! Validation of k8s-metrics dashboard snapshots (`failures-latest.json`,
//! `flakes-latest.json`): detects the dataset from the schema, checks every field's
//! type and range, and reports the first problem with the job and field it concerns.
//!
//! The dashboards as the daily job published them in 2017 are read too, with what
//! they wrote differently said once per file: numbers written as JSON strings (as
//! BigQuery's JSON export writes INT64) are read as the numbers they spell, and the
//! flakes dashboards' old key `flakiest` is read as `test_flakes`. Two dashboards of
//! that time citriage does not import are refused by name (`job-flakes`,
//! `weekly-consistency`), and so is the failures dashboard's older `failing_since`
//! date, which cannot be turned into days without the day the query ran.

use crate::strict_json::{self, describe_path, Number, Value};
use citriage_model::{Dataset, FlakeStats, JobEntry, JobStats};
use std::collections::BTreeMap;

/// A snapshot's jobs after validation, plus non-fatal remarks.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSnapshot {
    pub dataset: Dataset,
    /// Sorted by job name.
    pub jobs: Vec<JobEntry>,
    /// Non-fatal remarks, e.g. fields citriage does not know and ignored.
    pub warnings: Vec<String>,
}

/// Why a snapshot was refused. The `Display` text names the document and, where it
/// applies, the job and field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapshotError {
    #[error("{source_name}: the file is empty")]
    Empty { source_name: String },
    #[error("{source_name}: not valid JSON: {detail}")]
    Syntax { source_name: String, detail: String },
    #[error("{source_name}: expected a JSON object of jobs at the top level, found {found}")]
    NotAnObject { source_name: String, found: &'static str },
    #[error("{source_name}: {at}: {problem}")]
    Field { source_name: String, at: String, problem: String },
    #[error("{source_name}: {problem}")]
    Dataset { source_name: String, problem: String },
    /// A dashboard citriage recognises but does not import.
    #[error("{source_name}: this is the {dashboard} dashboard ({shape}), which citriage does not import; {hint}")]
    Unsupported { source_name: String, dashboard: &'static str, shape: &'static str, hint: &'static str },
}

/// Parses and validates a snapshot. `source_name` is used in messages; `hint` forces a
/// dataset (otherwise it is detected from the fields of the entries).
pub fn parse_snapshot(bytes: &[u8], source_name: &str, hint: Option<Dataset>) -> Result<ParsedSnapshot, SnapshotError> {
    let src = || source_name.to_string();
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(SnapshotError::Empty { source_name: src() });
    }
    // A number no field can hold as written is refused before anything reads it, so
    // no count or ratio is ever a rounded stand-in for what the file says.
    if let Some(x) = strict_json::first_inexact_number(bytes) {
        return Err(SnapshotError::Field { source_name: src(), at: describe_path(&x.path), problem: x.problem() });
    }
    let value = strict_json::parse(bytes)
        .map_err(|e| SnapshotError::Syntax { source_name: src(), detail: explain_syntax(bytes, &e) })?;
    let entries = match value {
        Value::Object(entries) => entries,
        Value::Array(items) if looks_like_weekly_consistency(&items) => {
            return Err(SnapshotError::Unsupported {
                source_name: src(),
                dashboard: "weekly-consistency",
                shape: "a list of weeks with commits and consistency",
                hint: "it has no job to triage",
            })
        }
        other => return Err(SnapshotError::NotAnObject { source_name: src(), found: other.type_name() }),
    };
    if looks_like_job_flakes(&entries) {
        return Err(SnapshotError::Unsupported {
            source_name: src(),
            dashboard: "job-flakes",
            shape: "flakes, runs and consistency per job, no test list",
            hint: "import the flakes dashboard (flakes-latest.json) of the same day instead",
        });
    }
    let dataset = match hint {
        Some(d) => d,
        None => detect(&entries).map_err(|problem| SnapshotError::Dataset { source_name: src(), problem })?,
    };
    let mut warnings = BTreeMap::<String, usize>::new();
    // Fields whose numbers were written as JSON strings, and how many such values.
    let mut stringly = BTreeMap::<&'static str, usize>::new();
    let mut old_key_jobs = 0usize;
    let mut jobs = Vec::with_capacity(entries.len());
    for (job, v) in entries {
        let field_err = |field: Option<&str>, problem: String| {
            let mut path = vec![job.clone()];
            if let Some(f) = field {
                path.push(f.to_string());
            }
            SnapshotError::Field { source_name: src(), at: describe_path(&path), problem }
        };
        if job.trim().is_empty() {
            return Err(field_err(None, "job name is empty".into()));
        }
        let Value::Object(fields) = v else {
            return Err(field_err(None, format!("expected an object of fields, found {}", v.type_name())));
        };
        let get = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        for (k, _) in &fields {
            let known = match dataset {
                Dataset::Failures => k == "failing_days" || k == "failing_since",
                Dataset::Flakes => matches!(k.as_str(), "consistency" | "flakes" | "test_flakes" | "flakiest"),
            };
            if !known {
                *warnings.entry(k.clone()).or_default() += 1;
            }
        }
        let stats = match dataset {
            Dataset::Failures => {
                let v = match (get("failing_days"), get("failing_since")) {
                    (Some(v), _) => v,
                    (None, Some(since)) => {
                        return Err(field_err(
                            Some("failing_since"),
                            format!(
                                "the failures dashboard's older schema (the day the job last passed, {}) is not read: \
                                 failing_days counts from the day the query ran, which the file does not say",
                                since.brief()
                            ),
                        ))
                    }
                    (None, None) => {
                        return Err(field_err(
                            Some("failing_days"),
                            "missing (a failures snapshot needs failing_days for every job)".into(),
                        ))
                    }
                };
                let days = non_negative_int(v, "failing_days", &mut stringly)
                    .map_err(|p| field_err(Some("failing_days"), p))?;
                let failing_days = u32::try_from(days)
                    .map_err(|_| field_err(Some("failing_days"), format!("{days} is out of range")))?;
                JobStats::Failures { failing_days }
            }
            Dataset::Flakes => {
                let c = get("consistency").ok_or_else(|| {
                    field_err(Some("consistency"), "missing (a flakes snapshot needs consistency for every job)".into())
                })?;
                let c = spelled_number(c, "consistency", &mut stringly);
                let consistency = match &c {
                    Value::Number(Number::Float(f)) => *f,
                    Value::Number(Number::Unsigned(u)) => *u as f64,
                    Value::Number(Number::Signed(i)) => *i as f64,
                    other => {
                        return Err(field_err(
                            Some("consistency"),
                            format!("expected a number between 0 and 1, found {} {}", other.type_name(), other.brief()),
                        ))
                    }
                };
                if !consistency.is_finite() || !(0.0..=1.0).contains(&consistency) {
                    return Err(field_err(Some("consistency"), format!("{consistency} is outside 0..1")));
                }
                let f = get("flakes").ok_or_else(|| {
                    field_err(Some("flakes"), "missing (a flakes snapshot needs flakes for every job)".into())
                })?;
                let flakes = non_negative_int(f, "flakes", &mut stringly).map_err(|p| field_err(Some("flakes"), p))?;
                // The 2017 dashboards call the test list `flakiest`.
                let (key, list) =
                    match (get("test_flakes"), get("flakiest")) {
                        (Some(_), Some(_)) => return Err(field_err(
                            Some("flakiest"),
                            "both test_flakes and its older name flakiest are present; which one is meant is unclear"
                                .into(),
                        )),
                        (None, Some(old)) => {
                            old_key_jobs += 1;
                            ("flakiest", Some(old))
                        }
                        (list, None) => ("test_flakes", list),
                    };
                let test_flakes = match list {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(tests)) => {
                        let mut m = BTreeMap::new();
                        for (t, n) in tests {
                            let field = if key == "flakiest" { "flakiest" } else { "test_flakes" };
                            let n = non_negative_int(n, field, &mut stringly).map_err(|p| SnapshotError::Field {
                                source_name: src(),
                                at: describe_path(&[job.clone(), key.into(), t.clone()]),
                                problem: p,
                            })?;
                            m.insert(t.clone(), n);
                        }
                        Some(m)
                    }
                    Some(other) => {
                        return Err(field_err(
                            Some(key),
                            format!("expected an object of test counts or null, found {}", other.type_name()),
                        ))
                    }
                };
                JobStats::Flakes(FlakeStats { consistency, flakes, test_flakes })
            }
        };
        jobs.push(JobEntry { job, stats });
    }
    jobs.sort_by(|a, b| a.job.cmp(&b.job));
    let mut warnings: Vec<String> = warnings
        .into_iter()
        .map(|(k, n)| format!("{source_name}: ignored unknown field {k:?} on {n} job(s)"))
        .collect();
    if !stringly.is_empty() {
        let fields: Vec<String> = stringly.iter().map(|(f, n)| format!("{f:?} ({n} value(s))")).collect();
        warnings.push(format!(
            "{source_name}: numbers written as JSON strings in {}; read as the numbers they spell \
             (as BigQuery's JSON export of the time wrote them)",
            fields.join(", ")
        ));
    }
    if old_key_jobs > 0 {
        warnings.push(format!(
            "{source_name}: read the older key \"flakiest\" as the test list (test_flakes) on {old_key_jobs} job(s)"
        ));
    }
    Ok(ParsedSnapshot { dataset, jobs, warnings })
}

/// A JSON string that spells a number exactly as JSON writes one (`"111"`, `"0.926"`:
/// no space, sign `+`, hex or other spelling) stands for that number; anything else is
/// returned as it is. Each number read from a string is counted under its field, so the
/// file's one warning can name the fields. A spelled number too large to hold stays a
/// string, and is refused by the field's check naming it.
fn spelled_number(v: &Value, field: &'static str, stringly: &mut BTreeMap<&'static str, usize>) -> Value {
    let Value::String(s) = v else { return v.clone() };
    let plain = s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'-' | b'.' | b'e' | b'E' | b'+'))
        && s.bytes().next().is_some_and(|b| b == b'-' || b.is_ascii_digit());
    if !plain || strict_json::first_inexact_number(s.as_bytes()).is_some() {
        return v.clone();
    }
    match strict_json::parse(s.as_bytes()) {
        Ok(n @ Value::Number(_)) => {
            *stringly.entry(field).or_default() += 1;
            n
        }
        _ => v.clone(),
    }
}

/// Whether a top-level array is the 2017 `weekly-consistency` dashboard: objects with
/// `wk`, `commits` and `consistency`.
fn looks_like_weekly_consistency(items: &[Value]) -> bool {
    !items.is_empty()
        && items.iter().all(|i| match i {
            Value::Object(f) => ["wk", "commits", "consistency"].iter().all(|k| f.iter().any(|(n, _)| n == k)),
            _ => false,
        })
}

/// Whether an object of jobs is the 2017 `job-flakes` dashboard: every job has `runs`
/// beside `flakes` and `consistency`, and none has a test list.
fn looks_like_job_flakes(entries: &[(String, Value)]) -> bool {
    !entries.is_empty()
        && entries.iter().all(|(_, v)| match v {
            Value::Object(f) => {
                let has = |k: &str| f.iter().any(|(n, _)| n == k);
                has("runs") && has("flakes") && !has("test_flakes") && !has("flakiest")
            }
            _ => false,
        })
}

fn non_negative_int(
    v: &Value,
    field: &'static str,
    stringly: &mut BTreeMap<&'static str, usize>,
) -> Result<u64, String> {
    let v = &spelled_number(v, field, stringly);
    match v {
        Value::Number(Number::Unsigned(u)) => Ok(*u),
        Value::Number(Number::Signed(i)) => Err(format!("expected a non-negative integer, found {i}")),
        Value::Number(Number::Float(f)) => Err(format!("expected a non-negative integer, found the non-integer {f}")),
        other => Err(format!("expected a non-negative integer, found {} {}", other.type_name(), other.brief())),
    }
}

fn detect(entries: &[(String, Value)]) -> Result<Dataset, String> {
    let mut failures = 0usize;
    let mut flakes = 0usize;
    for (_, v) in entries {
        if let Value::Object(fields) = v {
            if fields.iter().any(|(k, _)| k == "failing_days" || k == "failing_since") {
                failures += 1;
            }
            if fields.iter().any(|(k, _)| matches!(k.as_str(), "consistency" | "flakes" | "test_flakes" | "flakiest")) {
                flakes += 1;
            }
        }
    }
    match (failures, flakes) {
        (0, 0) if entries.is_empty() => Err("the snapshot has no jobs, so its dataset cannot be detected; pass --dataset".into()),
        (0, 0) => Err("cannot detect the dataset: no job has failing_days (failures) or consistency/flakes (flakes); pass --dataset".into()),
        (f, 0) if f > 0 => Ok(Dataset::Failures),
        (0, k) if k > 0 => Ok(Dataset::Flakes),
        (f, k) => Err(format!("mixed schema: {f} job(s) look like failures and {k} like flakes; pass --dataset to say which is meant")),
    }
}

fn explain_syntax(bytes: &[u8], e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = format!("line {} column {}", e.line(), e.column());
    match e.classify() {
        Category::Eof => format!("the document ends early at {at} (truncated file?)"),
        _ => {
            let text = String::from_utf8_lossy(bytes);
            if text.contains("NaN") || text.contains("Infinity") {
                format!("{e} (NaN and Infinity are not valid JSON numbers)")
            } else {
                format!("{e}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str, hint: Option<Dataset>) -> String {
        parse_snapshot(s.as_bytes(), "snap.json", hint).unwrap_err().to_string()
    }

    #[test]
    fn detects_and_sorts() {
        let p = parse_snapshot(br#"{"b":{"failing_days":3},"a":{"failing_days":0}}"#, "s", None).unwrap();
        assert_eq!(p.dataset, Dataset::Failures);
        assert_eq!(p.jobs[0].job, "a");
        let p = parse_snapshot(br#"{"a":{"consistency":0.5,"flakes":2,"test_flakes":{"t":1}}}"#, "s", None).unwrap();
        assert_eq!(p.dataset, Dataset::Flakes);
        assert_eq!(p.jobs[0].stats.flake().unwrap().test_flakes.as_ref().unwrap()["t"], 1);
    }

    #[test]
    fn each_bad_input_is_named() {
        assert!(err("", None).contains("empty"));
        assert!(err("  \n", None).contains("empty"));
        assert!(err("[1,2]", None).contains("found an array"));
        assert!(err(r#"{"a":{"failing_days":1}"#, None).contains("truncated"));
        assert!(err(r#"{"a":{"failing_days":-3}}"#, None)
            .contains(r#"job "a", field "failing_days": expected a non-negative integer, found -3"#));
        assert!(err(r#"{"a":{"failing_days":2.5}}"#, None).contains("non-integer 2.5"));
        // Numbers too large for any field are named as the file writes them, never rounded.
        for (doc, raw) in [
            (r#"{"a":{"failing_days":123456789012345678901234567890}}"#, "123456789012345678901234567890"),
            (r#"{"a":{"failing_days":1e400}}"#, "1e400"),
            (r#"{"a":{"failing_days":18446744073709551616}}"#, "18446744073709551616"),
            (r#"{"a":{"consistency":0.5,"flakes":-9223372036854775809}}"#, "-9223372036854775809"),
            (r#"{"a":{"consistency":1e400,"flakes":0}}"#, "1e400"),
            (r#"{"a":{"consistency":0.5,"flakes":1,"test_flakes":{"t":9007199254740993.0}}}"#, "9007199254740993.0"),
        ] {
            let e = err(doc, None);
            assert!(e.starts_with("snap.json: job \"a\", field"), "{e}");
            assert!(e.contains(&format!("the number {raw} is too large")), "{e}");
        }
        assert!(err(r#"{"a":{"consistency":0.5,"flakes":1,"test_flakes":{"t":1e400}}}"#, None)
            .contains(r#"job "a", field "test_flakes", key "t": the number 1e400"#));
        // The largest exact integers still pass.
        let p = parse_snapshot(br#"{"a":{"consistency":0.5,"flakes":18446744073709551615}}"#, "s", None).unwrap();
        assert_eq!(p.jobs[0].stats.flake().unwrap().flakes, u64::MAX);
        // Strings that do not spell a JSON number exactly stay strings, and are refused.
        for bad in [r#""seven""#, r#"" 7""#, r#""+7""#, r#""0x7""#, r#""""#, r#""7 ""#, r#""1e400""#] {
            let e = err(&format!(r#"{{"a":{{"failing_days":{bad}}}}}"#), None);
            assert!(e.contains("found a string"), "{bad}: {e}");
        }
        assert!(err(r#"{"a":{"failing_days":"-3"}}"#, None).contains("expected a non-negative integer, found -3"));
        assert!(err(r#"{"a":{"failing_days":"2.5"}}"#, None).contains("non-integer 2.5"));
        assert!(err(r#"{"a":{"consistency":1.2,"flakes":0}}"#, None)
            .contains(r#"job "a", field "consistency": 1.2 is outside 0..1"#));
        assert!(err(r#"{"a":{"consistency":NaN,"flakes":0}}"#, None).contains("NaN"));
        assert!(err(r#"{"a":{"failing_days":1},"a":{"failing_days":2}}"#, None).contains(r#"job "a" appears twice"#));
        assert!(err(r#"{"a":{"consistency":0.5,"flakes":1,"test_flakes":{"t":1,"t":2}}}"#, None)
            .contains(r#"job "a", field "test_flakes", key "t" appears twice"#));
        assert!(err(r#"{"a":{"consistency":0.5,"flakes":1,"test_flakes":{"t":-1}}}"#, None).contains(r#"key "t""#));
        assert!(err(r#"{"a":{"failing_days":1},"b":{"consistency":1,"flakes":0}}"#, None).contains("mixed schema"));
        assert!(err(r#"{"a":{"failing_days":1}}"#, Some(Dataset::Flakes))
            .contains(r#"job "a", field "consistency": missing"#));
        assert!(err("{}", None).contains("--dataset"));
        assert!(parse_snapshot(b"{}", "s", Some(Dataset::Failures)).unwrap().jobs.is_empty());
    }

    #[test]
    fn numbers_written_as_strings_are_read_with_one_warning_naming_the_fields() {
        let p = parse_snapshot(br#"{"a":{"failing_days":"111"},"b":{"failing_days":"7"}}"#, "f.json", None).unwrap();
        assert_eq!(p.jobs.iter().map(|j| j.stats.failing_days()).collect::<Vec<_>>(), [Some(111), Some(7)]);
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert!(p.warnings[0].starts_with("f.json: numbers written as JSON strings in \"failing_days\" (2 value(s))"));
        let p = parse_snapshot(
            br#"{"pr:j":{"consistency":"0.926","flakes":"63","flakiest":{"t1":"29","t2":4}},"k":{"consistency":0.5,"flakes":1,"flakiest":null}}"#,
            "k.json",
            None,
        )
        .unwrap();
        let f = p.jobs[1].stats.flake().unwrap();
        assert_eq!((f.consistency, f.flakes), (0.926, 63));
        assert_eq!(
            f.test_flakes.as_ref().unwrap().iter().map(|(t, n)| (t.as_str(), *n)).collect::<Vec<_>>(),
            [("t1", 29), ("t2", 4)]
        );
        assert_eq!(p.jobs[0].stats.flake().unwrap().test_flakes, None);
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains(r#""consistency" (1 value(s)), "flakes" (1 value(s)), "flakiest" (1 value(s))"#)),
            "{:?}",
            p.warnings
        );
        assert!(
            p.warnings.iter().any(|w| w.contains(r#"older key "flakiest" as the test list (test_flakes) on 2 job(s)"#)),
            "{:?}",
            p.warnings
        );
        // A number that is a number gives no warning.
        assert!(parse_snapshot(br#"{"a":{"failing_days":3}}"#, "s", None).unwrap().warnings.is_empty());
    }

    #[test]
    fn dashboards_of_2017_citriage_does_not_import_are_refused_by_name() {
        let e = err(r#"[{"commits":"702","consistency":"0.718","wk":"2017-03-04"}]"#, None);
        assert!(e.starts_with("snap.json: this is the weekly-consistency dashboard"), "{e}");
        let e = err(r#"{"pr:j":{"flakes":62,"runs":873,"consistency":0.929}}"#, Some(Dataset::Flakes));
        assert!(e.starts_with("snap.json: this is the job-flakes dashboard"), "{e}");
        assert!(e.contains("flakes-latest.json"), "{e}");
        let e = err(r#"{"j":{"failing_since":"2016-11-14"}}"#, None);
        assert!(
            e.starts_with(r#"snap.json: job "j", field "failing_since": the failures dashboard's older schema"#),
            "{e}"
        );
        assert!(err(r#"{"j":{"consistency":0.5,"flakes":1,"test_flakes":{},"flakiest":{}}}"#, None)
            .contains(r#"field "flakiest": both test_flakes and its older name"#));
        // Other arrays are still "not an object".
        assert!(err("[1,2]", None).contains("found an array"));
    }

    #[test]
    fn unknown_fields_are_warned_not_fatal() {
        let p = parse_snapshot(br#"{"a":{"failing_days":1,"extra":true}}"#, "s", None).unwrap();
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].contains("extra"));
    }
}
