//! Evaluation of the verdicts against a truth: per payload, the rank, score and
//! action of each true culprit, the false reverts and bisects, the
//! force-accept recommendation, and the report's self-contradictions.
//!
//! Sources:
//! - a **payload-snapshot repository** (one folder per payload holding the
//!   snapshot layout of [`crate::snapshot`], possibly nested as
//!   `<tag>/<version>/<stream>/`), with a truth file;
//! - a **synthetic world** (`citriage-synth`: recorded release-controller
//!   responses, a GCS mirror, `truth.json`), with its own truth or a truth file.
//!
//! The truth file has the shape of a truth table, in TOML
//!
//! ```toml
//! [[payload]]
//! tag = "4.22.0-0.nightly-2026-03-20-053450"
//! culprits = ["openshift/cluster-ingress-operator#1354", "openshift/oc#2232"]
//!
//! [[payload]]
//! tag = "5.0.0-0.nightly-2026-07-29-055948"
//! culprits = []
//! force_accept = true
//! ```
//!
//! or YAML (`payloads:` with the same keys); `truth = "free text"` is accepted
//! instead of `culprits` (every `org/repo#n` in it is a culprit; text starting
//! with "none" has none). Culprits are the changes whose revert is right; an
//! empty list means no revert is right.
//!
//! Without a truth file, every payload found is analysed and only crashes and
//! contradictions are reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::action::{CandidateAction, Verdict};
use crate::analyze::{analyze, AnalyzeOptions, Tuning};
use crate::candidate::CandidateKind;
use crate::error::{read_file, PayloadError};
use crate::evidence::GcsMirror;
use crate::result::PayloadAnalysis;
use crate::snapshot::SnapshotDir;
use crate::source::RecordedDir;

/// One payload of a truth file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruthRow {
    pub tag: String,
    /// `org/repo#n` of the changes whose revert is right; empty: none is.
    pub culprits: Vec<String>,
    /// Whether force-accept is the right recommendation, when the truth says.
    pub force_accept: Option<bool>,
    /// The truth's own words.
    pub note: Option<String>,
    /// The payload's failing runs have no evidence: its culprits cannot be
    /// found from it (they count as absent).
    #[serde(default)]
    pub evidence_missing: bool,
}

/// Reads a truth file (TOML, or YAML when the name ends in `.yaml` / `.yml`).
pub fn read_truth(path: &Path) -> Result<Vec<TruthRow>, PayloadError> {
    let bytes = read_file(path)?;
    let origin = path.display().to_string();
    let text = String::from_utf8(bytes).map_err(|_| PayloadError::invalid(&origin, "not UTF-8 text"))?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let rows: Vec<Value> = if name.ends_with(".yaml") || name.ends_with(".yml") {
        let y = crate::aggregated::parse_yaml(&text).map_err(|e| PayloadError::invalid(&origin, e))?;
        let list = y.get("payloads").or_else(|| y.get("payload"));
        match list {
            Some(crate::aggregated::Yaml::Seq(items)) => items.iter().map(yaml_to_json).collect(),
            _ => return Err(PayloadError::invalid(&origin, "expected a `payloads:` list")),
        }
    } else {
        let v: toml::Value =
            toml::from_str(&text).map_err(|e| PayloadError::invalid(&origin, format!("malformed TOML: {e}")))?;
        let list = v.get("payload").or_else(|| v.get("payloads")).and_then(|p| p.as_array()).ok_or_else(|| {
            PayloadError::invalid(&origin, "expected [[payload]] tables with tag and culprits (or truth)")
        })?;
        list.iter().map(|t| serde_json::to_value(t).unwrap_or(Value::Null)).collect()
    };
    let refs = regex::Regex::new(r"\b([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#\d+)").expect("pattern");
    rows.iter().enumerate().map(|(i, r)| truth_row(r, i, &origin, &refs)).collect()
}

