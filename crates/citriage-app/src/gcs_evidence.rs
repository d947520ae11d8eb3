//! The payload jobs' evidence read from GCS over HTTP (`payload --url … --gcs URL`,
//! and a release stream's `gcs` in `watch`): a Prow run's URL
//! (`…/view/gs/<bucket>/logs/<job>/<id>`) maps to the objects under
//! `<bucket>/logs/<job>/<id>/` at the GCS base URL, listed through the JSON API and
//! read as objects by the sources' [`GcsHttp`] (the one HTTP layer: the base's origin
//! only, retry budget, size limits, the process's memory budget), exactly as `fetch
//! --gcs` reads builds. The payload crate's [`read_run`] reads them as it reads a
//! local mirror ([`citriage_payload::GcsMirror`]): the same files, in the same order,
//! within the same [`RunLimits`], so the same run gives the same evidence from either.
//!
//! A finished run's evidence (its `finished.json` read) is kept by the provider, so the
//! payloads of one stream, whose chains share most runs, read each run once.
//!
//! Object names come from remote data (the run's URL from the release controller,
//! the names a listing gives): each is checked by `citriage_sources::paths` before a
//! request is built from it. A run whose URL names an unsafe path is refused (the
//! analysis records it as unreadable evidence); a listed name that is unsafe or
//! outside the folder listed is never requested and becomes one of the run's
//! problems, which the analysis records as a data gap naming it.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::{Arc, Mutex};

use citriage_payload::evidence::{
    gcs_path_of, read_run, EvidenceProvider, LogScanner, RunEvidence, RunFolder, RunLimits, RunListing,
};
use citriage_payload::PayloadError;
use citriage_sources::artifacts::{ArtifactSource, GcsHttp};
use citriage_sources::paths::{check_name, refusal};
use citriage_sources::HttpOptions;

/// Finished runs' evidence kept at most (then the cache starts again).
const FINISHED_KEPT: usize = 512;

/// Failure evidence of Prow runs from GCS over HTTP, one [`GcsHttp`] per bucket met.
pub struct GcsEvidence {
    base: String,
    opts: HttpOptions,
    buckets: Mutex<BTreeMap<String, Arc<GcsHttp>>>,
    /// Evidence of finished runs (their artifacts no longer change), by Prow URL: the
    /// payloads of one stream share most runs of their chains.
    finished: Mutex<BTreeMap<String, RunEvidence>>,
    /// The first transient failure (transport, 429, 5xx) since it was last taken.
    transient: Mutex<Option<String>>,
    scanner: LogScanner,
    /// Base of the file URLs cited in evidence (default: the GCS base URL, so a
    /// citation opens the object it cites).
    pub url_base: String,
    /// What is read of a run at most (the local mirror's bounds).
    pub limits: RunLimits,
}

impl GcsEvidence {
    /// Evidence from the GCS base URL `base` (e.g. `https://storage.googleapis.com`),
    /// the only origin contacted; requests follow `opts` (clone a command's options so
    /// its retry budget is shared). An error when `base` is not an http(s) URL.
    pub fn new(base: &str, opts: HttpOptions) -> Result<GcsEvidence, String> {
        if !citriage_sources::is_url(base) {
            return Err(format!("{base}: not an http(s) URL"));
        }
        let base = base.trim_end_matches('/').to_string();
        Ok(GcsEvidence {
            url_base: base.clone(),
            base,
            opts,
            buckets: Mutex::new(BTreeMap::new()),
            finished: Mutex::new(BTreeMap::new()),
            transient: Mutex::new(None),
            scanner: LogScanner::default(),
            limits: RunLimits::default(),
        })
    }

    /// The first transient failure to read a run (the network, a 429 or 5xx after
    /// the retries) since the last call, if any. The analysis that met it lacks that
    /// run's evidence only for now: `watch` does not record it, and analyses the
    /// payload again at its next turn.
    pub fn take_transient(&self) -> Option<String> {
        self.transient.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn bucket(&self, name: &str) -> Arc<GcsHttp> {
        let mut g = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        g.entry(name.to_string())
            .or_insert_with(|| Arc::new(GcsHttp::new(&self.base, name, self.opts.clone(), None)))
            .clone()
    }
}

/// A run's folder in a bucket: `prefix` is its path from the bucket root, ending in `/`.
struct GcsRun<'a> {
    src: &'a dyn ArtifactSource,
    prefix: String,
}

impl RunFolder for GcsRun<'_> {
    fn list(&self, rel: &str) -> Result<RunListing, PayloadError> {
        let l = self.src.list(&format!("{}{rel}", self.prefix))?;
        let strip = |p: &str| p.strip_prefix(self.prefix.as_str()).unwrap_or(p).to_string();
        Ok(RunListing {
            files: l.objects.iter().map(|(p, size)| (strip(p), *size)).collect(),
            folders: l.prefixes.iter().map(|p| strip(p)).collect(),
            refused: l.refused.iter().map(|r| format!("{}: {r}", self.src.describe())).collect(),
        })
    }

    fn open(&self, rel: &str) -> Result<Option<Box<dyn BufRead + Send>>, PayloadError> {
        Ok(self.src.open(&format!("{}{rel}", self.prefix))?)
    }

    fn origin(&self, rel: &str) -> String {
        self.src.locator(&format!("{}{rel}", self.prefix))
    }
}

impl EvidenceProvider for GcsEvidence {
    fn run_evidence(&self, prow_url: &str) -> Result<Option<RunEvidence>, PayloadError> {
        let got = self.read(prow_url);
        if let Err(e) = &got {
            if !e.is_bad_input() {
                self.transient.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(|| e.to_string());
            }
        }
        got
    }
}

impl GcsEvidence {
    fn read(&self, prow_url: &str) -> Result<Option<RunEvidence>, PayloadError> {
        if let Some(ev) = self.finished.lock().unwrap_or_else(|e| e.into_inner()).get(prow_url) {
            return Ok(Some(ev.clone()));
        }
        let Some(gpath) = gcs_path_of(prow_url) else { return Ok(None) };
        let Some((bucket, path)) = gpath.split_once('/') else { return Ok(None) };
        // The run's URL is remote data: its bucket and path are object names.
        for name in [bucket.to_string(), format!("{path}/")] {
            if let Err(why) = check_name(&name) {
                return Err(PayloadError::invalid(prow_url, refusal(&name, why)));
            }
        }
        let src = self.bucket(bucket);
        // A run with no object in the bucket reads as one without JUnit or log
        // (unknown, not green), as a mirror's empty run folder does.
        let run = GcsRun { src: src.as_ref(), prefix: format!("{path}/") };
        let ev = read_run(prow_url, &gpath, &self.url_base, &run, &self.scanner, &self.limits)?;
        if ev.finished.is_some() {
            let mut cache = self.finished.lock().unwrap_or_else(|e| e.into_inner());
            if cache.len() >= FINISHED_KEPT {
                cache.clear();
            }
            cache.insert(prow_url.to_string(), ev.clone());
        }
        Ok(Some(ev))
    }
}
