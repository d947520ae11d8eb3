//! Classifying a failure mode: product regression, infrastructure, CI
//! configuration, flake, informing-only or unknown — each verdict with the rule
//! that fired and the line that made it fire.
//!
//! Rules, first match wins:
//! 1. an external signature hint with a class (the shared signature code) is used as is;
//! 2. no JUnit and no log evidence at all → **unknown** (a job whose tests may never
//!    have run is not green and not a product failure);
//! 3. an infrastructure signature of the catalogue (cloud quota and capacity, leases,
//!    API throttling, lost test-cluster connectivity, expired credentials...) →
//!    **infrastructure**, temporary when the signature is `transient`, else persistent;
//! 4. a CI-configuration signature (unknown flags, missing commands or files in a step,
//!    pods that cannot be created, invalid step references...) → **CI configuration**;
//! 5. only informing tests failed → **informing-only**;
//! 6. flake evidence (the same failure on an earlier payload of the job with a pass
//!    in between, or the run passed on a retry of the same payload) → **flake**;
//! 7. gating test failures or product error lines → **product regression**;
//! 8. otherwise **unknown**.
//!
//! Rules 3 and 4 read the one signature catalogue of `citriage-patterns`, its
//! payload-only entries included; the first line any signature matches decides.

use citriage_patterns::signatures::{Catalogue, FailureClass as SignatureClass};
use serde::{Deserialize, Serialize};

use crate::evidence::{LogLine, SignatureHint};

/// The kind of cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum FailureClass {
    ProductRegression,
    Infrastructure,
    CiConfiguration,
    Flake,
    InformingOnly,
    Unknown,
}

impl FailureClass {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::ProductRegression => "product regression",
            FailureClass::Infrastructure => "infrastructure",
            FailureClass::CiConfiguration => "CI configuration",
            FailureClass::Flake => "flake",
            FailureClass::InformingOnly => "informing-only",
            FailureClass::Unknown => "unknown",
        }
    }

    /// Short machine name (`product`, `infra`, `ci-config`, `flake`, `informing`, `unknown`).
    pub fn key(self) -> &'static str {
        match self {
            FailureClass::ProductRegression => "product",
            FailureClass::Infrastructure => "infra",
            FailureClass::CiConfiguration => "ci-config",
            FailureClass::Flake => "flake",
            FailureClass::InformingOnly => "informing",
            FailureClass::Unknown => "unknown",
        }
    }

    /// Parses a hint class.
    pub fn from_hint(s: &str) -> Option<FailureClass> {
        match s.trim().to_ascii_lowercase().replace(['_', ' '], "-").as_str() {
            "product" | "product-regression" | "regression" | "bug" | "prchange" | "pr-change" => {
                Some(FailureClass::ProductRegression)
            }
            "infra" | "infrastructure" => Some(FailureClass::Infrastructure),
            "ci-config" | "ciconfig" | "ci-configuration" | "config" => Some(FailureClass::CiConfiguration),
            "flake" | "flaky" => Some(FailureClass::Flake),
            "informing" | "informing-only" => Some(FailureClass::InformingOnly),
            "unknown" => Some(FailureClass::Unknown),
            _ => None,
        }
    }
}

/// A verdict with its reason and evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    pub class: FailureClass,
    /// Which rule fired, in words.
    pub reason: String,
    /// The line that made it fire.
    pub evidence: Option<LogLine>,
    /// Infrastructure only: clears by itself on the next run (quota, lease, throttling).
    pub temporary: bool,
}

/// What the classifier looks at for one failure mode.
pub struct ModeFacts<'a> {
    /// The mode's cited lines (failure text lines, matching log lines).
    pub lines: &'a [LogLine],
    /// True when the mode has gating product-test failures (not CI steps).
    pub has_gating_tests: bool,
    /// True when the failure is in a CI step (step JUnit, failed step, no product test).
    pub in_ci_step: bool,
    /// True when every failing test of the mode is informing.
    pub informing_only: bool,
    /// True when there is no JUnit and no log line.
    pub no_evidence: bool,
    /// Flake evidence, if any (sentence + line).
    pub flake_evidence: Option<(String, Option<LogLine>)>,
    pub hint: Option<&'a SignatureHint>,
    /// Run-level failure of an aggregated job: the same underlying runs failed
    /// unrelated tests that the other runs passed (sentence + line).
    pub run_level: Option<(String, Option<LogLine>)>,
    /// Test binaries of the payload could not be listed or extracted.
    pub test_binary: bool,
    /// A payload command failed inside a CI step.
    pub product_error: bool,
}