/// One payload of a truth file.
fn truth_row(r: &Value, i: usize, origin: &str, refs: &regex::Regex) -> Result<TruthRow, PayloadError> {
    let tag = r
        .get("tag")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| PayloadError::invalid(origin, format!("payload {}: missing tag", i + 1)))?
        .trim()
        .to_string();
    let truth_text = r.get("truth").and_then(Value::as_str).map(str::to_string);
    let culprits = truth_culprits(r, &tag, truth_text.as_deref(), origin, refs)?;
    let force_accept = match r.get("force_accept") {
        Some(Value::Bool(b)) => Some(*b),
        Some(Value::String(s)) if s == "true" || s == "false" => Some(s == "true"),
        Some(_) => return Err(PayloadError::invalid(origin, format!("{tag}: force_accept must be true or false"))),
        None => truth_text.as_deref().and_then(|t| {
            let l = t.to_ascii_lowercase();
            if l.contains("force-accept must not") || l.contains("force-accept is wrong") {
                Some(false)
            } else if l.contains("force-accept is the right") || l.contains("force-accept is right") {
                Some(true)
            } else {
                None
            }
        }),
    };
    Ok(TruthRow {
        tag,
        culprits,
        force_accept,
        note: r.get("note").and_then(Value::as_str).map(str::to_string).or(truth_text),
        evidence_missing: r.get("evidence_missing").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// The culprits of a truth row: its `culprits` list, else every `org/repo#n` of
/// its `truth` text (none when the text starts with "none").
fn truth_culprits(
    r: &Value,
    tag: &str,
    truth_text: Option<&str>,
    origin: &str,
    refs: &regex::Regex,
) -> Result<Vec<String>, PayloadError> {
    match r.get("culprits") {
        Some(Value::Array(a)) => {
            let mut v = Vec::new();
            for x in a {
                let s = x.as_str().ok_or_else(|| {
                    PayloadError::invalid(origin, format!("{tag}: culprits must be strings like org/repo#123"))
                })?;
                if !refs.is_match(s) {
                    return Err(PayloadError::invalid(origin, format!("{tag}: {s:?} is not org/repo#number")));
                }
                v.push(s.trim().to_string());
            }
            Ok(v)
        }
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Vec::new()),
        Some(_) => Err(PayloadError::invalid(origin, format!("{tag}: culprits must be a list"))),
        None => match truth_text {
            Some(t) if t.trim_start().to_ascii_lowercase().starts_with("none") => Ok(Vec::new()),
            Some(t) => Ok(refs.captures_iter(t).map(|c| c[1].to_string()).collect()),
            None => Err(PayloadError::invalid(origin, format!("{tag}: give culprits = [...] or truth = \"...\""))),
        },
    }
}

fn yaml_to_json(y: &crate::aggregated::Yaml) -> Value {
    use crate::aggregated::Yaml;
    match y {
        Yaml::Str(s) => match s.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "[]" => Value::Array(Vec::new()),
            _ => Value::String(s.trim_matches('"').to_string()),
        },
        Yaml::Seq(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        Yaml::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), yaml_to_json(v))).collect()),
    }
}

/// What happened to one true culprit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CulpritResult {
    pub culprit: String,
    /// A candidate of the analysis at all.
    pub present: bool,
    /// Best rank in the suspect list of a root cause (1 = first; tied
    /// candidates share a rank).
    pub rank: Option<u32>,
    /// How many other candidates share that rank (0: it stands alone).
    #[serde(default)]
    pub tied_with: u32,
    /// Its score minus the best other candidate's score in that root cause (how
    /// far it stands out; negative when another ranks above it).
    #[serde(default)]
    pub margin: Option<i64>,
    /// Rank in the overall ranking (ties share the better rank).
    pub overall_rank: Option<u32>,
    pub score: Option<u32>,
    pub action: Option<String>,
    /// Why it is absent, when it is.
    pub absent_reason: Option<String>,
}

/// One payload's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalRow {
    pub tag: String,
    pub phase: String,
    /// A truth was given for the payload.
    pub has_truth: bool,
    /// The truth's words (or the synthetic world's cause).
    pub truth: Option<String>,
    pub truth_culprits: Vec<String>,
    pub failed_blocking: usize,
    pub verdict: Verdict,
    /// The report's one-line decision.
    pub summary: String,
    pub culprits: Vec<CulpritResult>,
    /// The top-ranked candidate and its score.
    pub top: Option<(String, u32)>,
    /// Classes of the root causes found.
    pub classes: Vec<String>,
    /// Non-culprits given "stage revert".
    pub false_reverts: Vec<String>,
    /// Non-culprits given "bisect".
    pub false_bisects: Vec<String>,
    pub force_accept: bool,
    /// The truth's force-accept expectation was met (None: no expectation).
    pub force_accept_right: Option<bool>,
    pub contradictions: Vec<String>,
    /// The analysis failed: why.
    pub error: Option<String>,
}

