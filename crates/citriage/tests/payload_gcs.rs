//! The payload jobs' evidence read from GCS over HTTP (`payload --url … --gcs URL`,
//! a release stream's `gcs` in `watch`), against real servers on 127.0.0.1: the
//! release-controller-shaped server of the payload tests, and a GCS-shaped server
//! (JSON listing with `delimiter` and small pages, objects, build logs and JUnit sent
//! gzip-encoded) over the same world's `gcs/` folder. The same world analysed with
//! the evidence of the local mirror and of GCS over HTTP gives the same analysis;
//! hostile object names in a listing or a run's URL are refused and recorded, never
//! requested.

mod common;
#[path = "../../citriage-ingest/tests/common/mod.rs"]
mod gcs_server;
#[path = "../../citriage-payload/tests/common/mod.rs"]
mod payload_world;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use citriage_app::gcs_evidence::GcsEvidence;
use citriage_payload::evidence::EvidenceProvider;
use citriage_payload::{analyze, AnalyzeOptions, GcsMirror, HttpConfig, HttpSource, PayloadAnalysis, PayloadSource};
use citriage_sources::HttpOptions;
use gcs_server::{pct_decode, respond, Server};

/// Extra names a listing gives, by the prefix listed: (objects, prefixes).
type Planted = Arc<dyn Fn(&str) -> (Vec<String>, Vec<String>) + Send + Sync>;

struct Gcs {
    server: Server,
    /// Every request's URL, in order.
    urls: Arc<Mutex<Vec<String>>>,
}

/// A GCS-shaped server over `root` (a folder of buckets): `/storage/v1/b/B/o?prefix=P&delimiter=%2F`
/// lists P's direct children two to a page, `/B/PATH` serves an object (JUnit and
/// build logs gzip-encoded). A request for a name with a `..` or backslash is answered
/// 404 (and stays in `urls` for the test to see).
fn gcs(root: PathBuf, planted: Option<Planted>) -> Gcs {
    let urls = Arc::new(Mutex::new(Vec::new()));
    let seen = urls.clone();
    let server = gcs_server::serve(move |url| {
        seen.lock().unwrap().push(url.to_string());
        answer(&root, url, planted.as_ref())
    });
    Gcs { server, urls }
}

fn answer(root: &Path, url: &str, planted: Option<&Planted>) -> gcs_server::Response {
    const PAGE: usize = 2;
    if let Some(rest) = url.strip_prefix("/storage/v1/b/") {
        let Some((bucket, q)) = rest.split_once("/o?") else { return respond(400, b"bad listing".to_vec()) };
        let params: BTreeMap<String, String> =
            q.split('&').filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), pct_decode(v)))).collect();
        assert_eq!(params.get("delimiter").map(String::as_str), Some("/"), "{url}");
        let prefix = params.get("prefix").cloned().unwrap_or_default();
        let start: usize = params.get("pageToken").and_then(|t| t.parse().ok()).unwrap_or(0);
        let dir = prefix.split('/').filter(|s| !s.is_empty()).fold(root.join(bucket), |a, s| a.join(s));
        // (name, is a prefix, size)
        let mut entries: Vec<(String, bool, u64)> = match std::fs::read_dir(&dir) {
            Ok(rd) => rd
                .flatten()
                .map(|e| {
                    let md = e.metadata().unwrap();
                    let name = format!("{prefix}{}", e.file_name().to_string_lossy());
                    if md.is_dir() {
                        (format!("{name}/"), true, 0)
                    } else {
                        (name, false, md.len())
                    }
                })
                .collect(),
            Err(_) => vec![],
        };
        if let Some(p) = planted {
            let (objects, prefixes) = p(&prefix);
            entries.extend(objects.into_iter().map(|o| (o, false, 10)));
            entries.extend(prefixes.into_iter().map(|o| (o, true, 0)));
        }
        entries.sort();
        let chunk: Vec<_> = entries.iter().skip(start).take(PAGE).collect();
        let items: Vec<serde_json::Value> =
            chunk.iter().filter(|e| !e.1).map(|e| serde_json::json!({"name": e.0, "size": e.2.to_string()})).collect();
        let prefixes: Vec<&str> = chunk.iter().filter(|e| e.1).map(|e| e.0.as_str()).collect();
        let mut body = serde_json::json!({"kind": "storage#objects", "items": items, "prefixes": prefixes});
        if start + PAGE < entries.len() {
            body["nextPageToken"] = serde_json::Value::from((start + PAGE).to_string());
        }
        return respond(200, serde_json::to_vec(&body).unwrap());
    }
    let path = pct_decode(url.trim_start_matches('/'));
    if path.split('/').any(|s| s == ".." || s == ".") || path.contains('\\') {
        return respond(404, b"Not Found".to_vec());
    }
    match std::fs::read(path.split('/').fold(root.to_path_buf(), |a, s| a.join(s))) {
        Ok(data) if path.ends_with(".xml") || path.ends_with("build-log.txt") => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&data).unwrap();
            let mut r = respond(200, e.finish().unwrap());
            r.add_header("Content-Encoding: gzip".parse::<tiny_http::Header>().unwrap());
            r
        }
        Ok(data) => respond(200, data),
        Err(_) => respond(404, b"Not Found".to_vec()),
    }
}

