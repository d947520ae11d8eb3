//! Running citriage for a team: the configuration file (`config check`), continuous
//! ingestion (`watch`) and the operable dashboard (`serve`'s health, readiness,
//! metrics and status page, its listening and write rules).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
#[path = "common/github.rs"]
mod github;
#[path = "../../citriage-payload/tests/common/mod.rs"]
mod payload_world;
#[path = "common/stores.rs"]
mod stores;

use common::{bin, run, stderr};
use stores::Stores;

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
    assert_eq!(v["sources"]["github"][2]["name"], "origin");
    assert_eq!(v["sources"]["github"][2]["max_refs"], 100);
    assert_eq!(v["sources"]["release_streams"][0]["max_payloads"], 5);
    assert_eq!(v["sources"]["testgrid"][0]["url"], "https://testgrid.k8s.io/sig-release-master-blocking");
    assert_eq!(v["sources"]["release_streams"][0]["gcs"], "https://storage.googleapis.com");
    assert_eq!(v["schedule"]["interval"], "15m");
    assert_eq!(v["retention"]["log_days"], 14);
    assert_eq!(v["owners"]["sig-node"][0], "^ci-kubernetes-node-");
    assert_eq!(v["alerts"]["routes"]["sig-node"][1], "node-mail");
    assert_eq!(v["alerts"]["destinations"][1]["url"], "https://(redacted)", "webhook URLs are not printed");
    assert_eq!(v["alerts"]["smtp"]["port"], 587);
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
        ("[sources]\ngithub = [\"o/r\", { repo = \"o/r2\", api = \"ftp://x\" }]\n", "sources.github[1].api"),
        ("[sources]\ngithub = [{ repo = \"o/r\", token = \"t\" }]\n", "token"),
        ("[sources]\ngithub = [\"o/r\", \"o/r\"]\n", "sources.github[1]"),
        (
            "[[sources.release_streams]]\nname = \"r\"\ncontroller = \"https://rc\"\nstream = \"s\"\nmax_payloads = 0\n",
            "sources.release_streams[0].max_payloads",
        ),
        ("[retention]\nwindow_days = 7\nlog_days = 9\n", "retention.log_days"),
        ("[[sources.testgrid]]\nname = \"t\"\nurl = \"https://tg/a/../b\"\n", "sources.testgrid[0].url"),
        ("[[sources.testgrid]]\nname = \"t\"\nurl = \"https://tg/d\"\ntabs = [\"x\"]\n", "tabs"),
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
}

fn cmd(db: &str, args: &[&str]) -> Command {
    let mut c = bin();
    c.args(["--db", db, "--quiet"]).args(args);
    c
}

fn ok(c: &mut Command) -> String {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{:?}: {}", c, stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Each table's digest but the workers' own bookkeeping (ingest_sources).
fn figures(db: &str) -> BTreeMap<String, String> {
    let v: serde_json::Value =
        serde_json::from_str(&ok(&mut cmd(db, &["--format", "json", "store", "info", "--digest"]))).unwrap();
    let mut t: BTreeMap<String, String> = serde_json::from_value(v["table_digests"].clone()).unwrap();
    t.remove("ingest_sources");
    t
}

fn count(db: &str, table: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(&ok(&mut cmd(db, &["--format", "json", "store", "info"]))).unwrap();
    v["tables"].as_array().unwrap().iter().find(|t| t["table"] == table).and_then(|t| t["rows"].as_u64()).unwrap_or(0)
}

/// Builds stored so far in a store being written (0 while it does not exist yet).
fn stored_builds(db: &str, engine: &str) -> u64 {
    if engine == "sqlite" && !Path::new(db).exists() {
        return 0;
    }
    let o = cmd(db, &["--format", "json", "store", "info"]).output().unwrap();
    serde_json::from_slice::<serde_json::Value>(&o.stdout)
        .ok()
        .and_then(|v| {
            v["tables"]
                .as_array()
                .and_then(|a| a.iter().find(|t| t["table"] == "builds").and_then(|t| t["rows"].as_u64()))
        })
        .unwrap_or(0)
}

/// The latest clustering run's clusters as sets of failures (build path, result seq),
/// with their daily counts, whatever their ids.
fn partition(db: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut st =
        c.prepare("SELECT m.stable_id, b.path, m.seq FROM cluster_members m JOIN builds b ON b.id = m.build").unwrap();
    for r in st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))).unwrap() {
        let (id, path, seq) = r.unwrap();
        members.entry(id).or_default().push(format!("{path}#{seq}"));
    }
    let mut daily: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut st = c.prepare("SELECT stable_id, day, job, test, failures FROM cluster_daily").unwrap();
    for r in st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })
        .unwrap()
    {
        let (id, day, job, test, n) = r.unwrap();
        daily.entry(id).or_default().push(format!("{day}|{job}|{test}|{n}"));
    }
    let mut out: Vec<_> = members
        .into_iter()
        .map(|(id, mut m)| {
            m.sort();
            let mut d = daily.remove(&id).unwrap_or_default();
            d.sort();
            (m, d)
        })
        .collect();
    out.sort();
    out
}

