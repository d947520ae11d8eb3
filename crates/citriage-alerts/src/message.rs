//! The bytes a destination receives for one outbox message (one alert, or a day's
//! digest). Every message carries its idempotency key: a webhook's body field
//! `idempotency_key` (the sender adds the `Idempotency-Key` header), an e-mail's
//! `Message-ID` (and `X-Citriage-Key`), so a receiver can drop a repeat.

use crate::alert::Alert;
use crate::text;
use citriage_model::{time, Day};
use serde_json::json;

/// A webhook's payload shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WebhookFormat {
    /// Slack-compatible (`{"text": …}` in `mrkdwn`; Mattermost and others take it too).
    Slack,
    /// The alerts as JSON.
    Json,
}

/// Slack refuses longer texts; a digest past this says how many alerts it left out.
pub const SLACK_TEXT_LIMIT: usize = 35_000;

/// The header of a digest.
fn digest_heading(day: Day, n: usize) -> String {
    format!("citriage digest for {day}: {n} {}", if n == 1 { "alert" } else { "alerts" })
}

/// One alert as JSON: its fields, its text as plain text and Markdown.
pub fn alert_json(a: &Alert) -> serde_json::Value {
    json!({
        "key": a.key,
        "kind": a.kind,
        "change": a.change,
        "subject": a.subject,
        "owner": a.owner,
        "at": time::rfc3339(a.at),
        "title": text::title(a),
        "text": text::plain(a),
        "markdown": text::markdown(a),
        "evidence": a.evidence.iter().map(|e| &e.id).collect::<Vec<_>>(),
        "refs": a.refs,
        "withdraw_when": text::plain_line(&a.withdraw_when),
        "withdraws": a.withdraws,
    })
}

/// A webhook's body for the message `key` carrying `alerts` (a digest when `digest` names its day).
pub fn webhook_body(format: WebhookFormat, key: &str, alerts: &[Alert], digest: Option<Day>) -> Vec<u8> {
    let v = match format {
        WebhookFormat::Json => json!({
            "idempotency_key": key,
            "digest_day": digest.map(|d| d.to_string()),
            "alerts": alerts.iter().map(alert_json).collect::<Vec<_>>(),
        }),
        WebhookFormat::Slack => {
            let mut text = String::new();
            if let Some(day) = digest {
                text.push_str(&format!("*{}*\n\n", citriage_model::escape::slack(&digest_heading(day, alerts.len()))));
            }
            for (i, a) in alerts.iter().enumerate() {
                let part = text::slack(a);
                if text.len() + part.len() > SLACK_TEXT_LIMIT {
                    text.push_str(&format!("… and {} more (see the dashboard's alert feed)\n", alerts.len() - i));
                    break;
                }
                text.push_str(&part);
                text.push('\n');
            }
            json!({ "text": text.trim_end(), "idempotency_key": key })
        }
    };
    let mut b = serde_json::to_vec(&v).unwrap_or_default();
    b.push(b'\n');
    b
}

/// An e-mail address citriage may put in an envelope and a header: `local@domain`,
/// printable ASCII without spaces, angle brackets, commas, quotes or backslashes.
pub fn valid_address(a: &str) -> bool {
    let Some((local, domain)) = a.split_once('@') else { return false };
    let ok = |b: u8| b.is_ascii_graphic() && !b"<>,;:\"\\()[]@".contains(&b);
    !local.is_empty()
        && a.len() <= 254
        && local.bytes().all(ok)
        && domain.bytes().all(ok)
        && (domain.contains('.') || domain == "localhost")
        && !domain.starts_with(['.', '-'])
        && !domain.ends_with('.')
}

/// A header value: one line, control characters removed; RFC 2047-encoded (base64,
/// UTF-8) when it is not plain ASCII.
fn header_value(s: &str) -> String {
    let flat: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let flat = flat.trim();
    if flat.is_ascii() {
        return flat.chars().take(900).collect();
    }
    // Encoded words of at most 45 bytes of text each (60 base64 characters).
    let mut words = Vec::new();
    let mut chunk = String::new();
    for c in flat.chars() {
        if chunk.len() + c.len_utf8() > 45 {
            words.push(std::mem::take(&mut chunk));
        }
        chunk.push(c);
    }
    if !chunk.is_empty() {
        words.push(chunk);
    }
    words.iter().take(20).map(|w| format!("=?UTF-8?B?{}?=", base64(w.as_bytes()))).collect::<Vec<_>>().join("\r\n ")
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// What an e-mail message is made of.
#[derive(Debug, Clone)]
pub struct Email<'a> {
    pub from: &'a str,
    pub to: &'a [String],
    /// The message's key (its idempotency key).
    pub key: &'a str,
    pub alerts: &'a [Alert],
    pub digest: Option<Day>,
}

/// The `Message-ID` of the message `key` sent from `from`: the same for every copy.
pub fn message_id(key: &str, from: &str) -> String {
    let domain = from.rsplit_once('@').map(|(_, d)| d).unwrap_or("citriage.invalid");
    format!("<{key}@{domain}>")
}

