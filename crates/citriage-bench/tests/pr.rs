//! `bench pr` on one small world: no PR that broke a test is called safe, and every
//! planted failure gets its class (the diff read from the recorded GitHub answers
//! served on 127.0.0.1).

use citriage_app::Silent;
use citriage_bench::pr::{score_world, Figures, PrBenchOptions};

#[test]
fn planted_prs_get_their_classes_and_none_that_broke_a_test_is_called_safe() {
    let dir = tempfile::tempdir().unwrap();
    let o = PrBenchOptions { jobs: Some(3), ..PrBenchOptions::default() };
    let mut f = Figures::default();
    for c in citriage_analysis::pr_risk::Class::ALL {
        f.classes.insert(c.as_str().to_string(), Default::default());
    }
    score_world(&o, 7, dir.path(), &mut f, &Silent).unwrap();
    assert_eq!(f.prs, 16);
    assert_eq!(f.prs_that_broke_a_test, 4);
    assert_eq!(f.safe_but_broke, 0, "a PR that broke a test was called safe");
    assert_eq!(f.safe_and_clean, f.clean_prs, "{:?}", f.wrong);
    assert!(f.wrong.is_empty(), "wrong classes: {:?}", f.wrong);
    assert_eq!((f.missing, f.unexpected), (0, 0));
    for (c, n) in &f.classes {
        assert!(n.actual > 0, "no planted failure of class {c}");
        assert_eq!((n.tp, n.predicted), (n.actual, n.actual), "class {c}");
    }
    // The diff came through the GitHub client: breakages naming a changed file are strong.
    assert!(f.new_strong >= 3, "{} new failures on a named change", f.new_strong);
}