/// Figures over all payloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub source: String,
    pub payloads: usize,
    pub rows: Vec<EvalRow>,
    /// Culprits named by the truth, and those the analysis had as candidates.
    pub culprits: usize,
    pub culprits_present: usize,
    /// Culprits ranked first alone.
    pub culprit_top1: usize,
    /// Culprits ranked first in a tie.
    #[serde(default)]
    pub culprit_tied_top1: usize,
    /// The culprits' mean margin over the next suspect of their root cause.
    #[serde(default)]
    pub culprit_mean_margin: f64,
    pub culprit_top3: usize,
    /// Payloads whose truth names at least one culprit.
    pub culprit_payloads: usize,
    pub false_reverts: usize,
    pub payloads_with_false_revert: usize,
    /// Payloads whose truth names no culprit, and the bisect or revert actions on them.
    pub no_culprit_payloads: usize,
    pub false_bisects_no_culprit: usize,
    pub force_accept_right: usize,
    pub force_accept_wrong: usize,
    pub contradictions: usize,
    pub errors: usize,
}

fn candidate_key(a: &PayloadAnalysis, id: &str) -> Option<String> {
    let c = a.candidate(id)?;
    match c.kind {
        CandidateKind::RhcosRpm => None,
        _ => Some(format!("{}#{}", c.repo.as_deref()?, c.number?)),
    }
}

/// Compares one analysis with its truth.
pub fn evaluate(a: &PayloadAnalysis, truth: Option<&TruthRow>) -> EvalRow {
    let md = crate::report::render_markdown(a);
    let ranking = a.ranking();
    let culprits: Vec<CulpritResult> = truth
        .map(|t| t.culprits.as_slice())
        .unwrap_or(&[])
        .iter()
        .map(|c| culprit_result(a, c, truth, &ranking))
        .collect();
    let (false_reverts, false_bisects) = false_actions(a, truth);
    let fa = a.decision.force_accept.recommended;
    let force_accept_right = match truth {
        Some(t) => match t.force_accept {
            Some(want) => Some(fa == want),
            None if !t.culprits.is_empty() && fa => Some(false),
            None => None,
        },
        None => None,
    };
    EvalRow {
        tag: a.payload.tag.clone(),
        phase: a.payload.phase.as_str().to_string(),
        has_truth: truth.is_some(),
        truth: truth.and_then(|t| t.note.clone()),
        truth_culprits: truth.map(|t| t.culprits.clone()).unwrap_or_default(),
        failed_blocking: a.failed_jobs.len(),
        verdict: a.decision.verdict,
        summary: a.decision.summary.clone(),
        culprits,
        top: ranking
            .first()
            .filter(|(_, s)| *s > 0)
            .map(|(id, s)| (a.candidate(id).map(|c| c.short()).unwrap_or_else(|| id.clone()), *s)),
        classes: a.root_causes.iter().map(|r| format!("{}:{}", r.id, r.class.class.key())).collect(),
        false_reverts,
        false_bisects,
        force_accept: fa,
        force_accept_right,
        contradictions: crate::report::consistency::contradictions(a, &md),
        error: None,
    }
}

/// Where one true culprit stands in the analysis.
fn culprit_result(a: &PayloadAnalysis, c: &str, truth: Option<&TruthRow>, ranking: &[(String, u32)]) -> CulpritResult {
    let ids: Vec<&str> =
        a.candidates.iter().filter(|k| candidate_key(a, &k.id).as_deref() == Some(c)).map(|k| k.id.as_str()).collect();
    let candidate = !ids.is_empty();
    let present = candidate && !truth.is_some_and(|t| t.evidence_missing);
    let best = a
        .suspects
        .iter()
        .filter(|s| ids.contains(&s.candidate.as_str()))
        .min_by_key(|s| (s.rank, std::cmp::Reverse(s.score.total)));
    let overall = ranking.iter().position(|(id, s)| ids.contains(&id.as_str()) && *s > 0).map(|p| {
        let score = ranking[p].1;
        ranking.iter().position(|(_, s)| *s == score).unwrap_or(p) as u32 + 1
    });
    let absent_reason = if present {
        None
    } else if candidate {
        Some("the truth marks the payload's evidence as missing".into())
    } else if c.contains("openshift/release#") {
        Some("a CI-configuration change: no CI-configuration source was given (--ci-config)".into())
    } else {
        Some("in no changelog of the window".into())
    };
    CulpritResult {
        culprit: c.to_string(),
        present,
        rank: best.map(|s| s.rank),
        tied_with: best.map(|s| s.tied_with.len() as u32).unwrap_or(0),
        margin: best.map(|s| {
            let next = a
                .suspects
                .iter()
                .filter(|o| o.root_cause == s.root_cause && !ids.contains(&o.candidate.as_str()))
                .map(|o| o.score.total)
                .max()
                .unwrap_or(0);
            i64::from(s.score.total) - i64::from(next)
        }),
        overall_rank: overall,
        score: best.map(|s| s.score.total),
        action: best.map(|s| s.action.as_str().to_string()),
        absent_reason,
    }
}