/// The message (RFC 5322, CRLF line ends, a text/plain UTF-8 body in base64 so no line
/// is too long, no bare CR or LF, and no line starts with a dot). Dated with its
/// newest alert's time, so every copy has the same bytes. An error names a bad address.
pub fn email(e: &Email<'_>) -> Result<Vec<u8>, String> {
    for a in std::iter::once(e.from).chain(e.to.iter().map(String::as_str)) {
        if !valid_address(a) {
            return Err(format!("{a:?} is not an e-mail address citriage sends to or from"));
        }
    }
    if e.to.is_empty() {
        return Err("no recipient".into());
    }
    let subject = match (e.digest, e.alerts) {
        (Some(day), alerts) => digest_heading(day, alerts.len()),
        (None, [a]) => format!("[citriage] {}", text::title(a)),
        (None, alerts) => format!("[citriage] {} alerts", alerts.len()),
    };
    let mut body = String::new();
    if let Some(day) = e.digest {
        body.push_str(&digest_heading(day, e.alerts.len()));
        body.push_str("\n\n");
    }
    for a in e.alerts {
        body.push_str(&text::plain(a));
        body.push('\n');
    }
    let date = e.alerts.iter().map(|a| a.at).max().unwrap_or(0);
    let mut m = String::new();
    let mut h = |k: &str, v: &str| m.push_str(&format!("{k}: {v}\r\n"));
    h("From", e.from);
    h("To", &e.to.join(", "));
    h("Subject", &header_value(&subject));
    h("Date", &time::rfc5322(date));
    h("Message-ID", &message_id(e.key, e.from));
    h("X-Citriage-Key", e.key);
    h("MIME-Version", "1.0");
    h("Content-Type", "text/plain; charset=utf-8");
    h("Content-Transfer-Encoding", "base64");
    m.push_str("\r\n");
    let encoded = base64(body.as_bytes());
    for chunk in encoded.as_bytes().chunks(76) {
        m.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        m.push_str("\r\n");
    }
    Ok(m.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alert::{name, t, AlertKind, Change};

    fn alert(title: &str) -> Alert {
        Alert {
            key: "al-00000000000000aa".into(),
            kind: AlertKind::PatternNew,
            change: Change::Raised,
            subject: "c1".into(),
            owner: "node".into(),
            at: 1_795_000_000,
            title: vec![t("New failure pattern "), name(title)],
            lines: vec![vec![t("x")]],
            evidence: vec![],
            refs: vec![],
            withdraw_when: vec![t("quiet")],
            withdraws: None,
        }
    }

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (i, o) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn addresses_are_checked() {
        for ok in ["a@example.org", "sig-node+ci@lists.example.org", "me@localhost"] {
            assert!(valid_address(ok), "{ok}");
        }
        for bad in [
            "",
            "a",
            "a@b",
            "a b@example.org",
            "a@example.org\r\nBcc: x@y.z",
            "<a@example.org>",
            "a@@example.org",
            "a@.example.org",
        ] {
            assert!(!valid_address(bad), "{bad:?}");
        }
    }

    #[test]
    fn an_email_carries_its_key_and_no_header_injection() {
        let to = vec!["node@example.org".to_string()];
        let a = alert("c1\r\nBcc: victim@example.org é");
        let m = String::from_utf8(
            email(&Email {
                from: "ci@example.org",
                to: &to,
                key: &a.key,
                alerts: std::slice::from_ref(&a),
                digest: None,
            })
            .unwrap(),
        )
        .unwrap();
        assert!(m.contains("\r\nMessage-ID: <al-00000000000000aa@example.org>\r\n"), "{m}");
        assert!(!m.contains("\r\nBcc:"), "{m}");
        let subject = m.lines().find(|l| l.starts_with("Subject:")).unwrap();
        assert!(subject.contains("=?UTF-8?B?"), "{subject}");
        // Every line ends in CRLF and is short; the body decodes back to the text.
        assert!(m.split("\r\n").all(|l| l.len() <= 998 && !l.contains('\n') && !l.contains('\r')));
        let bad = vec!["x@example.org\r\nBcc: y@example.org".to_string()];
        assert!(email(&Email { from: "ci@example.org", to: &bad, key: "k", alerts: &[a], digest: None }).is_err());
    }

    #[test]
    fn webhook_bodies_carry_the_key() {
        let a = alert("c1");
        for f in [WebhookFormat::Slack, WebhookFormat::Json] {
            let v: serde_json::Value =
                serde_json::from_slice(&webhook_body(f, "dg-1", &[a.clone(), a.clone()], Some(Day(20_000)))).unwrap();
            assert_eq!(v["idempotency_key"], "dg-1", "{v}");
        }
        let v: serde_json::Value =
            serde_json::from_slice(&webhook_body(WebhookFormat::Json, &a.key, std::slice::from_ref(&a), None)).unwrap();
        assert_eq!(v["alerts"][0]["key"], a.key.as_str());
        assert_eq!(v["alerts"][0]["kind"], "pattern-new");
        assert!(v["digest_day"].is_null());
        let many: Vec<Alert> = (0..2000).map(|_| a.clone()).collect();
        let v: serde_json::Value =
            serde_json::from_slice(&webhook_body(WebhookFormat::Slack, "k", &many, Some(Day(1)))).unwrap();
        let text = v["text"].as_str().unwrap();
        assert!(text.len() <= SLACK_TEXT_LIMIT + 200 && text.contains("more (see the dashboard"), "{}", text.len());
    }
}
