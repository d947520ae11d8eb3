//! A dashboard's summary answer (`/<dashboard>/summary`): each tab's overall status,
//! its latest green build, when it last ran and the tests it alerts on.

use super::TestgridError;
use crate::strict_json::{self, Number, Value};
use serde::Serialize;

/// One failing test of a tab's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailingTest {
    pub test_name: String,
    pub fail_count: Option<u64>,
    /// Unix seconds of its first failure and last pass.
    pub fail_timestamp: Option<i64>,
    pub pass_timestamp: Option<i64>,
    pub failure_message: Option<String>,
}

/// One tab of a dashboard's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TabSummary {
    pub tab: String,
    /// `PASSING`, `FAILING`, `FLAKY`, `STALE`, … as TestGrid writes it.
    pub overall_status: Option<String>,
    pub latest_green: Option<String>,
    /// Milliseconds since the epoch of its last run.
    pub last_run_ms: Option<i64>,
    /// Seconds since the epoch of TestGrid's last update of the tab.
    pub last_update: Option<i64>,
    /// TestGrid's one-line status (`1 of 9 (11.1%) recent columns passed …`).
    pub status: Option<String>,
    pub alert: Option<String>,
    pub failing_tests: Vec<FailingTest>,
}

/// A dashboard's summary: its tabs, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DashboardSummary {
    pub dashboard: String,
    pub tabs: Vec<TabSummary>,
}

/// Reads a summary answer. `dashboard` names it in messages. A tab name must be a
/// name (not empty, no control characters), since it is asked for by name next.
pub fn parse_summary(bytes: &[u8], dashboard: &str) -> Result<DashboardSummary, TestgridError> {
    let e = |field: String, problem: String| TestgridError {
        what: format!("dashboard {dashboard:?} summary"),
        field,
        problem,
    };
    let trimmed = bytes.iter().position(|b| !b.is_ascii_whitespace()).map(|i| &bytes[i..]).unwrap_or_default();
    if trimmed.is_empty() {
        return Err(e("(body)".into(), "the answer is empty".into()));
    }
    if trimmed.starts_with(b"<") {
        return Err(e("(body)".into(), "an HTML page, not TestGrid's JSON summary".into()));
    }
    let v = strict_json::parse(bytes).map_err(|x| e("(body)".into(), format!("not valid JSON: {x}")))?;
    let Value::Object(tabs) = v else {
        return Err(e("(body)".into(), format!("expected an object of tabs, found {}", v.type_name())));
    };
    let mut out = Vec::with_capacity(tabs.len());
    for (tab, body) in tabs {
        let field = |f: &str| format!("tab {tab:?} field {f:?}");
        if tab.trim().is_empty() || tab.chars().any(char::is_control) {
            return Err(e(format!("tab {tab:?}"), "not a usable tab name (empty or with control characters)".into()));
        }
        let Value::Object(f) = body else {
            return Err(e(format!("tab {tab:?}"), format!("expected an object, found {}", body.type_name())));
        };
        let get = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        let text = |k: &str| -> Result<Option<String>, TestgridError> {
            match get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok((!s.is_empty()).then(|| s.clone())),
                Some(other) => Err(e(field(k), format!("expected a string, found {}", other.type_name()))),
            }
        };
        let int = |k: &str| -> Result<Option<i64>, TestgridError> { integer(get(k)).map_err(|p| e(field(k), p)) };
        let mut failing_tests = Vec::new();
        match get("tests") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (i, t) in items.iter().enumerate() {
                    let Value::Object(tf) = t else {
                        return Err(e(format!("tab {tab:?} tests[{i}]"), "expected an object".into()));
                    };
                    let tget = |k: &str| tf.iter().find(|(n, _)| n == k).map(|(_, v)| v);
                    let tint =
                        |k: &str| integer(tget(k)).map_err(|p| e(format!("tab {tab:?} tests[{i}] field {k:?}"), p));
                    let name = match tget("test_name") {
                        Some(Value::String(s)) if !s.is_empty() => s.clone(),
                        _ => return Err(e(format!("tab {tab:?} tests[{i}] field \"test_name\""), "missing".into())),
                    };
                    failing_tests.push(FailingTest {
                        test_name: name,
                        fail_count: tint("fail_count")?.map(|n| n.max(0) as u64),
                        fail_timestamp: tint("fail_timestamp")?,
                        pass_timestamp: tint("pass_timestamp")?,
                        failure_message: match tget("failure_message") {
                            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                            _ => None,
                        },
                    });
                }
            }
            Some(other) => return Err(e(field("tests"), format!("expected an array, found {}", other.type_name()))),
        }
        out.push(TabSummary {
            overall_status: text("overall_status")?,
            latest_green: text("latest_green")?,
            last_run_ms: int("last_run_timestamp")?,
            last_update: int("last_update_timestamp")?,
            status: text("status")?,
            alert: text("alert")?,
            failing_tests,
            tab,
        });
    }
    out.sort_by(|a, b| a.tab.cmp(&b.tab));
    Ok(DashboardSummary { dashboard: dashboard.to_string(), tabs: out })
}

/// An integer field (a whole float is accepted, as TestGrid keeps some times as doubles).
fn integer(v: Option<&Value>) -> Result<Option<i64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(Number::Unsigned(u))) => {
            i64::try_from(*u).map(Some).map_err(|_| format!("{u} is out of range"))
        }
        Some(Value::Number(Number::Signed(i))) => Ok(Some(*i)),
        Some(Value::Number(Number::Float(f))) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
            Ok(Some(*f as i64))
        }
        Some(other) => Err(format!("expected an integer, found {} {}", other.type_name(), other.brief())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tabs_sorted_and_refuses_bad_input_by_name() {
        let s = parse_summary(
            br#"{"b":{"overall_status":"FLAKY","latest_green":"7","last_run_timestamp":1585586626000,"tests":[{"test_name":"t","fail_count":3}]},"a":{"overall_status":"STALE","tests":[]}}"#,
            "dash",
        )
        .unwrap();
        assert_eq!(s.tabs.iter().map(|t| t.tab.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(s.tabs[1].failing_tests[0].fail_count, Some(3));
        assert_eq!(s.tabs[1].last_run_ms, Some(1_585_586_626_000));
        let e = |b: &[u8]| parse_summary(b, "dash").unwrap_err().to_string();
        assert!(e(b"<html>").contains("an HTML page"));
        assert!(e(br#"{"a":{"tests":5}}"#).contains(r#"tab "a" field "tests": expected an array"#));
        assert!(e(br#"{"":{}}"#).contains("not a usable tab name"));
        assert!(e(br#"{"a":{},"a":{}}"#).contains("appears twice"));
        assert!(
            e(br#"{"a":{"last_run_timestamp":"x"}}"#).contains(r#"field "last_run_timestamp": expected an integer"#)
        );
    }
}
