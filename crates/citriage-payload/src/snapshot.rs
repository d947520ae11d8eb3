//! The payload-snapshot directory layout written by the openshift-eng/ai-helpers
//! snapshot step, read as an offline [`PayloadSource`] and [`EvidenceProvider`]:
//!
//! ```text
//! <dir>/summary.json                                  chain order, phases, PR paths (optional)
//! <dir>/<tag>/payload.json                            release info (may be rebuilt from Sippy: "_source")
//! <dir>/<tag>/changelog.json                          changelog vs the previous payload of the chain
//! <dir>/<tag>/regressions.json                        per-test first_failed_in (optional)
//! <dir>/<tag>/jobs/{blocking,informing}/<job>/job.json        state, url, retries, previousAttemptURLs
//! <dir>/<tag>/jobs/blocking/<job>/build_log.json      error/warning lines with line numbers
//! <dir>/<tag>/jobs/blocking/<job>/junit/*.xml, junit/results.json
//! <dir>/<tag>/<component>/prs/<n>/code.diff, jobs.json
//! <dir>/<tag>/rpm-changelogs/<variant>/<older-tag>.md
//! ```
//!
//! Any file may be missing. A missing `payload.json` is rebuilt from the
//! `job.json` files; a missing `changelog.json` is a `NotFound` changelog; a
//! failed job without JUnit is `JunitState::Missing` (unknown, not green).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{read_optional, PayloadError};
use crate::evidence::{self, EvidenceProvider, Location, LogLine, RunEvidence};
use crate::junit;
use crate::release::{self, JobResult, JobResults, JobState, Phase, PullRequest, ReleaseInfo, TagEntry, TagList};
use crate::source::{parse_presubmits, read_under, Changelog, PayloadSource};
use citriage_model::time;

/// A payload-snapshot directory (`<version>/<stream>`).
pub struct SnapshotDir {
    root: PathBuf,
    summary: Option<Value>,
    /// Tags newest first.
    chain: Vec<String>,
    /// Prow URL → (tag, lifecycle, job directory).
    jobs_by_url: BTreeMap<String, (String, String, PathBuf)>,
}

fn read_json(path: &Path) -> Result<Option<Value>, PayloadError> {
    match read_optional(path)? {
        None => Ok(None),
        Some(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| PayloadError::invalid(path.display().to_string(), format!("malformed JSON: {e}"))),
    }
}