/// Non-culprits given "stage revert", and those given "bisect" (with a truth only).
fn false_actions(a: &PayloadAnalysis, truth: Option<&TruthRow>) -> (Vec<String>, Vec<String>) {
    let culprit_set: BTreeSet<&str> =
        truth.map(|t| t.culprits.iter().map(String::as_str).collect()).unwrap_or_default();
    let mut false_reverts = Vec::new();
    let mut false_bisects = Vec::new();
    for s in a.suspects.iter().filter(|_| truth.is_some()) {
        let key = candidate_key(a, &s.candidate).unwrap_or_else(|| s.candidate.clone());
        if culprit_set.contains(key.as_str()) {
            continue;
        }
        match s.action {
            CandidateAction::StageRevert if !false_reverts.contains(&key) => false_reverts.push(key),
            CandidateAction::Bisect if !false_bisects.contains(&key) => false_bisects.push(key),
            _ => {}
        }
    }
    (false_reverts, false_bisects)
}

fn error_row(tag: &str, truth: Option<&TruthRow>, e: String) -> EvalRow {
    EvalRow {
        tag: tag.to_string(),
        phase: String::new(),
        has_truth: truth.is_some(),
        truth: truth.and_then(|t| t.note.clone()),
        truth_culprits: truth.map(|t| t.culprits.clone()).unwrap_or_default(),
        failed_blocking: 0,
        verdict: Verdict::ReportOnly,
        summary: String::new(),
        culprits: Vec::new(),
        top: None,
        classes: Vec::new(),
        false_reverts: Vec::new(),
        false_bisects: Vec::new(),
        force_accept: false,
        force_accept_right: None,
        contradictions: Vec::new(),
        error: Some(e),
    }
}

/// Totals of rows.
pub fn summarize(source: &str, rows: Vec<EvalRow>) -> EvalReport {
    let all: Vec<&CulpritResult> = rows.iter().flat_map(|r| r.culprits.iter()).collect();
    let no_culprit: Vec<&EvalRow> =
        rows.iter().filter(|r| r.has_truth && r.truth_culprits.is_empty() && r.error.is_none()).collect();
    EvalReport {
        source: source.to_string(),
        payloads: rows.len(),
        culprits: all.len(),
        culprits_present: all.iter().filter(|c| c.present).count(),
        culprit_top1: all.iter().filter(|c| c.rank == Some(1) && c.tied_with == 0).count(),
        culprit_tied_top1: all.iter().filter(|c| c.rank == Some(1) && c.tied_with > 0).count(),
        culprit_mean_margin: {
            let m: Vec<i64> = all.iter().filter_map(|c| c.margin).collect();
            if m.is_empty() {
                0.0
            } else {
                (m.iter().sum::<i64>() as f64 / m.len() as f64 * 10.0).round() / 10.0
            }
        },
        culprit_top3: all.iter().filter(|c| c.rank.is_some_and(|r| r <= 3)).count(),
        culprit_payloads: rows.iter().filter(|r| !r.truth_culprits.is_empty()).count(),
        false_reverts: rows.iter().map(|r| r.false_reverts.len()).sum(),
        payloads_with_false_revert: rows.iter().filter(|r| !r.false_reverts.is_empty()).count(),
        no_culprit_payloads: no_culprit.len(),
        false_bisects_no_culprit: no_culprit.iter().map(|r| r.false_bisects.len() + r.false_reverts.len()).sum(),
        force_accept_right: rows.iter().filter(|r| r.force_accept_right == Some(true)).count(),
        force_accept_wrong: rows.iter().filter(|r| r.force_accept_right == Some(false)).count(),
        contradictions: rows.iter().map(|r| r.contradictions.len()).sum(),
        errors: rows.iter().filter(|r| r.error.is_some()).count(),
        rows,
    }
}

/// True when `dir` is a synthetic world (recorded release-controller responses).
pub fn is_world(dir: &Path) -> bool {
    dir.join("release-controller").is_dir() || dir.join("truth.json").is_file()
}

