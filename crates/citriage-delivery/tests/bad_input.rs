//! Receivers that misbehave, against real servers on 127.0.0.1: an unreachable
//! webhook, one answering 500, 429 with `Retry-After` (short and long), 404, a URL that
//! is not http(s); an SMTP server that refuses, closes mid-message, refuses a
//! recipient, or offers a login without TLS. Each ends in a clear message and a
//! recorded state; nothing is lost (the message waits and goes once the receiver is
//! back), nothing is sent twice under different keys, and no secret (a webhook URL's
//! path, the SMTP password) is printed or stored.

mod common;

use citriage_alerts::retry::Backoff;
use citriage_delivery::destination::{DestinationConfig, DestinationKind};
use citriage_delivery::sender::{DrainReport, Relay};
use citriage_delivery::Sender;
use citriage_sources::http::{HttpClient, HttpOptions};
use citriage_store::{OutboxState, Store};
use common::*;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::Duration;

const SECRET: &str = "T0123-B0456-SeCrEtPaTh";
const PASSWORD: &str = "pa55-w0rd-never-printed";

fn http() -> HttpClient {
    HttpClient::new(HttpOptions {
        timeout: Duration::from_secs(10),
        attempts: 3,
        backoff: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(2),
        ..HttpOptions::default()
    })
}

/// A sender with a settable clock and environment.
struct Rig {
    dir: tempfile::TempDir,
    store: Store,
    clock: Cell<i64>,
    env: std::cell::RefCell<BTreeMap<String, String>>,
}

impl Rig {
    fn new(destinations: &[DestinationConfig]) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        enqueue(&mut store, &[alert(1)], destinations);
        Rig { dir, store, clock: Cell::new(T0), env: Default::default() }
    }

    fn set_env(&self, k: &str, v: &str) {
        self.env.borrow_mut().insert(k.into(), v.into());
    }

    fn drain(
        &mut self,
        destinations: &[DestinationConfig],
        relay: Option<(u16, Option<&std::path::Path>)>,
    ) -> DrainReport {
        let env = |k: &str| self.env.borrow().get(k).cloned();
        let now = || self.clock.get();
        let relay = relay.map(|(port, ca)| {
            let c = common::relay(port, ca);
            Relay { settings: c.settings(&env), from: c.from.clone() }
        });
        let s = Sender {
            worker: "w".into(),
            lease_secs: 60,
            backoff: Backoff { first: 30, max: 600 },
            destinations: by_name(destinations),
            relay,
            http: http(),
            env: &env,
            now: &now,
            stop: None,
            limit: None,
        };
        let r = s.drain(&mut self.store).unwrap();
        for m in &r.messages {
            let e = m.error.clone().unwrap_or_default();
            assert!(!e.contains(SECRET) && !e.contains(PASSWORD), "a secret in {e}");
        }
        for row in self.store.outbox().unwrap() {
            let e = row.last_error.unwrap_or_default();
            assert!(!e.contains(SECRET) && !e.contains(PASSWORD), "a secret stored: {e}");
        }
        let _ = &self.dir;
        r
    }

    fn advance(&self, secs: i64) {
        self.clock.set(self.clock.get() + secs);
    }

    fn row(&self) -> citriage_store::OutboxRow {
        let rows = self.store.outbox().unwrap();
        assert_eq!(rows.len(), 1, "{rows:?}");
        rows[0].clone()
    }
}

fn env_hook(name: &str) -> DestinationConfig {
    DestinationConfig {
        name: name.into(),
        kind: DestinationKind::Webhook,
        url: None,
        url_env: Some("HOOK_URL".into()),
        to: vec![],
        digest: false,
    }
}

