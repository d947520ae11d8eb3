//! Code evidence from local checkouts the user names (a test-infra clone, a
//! kubernetes clone, ...): a Prow job's config (file:line and its testgrid
//! annotations), the OWNERS approvers, reviewers and SIG labels that apply to a path,
//! the text at `path:line`, and the commit that introduced a string (`git log -S`
//! semantics). Every answer carries an [`Evidence`] item. History, HEAD and files at a
//! commit come from `citriage-git` (the one git runner); reading the work tree needs no
//! git.

use citriage_git::{split_lines, Git, GitError, GitProgram};
use citriage_model::evidence::sha256_hex;
use citriage_model::{Day, Evidence, EvidenceKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// The kind of source a code evidence item points into; [`CodeSource::model_kind`] gives
/// its evidence kind, and the locator's prefix (`job-config:`, `owners:`, `source:`,
/// `commit:`) names it in text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CodeSource {
    JobConfig,
    OwnersFile,
    SourceLine,
    Commit,
}

impl CodeSource {
    /// The evidence kind of this source.
    pub fn model_kind(self) -> EvidenceKind {
        match self {
            CodeSource::JobConfig => EvidenceKind::JobConfig,
            CodeSource::OwnersFile => EvidenceKind::OwnersFile,
            CodeSource::SourceLine => EvidenceKind::SourceLine,
            CodeSource::Commit => EvidenceKind::GitCommit,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            CodeSource::JobConfig => "job-config",
            CodeSource::OwnersFile => "owners",
            CodeSource::SourceLine => "source",
            CodeSource::Commit => "commit",
        }
    }
}

/// Why a code lookup failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum CodeError {
    #[error("git is not available ({detail}); install git or put it on PATH to search history")]
    GitMissing { detail: String },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{path}: {detail}")]
    Io { path: String, detail: String },
    #[error("{path}: {why}")]
    BadPath { path: String, why: String },
    #[error("{root}: not a directory")]
    NoCheckout { root: String },
}

/// The commit a checkout is at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    pub sha: String,
    /// Committer date as a day (`as_of` of the checkout's evidence).
    pub day: String,
}

/// One named local checkout.
#[derive(Debug)]
pub struct Checkout {
    pub name: String,
    pub root: PathBuf,
    program: Option<GitProgram>,
    /// The checkout as a git repository, opened on first use.
    repo: OnceLock<Result<Git, GitError>>,
    head: OnceLock<Option<Head>>,
    files: OnceLock<Vec<String>>,
}

/// The text at `path:line`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineHit {
    pub checkout: String,
    pub path: String,
    pub line: usize,
    /// The last line of a range (`path:a-b`), else equal to `line`.
    pub end: usize,
    pub text: String,
    pub total_lines: usize,
    pub evidence: Evidence,
}

/// A whole file as one checkout has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileText {
    pub checkout: String,
    /// Path relative to the checkout.
    pub path: String,
    /// `name@sha` (or the checkout's name when git is unavailable).
    pub at: String,
    pub lines: Vec<String>,
    pub sha256: String,
    /// The day of the commit the text is from.
    pub as_of: String,
}

impl FileText {
    /// The evidence for lines `a..=b` of the file.
    pub fn evidence(&self, a: usize, b: usize) -> Evidence {
        let b = b.max(a).min(self.lines.len());
        let text = self.lines.get(a.saturating_sub(1)..b).map(|l| l.join("\n")).unwrap_or_default();
        let loc = if b > a { format!("{}#L{a}-L{b}", self.path) } else { format!("{}#L{a}", self.path) };
        Evidence::new(
            EvidenceKind::SourceLine,
            format!("source:{}:{loc}", self.at),
            text,
            &self.sha256,
            self.as_of.clone(),
        )
    }
}

/// A commit found in a checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalCommit {
    pub checkout: String,
    pub sha: String,
    pub day: String,
    pub author: String,
    pub subject: String,
    pub evidence: Evidence,
}

/// True for 7 to 40 lower-case hexadecimal characters.
pub fn is_hex_sha(s: &str) -> bool {
    (7..=40).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// What `path:line` resolves to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum LineLookup {
    Found(Box<LineHit>),
    NoSuchFile,
    PastEnd { total_lines: usize },
}

/// A job's Prow configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobConfig {
    pub job: String,
    pub checkout: String,
    /// Path relative to the checkout.
    pub file: String,
    /// Line of the job's `name:` key.
    pub line: usize,
    /// `periodic`, `presubmit`, `postsubmit` when the enclosing list says so.
    pub kind: Option<String>,
    /// `org/repo` for presubmits and postsubmits.
    pub repo: Option<String>,
    /// The job's `annotations`, sorted by key.
    pub annotations: BTreeMap<String, String>,
    pub evidence: Evidence,
}

impl JobConfig {
    /// `testgrid-alert-email`, when set: absent means nobody is alerted.
    pub fn alert_email(&self) -> Option<&str> {
        self.annotations.get("testgrid-alert-email").map(String::as_str)
    }

    /// `testgrid-dashboards`.
    pub fn dashboards(&self) -> Option<&str> {
        self.annotations.get("testgrid-dashboards").map(String::as_str)
    }

    /// `testgrid-tab-name`.
    pub fn tab_name(&self) -> Option<&str> {
        self.annotations.get("testgrid-tab-name").map(String::as_str)
    }
}

/// One OWNERS file as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnersFile {
    pub path: String,
    pub approvers: Vec<String>,
    pub reviewers: Vec<String>,
    pub labels: Vec<String>,
    pub emeritus_approvers: Vec<String>,
    pub no_parent_owners: bool,
    pub evidence: Evidence,
}