fn fast() -> HttpConfig {
    HttpConfig {
        timeout: Duration::from_secs(10),
        attempts: 3,
        backoff: Duration::from_millis(10),
        max_retry_after: Duration::from_secs(5),
        max_bytes: 1 << 24,
    }
}

fn gcs_evidence(base: &str) -> GcsEvidence {
    GcsEvidence::new(base, HttpOptions { timeout: Duration::from_secs(10), ..HttpOptions::default() }).unwrap()
}

/// The analysis as recorded (JSON), with the GCS base of cited URLs written as the mirror's.
fn recorded(a: &PayloadAnalysis, gcs_base: Option<&str>) -> serde_json::Value {
    let mut text = citriage_payload::render_json(a);
    if let Some(b) = gcs_base {
        text = text.replace(b, "https://storage.googleapis.com");
    }
    serde_json::from_str(&text).unwrap()
}

/// A part of an analysis as JSON, with the GCS base of cited URLs written as the mirror's.
fn normalized<T: serde::Serialize>(v: &T, gcs_base: &str) -> serde_json::Value {
    let mut text = serde_json::to_string(v).unwrap();
    if !gcs_base.is_empty() {
        text = text.replace(gcs_base, "https://storage.googleapis.com");
    }
    serde_json::from_str(&text).unwrap()
}

/// Evidence citations of an analysis: (job, file, line) of its tests and failure modes' lines.
fn citations(a: &PayloadAnalysis) -> Vec<(String, String, Option<u32>)> {
    let mut out = Vec::new();
    for j in &a.failed_jobs {
        out.extend(j.tests.iter().map(|t| (j.name.clone(), t.at.file.clone(), t.at.line)));
        for m in &j.modes {
            out.extend(m.lines.iter().map(|l| (j.name.clone(), l.at.file.clone(), l.at.line)));
        }
    }
    out
}

