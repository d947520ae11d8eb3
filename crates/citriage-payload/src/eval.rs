//! Evaluation against the synthetic world (`citriage-synth`): every payload of
//! the world's stream is analyzed offline (recorded responses + GCS mirror) and
//! compared with `truth.json`: the rank of the planted culprit (PR or
//! CI-configuration change) in the suspect ranking, and "stage revert" verdicts
//! where the truth says the cause was infrastructure, a flake or nothing.
//!
//! World layout used: `release-controller/api/v1/releasestream/<stream>/{tags,release/<tag>}`,
//! `github/<org>/<repo>/pull/<n>.diff`, `openshift/ci-config-changes.json`,
//! `gcs/<bucket>/logs/<job>/<id>/...` and `truth.json` (`payloads.tags[]` with
//! `tag`, `cause`, `culprit{repo, pr}`, `ci_config_change{repo, pr}`).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::action::Verdict;
use crate::analysis::PayloadAnalysis;
use crate::analyze::{analyze, AnalyzeOptions};
use crate::error::{read_file, PayloadError};
use crate::evidence::GcsMirror;
use crate::scoring::CandidateKind;
use crate::source::RecordedDir;

/// One payload's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalRow {
    pub tag: String,
    pub phase: String,
    /// `culprit-pr`, `ci-config`, `infra`, `flake`, `pre-existing-product-bug` or none.
    pub truth_cause: Option<String>,
    /// `org/repo#n` of the planted culprit, when any.
    pub truth_culprit: Option<String>,
    pub failed_blocking: usize,
    pub verdict: Verdict,
    /// Rank of the planted culprit in the suspect ranking (1 = first).
    pub culprit_rank: Option<u32>,
    pub culprit_score: Option<u32>,
    /// The top-ranked candidate and its score.
    pub top: Option<(String, u32)>,
    /// Classes of the root causes found.
    pub classes: Vec<String>,
    /// "Stage revert" although the truth says infrastructure, flake or no cause.
    pub false_revert: bool,
    /// The analysis failed: why.
    pub error: Option<String>,
}

/// Figures over the world.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub world: String,
    pub payloads: usize,
    pub rows: Vec<EvalRow>,
    /// Payloads whose truth names a culprit (PR or CI change).
    pub culprit_payloads: usize,
    pub culprit_top1: usize,
    pub culprit_found: usize,
    pub false_reverts: usize,
    /// Payloads whose truth is infrastructure or flake.
    pub infra_or_flake_payloads: usize,
    /// Stage-revert verdicts on a pre-existing product bug (no culprit in the stream).
    pub reverts_on_pre_existing: usize,
    pub errors: usize,
}

fn candidate_key(a: &PayloadAnalysis, id: &str) -> Option<String> {
    let c = a.candidate(id)?;
    match c.kind {
        CandidateKind::RhcosRpm => None,
        _ => Some(format!("{}#{}", c.repo.as_deref()?, c.number?)),
    }
}

