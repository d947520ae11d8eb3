//! The documents recorded in the store (`reports`): listed, or one read back.

use crate::documents::{HTML, JSON, MARKDOWN};
use crate::error::{Error, Result};
use citriage_store::{Document, DocumentHeader, Store};

/// Media types [`show`] picks from, in this order, when none is named.
const PREFERRED: [&str; 3] = [MARKDOWN, JSON, HTML];

/// The stored documents (of one kind, or all).
pub fn list(store: &Store, kind: Option<&str>) -> Result<Vec<DocumentHeader>> {
    Ok(store.documents(kind)?)
}

/// One stored document: of `media_type`, else the first stored of Markdown, JSON and
/// HTML, else the first by name. None stored is bad input.
pub fn show(store: &Store, kind: &str, key: &str, media_type: Option<&str>) -> Result<Document> {
    let doc = match media_type {
        Some(m) => store.document(kind, key, m)?,
        None => {
            let available: Vec<String> =
                store.documents(Some(kind))?.into_iter().filter(|h| h.key == key).map(|h| h.media_type).collect();
            let pick = PREFERRED
                .iter()
                .find(|m| available.iter().any(|a| a == *m))
                .map(|m| m.to_string())
                .or_else(|| available.into_iter().min());
            match pick {
                Some(m) => store.document(kind, key, &m)?,
                None => None,
            }
        }
    };
    doc.ok_or_else(|| {
        Error::remedy(
            format!(
                "no stored document {kind} {key}{} in {} (",
                media_type.map(|m| format!(" of type {m}")).unwrap_or_default(),
                store.path()
            ),
            "reports",
            " lists them)",
        )
    })
}