/// A synthetic world, and the day each of its builds started on.
struct World {
    _dir: tempfile::TempDir,
    mirror: PathBuf,
    /// Build folder (relative to the mirror) → its start (Unix seconds).
    builds: BTreeMap<PathBuf, i64>,
}

fn world(jobs: usize, builds_per_job: usize) -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = jobs;
    p.builds_per_job = builds_per_job;
    p.payloads = 0;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    let mirror = root.join("gcs/kubernetes-ci-logs");
    let mut builds = BTreeMap::new();
    let mut stack = vec![mirror.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                let started = p.join("started.json");
                if started.is_file() {
                    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&started).unwrap()).unwrap();
                    builds.insert(p.strip_prefix(&mirror).unwrap().to_path_buf(), v["timestamp"].as_i64().unwrap());
                } else {
                    stack.push(p);
                }
            }
        }
    }
    assert!(builds.len() > 100, "{} builds", builds.len());
    World { _dir: dir, mirror, builds }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let t = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

impl World {
    /// Grows `dst` to the world as it was at `until`: the builds started by then and
    /// the presubmit pointers to them (added, never removed).
    fn grow(&self, dst: &Path, until: i64) {
        for (rel, &t) in &self.builds {
            if t <= until && !dst.join(rel).exists() {
                copy_dir(&self.mirror.join(rel), &dst.join(rel));
            }
        }
        let dir = self.mirror.join("pr-logs/directory");
        if !dir.is_dir() {
            return;
        }
        for job in std::fs::read_dir(&dir).unwrap() {
            let job = job.unwrap().path();
            for f in std::fs::read_dir(&job).unwrap() {
                let f = f.unwrap().path();
                let text = std::fs::read_to_string(&f).unwrap();
                let Some(target) = text.trim().strip_prefix("gs://kubernetes-ci-logs/") else { continue };
                if self.builds.get(Path::new(target)).is_some_and(|&t| t <= until) {
                    let to = dst.join(f.strip_prefix(&self.mirror).unwrap());
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    std::fs::copy(&f, &to).unwrap();
                }
            }
        }
    }

    fn days(&self) -> (i64, i64) {
        let first = self.builds.values().min().unwrap() / 86_400;
        let last = self.builds.values().max().unwrap() / 86_400;
        (first, last)
    }
}

fn config(dir: &Path, mirror: &Path) -> PathBuf {
    let f = dir.join("citriage.toml");
    std::fs::write(
        &f,
        format!(
            "[schedule]\ninterval = \"1h\"\n\n[retention]\nwindow_days = 3650\nlog_days = 3650\n\n[[sources.buckets]]\nname = \"k8s\"\nbucket = \"kubernetes-ci-logs\"\nmirror = {:?}\njob_regex = \".\"\nconcurrency = 2\n",
            mirror.display().to_string()
        ),
    )
    .unwrap();
    f
}

/// The one-shot ingest of a mirror: fetch everything, cluster once.
fn one_shot(db: &str, mirror: &Path, out: &Path) {
    ok(cmd(db, &["fetch", "--all", "--concurrency", "2", "--mirror"]).arg(mirror));
    ok(cmd(db, &["cluster", "--out"]).arg(out));
}

