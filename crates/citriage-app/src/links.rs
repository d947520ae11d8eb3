//! The fix-PR links file `triage --links` reads (TOML: `[[link]] ref = "owner/repo#N"`,
//! `matches = "regex"`, `note = "..."`), with each PR's state read through the GitHub
//! client over the store's cache.

use crate::error::{Error, Result};
use crate::github::client;
use citriage_analysis::links::{LinkState, PrLink};
use citriage_github::{IssueRef, PrStatus, RefResolver, RefState};
use citriage_store::Store;
use std::rc::Rc;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LinksFile {
    #[serde(default)]
    link: Vec<LinkEntry>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkEntry {
    #[serde(rename = "ref")]
    reference: String,
    matches: String,
    #[serde(default)]
    note: String,
}

/// Reads a links file and each PR's state (through the store's cache).
pub fn read_links(path: &std::path::Path, store: Rc<Store>, api: &str, offline: bool) -> Result<Vec<PrLink>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::input(format!("{}: cannot read: {e}", path.display())))?;
    let file: LinksFile = toml::from_str(&text).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    let gh = client(store, api, offline);
    let mut out = Vec::new();
    for (i, l) in file.link.into_iter().enumerate() {
        let r = IssueRef::parse(&l.reference).ok_or_else(|| {
            Error::input(format!("{}: link #{}: {:?} is not owner/repo#N", path.display(), i + 1, l.reference))
        })?;
        regex::RegexBuilder::new(&l.matches).size_limit(1 << 20).build().map_err(|e| {
            Error::input(format!("{}: link #{}: bad regex {:?}: {e}", path.display(), i + 1, l.matches))
        })?;
        let state = gh.resolve(&r);
        let evidence = state.evidence();
        let (title, st) = match &state {
            RefState::Pr(p) => (
                p.title.clone(),
                match &p.status {
                    PrStatus::Merged { at } => match at.get(0..10).and_then(citriage_model::Day::parse) {
                        Some(d) => LinkState::Merged { at: d },
                        None => LinkState::Unknown { why: format!("merged at an unreadable time {at:?}") },
                    },
                    PrStatus::Open { draft, blocking_labels, .. } => {
                        LinkState::Open { draft: *draft, blocking: blocking_labels.clone() }
                    }
                    PrStatus::ClosedUnmerged { .. } => LinkState::ClosedUnmerged,
                    PrStatus::NotFound => LinkState::Unknown { why: "GitHub answered 404".into() },
                    PrStatus::Unknown { why } => LinkState::Unknown { why: why.clone() },
                },
            ),
            RefState::Issue(i) => (i.title.clone(), LinkState::Unknown { why: "an issue, not a pull request".into() }),
            RefState::NotFound { .. } => (String::new(), LinkState::Unknown { why: "GitHub answered 404".into() }),
            RefState::Unknown { why, .. } => (String::new(), LinkState::Unknown { why: why.clone() }),
        };
        out.push(PrLink {
            url: format!("https://github.com/{}/{}/pull/{}", r.repo.owner, r.repo.name, r.number),
            reference: l.reference,
            title,
            matches: l.matches,
            note: l.note,
            state: st,
            evidence,
        });
    }
    Ok(out)
}
