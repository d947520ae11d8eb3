//! The `[alerts]` section of the team configuration file: the rules' settings, the
//! owners' routes (owner → destination names; `*` for the rest), the destinations, the
//! SMTP relay and how the outbox is worked (lease, backoff). The file's reader embeds
//! it; [`AlertsConfig::check`] names the key of every error
//! (`alerts.destinations[1].url: …`).

use crate::destination::{DestinationConfig, DestinationKind, SmtpConfig};
use citriage_alerts::retry::Backoff;
use citriage_alerts::route::{Routes, ANY_OWNER};
use citriage_alerts::Rules;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

fn default_lease() -> String {
    "5m".into()
}

fn default_backoff() -> String {
    "30s".into()
}

fn default_backoff_max() -> String {
    "1h".into()
}

/// `[alerts]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertsConfig {
    /// The rules' settings (`[alerts.rules]`).
    #[serde(default)]
    pub rules: Rules,
    /// Owner (SIG or team, any spelling) → destination names; `*` takes the alerts of
    /// owners not listed and unowned ones.
    #[serde(default)]
    pub routes: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub destinations: Vec<DestinationConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smtp: Option<SmtpConfig>,
    /// How long a sender holds a message it is sending.
    #[serde(default = "default_lease")]
    pub lease: String,
    /// The wait after a failed delivery, doubled per failure up to `backoff_max` (and
    /// never shorter than the receiver asks).
    #[serde(default = "default_backoff")]
    pub backoff: String,
    #[serde(default = "default_backoff_max")]
    pub backoff_max: String,
}

impl Default for AlertsConfig {
    fn default() -> Self {
        AlertsConfig {
            rules: Rules::default(),
            routes: BTreeMap::new(),
            destinations: Vec::new(),
            smtp: None,
            lease: default_lease(),
            backoff: default_backoff(),
            backoff_max: default_backoff_max(),
        }
    }
}

fn seconds(key: &str, v: &str) -> Result<i64, String> {
    match citriage_model::time::parse_duration(v) {
        Some(s) if s > 0 => Ok(s),
        _ => Err(format!("{key}: {v:?} is not a duration such as 30s, 5m or 1h")),
    }
}

impl AlertsConfig {
    /// The section's own errors, each naming its key under `alerts.`.
    pub fn check(&self) -> Result<(), String> {
        self.rules.check().map_err(|e| format!("alerts.rules.{e}"))?;
        let mut names = BTreeSet::new();
        for (i, d) in self.destinations.iter().enumerate() {
            d.check().map_err(|e| format!("alerts.destinations[{i}].{e}"))?;
            if !names.insert(d.name.as_str()) {
                return Err(format!("alerts.destinations[{i}].name: {:?} is used twice", d.name));
            }
        }
        for (owner, dests) in &self.routes {
            for (i, n) in dests.iter().enumerate() {
                if !names.contains(n.as_str()) {
                    return Err(format!("alerts.routes.{owner}[{i}]: no destination is named {n:?}"));
                }
            }
        }
        let email = self.destinations.iter().position(|d| d.kind == DestinationKind::Email);
        match (&self.smtp, email) {
            (Some(s), _) => s.check().map_err(|e| format!("alerts.smtp.{e}"))?,
            (None, Some(i)) => {
                return Err(format!("alerts.destinations[{i}]: an e-mail destination needs [alerts.smtp]"));
            }
            (None, None) => {}
        }
        seconds("alerts.lease", &self.lease)?;
        let (b, m) = (seconds("alerts.backoff", &self.backoff)?, seconds("alerts.backoff_max", &self.backoff_max)?);
        if m < b {
            return Err("alerts.backoff_max: shorter than alerts.backoff".into());
        }
        Ok(())
    }

    /// The routes the rules' alerts follow.
    pub fn routes(&self) -> Routes {
        let digest = self.destinations.iter().filter(|d| d.digest).map(|d| d.name.clone());
        Routes::new(self.routes.iter().map(|(o, d)| (o.as_str(), d.as_slice())), digest)
    }

    /// The destinations by name.
    pub fn destinations_by_name(&self) -> BTreeMap<String, DestinationConfig> {
        self.destinations.iter().map(|d| (d.name.clone(), d.clone())).collect()
    }

    /// The lease in seconds (5 minutes when unreadable; `check` reports it).
    pub fn lease_secs(&self) -> i64 {
        seconds("", &self.lease).unwrap_or(300)
    }

    /// The backoff (30 s doubling to an hour when unreadable; `check` reports it).
    pub fn backoff(&self) -> Backoff {
        Backoff {
            first: seconds("", &self.backoff).unwrap_or(30),
            max: seconds("", &self.backoff_max).unwrap_or(citriage_model::time::HOUR),
        }
    }

    /// True when some owner's alerts go somewhere.
    pub fn routes_anything(&self) -> bool {
        self.routes.values().any(|d| !d.is_empty()) || self.routes.contains_key(ANY_OWNER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: serde_json::Value) -> AlertsConfig {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn every_error_names_its_key() {
        let ok = parse(serde_json::json!({
            "routes": {"sig-node": ["node"], "*": ["all"]},
            "destinations": [
                {"name": "node", "kind": "slack", "url_env": "NODE_HOOK"},
                {"name": "all", "kind": "email", "to": ["ci@example.org"], "digest": true}
            ],
            "smtp": {"host": "smtp.example.org", "from": "citriage@example.org"}
        }));
        assert_eq!(ok.check(), Ok(()));
        assert!(ok.routes().is_digest("all"));
        let cases = [
            (serde_json::json!({"routes": {"node": ["nobody"]}}), "alerts.routes.node[0]:"),
            (
                serde_json::json!({"destinations": [{"name": "m", "kind": "email", "to": ["a@example.org"]}]}),
                "alerts.destinations[0]: an e-mail",
            ),
            (
                serde_json::json!({"destinations": [{"name": "h", "kind": "webhook", "url": "ftp://x/y"}]}),
                "alerts.destinations[0].url:",
            ),
            (
                serde_json::json!({"destinations": [{"name": "h", "kind": "webhook", "url": "https://x/y"}, {"name": "h", "kind": "webhook", "url": "https://x/z"}]}),
                "alerts.destinations[1].name:",
            ),
            (serde_json::json!({"rules": {"failures_to_alert": 0}}), "alerts.rules.failures_to_alert:"),
            (serde_json::json!({"backoff": "soon"}), "alerts.backoff:"),
            (serde_json::json!({"backoff": "2h", "backoff_max": "1h"}), "alerts.backoff_max:"),
        ];
        for (v, want) in cases {
            let e = parse(v.clone()).check().unwrap_err();
            assert!(e.starts_with(want), "{v}: {e}");
        }
        assert!(serde_json::from_value::<AlertsConfig>(serde_json::json!({"rulez": {}})).is_err());
    }
}
