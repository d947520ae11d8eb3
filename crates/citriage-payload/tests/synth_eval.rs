//! The evaluation on a freshly generated synthetic world (the `tiny` preset):
//! every planted culprit ranked first, no "stage revert" where the truth says
//! infrastructure, flake, a pre-existing bug or nothing, no contradiction.

#[test]
fn synthetic_world_culprits_first_and_no_false_reverts() {
    let dir = tempfile::tempdir().unwrap();
    let params = citriage_synth::SynthParams::preset("tiny").expect("tiny preset");
    citriage_synth::generate(&params, dir.path(), &mut |_| {}).expect("generate the world");
    let r = citriage_payload::eval::eval_world(dir.path()).unwrap();
    eprintln!("{}", citriage_payload::eval::render_eval(&r));
    assert!(r.payloads > 0);
    assert_eq!(r.errors, 0);
    assert!(r.culprit_payloads > 0, "the world planted no culprit");
    // Every culprit is a candidate; only the payload whose runs lost their
    // artifacts cannot show it.
    for c in r.rows.iter().flat_map(|x| x.culprits.iter()).filter(|c| !c.present) {
        assert!(c.absent_reason.as_deref().unwrap_or("").contains("evidence as missing"), "{c:?}");
    }
    assert!(r.culprits_present >= 2 && r.culprits_present < r.culprits, "the stream plants a culprit gap");
    assert_eq!(r.culprit_top1, r.culprits_present, "a planted culprit is not ranked first");
    assert_eq!(r.false_reverts, 0);
    assert_eq!(r.contradictions, 0, "{:?}", r.rows.iter().flat_map(|x| x.contradictions.clone()).collect::<Vec<_>>());
    let pre = r.rows.iter().filter(|x| x.truth.as_deref() == Some("pre-existing-product-bug"));
    assert!(pre.clone().all(|x| x.verdict != citriage_payload::action::Verdict::StageRevert));
}