#[test]
fn an_unreachable_webhook_loses_nothing_and_the_message_goes_once_it_is_back() {
    let dest = [env_hook("hook")];
    let mut rig = Rig::new(&dest);
    let closed = free_port();
    rig.set_env("HOOK_URL", &format!("http://127.0.0.1:{closed}/services/{SECRET}"));
    let r = rig.drain(&dest, None);
    assert_eq!((r.sent, r.retried), (0, 1), "{r:?}");
    let e = r.messages[0].error.clone().unwrap();
    assert!(e.starts_with("hook: request failed"), "{e}");
    let row = rig.row();
    assert_eq!((row.state, row.attempts), (OutboxState::Pending, 1));
    assert!(row.next_attempt >= T0 + 30, "{row:?}");
    // Not due before its backoff.
    assert_eq!(rig.drain(&dest, None).messages.len(), 0);
    let rx = Receiver::ok(Duration::ZERO);
    rig.set_env("HOOK_URL", &format!("{}/services/{SECRET}", rx.base));
    rig.advance(31);
    assert_eq!(rig.drain(&dest, None).sent, 1);
    assert_eq!(rx.received().len(), 1);
    assert_eq!(rig.row().state, OutboxState::Sent);
    rig.advance(3_600);
    assert_eq!(rig.drain(&dest, None).messages.len(), 0, "sent once");
}

#[test]
fn a_webhook_answering_500_is_retried_with_the_same_key_until_it_accepts() {
    let rx = Receiver::start(
        Duration::ZERO,
        Box::new(
            |_, n| if n < 4 { (500, vec![], "{\"message\":\"db down\"}".into()) } else { (200, vec![], "ok".into()) },
        ),
    );
    let dest = [hook("hook", DestinationKind::Webhook, &format!("{}/services/{SECRET}", rx.base))];
    let mut rig = Rig::new(&dest);
    let r = rig.drain(&dest, None);
    let e = r.messages[0].error.clone().unwrap();
    assert!(e.contains("HTTP 500, still after 3 attempts: db down"), "{e}");
    assert_eq!(rx.received().len(), 3, "three attempts in the HTTP layer");
    rig.advance(3_600);
    assert_eq!(rig.drain(&dest, None).sent, 1);
    let got = rx.received();
    assert_eq!(got.len(), 5);
    let keys: std::collections::BTreeSet<_> = got.iter().map(|g| g.header_key.clone().unwrap()).collect();
    assert_eq!(keys.len(), 1, "every copy carries the same key: {keys:?}");
}

#[test]
fn retry_after_is_honoured_now_when_short_and_later_when_long() {
    let rx = Receiver::start(
        Duration::ZERO,
        Box::new(|path, n| match (path, n) {
            ("/short", 0) => (429, vec![("Retry-After".into(), "1".into())], "slow down".into()),
            ("/long", 0) => (429, vec![("Retry-After".into(), "600".into())], "slow down".into()),
            _ => (200, vec![], "ok".into()),
        }),
    );
    let short = [hook("hook", DestinationKind::Slack, &format!("{}/short", rx.base))];
    let mut rig = Rig::new(&short);
    assert_eq!(rig.drain(&short, None).sent, 1, "waited out in the HTTP layer");
    let long = [hook("hook", DestinationKind::Slack, &format!("{}/long", rx.base))];
    let mut rig = Rig::new(&long);
    let r = rig.drain(&long, None);
    assert_eq!(r.retried, 1);
    assert!(r.messages[0].error.as_ref().unwrap().contains("asks to wait 600s"), "{r:?}");
    assert!(rig.row().next_attempt >= T0 + 600, "{:?}", rig.row());
    rig.advance(599);
    assert_eq!(rig.drain(&long, None).messages.len(), 0, "not before the receiver asked");
    rig.advance(61);
    assert_eq!(rig.drain(&long, None).sent, 1);
}

#[test]
fn a_url_that_is_not_http_and_a_404_are_kept_as_failed_with_the_reason() {
    let dest = [env_hook("hook")];
    let mut rig = Rig::new(&dest);
    rig.set_env("HOOK_URL", &format!("ftp://hooks.example.org/{SECRET}"));
    let r = rig.drain(&dest, None);
    assert_eq!(r.failed, 1);
    let e = r.messages[0].error.clone().unwrap();
    assert!(e.contains("(from HOOK_URL)") && e.contains("not an http(s) URL (scheme `ftp`)"), "{e}");
    assert_eq!(rig.row().state, OutboxState::Failed);
    rig.advance(86_400);
    assert_eq!(rig.drain(&dest, None).messages.len(), 0, "a failed message waits for `retry`");
    let rx = Receiver::start(Duration::ZERO, Box::new(|_, _| (404, vec![], "no such hook".into())));
    rig.set_env("HOOK_URL", &format!("{}/{SECRET}", rx.base));
    assert_eq!(rig.store.retry_failed_messages(None).unwrap(), 1);
    let r = rig.drain(&dest, None);
    assert_eq!(r.failed, 1);
    assert!(r.messages[0].error.as_ref().unwrap().contains("HTTP 404: no such hook"), "{r:?}");
    assert_eq!(rx.received().len(), 1, "a 404 is not retried");
}

