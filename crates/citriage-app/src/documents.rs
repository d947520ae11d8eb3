//! What the use cases record in the store's documents table so the dashboard can serve
//! it without reading files: triage reports (kind `triage`, key `{dataset}/{date}`),
//! payload analyses (kind `payload`, key = the tag) and verifier results (kind
//! `verify`). A document's `as_of` is the date or time its content describes, never
//! the wall clock. The `reports` command lists and prints them.

use crate::error::{Error, Result};
use citriage_analysis::Triage;
use citriage_model::evidence::sha256_hex;
use citriage_model::Day;
use citriage_payload::PayloadAnalysis;
use citriage_store::{Document, DocumentHeader, Store};

pub const MARKDOWN: &str = "text/markdown";
pub const JSON: &str = "application/json";
pub const HTML: &str = "text/html";

/// The key of a triage report: `{dataset}/{snapshot date}`.
pub fn triage_key(t: &Triage) -> String {
    format!("{}/{}", t.snapshot.dataset.as_str(), t.snapshot.date)
}

/// Records a triage report: its Markdown and its JSON, exactly as written to
/// `report.md` and `report.json`.
pub fn record_triage(store: &mut Store, t: &Triage, markdown: &str, json: &str) -> Result<()> {
    let key = triage_key(t);
    let title = format!("{} triage {}", t.snapshot.dataset.title(), t.snapshot.date);
    let as_of = t.snapshot.date.to_string();
    for (media_type, body) in [(MARKDOWN, markdown), (JSON, json)] {
        store.put_document(&Document {
            kind: "triage".into(),
            key: key.clone(),
            media_type: media_type.into(),
            title: title.clone(),
            as_of: as_of.clone(),
            body: body.to_string(),
        })?;
    }
    Ok(())
}

/// What a payload analysis describes: the payload's creation time, else the cutoff
/// it was analyzed at, else nothing.
pub fn payload_as_of(a: &PayloadAnalysis) -> String {
    a.payload.created.clone().or_else(|| a.payload.as_of.clone()).unwrap_or_default()
}

/// Records a payload analysis as JSON, HTML and Markdown (the report renderers'
/// exact output).
pub fn record_payload(store: &mut Store, a: &PayloadAnalysis) -> Result<()> {
    let title = format!("Payload {}", a.payload.tag);
    let as_of = payload_as_of(a);
    let bodies = [
        (JSON, citriage_payload::render_json(a)),
        (HTML, citriage_payload::render_html(a)),
        (MARKDOWN, citriage_payload::render_markdown(a)),
    ];
    for (media_type, body) in bodies {
        store.put_document(&Document {
            kind: "payload".into(),
            key: a.payload.tag.clone(),
            media_type: media_type.into(),
            title: title.clone(),
            as_of: as_of.clone(),
            body,
        })?;
    }
    Ok(())
}

/// The stored document (not a verifier result) whose body is exactly these bytes:
/// the first in the store's listing order when several are.
pub fn find_by_body(store: &Store, body: &[u8]) -> Result<Option<DocumentHeader>> {
    let sha = sha256_hex(body);
    Ok(store.documents(None)?.into_iter().find(|h| h.kind != "verify" && h.sha256 == sha))
}

/// The date a Markdown report states: a `**Date**:` line among its first lines, else
/// a date in its title.
pub fn stated_date(text: &str) -> Option<Day> {
    let head: Vec<&str> = text.lines().take(30).collect();
    head.iter()
        .find(|l| l.trim_start().starts_with("**Date**"))
        .and_then(|l| Day::find_in(l))
        .or_else(|| head.iter().find(|l| l.starts_with("# ")).and_then(|l| Day::find_in(l)))
}

/// Where a verified text came from, for naming its result.
pub struct Verified<'a> {
    /// The stored document it is (`--stored`, or the same bytes as a stored one).
    pub document: Option<&'a DocumentHeader>,
    /// The file's name when it is not a stored document.
    pub file_name: &'a str,
    /// The text, for the date it states.
    pub text: &'a str,
}

