//! Running citriage for a team: the configuration file (`config check`), continuous
//! ingestion (`watch`) and the operable dashboard (`serve`'s health, readiness,
//! metrics and status page, its listening and write rules).

use std::path::{Path, PathBuf};

mod common;

use common::{bin, run, stderr};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/citriage.example.toml")
}

#[test]
fn the_documented_example_configuration_parses() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let o = run(&db, &["--format", "json", "config", "check", example().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["server"]["public_name"], "citriage.example.org");
    assert_eq!(v["sources"]["buckets"][0]["name"], "k8s-ci");
    assert_eq!(v["sources"]["buckets"][0]["max_builds"], 40);
    assert_eq!(v["sources"]["dashboards"].as_array().unwrap().len(), 2);
    assert_eq!(v["sources"]["release_streams"][0]["stream"], "4.18.0-0.nightly");
    assert_eq!(v["sources"]["github"][1], "kubernetes/test-infra");
    assert_eq!(v["schedule"]["interval"], "15m");
    assert_eq!(v["retention"]["log_days"], 14);
    assert_eq!(v["owners"]["sig-node"][0], "^ci-kubernetes-node-");
    assert!(!db.exists(), "config check creates no store");
}

#[test]
fn a_bad_configuration_exits_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let cases = [
        ("[schedule]\ninterval = \"often\"\n", "schedule.interval"),
        ("[server]\nlisten = \"everywhere\"\n", "server.listen"),
        ("[server]\nport = 80\n", "port"),
        (
            "[[sources.buckets]]\nname = \"a\"\nbucket = \"b\"\nmirror = \"/m\"\njobs = [\"j\"]\nmax_builds = -1\n",
            "sources.buckets[0].max_builds",
        ),
        ("[[sources.buckets]]\nname = \"a\"\nbucket = \"b\"\njobs = [\"j\"]\n", "sources.buckets[0]"),
        (
            "[[sources.release_streams]]\nname = \"r\"\ncontroller = \"ftp://x\"\nstream = \"s\"\n",
            "sources.release_streams[0].controller",
        ),
        ("[sources]\ngithub = [\"kubernetes\"]\n", "sources.github[0]"),
        ("[retention]\nwindow_days = 7\nlog_days = 9\n", "retention.log_days"),
        ("store = \n", "line 1"),
    ];
    for (i, (text, key)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let o = run(&db, &["config", "check", f.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(key), "{text}: the error should name {key}: {err}");
        assert!(err.contains(&format!("bad{i}.toml")), "{text}: the error should name the file: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let o = run(&db, &["config", "check", dir.path().join("missing.toml").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let _ = bin();
}
