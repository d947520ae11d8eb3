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
