//! GitHub cross-references of failure patterns, for the triage records: which patterns
//! are looked for (every pattern with a record, and the largest of each profile's
//! latest clustering run), what each is looked for by (its stable id, the tests it
//! fails, its failure text, the jobs it breaks: `citriage_github::mentions`), and which
//! issues and pull requests named them. The search goes through the GitHub client over
//! the store's cache, so an offline refresh answers from the cache and says which
//! queries it could not answer. Linking what was found is `records::refresh`'s.

use crate::error::{Error, Result};
use citriage_github::mentions::{search_many, Terms};
use citriage_github::{Answered, GithubClient, RepoRef};
use citriage_model::time::utc;
use citriage_patterns::normalize::Profile;
use citriage_store::Store;
use serde::Serialize;
use std::collections::BTreeMap;

/// Which patterns are looked for on GitHub, and where.
#[derive(Debug, Clone)]
pub struct MentionOptions {
    /// The repositories searched (`owner/repo`); at least one.
    pub repos: Vec<String>,
    /// Besides the patterns that have a record, the largest patterns of each
    /// profile's latest clustering run looked for.
    pub top: usize,
    /// At most this many hits read per query.
    pub max_hits: usize,
}

impl Default for MentionOptions {
    fn default() -> Self {
        MentionOptions { repos: Vec::new(), top: 20, max_hits: 30 }
    }
}

/// What the search for GitHub cross-references did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MentionsRead {
    /// Answered from the store's cache only (offline).
    pub offline: bool,
    /// Patterns looked for.
    pub patterns: usize,
    /// Queries answered, and how many of them from the cache without a request.
    pub queries: usize,
    pub from_cache: usize,
    /// Queries not answered (offline and never cached, an error), with why: what was
    /// not looked at.
    pub unanswered: Vec<String>,
    /// Mentions through a job name only (`subject ? reference: …`): shown, not linked
    /// (an issue about a job may be about another of its failures).
    pub candidates: Vec<String>,
    /// Mentions not linked again because someone unlinked them.
    pub kept_unlinked: Vec<String>,
}

/// A mention strong enough to link: the record's subject, the reference, and the note
/// the link keeps (the query that found it and when its answer was read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub subject: String,
    pub reference: String,
    pub note: String,
}

/// A pattern looked for.
struct Wanted {
    subject: String,
    terms: Terms,
}

/// The first line of a failure text that says something.
fn telling_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| l.chars().filter(|c| c.is_alphanumeric()).count() >= 6).map(str::to_string)
}

/// Names by failures, most first (ties by name), without repeats.
fn ranked(counts: BTreeMap<String, u64>) -> Vec<String> {
    let mut v: Vec<(String, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.into_iter().map(|(n, _)| n).collect()
}

/// The patterns to look for, per profile: those with a record, then the largest of
/// the latest clustering run (ties by stable id).
fn wanted(store: &Store, top: usize) -> Result<Vec<Wanted>> {
    let records = store.records(None)?;
    let mut out = Vec::new();
    for p in Profile::ALL {
        let profile = p.name();
        let mut ids: Vec<String> =
            records.iter().filter(|r| r.kind == "pattern" && r.profile == profile).map(|r| r.key.clone()).collect();
        let clusters = store.clusters(profile)?;
        if let Some(run) = store.cluster_run(profile)? {
            let mut latest: Vec<_> = clusters.iter().filter(|c| c.run_as_of == run.as_of).collect();
            latest.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.stable_id.cmp(&b.stable_id)));
            ids.extend(latest.into_iter().take(top).map(|c| c.stable_id.clone()));
        }
        ids.sort();
        ids.dedup();
        if ids.is_empty() {
            continue;
        }
        let mut tests: BTreeMap<&str, BTreeMap<String, u64>> = BTreeMap::new();
        let mut jobs: BTreeMap<&str, BTreeMap<String, u64>> = BTreeMap::new();
        let daily = store.cluster_daily(profile)?;
        for d in &daily {
            if ids.binary_search(&d.stable_id).is_err() {
                continue;
            }
            *tests.entry(d.stable_id.as_str()).or_default().entry(d.test.clone()).or_default() += d.failures;
            let job = d.job.strip_prefix("pr:").unwrap_or(&d.job).to_string();
            *jobs.entry(d.stable_id.as_str()).or_default().entry(job).or_default() += d.failures;
        }
        for id in &ids {
            let text = clusters.iter().find(|c| &c.stable_id == id).map(|c| c.text.as_str()).unwrap_or("");
            out.push(Wanted {
                subject: format!("pattern:{profile}/{id}"),
                terms: Terms {
                    stable_id: Some(id.clone()),
                    tests: ranked(tests.remove(id.as_str()).unwrap_or_default()),
                    failure_text: telling_line(text),
                    jobs: ranked(jobs.remove(id.as_str()).unwrap_or_default()),
                },
            });
        }
    }
    Ok(out)
}