/// The classifier: the infrastructure and CI-configuration signatures of the one
/// signature catalogue (`citriage-patterns`), payload-only ones included.
pub struct Classifier {
    infra: Catalogue,
    ci: Catalogue,
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier::with_catalogue(&Catalogue::builtin_payload())
    }
}

/// What fired: the signature's name and whether its cause passes by itself.
struct Fired {
    name: String,
    transient: bool,
}

impl Classifier {
    /// A classifier over `catalogue`'s infrastructure and CI-configuration signatures.
    pub fn with_catalogue(catalogue: &Catalogue) -> Classifier {
        Classifier {
            infra: catalogue.only(|s| s.class == SignatureClass::Infra),
            ci: catalogue.only(|s| s.class == SignatureClass::CiConfig),
        }
    }

    /// True when a line matches an infrastructure or CI-configuration signature.
    pub fn is_cause_line(&self, text: &str) -> bool {
        !self.infra.match_text(text).is_empty() || !self.ci.match_text(text).is_empty()
    }

    /// The first line (in order) any signature of `catalogue` matches, with the first
    /// signature (in catalogue order) matching it.
    fn first_match<'a>(catalogue: &Catalogue, lines: &'a [LogLine]) -> Option<(Fired, &'a LogLine)> {
        lines.iter().find_map(|l| {
            catalogue
                .match_text(&l.text)
                .into_iter()
                .next()
                .map(|m| (Fired { name: m.name, transient: m.transient }, l))
        })
    }

    /// Classifies one failure mode: a hint or missing evidence first, then the
    /// catalogue's infrastructure and CI-configuration signatures, then what the
    /// mode's shape says.
    pub fn classify(&self, f: &ModeFacts) -> Classification {
        Self::known(f).or_else(|| self.by_catalogue(f)).unwrap_or_else(|| Self::by_shape(f))
    }

    /// A class the hint names, missing evidence, or a run-level aggregated failure.
    fn known(f: &ModeFacts) -> Option<Classification> {
        if let Some(h) = f.hint {
            if let Some(c) = h.class.as_deref().and_then(FailureClass::from_hint) {
                return Some(Classification {
                    class: c,
                    reason: format!("signature {} is known as {}", h.label.as_deref().unwrap_or(&h.id), c.as_str()),
                    evidence: f.lines.first().cloned(),
                    temporary: c == FailureClass::Infrastructure,
                });
            }
        }
        if f.no_evidence {
            return Some(Classification {
                class: FailureClass::Unknown,
                reason: "insufficient evidence (unknown, not green)".into(),
                evidence: None,
                temporary: false,
            });
        }
        if let Some((why, line)) = &f.run_level {
            return Some(Classification {
                class: FailureClass::Infrastructure,
                reason: format!("{why} (temporary: clears on the next run)"),
                evidence: line.clone().or_else(|| f.lines.first().cloned()),
                temporary: true,
            });
        }
        None
    }

    /// The first infrastructure, then CI-configuration, signature of the catalogue the lines match.
    fn by_catalogue(&self, f: &ModeFacts) -> Option<Classification> {
        if let Some((r, l)) = Self::first_match(&self.infra, f.lines) {
            return Some(Classification {
                class: FailureClass::Infrastructure,
                reason: format!(
                    "{} ({})",
                    r.name,
                    if r.transient { "temporary: clears on the next run" } else { "persistent: needs a human" }
                ),
                evidence: Some(l.clone()),
                temporary: r.transient,
            });
        }
        if let Some((r, l)) = Self::first_match(&self.ci, f.lines) {
            return Some(Classification {
                class: FailureClass::CiConfiguration,
                reason: r.name,
                evidence: Some(l.clone()),
                temporary: false,
            });
        }
        None
    }

    /// What the mode's shape says: informing only, flake, test binaries,
    /// a payload command, gating tests or product lines; else unknown.
    fn by_shape(f: &ModeFacts) -> Classification {
        if f.informing_only {
            return Classification {
                class: FailureClass::InformingOnly,
                reason: "only tests with lifecycle=informing failed; they cannot reject a payload".into(),
                evidence: f.lines.first().cloned(),
                temporary: false,
            };
        }
        if let Some((why, line)) = &f.flake_evidence {
            return Classification {
                class: FailureClass::Flake,
                reason: why.clone(),
                evidence: line.clone().or_else(|| f.lines.first().cloned()),
                temporary: false,
            };
        }
        if f.test_binary {
            let l = f.lines.iter().find(|l| crate::lines::is_test_binary_failure(&l.text)).or(f.lines.first());
            return Classification {
                class: FailureClass::ProductRegression,
                reason: "test binaries of the payload could not be listed or extracted: a payload image or the test framework broke them".into(),
                evidence: l.cloned(),
                temporary: false,
            };
        }
        if f.product_error && !f.lines.is_empty() {
            return Classification {
                class: FailureClass::ProductRegression,
                reason: "a payload command (oc, openshift-install) failed inside the CI step".into(),
                evidence: f.lines.iter().find(|l| crate::lines::explains_failure(&l.text)).or(f.lines.first()).cloned(),
                temporary: false,
            };
        }
        if f.has_gating_tests || (!f.in_ci_step && !f.lines.is_empty()) {
            return Classification {
                class: FailureClass::ProductRegression,
                reason: if f.has_gating_tests {
                    "gating tests failed with no infrastructure, CI-configuration or flake signal".into()
                } else {
                    "product error lines with no infrastructure, CI-configuration or flake signal".into()
                },
                evidence: f.lines.first().cloned(),
                temporary: false,
            };
        }
        Classification {
            class: FailureClass::Unknown,
            reason: "insufficient evidence: a CI step failed and its output explains nothing beyond an exit status"
                .into(),
            evidence: f.lines.first().cloned(),
            temporary: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Location;

    fn line(t: &str) -> LogLine {
        LogLine { text: t.into(), at: Location { file: "build-log.txt".into(), url: None, line: Some(7) } }
    }

    fn facts(lines: &[LogLine]) -> ModeFacts<'_> {
        ModeFacts {
            lines,
            has_gating_tests: true,
            in_ci_step: false,
            informing_only: false,
            no_evidence: false,
            flake_evidence: None,
            hint: None,
            run_level: None,
            test_binary: false,
            product_error: false,
        }
    }

    #[test]
    fn rules() {
        let c = Classifier::default();
        let l =
            [line("level=error msg=\"Error: creating EC2 Instance: VcpuLimitExceeded: You have requested more vCPU\"")];
        let v = c.classify(&facts(&l));
        assert_eq!((v.class, v.temporary), (FailureClass::Infrastructure, true));
        let l = [line("openshift-install: Error: unknown flag: --log-level-v2")];
        assert_eq!(c.classify(&facts(&l)).class, FailureClass::CiConfiguration);
        let l = [line("E May 14 clusteroperator/insights condition/Available reason/UploadFailed status/False Unable to report: gateway server reported unexpected error code: 500 (request=)")];
        let v = c.classify(&facts(&l));
        assert_eq!((v.class, v.temporary), (FailureClass::Infrastructure, false), "{v:?}");
        let l = [line("Readiness probe error: HTTP probe failed with statuscode: 503")];
        assert_eq!(c.classify(&facts(&l)).class, FailureClass::ProductRegression);
        let l = [line("pods \"x\" is forbidden: the cluster does not have any nodes")];
        assert_eq!(c.classify(&facts(&l)).class, FailureClass::ProductRegression);
        let none: [LogLine; 0] = [];
        let mut f = facts(&none);
        f.no_evidence = true;
        assert_eq!(c.classify(&f).class, FailureClass::Unknown);
    }
}
