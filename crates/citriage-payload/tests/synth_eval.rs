//! The evaluation on a freshly generated synthetic world (the `tiny` preset):
//! every planted culprit ranked first, no "stage revert" where the truth says
//! infrastructure, flake or nothing.

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
    assert_eq!(r.culprit_top1, r.culprit_payloads, "a planted culprit is not ranked first");
    assert_eq!(r.false_reverts, 0);
    assert_eq!(r.reverts_on_pre_existing, 0);
}