/// Every payload of a synthetic world's stream, analysed online from the
/// release-controller-shaped server, once with the local mirror's evidence and once
/// with GCS's over HTTP: the same analysis (verdict, suspects, root causes, failed jobs
/// with their evidence citations, data gaps), the cited URLs differing only by their
/// base.
#[test]
fn a_world_analysed_with_evidence_from_gcs_equals_the_mirror() {
    let dir = tempfile::tempdir().unwrap();
    let params = citriage_synth::SynthParams::preset("tiny").expect("tiny preset");
    citriage_synth::generate(&params, dir.path(), &mut |_| {}).expect("generate the world");
    let world = dir.path().to_path_buf();
    let rc = payload_world::server::serve(world.clone(), 0, "0");
    let store = gcs(world.join("gcs"), None);
    let src = HttpSource::new(&rc.base, fast()).unwrap().with_github_diffs(&format!("{}/github", rc.base)).unwrap();
    let mirror = GcsMirror::new(world.join("gcs"));
    let over_http = gcs_evidence(&store.server.base);
    let mut compared = 0;
    let mut cited = (0usize, 0usize);
    let mut verdicts = std::collections::BTreeSet::new();
    for stream in std::fs::read_dir(world.join("release-controller/api/v1/releasestream")).unwrap().flatten() {
        let stream = stream.file_name().to_string_lossy().into_owned();
        for tag in src.tags(&stream).unwrap().tags {
            let mut opts = AnalyzeOptions::new(&tag.name);
            opts.ci_config_changes = Some(world.join("openshift/ci-config-changes.json"));
            let local = analyze(&src, &mirror, &opts).unwrap();
            let remote = analyze(&src, &over_http, &opts).unwrap();
            assert_eq!(remote.decision, local.decision, "{}: verdicts differ", tag.name);
            let base = store.server.base.as_str();
            assert_eq!(normalized(&remote.suspects, base), normalized(&local.suspects, ""), "{}", tag.name);
            assert_eq!(normalized(&remote.root_causes, base), normalized(&local.root_causes, ""), "{}", tag.name);
            assert_eq!(citations(&remote), citations(&local), "{}", tag.name);
            assert_eq!(recorded(&remote, Some(&store.server.base)), recorded(&local, None), "{}", tag.name);
            for (_, file, line) in citations(&local) {
                if file.ends_with(".xml") && line.is_some() {
                    cited.0 += 1;
                } else if file == "build-log.txt" && line.is_some() {
                    cited.1 += 1;
                }
            }
            verdicts.insert(local.decision.verdict.as_str().to_string());
            compared += 1;
        }
    }
    let urls = store.urls.lock().unwrap().clone();
    let listings = urls.iter().filter(|u| u.starts_with("/storage/v1/")).count();
    let objects = urls.len() - listings;
    eprintln!(
        "{compared} payloads compared, verdicts {verdicts:?}; citations: {} JUnit, {} build-log lines; GCS requests: {listings} listing pages, {objects} objects",
        cited.0, cited.1
    );
    assert!(compared >= 5, "only {compared} payloads");
    assert!(verdicts.len() >= 2, "{verdicts:?}");
    assert!(cited.0 > 0 && cited.1 > 0, "the evidence cites JUnit and log lines: {cited:?}");
    assert!(urls.iter().any(|u| u.contains("pageToken=")), "listings were paged");
    assert!(urls.iter().any(|u| u.ends_with("build-log.txt")) && urls.iter().any(|u| u.ends_with(".xml")));
}

