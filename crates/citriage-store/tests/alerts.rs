//! Alerts and their outbox on both engines: a turn is written whole or not at all and
//! only over the states it was evaluated from; an alert is stored once whatever the
//! number of workers; digests collect their day and go out once closed, a late alert
//! going alone; a message is held by one sender at a time (leases), taken back at once
//! by the same worker after a crash, recorded as sent only when said so, and a failure
//! is recorded by the lease's holder only.

mod common;

use citriage_model::{Evidence, EvidenceKind};
use citriage_store::{AlertStates, AlertTurn, FailedAttempt, NewAlert, NewDelivery, OutboxState, Store};
use std::collections::BTreeSet;

fn alert(key: &str, at: i64) -> NewAlert {
    NewAlert {
        key: key.into(),
        kind: "job-red".into(),
        change: "raised".into(),
        subject: format!("ci-{key}"),
        owner: "node".into(),
        at,
        title: format!("ci-{key} is red"),
        body: format!("{{\"key\":\"{key}\"}}"),
        held: None,
        evidence: vec![Evidence::new(
            EvidenceKind::BuildResult,
            format!("gs://b/logs/ci-{key}/1"),
            "result=FAILURE",
            "",
            "2026-11-21",
        )],
    }
}

fn delivery(message: &str, destination: &str, alert: &str, day: Option<i64>) -> NewDelivery {
    NewDelivery { message: message.into(), destination: destination.into(), alert: alert.into(), digest_day: day }
}

fn turn(as_of: i64, states: &[(&str, &str)], alerts: Vec<NewAlert>, deliveries: Vec<NewDelivery>) -> AlertTurn {
    AlertTurn {
        as_of,
        states: states.iter().map(|(s, v)| ("job-red".to_string(), s.to_string(), v.to_string())).collect(),
        alerts,
        deliveries,
        close_digests_before: None,
    }
}

const DAY: i64 = 86_400;
const T: i64 = 20_000 * DAY + 3_600;

#[test]
fn a_turn_is_written_whole_and_only_over_the_states_it_read() {
    for f in common::backends("a_turn_is_written_whole_and_only_over_the_states_it_read") {
        let mut s = f.open();
        let empty = AlertStates::new();
        let t1 = turn(T, &[("ci-a", "{\"open\":\"a\"}")], vec![alert("a", T)], vec![delivery("a", "slack", "a", None)]);
        let w = s.commit_alerts(&empty, &t1, "2026-11-21T00:00:00Z").unwrap().expect("first turn");
        assert_eq!((w.alerts, w.messages), (1, 1), "{}", f.name);
        // A second worker that evaluated from the same (now stale) states writes nothing.
        let t2 = turn(T, &[("ci-b", "{}")], vec![alert("b", T)], vec![delivery("b", "slack", "b", None)]);
        assert!(s.commit_alerts(&empty, &t2, "x").unwrap().is_none(), "{}", f.name);
        assert!(s.alert("b").unwrap().is_none(), "{}", f.name);
        let states = s.alert_states().unwrap();
        assert_eq!(states.len(), 1);
        assert_eq!(states[&("job-red".to_string(), "ci-a".to_string())], "{\"open\":\"a\"}");
        // The same alert again (same key): stored once, one message.
        let w = s.commit_alerts(&states, &t1, "x").unwrap().unwrap();
        assert_eq!((w.alerts, w.messages), (0, 0), "{}", f.name);
        assert_eq!(s.alerts(None, None).unwrap().len(), 1);
        assert_eq!(s.outbox().unwrap().len(), 1);
        // Its evidence is in the ledger.
        let ev = &t1.alerts[0].evidence[0];
        assert_eq!(s.evidence(&ev.id).unwrap().unwrap().evidence, *ev, "{}", f.name);
    }
}

