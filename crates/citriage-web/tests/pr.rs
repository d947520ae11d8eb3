//! A pull request's page over a synthetic world's planted PRs: `/prs/N` (what build
//! and job pages link to) finds the PR's repository and shows the verdict, the latest
//! runs and each failure's class with links to the runs and patterns; the JSON API
//! answers the same; the pages record nothing in the ledger.

mod common;

use citriage_app::Silent;
use citriage_store::Store;
use common::{get, get_json, serve_store};

#[test]
fn the_pr_page_shows_the_verdict_and_is_linked_from_builds_and_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.seed = 9;
    p.jobs = 2;
    p.payloads = 0;
    p.pr_stories = true;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    let db = dir.path().join("s.db");
    let mut store = Store::open(&db).unwrap();
    let req = citriage_app::fetch::FetchRequest {
        mirror: Some(root.join("gcs/kubernetes-ci-logs")),
        all: true,
        ..Default::default()
    };
    let src = citriage_app::fetch::source(&req).unwrap();
    citriage_app::fetch::fetch(&mut store, src.as_ref(), &req, &Silent).unwrap();
    let copts = citriage_app::cluster::ClusterOptions { window_days: 14, ..Default::default() };
    citriage_app::cluster::cluster_store(&mut store, &copts, &Silent).unwrap();
    let ledger_before = store.evidence_by_locator("").unwrap().len();
    drop(store);
    let truth: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("truth/prs.json")).unwrap()).unwrap();
    let base = truth["prs"].as_array().unwrap().iter().find(|p| p["story"] == "base-pattern").unwrap().clone();
    let n = base["number"].as_u64().unwrap();
    let srv = serve_store(db.clone(), dir, citriage_web::ServeOptions::default());

    let (status, _, page) = get(&format!("{}/prs/{n}", srv.base));
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("safe to /retest"), "{page}");
    assert!(page.contains("failing elsewhere"), "{page}");
    assert!(page.contains("href=\"/builds/pull-kubernetes-e2e-kind-alpha-canary/"), "{page}");
    assert!(page.contains("href=\"/clusters/default/"), "the pattern links to its page: {page}");
    let (status, v) = get_json(&format!("{}/api/v1/prs/kubernetes/kubernetes/{n}", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["verdict"]["safe_to_retest"], true, "{v}");
    assert_eq!(v["failures"][0]["class"], "failing-elsewhere", "{v}");
    // Linked from the job page and the run's page.
    let (_, _, job) = get(&format!("{}/jobs/pull-kubernetes-e2e-kind-alpha-canary", srv.base));
    assert!(job.contains(&format!("href=\"/prs/{n}\"")), "the job page links the PR");
    let build = v["runs"][0]["build_id"].as_str().unwrap().to_string();
    let jobname = v["runs"][0]["job"].as_str().unwrap().to_string();
    let (_, _, bp) = get(&format!("{}/builds/{jobname}/{build}", srv.base));
    assert!(bp.contains(&format!("href=\"/prs/{n}\"")), "the build page links the PR");
    // Unknown PR numbers and garbage are clear answers.
    assert_eq!(get(&format!("{}/prs/1", srv.base)).0, 404);
    assert_eq!(get(&format!("{}/prs/x", srv.base)).0, 400);
    // Nothing was recorded by the pages.
    let store = Store::open(&db).unwrap();
    assert_eq!(store.evidence_by_locator("").unwrap().len(), ledger_before);
}
