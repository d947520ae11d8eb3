//! Runs read once: the evidence of a Prow run (cut at the as-of time) and its
//! failure modes, cached by URL, with what could not be read kept as gaps.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use citriage_model::time::Epoch;

use crate::classify::Classifier;
use crate::evidence::{EvidenceProvider, RunEvidence};
use crate::modes::{build_modes, Draft};
use crate::signature::Signer;

/// Cached evidence and failure modes of runs.
pub(crate) struct RunReader<'a> {
    provider: &'a dyn EvidenceProvider,
    as_of: Option<Epoch>,
    signer: &'a dyn Signer,
    pub classifier: Classifier,
    evidence: RefCell<BTreeMap<String, Option<RunEvidence>>>,
    modes: RefCell<BTreeMap<String, Vec<Draft>>>,
    gaps: RefCell<BTreeSet<String>>,
}

impl<'a> RunReader<'a> {
    pub fn new(provider: &'a dyn EvidenceProvider, as_of: Option<Epoch>, signer: &'a dyn Signer) -> RunReader<'a> {
        RunReader {
            provider,
            as_of,
            signer,
            classifier: Classifier::default(),
            evidence: RefCell::new(BTreeMap::new()),
            modes: RefCell::new(BTreeMap::new()),
            gaps: RefCell::new(BTreeSet::new()),
        }
    }

    /// The evidence of a run: `None` when there is none, it cannot be read, or
    /// the run finished after the as-of time (each a gap).
    pub fn evidence(&self, url: &str) -> Option<RunEvidence> {
        if let Some(e) = self.evidence.borrow().get(url) {
            return e.clone();
        }
        let found = match self.provider.run_evidence(url) {
            Ok(Some(e)) if self.as_of.is_some_and(|cut| e.finished.is_some_and(|f| f > cut)) => {
                self.gaps.borrow_mut().insert(format!("{url}: finished after the as-of time; its evidence is ignored"));
                None
            }
            Ok(found) => {
                // What could not be read of the run (names refused, limits) is a gap.
                for p in found.iter().flat_map(|e| &e.problems) {
                    self.gaps.borrow_mut().insert(format!("{url}: {p}"));
                }
                found
            }
            Err(e) => {
                self.gaps.borrow_mut().insert(format!("evidence unreadable: {e}"));
                None
            }
        };
        self.evidence.borrow_mut().insert(url.to_string(), found.clone());
        found
    }

    /// The failure modes of a run of `job`, when it has evidence.
    pub fn modes(&self, url: &str, job: &str) -> Option<Vec<Draft>> {
        if let Some(m) = self.modes.borrow().get(url) {
            return Some(m.clone());
        }
        let evidence = self.evidence(url)?;
        let modes = build_modes(Some(&evidence), job, self.signer, &self.classifier);
        self.modes.borrow_mut().insert(url.to_string(), modes.clone());
        Some(modes)
    }

    /// The failure modes of a job without evidence.
    pub fn modes_without_evidence(&self, job: &str) -> Vec<Draft> {
        build_modes(None, job, self.signer, &self.classifier)
    }

    /// What could not be read so far.
    pub fn gaps(&self) -> Vec<String> {
        self.gaps.borrow().iter().cloned().collect()
    }
}
