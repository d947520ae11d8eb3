//! Where alerts go. The owners configuration maps an owner (a SIG or team, in
//! `citriage_model::owner`'s one spelling) to destination names; `*` takes alerts of
//! owners not listed and unowned ones. A withdrawal goes where its alert went (the
//! rules give it the raised alert's owner). A destination in digest mode receives one
//! message per day holding that day's alerts, in order.

use crate::alert::Alert;
use citriage_model::Day;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// The owner key that catches every alert no other owner takes.
pub const ANY_OWNER: &str = "*";

/// Owners → destinations, and the destinations that take a daily digest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routes {
    owners: BTreeMap<String, BTreeSet<String>>,
    digest: BTreeSet<String>,
}

impl Routes {
    /// Owner names in any spelling (`sig-node`, `[sig-node]`, `node`) are read as one.
    pub fn new<'a>(
        owners: impl IntoIterator<Item = (&'a str, &'a [String])>,
        digest: impl IntoIterator<Item = String>,
    ) -> Routes {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (owner, dests) in owners {
            let o =
                if owner.trim() == ANY_OWNER { ANY_OWNER.to_string() } else { citriage_model::owner::canonical(owner) };
            out.entry(o).or_default().extend(dests.iter().cloned());
        }
        Routes { owners: out, digest: digest.into_iter().collect() }
    }

    /// The destinations of an alert, by name.
    pub fn destinations(&self, a: &Alert) -> BTreeSet<String> {
        let owner = citriage_model::owner::canonical(&a.owner);
        self.owners
            .get(owner.as_str())
            .filter(|_| !owner.is_empty())
            .or_else(|| self.owners.get(ANY_OWNER))
            .cloned()
            .unwrap_or_default()
    }

    pub fn is_digest(&self, destination: &str) -> bool {
        self.digest.contains(destination)
    }

    /// Every destination named by a route.
    pub fn named(&self) -> BTreeSet<&str> {
        self.owners.values().flatten().map(String::as_str).collect()
    }
}

/// One alert's place in the outbox: the message that carries it to a destination.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Planned {
    /// The message's key (its idempotency key): the alert's own, or the digest's.
    pub message: String,
    pub destination: String,
    pub alert: String,
    /// The digest's day, for a destination in digest mode.
    pub digest_day: Option<Day>,
}

/// The key of a destination's digest of a day.
pub fn digest_key(destination: &str, day: Day) -> String {
    let mut h = Sha256::new();
    for f in ["digest", destination, &day.to_string()] {
        h.update((f.len() as u64).to_be_bytes());
        h.update(f.as_bytes());
    }
    format!("dg-{}", citriage_model::evidence::hex(&h.finalize()[..8]))
}

/// The outbox rows for `alerts`, sorted.
pub fn plan(alerts: &[Alert], routes: &Routes) -> Vec<Planned> {
    let mut out = Vec::new();
    for a in alerts {
        for d in routes.destinations(a) {
            let (message, digest_day) =
                if routes.is_digest(&d) { (digest_key(&d, a.day()), Some(a.day())) } else { (a.key.clone(), None) };
            out.push(Planned { message, destination: d, alert: a.key.clone(), digest_day });
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alert::{AlertKind, Change};

    fn alert(owner: &str, at: i64) -> Alert {
        Alert {
            key: format!("al-{owner}-{at}"),
            kind: AlertKind::JobRed,
            change: Change::Raised,
            subject: "ci-x".into(),
            owner: owner.into(),
            at,
            title: vec![],
            lines: vec![],
            evidence: vec![],
            refs: vec![],
            withdraw_when: vec![],
            withdraws: None,
        }
    }

    #[test]
    fn owners_in_any_spelling_route_to_their_destinations() {
        let node = ["node-slack".to_string(), "node-mail".to_string()];
        let any = ["ci-signal".to_string()];
        let r = Routes::new([("sig-node", &node[..]), ("*", &any[..])], ["node-mail".to_string()]);
        assert_eq!(r.destinations(&alert("[sig-Node]", 0)), node.iter().cloned().collect());
        assert_eq!(r.destinations(&alert("storage", 0)), any.iter().cloned().collect());
        assert_eq!(r.destinations(&alert("", 0)), any.iter().cloned().collect());
        let day = 86_400 * 20_000;
        let p = plan(&[alert("node", day + 10), alert("node", day + 20), alert("node", day + 86_400)], &r);
        let mail: Vec<&Planned> = p.iter().filter(|p| p.destination == "node-mail").collect();
        let slack: Vec<&Planned> = p.iter().filter(|p| p.destination == "node-slack").collect();
        assert_eq!(slack.len(), 3);
        assert!(slack.iter().all(|p| p.message == p.alert && p.digest_day.is_none()));
        // Two digests: the first day's two alerts share one message.
        let keys: BTreeSet<&str> = mail.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(keys.len(), 2, "{mail:?}");
        assert_eq!(mail.iter().filter(|p| p.digest_day == Some(Day(20_000))).count(), 2);
        assert!(keys.iter().all(|k| k.starts_with("dg-")));
        assert_ne!(digest_key("a", Day(1)), digest_key("b", Day(1)));
        let none = Routes::default();
        assert!(plan(&[alert("node", 0)], &none).is_empty());
    }
}
