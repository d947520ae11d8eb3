//! The evidence ledger looked up (`evidence`): items by id, or every item whose
//! locator starts with a prefix.

use crate::error::{Error, Result};
use citriage_store::{LedgerEntry, Store};

/// The items of `ids` (each must be in the ledger) and those whose locator starts
/// with `locator`.
pub fn lookup(store: &Store, ids: &[String], locator: Option<&str>) -> Result<Vec<LedgerEntry>> {
    let mut found = Vec::new();
    for id in ids {
        match store.evidence(id)? {
            Some(e) => found.push(e),
            None => return Err(Error::input(format!("{id}: not in the evidence ledger of {}", store.path()))),
        }
    }
    if let Some(p) = locator {
        found.extend(store.evidence_by_locator(p)?);
    }
    if ids.is_empty() && locator.is_none() {
        return Err(Error::input("give evidence ids or --locator PREFIX"));
    }
    Ok(found)
}