/// The owners that apply to a path: the OWNERS files from its directory up to the
/// root (stopping after one with `no_parent_owners`), nearest first, and their union
/// with `OWNERS_ALIASES` expanded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owners {
    pub target: String,
    pub files: Vec<OwnersFile>,
    pub approvers: Vec<String>,
    pub reviewers: Vec<String>,
    pub labels: Vec<String>,
    /// The `sig/...` labels among `labels`.
    pub sig_labels: Vec<String>,
    /// Alias names that were expanded.
    pub aliases_used: Vec<String>,
}

/// One commit `git log -S` lists for a string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PickaxeHit {
    pub sha: String,
    /// Author date, ISO 8601.
    pub date: String,
    pub author: String,
    pub subject: String,
    /// Occurrences on added and removed lines of the commit's diff.
    pub added: usize,
    pub removed: usize,
}

/// The history of a string in a checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    pub checkout: String,
    pub needle: String,
    pub pathspec: Option<String>,
    /// Oldest first.
    pub hits: Vec<PickaxeHit>,
    /// Whether HEAD contains the string.
    pub present_now: bool,
    /// The commit that introduced the string as it exists now: the first hit after the
    /// last point where its count fell to zero. `None` when absent now.
    pub introduced: Option<PickaxeHit>,
    /// The commit that removed it, when absent now.
    pub removed_by: Option<PickaxeHit>,
    pub evidence: Vec<Evidence>,
}

fn clean_rel(path: &str) -> Result<PathBuf, CodeError> {
    let p = Path::new(path.trim_start_matches("./"));
    if p.is_absolute() || path.is_empty() {
        return Err(CodeError::BadPath { path: path.into(), why: "must be relative to the checkout".into() });
    }
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            _ => return Err(CodeError::BadPath { path: path.into(), why: "must stay inside the checkout".into() }),
        }
    }
    Ok(out)
}

impl Checkout {
    /// A named checkout rooted at a directory. `git` may be `None` (files can still be
    /// read; history and HEAD cannot).
    pub fn open(
        name: impl Into<String>,
        root: impl Into<PathBuf>,
        git: Option<GitProgram>,
    ) -> Result<Checkout, CodeError> {
        let root = root.into();
        if !root.is_dir() {
            return Err(CodeError::NoCheckout { root: root.display().to_string() });
        }
        Ok(Checkout {
            name: name.into(),
            root,
            program: git,
            repo: OnceLock::new(),
            head: OnceLock::new(),
            files: OnceLock::new(),
        })
    }

    /// The checkout as a git repository: an error when no git program was given or
    /// the folder is not a repository.
    fn git(&self) -> Result<&Git, CodeError> {
        let Some(program) = &self.program else {
            return Err(CodeError::GitMissing { detail: "no git program was given".into() });
        };
        self.repo.get_or_init(|| Git::open_with(program, &self.root)).as_ref().map_err(|e| CodeError::Git(e.clone()))
    }

    /// HEAD's commit and day, when git is available and the checkout is a repository.
    pub fn head(&self) -> Option<&Head> {
        self.head
            .get_or_init(|| {
                let head = self.git().ok()?.head().ok()?;
                Some(Head { day: Day::from_unix_seconds(head.commit_time).to_string(), sha: head.sha })
            })
            .as_ref()
    }

    fn as_of(&self) -> String {
        self.head().map(|h| h.day.clone()).unwrap_or_default()
    }

    fn at(&self) -> String {
        match self.head() {
            Some(h) => format!("{}@{}", self.name, &h.sha[..h.sha.len().min(12)]),
            None => self.name.clone(),
        }
    }

    fn evidence(&self, src: CodeSource, loc: String, excerpt: String, bytes: &[u8], as_of: String) -> Evidence {
        Evidence::new(
            src.model_kind(),
            format!("{}:{}:{loc}", src.prefix(), self.at()),
            excerpt,
            sha256_hex(bytes),
            as_of,
        )
    }

    fn read(&self, rel: &Path) -> Result<Option<Vec<u8>>, CodeError> {
        let full = self.root.join(rel);
        if !full.is_file() {
            return Ok(None);
        }
        // Refuse files that resolve outside the checkout (symlinks).
        if let (Ok(f), Ok(r)) = (full.canonicalize(), self.root.canonicalize()) {
            if !f.starts_with(&r) {
                return Err(CodeError::BadPath {
                    path: rel.display().to_string(),
                    why: "resolves outside the checkout".into(),
                });
            }
        }
        std::fs::read(&full)
            .map(Some)
            .map_err(|e| CodeError::Io { path: full.display().to_string(), detail: e.to_string() })
    }

    /// True when the relative path is a file in the checkout.
    pub fn has_file(&self, path: &str) -> bool {
        clean_rel(path).map(|p| self.root.join(p).is_file()).unwrap_or(false)
    }