#[test]
fn a_world_grown_day_by_day_and_watched_equals_a_one_shot_ingest() {
    let w = world(20, 12);
    let stores = Stores::new("a_world_grown_day_by_day_and_watched_equals_a_one_shot_ingest");
    let (first, last) = w.days();
    assert!(last - first >= 3, "the world spans {} days", last - first);
    for engine in stores.engines() {
        let tmp = tempfile::tempdir().unwrap();
        let grown = tmp.path().join("mirror");
        std::fs::create_dir_all(&grown).unwrap();
        let cfg = config(tmp.path(), &grown);
        let watched = stores.fresh_on(engine, "watched");
        let mut before = 0;
        for (step, day) in [last - 2, last - 1, last].into_iter().enumerate() {
            w.grow(&grown, (day + 1) * 86_400 - 1);
            let out = ok(cmd(&watched, &["watch", "--once", "--worker", "w1", "--config"]).arg(&cfg));
            assert!(out.contains("k8s: fetched"), "{engine}: {out}");
            let once = stores.fresh_on(engine, &format!("once{step}"));
            one_shot(&once, &grown, &tmp.path().join(format!("clusters{step}")));
            let builds = count(&watched, "builds");
            assert!(builds > before, "{engine}: day {step} added no builds ({builds})");
            before = builds;
            // The dashboard's figures are equal: builds, results, excerpts, and the
            // latest clustering run's totals (cluster_runs) and its clusters as sets of
            // failures. Cluster ids may differ: the watched store keeps the ids its
            // earlier runs gave (ids follow their failures), a one-shot store gives
            // them fresh; the tables keyed by id are compared as partitions.
            let (mut a, mut b) = (figures(&watched), figures(&once));
            for by_id in ["clusters", "cluster_failure_ids", "cluster_members", "cluster_daily", "cluster_subpatterns"]
            {
                if step == 0 {
                    assert_eq!(a[by_id], b[by_id], "{engine}: {by_id}: the first run has no history");
                }
                a.remove(by_id);
                b.remove(by_id);
            }
            assert_eq!(a, b, "{engine}: after day {step}, the watched store differs");
            if engine == "sqlite" {
                assert_eq!(partition(&watched), partition(&once), "after day {step}, the clusters differ");
            }
        }
        // The status the dashboard shows.
        let v: serde_json::Value = serde_json::from_str(&ok(&mut cmd(
            &watched,
            &["--format", "json", "watch", "--once", "--worker", "w1", "--config", cfg.to_str().unwrap()],
        )))
        .unwrap();
        // Nothing new: only builds still running (stored incomplete) are read again.
        let (stored, skipped) =
            (v["sources"][0]["builds_stored"].as_u64().unwrap(), v["sources"][0]["builds_skipped"].as_u64().unwrap());
        assert_eq!(stored + skipped, before, "{engine}: {v}");
        assert!(stored * 20 < before, "{engine}: {v}");
        assert_eq!(count(&watched, "builds"), before, "{engine}: a rerun adds no build");
        assert!(v.get("reclustered").is_none(), "{engine}: no complete build arrived, no re-clustering: {v}");
    }
}

