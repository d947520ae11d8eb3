//! The binary against hostile CI data: a job name with a line break, a Markdown
//! heading, a table pipe, NUL and ESC reaches the terminal, `report.md` and the text
//! data files escaped; a snapshot with a byte order mark is read; a build whose
//! timestamps overflow is recorded with its problem and does not move the as-of date
//! or blank the metrics of the others; `gh sweep` neither trusts nor caches a 200
//! answer that is not the issue it asked for.

use std::path::Path;

mod common;

use common::{run, stderr};

const EVIL: &str = "ci-evil\n# Heading | x\u{0}y\u{1b}[31mred";

fn snapshot(jobs: &[(&str, u32)]) -> String {
    let m: serde_json::Map<String, serde_json::Value> =
        jobs.iter().map(|(j, d)| (j.to_string(), serde_json::json!({ "failing_days": d }))).collect();
    serde_json::Value::Object(m).to_string()
}

fn no_raw_controls(what: &str, text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what} holds a raw control character:\n{text:?}"
    );
}

#[test]
fn a_hostile_job_name_is_escaped_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let days = [("failures-2026-11-20.json", 10), ("failures-2026-11-21.json", 11)];
    for (i, (name, d)) in days.iter().enumerate() {
        let mut body = snapshot(&[(EVIL, *d), ("ci-steady", 40 + i as u32)]).into_bytes();
        if i == 0 {
            // A byte order mark is accepted.
            body.splice(0..0, [0xEF, 0xBB, 0xBF]);
        }
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        let o = run(&db, &["import", p.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
    // Only the newer snapshot lists a new job: it shows up in drift as added.
    let p = dir.path().join("failures-2026-11-22.json");
    std::fs::write(&p, snapshot(&[(EVIL, 12), ("ci-steady", 42), (&format!("{EVIL}-2"), 1)])).unwrap();
    assert!(run(&db, &["import", p.to_str().unwrap()]).status.success());

    let o = run(&db, &["drift", "--dataset", "failures"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    no_raw_controls("drift's output", &out);
    assert!(out.contains("ci-evil\\n# Heading | x\\0y\\u{1b}[31mred-2"), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("# Heading")), "{out}");

    let rep = dir.path().join("rep");
    let o = run(&db, &["triage", "--dataset", "failures", "--out", rep.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    no_raw_controls("triage's output", &String::from_utf8_lossy(&o.stdout));
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    no_raw_controls("report.md", &md);
    assert!(!md.lines().any(|l| l.contains("# Heading") && !l.contains('`')), "a heading escaped its code span");
    // Every table row that names the job keeps its column count.
    for l in md.lines().filter(|l| l.starts_with('|') && l.contains("ci-evil")) {
        let header_cols = md
            .lines()
            .take_while(|h| *h != l)
            .filter(|h| h.starts_with("|---") || h.starts_with("|--:") || h.starts_with("|:"))
            .last()
            .map(|h| h.matches('|').count());
        let cols = l.replace("\\|", "").matches('|').count();
        if let Some(h) = header_cols {
            assert_eq!(cols, h, "row broke its table: {l}");
        }
        assert!(l.contains("ci-evil # Heading \\| x\\0y\\u{1b}[31mred"), "{l}");
    }
    for f in std::fs::read_dir(&rep).unwrap() {
        let f = f.unwrap().path();
        let text = std::fs::read_to_string(&f).unwrap();
        if f.extension().is_some_and(|e| e == "txt") {
            no_raw_controls(&f.display().to_string(), &text);
            assert!(!text.lines().any(|l| l.starts_with("# Heading")), "{}: {text}", f.display());
        }
    }
}

fn write(p: &Path, body: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

#[test]
fn an_overflowing_timestamp_is_a_problem_and_does_not_blank_the_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 6;
    p.builds_per_job = 6;
    p.payloads = 0;
    p.dashboard_days = 1;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    let mirror = root.join("gcs/kubernetes-ci-logs");
    let metrics = |db: &Path| -> serde_json::Value {
        let o = run(db, &["--format", "json", "metrics"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let clean = dir.path().join("clean.db");
    let o = run(&clean, &["fetch", "--all", "--mirror", mirror.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = metrics(&clean);

    // One planted build dated at the end of time.
    let bad = mirror.join("logs/ci-planted-overflow/9");
    write(&bad.join("started.json"), r#"{"timestamp": 9223372036854775807}"#);
    write(&bad.join("finished.json"), r#"{"timestamp": 1e300, "result": "SUCCESS"}"#);
    let db = dir.path().join("s.db");
    let o = run(&db, &["--format", "json", "fetch", "--all", "--mirror", mirror.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(s["summary"]["builds_with_problems"].as_u64().unwrap() >= 1, "{s}");
    let after = metrics(&db);
    assert_eq!(after["as_of"], before["as_of"], "the planted build does not move the as-of date");
    let jobs = |v: &serde_json::Value| v["jobs"].as_array().map(|a| a.len()).unwrap_or(0);
    assert!(jobs(&before) > 0);
    assert!(jobs(&after) >= jobs(&before), "{} jobs after, {} before", jobs(&after), jobs(&before));
}

/// A JUnit `time` that is not a duration (`1e400`, `NaN`, negative, years long) reaches
/// the build's stored problems through `fetch --mirror`, naming the file, the test case
/// and the value, and the dashboard's build page shows it; the file's other results and
/// their times are stored, the bad one without a time.
#[test]
fn a_junit_time_that_is_not_a_duration_is_a_stored_and_shown_problem() {
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    let build = mirror.join("logs/ci-odd-times/17");
    write(&build.join("started.json"), r#"{"timestamp": 1764000000}"#);
    write(&build.join("finished.json"), r#"{"timestamp": 1764000600, "result": "FAILURE", "passed": false}"#);
    write(
        &build.join("artifacts/junit_01.xml"),
        r#"<testsuite name="e2e"><testcase name="fine" time="12.5"/><testcase name="[sig-x] overflows" time="1e400"><failure>boom</failure></testcase><testcase name="nan" time="NaN"/><testcase name="last" time="3"/></testsuite>"#,
    );
    let db = dir.path().join("s.db");
    let o = run(&db, &["--format", "json", "fetch", "--all", "--mirror", mirror.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["summary"]["builds_with_problems"].as_u64(), Some(1), "{s}");

    let store = citriage_store::Store::open(&db).unwrap();
    let builds = store.builds(Some("ci-odd-times")).unwrap();
    assert_eq!(builds.len(), 1);
    let b = &builds[0];
    let p = b.problems.iter().find(|p| p.contains("1e400")).unwrap_or_else(|| panic!("{:?}", b.problems));
    assert!(p.contains("junit_01.xml"), "names the file: {p}");
    assert!(p.contains(r#"test case "[sig-x] overflows" has time="1e400""#), "{p}");
    assert!(p.contains("and 1 more test case"), "the NaN one is counted: {p}");
    assert_eq!(b.result.as_deref(), Some("FAILURE"), "the build keeps its result");
    let mut st = citriage_store::Store::open(&db).unwrap();
    let mut times: Vec<(String, Option<f64>)> = st
        .test_results()
        .unwrap()
        .into_iter()
        .filter(|(_, path, _)| path.contains("ci-odd-times"))
        .map(|(_, _, t)| (t.name, t.duration))
        .collect();
    times.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        times,
        [
            ("[sig-x] overflows".into(), None),
            ("fine".into(), Some(12.5)),
            ("last".into(), Some(3.0)),
            ("nan".into(), None)
        ]
    );

    // Where build problems are shown: the build's page and its API answer.
    let srv = citriage_web::Server::bind(db.clone(), "127.0.0.1:0".parse().unwrap()).unwrap().spawn().unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let page = agent
        .get(format!("{}/builds/ci-odd-times/17", srv.base_url()))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(page.contains("Problems reading this build"), "{page}");
    assert!(page.contains("[sig-x] overflows") && page.contains("1e400"), "{page}");
    let api = agent
        .get(format!("{}/api/v1/builds/ci-odd-times/17", srv.base_url()))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let api: serde_json::Value = serde_json::from_str(&api).unwrap();
    let listed = api["problems"].as_array().map(|a| a.iter().filter_map(|p| p.as_str()).collect::<Vec<_>>());
    assert!(listed.is_some_and(|l| l.iter().any(|p| p.contains(r#"time="1e400""#))), "{api}");
}

/// A job and a test named with a line break, a heading, a pipe, NUL and ESC, read from
/// builds (`prowjob.json`, JUnit, the build log): the terminal tables of `metrics` and
/// `cluster` keep each name on one line, and the agent briefs written from the triage
/// keep their tables and headings and hold no raw control character.
#[test]
fn hostile_names_from_builds_stay_on_one_line_in_tables_and_briefs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for (day, d) in [("2026-11-20", 10), ("2026-11-21", 11)] {
        let p = dir.path().join(format!("failures-{day}.json"));
        std::fs::write(&p, snapshot(&[(EVIL, d), ("ci-steady", 40)])).unwrap();
        let o = run(&db, &["import", p.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let mirror = dir.path().join("mirror");
    for i in 1..=2 {
        let b = mirror.join(format!("logs/ci-evil/{i}"));
        write(&b.join("started.json"), &format!(r#"{{"timestamp": {}}}"#, 1_764_000_000 + i * 3600));
        write(
            &b.join("finished.json"),
            &format!(r#"{{"timestamp": {}, "result": "FAILURE", "passed": false}}"#, 1_764_000_600 + i * 3600),
        );
        write(&b.join("prowjob.json"), &serde_json::json!({"spec": {"job": EVIL, "type": "periodic"}}).to_string());
        write(
            &b.join("artifacts/junit_01.xml"),
            r#"<testsuite><testcase name="t&#10;# Test &#27;[31m"><failure>boom &#27;[31m</failure></testcase></testsuite>"#,
        );
        write(&b.join("build-log.txt"), "E1127 error: \u{1b}[31mboom\u{0} failed\n# Heading\nFAIL\n");
    }
    let o = run(&db, &["fetch", "--all", "--mirror", mirror.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = "ci-evil\\n# Heading | x\\0y\\u{1b}[31mred";
    let clusters = dir.path().join("cl");
    for args in [&["metrics"][..], &["cluster", "--out", clusters.to_str().unwrap()]] {
        let o = run(&db, args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        no_raw_controls(&format!("{args:?}"), &out);
        assert!(!out.lines().any(|l| l.starts_with("# Heading") || l.starts_with("# Test")), "{args:?}:\n{out}");
        assert!(out.contains(shown), "{args:?} names the job on one line:\n{out}");
    }
    let rep = dir.path().join("rep");
    let o = run(&db, &["triage", "--dataset", "failures", "--out", rep.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let briefs = dir.path().join("briefs");
    let o = run(&db, &["brief", "--out", briefs.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut read = 0;
    for f in std::fs::read_dir(&briefs).unwrap() {
        let f = f.unwrap().path();
        let text = std::fs::read_to_string(&f).unwrap();
        read += 1;
        no_raw_controls(&f.display().to_string(), &text);
        // Outside code fences, no line a CI name opened.
        for (i, part) in text.split("```").enumerate() {
            if i % 2 == 0 {
                assert!(!part.lines().any(|l| l.starts_with("# Heading")), "{}:\n{text}", f.display());
            }
        }
        for row in text.lines().filter(|l| l.starts_with('|') && l.contains("ci-evil")) {
            assert!(row.ends_with('|') && row.contains("`ci-evil # Heading \\| x\\0y\\u{1b}[31mred`"), "{row}");
        }
    }
    assert!(read >= 2, "an investigation brief and the cross-check brief");
}

/// Job folders `fetch --all` cannot read — a name that is not UTF-8, a symlink out of
/// the mirror — are failures of the fetch that name them, not jobs left out silently.
#[cfg(unix)]
#[test]
fn refused_job_folders_are_named() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    let good = mirror.join("logs/ci-good/1");
    write(&good.join("started.json"), r#"{"timestamp": 1764000000}"#);
    write(&good.join("finished.json"), r#"{"timestamp": 1764000600, "result": "SUCCESS", "passed": true}"#);
    let odd = mirror.join("logs").join(std::ffi::OsStr::from_bytes(b"ci-\xffodd")).join("2");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::copy(good.join("started.json"), odd.join("started.json")).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("3")).unwrap();
    std::os::unix::fs::symlink(&outside, mirror.join("logs/ci-away")).unwrap();
    let db = dir.path().join("s.db");
    let o = run(&db, &["fetch", "--all", "--mirror", mirror.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("2 could not be fetched"), "{out}");
    assert!(out.contains("refused object name \"logs/ci-\u{fffd}odd\": not UTF-8"), "{out}");
    assert!(out.contains("refused object name \"logs/ci-away\": a symlink leading out of the mirror"), "{out}");
    assert!(out.contains("1 build(s) found, 1 stored"), "the readable job is fetched: {out}");
}

#[cfg(unix)]
#[test]
fn a_non_utf8_argument_is_named() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let bad = std::ffi::OsStr::from_bytes(b"snap\xff.json");
    let o = common::bin()
        .arg("--db")
        .arg(dir.path().join("s.db"))
        .args(["import", "--dataset", "failures"])
        .arg(bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("snap") && e.contains("xFF") || e.contains("snap\\xff"), "{e}");
}

#[path = "common/github.rs"]
mod github;

/// `gh sweep` against a GitHub-shaped server whose 200 answers are not the issues
/// asked for: each lookup fails naming the URL and what was wrong, nothing is cached
/// (an offline rerun has no answer; an online rerun asks again without `If-None-Match`),
/// and the command exits 1 because every lookup failed.
#[test]
fn gh_sweep_neither_trusts_nor_caches_a_malformed_answer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let api = github::FakeGithub::start();
    let refs: Vec<String> = github::GARBLED.iter().map(|(n, _)| format!("hostile/garbled#{n}")).collect();
    let sweep = |extra: &[&str]| {
        let mut args = vec!["gh", "sweep", "--api", api.base.as_str(), "--no-timelines"];
        args.extend(refs.iter().map(String::as_str));
        args.extend(extra);
        let o = common::bin()
            .env_remove("GITHUB_TOKEN")
            .env_remove("GH_TOKEN")
            .arg("--db")
            .arg(&db)
            .arg("--quiet")
            .args(&args)
            .output()
            .expect("runs");
        (o.status.code(), format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o)))
    };

    let (code, out) = sweep(&[]);
    assert_eq!(code, Some(1), "every lookup failed, so the sweep fails:\n{out}");
    assert!(out.contains("every lookup failed (3 ref(s) not checked)"), "{out}");
    for (n, why) in [(1, "not JSON"), (2, "has no \"number\""), (3, "expected \"number\": 3, found 999")] {
        let url = format!("{}/repos/hostile/garbled/issues/{n}", api.base);
        let line = out.lines().find(|l| l.contains(&format!("garbled#{n}"))).unwrap_or_default();
        assert!(line.contains(&format!("{url}: malformed answer (not cached)")), "#{n} does not name its URL:\n{out}");
        assert!(line.contains(why), "#{n} does not say what was wrong ({why}):\n{out}");
    }

    // Nothing was cached: offline, there is no answer for any of them.
    let (code, out) = sweep(&["--offline"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out.matches("offline: no cached answer").count(), 3, "a malformed answer was cached:\n{out}");

    // Online again: asked again, unconditionally (no ETag was kept to revalidate).
    let before = api.got().len();
    let (code, _) = sweep(&[]);
    assert_eq!(code, Some(1));
    let again: Vec<github::Got> = api.got().into_iter().skip(before).collect();
    for (n, _) in github::GARBLED {
        let path = format!("/repos/hostile/garbled/issues/{n}");
        assert!(again.iter().any(|g| g.path == path), "#{n} was not asked again: {again:?}");
    }
    assert!(again.iter().all(|g| g.if_none_match.is_none()), "{again:?}");
}

/// `gh sweep --timeout N` against a GitHub that answers 503 with `Retry-After: 119`:
/// the wait is longer than N, so the lookup fails at once naming it (one request, no
/// retry waited out), and the sweep exits 1 because every lookup failed.
#[test]
fn gh_sweep_timeout_bounds_a_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let api = github::FakeGithub::start();
    let o = common::bin()
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .arg("--db")
        .arg(&db)
        .arg("--quiet")
        .args(["gh", "sweep", "--api", api.base.as_str(), "--no-timelines", "--timeout", "5", "hostile/busy#7"])
        .output()
        .expect("runs");
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("119"), "the wait asked for is named: {out}");
    let asked = api.got().iter().filter(|g| g.path.starts_with("/repos/hostile/busy/")).count();
    assert_eq!(asked, 1, "no retry was waited out: {:?}", api.got());
}