    /// True when the directory holding the relative path is a directory of the checkout
    /// (`pkg/kubelet` for `pkg/kubelet/x.go`); a bare file name has none.
    pub fn has_parent_dir(&self, path: &str) -> bool {
        let Ok(p) = clean_rel(path) else { return false };
        match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => self.root.join(d).is_dir(),
            _ => false,
        }
    }

    /// Lines `line..=end` (1-based) of a file.
    pub fn resolve_range(&self, path: &str, line: usize, end: usize) -> Result<LineLookup, CodeError> {
        let rel = clean_rel(path)?;
        let Some(bytes) = self.read(&rel)? else { return Ok(LineLookup::NoSuchFile) };
        let lines = split_lines(&bytes);
        let end = end.max(line);
        if line == 0 || end > lines.len() {
            return Ok(LineLookup::PastEnd { total_lines: lines.len() });
        }
        let text = lines[line - 1..end].join("\n");
        let loc =
            if end > line { format!("{}#L{line}-L{end}", rel.display()) } else { format!("{}#L{line}", rel.display()) };
        let evidence = self.evidence(CodeSource::SourceLine, loc, text.clone(), &bytes, self.as_of());
        Ok(LineLookup::Found(Box::new(LineHit {
            checkout: self.name.clone(),
            path: rel.display().to_string(),
            line,
            end,
            text,
            total_lines: lines.len(),
            evidence,
        })))
    }

    /// The text at `path:line`.
    pub fn resolve(&self, path: &str, line: usize) -> Result<LineLookup, CodeError> {
        self.resolve_range(path, line, line)
    }

    /// A whole file as the work tree has it (`at` = `None`) or as a commit had it.
    /// `Ok(None)` when the file (or the commit) does not have it.
    pub fn file_text(&self, path: &str, at: Option<&str>) -> Result<Option<FileText>, CodeError> {
        let rel = clean_rel(path)?;
        let shown = rel.display().to_string();
        let (bytes, label, as_of) = match at {
            None => match self.read(&rel)? {
                Some(b) => (b, self.at(), self.as_of()),
                None => return Ok(None),
            },
            Some(sha) => {
                let git = self.git();
                if !is_hex_sha(sha) {
                    return Err(CodeError::BadPath { path: sha.into(), why: "not a commit SHA".into() });
                }
                // A commit or a file the repository does not have (or a folder that is
                // not one) is no text at that commit.
                let read = |git: &Git| -> Result<Option<(Vec<u8>, i64)>, GitError> {
                    let Some(commit) = git.find_commit(sha)? else { return Ok(None) };
                    Ok(git.read_file(&commit.sha, &shown)?.map(|b| (b, commit.commit_time)))
                };
                match git.map(read) {
                    Ok(Ok(Some((b, t)))) => (
                        b,
                        format!("{}@{}", self.name, &sha[..sha.len().min(12)]),
                        Day::from_unix_seconds(t).to_string(),
                    ),
                    Ok(Ok(None)) | Ok(Err(_)) | Err(CodeError::Git(_)) => return Ok(None),
                    Err(e) => return Err(e),
                }
            }
        };
        Ok(Some(FileText {
            checkout: self.name.clone(),
            path: shown,
            at: label,
            lines: split_lines(&bytes),
            sha256: sha256_hex(&bytes),
            as_of,
        }))
    }

    /// The last commit of HEAD's history committed at or before `until` (Unix seconds).
    pub fn revision_at(&self, until: i64) -> Option<String> {
        self.git().ok()?.last_commit_before("HEAD", until).ok().flatten()
    }

    /// The first parent of a commit (full SHA); `None` for a root commit, an unknown one
    /// or without git.
    pub fn parent(&self, sha: &str) -> Option<String> {
        if !is_hex_sha(sha) {
            return None;
        }
        let commit = self.git().ok()?.find_commit(sha).ok()??;
        commit.parents.first().cloned()
    }

    /// The commits that changed a file, newest first, at most `max`.
    pub fn file_history(&self, path: &str, max: usize) -> Vec<String> {
        let Ok(git) = self.git() else { return Vec::new() };
        let Ok(rel) = clean_rel(path) else { return Vec::new() };
        git.file_history(&rel.display().to_string(), max).unwrap_or_default()
    }

    /// Whether the checkout is a shallow clone (its history is cut off).
    pub fn is_shallow(&self) -> bool {
        self.git().ok().and_then(|g| g.is_shallow().ok()).unwrap_or(false)
    }

    /// A commit of the checkout's repository (any branch it has fetched); `None` when
    /// it has none by that id (or is not a repository).
    pub fn commit(&self, sha: &str) -> Result<Option<LocalCommit>, CodeError> {
        let git = match self.git() {
            Err(CodeError::Git(_)) => return Ok(None),
            other => other?,
        };
        if !is_hex_sha(sha) {
            return Ok(None);
        }
        let c = match git.find_commit(sha) {
            Ok(Some(c)) => c,
            Ok(None) | Err(GitError::ShallowClone { .. } | GitError::AmbiguousRevision { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let day = Day::from_unix_seconds(c.commit_time).to_string();
        let evidence = self.evidence(
            CodeSource::Commit,
            c.sha.clone(),
            format!("{} {} ({}, {day})", &c.sha[..c.sha.len().min(12)], c.subject, c.author),
            c.sha.as_bytes(),
            day.clone(),
        );
        Ok(Some(LocalCommit {
            checkout: self.name.clone(),
            sha: c.sha,
            day,
            author: c.author,
            subject: c.subject,
            evidence,
        }))
    }

    /// Every file in the checkout (relative, sorted), `.git` excluded; walked once.
    pub fn files(&self) -> &[String] {
        self.files.get_or_init(|| {
            let mut out = Vec::new();
            walk(&self.root, &self.root, &mut out, &|_| true, 500_000);
            out.sort();
            out
        })
    }

    /// Files whose path ends with `/suffix` (or equals it).
    pub fn files_ending_with(&self, suffix: &str) -> Vec<String> {
        let suffix = suffix.trim_start_matches("./");
        let tail = format!("/{suffix}");
        self.files().iter().filter(|f| *f == suffix || f.ends_with(&tail)).cloned().collect()
    }

    /// The Prow configuration of a job, searching `config/jobs` and `ci-operator/jobs`.
    pub fn find_job_config(&self, job: &str) -> Result<Vec<JobConfig>, CodeError> {
        self.find_job_config_in(job, &["config/jobs", "ci-operator/jobs"])
    }

    /// The Prow configuration of a job under the given directories (`*.yaml`, `*.yml`):
    /// every list item whose `name:` is the job, with its annotations.
    pub fn find_job_config_in(&self, job: &str, dirs: &[&str]) -> Result<Vec<JobConfig>, CodeError> {
        let job = job.trim().trim_start_matches("pr:");
        let mut files = Vec::new();
        for d in dirs {
            let rel = clean_rel(d)?;
            let dir = self.root.join(&rel);
            if dir.is_dir() {
                walk(&self.root, &dir, &mut files, &|p| p.ends_with(".yaml") || p.ends_with(".yml"), 200_000);
            }
        }
        files.sort();
        files.dedup();
        let mut out = Vec::new();
        for f in files {
            let Some(bytes) = self.read(Path::new(&f))? else { continue };
            if !bytes.windows(job.len().max(1)).any(|w| w == job.as_bytes()) {
                continue;
            }
            let lines = split_lines(&bytes);
            for (i, l) in lines.iter().enumerate() {
                let Some((key_col, value)) = yaml_key_value(l, "name") else { continue };
                if value != job {
                    continue;
                }
                let Some(parsed) = job_block(&lines, i, key_col) else { continue };
                let excerpt = {
                    let mut e = l.trim().to_string();
                    for (k, v) in &parsed.annotations {
                        e.push_str(&format!("; {k}: {v}"));
                    }
                    e
                };
                let evidence =
                    self.evidence(CodeSource::JobConfig, format!("{f}#L{}", i + 1), excerpt, &bytes, self.as_of());
                out.push(JobConfig {
                    job: job.to_string(),
                    checkout: self.name.clone(),
                    file: f.clone(),
                    line: i + 1,
                    kind: parsed.kind,
                    repo: parsed.repo,
                    annotations: parsed.annotations,
                    evidence,
                });
            }
        }
        Ok(out)
    }

    /// The owners of a path (file or directory), walking OWNERS files upwards.
    pub fn owners(&self, path: &str) -> Result<Owners, CodeError> {
        let rel = if path.trim().is_empty() || path.trim() == "." { PathBuf::new() } else { clean_rel(path)? };
        let mut dir = if self.root.join(&rel).is_dir() {
            rel.clone()
        } else {
            rel.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let aliases = self.owners_aliases()?;
        let mut files = Vec::new();
        loop {
            let candidate = dir.join("OWNERS");
            if let Some(bytes) = self.read(&candidate)? {
                let parsed = parse_owners(&String::from_utf8_lossy(&bytes));
                let shown = candidate.display().to_string();
                let excerpt = format!(
                    "approvers=[{}] reviewers=[{}] labels=[{}]{}",
                    parsed.approvers.join(","),
                    parsed.reviewers.join(","),
                    parsed.labels.join(","),
                    if parsed.no_parent_owners { " no_parent_owners" } else { "" }
                );
                let evidence = self.evidence(CodeSource::OwnersFile, shown.clone(), excerpt, &bytes, self.as_of());
                let stop = parsed.no_parent_owners;
                files.push(OwnersFile {
                    path: shown,
                    approvers: parsed.approvers,
                    reviewers: parsed.reviewers,
                    labels: parsed.labels,
                    emeritus_approvers: parsed.emeritus,
                    no_parent_owners: parsed.no_parent_owners,
                    evidence,
                });
                if stop {
                    break;
                }
            }
            if !dir.pop() {
                break;
            }
        }
        let mut used = BTreeSet::new();
        let mut expand = |names: &mut dyn Iterator<Item = &String>| -> Vec<String> {
            let mut out = BTreeSet::new();
            for n in names {
                match aliases.get(n) {
                    Some(members) => {
                        used.insert(n.clone());
                        out.extend(members.iter().cloned());
                    }
                    None => {
                        out.insert(n.clone());
                    }
                }
            }
            out.into_iter().collect()
        };
        let approvers = expand(&mut files.iter().flat_map(|f| f.approvers.iter()));
        let reviewers = expand(&mut files.iter().flat_map(|f| f.reviewers.iter()));
        let labels: BTreeSet<String> = files.iter().flat_map(|f| f.labels.iter().cloned()).collect();
        let labels: Vec<String> = labels.into_iter().collect();
        Ok(Owners {
            target: rel.display().to_string(),
            sig_labels: labels.iter().filter(|l| l.starts_with("sig/")).cloned().collect(),
            labels,
            approvers,
            reviewers,
            files,
            aliases_used: used.into_iter().collect(),
        })
    }

    fn owners_aliases(&self) -> Result<BTreeMap<String, Vec<String>>, CodeError> {
        let Some(bytes) = self.read(Path::new("OWNERS_ALIASES"))? else { return Ok(BTreeMap::new()) };
        let text = String::from_utf8_lossy(&bytes);
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut in_aliases = false;
        let mut current: Option<String> = None;
        for raw in text.lines() {
            let line = strip_comment(raw);
            if line.trim().is_empty() {
                continue;
            }
            let indent = line.len() - line.trim_start().len();
            let t = line.trim();
            if indent == 0 {
                in_aliases = t == "aliases:";
                current = None;
                continue;
            }
            if !in_aliases {
                continue;
            }
            if let Some(item) = t.strip_prefix("- ") {
                if let Some(c) = &current {
                    out.entry(c.clone()).or_default().push(unquote(item));
                }
            } else if let Some((k, v)) = t.split_once(':') {
                let k = unquote(k);
                current = Some(k.clone());
                let list = flow_list(v);
                out.entry(k).or_default().extend(list);
            }
        }
        for v in out.values_mut() {
            v.sort();
            v.dedup();
        }
        Ok(out)
    }

    /// `git log -S<needle>` over the checkout (optionally limited to a pathspec), each
    /// hit with how many occurrences it added and removed, and the introducing commit.
    pub fn history(&self, needle: &str, pathspec: Option<&str>) -> Result<History, CodeError> {
        if needle.is_empty() {
            return Err(CodeError::BadPath { path: String::new(), why: "empty search string".into() });
        }
        let git = self.git()?;
        let hits: Vec<PickaxeHit> = git
            .pickaxe(needle, pathspec, 500)?
            .into_iter()
            .map(|h| PickaxeHit {
                sha: h.commit.sha,
                date: h.commit.author_date,
                author: h.commit.author,
                subject: h.commit.subject,
                added: h.added,
                removed: h.removed,
            })
            .collect();
        let specs: Vec<&str> = pathspec.into_iter().collect();
        let present_now = git.contains_text(needle, Some("HEAD"), &specs)?;
        let mut count: i64 = 0;
        let mut start: Option<usize> = None;
        for (i, h) in hits.iter().enumerate() {
            let before = count;
            count = (count + h.added as i64 - h.removed as i64).max(0);
            if before == 0 && count > 0 {
                start = Some(i);
            } else if count == 0 {
                start = None;
            }
        }
        let introduced = if present_now {
            start.or_else(|| hits.iter().position(|h| h.added > h.removed)).map(|i| hits[i].clone())
        } else {
            None
        };
        let removed_by = if present_now { None } else { hits.iter().rev().find(|h| h.removed > h.added).cloned() };
        let evidence = introduced
            .iter()
            .chain(removed_by.iter())
            .map(|h| {
                let excerpt = format!(
                    "{} {} {}: {} (+{} -{} of {needle:?})",
                    &h.sha[..h.sha.len().min(12)],
                    h.date,
                    h.author,
                    h.subject,
                    h.added,
                    h.removed
                );
                let day = h.date.get(..10).unwrap_or("").to_string();
                Evidence::new(
                    CodeSource::Commit.model_kind(),
                    format!("commit:{}:{}", self.name, h.sha),
                    excerpt,
                    sha256_hex(format!("{}\0{}\0{}", h.sha, h.date, h.subject).as_bytes()),
                    day,
                )
            })
            .collect();
        Ok(History {
            checkout: self.name.clone(),
            needle: needle.to_string(),
            pathspec: pathspec.map(str::to_string),
            hits,
            present_now,
            introduced,
            removed_by,
            evidence,
        })
    }

    /// The commit that introduced a string as it exists now (`None` when absent).
    pub fn introduced(&self, needle: &str, pathspec: Option<&str>) -> Result<Option<PickaxeHit>, CodeError> {
        Ok(self.history(needle, pathspec)?.introduced)
    }
}

/// Recursively lists files under `dir` relative to `root`, skipping `.git` and
/// symlinked directories, up to `limit` entries.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>, keep: &dyn Fn(&str) -> bool, limit: usize) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if out.len() >= limit {
            return;
        }
        let name = e.file_name();
        if name == ".git" {
            continue;
        }
        let Ok(ft) = e.file_type() else { continue };
        let path = e.path();
        if ft.is_dir() {
            walk(root, &path, out, keep, limit);
        } else if ft.is_file() {
            if let Ok(rel) = path.strip_prefix(root) {
                let rel = rel.to_string_lossy().replace('\\', "/");
                if keep(&rel) {
                    out.push(rel);
                }
            }
        }
    }
}

