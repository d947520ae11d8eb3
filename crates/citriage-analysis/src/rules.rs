//! Categorization rules loaded from TOML: an ordered list of (category, condition,
//! tags) where the first matching rule wins, plus a fallback category. The built-in
//! rule set reproduces the Kubernetes CI triage runbook's categorizer.

use crate::expr::{Expr, ExprError};
use serde::Deserialize;
use std::collections::BTreeSet;

/// The built-in rules file, shipped inside the binary.
pub const DEFAULT_RULES_TOML: &str = include_str!("../rules/default.toml");

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub category: String,
    pub source: String,
    pub when: Expr,
    pub tags: BTreeSet<String>,
}

/// An ordered, compiled rule set.
#[derive(Debug, Clone)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    pub fallback: String,
    pub fallback_tags: BTreeSet<String>,
    /// Where the rules came from (`built-in` or a path), for the report's methodology.
    pub origin: String,
}

/// A rules file that could not be used; names the file, rule and problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{origin}: {problem}")]
pub struct RulesError {
    pub origin: String,
    pub problem: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRules {
    #[serde(default = "default_fallback")]
    fallback: String,
    #[serde(default)]
    fallback_tags: Vec<String>,
    #[serde(default)]
    rule: Vec<RawRule>,
}

fn default_fallback() -> String {
    "other".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    category: String,
    when: String,
    #[serde(default)]
    tags: Vec<String>,
}

impl RuleSet {
    /// The built-in rules.
    pub fn builtin() -> RuleSet {
        // The built-in file is part of the source and covered by tests.
        RuleSet::from_toml(DEFAULT_RULES_TOML, "built-in rules")
            .unwrap_or_else(|e| unreachable!("built-in rules are invalid: {e}"))
    }

    /// Parses a rules file.
    pub fn from_toml(text: &str, origin: &str) -> Result<RuleSet, RulesError> {
        let err = |problem: String| RulesError { origin: origin.to_string(), problem };
        let raw: RawRules = toml::from_str(text).map_err(|e| err(format!("not a valid rules file: {e}")))?;
        if raw.fallback.trim().is_empty() {
            return Err(err("fallback category is empty".into()));
        }
        let mut rules = Vec::with_capacity(raw.rule.len());
        for (i, r) in raw.rule.into_iter().enumerate() {
            if r.category.trim().is_empty() {
                return Err(err(format!("rule #{} has an empty category", i + 1)));
            }
            let when = Expr::parse(&r.when).map_err(|ExprError(m)| {
                err(format!("rule #{} ({}): condition {:?}: {m}", i + 1, r.category, r.when))
            })?;
            rules.push(Rule { category: r.category, source: r.when, when, tags: r.tags.into_iter().collect() });
        }
        Ok(RuleSet {
            rules,
            fallback: raw.fallback,
            fallback_tags: raw.fallback_tags.into_iter().collect(),
            origin: origin.to_string(),
        })
    }

    /// The category of a job (first matching rule, else the fallback).
    pub fn categorize<'a>(&'a self, job: &str) -> &'a str {
        let j = job.to_lowercase();
        self.rules.iter().find(|r| r.when.eval(&j)).map(|r| r.category.as_str()).unwrap_or(&self.fallback)
    }

    /// Tags of a category (union over the rules that produce it).
    pub fn tags_of(&self, category: &str) -> BTreeSet<String> {
        let mut t: BTreeSet<String> =
            self.rules.iter().filter(|r| r.category == category).flat_map(|r| r.tags.iter().cloned()).collect();
        if category == self.fallback {
            t.extend(self.fallback_tags.iter().cloned());
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_loads_and_first_match_wins() {
        let r = RuleSet::builtin();
        assert_eq!(r.rules.len(), 55);
        assert_eq!(r.categorize("e2e-kops-grid-gce-calico"), "kops-grid-gce-new");
        assert_eq!(r.categorize("E2E-KOPS-GRID-x"), "kops-grid-legacy");
        assert_eq!(r.categorize("totally-unknown"), "other");
        assert!(r.tags_of("other").contains("catch-all"));
        assert!(r.tags_of("s390x").contains("arch"));
    }

    #[test]
    fn bad_files_are_named() {
        let e = RuleSet::from_toml("[[rule]]\ncategory='x'\nwhen='contains(1)'\n", "my.toml").unwrap_err();
        assert!(e.to_string().starts_with("my.toml: rule #1 (x)"), "{e}");
        let e = RuleSet::from_toml("[[rule]]\ncategory='x'\n", "my.toml").unwrap_err();
        assert!(e.to_string().contains("when"), "{e}");
        let e = RuleSet::from_toml("bogus = 1\n", "my.toml").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }
}
