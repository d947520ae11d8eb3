//! Real receivers on 127.0.0.1 for the delivery tests: an HTTP receiver that records
//! every request (method, `Idempotency-Key`, the body's key) and answers as scripted,
//! a real SMTP server (Debian's `aiosmtpd`, Maildir handler) found with a Python that
//! can import it (`$CITRIAGE_PYTHON`, `python3`, `/usr/bin/python3`), scripted
//! misbehaving SMTP servers, and a store holding alerts with their outbox. A test
//! whose server cannot start prints why and skips that part.
#![allow(dead_code)]

use citriage_alerts::alert::{link, name, t};
use citriage_alerts::{Alert, AlertKind, Change};
use citriage_delivery::destination::{DestinationConfig, DestinationKind, SmtpConfig};
use citriage_model::{Evidence, EvidenceKind};
use citriage_store::{AlertStates, AlertTurn, NewAlert, NewDelivery, Store};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const DAY: i64 = 86_400;
pub const T0: i64 = 20_400 * DAY + 3_600;

/// One request as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub method: String,
    pub header_key: Option<String>,
    pub body_key: Option<String>,
    pub body: String,
}

/// Decides the answer to a request: (path, requests seen before on this path).
pub type Script = dyn Fn(&str, usize) -> (u16, Vec<(String, String)>, String) + Send + Sync;

pub struct Receiver {
    pub base: String,
    pub got: Arc<Mutex<Vec<Received>>>,
    server: Arc<tiny_http::Server>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // Each unblock wakes one waiting thread.
        for _ in &self.threads {
            self.server.unblock();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Receiver {
    /// A receiver answering with `script`, after `delay` (time for a sender to be
    /// killed between the receiver's acceptance and its record).
    pub fn start(delay: Duration, script: Box<Script>) -> Receiver {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let base = format!("http://{}", server.server_addr().to_ip().unwrap());
        let got = Arc::new(Mutex::new(Vec::<Received>::new()));
        let script: Arc<Script> = Arc::from(script);
        let threads = (0..4)
            .map(|_| {
                let (srv, got, script) = (server.clone(), got.clone(), script.clone());
                std::thread::spawn(move || {
                    for mut rq in srv.incoming_requests() {
                        let mut body = String::new();
                        let _ = std::io::Read::read_to_string(rq.as_reader(), &mut body);
                        let header_key = rq
                            .headers()
                            .iter()
                            .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case("Idempotency-Key"))
                            .map(|h| h.value.to_string());
                        let body_key = serde_json::from_str::<serde_json::Value>(&body)
                            .ok()
                            .and_then(|v| v["idempotency_key"].as_str().map(str::to_string));
                        let path = rq.url().to_string();
                        let seen = {
                            let mut g = got.lock().unwrap();
                            let n = g.iter().filter(|r| r.path == path).count();
                            g.push(Received {
                                path: path.clone(),
                                method: rq.method().as_str().to_string(),
                                header_key,
                                body_key,
                                body,
                            });
                            n
                        };
                        let (status, headers, text) = script(&path, seen);
                        std::thread::sleep(delay);
                        let mut resp = tiny_http::Response::from_string(text).with_status_code(status);
                        for (k, v) in headers {
                            resp = resp.with_header(tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).unwrap());
                        }
                        let _ = rq.respond(resp);
                    }
                })
            })
            .collect();
        Receiver { base, got, server, threads }
    }

    /// Always 200.
    pub fn ok(delay: Duration) -> Receiver {
        Receiver::start(delay, Box::new(|_, _| (200, vec![], "ok".into())))
    }

    pub fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }
}

