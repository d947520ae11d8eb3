//! The alerts as an Atom feed (RFC 4287), newest first: each alert the rules raised or
//! withdrew and the verifier let through (held alerts are not in it), with its title,
//! plain text, kind and owner. Every piece of text is escaped, and characters XML 1.0
//! cannot hold are dropped.

use crate::html::esc;
use citriage_model::time;
use citriage_store::StoredAlert;

/// Text XML can hold: escaped, without the control characters XML 1.0 forbids.
fn xml(s: &str) -> String {
    esc(s).chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\r')).collect()
}

/// The feed of `alerts` (newest first, held ones left out), at most `limit` entries.
pub fn atom(alerts: &[StoredAlert], limit: usize) -> String {
    let mut shown: Vec<&StoredAlert> = alerts.iter().filter(|a| a.held.is_none()).collect();
    shown.sort_by(|a, b| (b.at, &b.key).cmp(&(a.at, &a.key)));
    shown.truncate(limit);
    let updated = shown.first().map_or(0, |a| a.at);
    let mut out =
        String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
    out.push_str("  <title>citriage alerts</title>\n  <id>urn:citriage:alerts</id>\n");
    out.push_str(&format!("  <updated>{}</updated>\n", time::rfc3339(updated)));
    out.push_str("  <link rel=\"self\" href=\"/alerts.atom\"/>\n  <link rel=\"alternate\" href=\"/api/v1/alerts\"/>\n");
    out.push_str("  <author><name>citriage</name></author>\n");
    for a in shown {
        out.push_str("  <entry>\n");
        out.push_str(&format!("    <id>urn:citriage:alert:{}</id>\n", xml(&a.key)));
        out.push_str(&format!("    <title>{}</title>\n", xml(&a.title)));
        out.push_str(&format!("    <updated>{}</updated>\n", time::rfc3339(a.at)));
        out.push_str(&format!("    <category term=\"{}\"/>\n", xml(&a.kind)));
        out.push_str(&format!("    <category term=\"{}\"/>\n", xml(&a.change)));
        if !a.owner.is_empty() {
            out.push_str(&format!("    <category term=\"owner:{}\"/>\n", xml(&a.owner)));
        }
        out.push_str(&format!("    <content type=\"text\">{}</content>\n", xml(&a.text)));
        out.push_str("  </entry>\n");
    }
    out.push_str("</feed>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alert(key: &str, at: i64, title: &str, held: Option<&str>) -> StoredAlert {
        StoredAlert {
            key: key.into(),
            kind: "job-red".into(),
            change: "raised".into(),
            subject: "ci-x".into(),
            owner: "node".into(),
            at,
            title: title.into(),
            text: format!("{title}\n- failed build\n"),
            body: "{}".into(),
            held: held.map(Into::into),
        }
    }

    #[test]
    fn newest_first_escaped_and_without_held_alerts() {
        let a = [
            alert("al-1", 100, "ci-x is red", None),
            alert("al-2", 200, "<script>alert(1)</script> & \u{1b}[31m", None),
            alert("al-3", 300, "held one", Some("build-url")),
        ];
        let f = atom(&a, 10);
        assert!(
            f.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">")
        );
        assert!(!f.contains("<script>") && f.contains("&lt;script&gt;") && !f.contains('\u{1b}'), "{f}");
        assert!(!f.contains("held one"));
        let first = f.find("al-2").unwrap();
        assert!(first < f.find("al-1").unwrap(), "newest first");
        assert!(f.contains("<updated>1970-01-01T00:03:20Z</updated>"), "{f}");
        assert_eq!(f.matches("<entry>").count(), 2);
        assert_eq!(atom(&a, 1).matches("<entry>").count(), 1);
        assert_eq!(f, atom(&a, 10));
    }
}
