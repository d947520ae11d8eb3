//! Where alerts go, as the team configuration file says (`[[alerts.destinations]]`,
//! `[alerts.smtp]`): a Slack-compatible webhook, a JSON webhook or e-mail recipients,
//! each optionally in digest mode. A webhook URL may be written in the file or, since
//! Slack's URLs are secrets, named by an environment variable; the SMTP user and
//! password come from the environment only. Errors name the setting and never print a
//! URL (only its scheme).

use crate::smtp::{Credentials, SmtpSettings, TlsMode};
use citriage_alerts::message::{valid_address, WebhookFormat};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a destination is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DestinationKind {
    /// A Slack-compatible incoming webhook (`{"text": …}`).
    Slack,
    /// A webhook that receives the alerts as JSON.
    Webhook,
    /// E-mail through `[alerts.smtp]`.
    Email,
}

/// One destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DestinationConfig {
    pub name: String,
    pub kind: DestinationKind,
    /// The webhook's URL (http or https).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding the webhook's URL (instead of `url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_env: Option<String>,
    /// E-mail recipients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<String>,
    /// One message a day holding the day's alerts, instead of one per alert.
    #[serde(default)]
    pub digest: bool,
}

/// Where a destination's messages go, resolved.
#[derive(Clone, PartialEq, Eq)]
pub enum Target {
    Webhook { url: String, format: WebhookFormat },
    Email { to: Vec<String> },
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Webhook { format, .. } => write!(f, "Webhook({format:?}, url redacted)"),
            Target::Email { to } => write!(f, "Email({to:?})"),
        }
    }
}

/// Why a URL is not one citriage posts to, without the URL itself (it may hold a
/// secret): `None` when it is a plain http(s) URL.
pub fn url_problem(url: &str) -> Option<String> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http") | Some("https") => {
            let rest = &url[url.find("://").map_or(0, |i| i + 3)..];
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            if host.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
                Some("not a valid http(s) URL (no host, or spaces in it)".into())
            } else {
                None
            }
        }
        Some(s) => Some(format!("not an http(s) URL (scheme `{}`)", citriage_model::escape::one_line(s))),
        None => Some("not an http(s) URL (no scheme)".into()),
    }
}

impl DestinationConfig {
    /// The settings' own errors, each starting with the key it is about.
    pub fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() || self.name.chars().any(|c| c.is_control()) {
            return Err("name: empty or with control characters".into());
        }
        match self.kind {
            DestinationKind::Slack | DestinationKind::Webhook => {
                if !self.to.is_empty() {
                    return Err("to: only e-mail destinations have recipients".into());
                }
                match (&self.url, &self.url_env) {
                    (Some(u), None) => url_problem(u).map_or(Ok(()), |p| Err(format!("url: {p}"))),
                    (None, Some(v)) if !v.trim().is_empty() => Ok(()),
                    (None, Some(_)) => Err("url_env: empty".into()),
                    (Some(_), Some(_)) => Err("url: give `url` or `url_env`, not both".into()),
                    (None, None) => Err("url: a webhook needs `url` or `url_env`".into()),
                }
            }
            DestinationKind::Email => {
                if self.url.is_some() || self.url_env.is_some() {
                    return Err("url: e-mail destinations have recipients (`to`), not a URL".into());
                }
                if self.to.is_empty() {
                    return Err("to: an e-mail destination needs at least one recipient".into());
                }
                match self.to.iter().position(|a| !valid_address(a)) {
                    Some(i) => Err(format!("to[{i}]: {:?} is not an e-mail address", self.to[i])),
                    None => Ok(()),
                }
            }
        }
    }

    /// Where its messages go, the URL read from the environment when so configured.
    pub fn target(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Target, String> {
        let format = match self.kind {
            DestinationKind::Email => return Ok(Target::Email { to: self.to.clone() }),
            DestinationKind::Slack => WebhookFormat::Slack,
            DestinationKind::Webhook => WebhookFormat::Json,
        };
        let url = match (&self.url, &self.url_env) {
            (Some(u), _) => u.clone(),
            (None, Some(v)) => env(v).filter(|u| !u.trim().is_empty()).ok_or_else(|| format!("{v} is not set"))?,
            (None, None) => return Err("no URL configured".into()),
        };
        if let Some(p) = url_problem(&url) {
            let from = self.url_env.as_ref().map(|v| format!(" (from {v})")).unwrap_or_default();
            return Err(format!("its URL{from} is {p}"));
        }
        Ok(Target::Webhook { url, format })
    }
}

fn default_port() -> u16 {
    587
}

fn default_tls() -> TlsMode {
    TlsMode::Opportunistic
}

fn default_user_env() -> String {
    "CITRIAGE_SMTP_USER".into()
}

fn default_password_env() -> String {
    "CITRIAGE_SMTP_PASSWORD".into()
}

fn default_timeout() -> String {
    "30s".into()
}

