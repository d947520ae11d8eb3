//! The interned strings' texts by id, as a store's connection caches them.

use std::collections::HashMap;
use std::sync::Arc;

/// The interned strings' texts by id, with the highest id held (what a store's map is
/// brought up to date from, read on every job a command reads: never a scan of the map).
#[derive(Debug, Default)]
pub(crate) struct StringTexts {
    texts: HashMap<i64, Arc<str>>,
    /// The highest id in `texts` (0 when empty).
    pub(crate) max: i64,
}

impl StringTexts {
    pub(crate) fn insert(&mut self, id: i64, text: Arc<str>) {
        self.max = self.max.max(id);
        self.texts.insert(id, text);
    }

    pub(crate) fn get(&self, id: &i64) -> Option<&Arc<str>> {
        self.texts.get(id)
    }

    pub(crate) fn contains_key(&self, id: &i64) -> bool {
        self.texts.contains_key(id)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}