fn analyze_snapshot(
    root: &Path,
    tag: &str,
    ci_config: Option<&Path>,
    tuning: &Tuning,
) -> Result<PayloadAnalysis, PayloadError> {
    let snap = SnapshotDir::open(root)?;
    let mut opts = AnalyzeOptions::new(tag);
    opts.ci_config_changes = ci_config.map(Path::to_path_buf);
    opts.tuning = *tuning;
    analyze(&snap, &snap, &opts)
}

/// Evaluates a payload-snapshot repository (or one snapshot folder). With a
/// truth, the truth's payloads are evaluated; without, every payload found.
pub fn eval_snapshots(
    dir: &Path,
    truth: Option<&[TruthRow]>,
    ci_config: Option<&Path>,
) -> Result<EvalReport, PayloadError> {
    eval_snapshots_tuned(dir, truth, ci_config, &Tuning::default())
}

/// [`eval_snapshots`] with the analysis tuned.
pub fn eval_snapshots_tuned(
    dir: &Path,
    truth: Option<&[TruthRow]>,
    ci_config: Option<&Path>,
    tuning: &Tuning,
) -> Result<EvalReport, PayloadError> {
    if !dir.is_dir() {
        return Err(PayloadError::not_found(dir.display().to_string()));
    }
    let found = crate::snapshot::find_snapshots(dir);
    let mut rows = Vec::new();
    match truth {
        Some(t) => {
            for row in t {
                let r = match crate::snapshot::choose(&found, &row.tag, dir) {
                    Err(e) => error_row(&row.tag, Some(row), e.to_string()),
                    Ok(located) => match analyze_snapshot(&located.root, &located.tag, ci_config, tuning) {
                        Ok(a) => evaluate(&a, Some(row)),
                        Err(e) => error_row(&row.tag, Some(row), e.to_string()),
                    },
                };
                rows.push(r);
            }
        }
        None => {
            let mut seen: BTreeMap<String, ()> = BTreeMap::new();
            for (root, tag) in &found {
                let key = format!("{}|{tag}", root.display());
                if seen.insert(key, ()).is_some() {
                    continue;
                }
                rows.push(match analyze_snapshot(root, tag, ci_config, tuning) {
                    Ok(a) => evaluate(&a, None),
                    Err(e) => error_row(tag, None, format!("{}: {e}", root.display())),
                });
            }
        }
    }
    Ok(summarize(&dir.display().to_string(), rows))
}

/// The truth of a synthetic world (`truth.json`): its planted culprits; an
/// infrastructure payload of one or two failed jobs is a right force-accept.
pub fn world_truth(world: &Path) -> Result<Vec<TruthRow>, PayloadError> {
    let truth_path = world.join("truth.json");
    let truth: Value = serde_json::from_slice(&read_file(&truth_path)?)
        .map_err(|e| PayloadError::invalid(truth_path.display().to_string(), format!("malformed JSON: {e}")))?;
    let tags = truth.pointer("/payloads/tags").and_then(|t| t.as_array()).ok_or_else(|| {
        PayloadError::invalid(truth_path.display().to_string(), "no payloads.tags[]: the world has no payload stream")
    })?;
    let mut out = Vec::new();
    for t in tags {
        let tag = t.get("tag").and_then(|x| x.as_str()).unwrap_or("").to_string();
        let cause = t.get("cause").and_then(|x| x.as_str()).map(str::to_string);
        let culprits: Vec<String> = ["culprit", "ci_config_change"]
            .iter()
            .filter_map(|k| {
                let c = t.get(*k)?;
                Some(format!("{}#{}", c.get("repo")?.as_str()?, c.get("pr")?.as_u64()?))
            })
            .collect();
        out.push(TruthRow {
            tag,
            culprits,
            force_accept: None,
            note: Some(cause.unwrap_or_else(|| "none".into())),
            evidence_missing: t.get("evidence_missing").and_then(Value::as_bool).unwrap_or(false),
        });
    }
    Ok(out)
}

/// Evaluates every payload of a synthetic world against its truth (or `truth`).
pub fn eval_world_with(world: &Path, truth: Option<&[TruthRow]>) -> Result<EvalReport, PayloadError> {
    eval_world_tuned(world, truth, &Tuning::default())
}