/// Hostile names: a listing that gives names with `..`, a backslash, an absolute
/// path, or outside the folder listed; a run URL whose path is unsafe. None is
/// requested; each is a data gap of the analysis naming it; the rest of the evidence
/// (and so the verdict) is what the mirror gives.
#[test]
fn hostile_object_names_are_refused_and_recorded_not_followed() {
    use payload_world::{BUCKET, T4};
    let dir = tempfile::tempdir().unwrap();
    let world = payload_world::build_world(dir.path());
    let rc = payload_world::server::serve(world.clone(), 0, "0");
    // Planted in the listing of every run folder (logs/JOB/ID/) and its artifacts/.
    let planted: Planted = Arc::new(|prefix: &str| {
        let depth = prefix.split('/').filter(|s| !s.is_empty()).count();
        if !prefix.starts_with("logs/") || !(depth == 3 || prefix.ends_with("/artifacts/")) {
            return (vec![], vec![]);
        }
        (
            vec![
                format!("{prefix}../../../../etc/passwd"),
                format!("{prefix}junit\\..\\..\\stolen.xml"),
                "/etc/junit_abs.xml".to_string(),
                "logs/elsewhere/1/junit_outside.xml".to_string(),
            ],
            vec![format!("{prefix}artifacts/../../../escape/")],
        )
    });
    let store = gcs(world.join("gcs"), Some(planted));
    let src = HttpSource::new(&rc.base, fast()).unwrap().with_github_diffs(&format!("{}/github", rc.base)).unwrap();
    let mut opts = AnalyzeOptions::new(T4);
    opts.ci_config_changes = Some(world.join("ci-config/changes.json"));
    let local = analyze(&src, &GcsMirror::new(world.join("gcs")), &opts).unwrap();
    let remote = analyze(&src, &gcs_evidence(&store.server.base), &opts).unwrap();

    let urls = store.urls.lock().unwrap().clone();
    for u in &urls {
        let d = pct_decode(u);
        assert!(
            !d.contains("passwd")
                && !d.contains("stolen")
                && !d.contains("junit_abs")
                && !d.contains("outside")
                && !d.contains("escape")
                && !d.contains(".."),
            "a refused name was requested: {u}"
        );
    }
    let refused: Vec<&String> = remote.data_gaps.iter().filter(|g| g.contains("refused object name")).collect();
    for name in ["etc/passwd", "stolen.xml", "/etc/junit_abs.xml", "logs/elsewhere/1/junit_outside.xml", "escape/"] {
        assert!(refused.iter().any(|g| g.contains(name)), "{name} not recorded: {:?}", remote.data_gaps);
    }
    assert!(refused.iter().all(|g| g.contains(&store.server.base)), "each names where it was listed: {refused:?}");
    assert!(!local.data_gaps.iter().any(|g| g.contains("refused")), "{:?}", local.data_gaps);
    // What was not refused is the mirror's evidence.
    assert_eq!(remote.decision, local.decision);
    let base = store.server.base.as_str();
    assert_eq!(normalized(&remote.suspects, base), normalized(&local.suspects, ""));
    assert_eq!(normalized(&remote.root_causes, base), normalized(&local.root_causes, ""));
    assert_eq!(normalized(&remote.failed_jobs, base), normalized(&local.failed_jobs, ""));
    assert_eq!(citations(&remote), citations(&local));
    assert!(!citations(&local).is_empty());

    // A run URL (from the release controller) whose path is unsafe: refused before
    // any request, naming the URL and the name.
    let before = store.urls.lock().unwrap().len();
    let ev = gcs_evidence(&store.server.base);
    for (url, why) in [
        (format!("https://prow.ci.openshift.org/view/gs/{BUCKET}/logs/job\\x/1"), "backslash"),
        (format!("https://prow.ci.openshift.org/view/gs/{BUCKET}/logs//x/1"), "empty path segment"),
        (format!("https://prow.ci.openshift.org/view/gs/{BUCKET}/logs/j\u{7}/1"), "control character"),
    ] {
        let e = ev.run_evidence(&url).unwrap_err().to_string();
        assert!(e.contains(&url) && e.contains("refused object name") && e.contains(why), "{e}");
    }
    // `..` never even maps to a bucket path.
    let dotdot = format!("https://prow.ci.openshift.org/view/gs/{BUCKET}/logs/../../x/1");
    assert!(ev.run_evidence(&dotdot).unwrap().is_none());
    assert_eq!(store.urls.lock().unwrap().len(), before, "no request for a refused run");
}

fn cmd(db: &Path, args: &[&str]) -> std::process::Command {
    let mut c = common::bin();
    c.arg("--db").arg(db).arg("--quiet").args(args);
    c
}

