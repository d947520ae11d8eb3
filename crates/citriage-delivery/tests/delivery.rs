//! Delivery against real receivers on 127.0.0.1 — an HTTP receiver (Slack-compatible
//! and JSON webhooks) and a real SMTP server (aiosmtpd) — with the sender a separate
//! process: killed with SIGKILL at random points and restarted, every message arrives,
//! and repeats (always with the same key) number at most one per kill; two senders on
//! one store (SQLite, and PostgreSQL when a server can start) never send a message
//! twice; STARTTLS is used when offered and the server's certificate is checked.

mod common;

use citriage_alerts::retry::Backoff;
use citriage_delivery::destination::{DestinationConfig, DestinationKind};
use citriage_delivery::sender::Relay;
use citriage_delivery::Sender;
use citriage_sources::http::{HttpClient, HttpOptions};
use citriage_store::Location;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

const CHILD: &str = "CITRIAGE_TEST_SENDER";

fn destinations(hook: &str, smtp: bool) -> Vec<DestinationConfig> {
    let mut d = vec![
        hook_dest("hook-json", DestinationKind::Webhook, &format!("{hook}/json")),
        hook_dest("hook-slack", DestinationKind::Slack, &format!("{hook}/slack")),
    ];
    if smtp {
        d.push(mailbox("mail", &["sig-node@example.org"]));
    }
    d
}

fn hook_dest(n: &str, k: DestinationKind, url: &str) -> DestinationConfig {
    hook(n, k, url)
}

fn http() -> HttpClient {
    HttpClient::new(HttpOptions {
        timeout: Duration::from_secs(10),
        attempts: 3,
        backoff: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(2),
        ..HttpOptions::default()
    })
}

/// The sender process of the kill and two-worker tests: drains the store named by the
/// environment, then exits. A no-op in a normal test run.
#[test]
fn child_sender() {
    let Ok(store) = std::env::var(CHILD) else { return };
    let hook = std::env::var("CHILD_HOOK").unwrap();
    let smtp = std::env::var("CHILD_SMTP_PORT").ok().map(|p| p.parse::<u16>().unwrap());
    let worker = std::env::var("CHILD_WORKER").unwrap();
    let mut st = Location::parse(&store).open().unwrap();
    let env = |_: &str| None;
    let now = || citriage_sources::http::unix_now();
    let relay = smtp.map(|p| {
        let c = relay(p, None);
        Relay { settings: c.settings(&env), from: c.from }
    });
    let sender = Sender {
        worker,
        lease_secs: 60,
        backoff: Backoff { first: 1, max: 2 },
        destinations: by_name(&destinations(&hook, smtp.is_some())),
        relay,
        http: http(),
        env: &env,
        now: &now,
        stop: None,
        limit: None,
    };
    let r = sender.drain(&mut st).unwrap();
    assert_eq!(r.failed, 0, "{r:?}");
}

fn spawn_sender(store: &str, hook: &str, smtp: Option<u16>, worker: &str) -> std::process::Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "child_sender", "--nocapture", "--test-threads=1"])
        .env(CHILD, store)
        .env("CHILD_HOOK", hook)
        .env("CHILD_WORKER", worker)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if let Some(p) = smtp {
        c.env("CHILD_SMTP_PORT", p.to_string());
    }
    c.spawn().unwrap()
}

/// What the receivers got: keys per destination, and how many repeats.
struct Tally {
    /// (destination, key) → copies received.
    copies: BTreeMap<(String, String), usize>,
}

impl Tally {
    fn of(r: &Receiver, smtpd: Option<&Smtpd>) -> Tally {
        let mut copies = BTreeMap::new();
        for x in r.received() {
            assert_eq!(x.method, "POST");
            assert_eq!(x.header_key, x.body_key, "the header and the body carry the same key: {x:?}");
            let dest = if x.path == "/json" { "hook-json" } else { "hook-slack" };
            *copies.entry((dest.to_string(), x.header_key.clone().unwrap())).or_insert(0) += 1;
        }
        if let Some(s) = smtpd {
            for id in s.message_ids() {
                let key = id.trim_start_matches('<').split('@').next().unwrap().to_string();
                *copies.entry(("mail".to_string(), key)).or_insert(0) += 1;
            }
        }
        Tally { copies }
    }

    fn repeats(&self) -> usize {
        self.copies.values().map(|n| n - 1).sum()
    }

    fn distinct(&self) -> BTreeSet<(String, String)> {
        self.copies.keys().cloned().collect()
    }
}

fn expected(store: &citriage_store::Store) -> BTreeSet<(String, String)> {
    store.outbox().unwrap().into_iter().map(|r| (r.destination, r.message)).collect()
}

/// A tiny deterministic generator for kill times.
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    *seed >> 33
}

