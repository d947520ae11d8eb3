//! The engine on a window of three changes: which links each draws to one
//! failure, what each quotes, and which families they belong to.

use std::collections::{BTreeMap, BTreeSet};

use citriage_suspects::band::JobBand;
use citriage_suspects::diff::parse_unified;
use citriage_suspects::failure::{ComponentRef, Failure};
use citriage_suspects::lines::{Location, LogLine};
use citriage_suspects::links::{link, Change, Family, LinkKind, Weights};
use citriage_suspects::window::{CandidateIndex, WindowIndex};

fn line(text: &str, n: u32) -> LogLine {
    LogLine { text: text.into(), at: Location { file: "build-log.txt".into(), url: None, line: Some(n) } }
}

fn change<'a>(id: &'a str, title: &'a str, owns: &[&str]) -> Change<'a> {
    Change {
        id,
        title,
        body: None,
        author: None,
        label: id.to_string(),
        ships: id.to_string(),
        owns: owns.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(),
    }
}

#[test]
fn links_quote_the_diff_and_the_failure_line() {
    let culprit = parse_unified(
        "--- a/pkg/sync/reconcile.go\n+++ b/pkg/sync/reconcile.go\n@@ -10,2 +10,2 @@\n-\treturn nil\n+\treturn fmt.Errorf(\"quota reconciler stalled on tenant\")\n ctx\n",
    );
    let decoy = parse_unified(
        "--- a/vendor/x/reconcile.go\n+++ b/vendor/x/reconcile.go\n@@ -1,0 +1,1 @@\n+\treturn fmt.Errorf(\"quota reconciler stalled on tenant\")\n",
    );
    let bystander =
        parse_unified("--- a/README.md\n+++ b/README.md\n@@ -1,0 +1,1 @@\n+quota reconciler stalled on tenant\n");
    let mut docs = BTreeMap::new();
    docs.insert("a".to_string(), CandidateIndex::new(Some(&culprit), "Stop the quota reconciler from retrying"));
    docs.insert("b".to_string(), CandidateIndex::new(Some(&decoy), "Bump vendored libraries"));
    docs.insert("c".to_string(), CandidateIndex::new(Some(&bystander), "Document tenants"));
    let window = WindowIndex::new(docs);
    let failure = Failure::new(
        vec![
            line("E0510 12:00:00.000000 1 reconcile.go:214] sync failed: quota reconciler stalled on tenant", 7),
            line("panic: runtime error at reconcile.go:88", 9),
        ],
        vec!["[sig-quota] the quota reconciler should converge".into()],
        vec![ComponentRef { key: "quota".into(), how: "test owner [sig-quota]".into(), subject: true }],
    );
    let weights = Weights::default();
    let culprit = change("a", "Stop the quota reconciler from retrying", &["quota"]);
    let found = link(&failure, &culprit, &window.docs["a"], &window, &weights);
    let kinds: Vec<LinkKind> = found.links.iter().map(|l| l.kind).collect();
    assert_eq!(
        kinds,
        vec![LinkKind::Verbatim, LinkKind::StackFile, LinkKind::Title, LinkKind::Component],
        "{:#?}",
        found.links
    );
    let m = found.verbatim.expect("a verbatim match");
    assert_eq!((m.diff_file.as_str(), m.diff_line, m.df), ("pkg/sync/reconcile.go", 10, 1));
    assert_eq!(m.log.at.cite(), "build-log.txt:7");
    assert!(found.links[0].evidence.contains("pkg/sync/reconcile.go:10"), "{}", found.links[0].evidence);
    // The title word comes from the test name only: a link, not a specific one;
    // and not `quota`, the component's own name (the component link says that).
    assert!(
        !found.links[2].specific && found.links[2].evidence.contains("`reconciler`"),
        "{}",
        found.links[2].evidence
    );
    assert_eq!(JobBand::of(&found.links, false), JobBand::LikelyIntroducing);
    // Vendored and documentation copies of the same string are no link at all.
    for id in ["b", "c"] {
        let other = link(&failure, &change(id, "", &[]), &window.docs[id], &window, &weights);
        assert!(other.links.is_empty(), "{id}: {:#?}", other.links);
    }
    assert_eq!(LinkKind::Removed.family(), Family::DiffContent);
}

fn indexed(diffs: &[(&str, &str, &[&str])]) -> WindowIndex {
    let mut docs = BTreeMap::new();
    for (id, diff, sigs) in diffs {
        let owners = sigs.iter().map(|s| (s.to_string(), format!("pkg/{s}/x.go (pkg/{s}/OWNERS:2 labels sig/{s})")));
        let ix = CandidateIndex::new(Some(&parse_unified(diff)), "").with_owners(owners.collect());
        docs.insert(id.to_string(), ix);
    }
    WindowIndex::new(docs)
}

fn diff(path: &str, added: &str) -> String {
    format!("--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,1 @@\n+{added}\n")
}