/// The key a verifier result is stored under: `{kind}/{key}` of the verified
/// document, else the file name.
pub fn verify_key(v: &Verified<'_>) -> String {
    match v.document {
        Some(h) => format!("{}/{}", h.kind, h.key),
        None => v.file_name.to_string(),
    }
}

/// Records a verifier result (the JSON `verify --format json` prints); returns its key.
pub fn record_verification(store: &mut Store, v: &Verified<'_>, result_json: &str) -> Result<String> {
    let key = verify_key(v);
    let as_of = match v.document {
        Some(h) => h.as_of.clone(),
        None => stated_date(v.text).map(|d| d.to_string()).unwrap_or_default(),
    };
    store.put_document(&Document {
        kind: "verify".into(),
        key: key.clone(),
        media_type: JSON.into(),
        title: format!("Verification of {key}"),
        as_of,
        body: result_json.to_string(),
    })?;
    Ok(key)
}

/// Splits `KIND/KEY` (the key may contain further slashes).
pub fn split_stored(spec: &str) -> Result<(&str, &str)> {
    match spec.split_once('/') {
        Some((kind, key)) if !kind.is_empty() && !key.is_empty() => Ok((kind, key)),
        _ => Err(Error::input(format!(
            "--stored {spec:?}: expected KIND/KEY, e.g. triage/failures/2026-11-21 (`citriage reports` lists them)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stated_date_reads_the_date_line_then_the_title() {
        let r = "# Kubernetes CI Failures — Triage Report\n\n**Date**: 2026-11-21 (the snapshot's date)  \n";
        assert_eq!(stated_date(r).map(|d| d.to_string()), Some("2026-11-21".into()));
        let t = "# Flakes triage 2026-03-04\n\nbody 2027-01-01\n";
        assert_eq!(stated_date(t).map(|d| d.to_string()), Some("2026-03-04".into()));
        assert_eq!(stated_date("# No date\n\nlater 2026-01-01\n"), None);
    }

    #[test]
    fn stored_specs_split_at_the_first_slash() {
        assert_eq!(split_stored("triage/failures/2026-11-21").unwrap(), ("triage", "failures/2026-11-21"));
        for bad in ["triage", "/x", "triage/", ""] {
            let e = split_stored(bad).unwrap_err();
            assert!(e.is_bad_input() && e.to_string().contains("KIND/KEY"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_file_equal_to_a_stored_document_takes_its_key_and_date() {
        let mut store = Store::open_in_memory().unwrap();
        let doc = |kind: &str, key: &str, body: &str| Document {
            kind: kind.into(),
            key: key.into(),
            media_type: MARKDOWN.into(),
            title: String::new(),
            as_of: "2026-11-20".into(),
            body: body.into(),
        };
        store.put_document(&doc("triage", "flakes/2026-11-20", "# report\n")).unwrap();
        store.put_document(&doc("verify", "report.md", "# other\n")).unwrap();
        let found = find_by_body(&store, b"# report\n").unwrap().unwrap();
        assert_eq!((found.kind.as_str(), found.key.as_str()), ("triage", "flakes/2026-11-20"));
        assert!(find_by_body(&store, b"# report").unwrap().is_none(), "one byte less is another document");
        assert!(find_by_body(&store, b"# other\n").unwrap().is_none(), "verifier results are not verified documents");
        let key = record_verification(
            &mut store,
            &Verified { document: Some(&found), file_name: "report.md", text: "# report\n" },
            "{}\n",
        )
        .unwrap();
        assert_eq!(key, "triage/flakes/2026-11-20");
        let d = store.document("verify", &key, JSON).unwrap().unwrap();
        assert_eq!((d.title.as_str(), d.as_of.as_str()), ("Verification of triage/flakes/2026-11-20", "2026-11-20"));
        let key = record_verification(
            &mut store,
            &Verified { document: None, file_name: "mine.md", text: "# T\n**Date**: 2026-01-02\n" },
            "{}\n",
        )
        .unwrap();
        assert_eq!(store.document("verify", &key, JSON).unwrap().unwrap().as_of, "2026-01-02");
    }
}