#[test]
fn every_message_arrives_once_despite_kill_9_of_the_sender() {
    let smtpd = match Smtpd::start(None) {
        Ok(s) => Some(s),
        Err(why) => {
            eprintln!("every_message_arrives_once_despite_kill_9_of_the_sender: SMTP part skipped: {why}");
            None
        }
    };
    // A receiver slow enough to be killed on: the sender waits for each answer.
    let rx = Receiver::ok(Duration::from_millis(15));
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("s.db").display());
    let mut st = Location::parse(&store).open().unwrap();
    let alerts: Vec<_> = (0..40).map(alert).collect();
    let n = enqueue(&mut st, &alerts, &destinations(&rx.base, smtpd.is_some()));
    let want = expected(&st);
    assert_eq!(want.len(), n);
    let mut seed = 29;
    let mut kills = 0;
    for _ in 0..8 {
        let mut child = spawn_sender(&store, &rx.base, smtpd.as_ref().map(|s| s.port), "w1");
        std::thread::sleep(Duration::from_millis(40 + lcg(&mut seed) % 250));
        if child.try_wait().unwrap().is_some() {
            break;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills += 1;
    }
    // The last run is left to finish.
    let status = spawn_sender(&store, &rx.base, smtpd.as_ref().map(|s| s.port), "w1").wait().unwrap();
    assert!(status.success());
    assert!(kills >= 3, "the sender finished before it could be killed enough ({kills})");
    let st = Location::parse(&store).open().unwrap();
    let states = outbox_states(&st);
    assert!(states.values().all(|s| s == "sent"), "{states:?}");
    let tally = Tally::of(&rx, smtpd.as_ref());
    assert_eq!(tally.distinct(), want, "every message arrived, none unknown");
    eprintln!(
        "kill -9: {} messages, {kills} kills, {} raw repeats (same key), {} after dropping repeats",
        want.len(),
        tally.repeats(),
        tally.distinct().len()
    );
    assert!(tally.repeats() <= kills, "{} repeats for {kills} kills", tally.repeats());
}

fn two_workers_on(store: &str, what: &str) {
    let smtpd = match Smtpd::start(None) {
        Ok(s) => Some(s),
        Err(why) => {
            eprintln!("{what}: SMTP part skipped: {why}");
            None
        }
    };
    let rx = Receiver::ok(Duration::from_millis(5));
    let mut st = Location::parse(store).open().unwrap();
    let alerts: Vec<_> = (0..30).map(alert).collect();
    enqueue(&mut st, &alerts, &destinations(&rx.base, smtpd.is_some()));
    let want = expected(&st);
    drop(st);
    let port = smtpd.as_ref().map(|s| s.port);
    let (mut a, mut b) = (spawn_sender(store, &rx.base, port, "w1"), spawn_sender(store, &rx.base, port, "w2"));
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    let tally = Tally::of(&rx, smtpd.as_ref());
    assert_eq!(tally.distinct(), want, "{what}");
    assert_eq!(tally.repeats(), 0, "{what}: two workers sent a message twice");
    let st = Location::parse(store).open().unwrap();
    assert!(outbox_states(&st).values().all(|s| s == "sent"), "{what}");
}

#[test]
fn two_workers_on_one_store_never_send_a_message_twice() {
    let dir = tempfile::tempdir().unwrap();
    two_workers_on(&format!("sqlite:{}", dir.path().join("s.db").display()), "sqlite");
    #[cfg(feature = "postgres")]
    match citriage_store::pg_cluster::TempCluster::start() {
        Ok(c) => two_workers_on(&c.create_database("delivery").unwrap(), "postgres"),
        Err(why) => eprintln!("two_workers_on_one_store_never_send_a_message_twice: PostgreSQL part skipped: {why}"),
    }
    #[cfg(not(feature = "postgres"))]
    eprintln!("two_workers_on_one_store_never_send_a_message_twice: PostgreSQL part skipped: built without `postgres`");
}

#[test]
fn starttls_is_used_when_offered_and_the_certificate_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = match certificate(dir.path()) {
        Ok(c) => c,
        Err(why) => return eprintln!("starttls test skipped: {why}"),
    };
    let smtpd = match Smtpd::start(Some((&cert, &key))) {
        Ok(s) => s,
        Err(why) => return eprintln!("starttls test skipped: {why}"),
    };
    let mut st = citriage_store::Store::open(&dir.path().join("s.db")).unwrap();
    enqueue(&mut st, &[alert(1)], &[mailbox("mail", &["sig-node@example.org"])]);
    let env = |_: &str| None;
    let clock = || T0;
    let send = |ca: Option<&std::path::Path>, st: &mut citriage_store::Store| {
        let c = relay(smtpd.port, ca);
        let s = Sender {
            worker: "w".into(),
            lease_secs: 60,
            backoff: Backoff::default(),
            destinations: by_name(&[mailbox("mail", &["sig-node@example.org"])]),
            relay: Some(Relay { settings: c.settings(&env), from: c.from.clone() }),
            http: http(),
            env: &env,
            now: &clock,
            stop: None,
            limit: None,
        };
        s.drain(st).unwrap()
    };
    // Not trusting the server's certificate: refused, kept as failed, nothing sent.
    let r = send(None, &mut st);
    assert_eq!(r.failed, 1, "{r:?}");
    let e = r.messages[0].error.clone().unwrap();
    assert!(e.contains("TLS handshake failed") && e.contains("certificate"), "{e}");
    assert!(smtpd.messages().is_empty());
    assert_eq!(st.retry_failed_messages(None).unwrap(), 1);
    // Trusting it: sent over TLS (this server takes mail only after STARTTLS).
    let r = send(Some(&ca), &mut st);
    assert_eq!(r.sent, 1, "{r:?}");
    let m = smtpd.messages();
    assert_eq!(m.len(), 1);
    assert!(m[0].contains(&format!("Message-ID: <{}@example.org>", alert(1).key)), "{}", m[0]);
}