// ---- a light line-based YAML reader -------------------------------------------------

fn strip_comment(line: &str) -> &str {
    // A `#` starts a comment at the line start or after whitespace, outside quotes.
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && prev.is_whitespace() => return &line[..i],
            None => {}
        }
        prev = c;
    }
    line
}

fn unquote(s: &str) -> String {
    let t = s.trim();
    if t.len() >= 2 && ((t.starts_with('"') && t.ends_with('"')) || (t.starts_with('\'') && t.ends_with('\''))) {
        t[1..t.len() - 1].to_string()
    } else {
        t.to_string()
    }
}

fn flow_list(v: &str) -> Vec<String> {
    let t = v.trim();
    if let Some(inner) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        inner.split(',').map(unquote).filter(|x| !x.is_empty()).collect()
    } else if !t.is_empty() {
        vec![unquote(t)]
    } else {
        Vec::new()
    }
}

/// `key: value` on a line (optionally as a list item `- key: value`): the key's
/// column and the unquoted value.
fn yaml_key_value(line: &str, key: &str) -> Option<(usize, String)> {
    let l = strip_comment(line);
    let indent = l.len() - l.trim_start().len();
    let mut rest = &l[indent..];
    let mut col = indent;
    if let Some(r) = rest.strip_prefix("- ") {
        let extra = r.len() - r.trim_start().len();
        col += 2 + extra;
        rest = r.trim_start();
    }
    let after = rest.strip_prefix(key)?;
    let v = after.trim_start().strip_prefix(':')?;
    Some((col, unquote(v)))
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn blank_or_comment(line: &str) -> bool {
    strip_comment(line).trim().is_empty()
}

struct JobBlock {
    kind: Option<String>,
    repo: Option<String>,
    annotations: BTreeMap<String, String>,
}

/// The job item around line `i` whose keys sit at column `key_col`.
fn job_block(lines: &[String], i: usize, key_col: usize) -> Option<JobBlock> {
    // Item start: the `- ` line at key_col - 2, at or above i.
    let mut start = i;
    loop {
        let l = &lines[start];
        let ind = indent_of(l);
        if !blank_or_comment(l) && ind + 2 == key_col && l.trim_start().starts_with("- ") {
            break;
        }
        if start == 0 || (!blank_or_comment(l) && ind < key_col.saturating_sub(2)) {
            start = i;
            break;
        }
        start -= 1;
    }
    // Item end: the next non-blank line indented less than key_col.
    let mut end = lines.len();
    for (j, l) in lines.iter().enumerate().skip(i + 1) {
        if !blank_or_comment(l) && indent_of(l) < key_col {
            end = j;
            break;
        }
    }
    let mut annotations = BTreeMap::new();
    let mut j = start;
    while j < end {
        let l = &lines[j];
        if let Some((col, v)) = yaml_key_value(l, "annotations") {
            if col == key_col && v.is_empty() {
                let mut k = j + 1;
                while k < end {
                    let al = &lines[k];
                    if blank_or_comment(al) {
                        k += 1;
                        continue;
                    }
                    let ind = indent_of(al);
                    if ind <= key_col {
                        break;
                    }
                    let t = strip_comment(al).trim();
                    if let Some((ak, av)) = t.split_once(':') {
                        let av = av.trim();
                        let value = if av == "|" || av == ">" || av.starts_with("|-") || av.starts_with(">-") {
                            let mut parts = Vec::new();
                            let mut m = k + 1;
                            while m < end && (lines[m].trim().is_empty() || indent_of(&lines[m]) > ind) {
                                if !lines[m].trim().is_empty() {
                                    parts.push(lines[m].trim().to_string());
                                }
                                m += 1;
                            }
                            k = m - 1;
                            parts.join(if av.starts_with('|') { "\n" } else { " " })
                        } else {
                            unquote(av)
                        };
                        annotations.insert(unquote(ak), value);
                    }
                    k += 1;
                }
            }
        }
        j += 1;
    }
    // The list holding the item must sit under `periodics:`, or under `org/repo:` inside
    // `presubmits:` / `postsubmits:`; other `name:` keys (containers, volumes) are not jobs.
    let item_col = key_col.saturating_sub(2);
    let parent = |from: usize, col: usize, item: bool| -> Option<usize> {
        (0..from).rev().find(|&j| {
            let l = &lines[j];
            !blank_or_comment(l)
                && (indent_of(l) < col || (item && indent_of(l) == col && !l.trim_start().starts_with("- ")))
        })
    };
    let key_of = |j: usize| -> String { unquote(strip_comment(&lines[j]).trim().trim_end_matches(':')) };
    let section = |k: &str| match k {
        "periodics" => Some("periodic".to_string()),
        "presubmits" => Some("presubmit".to_string()),
        "postsubmits" => Some("postsubmit".to_string()),
        _ => None,
    };
    let p = parent(start, item_col, true)?;
    if indent_of(&lines[p]) == 0 {
        let kind = section(&key_of(p))?;
        return (kind == "periodic").then_some(JobBlock { kind: Some(kind), repo: None, annotations });
    }
    let repo = key_of(p);
    if !repo.contains('/') || repo.contains(' ') {
        return None;
    }
    let g = parent(p, indent_of(&lines[p]), false)?;
    if indent_of(&lines[g]) != 0 {
        return None;
    }
    let kind = section(&key_of(g)).filter(|k| k != "periodic")?;
    Some(JobBlock { kind: Some(kind), repo: Some(repo), annotations })
}

struct ParsedOwners {
    approvers: Vec<String>,
    reviewers: Vec<String>,
    labels: Vec<String>,
    emeritus: Vec<String>,
    no_parent_owners: bool,
}

/// Reads an OWNERS file: top-level `approvers`, `reviewers`, `labels`,
/// `emeritus_approvers`, `options.no_parent_owners`, and the catch-all `".*"` entry of
/// `filters` (other filters apply to some files only and are not merged).
fn parse_owners(text: &str) -> ParsedOwners {
    let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut no_parent = false;
    let mut top = String::new();
    let mut filter = String::new();
    let mut sub = String::new();
    for raw in text.lines() {
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        let indent = indent_of(line);
        let t = line.trim();
        if indent == 0 && !t.starts_with("- ") {
            let (k, v) = t.split_once(':').unwrap_or((t, ""));
            top = k.trim().to_string();
            filter.clear();
            sub.clear();
            if !v.trim().is_empty() {
                lists.entry(top.clone()).or_default().extend(flow_list(v));
            }
            continue;
        }
        if let Some(item) = t.strip_prefix("- ").or_else(|| if t == "-" { Some("") } else { None }) {
            let key = if top == "filters" {
                if filter == ".*" {
                    sub.clone()
                } else {
                    continue;
                }
            } else {
                top.clone()
            };
            if !item.is_empty() {
                lists.entry(key).or_default().push(unquote(item));
            }
            continue;
        }
        let (k, v) = t.split_once(':').unwrap_or((t, ""));
        let k = unquote(k);
        match top.as_str() {
            "options" if k == "no_parent_owners" => no_parent = v.trim() == "true",
            "filters" => {
                if v.trim().is_empty()
                    && (filter.is_empty() || indent <= 2)
                    && !matches!(k.as_str(), "approvers" | "reviewers" | "labels")
                {
                    filter = k;
                    sub.clear();
                } else {
                    sub = k.clone();
                    if filter == ".*" && !v.trim().is_empty() {
                        lists.entry(k).or_default().extend(flow_list(v));
                    }
                }
            }
            _ => {}
        }
    }
    let mut take = |k: &str| {
        let mut v = lists.remove(k).unwrap_or_default();
        v.sort();
        v.dedup();
        v
    };
    ParsedOwners {
        approvers: take("approvers"),
        reviewers: take("reviewers"),
        labels: take("labels"),
        emeritus: take("emeritus_approvers"),
        no_parent_owners: no_parent,
    }
}

// ---- resolving path:line claims across named checkouts --------------------------------

/// The answer to "does `path:line` exist?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum CodeAnswer {
    Found {
        checkout: String,
        path: String,
        text: String,
        evidence: Evidence,
    },
    /// Definitely wrong: the file is not in the checkout it belongs to, or the line is
    /// past its end.
    Missing {
        why: String,
    },
    /// Could not be checked (no checkout for that repository, ambiguous name, ...).
    Unchecked {
        why: String,
    },
}