/// Looks for the issues and pull requests that name the patterns: one query per
/// distinct phrase. Returns the mentions to link, sorted, and what the search did.
pub fn search(store: &Store, opts: &MentionOptions, gh: &GithubClient) -> Result<(Vec<Found>, MentionsRead)> {
    if opts.repos.is_empty() {
        return Err(Error::input("searching GitHub for mentions needs at least one repository (owner/repo)"));
    }
    let repos: Vec<RepoRef> = opts
        .repos
        .iter()
        .map(|r| {
            RepoRef::parse(r).ok_or_else(|| Error::input(format!("{r:?} is not a GitHub repository (owner/repo)")))
        })
        .collect::<Result<_>>()?;
    let wanted = wanted(store, opts.top)?;
    let terms: Vec<Terms> = wanted.iter().map(|w| w.terms.clone()).collect();
    let answers = search_many(gh, &repos, &terms, opts.max_hits.max(1));
    let mut read = MentionsRead { patterns: wanted.len(), ..MentionsRead::default() };
    let mut queries: BTreeMap<String, Answered> = BTreeMap::new();
    let mut unanswered: BTreeMap<String, String> = BTreeMap::new();
    let mut found = Vec::new();
    for (w, m) in wanted.iter().zip(&answers) {
        for a in &m.answered {
            queries.insert(a.query.clone(), a.answered);
        }
        for (q, why) in &m.unanswered {
            unanswered.insert(q.clone(), why.clone());
        }
        for hit in &m.found {
            let how: Vec<String> = hit.matched.iter().map(|(k, p)| format!("{} {p:?}", kind_word(*k))).collect();
            if !hit.links() {
                read.candidates.push(format!("{} ? {}: names {}", w.subject, hit.reference, how.join(", ")));
                continue;
            }
            let when = hit.read_at.map(|t| utc(t).to_string()).unwrap_or_else(|| "at an unknown time".into());
            found.push(Found {
                subject: w.subject.clone(),
                reference: hit.reference.to_string(),
                note: format!("GitHub search {:?} read {when}: names {}", hit.query, how.join(", ")),
            });
        }
    }
    read.queries = queries.len();
    read.from_cache = queries.values().filter(|a| **a == Answered::Cache).count();
    read.unanswered = unanswered.into_iter().map(|(q, why)| format!("{q}: {why}")).collect();
    read.candidates.sort();
    found.sort_by(|a, b| (&a.subject, &a.reference).cmp(&(&b.subject, &b.reference)));
    Ok((found, read))
}

fn kind_word(k: citriage_github::TermKind) -> &'static str {
    match k {
        citriage_github::TermKind::StableId => "its stable id",
        citriage_github::TermKind::Test => "the test",
        citriage_github::TermKind::FailureText => "the failure text",
        citriage_github::TermKind::Job => "the job",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_rank_by_failures_then_name_and_lines_must_say_something() {
        let c: BTreeMap<String, u64> = [("b".to_string(), 2), ("a".to_string(), 2), ("c".to_string(), 5)].into();
        assert_eq!(ranked(c), ["c", "a", "b"]);
        assert_eq!(telling_line("\n  --\n  timed out waiting\nmore").as_deref(), Some("timed out waiting"));
        assert_eq!(telling_line("-- ::"), None);
    }
}