#[test]
fn digests_collect_their_day_and_late_alerts_go_alone() {
    for f in common::backends("digests_collect_their_day_and_late_alerts_go_alone") {
        let mut s = f.open();
        let day = T / DAY;
        let t1 = turn(
            T,
            &[],
            vec![alert("a", T), alert("b", T + 60)],
            vec![
                delivery("dg-1", "mail", "a", Some(day)),
                delivery("dg-1", "mail", "b", Some(day)),
                delivery("a", "slack", "a", None),
            ],
        );
        s.commit_alerts(&AlertStates::new(), &t1, "x").unwrap().unwrap();
        let rows = s.outbox().unwrap();
        let dg = rows.iter().find(|r| r.message == "dg-1").unwrap();
        assert_eq!(
            (dg.state, dg.alerts.clone()),
            (OutboxState::Open, vec!["a".to_string(), "b".to_string()]),
            "{}",
            f.name
        );
        // An open digest is not due.
        let mut claimed = Vec::new();
        while let Some(c) = s.claim_message("w", T, 60).unwrap() {
            s.message_sent(&c.row.message, &c.row.destination, T).unwrap();
            claimed.push(c.row.message);
        }
        assert_eq!(claimed, vec!["a"], "{}", f.name);
        // The next day's turn closes it.
        let mut t2 = turn(T + DAY, &[], vec![], vec![]);
        t2.close_digests_before = Some(day + 1);
        let w = s.commit_alerts(&AlertStates::new(), &t2, "x").unwrap().unwrap();
        assert_eq!(w.digests_closed, 1, "{}", f.name);
        let c = s.claim_message("w", T + DAY, 60).unwrap().expect("the digest is due");
        assert_eq!(c.row.message, "dg-1");
        assert_eq!(c.alerts.iter().map(|a| a.key.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        s.message_sent("dg-1", "mail", T + DAY).unwrap();
        // A late alert of that day: not into the closed digest, alone instead.
        let t3 = turn(T + DAY, &[], vec![alert("c", T + 120)], vec![delivery("dg-1", "mail", "c", Some(day))]);
        s.commit_alerts(&AlertStates::new(), &t3, "x").unwrap().unwrap();
        let rows = s.outbox().unwrap();
        assert_eq!(rows.iter().find(|r| r.message == "dg-1").unwrap().alerts.len(), 2, "{}", f.name);
        let alone = rows.iter().find(|r| r.message == "c").expect("the late alert alone");
        assert_eq!((alone.state, alone.digest_day), (OutboxState::Pending, None));
    }
}

fn three_messages(s: &mut Store) {
    let ds = vec![delivery("a", "hook", "a", None), delivery("b", "hook", "b", None), delivery("c", "hook", "c", None)];
    s.commit_alerts(&AlertStates::new(), &turn(T, &[], vec![alert("a", T), alert("b", T), alert("c", T)], ds), "x")
        .unwrap()
        .unwrap();
}

#[test]
fn leases_keep_a_message_with_one_sender_and_failures_wait_their_turn() {
    for f in common::backends("leases_keep_a_message_with_one_sender_and_failures_wait_their_turn") {
        let mut s = f.open();
        three_messages(&mut s);
        let now = 1_000;
        let a = s.claim_message("w1", now, 300).unwrap().unwrap();
        assert_eq!(a.row.message, "a");
        // w1 "crashes" holding a. w2 cannot take it while the lease holds.
        let b = s.claim_message("w2", now, 300).unwrap().unwrap();
        assert_eq!(b.row.message, "b", "{}", f.name);
        // w1 restarted under its name takes its own lease back first.
        let again = s.claim_message("w1", now + 5, 300).unwrap().unwrap();
        assert_eq!(again.row.message, "a", "{}", f.name);
        // A failure is recorded by the holder only.
        let fail = FailedAttempt { error: "hook: HTTP 500".into(), next_attempt: now + 30, give_up: false };
        assert!(!s.message_failed("a", "hook", "w2", now + 6, &fail).unwrap(), "{}", f.name);
        assert!(s.message_failed("a", "hook", "w1", now + 6, &fail).unwrap(), "{}", f.name);
        // Not due before its retry time.
        let c = s.claim_message("w1", now + 7, 300).unwrap().unwrap();
        assert_eq!(c.row.message, "c");
        // Nothing for anyone else: a waits for its retry, b and c are held.
        assert!(s.claim_message("w4", now + 8, 300).unwrap().is_none(), "{}", f.name);
        let retry = s.claim_message("w5", now + 31, 300).unwrap().unwrap();
        assert_eq!((retry.row.message.as_str(), retry.row.attempts), ("a", 1), "{}", f.name);
        // An expired lease is anybody's.
        assert_eq!(s.claim_message("w3", now + 400, 300).unwrap().unwrap().row.message, "a");
        // Sent, whoever holds it; only once.
        assert!(s.message_sent("a", "hook", now + 401).unwrap());
        assert!(!s.message_sent("a", "hook", now + 402).unwrap());
        // Given up: kept, not due; retry re-queues it.
        let gone = FailedAttempt { error: "hook: not an http(s) URL".into(), next_attempt: 0, give_up: true };
        assert!(s.message_failed("c", "hook", "w1", now + 403, &gone).unwrap());
        let rows = s.outbox().unwrap();
        let c = rows.iter().find(|r| r.message == "c").unwrap();
        assert_eq!((c.state, c.last_error.as_deref()), (OutboxState::Failed, Some("hook: not an http(s) URL")));
        assert_eq!(s.retry_failed_messages(Some("other")).unwrap(), 0);
        assert_eq!(s.retry_failed_messages(None).unwrap(), 1);
        let next = s.claim_message("w9", now + 1_000, 300).unwrap().unwrap();
        assert!(["b", "c"].contains(&next.row.message.as_str()), "{}", next.row.message);
    }
}

#[test]
fn workers_at_once_claim_each_message_once() {
    for f in common::backends("workers_at_once_claim_each_message_once") {
        let mut s = f.open();
        let n = 40;
        let alerts: Vec<NewAlert> = (0..n).map(|i| alert(&format!("m{i:02}"), T + i)).collect();
        let ds: Vec<NewDelivery> =
            (0..n).map(|i| delivery(&format!("m{i:02}"), "hook", &format!("m{i:02}"), None)).collect();
        s.commit_alerts(&AlertStates::new(), &turn(T, &[], alerts, ds), "x").unwrap().unwrap();
        drop(s);
        let claimed: Vec<Vec<String>> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..4)
                .map(|w| {
                    let loc = f.location.clone();
                    sc.spawn(move || {
                        let mut s = loc.open().unwrap();
                        let mut mine = Vec::new();
                        while let Some(c) = s.claim_message(&format!("w{w}"), 1_000, 3_600).unwrap() {
                            assert!(s.message_sent(&c.row.message, &c.row.destination, 1_001).unwrap());
                            mine.push(c.row.message);
                        }
                        mine
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let all: Vec<&String> = claimed.iter().flatten().collect();
        let distinct: BTreeSet<&String> = all.iter().copied().collect();
        assert_eq!((all.len(), distinct.len()), (n as usize, n as usize), "{}: {claimed:?}", f.name);
    }
}