#[test]
fn smtp_refusals_are_permanent_and_busy_servers_are_retried() {
    let mail = [mailbox("mail", &["sig-node@example.org"])];
    // 554 at the greeting: will not work.
    let (port, _) = fake_smtp(vec![Some("554 no service here")], 1);
    let mut rig = Rig::new(&mail);
    let r = rig.drain(&mail, Some((port, None)));
    assert_eq!(r.failed, 1, "{r:?}");
    assert!(
        r.messages[0].error.as_ref().unwrap().contains("greeting: the server answered 554 no service here"),
        "{r:?}"
    );
    // 421 at the greeting: busy, later.
    let (port, _) = fake_smtp(vec![Some("421 try later")], 1);
    let mut rig = Rig::new(&mail);
    assert_eq!(rig.drain(&mail, Some((port, None))).retried, 1);
    // A refused recipient is named.
    let (port, _) = fake_smtp(vec![Some("220 hi"), Some("250 ok"), Some("250 ok"), Some("550 5.1.1 no such user")], 1);
    let mut rig = Rig::new(&mail);
    let r = rig.drain(&mail, Some((port, None)));
    assert_eq!(r.failed, 1);
    assert!(
        r.messages[0].error.as_ref().unwrap().contains("RCPT TO sig-node@example.org: the server answered 550"),
        "{r:?}"
    );
}

#[test]
fn an_smtp_server_closing_mid_message_loses_nothing() {
    let mail = [mailbox("mail", &["sig-node@example.org"])];
    let (port, log) =
        fake_smtp(vec![Some("220 hi"), Some("250 ok"), Some("250 ok"), Some("250 ok"), Some("354 go on"), None], 1);
    let mut rig = Rig::new(&mail);
    let r = rig.drain(&mail, Some((port, None)));
    assert_eq!(r.retried, 1, "{r:?}");
    let e = r.messages[0].error.clone().unwrap();
    assert!(e.contains("closed the connection") || e.contains("sending the message"), "{e}");
    assert!(log.lock().unwrap().iter().any(|l| l == "DATA"), "the message was under way");
    assert_eq!(rig.row().state, OutboxState::Pending);
    let smtpd = match Smtpd::start(None) {
        Ok(s) => s,
        Err(why) => {
            return eprintln!("an_smtp_server_closing_mid_message_loses_nothing: real-server part skipped: {why}")
        }
    };
    rig.advance(3_600);
    assert_eq!(rig.drain(&mail, Some((smtpd.port, None))).sent, 1);
    assert_eq!(smtpd.message_ids(), vec![format!("<{}@example.org>", alert(1).key)]);
}

#[test]
fn the_smtp_password_is_never_sent_in_clear() {
    let mail = [mailbox("mail", &["sig-node@example.org"])];
    let (port, log) = fake_smtp(vec![Some("220 hi"), Some("250-hi\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME")], 1);
    let mut rig = Rig::new(&mail);
    rig.set_env("TEST_SMTP_USER", "citriage");
    rig.set_env("TEST_SMTP_PASSWORD", PASSWORD);
    let r = rig.drain(&mail, Some((port, None)));
    assert_eq!(r.failed, 1, "{r:?}");
    assert!(r.messages[0].error.as_ref().unwrap().contains("refusing to send the SMTP password in clear"), "{r:?}");
    std::thread::sleep(Duration::from_millis(100));
    let lines = log.lock().unwrap().clone();
    assert!(lines.iter().all(|l| !l.starts_with("AUTH") && !l.contains(PASSWORD)), "{lines:?}");
}