fn sorted_dirs(p: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = match std::fs::read_dir(p) {
        Ok(rd) => rd
            .flatten()
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

impl SnapshotDir {
    /// Opens a snapshot directory: the one holding `summary.json` and the tag directories.
    pub fn open(root: impl Into<PathBuf>) -> Result<SnapshotDir, PayloadError> {
        let root: PathBuf = root.into();
        if !root.is_dir() {
            return Err(PayloadError::not_found(root.display().to_string()));
        }
        let summary = read_json(&root.join("summary.json"))?;
        let mut tags: Vec<String> = sorted_dirs(&root)
            .into_iter()
            .filter(|(name, p)| {
                time::tag_timestamp(name).is_some()
                    && (p.join("payload.json").is_file()
                        || p.join("changelog.json").is_file()
                        || p.join("jobs").is_dir())
            })
            .map(|(n, _)| n)
            .collect();
        if let Some(arr) = summary.as_ref().and_then(|s| s.get("payloads")).and_then(|p| p.as_array()) {
            for p in arr {
                if let Some(t) = p.get("tag").and_then(|t| t.as_str()) {
                    if !tags.iter().any(|x| x == t) && time::tag_timestamp(t).is_some() {
                        tags.push(t.to_string());
                    }
                }
            }
        }
        let mut list = TagList {
            name: String::new(),
            tags: tags
                .iter()
                .map(|t| TagEntry {
                    name: t.clone(),
                    phase: Phase::Other(String::new()),
                    pull_spec: String::new(),
                    download_url: String::new(),
                })
                .collect(),
        };
        list.sort_newest_first();
        let chain: Vec<String> = list.tags.into_iter().map(|t| t.name).collect();
        let mut jobs_by_url = BTreeMap::new();
        for tag in &chain {
            for lifecycle in ["blocking", "informing"] {
                for (_, jdir) in sorted_dirs(&root.join(tag).join("jobs").join(lifecycle)) {
                    if let Some(j) = read_json(&jdir.join("job.json"))? {
                        if let Some(url) = j.get("url").and_then(|u| u.as_str()).filter(|u| !u.is_empty()) {
                            jobs_by_url.entry(url.to_string()).or_insert((
                                tag.clone(),
                                lifecycle.to_string(),
                                jdir.clone(),
                            ));
                        }
                    }
                }
            }
        }
        Ok(SnapshotDir { root, summary, chain, jobs_by_url })
    }

    /// The target payload named by `summary.json`, if any.
    pub fn target_tag(&self) -> Option<String> {
        self.summary.as_ref()?.get("payload_tag")?.as_str().map(str::to_string).or_else(|| self.chain.first().cloned())
    }

    /// The stream name (`4.22.0-0.nightly`) of the snapshot's tags.
    pub fn stream_name(&self) -> Option<String> {
        self.chain.iter().find_map(|t| release::parse_tag(t)).map(|p| p.stream_name)
    }

    fn summary_phase(&self, tag: &str) -> Option<String> {
        let s = self.summary.as_ref()?;
        if s.get("payload_tag").and_then(|t| t.as_str()) == Some(tag) {
            if let Some(p) = s.get("phase").and_then(|p| p.as_str()) {
                return Some(p.to_string());
            }
        }
        s.get("payloads")?
            .as_array()?
            .iter()
            .find(|p| p.get("tag").and_then(|t| t.as_str()) == Some(tag))?
            .get("phase")?
            .as_str()
            .map(str::to_string)
    }

    fn rebuild_release(&self, tag: &str) -> Result<Option<ReleaseInfo>, PayloadError> {
        let jobs_dir = self.root.join(tag).join("jobs");
        if !jobs_dir.is_dir() {
            return Ok(None);
        }
        let mut results = JobResults::default();
        for lifecycle in ["blocking", "informing"] {
            for (name, jdir) in sorted_dirs(&jobs_dir.join(lifecycle)) {
                let Some(j) = read_json(&jdir.join("job.json"))? else { continue };
                let jr = JobResult {
                    state: JobState::parse(j.get("state").and_then(|s| s.as_str()).unwrap_or("")),
                    url: j.get("url").and_then(|u| u.as_str()).filter(|u| !u.is_empty()).map(str::to_string),
                    retries: j.get("retries").and_then(|r| r.as_u64()).unwrap_or(0) as u32,
                    previous_attempt_urls: j
                        .get("previousAttemptURLs")
                        .and_then(|p| p.as_array())
                        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                        .unwrap_or_default(),
                    transition_time: None,
                };
                if lifecycle == "blocking" {
                    results.blocking.insert(name, jr);
                } else {
                    results.informing.insert(name, jr);
                }
            }
        }
        Ok(Some(ReleaseInfo {
            name: tag.to_string(),
            phase: Phase::parse(&self.summary_phase(tag).unwrap_or_default()),
            results,
            upgrades_to: Vec::new(),
            upgrades_from: Vec::new(),
            change_log_html: release::ChangeLogHtml::Absent,
            change_log: release::ChangeLogState::Absent,
            node_image_streams: Vec::new(),
            provenance: Some("rebuilt from job.json files (payload.json missing)".into()),
        }))
    }

    fn pr_dir(&self, pr: &PullRequest) -> Option<PathBuf> {
        if let Some(arr) = self.summary.as_ref().and_then(|s| s.get("payloads")).and_then(|p| p.as_array()) {
            for p in arr {
                for e in p.get("prs").and_then(|x| x.as_array()).into_iter().flatten() {
                    if e.get("url").and_then(|u| u.as_str()) == Some(pr.url.as_str()) {
                        if let Some(d) = e.get("diff").and_then(|d| d.as_str()) {
                            let path = d
                                .split('/')
                                .filter(|s| !s.is_empty() && *s != "..")
                                .fold(self.root.clone(), |a, s| a.join(s));
                            if let Some(parent) = path.parent() {
                                return Some(parent.to_path_buf());
                            }
                        }
                    }
                }
            }
        }
        let n = pr.number.to_string();
        let mut fallback = None;
        for tag in &self.chain {
            for (comp, cdir) in sorted_dirs(&self.root.join(tag)) {
                let d = cdir.join("prs").join(&n);
                if !d.is_dir() {
                    continue;
                }
                if comp == pr.component || pr.images.contains(&comp) || comp == pr.repo {
                    return Some(d);
                }
                fallback.get_or_insert(d);
            }
        }
        fallback
    }
}

impl PayloadSource for SnapshotDir {
    fn describe(&self) -> String {
        format!("payload snapshot in {}", self.root.display())
    }

    fn tags(&self, _stream: &str) -> Result<TagList, PayloadError> {
        let mut tags = Vec::new();
        for t in &self.chain {
            let phase = match read_json(&self.root.join(t).join("payload.json"))? {
                Some(v) => v.get("phase").and_then(|p| p.as_str()).map(str::to_string),
                None => None,
            }
            .or_else(|| self.summary_phase(t))
            .unwrap_or_default();
            tags.push(TagEntry {
                name: t.clone(),
                phase: Phase::parse(&phase),
                pull_spec: String::new(),
                download_url: String::new(),
            });
        }
        Ok(TagList { name: self.stream_name().unwrap_or_default(), tags })
    }

    fn release(&self, _stream: &str, tag: &str) -> Result<ReleaseInfo, PayloadError> {
        let p = self.root.join(tag).join("payload.json");
        match read_optional(&p)? {
            Some(b) => {
                let mut r = release::parse_release_info(&b, &p.display().to_string())?;
                if r.name.is_empty() {
                    r.name = tag.to_string();
                }
                Ok(r)
            }
            None => self.rebuild_release(tag)?.ok_or_else(|| PayloadError::not_found(p.display().to_string())),
        }
    }

    fn changelog(&self, _stream: &str, tag: &str, from: &str) -> Result<Changelog, PayloadError> {
        let p = self.root.join(tag).join("changelog.json");
        let idx = self.chain.iter().position(|t| t == tag);
        let predecessor = idx.and_then(|i| self.chain.get(i + 1));
        let Some(b) = read_optional(&p)? else { return Err(PayloadError::not_found(p.display().to_string())) };
        let origin = p.display().to_string();
        let (state, nis) = release::parse_changelog_response(&b, &origin)?;
        // The file is relative to the previous payload; answer only that question
        // (or whatever `from` the changelog itself declares).
        let declared = state.json().map(|j| j.from.name.clone()).filter(|n| !n.is_empty());
        let matches =
            declared.as_deref() == Some(from) || (declared.is_none() && predecessor.map(String::as_str) == Some(from));
        if !matches {
            return Err(PayloadError::NotFound {
                origin,
                detail: format!(
                    " (holds the changelog from {}, not from {from})",
                    declared.or(predecessor.cloned()).unwrap_or_else(|| "an unknown payload".into())
                ),
            });
        }
        Ok(Changelog { state, node_image_streams: nis, origin })
    }

    fn pr_diff(&self, pr: &PullRequest) -> Result<Option<String>, PayloadError> {
        let Some(d) = self.pr_dir(pr) else { return Ok(None) };
        Ok(read_optional(&d.join("code.diff"))?.map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    fn pr_presubmits(&self, pr: &PullRequest) -> Result<Option<Vec<String>>, PayloadError> {
        let Some(d) = self.pr_dir(pr) else { return Ok(None) };
        let p = d.join("jobs.json");
        match read_optional(&p)? {
            Some(b) => Ok(Some(parse_presubmits(&b, &p.display().to_string())?)),
            None => Ok(None),
        }
    }

    fn rpm_changelog(&self, tag: &str, variant: &str, from: &str) -> Result<Option<String>, PayloadError> {
        let rel = format!("{tag}/rpm-changelogs/{variant}/{from}.md");
        Ok(read_under(&self.root, &rel)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
    }
}

impl EvidenceProvider for SnapshotDir {
    fn run_evidence(&self, prow_url: &str) -> Result<Option<RunEvidence>, PayloadError> {
        let Some((tag, lifecycle, jdir)) = self.jobs_by_url.get(prow_url) else { return Ok(None) };
        let job_json = read_json(&jdir.join("job.json"))?;
        let gcs = job_json
            .as_ref()
            .and_then(|j| j.get("gcs_url"))
            .and_then(|g| g.as_str())
            .unwrap_or("")
            .trim_end_matches('/')
            .to_string();
        let mut ev = RunEvidence::empty(prow_url);
        if let Some(bl) = read_json(&jdir.join("build_log.json"))? {
            read_build_log(&bl, &gcs, &mut ev);
        }
        let rel_dir = format!(
            "{tag}/jobs/{lifecycle}/{}",
            jdir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        );
        read_junit(&jdir.join("junit"), &rel_dir, &gcs, &mut ev)?;
        Ok(Some(ev))
    }
}

/// The URL of a run's artifact under its GCS URL, when known.
fn artifact_url(gcs: &str, rel: &str) -> Option<String> {
    (!gcs.is_empty()).then(|| format!("{gcs}/{rel}"))
}

/// A snapshot's `build_log.json`: its error lines (info and warning lines are
/// not evidence), its tail kept as context, and the failed step they name.
fn read_build_log(bl: &Value, gcs: &str, ev: &mut RunEvidence) {
    let step_re = regex::Regex::new(r#"(?:Step|step) "?([A-Za-z0-9][\w.-]*)"? failed"#).unwrap();
    let at =
        |line: Option<u32>| Location { file: "build-log.txt".into(), url: artifact_url(gcs, "build-log.txt"), line };
    for l in bl.get("error_warning_lines").and_then(|x| x.as_array()).into_iter().flatten() {
        let text = evidence::strip_ansi(l.get("text").and_then(|t| t.as_str()).unwrap_or("")).into_owned();
        if crate::lines::is_info_line(&text) {
            continue;
        }
        let line = l.get("line_number").and_then(|n| n.as_u64()).map(|n| n as u32);
        ev.log_lines.push(LogLine { text, at: at(line) });
    }
    let start = bl.get("tail_start_line").and_then(|n| n.as_u64()).map(|n| n as u32);
    let tail: Vec<&Value> = bl.get("tail_lines").and_then(|x| x.as_array()).into_iter().flatten().collect();
    let skip = tail.len().saturating_sub(evidence::TAIL_LINES);
    for (i, l) in tail.into_iter().enumerate().skip(skip) {
        let text: String = evidence::strip_ansi(l.as_str().unwrap_or("")).trim_end().chars().take(1000).collect();
        ev.context.push(LogLine { text, at: at(start.map(|s| s + i as u32)) });
    }
    ev.failed_step =
        ev.log_lines.iter().chain(ev.context.iter()).find_map(|l| step_re.captures(&l.text).map(|c| c[1].to_string()));
}

/// A snapshot job's JUnit: every raw XML file, and `results.json` for what the
/// XML lacks (large XML files may be missing from a snapshot).
fn read_junit(dir: &Path, rel_dir: &str, gcs: &str, ev: &mut RunEvidence) -> Result<(), PayloadError> {
    let mut xml_files: Vec<(String, PathBuf)> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .filter(|(n, _)| n.ends_with(".xml"))
            .collect(),
        Err(_) => Vec::new(),
    };
    xml_files.sort();
    let mut parsed = Vec::new();
    let mut problems = Vec::new();
    for (name, p) in &xml_files {
        let Some(raw) = read_optional(p)? else { continue };
        let rel = format!("{rel_dir}/junit/{name}");
        let f = junit::parse_junit(&raw, &rel);
        if let Some(pr) = &f.problem {
            problems.push(pr.clone());
        }
        if f.cases.is_empty() && f.problem.is_some() {
            continue;
        }
        if name == "junit-aggregated.xml" {
            ev.aggregated.extend(crate::aggregated::aggregated_tests(&f.cases));
        }
        parsed
            .push((Location { file: rel, url: artifact_url(gcs, &format!("artifacts/{name}")), line: None }, f.cases));
    }
    let (failures, total) = evidence::failures_from_cases(&parsed);
    ev.failures = failures;
    ev.tests_total = total;
    let xml_names: std::collections::BTreeSet<String> =
        parsed.iter().flat_map(|(_, cases)| cases.iter().map(|c| c.name.clone())).collect();
    let results = dir.join("results.json");
    let (mut results_read, mut results_entries) = (0u32, 0usize);
    if let Some(raw) = read_optional(&results)? {
        let rel = format!("{rel_dir}/junit/results.json");
        match serde_json::from_slice::<Value>(&raw) {
            Ok(rj) => {
                let loc = Location { file: rel, url: None, line: None };
                results_read = 1;
                results_entries = evidence::merge_results_json(ev, &rj, &loc, &xml_names);
            }
            // A broken export is a problem of this run's evidence, not of the analysis.
            Err(e) => problems.push(format!("{rel}: malformed JSON: {e}")),
        }
    }
    let present = xml_files.len() + usize::from(results.is_file());
    ev.junit = evidence::junit_state(parsed.len() as u32, present, results_read, results_entries, problems);
    Ok(())
}
/// Snapshot folders under `dir` (depth ≤ 4): folders holding payload folders,
/// each with its target tag (from `summary.json`, else the newest payload folder).
pub fn find_snapshots(dir: &Path) -> Vec<(PathBuf, String)> {
    fn walk(p: &Path, depth: usize, out: &mut Vec<(PathBuf, String)>) {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        let mut subs: Vec<PathBuf> =
            rd.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect();
        subs.sort();
        let tags: Vec<String> = subs
            .iter()
            .filter_map(|s| {
                let name = s.file_name()?.to_string_lossy().into_owned();
                let is_payload = citriage_model::time::tag_timestamp(&name).is_some()
                    && (s.join("payload.json").is_file()
                        || s.join("jobs").is_dir()
                        || s.join("changelog.json").is_file());
                is_payload.then_some(name)
            })
            .collect();
        if !tags.is_empty() {
            let summary_tag = std::fs::read(p.join("summary.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .and_then(|v| v.get("payload_tag").and_then(Value::as_str).map(str::to_string));
            let newest = tags.iter().max_by_key(|t| (citriage_model::time::tag_timestamp(t), (*t).clone())).cloned();
            if let Some(t) = summary_tag.or(newest) {
                out.push((p.to_path_buf(), t));
            }
            return;
        }
        if depth < 4 {
            for s in subs {
                walk(&s, depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, 0, &mut out);
    out
}

/// A snapshot found for a payload: the folder read and the payload's tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub root: PathBuf,
    pub tag: String,
}

/// Finds the snapshot of `tag` under `dir`, whatever folder of it `dir` is: the
/// repository, the payload's own folder (`<tag>/`, a `-backfilled` one too), or
/// the inner `<version>/<stream>` folder. `tag` may also be the folder's name.
pub fn locate(dir: &Path, tag: &str) -> Result<Located, PayloadError> {
    if !dir.is_dir() {
        return Err(PayloadError::not_found(dir.display().to_string()));
    }
    choose(&find_snapshots(dir), tag, dir)
}

/// Chooses among found snapshots (folder, target tag), in this order: one whose
/// target is `tag`; one holding a payload folder `tag`; one whose target `tag`
/// extends (`<target>-backfilled`); the only target found when `tag` names the
/// folder itself. Several folders alike: the first by path.
pub fn choose(found: &[(PathBuf, String)], tag: &str, dir: &Path) -> Result<Located, PayloadError> {
    let mut sorted: Vec<&(PathBuf, String)> = found.iter().collect();
    sorted.sort();
    let pick =
        |f: &dyn Fn(&(PathBuf, String)) -> bool| sorted.iter().find(|x| f(x)).map(|(p, t)| (p.clone(), t.clone()));
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let targets: BTreeMap<&str, ()> = found.iter().map(|(_, t)| (t.as_str(), ())).collect();
    let hit = pick(&|(_, t)| t == tag)
        .or_else(|| pick(&|(p, _)| p.join(tag).is_dir()))
        .or_else(|| pick(&|(_, t)| tag.strip_prefix(t.as_str()).is_some_and(|rest| rest.starts_with('-'))))
        .or_else(|| {
            if tag == folder && targets.len() == 1 {
                sorted.first().map(|(p, t)| (p.clone(), t.clone()))
            } else {
                None
            }
        });
    match hit {
        Some((root, tag)) => Ok(Located { root, tag }),
        None => Err(PayloadError::NotFound {
            origin: format!("{}: no snapshot of {tag}", dir.display()),
            detail: if targets.is_empty() {
                " (no payload snapshot under it)".to_string()
            } else {
                format!(" (snapshots of {})", targets.keys().copied().collect::<Vec<_>>().join(", "))
            },
        }),
    }
}