/// A whole file for a `path:line` claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum FileAnswer {
    Found(Box<FileText>),
    /// Definitely not there: the file is not in the checkout it belongs to.
    Missing {
        why: String,
    },
    Unchecked {
        why: String,
    },
}

/// The answer to "does this commit exist?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum CommitAnswer {
    Found(Box<LocalCommit>),
    /// Not in a checkout that has its repository's full history: `head_day` is the day
    /// of the checkout's HEAD (a commit newer than that cannot be there).
    Missing {
        why: String,
        head_day: String,
    },
    Unchecked {
        why: String,
    },
}

/// Anything that can check a `path:line` claim.
pub trait CodeResolver {
    /// `repo` is the `owner/repo:` or `repo:` prefix written before the path, if any.
    fn check(&self, repo: Option<&str>, path: &str, line: usize, end: usize) -> CodeAnswer;

    /// The whole file a `path:line` claim points into, at the work tree (`at` = `None`)
    /// or at a commit.
    fn read_file(&self, _repo: Option<&str>, _path: &str, _at: Option<&str>) -> FileAnswer {
        FileAnswer::Unchecked { why: "no local checkout was named".into() }
    }

    /// A commit of the repository `repo` names (or of any checkout when `None`).
    fn find_commit(&self, _repo: Option<&str>, _sha: &str) -> CommitAnswer {
        CommitAnswer::Unchecked { why: "no local checkout was named".into() }
    }