/// The SMTP relay e-mail destinations go through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmtpConfig {
    pub host: String,
    #[serde(default = "default_port")]
    pub port: u16,
    /// The sender address (`From`, the envelope, the `Message-ID`'s domain).
    pub from: String,
    /// `opportunistic` (STARTTLS when offered), `required` or `off`.
    #[serde(default = "default_tls")]
    pub tls: TlsMode,
    /// PEM certificates trusted besides the web's roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// The environment variables of the user and password (only when both are set is
    /// there a login, and only inside TLS).
    #[serde(default = "default_user_env")]
    pub user_env: String,
    #[serde(default = "default_password_env")]
    pub password_env: String,
    /// Each read and write of a session.
    #[serde(default = "default_timeout")]
    pub timeout: String,
}

impl SmtpConfig {
    /// The settings' own errors, each starting with the key it is about.
    pub fn check(&self) -> Result<(), String> {
        if self.host.trim().is_empty() || self.host.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return Err("host: empty or with spaces".into());
        }
        if self.port == 0 {
            return Err("port: 0".into());
        }
        if !valid_address(&self.from) {
            return Err(format!("from: {:?} is not an e-mail address", self.from));
        }
        match citriage_model::time::parse_duration(&self.timeout) {
            Some(s) if s > 0 => Ok(()),
            _ => Err(format!("timeout: {:?} is not a duration such as 30s or 2m", self.timeout)),
        }
    }

    /// The client's settings, the credentials read from the environment.
    pub fn settings(&self, env: &dyn Fn(&str) -> Option<String>) -> SmtpSettings {
        let credentials = match (env(&self.user_env), env(&self.password_env)) {
            (Some(u), Some(p)) if !u.is_empty() && !p.is_empty() => Some(Credentials::new(u, p)),
            _ => None,
        };
        let timeout = citriage_model::time::parse_duration(&self.timeout).filter(|s| *s > 0).unwrap_or(30);
        let client_name = self.from.rsplit_once('@').map(|(_, d)| d.to_string()).unwrap_or_else(|| "localhost".into());
        SmtpSettings {
            host: self.host.clone(),
            port: self.port,
            tls: self.tls,
            ca_file: self.ca_file.as_ref().map(Into::into),
            client_name,
            timeout: Duration::from_secs(timeout as u64),
            credentials,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(url: Option<&str>, url_env: Option<&str>) -> DestinationConfig {
        DestinationConfig {
            name: "n".into(),
            kind: DestinationKind::Slack,
            url: url.map(Into::into),
            url_env: url_env.map(Into::into),
            to: vec![],
            digest: false,
        }
    }

    #[test]
    fn urls_are_refused_by_scheme_without_printing_them() {
        assert!(url_problem("https://hooks.example.org/services/T0/B0/SECRET").is_none());
        let p = url_problem("ftp://hooks.example.org/SECRET").unwrap();
        assert!(p.contains("`ftp`") && !p.contains("SECRET"), "{p}");
        assert!(url_problem("hooks.example.org/SECRET").unwrap().contains("no scheme"));
        assert!(url_problem("https:///x").is_some());
        let e = hook(Some("file:///etc/passwd"), None).check().unwrap_err();
        assert!(e.starts_with("url: ") && !e.contains("passwd"), "{e}");
        assert!(hook(None, None).check().unwrap_err().starts_with("url:"));
        let env = |k: &str| (k == "HOOK").then(|| "gopher://x/SECRET".to_string());
        let e = hook(None, Some("HOOK")).target(&env).unwrap_err();
        assert!(e.contains("(from HOOK)") && e.contains("`gopher`") && !e.contains("SECRET"), "{e}");
        assert_eq!(hook(None, Some("UNSET")).target(&env).unwrap_err(), "UNSET is not set");
        let env = |_: &str| Some("https://hooks.example.org/SECRET".to_string());
        let t = hook(None, Some("HOOK")).target(&env).unwrap();
        assert!(!format!("{t:?}").contains("SECRET"));
    }

    #[test]
    fn email_destinations_and_the_relay_are_checked_by_key() {
        let mut d = hook(None, None);
        d.kind = DestinationKind::Email;
        assert!(d.check().unwrap_err().starts_with("to:"));
        d.to = vec!["ok@example.org".into(), "bad".into()];
        assert!(d.check().unwrap_err().starts_with("to[1]:"));
        let s: SmtpConfig =
            serde_json::from_value(serde_json::json!({"host": "smtp.example.org", "from": "ci@example.org"})).unwrap();
        assert_eq!((s.port, s.tls), (587, TlsMode::Opportunistic));
        assert!(s.check().is_ok());
        let none = |_: &str| None;
        assert!(s.settings(&none).credentials.is_none());
        let both = |k: &str| Some(format!("{k}-value"));
        let st = s.settings(&both);
        assert_eq!(st.credentials.as_ref().unwrap().user, "CITRIAGE_SMTP_USER-value");
        assert!(!format!("{st:?}").contains("CITRIAGE_SMTP_PASSWORD-value"));
        let bad = SmtpConfig { timeout: "soon".into(), ..s };
        assert!(bad.check().unwrap_err().starts_with("timeout:"));
    }
}
