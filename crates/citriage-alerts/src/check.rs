//! Before an alert is sent, its Markdown passes the report verifier's rules that judge
//! claims and wording (`citriage-verify`): every cited build is in the ledger and ended
//! as the alert says, every cited PR, issue or commit exists and is in the state given,
//! no placeholder, no hedge. The structural rules of a triage report (TL;DR, tiers,
//! pattern sections) do not apply to an alert. What the verifier could not check is
//! not flagged (and not claimed as checked): the resolvers the caller hands in decide
//! how much is checked (the store's builds, GitHub's cached answers).

use crate::alert::Alert;
use citriage_verify::rules::{Finding, Resolvers, VerifyOptions};

/// The verifier's rules an alert must pass.
pub const ALERT_RULES: &[&str] = &[
    "ref-exists",
    "ref-state",
    "ref-labels",
    "ref-kind",
    "commit",
    "file-line",
    "file-content",
    "build-url",
    "build-result",
    "placeholder",
    "hedge",
];

/// The findings of the alert rules on the alert's Markdown (empty: it may be sent).
/// Claims are judged as of the alert's day.
pub fn check(a: &Alert, resolvers: &Resolvers<'_>, opts: &VerifyOptions) -> Vec<Finding> {
    let text = crate::text::markdown(a);
    let opts = VerifyOptions { as_of: Some(a.day()), ..opts.clone() };
    citriage_verify::verify(&text, resolvers, &opts)
        .findings
        .into_iter()
        .filter(|f| ALERT_RULES.contains(&f.rule_id.as_str()))
        .collect()
}

/// Why an alert was held back, one line per finding.
pub fn describe(findings: &[Finding]) -> String {
    findings.iter().map(|f| format!("line {}: {} ({})", f.line, f.message, f.rule_id)).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alert::{link, name, t, AlertKind, Change};
    use citriage_verify::rules::KnownBuilds;
    use citriage_verify::NoCode;

    fn alert(verb: &str) -> Alert {
        Alert {
            key: "al-0000000000000001".into(),
            kind: AlertKind::JobRed,
            change: Change::Raised,
            subject: "ci-x".into(),
            owner: String::new(),
            at: 1_795_000_000,
            title: vec![name("ci-x"), t(" is red")],
            lines: vec![vec![
                t(format!("{verb} build ")),
                link("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/ci-x/1795000000000000001"),
            ]],
            evidence: vec![],
            refs: vec![],
            withdraw_when: vec![t("It passes.")],
            withdraws: None,
        }
    }

    #[test]
    fn an_alert_that_misstates_a_build_is_held() {
        let builds = KnownBuilds::default().with("ci-x", "1795000000000000001", Some("FAILURE"));
        let gh = citriage_github::state::StaticResolver::new("offline");
        let r = Resolvers { refs: &gh, code: &NoCode, builds: &builds };
        let opts = VerifyOptions::default();
        assert!(check(&alert("Failed"), &r, &opts).is_empty(), "{:?}", check(&alert("Failed"), &r, &opts));
        let f = check(&alert("Passed"), &r, &opts);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].rule_id, "build-result");
        // A build the ledger does not hold.
        let other = KnownBuilds::default().with("ci-x", "1795000000000000002", Some("FAILURE"));
        let r = Resolvers { refs: &gh, code: &NoCode, builds: &other };
        let f = check(&alert("Failed"), &r, &opts);
        assert!(f.iter().any(|f| f.rule_id == "build-url"), "{f:?}");
        assert!(describe(&f).contains("build-url"));
    }
}
