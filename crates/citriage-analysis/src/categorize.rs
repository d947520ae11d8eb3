//! Applies a rule set to a snapshot: every job lands in exactly one category, jobs
//! are sorted by severity within each category (ties by name), and categories are
//! listed largest first (ties by name).

use crate::rules::RuleSet;
use crate::severity::{self, Severity};
use citriage_model::{JobEntry, Snapshot};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A job with its category-independent derived figures.
#[derive(Debug, Clone, Serialize)]
pub struct CategorizedJob {
    #[serde(flatten)]
    pub entry: JobEntry,
    pub severity: Severity,
}

/// One category of jobs.
#[derive(Debug, Clone, Serialize)]
pub struct Category {
    pub name: String,
    pub tags: BTreeSet<String>,
    /// Most severe first.
    pub jobs: Vec<CategorizedJob>,
}

impl Category {
    pub fn count(&self) -> usize {
        self.jobs.len()
    }

    /// Jobs per severity level.
    pub fn severity_counts(&self) -> BTreeMap<Severity, usize> {
        let mut m = BTreeMap::new();
        for j in &self.jobs {
            *m.entry(j.severity).or_insert(0) += 1;
        }
        m
    }
}

/// All categories of a snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct Categorized {
    /// Largest first, ties by name.
    pub categories: Vec<Category>,
}

impl Categorized {
    pub fn job_count(&self) -> usize {
        self.categories.iter().map(|c| c.count()).sum()
    }

    pub fn get(&self, name: &str) -> Option<&Category> {
        self.categories.iter().find(|c| c.name == name)
    }

    /// The category name of each job.
    pub fn category_of(&self) -> BTreeMap<&str, &str> {
        let mut m = BTreeMap::new();
        for c in &self.categories {
            for j in &c.jobs {
                m.insert(j.entry.job.as_str(), c.name.as_str());
            }
        }
        m
    }
}

/// Categorizes every job of a snapshot.
pub fn categorize_snapshot(snapshot: &Snapshot, rules: &RuleSet) -> Categorized {
    let mut groups: BTreeMap<String, Vec<CategorizedJob>> = BTreeMap::new();
    for e in &snapshot.jobs {
        let cat = rules.categorize(&e.job).to_string();
        groups.entry(cat).or_default().push(CategorizedJob { severity: severity::of(&e.stats), entry: e.clone() });
    }
    let mut categories: Vec<Category> = groups
        .into_iter()
        .map(|(name, mut jobs)| {
            let name = name.to_string();
            jobs.sort_by(|a, b| {
                severity::sort_key(&a.entry.stats)
                    .total_cmp(&severity::sort_key(&b.entry.stats))
                    .then_with(|| a.entry.job.cmp(&b.entry.job))
            });
            Category { tags: rules.tags_of(&name), name, jobs }
        })
        .collect();
    categories.sort_by(|a, b| b.count().cmp(&a.count()).then_with(|| a.name.cmp(&b.name)));
    Categorized { categories }
}