fn ok(c: &mut std::process::Command) -> String {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{:?}: {} {}", c, String::from_utf8_lossy(&o.stdout), common::stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A `watch` turn over a release stream with `gcs` configured records the payloads
/// with their evidence read over HTTP: the stored analyses equal those of a turn
/// with the local mirror (cited URLs aside from their base), and cite JUnit files
/// and log lines. `payload TAG --url … --gcs URL` records the same; `--gcs` with
/// `--mirror` or `--from` is refused (exit 2), and `config check` names a bad `gcs`.
#[test]
fn watch_and_payload_read_evidence_from_gcs() {
    use payload_world::{STREAM, T3, T4, T5};
    let tmp = tempfile::tempdir().unwrap();
    let world = payload_world::build_world(&tmp.path().join("rc"));
    let rc = payload_world::server::serve(world.clone(), 0, "0");
    let store = gcs(world.join("gcs"), None);
    let config = |evidence: &str| {
        format!(
            "[schedule]\ninterval = \"1h\"\n\n[[sources.release_streams]]\nname = \"ocp\"\ncontroller = {:?}\nstream = {STREAM:?}\nmax_payloads = 3\n{evidence}\n",
            rc.base
        )
    };
    let by_gcs = tmp.path().join("gcs.toml");
    std::fs::write(&by_gcs, config(&format!("gcs = {:?}", store.server.base))).unwrap();
    let by_mirror = tmp.path().join("mirror.toml");
    std::fs::write(&by_mirror, config(&format!("mirror = {:?}", world.join("gcs").display().to_string()))).unwrap();
    let (db_gcs, db_mirror) = (tmp.path().join("gcs.db"), tmp.path().join("mirror.db"));
    for (db, cfg) in [(&db_gcs, &by_gcs), (&db_mirror, &by_mirror)] {
        let out = ok(cmd(db, &["watch", "--once", "--worker", "w1", "--config"]).arg(cfg));
        assert!(out.contains("ocp: fetched (3 payload(s) analysed, 0 unchanged)"), "{out}");
    }
    assert!(store.urls.lock().unwrap().iter().any(|u| u.ends_with(".xml")), "the watch read JUnit over HTTP");
    let stored = |db: &Path, tag: &str| -> serde_json::Value {
        let body = ok(&mut cmd(db, &["reports", "show", "payload", tag, "--media-type", "application/json"]));
        serde_json::from_str(&body.replace(&store.server.base, "https://storage.googleapis.com")).unwrap()
    };
    for tag in [T3, T4, T5] {
        let (g, m) = (stored(&db_gcs, tag), stored(&db_mirror, tag));
        assert_eq!(g, m, "{tag}: the analyses recorded with GCS and with the mirror differ");
    }
    let t4 = stored(&db_gcs, T4);
    let text = t4.to_string();
    assert!(text.contains("junit") && text.contains("build-log.txt"), "the evidence is present: {text}");
    assert!(t4["failed_jobs"].as_array().unwrap().iter().any(|j| !j["tests"].as_array().unwrap().is_empty()));

    // `payload --url --gcs` records the same analysis.
    let one = tmp.path().join("one.db");
    ok(&mut cmd(&one, &["payload", T4, "--url", &rc.base, "--gcs", &store.server.base, "--stream", STREAM]));
    let p = stored(&one, T4);
    assert_eq!(p["decision"], t4["decision"]);
    assert_eq!(p["failed_jobs"], t4["failed_jobs"]);
    // Refused combinations and a bad URL: exit 2, naming the option or key.
    let o = cmd(&one, &["payload", T4, "--url", &rc.base, "--gcs", &store.server.base, "--mirror"])
        .arg(world.join("gcs"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    let o = cmd(&one, &["payload", T4, "--from"]).arg(&world).args(["--gcs", &store.server.base]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("--gcs"), "{}", common::stderr(&o));
    let o = cmd(&one, &["payload", T4, "--url", &rc.base, "--gcs", "ftp://x"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("ftp://x"), "{}", common::stderr(&o));
    for (evidence, key) in [
        ("gcs = \"storage.googleapis.com\"".to_string(), "sources.release_streams[0].gcs"),
        (format!("gcs = {:?}\nmirror = \"/m\"", store.server.base), "sources.release_streams[0]"),
    ] {
        let bad = tmp.path().join("bad.toml");
        std::fs::write(&bad, config(&evidence)).unwrap();
        let o = cmd(&one, &["config", "check"]).arg(&bad).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{evidence}");
        assert!(common::stderr(&o).contains(key), "{key}: {}", common::stderr(&o));
    }
}

/// A bucket that answers 503 (after the retries) is a transient failure the provider
/// remembers until taken (so `watch` does not record an analysis that lacks evidence
/// only for now); a refused run URL is bad input, not transient.
#[test]
fn transient_failures_are_remembered_until_taken() {
    let failing = gcs_server::serve(|_| respond(503, b"try later".to_vec()));
    let opts = HttpOptions {
        timeout: Duration::from_secs(5),
        attempts: 2,
        backoff: Duration::from_millis(10),
        ..HttpOptions::default()
    };
    let ev = GcsEvidence::new(&failing.base, opts).unwrap();
    assert_eq!(ev.take_transient(), None);
    let bad = "https://prow.ci.openshift.org/view/gs/b/logs/j\\x/1";
    assert!(ev.run_evidence(bad).is_err());
    assert_eq!(ev.take_transient(), None, "a refused name is not transient");
    let url = "https://prow.ci.openshift.org/view/gs/b/logs/j/1";
    let e = ev.run_evidence(url).unwrap_err();
    assert!(!e.is_bad_input(), "{e}");
    let t = ev.take_transient().expect("remembered");
    assert!(t.contains("503") && t.contains(&failing.base), "{t}");
    assert_eq!(ev.take_transient(), None, "taken once");
    assert_eq!(failing.hits.load(std::sync::atomic::Ordering::SeqCst), 2, "one listing, retried once");
}

/// JUnit objects whose transfer is cut off (the server promises the whole file and
/// closes after half): what was parsed of them is dropped, never cited as a partial
/// JUnit; the run's evidence is a transient failure (a data gap of the analysis,
/// remembered for `watch`, which then does not record the analysis).
#[test]
fn a_cut_junit_transfer_is_transient_not_partial_evidence() {
    use payload_world::T4;
    let dir = tempfile::tempdir().unwrap();
    let world = payload_world::build_world(dir.path());
    let rc = payload_world::server::serve(world.clone(), 0, "0");
    let root = world.join("gcs");
    let cut = gcs_server::serve(move |url| {
        let path = pct_decode(url.trim_start_matches('/'));
        if !path.ends_with(".xml") {
            return answer(&root, url, None);
        }
        let data = std::fs::read(path.split('/').fold(root.clone(), |a, s| a.join(s))).unwrap_or_default();
        let half = data[..data.len() / 2].to_vec();
        tiny_http::Response::new(
            200.into(),
            vec!["Connection: close".parse().unwrap()],
            Box::new(std::io::Cursor::new(half)),
            Some(data.len()),
            None,
        )
    });
    let src = HttpSource::new(&rc.base, fast()).unwrap().with_github_diffs(&format!("{}/github", rc.base)).unwrap();
    let opts = HttpOptions {
        timeout: Duration::from_secs(1),
        attempts: 2,
        backoff: Duration::from_millis(10),
        ..HttpOptions::default()
    };
    let ev = GcsEvidence::new(&cut.base, opts).unwrap();
    let mut aopts = AnalyzeOptions::new(T4);
    aopts.ci_config_changes = Some(world.join("ci-config/changes.json"));
    let a = analyze(&src, &ev, &aopts).unwrap();
    assert!(citations(&a).iter().all(|(_, file, _)| !file.ends_with(".xml")), "{:?}", citations(&a));
    assert!(
        a.data_gaps.iter().any(|g| g.starts_with("evidence unreadable") && g.contains(".xml")),
        "{:?}",
        a.data_gaps
    );
    let t = ev.take_transient().expect("a cut transfer is transient");
    assert!(t.contains(&cut.base), "{t}");
}