/// kill -9 of a worker mid-ingest, then a rerun of the same worker: nothing lost,
/// nothing twice. Two workers at once: the same store as one.
#[test]
#[cfg(unix)]
fn a_killed_worker_resumes_and_two_workers_equal_one() {
    let w = world(30, 20);
    let stores = Stores::new("a_killed_worker_resumes_and_two_workers_equal_one");
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &w.mirror);
    for engine in stores.engines() {
        let once = stores.fresh_on(engine, "once");
        one_shot(&once, &w.mirror, &tmp.path().join("clusters"));
        let want = figures(&once);
        let total = count(&once, "builds");

        let killed = stores.fresh_on(engine, "killed");
        let mut child = cmd(&killed, &["watch", "--once", "--worker", "w1", "--config"])
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t = std::time::Instant::now();
        let mut partial = 0;
        while t.elapsed().as_secs() < 120 {
            std::thread::sleep(std::time::Duration::from_millis(20));
            partial = stored_builds(&killed, engine);
            if partial >= 40 {
                break;
            }
        }
        let _ = child.kill();
        let status = child.wait().unwrap();
        eprintln!("{engine}: killed after {partial} of {total} builds ({status})");
        assert!(!status.success() || partial == total, "{engine}: killed before finishing");
        ok(cmd(&killed, &["watch", "--once", "--worker", "w1", "--config"]).arg(&cfg));
        assert_eq!(figures(&killed), want, "{engine}: the resumed store differs from the one-shot one");

        // SIGTERM: the worker finishes the build it is storing and exits cleanly; a
        // rerun completes the store.
        let termed = stores.fresh_on(engine, "termed");
        let child = cmd(&termed, &["watch", "--once", "--worker", "w1", "--config"])
            .arg(&cfg)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t = std::time::Instant::now();
        while t.elapsed().as_secs() < 120 && stored_builds(&termed, engine) < 40 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let sent = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let o = child.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{engine}: SIGTERM is a clean stop: {} {}", o.status, stderr(&o));
        let at_stop = count(&termed, "builds");
        eprintln!("{engine}: stopped by SIGTERM after {at_stop} of {total} builds: {out}");
        assert!(out.contains("k8s: stopped") || at_stop == total, "{engine}: {out}");
        ok(cmd(&termed, &["watch", "--once", "--worker", "w1", "--config"]).arg(&cfg));
        assert_eq!(figures(&termed), want, "{engine}: the store after SIGTERM and a rerun differs");

        let two = stores.fresh_on(engine, "two");
        let children: Vec<_> = ["w1", "w2"]
            .iter()
            .map(|name| {
                cmd(&two, &["watch", "--once", "--worker", name, "--config"])
                    .arg(&cfg)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut outs = Vec::new();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{engine}: {}", stderr(&o));
            outs.push(String::from_utf8_lossy(&o.stdout).into_owned());
        }
        eprintln!("{engine}: two workers: {outs:?}");
        assert_eq!(figures(&two), want, "{engine}: two workers differ from one");
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, String) {
    let mut r = r.unwrap();
    (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// The dashboard for a team: health, readiness, metrics and the status page show
/// each source's ingest (a failing one with its error and backoff); write actions
/// need the token; the Host check accepts the public name; listening beyond
/// loopback needs the explicit flag.
#[test]
fn serve_reports_health_metrics_and_source_status_and_guards_writes() {
    let w = world(10, 6);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("citriage.toml");
    std::fs::write(
        &cfg,
        format!(
            "[server]\npublic_name = \"triage.example.org\"\n\n[retention]\nwindow_days = 3650\nlog_days = 3650\n\n[[sources.buckets]]\nname = \"good\"\nbucket = \"kubernetes-ci-logs\"\nmirror = {:?}\njob_regex = \".\"\n\n[[sources.buckets]]\nname = \"broken\"\nbucket = \"kubernetes-ci-logs\"\nmirror = {:?}\njobs = [\"ci-x\"]\n",
            w.mirror.display().to_string(),
            tmp.path().join("no-such-mirror").display().to_string()
        ),
    )
    .unwrap();
    let db = tmp.path().join("store.db");
    let dbs = db.to_str().unwrap();
    let o = cmd(dbs, &["watch", "--once", "--config", cfg.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "a failing source fails the tick: {}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("good: fetched") && out.contains("broken: failed"), "{out}");

    let o = cmd(dbs, &["serve", "--addr", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--listen-public"), "{}", stderr(&o));

    let opts = citriage_web::ServeOptions {
        public_name: Some("triage.example.org".into()),
        writes: citriage_web::ops::WriteGate { token: Some("s3cret".into()), trusted_header: None },
        now: Some(now),
        prewarm: false,
        ..Default::default()
    };
    let server =
        citriage_web::Server::bind_with(db.clone(), "127.0.0.1:0".parse().unwrap(), opts).unwrap().spawn().unwrap();
    let base = format!("http://{}", server.addr);
    let a = agent();
    assert_eq!(answer(a.get(format!("{base}/healthz")).call()), (200, "ok\n".into()));
    let (s, body) = answer(a.get(format!("{base}/readyz")).call());
    assert_eq!(s, 200, "{body}");
    let (s, metrics) = answer(a.get(format!("{base}/metrics")).call());
    assert_eq!(s, 200);
    let builds = count(dbs, "builds");
    assert!(metrics.contains(&format!("citriage_builds {builds}\n")), "{metrics}");
    assert!(
        metrics.contains(&format!("citriage_source_builds_stored_total{{source=\"good\",kind=\"bucket\"}} {builds}\n")),
        "{metrics}"
    );
    assert!(metrics.contains("citriage_source_errors_total{source=\"broken\",kind=\"bucket\"} 1\n"), "{metrics}");
    assert!(metrics.contains("citriage_source_errors_total{source=\"good\",kind=\"bucket\"} 0\n"), "{metrics}");
    assert!(
        metrics.contains("citriage_source_ingest_lag_seconds{source=\"broken\",kind=\"bucket\"} +Inf\n"),
        "{metrics}"
    );
    assert!(metrics.contains("citriage_source_ingest_lag_seconds{source=\"good\",kind=\"bucket\"} "), "{metrics}");
    assert!(metrics.contains("citriage_http_request_duration_seconds_count{route=\"ops\"} "), "{metrics}");
    assert!(
        metrics.contains("citriage_source_newest_build_age_seconds{source=\"good\",kind=\"bucket\"} "),
        "{metrics}"
    );
    assert!(!metrics.contains("citriage_source_newest_build_age_seconds{source=\"broken\""), "{metrics}");
    let (s, page) = answer(a.get(format!("{base}/status")).call());
    assert_eq!(s, 200);
    assert!(page.contains("backing off after 1 failure(s)") && page.contains("not a folder"), "{page}");
    let (s, api) = answer(a.get(format!("{base}/api/v1/sources")).call());
    assert_eq!(s, 200);
    let v: serde_json::Value = serde_json::from_str(&api).unwrap();
    let broken = v.as_array().unwrap().iter().find(|s| s["source"] == "broken").unwrap();
    assert!(broken["next_due"].as_i64().unwrap() > broken["last_error_at"].as_i64().unwrap(), "backoff: {broken}");
    assert_eq!(broken["last_success"], serde_json::Value::Null);

    // Writes: refused without the token or with another, done with it.
    assert_eq!(answer(a.post(format!("{base}/admin/refresh")).send_empty()).0, 401);
    assert_eq!(
        answer(a.post(format!("{base}/admin/refresh")).header("Authorization", "Bearer nope").send_empty()).0,
        401
    );
    assert_eq!(
        answer(a.post(format!("{base}/admin/refresh")).header("Authorization", "Bearer s3cret").send_empty()).0,
        200
    );
    // The Host check: the public name passes, another name does not.
    assert_eq!(answer(a.get(format!("{base}/healthz")).header("Host", "triage.example.org").call()).0, 200);
    assert_eq!(answer(a.get(format!("{base}/healthz")).header("Host", "evil.example.com").call()).0, 403);
    drop(server);

    // Retention: a week counted back from the newest build.
    let cfg = tmp.path().join("week.toml");
    std::fs::write(
        &cfg,
        format!(
            "[retention]\nwindow_days = 7\nlog_days = 2\n\n[[sources.buckets]]\nname = \"good\"\nbucket = \"kubernetes-ci-logs\"\nmirror = {:?}\njob_regex = \".\"\n",
            w.mirror.display().to_string()
        ),
    )
    .unwrap();
    let week = tmp.path().join("week.db");
    let out = ok(&mut cmd(week.to_str().unwrap(), &["watch", "--once", "--config", cfg.to_str().unwrap()]));
    assert!(out.contains("retention removed"), "{out}");
    let c = rusqlite::Connection::open(&week).unwrap();
    let (oldest, newest): (i64, i64) =
        c.query_row("SELECT min(started), max(started) FROM builds", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert!(newest - oldest <= 7 * 86_400, "kept {} days", (newest - oldest) / 86_400);
    let old_excerpts: i64 = c
        .query_row(
            "SELECT count(*) FROM build_excerpts e JOIN builds b ON b.id = e.build WHERE b.started < ?1",
            [newest - 2 * 86_400],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(old_excerpts, 0);
    let kept = count(week.to_str().unwrap(), "builds");
    assert!(kept > 0 && kept < builds, "{kept} of {builds}");
}

/// `watch` follows a release stream (its newest payloads analysed from the release
/// controller with the mirror's artifacts, and recorded as `payload` records them) and
/// a GitHub repository (the pull requests the stored analyses name, read again through
/// the GitHub client and cached in the store), each on its schedule; unchanged payloads
/// are not analysed again and cached answers are revalidated. A release controller
/// that throttles beyond the allowed wait and a GitHub that refuses the token are
/// failed sources with their error and backoff on the status page and in /metrics,
/// and the token is never printed.
#[test]
fn watch_follows_release_streams_and_github_repositories() {
    use payload_world::{STREAM, T3, T4, T5};
    const TOKEN: &str = "ghp_watch_token_never_printed";
    let stores = Stores::new("watch_follows_release_streams_and_github_repositories");
    let tmp = tempfile::tempdir().unwrap();
    let world = payload_world::build_world(&tmp.path().join("rc"));
    let rc = payload_world::server::serve(world.clone(), 0, "1");
    let gh = github::FakeGithub::start();
    let config = |controller: &str| {
        format!(
            "[schedule]\ninterval = \"1h\"\nbackoff = \"2m\"\n\n[[sources.release_streams]]\nname = \"ocp\"\ncontroller = {controller:?}\nstream = {STREAM:?}\nmax_payloads = 3\nmirror = {:?}\n\n[[sources.github]]\nrepo = \"openshift/widget-operator\"\napi = {:?}\n",
            world.join("gcs").display().to_string(),
            gh.base
        )
    };
    let cfg = tmp.path().join("follow.toml");
    std::fs::write(&cfg, config(&rc.base)).unwrap();
    let watch = |db: &str, cfg: &Path| {
        let mut c = cmd(db, &["watch", "--once", "--worker", "w1", "--config"]);
        c.arg(cfg).env("GITHUB_TOKEN", TOKEN);
        c.output().unwrap()
    };
    for engine in stores.engines() {
        let db = stores.fresh_on(engine, "follow");
        let o = watch(&db, &cfg);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{engine}: {out} {}", stderr(&o));
        assert!(out.contains("ocp: fetched (3 payload(s) analysed, 0 unchanged)"), "{engine}: {out}");
        assert!(out.contains("openshift/widget-operator: fetched (1 reference(s) refreshed)"), "{engine}: {out}");
        // The analyses are the store's payload documents, the newest three.
        let v: serde_json::Value =
            serde_json::from_str(&ok(&mut cmd(&db, &["--format", "json", "reports", "--kind", "payload"]))).unwrap();
        let mut keys: Vec<String> = v["documents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["media_type"] == "application/json")
            .map(|d| d["key"].as_str().unwrap().to_string())
            .collect();
        keys.sort();
        assert_eq!(keys, [T3, T4, T5], "{engine}");
        let t4 = ok(&mut cmd(&db, &["reports", "show", "payload", T4]));
        assert!(t4.contains("widget-operator/pull/101"), "{engine}: the culprit is named: {t4}");
        // The PR the analyses name was read through the GitHub layer, with the token,
        // and is in the store's cache: an offline sweep answers it.
        let asked: Vec<_> =
            gh.got().into_iter().filter(|g| g.path == "/repos/openshift/widget-operator/issues/101").collect();
        assert!(!asked.is_empty(), "{engine}: {:?}", gh.got());
        assert_eq!(asked[0].authorization.as_deref(), Some(format!("Bearer {TOKEN}").as_str()));
        let sweep =
            ok(&mut cmd(&db, &["gh", "sweep", "--offline", "--api", &gh.base, "openshift/widget-operator#101"]));
        assert!(sweep.contains("✅"), "{engine}: merged, from the cache: {sweep}");

        // A second tick: the payloads are recorded in the phase the stream lists, so
        // none is analysed again; the cached answer is revalidated by its ETag. Its log
        // events (CITRIAGE_LOG wins over --quiet) are JSON lines on stderr; the results
        // stay on stdout.
        let before = gh.got().len();
        let o = cmd(&db, &["--log-format", "json", "watch", "--once", "--worker", "w1", "--config"])
            .arg(&cfg)
            .env("GITHUB_TOKEN", TOKEN)
            .env("CITRIAGE_LOG", "debug")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{engine}: {out} {}", stderr(&o));
        assert!(out.contains("ocp: fetched (0 payload(s) analysed, 3 unchanged)"), "{engine}: {out}");
        let events: Vec<serde_json::Value> = stderr(&o)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{engine}: not a JSON event ({e}): {l}")))
            .collect();
        let fetched = events
            .iter()
            .find(|e| e["fields"]["message"] == "source fetched" && e["fields"]["source"] == "ocp")
            .unwrap_or_else(|| panic!("{engine}: {events:?}"));
        assert_eq!(fetched["level"], "INFO");
        assert_eq!(fetched["fields"]["kind"], "release-stream");
        assert_eq!((fetched["fields"]["stored"].as_u64(), fetched["fields"]["skipped"].as_u64()), (Some(0), Some(3)));
        assert!(
            events.iter().any(|e| e["fields"]["message"] == "reference refreshed"
                && e["fields"]["reference"] == "openshift/widget-operator#101"),
            "{engine}: {events:?}"
        );
        assert!(!stderr(&o).contains(TOKEN) && !out.contains("\"level\""), "{engine}");
        let again = &gh.got()[before..];
        assert!(
            again.iter().any(|g| g.path.ends_with("/issues/101") && g.if_none_match.is_some()),
            "{engine}: {again:?}"
        );
    }

    // Failing sources: a release controller that asks to wait an hour, a GitHub that
    // refuses the token.
    let throttled = payload_world::server::serve(world.clone(), usize::MAX, "3600");
    let failing = tmp.path().join("failing.toml");
    std::fs::write(&failing, config(&throttled.base)).unwrap();
    gh.refuse.store(true, std::sync::atomic::Ordering::SeqCst);
    let db = tmp.path().join("failing.db");
    let dbs = db.to_str().unwrap();
    ok(cmd(dbs, &["payload", T4, "--from"]).arg(&world));
    let o = cmd(dbs, &["watch", "--once", "--worker", "w1", "--config"])
        .arg(&failing)
        .env("GITHUB_TOKEN", TOKEN)
        .env_remove("CITRIAGE_LOG")
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), stderr(&o));
    // The failures are logged (text lines) with their source and backoff.
    let logged: Vec<&str> = err.lines().filter(|l| l.contains("citriage_app::watch: source failed")).collect();
    assert_eq!(logged.len(), 2, "{err}");
    assert!(
        logged.iter().any(|l| l.contains("WARN") && l.contains("source=\"ocp\"") && l.contains("backoff_seconds=120")),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(1), "a failing source fails the tick: {out} {err}");
    assert!(out.contains("ocp: failed") && out.contains("3600"), "{out}");
    assert!(out.contains("openshift/widget-operator: failed") && out.contains("401"), "{out}");
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN), "the token is never printed: {out} {err}");

    let opts = citriage_web::ServeOptions { now: Some(now), prewarm: false, ..Default::default() };
    let server =
        citriage_web::Server::bind_with(db.clone(), "127.0.0.1:0".parse().unwrap(), opts).unwrap().spawn().unwrap();
    let base = format!("http://{}", server.addr);
    let a = agent();
    let (s, metrics) = answer(a.get(format!("{base}/metrics")).call());
    assert_eq!(s, 200);
    for want in [
        "citriage_source_errors_total{source=\"ocp\",kind=\"release-stream\"} 1\n",
        "citriage_source_errors_total{source=\"openshift/widget-operator\",kind=\"github\"} 1\n",
        "citriage_source_payloads_analysed_total{source=\"ocp\",kind=\"release-stream\"} 0\n",
        "citriage_source_refs_refreshed_total{source=\"openshift/widget-operator\",kind=\"github\"} 0\n",
        "citriage_source_ingest_lag_seconds{source=\"ocp\",kind=\"release-stream\"} +Inf\n",
    ] {
        assert!(metrics.contains(want), "{want}: {metrics}");
    }
    assert!(!metrics.contains("citriage_source_builds_stored_total{source=\"ocp\""), "{metrics}");
    let (s, page) = answer(a.get(format!("{base}/status")).call());
    assert_eq!(s, 200);
    assert!(page.matches("backing off after 1 failure(s)").count() == 2, "{page}");
    assert!(page.contains("3600") && page.contains("Bad credentials"), "{page}");
    assert!(!page.contains(TOKEN), "{page}");
    let (_, api) = answer(a.get(format!("{base}/api/v1/sources")).call());
    let v: serde_json::Value = serde_json::from_str(&api).unwrap();
    for s in v.as_array().unwrap() {
        let wait = s["next_due"].as_i64().unwrap() - s["last_error_at"].as_i64().unwrap();
        assert!((110..=130).contains(&wait), "the first backoff is schedule.backoff: {s}");
    }
}

/// `serve` logs what it read and each request it served as structured events on
/// stderr (JSON with --log-format json), never a request's headers; the address stays
/// its result on stdout.
#[test]
#[cfg(unix)]
fn serve_logs_requests_as_json_events_on_stderr() {
    use std::io::{BufRead, BufReader, Read};
    let w = world(10, 6);
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("store.db");
    let dbs = db.to_str().unwrap();
    ok(cmd(dbs, &["fetch", "--all", "--mirror"]).arg(&w.mirror));
    let mut child = bin()
        .args(["--db", dbs, "--log-format", "json", "serve", "--addr", "127.0.0.1:0", "--no-mcp"])
        .env("CITRIAGE_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("serving on http://")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    let a = agent();
    assert_eq!(
        answer(a.get(format!("http://{addr}/healthz")).header("Authorization", "Bearer s3cret-header").call()).0,
        200
    );
    assert_eq!(answer(a.get(format!("http://{addr}/jobs?q=secret-query")).call()).0, 200);
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let _ = child.wait();
    let events: Vec<serde_json::Value> = err
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON event ({e}): {l}")))
        .collect();
    let read = events.iter().find(|e| e["fields"]["message"] == "store read").unwrap_or_else(|| panic!("{err}"));
    assert_eq!(read["fields"]["builds"].as_u64(), Some(count(dbs, "builds")));
    let served: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["fields"]["message"] == "request served").collect();
    let health = served.iter().find(|e| e["fields"]["path"] == "/healthz").unwrap_or_else(|| panic!("{err}"));
    assert_eq!((health["fields"]["status"].as_u64(), health["fields"]["route"].as_str()), (Some(200), Some("ops")));
    assert!(served.iter().any(|e| e["fields"]["path"] == "/jobs" && e["fields"]["route"] == "jobs"), "{err}");
    assert!(!err.contains("s3cret-header") && !err.contains("secret-query"), "{err}");
}

/// The dashboard over each engine keeps answering once it checks the store for changes
/// (at most once a second, from a request): on PostgreSQL that check must not block a
/// thread that drives the server's runtime.
#[test]
fn serve_keeps_answering_after_its_change_check_on_each_engine() {
    let w = world(10, 6);
    let stores = Stores::new("serve_keeps_answering_after_its_change_check_on_each_engine");
    for (engine, db) in stores.fresh("checked") {
        ok(cmd(&db, &["fetch", "--all", "--mirror"]).arg(&w.mirror));
        let opts = citriage_web::ServeOptions { prewarm: false, ..Default::default() };
        let server = citriage_web::Server::bind_with(PathBuf::from(&db), "127.0.0.1:0".parse().unwrap(), opts)
            .unwrap()
            .spawn()
            .unwrap();
        let base = format!("http://{}", server.addr);
        let a = agent();
        for _ in 0..3 {
            std::thread::sleep(std::time::Duration::from_millis(1100));
            assert_eq!(answer(a.get(format!("{base}/jobs")).call()).0, 200, "{engine}");
        }
        assert_eq!(answer(a.get(format!("{base}/healthz")).call()).0, 200, "{engine}");
    }
}