/// A free port on 127.0.0.1 (bound, then released for a server to take).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A Python that can import aiosmtpd, or why there is none.
pub fn python_with_aiosmtpd() -> Result<String, String> {
    let mut candidates: Vec<String> = std::env::var("CITRIAGE_PYTHON").ok().into_iter().collect();
    candidates.extend(["python3".to_string(), "/usr/bin/python3".to_string()]);
    for p in &candidates {
        let ok = Command::new(p)
            .args(["-c", "import aiosmtpd"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Ok(p.clone());
        }
    }
    Err(format!("no Python with aiosmtpd among {candidates:?} (Debian: apt-get install python3-aiosmtpd)"))
}

/// A real SMTP server (aiosmtpd) writing what it accepts to a Maildir.
pub struct Smtpd {
    pub port: u16,
    pub maildir: PathBuf,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for Smtpd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A test CA and a server certificate it signed for 127.0.0.1 (openssl): (CA, cert,
/// key), or why there are none.
pub fn certificate(dir: &Path) -> Result<(PathBuf, PathBuf, PathBuf), String> {
    let p = |f: &str| dir.join(f);
    std::fs::write(
        p("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .map_err(|e| e.to_string())?;
    let steps: [Vec<&str>; 3] = [
        vec![
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=citriage test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
        vec![
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "key.pem",
            "-out",
            "leaf.csr",
        ],
        vec![
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "cert.pem",
        ],
    ];
    for args in steps {
        let out = Command::new("openssl").args(&args).current_dir(dir).output().map_err(|e| format!("openssl: {e}"))?;
        if !out.status.success() {
            return Err(format!("openssl {}: {}", args[0], String::from_utf8_lossy(&out.stderr)));
        }
    }
    Ok((p("ca.pem"), p("cert.pem"), p("key.pem")))
}

impl Smtpd {
    /// Starts aiosmtpd on a free port; with `tls`, it offers (and requires) STARTTLS
    /// with that certificate and key.
    pub fn start(tls: Option<(&Path, &Path)>) -> Result<Smtpd, String> {
        let python = python_with_aiosmtpd()?;
        let dir = tempfile::tempdir().unwrap();
        let maildir = dir.path().join("mail");
        let port = free_port();
        let mut cmd = Command::new(python);
        cmd.args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")]);
        if let Some((cert, key)) = tls {
            cmd.arg("--tlscert").arg(cert).arg("--tlskey").arg(key);
        }
        cmd.args(["-c", "aiosmtpd.handlers.Mailbox"]).arg(&maildir);
        let child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().map_err(|e| format!("aiosmtpd: {e}"))?;
        let s = Smtpd { port, maildir, child, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err("aiosmtpd did not start listening within 20 s".into())
    }

    /// Every message received: its raw text.
    pub fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sub in ["new", "cur"] {
            let Ok(rd) = std::fs::read_dir(self.maildir.join(sub)) else { continue };
            for e in rd.flatten() {
                out.push(std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        out
    }

    /// The Message-ID of every message received.
    pub fn message_ids(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter_map(|m| {
                m.lines()
                    .find(|l| l.to_ascii_lowercase().starts_with("message-id:"))
                    .map(|l| l["message-id:".len()..].trim().to_string())
            })
            .collect()
    }
}

/// A scripted SMTP server: each connection gets `replies` in turn (the greeting, then
/// one per command; the message's data is read whole before the next reply); `None`
/// closes the connection instead — after `354`, at the message's first line, so the
/// message is cut off midway. Returns its port and the lines it read.
pub fn fake_smtp(replies: Vec<Option<&'static str>>, connections: usize) -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let log = Arc::new(Mutex::new(Vec::new()));
    let log2 = log.clone();
    std::thread::spawn(move || {
        for _ in 0..connections {
            let Ok((s, _)) = l.accept() else { return };
            let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
            let mut w = s.try_clone().unwrap();
            let mut r = BufReader::new(s);
            let mut replies = replies.iter().peekable();
            match replies.next() {
                Some(Some(g)) => {
                    let _ = w.write_all(format!("{g}\r\n").as_bytes());
                }
                _ => continue,
            }
            let mut in_data = false;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                log2.lock().unwrap().push(line.trim_end().to_string());
                if in_data && line.trim_end() != "." {
                    if matches!(replies.peek(), Some(None)) {
                        break;
                    }
                    continue;
                }
                match replies.next() {
                    Some(Some(rep)) => {
                        in_data = rep.starts_with("354");
                        let _ = w.write_all(format!("{rep}\r\n").as_bytes());
                    }
                    _ => break,
                }
            }
        }
    });
    (port, log)
}

fn run(job: &str, i: i64) -> (String, Evidence) {
    let url = format!("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/{job}/{}", 1_800_000_000_000_000_000i64 + i);
    let ev =
        Evidence::new(EvidenceKind::BuildResult, format!("{url}/finished.json"), "result=FAILURE", "", "2025-11-09");
    (url, ev)
}

/// Alert `i`: job `ci-job-<i>` turned red.
pub fn alert(i: i64) -> Alert {
    let job = format!("ci-job-{i:03}");
    let (url, ev) = run(&job, i);
    Alert {
        key: citriage_alerts::alert::key(AlertKind::JobRed, Change::Raised, &job, &i.to_string()),
        kind: AlertKind::JobRed,
        change: Change::Raised,
        subject: job.clone(),
        owner: "node".into(),
        at: T0 + i * 60,
        title: vec![name(&job), t(" is red: 3 runs failed in a row")],
        lines: vec![vec![t("Failed build "), link(&url)]],
        evidence: vec![ev],
        refs: vec![url],
        withdraw_when: vec![name(&job), t(" passes 1 run in a row.")],
        withdraws: None,
    }
}

/// Stores `alerts` with one message per alert to each of `destinations` (digest
/// destinations get one message per day).
pub fn enqueue(store: &mut Store, alerts: &[Alert], destinations: &[DestinationConfig]) -> usize {
    let mut deliveries = Vec::new();
    for a in alerts {
        for d in destinations {
            let (message, digest_day) = if d.digest {
                (citriage_alerts::route::digest_key(&d.name, a.day()), Some(a.day().0))
            } else {
                (a.key.clone(), None)
            };
            deliveries.push(NewDelivery { message, destination: d.name.clone(), alert: a.key.clone(), digest_day });
        }
    }
    let turn = AlertTurn {
        as_of: alerts.iter().map(|a| a.at).max().unwrap_or(T0),
        states: vec![],
        alerts: alerts
            .iter()
            .map(|a| NewAlert {
                key: a.key.clone(),
                kind: a.kind.as_str().into(),
                change: a.change.as_str().into(),
                subject: a.subject.clone(),
                owner: a.owner.clone(),
                at: a.at,
                title: citriage_alerts::text::title(a),
                body: serde_json::to_string(a).unwrap(),
                held: None,
                evidence: a.evidence.clone(),
            })
            .collect(),
        deliveries,
        close_digests_before: Some(i64::MAX),
    };
    let states = store.alert_states().unwrap();
    let w = store.commit_alerts(&states, &turn, "2025-11-09T00:00:00Z").unwrap().expect("no other writer");
    w.messages as usize
}

pub fn hook(name: &str, kind: DestinationKind, url: &str) -> DestinationConfig {
    DestinationConfig { name: name.into(), kind, url: Some(url.into()), url_env: None, to: vec![], digest: false }
}

pub fn mailbox(name: &str, to: &[&str]) -> DestinationConfig {
    DestinationConfig {
        name: name.into(),
        kind: DestinationKind::Email,
        url: None,
        url_env: None,
        to: to.iter().map(|s| s.to_string()).collect(),
        digest: false,
    }
}

pub fn relay(port: u16, ca: Option<&Path>) -> SmtpConfig {
    SmtpConfig {
        host: "127.0.0.1".into(),
        port,
        from: "citriage@example.org".into(),
        tls: citriage_delivery::smtp::TlsMode::Opportunistic,
        ca_file: ca.map(|p| p.display().to_string()),
        user_env: "TEST_SMTP_USER".into(),
        password_env: "TEST_SMTP_PASSWORD".into(),
        timeout: "10s".into(),
    }
}

pub fn by_name(ds: &[DestinationConfig]) -> BTreeMap<String, DestinationConfig> {
    ds.iter().map(|d| (d.name.clone(), d.clone())).collect()
}

/// States of the outbox: message → state.
pub fn outbox_states(store: &Store) -> BTreeMap<(String, String), String> {
    store.outbox().unwrap().into_iter().map(|r| ((r.message, r.destination), r.state.as_str().to_string())).collect()
}

pub fn empty_states() -> AlertStates {
    AlertStates::new()
}