    /// The last commit at or before `until` (Unix seconds) of the checkout holding
    /// `path`: what a report dated then could have read.
    fn revision_at(&self, _repo: Option<&str>, _path: &str, _until: i64) -> Option<String> {
        None
    }

    /// The commits that changed `path`, newest first, at most `max`.
    fn file_history(&self, _repo: Option<&str>, _path: &str, _max: usize) -> Vec<String> {
        Vec::new()
    }

    /// The first parent of `sha` in the checkout holding `path`: the state of the code
    /// just before that commit.
    fn parent_commit(&self, _repo: Option<&str>, _path: &str, _sha: &str) -> Option<String> {
        None
    }
}

/// No checkouts: every claim is unchecked.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCode;

impl CodeResolver for NoCode {
    fn check(&self, _repo: Option<&str>, _path: &str, _line: usize, _end: usize) -> CodeAnswer {
        CodeAnswer::Unchecked { why: "no local checkout was named".into() }
    }
}

/// The user's checkouts with the repository names each answers for.
#[derive(Debug, Default)]
pub struct Checkouts {
    pub list: Vec<Checkout>,
    /// Lower-cased repository name (`kubernetes/kubernetes`, `kubernetes`, `k/k`) →
    /// index in `list`.
    pub names: BTreeMap<String, usize>,
}