#[test]
fn owners_are_one_weak_family_specific_only_when_one_change_touches_the_sig() {
    let failure =
        Failure::new(vec![line("lease renewed late", 3)], vec!["[sig-node] node leases are renewed".into()], vec![]);
    assert_eq!(failure.sigs.keys().collect::<Vec<_>>(), vec!["node"]);
    let (a, b) = (diff("pkg/node/lease.go", "const skew = 4"), diff("pkg/dns/dns.go", "const ttl = 5"));
    let w = indexed(&[("a", &a, &["node"]), ("b", &b, &["network"])]);
    let weights = Weights::default();
    let found = link(&failure, &change("a", "", &[]), &w.docs["a"], &w, &weights);
    assert_eq!(found.links.len(), 1, "{:#?}", found.links);
    let l = &found.links[0];
    assert_eq!((l.kind, l.points, l.specific, l.kind.family()), (LinkKind::Owners, 10, true, Family::Ownership));
    assert!(l.evidence.contains("[sig-node] node leases are renewed") && l.evidence.contains("pkg/node/OWNERS:2"));
    // Alone it makes a suspect, never the likely introducing change.
    assert_eq!(JobBand::of(&found.links, false), JobBand::Suspect);
    // Another SIG's change earns nothing.
    assert!(link(&failure, &change("b", "", &[]), &w.docs["b"], &w, &weights).links.is_empty());
    // Two changes of the SIG: a link, not a specific one.
    let w = indexed(&[("a", &a, &["node"]), ("c", &b, &["node"])]);
    let found = link(&failure, &change("a", "", &[]), &w.docs["a"], &w, &weights);
    assert_eq!((found.links[0].points, found.links[0].specific), (5, false));
    assert_eq!(JobBand::of(&found.links, false), JobBand::WindowOnly);
    // With a specific link of another family: the likely introducing change.
    let failure = Failure::new(
        vec![line("lease renewed late: leaseRenewSkew too large", 3)],
        vec!["[sig-node] node leases are renewed".into()],
        vec![],
    );
    let a = diff("pkg/node/lease.go", "const leaseRenewSkew = 40 * time.Second");
    let w = indexed(&[("a", &a, &["node"]), ("b", &b, &["network"])]);
    let found = link(&failure, &change("a", "", &[]), &w.docs["a"], &w, &weights);
    let kinds: Vec<LinkKind> = found.links.iter().map(|l| l.kind).collect();
    assert_eq!(kinds, vec![LinkKind::Verbatim, LinkKind::Owners]);
    assert_eq!(JobBand::of(&found.links, false), JobBand::LikelyIntroducing);
}

#[test]
fn format_strings_capital_symbols_and_quoted_short_names_are_found() {
    let weights = Weights::default();
    let one = |failure: &Failure, d: &str, other: &str| {
        let w = indexed(&[("a", d, &[]), ("b", other, &[])]);
        (
            link(failure, &change("a", "", &[]), &w.docs["a"], &w, &weights),
            link(failure, &change("b", "", &[]), &w.docs["b"], &w, &weights),
        )
    };
    // A format string the diff adds, against the line it rendered.
    let failure = Failure::new(
        vec![line("E1201 10:00:00.000000 1 measurement failed: actual throughput 23.5 lower than threshold 90", 12)],
        vec![],
        vec![],
    );
    let culprit = diff(
        "clusterloader2/pkg/measurement/throughput.go",
        "\t\treturn fmt.Errorf(\"actual throughput %f lower than threshold %f\", actual, threshold)",
    );
    let other =
        diff("clusterloader2/pkg/measurement/latency.go", "\t\treturn fmt.Errorf(\"latency %v above %v\", l, t)");
    let (found, none) = one(&failure, &culprit, &other);
    let m = found.verbatim.expect("a format match");
    assert_eq!((m.token_kind.as_str(), m.diff_line, m.df), ("format", 1, 1));
    assert_eq!(m.log.at.cite(), "build-log.txt:12");
    assert!(found.links[0].specific && found.links[0].evidence.contains("throughput.go:1"), "{:#?}", found.links);
    assert!(none.links.is_empty(), "{:#?}", none.links);
    // All-capital identifiers with underscores are symbols; plain capital words are not.
    let failure = Failure::new(vec![line("ERROR: the job ran past KUBE_TIMEOUT and was killed", 4)], vec![], vec![]);
    assert!(failure.tokens.iter().any(|t| t.text == "KUBE_TIMEOUT"), "{:?}", failure.tokens);
    assert!(!failure.tokens.iter().any(|t| t.text == "ERROR"), "{:?}", failure.tokens);
    let (found, _) = one(&failure, &diff("hack/e2e.sh", "export KUBE_TIMEOUT=--timeout=45m"), &other);
    assert_eq!(found.verbatim.map(|m| m.token), Some("KUBE_TIMEOUT".to_string()));
    // A short name someone quoted; everyday hyphenated words are no names.
    let failure = Failure::new(
        vec![line("the secret `nfd-creds` is missing and the `read-only` mount failed", 5)],
        vec![],
        vec![],
    );
    assert!(failure.tokens.iter().any(|t| t.text == "nfd-creds"), "{:?}", failure.tokens);
    assert!(!failure.tokens.iter().any(|t| t.text == "read-only"), "{:?}", failure.tokens);
    let (found, _) = one(&failure, &diff("deploy/nfd.yaml", "  secretName: nfd-creds"), &other);
    assert_eq!(found.verbatim.map(|m| m.token), Some("nfd-creds".to_string()));
    // Inside a phrase in single quotes too; between apostrophes, no.
    let failure = Failure::new(vec![line("Fix the 'secret \"nfd-creds\" not found' error", 6)], vec![], vec![]);
    assert!(failure.tokens.iter().any(|t| t.text == "nfd-creds"), "{:?}", failure.tokens);
    let failure = Failure::new(vec![line("it's the kube-dns we don't trust", 6)], vec![], vec![]);
    assert!(!failure.tokens.iter().any(|t| t.text == "kube-dns"), "{:?}", failure.tokens);
}