/// Analyzes every payload of a synthetic world and compares with its truth.
pub fn eval_world(world: &Path) -> Result<EvalReport, PayloadError> {
    let truth_path = world.join("truth.json");
    let truth: Value = serde_json::from_slice(&read_file(&truth_path)?)
        .map_err(|e| PayloadError::invalid(truth_path.display().to_string(), format!("malformed JSON: {e}")))?;
    let tags = truth.pointer("/payloads/tags").and_then(|t| t.as_array()).ok_or_else(|| {
        PayloadError::invalid(truth_path.display().to_string(), "no payloads.tags[]: the world has no payload stream")
    })?;
    let source = RecordedDir::open(world);
    let evidence = GcsMirror::new(world.join("gcs"));
    let mut rows = Vec::new();
    for t in tags {
        let tag = t.get("tag").and_then(|x| x.as_str()).unwrap_or("").to_string();
        let cause = t.get("cause").and_then(|x| x.as_str()).map(str::to_string);
        let culprit = ["culprit", "ci_config_change"].iter().find_map(|k| {
            let c = t.get(*k)?;
            Some(format!("{}#{}", c.get("repo")?.as_str()?, c.get("pr")?.as_u64()?))
        });
        let opts = AnalyzeOptions::new(&tag);
        match analyze(&source, &evidence, &opts) {
            Ok(a) => {
                let ranking = a.ranking();
                let keyed: Vec<(Option<String>, u32)> =
                    ranking.iter().map(|(id, s)| (candidate_key(&a, id), *s)).collect();
                let pos =
                    culprit.as_ref().and_then(|c| keyed.iter().position(|(k, s)| k.as_ref() == Some(c) && *s > 0));
                let false_revert = a.decision.verdict == Verdict::StageRevert
                    && matches!(cause.as_deref(), None | Some("infra") | Some("flake"));
                rows.push(EvalRow {
                    tag,
                    phase: a.payload.phase.as_str().to_string(),
                    truth_cause: cause,
                    truth_culprit: culprit,
                    failed_blocking: a.failed_jobs.len(),
                    verdict: a.decision.verdict,
                    culprit_rank: pos.map(|p| p as u32 + 1),
                    culprit_score: pos.map(|p| keyed[p].1),
                    top: ranking
                        .first()
                        .filter(|(_, s)| *s > 0)
                        .map(|(id, s)| (a.candidate(id).map(|c| c.short()).unwrap_or_else(|| id.clone()), *s)),
                    classes: a.root_causes.iter().map(|r| format!("{}:{}", r.id, r.class.class.key())).collect(),
                    false_revert,
                    error: None,
                });
            }
            Err(e) => rows.push(EvalRow {
                tag,
                phase: String::new(),
                truth_cause: cause,
                truth_culprit: culprit,
                failed_blocking: 0,
                verdict: Verdict::ReportOnly,
                culprit_rank: None,
                culprit_score: None,
                top: None,
                classes: Vec::new(),
                false_revert: false,
                error: Some(e.to_string()),
            }),
        }
    }
    let culprit_rows: Vec<&EvalRow> = rows.iter().filter(|r| r.truth_culprit.is_some()).collect();
    Ok(EvalReport {
        world: world.display().to_string(),
        payloads: rows.len(),
        culprit_payloads: culprit_rows.len(),
        culprit_top1: culprit_rows.iter().filter(|r| r.culprit_rank == Some(1)).count(),
        culprit_found: culprit_rows.iter().filter(|r| r.culprit_rank.is_some()).count(),
        false_reverts: rows.iter().filter(|r| r.false_revert).count(),
        infra_or_flake_payloads: rows
            .iter()
            .filter(|r| matches!(r.truth_cause.as_deref(), Some("infra") | Some("flake")))
            .count(),
        reverts_on_pre_existing: rows
            .iter()
            .filter(|r| {
                r.truth_cause.as_deref() == Some("pre-existing-product-bug") && r.verdict == Verdict::StageRevert
            })
            .count(),
        errors: rows.iter().filter(|r| r.error.is_some()).count(),
        rows,
    })
}

/// A plain-text table of the report.
pub fn render_eval(r: &EvalReport) -> String {
    let mut s = String::new();
    s.push_str(&format!("world: {}\n\n", r.world));
    s.push_str(&format!(
        "{:<36} {:<9} {:<25} {:>4} {:<13} {:>5} {:<40} classes\n",
        "payload", "phase", "truth", "fail", "verdict", "rank", "top suspect (score)"
    ));
    for row in &r.rows {
        let truth = match (&row.truth_cause, &row.truth_culprit) {
            (Some(c), Some(k)) => format!("{c} {}", k.rsplit('/').next().unwrap_or(k)),
            (Some(c), None) => c.clone(),
            _ => "-".into(),
        };
        let rank = match (&row.truth_culprit, row.culprit_rank) {
            (Some(_), Some(n)) => n.to_string(),
            (Some(_), None) => "miss".into(),
            _ => "".into(),
        };
        let top = row.top.as_ref().map(|(c, s)| format!("{c} ({s})")).unwrap_or_default();
        let verdict =
            if row.false_revert { format!("{}!", row.verdict.as_str()) } else { row.verdict.as_str().to_string() };
        s.push_str(&format!(
            "{:<36} {:<9} {:<25} {:>4} {:<13} {:>5} {:<40} {}\n",
            row.tag,
            row.phase,
            truth,
            row.failed_blocking,
            verdict,
            rank,
            top,
            row.error.clone().unwrap_or_else(|| row.classes.join(" "))
        ));
    }
    s.push_str(&format!(
        "\npayloads: {}  culprit payloads: {}  culprit ranked first: {}  culprit found: {}\n",
        r.payloads, r.culprit_payloads, r.culprit_top1, r.culprit_found
    ));
    s.push_str(&format!(
        "stage-revert false positives (truth infra / flake / none): {}  (infra or flake payloads: {})\n",
        r.false_reverts, r.infra_or_flake_payloads
    ));
    s.push_str(&format!(
        "stage reverts on the pre-existing product bug: {}  analysis errors: {}\n",
        r.reverts_on_pre_existing, r.errors
    ));
    s
}
