//! `citriage alerts` and `watch` end to end, against real receivers on 127.0.0.1: an
//! HTTP receiver recording every request, and a real SMTP server (Debian's aiosmtpd,
//! its part skipped with the reason printed when no Python can import it). A periodic
//! job that fails three times in a row raises one alert: `--dry-run` shows it and its
//! destinations and writes nothing; a turn queues it and sends it once to each
//! destination with its key (the webhook's `Idempotency-Key`, the e-mail's
//! `Message-ID`); a turn over the same data says nothing; a pass withdraws it where it
//! went; the digest batches the day. A webhook that refuses keeps its message with why
//! (and no secret printed) until `alerts retry` and `alerts send` deliver it. `watch`
//! ingests a mirror and sends the alert after its tick.

mod common;

use common::{bin, stderr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// In the webhook's URL, which comes from the environment: never printed.
const SECRET: &str = "T0KEN-s3cr3t-in-the-url";
const T0: i64 = 1_795_000_000;
const JOB: &str = "ci-node-e2e";

#[derive(Debug, Clone)]
struct Request {
    path: String,
    key: Option<String>,
    body: serde_json::Value,
}

/// An HTTP receiver answering with the status in `status` (changeable while it runs).
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<Request>>>,
    status: Arc<AtomicU16>,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    fn start() -> Receiver {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let status = Arc::new(AtomicU16::new(200));
        let (srv, g, st) = (server.clone(), got.clone(), status.clone());
        let thread = std::thread::spawn(move || {
            for mut rq in srv.incoming_requests() {
                let mut body = String::new();
                let _ = rq.as_reader().read_to_string(&mut body);
                let key = rq
                    .headers()
                    .iter()
                    .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case("Idempotency-Key"))
                    .map(|h| h.value.to_string());
                let code = st.load(Ordering::SeqCst);
                if code == 200 {
                    let body = serde_json::from_str(&body).unwrap_or_default();
                    g.lock().unwrap().push(Request { path: rq.url().to_string(), key, body });
                }
                let _ = rq.respond(tiny_http::Response::from_string("x").with_status_code(code));
            }
        });
        Receiver { url, got, status, server, thread: Some(thread) }
    }

    fn accepted(&self) -> Vec<Request> {
        self.got.lock().unwrap().clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A real SMTP server (aiosmtpd) writing what it accepts to a Maildir.
struct Smtpd {
    port: u16,
    maildir: PathBuf,
    child: Child,
}

impl Drop for Smtpd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Smtpd {
    fn start(dir: &Path) -> Result<Smtpd, String> {
        let python = ["python3", "/usr/bin/python3"]
            .into_iter()
            .find(|p| {
                Command::new(p)
                    .args(["-c", "import aiosmtpd"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            })
            .ok_or("no Python with aiosmtpd (Debian: apt-get install python3-aiosmtpd)")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let maildir = dir.join("mail");
        let child = Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}"), "-c", "aiosmtpd.handlers.Mailbox"])
            .arg(&maildir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("aiosmtpd: {e}"))?;
        let s = Smtpd { port, maildir, child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err("aiosmtpd did not listen within 20 s".into())
    }

    fn message_ids(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sub in ["new", "cur"] {
            let Ok(rd) = std::fs::read_dir(self.maildir.join(sub)) else { continue };
            for e in rd.flatten() {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                if let Some(l) = text.lines().find(|l| l.to_ascii_lowercase().starts_with("message-id:")) {
                    out.push(l["message-id:".len()..].trim().to_string());
                }
            }
        }
        out.sort();
        out
    }
}

/// `citriage --db DB --quiet ARGS` with the webhook's URL in the environment.
fn run(db: &Path, hook: &str, args: &[&str]) -> Output {
    bin()
        .arg("--db")
        .arg(db)
        .arg("--quiet")
        .args(args)
        .env("CITRIAGE_TEST_HOOK", format!("{hook}/hook/{SECRET}"))
        .output()
        .unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains(SECRET) && !stderr(o).contains(SECRET), "the webhook's URL was printed");
    serde_json::from_str(&text).unwrap()
}

fn config(dir: &Path, smtp: Option<u16>, extra: &str) -> PathBuf {
    let mut text = format!(
        "[owners]\nsig-node = [\"^ci-node-\"]\n\n[alerts.routes]\nsig-node = [{}]\n\n[[alerts.destinations]]\nname = \"hook\"\nkind = \"webhook\"\nurl_env = \"CITRIAGE_TEST_HOOK\"\n{extra}",
        if smtp.is_some() { "\"hook\", \"mail\"" } else { "\"hook\"" }
    );
    if let Some(port) = smtp {
        text.push_str(&format!(
            "\n[[alerts.destinations]]\nname = \"mail\"\nkind = \"email\"\nto = [\"sig-node@example.org\"]\n\n[alerts.smtp]\nhost = \"127.0.0.1\"\nport = {port}\nfrom = \"citriage@example.org\"\ntimeout = \"10s\"\n"
        ));
    }
    let f = dir.join("citriage.toml");
    std::fs::write(&f, text).unwrap();
    f
}

/// A build of the periodic job, `n` hours after T0.
fn build(n: i64, result: &str) -> citriage_model::build::BuildRecord {
    let id = format!("{}", 1_795_000_000_000_000_000i64 + n);
    citriage_model::build::BuildRecord {
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{JOB}/{id}"),
        job: JOB.into(),
        build_id: id,
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos: None,
        started: Some(T0 + n * 3600),
        finished: Some(T0 + n * 3600 + 600),
        duration: Some(600),
        result: Some(result.into()),
        state: None,
        executor: None,
        origin: "gcs".into(),
        problems: vec![],
        complete: true,
        tests: vec![],
        artifacts: vec![],
        excerpts: vec![],
        kettle: None,
        testgrid: None,
        versions: Vec::new(),
    }
}

#[test]
fn a_red_job_is_alerted_once_to_each_destination_checked_and_withdrawn_by_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut store = citriage_store::Store::open(&db).unwrap();
    for (n, r) in ["SUCCESS", "FAILURE", "FAILURE", "FAILURE"].iter().enumerate() {
        store.put_build(&build(n as i64, r)).unwrap();
    }
    drop(store);
    let smtpd =
        Smtpd::start(dir.path()).map_err(|why| eprintln!("a_red_job_is_alerted_once…: SMTP part skipped: {why}")).ok();
    let hook = Receiver::start();
    let cfg = config(dir.path(), smtpd.as_ref().map(|s| s.port), "");
    let c = cfg.to_str().unwrap();
    let dests = if smtpd.is_some() { 2 } else { 1 };

    let dry = json(&run(&db, &hook.url, &["--format", "json", "alerts", "--dry-run", "--config", c]));
    let alerts = dry["alerts"].as_array().unwrap();
    assert_eq!(alerts.len(), 1, "{dry}");
    assert_eq!((alerts[0]["kind"].as_str(), alerts[0]["owner"].as_str()), (Some("job-red"), Some("node")));
    assert_eq!(alerts[0]["destinations"].as_array().unwrap().len(), dests);
    assert!(alerts[0].get("held").is_none(), "the stored builds bear it out: {}", alerts[0]);
    let key = alerts[0]["key"].as_str().unwrap().to_string();
    let status = json(&run(&db, &hook.url, &["--format", "json", "alerts", "status"]));
    assert_eq!(status, serde_json::json!([]), "a dry run queues nothing");
    assert!(hook.accepted().is_empty(), "a dry run sends nothing");

    let turn = json(&run(&db, &hook.url, &["--format", "json", "alerts", "--config", c]));
    assert_eq!(turn["written"]["messages"], dests);
    assert_eq!(turn["sent"]["sent"], dests, "{turn}");
    let got = hook.accepted();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, format!("/hook/{SECRET}"));
    assert_eq!((got[0].key.as_deref(), got[0].body["idempotency_key"].as_str()), (Some(&key[..]), Some(&key[..])));
    assert_eq!(got[0].body["alerts"][0]["subject"], JOB);
    if let Some(s) = &smtpd {
        assert_eq!(s.message_ids(), vec![format!("<{key}@example.org>")]);
    }

    // The same data: nothing said, nothing sent.
    let again = json(&run(&db, &hook.url, &["--format", "json", "alerts", "--config", c]));
    assert_eq!(again["alerts"], serde_json::json!([]));
    assert_eq!(hook.accepted().len(), 1);

    // A pass withdraws it, where it went.
    let mut store = citriage_store::Store::open(&db).unwrap();
    store.put_build(&build(4, "SUCCESS")).unwrap();
    drop(store);
    let green = json(&run(&db, &hook.url, &["--format", "json", "alerts", "--config", c]));
    assert_eq!(green["alerts"][0]["withdraws"].as_str(), Some(&key[..]));
    let got = hook.accepted();
    assert_eq!(got.len(), 2);
    let withdrawal = got[1].key.clone().unwrap();
    assert_ne!(withdrawal, key);
    if let Some(s) = &smtpd {
        assert_eq!(s.message_ids().len(), 2);
    }
    let status = json(&run(&db, &hook.url, &["--format", "json", "alerts", "status"]));
    let rows = status.as_array().unwrap();
    assert_eq!(rows.len(), 2 * dests);
    assert!(rows.iter().all(|r| r["state"] == "sent"), "{status}");

    // The day's digest: both, in order.
    let digest = json(&run(&db, &hook.url, &["--format", "json", "alerts", "digest"]));
    let keys: Vec<&str> = digest["alerts"].as_array().unwrap().iter().map(|a| a["key"].as_str().unwrap()).collect();
    assert_eq!(keys, [&key[..], &withdrawal[..]]);
    assert!(digest["text"].as_str().unwrap().contains("2 alerts"), "{digest}");
    let text = run(&db, &hook.url, &["alerts", "digest"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains(JOB));
}

#[test]
fn a_refusing_webhook_keeps_its_message_with_why_until_retried_and_no_secret_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut store = citriage_store::Store::open(&db).unwrap();
    for n in 0..3 {
        store.put_build(&build(n, "FAILURE")).unwrap();
    }
    drop(store);
    let hook = Receiver::start();
    hook.status.store(404, Ordering::SeqCst);
    let cfg = config(dir.path(), None, "");
    let c = cfg.to_str().unwrap();
    let o = run(&db, &hook.url, &["alerts", "--config", c]);
    assert_eq!(o.status.code(), Some(1), "a message failed for good: {}", stderr(&o));
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), stderr(&o));
    assert!(out.contains("hook") && out.contains("404"), "{out}");
    assert!(err.contains("alerts status"), "{err}");
    assert!(!out.contains(SECRET) && !err.contains(SECRET), "the webhook's URL was printed:\n{out}\n{err}");
    let status = json(&run(&db, &hook.url, &["--format", "json", "alerts", "status"]));
    assert_eq!(status[0]["state"], "failed");
    assert!(status[0]["last_error"].as_str().unwrap().contains("404"), "{status}");
    assert!(!status.to_string().contains(SECRET));

    // Fixed: re-queued, then sent once.
    hook.status.store(200, Ordering::SeqCst);
    let r = json(&run(&db, &hook.url, &["--format", "json", "alerts", "retry"]));
    assert_eq!(r["requeued"], 1);
    let sent = json(&run(&db, &hook.url, &["--format", "json", "alerts", "send", "--config", c, "--worker", "w1"]));
    assert_eq!(sent["sent"], 1, "{sent}");
    assert_eq!(hook.accepted().len(), 1);

    // A destination URL that is not http(s) is refused by `config check`, naming it.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[alerts.destinations]]\nname = \"h\"\nkind = \"webhook\"\nurl = \"ftp://example.org/x\"\n")
        .unwrap();
    let o = run(&db, &hook.url, &["config", "check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("alerts.destinations[0].url"), "{}", stderr(&o));
}

/// A mirror holding the job's builds `0..n` (`results[i]`).
fn mirror(root: &Path, results: &[&str]) {
    for (n, r) in results.iter().enumerate() {
        let b = build(n as i64, r);
        let d = root.join(&b.path);
        std::fs::create_dir_all(&d).unwrap();
        let started = serde_json::json!({ "timestamp": b.started });
        let finished = serde_json::json!({ "timestamp": b.finished, "passed": *r == "SUCCESS", "result": r });
        std::fs::write(d.join("started.json"), started.to_string()).unwrap();
        std::fs::write(d.join("finished.json"), finished.to_string()).unwrap();
    }
}

#[test]
fn watch_sends_the_alerts_of_its_tick() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let root = dir.path().join("mirror");
    mirror(&root, &["SUCCESS", "FAILURE", "FAILURE", "FAILURE"]);
    let hook = Receiver::start();
    let source = format!(
        "[[sources.buckets]]\nname = \"k8s\"\nbucket = \"kubernetes-ci-logs\"\nmirror = {:?}\njob_regex = \".\"\n",
        root.display().to_string()
    );
    let cfg = config(dir.path(), None, &source);
    let c = cfg.to_str().unwrap();
    let tick = json(&run(&db, &hook.url, &["--format", "json", "watch", "--once", "--worker", "w1", "--config", c]));
    assert_eq!(tick["alerts"]["said"], 1, "{tick}");
    assert_eq!(tick["alerts"]["sent"], 1, "{tick}");
    let got = hook.accepted();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body["alerts"][0]["kind"], "job-red");
    // Nothing new stored: nothing said again.
    let tick = json(&run(&db, &hook.url, &["--format", "json", "watch", "--once", "--worker", "w1", "--config", c]));
    assert_eq!(tick["alerts"]["said"], 0, "{tick}");
    mirror(&root, &["SUCCESS", "FAILURE", "FAILURE", "FAILURE", "SUCCESS"]);
    let tick = json(&run(&db, &hook.url, &["--format", "json", "watch", "--once", "--worker", "w1", "--config", c]));
    assert_eq!(tick["alerts"]["said"], 1, "{tick}");
    let got = hook.accepted();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].body["alerts"][0]["change"], "withdrawn");
}