impl Checkouts {
    /// An empty set.
    pub fn new() -> Checkouts {
        Checkouts::default()
    }

    /// Adds a checkout answering for `repo` (`owner/name`) and any extra names; the
    /// checkout's own name and the repository's last component are added too.
    pub fn add(&mut self, checkout: Checkout, repo: &str, extra_names: &[&str]) {
        let idx = self.list.len();
        let mut names: Vec<String> = vec![checkout.name.clone(), repo.to_string()];
        if let Some((_, n)) = repo.split_once('/') {
            names.push(n.to_string());
        }
        names.extend(extra_names.iter().map(|s| s.to_string()));
        for n in names {
            self.names.entry(n.to_ascii_lowercase()).or_insert(idx);
        }
        self.list.push(checkout);
    }

    fn check_in(&self, c: &Checkout, path: &str, line: usize, end: usize) -> Option<CodeAnswer> {
        match c.resolve_range(path, line, end) {
            Ok(LineLookup::Found(h)) => {
                Some(CodeAnswer::Found { checkout: c.name.clone(), path: h.path, text: h.text, evidence: h.evidence })
            }
            Ok(LineLookup::PastEnd { total_lines }) => Some(CodeAnswer::Missing {
                why: format!("{}:{path} has {total_lines} lines; line {} is past its end", c.name, end.max(line)),
            }),
            Ok(LineLookup::NoSuchFile) => None,
            Err(e) => Some(CodeAnswer::Unchecked { why: e.to_string() }),
        }
    }
}

/// Where a path is: a checkout and the path in it, or why not.
enum Located<'a> {
    At(&'a Checkout, String),
    Missing(String),
    Unchecked(String),
}

impl Checkouts {
    fn candidates(&self, repo: Option<&str>) -> Result<Vec<&Checkout>, String> {
        if self.list.is_empty() {
            return Err("no local checkout was named".into());
        }
        match repo {
            Some(r) => match self.names.get(&r.to_ascii_lowercase()) {
                Some(i) => Ok(vec![&self.list[*i]]),
                None => Err(format!("no checkout was named for {r}")),
            },
            None => Ok(self.list.iter().collect()),
        }
    }

    fn locate(&self, repo: Option<&str>, path: &str) -> Located<'_> {
        let candidates = match self.candidates(repo) {
            Ok(c) => c,
            Err(why) => return Located::Unchecked(why),
        };
        // The path as written, from the checkout root.
        for c in &candidates {
            if c.has_file(path) {
                return Located::At(c, path.trim_start_matches("./").to_string());
            }
        }
        // A partial path (`dumplogs.go`, `pkg/x/y.go` under a sub-tree): unique suffix.
        let mut matches: Vec<(&Checkout, String)> = Vec::new();
        for c in &candidates {
            for f in c.files_ending_with(path) {
                matches.push((c, f));
            }
        }
        match matches.len() {
            1 => {
                let (c, f) = matches.remove(0);
                Located::At(c, f)
            }
            n if n > 1 => {
                Located::Unchecked(format!("{n} files end with {path} ({} ...); write a longer path", matches[0].1))
            }
            _ => {
                // Without a repository, a path is missing from a checkout only when its
                // directory is there: `test/e2e/data/x.yaml` of another project shares
                // `test/` with most checkouts.
                let home: Vec<&str> = candidates
                    .iter()
                    .filter(|c| repo.is_some() || c.has_parent_dir(path))
                    .map(|c| c.name.as_str())
                    .collect();
                if home.is_empty() {
                    Located::Unchecked(format!("{path} is not in any named checkout"))
                } else {
                    Located::Missing(format!("no file {path} in {}", home.join(", ")))
                }
            }
        }
    }
}