/// [`eval_world_with`] with the analysis tuned.
pub fn eval_world_tuned(world: &Path, truth: Option<&[TruthRow]>, tuning: &Tuning) -> Result<EvalReport, PayloadError> {
    let own;
    let rows_truth = match truth {
        Some(t) => t,
        None => {
            own = world_truth(world)?;
            &own
        }
    };
    let source = RecordedDir::open(world);
    let evidence = GcsMirror::new(world.join("gcs"));
    let mut rows = Vec::new();
    for t in rows_truth {
        let mut opts = AnalyzeOptions::new(&t.tag);
        opts.tuning = *tuning;
        rows.push(match analyze(&source, &evidence, &opts) {
            Ok(a) => evaluate(&a, Some(t)),
            Err(e) => error_row(&t.tag, Some(t), e.to_string()),
        });
    }
    Ok(summarize(&world.display().to_string(), rows))
}

/// Evaluates a synthetic world against its own truth.
pub fn eval_world(world: &Path) -> Result<EvalReport, PayloadError> {
    eval_world_with(world, None)
}

fn short(c: &str) -> String {
    c.rsplit('/').next().unwrap_or(c).to_string()
}

/// A plain-text table of the report, then the summary line.
pub fn render_eval(r: &EvalReport) -> String {
    let mut s = String::new();
    s.push_str(&format!("source: {}\n\n", r.source));
    s.push_str(&format!(
        "{:<38} {:<9} {:>4} {:<13} {:<4} {:<58} {}\n",
        "payload", "phase", "fail", "action", "FA", "culprit: rank/score/action (overall rank)", "notes"
    ));
    for row in &r.rows {
        let culprits = if row.has_truth && row.truth_culprits.is_empty() {
            "none (truth)".to_string()
        } else if !row.has_truth {
            "-".to_string()
        } else {
            row.culprits
                .iter()
                .map(|c| match (c.rank, c.present) {
                    (Some(rank), _) => format!(
                        "{}: {rank}{}/{}/{}{}",
                        short(&c.culprit),
                        if c.tied_with > 0 { "=" } else { "" },
                        c.score.unwrap_or(0),
                        c.action.clone().unwrap_or_default(),
                        c.overall_rank.map(|o| format!(" ({o})")).unwrap_or_default()
                    ),
                    (None, true) => format!("{}: unranked (score 0)", short(&c.culprit)),
                    (None, false) => format!("{}: absent", short(&c.culprit)),
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let mut notes = Vec::new();
        if let Some(e) = &row.error {
            notes.push(format!("ERROR {e}"));
        }
        if !row.false_reverts.is_empty() {
            notes.push(format!("FALSE REVERT {}", row.false_reverts.join(", ")));
        }
        if !row.false_bisects.is_empty() {
            notes.push(format!("bisect of non-culprit {}", row.false_bisects.join(", ")));
        }
        if row.force_accept_right == Some(false) {
            notes.push("force-accept WRONG".into());
        }
        if !row.contradictions.is_empty() {
            notes.push(format!("CONTRADICTION {}", row.contradictions.join(" | ")));
        }
        for c in row.culprits.iter().filter(|c| !c.present) {
            if let Some(w) = &c.absent_reason {
                notes.push(format!("{} absent: {w}", short(&c.culprit)));
            }
        }
        if notes.is_empty() {
            notes.push(row.classes.join(" "));
        }
        let verdict = if row.error.is_some() { "error" } else { row.verdict.as_str() };
        s.push_str(&format!(
            "{:<38} {:<9} {:>4} {:<13} {:<4} {:<58} {}\n",
            row.tag,
            row.phase,
            row.failed_blocking,
            verdict,
            if row.force_accept { "yes" } else { "no" },
            culprits,
            notes.join("; ")
        ));
    }
    s.push('\n');
    s.push_str(&summary_line(r));
    s.push('\n');
    s
}

/// The summary line.
pub fn summary_line(r: &EvalReport) -> String {
    format!(
        "payloads: {}  culprit@1: {}/{} present ({} named), tied at 1: {}  culprit in top 3: {}/{}  margin over the next suspect: {:.1}  false reverts: {} ({} payloads)  false bisects on no-culprit payloads: {} ({} payloads)  force-accept right: {} wrong: {}  contradictions: {}  errors: {}",
        r.payloads,
        r.culprit_top1,
        r.culprits_present,
        r.culprits,
        r.culprit_tied_top1,
        r.culprit_top3,
        r.culprits_present,
        r.culprit_mean_margin,
        r.false_reverts,
        r.payloads_with_false_revert,
        r.false_bisects_no_culprit,
        r.no_culprit_payloads,
        r.force_accept_right,
        r.force_accept_wrong,
        r.contradictions,
        r.errors
    )
}
