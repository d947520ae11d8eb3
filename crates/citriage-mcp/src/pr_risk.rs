//! `pr_risk`: "did my PR break this?" (`citriage pr`) as a compact answer: the verdict,
//! counts per class and each failure of the PR's latest runs with its class, why, the
//! pattern it matched and its evidence ids; at most [`MAX_BYTES`] of JSON (failures
//! past that are counted in `more`, `detail` adds each failure's facts). GitHub is read
//! through the store's cache, online only when the server was started so.

use crate::answers::Answer;
use crate::args::PrRiskArgs;
use crate::state::{Inner, ToolError};
use serde_json::{json, Value};

/// The largest answer (result and evidence), in bytes.
pub const MAX_BYTES: usize = 16 * 1024;

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

fn failure(f: &citriage_app::pr::PrFailure, detail: bool) -> Value {
    let mut v = json!({
        "job": f.job, "test": cut(&f.test, 200), "class": f.class, "strong": f.strong,
        "reason": cut(&f.reason, 300), "first_line": cut(&f.first_line, 200), "run": f.url,
        "pattern": f.facts.elsewhere.as_ref().map(|e| e.pattern.clone()),
        "evidence": f.evidence.iter().take(6).collect::<Vec<_>>(),
    });
    if detail {
        v["facts"] = serde_json::to_value(&f.facts).unwrap_or(Value::Null);
    }
    v
}

/// The answer for one PR.
pub(crate) fn pr_risk(inner: &Inner, a: &PrRiskArgs) -> Result<Answer, ToolError> {
    let target = citriage_app::pr::PrTarget::parse(&a.pr)?;
    let opts = citriage_app::pr::PrOptions {
        as_of: a.as_of.clone(),
        window_days: a.window_days.unwrap_or(14).clamp(1, 90),
        github: Some(citriage_app::records::GithubAccess {
            api: inner.opts.api.clone(),
            offline: !inner.opts.github_online,
        }),
        ..Default::default()
    };
    let risk = inner.with_store(|s| Ok(citriage_app::pr::analyse(s, &target, &opts, &citriage_app::Silent)?))?;
    let detail = a.detail.unwrap_or(false);
    let mut shown = risk.failures.len();
    loop {
        let failures: Vec<Value> = risk.failures.iter().take(shown).map(|f| failure(f, detail)).collect();
        let cited: std::collections::BTreeSet<&str> = risk
            .failures
            .iter()
            .take(shown)
            .flat_map(|f| f.evidence.iter().take(6).map(String::as_str))
            .chain(risk.runs.iter().map(|r| r.evidence.as_str()))
            .collect();
        let evidence: Vec<citriage_model::Evidence> =
            risk.evidence.iter().filter(|e| cited.contains(e.id.as_str())).cloned().collect();
        let runs: Vec<Value> = risk
            .runs
            .iter()
            .map(|r| json!({"job": r.job, "build_id": r.build_id, "result": r.result, "failures": r.failures, "earlier_runs": r.earlier_runs, "evidence": [r.evidence]}))
            .collect();
        let result = json!({
            "pr": risk.pr, "url": risk.url, "as_of": risk.as_of, "window_days": risk.window_days,
            "verdict": risk.verdict, "counts": risk.counts, "pending": risk.pending,
            "diff": {"state": risk.github.state, "changed_files": risk.github.changed_files.as_ref().map(Vec::len), "note": risk.github.note},
            "runs": runs, "failures": failures, "more": risk.failures.len() - shown,
        });
        let size = Answer::new(result.clone(), evidence.clone()).into_json().to_string().len();
        if shown == 0 || size <= MAX_BYTES {
            return Ok(Answer::new(result, evidence));
        }
        shown = shown * 3 / 4;
    }
}