impl CodeResolver for Checkouts {
    fn check(&self, repo: Option<&str>, path: &str, line: usize, end: usize) -> CodeAnswer {
        match self.locate(repo, path) {
            Located::At(c, f) => {
                self.check_in(c, &f, line, end).unwrap_or(CodeAnswer::Unchecked { why: "unreadable".into() })
            }
            Located::Missing(why) => CodeAnswer::Missing { why },
            Located::Unchecked(why) => CodeAnswer::Unchecked { why },
        }
    }

    fn read_file(&self, repo: Option<&str>, path: &str, at: Option<&str>) -> FileAnswer {
        match self.locate(repo, path) {
            Located::At(c, f) => match c.file_text(&f, at) {
                Ok(Some(t)) => FileAnswer::Found(Box::new(t)),
                Ok(None) => match at {
                    Some(sha) => FileAnswer::Unchecked { why: format!("{}: no {f} at commit {sha}", c.name) },
                    None => FileAnswer::Unchecked { why: "unreadable".into() },
                },
                Err(e) => FileAnswer::Unchecked { why: e.to_string() },
            },
            Located::Missing(why) => FileAnswer::Missing { why },
            Located::Unchecked(why) => FileAnswer::Unchecked { why },
        }
    }

    fn revision_at(&self, repo: Option<&str>, path: &str, until: i64) -> Option<String> {
        let Located::At(c, _) = self.locate(repo, path) else { return None };
        c.revision_at(until)
    }

    fn file_history(&self, repo: Option<&str>, path: &str, max: usize) -> Vec<String> {
        let Located::At(c, f) = self.locate(repo, path) else { return Vec::new() };
        c.file_history(&f, max)
    }

    fn parent_commit(&self, repo: Option<&str>, path: &str, sha: &str) -> Option<String> {
        let Located::At(c, _) = self.locate(repo, path) else { return None };
        c.parent(sha)
    }

    fn find_commit(&self, repo: Option<&str>, sha: &str) -> CommitAnswer {
        let candidates = match self.candidates(repo) {
            Ok(c) => c,
            Err(why) => return CommitAnswer::Unchecked { why },
        };
        let mut missing: Vec<(String, String)> = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        for c in &candidates {
            match c.commit(sha) {
                Ok(Some(found)) => return CommitAnswer::Found(Box::new(found)),
                Ok(None) if c.is_shallow() => problems.push(format!("{} is a shallow clone", c.name)),
                Ok(None) => match c.head() {
                    Some(h) => missing.push((c.name.clone(), h.day.clone())),
                    None => problems.push(format!("{} is not a git repository", c.name)),
                },
                Err(e) => problems.push(e.to_string()),
            }
        }
        // Only a single named repository's full clone can say "no such commit".
        match (repo.is_some(), missing.as_slice(), problems.is_empty()) {
            (true, [(name, day)], true) => CommitAnswer::Missing {
                why: format!("no commit {sha} in the checkout {name} (full history, HEAD of {day})"),
                head_day: day.clone(),
            },
            _ => CommitAnswer::Unchecked {
                why: if problems.is_empty() {
                    format!(
                        "not in the checkouts {}",
                        missing.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
                    )
                } else {
                    problems.join("; ")
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_parsing() {
        let o = parse_owners(
            "# comment\napprovers:\n  - alice # lead\n  - \"bob\"\nreviewers: [carol, dave]\nlabels:\n- sig/node\n- area/test\noptions:\n  no_parent_owners: true\n",
        );
        assert_eq!(o.approvers, vec!["alice", "bob"]);
        assert_eq!(o.reviewers, vec!["carol", "dave"]);
        assert_eq!(o.labels, vec!["area/test", "sig/node"]);
        assert!(o.no_parent_owners);
        let f = parse_owners("filters:\n  \".*\":\n    approvers:\n    - erin\n    labels:\n    - sig/testing\n  \"\\\\.go$\":\n    approvers:\n    - frank\n");
        assert_eq!(f.approvers, vec!["erin"]);
        assert_eq!(f.labels, vec!["sig/testing"]);
    }

    #[test]
    fn job_blocks() {
        let y = "periodics:\n- interval: 1h\n  name: ci-a\n  annotations:\n    testgrid-dashboards: sig-x\n    testgrid-alert-email: \"a@example.com\"\n    description: >\n      long\n      text\n  spec:\n    containers:\n    - name: ci-a\n- name: ci-b\npresubmits:\n  kubernetes/kubernetes:\n  - name: pull-x\n    annotations:\n      testgrid-tab-name: px\n";
        let lines: Vec<String> = y.lines().map(str::to_string).collect();
        let b = job_block(&lines, 2, 2).unwrap();
        assert!(job_block(&lines, 11, 6).is_none(), "a container name is not a job");
        assert_eq!(b.kind.as_deref(), Some("periodic"));
        assert_eq!(b.annotations.get("testgrid-alert-email").map(String::as_str), Some("a@example.com"));
        assert_eq!(b.annotations.get("description").map(String::as_str), Some("long text"));
        let p = job_block(&lines, 15, 4).unwrap();
        assert_eq!(p.kind.as_deref(), Some("presubmit"));
        assert_eq!(p.repo.as_deref(), Some("kubernetes/kubernetes"));
        assert_eq!(p.annotations.get("testgrid-tab-name").map(String::as_str), Some("px"));
        assert_eq!(yaml_key_value("  - name: \"x\" # c", "name"), Some((4, "x".into())));
        assert_eq!(yaml_key_value("    name: y", "name"), Some((4, "y".into())));
        assert_eq!(yaml_key_value("    names: y", "name"), None);
    }

    #[test]
    fn paths_stay_inside() {
        assert!(clean_rel("../etc/passwd").is_err());
        assert!(clean_rel("/etc/passwd").is_err());
        assert_eq!(clean_rel("./a/b.go").unwrap(), PathBuf::from("a/b.go"));
    }
}
