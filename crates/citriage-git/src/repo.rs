//! [`Git`]: one checkout and the questions citriage asks it. Revisions and paths
//! come from reports and pull requests, so they are checked before git sees them
//! (no option where a revision belongs, no line break in a path), and an answer is
//! never guessed: a revision the checkout does not have is an error that says so,
//! and says when the clone is shallow and cannot tell.

use crate::error::GitError;
use crate::log::{self, Commit, Detail, LogQuery, PrMerge, PrRef};
use crate::program::{GitProgram, Ran, Run};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The default bound on what one git run may write: 256 MiB.
pub const DEFAULT_OUTPUT_LIMIT: usize = 256 << 20;

/// One local checkout (a work tree or a bare repository).
#[derive(Debug)]
pub struct Git {
    program: GitProgram,
    dir: PathBuf,
    /// The checkout as errors name it (its path).
    name: String,
    limit: usize,
    shallow: OnceLock<bool>,
}

/// A line `git grep` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepHit {
    /// Path relative to the checkout.
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    pub text: String,
}

/// A commit `git log -S` lists, with the occurrences of the string on its added and
/// removed lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickaxeCommit {
    pub commit: Commit,
    pub added: usize,
    pub removed: usize,
}

/// The pull request's commit in a checkout's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrCommit {
    pub sha: String,
    pub kind: PrMerge,
}

fn check_rev<'a>(checkout: &str, rev: &'a str) -> Result<&'a str, GitError> {
    let bad = |why: &str| GitError::BadArgument {
        checkout: checkout.to_string(),
        what: "revision",
        value: rev.chars().take(80).collect(),
        why: why.to_string(),
    };
    if rev.is_empty() {
        return Err(bad("empty"));
    }
    if rev.starts_with('-') {
        return Err(bad("starts with '-' (an option, not a revision)"));
    }
    if rev.len() > 256 {
        return Err(bad("longer than 256 characters"));
    }
    if rev.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad("holds a space or a control character"));
    }
    if rev.contains("..") {
        return Err(bad("a range where one revision belongs"));
    }
    Ok(rev)
}

fn check_path<'a>(checkout: &str, path: &'a str) -> Result<&'a str, GitError> {
    let bad = |why: &str| GitError::BadArgument {
        checkout: checkout.to_string(),
        what: "path",
        value: path.chars().take(120).collect(),
        why: why.to_string(),
    };
    if path.is_empty() {
        return Err(bad("empty"));
    }
    if path.contains(['\n', '\r', '\0']) {
        return Err(bad("holds a line break or a NUL"));
    }
    Ok(path)
}

impl Git {
    /// The checkout at `dir`, with `git` from `PATH`.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Git, GitError> {
        Git::open_with(&GitProgram::locate()?, dir)
    }

    /// The checkout at `dir`, with a given git program. Fails when `dir` is not in a
    /// git repository.
    pub fn open_with(program: &GitProgram, dir: impl Into<PathBuf>) -> Result<Git, GitError> {
        let dir = dir.into();
        let name = dir.display().to_string();
        if !dir.is_dir() {
            return Err(GitError::NotARepository { checkout: name, detail: "no such folder".into() });
        }
        let git = Git { program: program.clone(), dir, name, limit: DEFAULT_OUTPUT_LIMIT, shallow: OnceLock::new() };
        let r = git.raw(&["rev-parse", "--git-dir"])?;
        if !r.ok() {
            return Err(GitError::NotARepository { checkout: git.name.clone(), detail: first_line(&r.stderr) });
        }
        Ok(git)
    }

    /// The same checkout with another bound on what one run may write.
    pub fn with_output_limit(mut self, bytes: usize) -> Git {
        self.limit = bytes;
        self
    }

    /// The checkout's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The git program it runs.
    pub fn program(&self) -> &GitProgram {
        &self.program
    }

    fn raw(&self, args: &[&str]) -> Result<Ran, GitError> {
        self.program.run(&Run { dir: &self.dir, checkout: &self.name, args, stdin: None, limit: self.limit })
    }

    fn failed(&self, args: &[&str], r: &Ran) -> GitError {
        GitError::Failed {
            checkout: self.name.clone(),
            command: args.iter().take(3).copied().collect::<Vec<_>>().join(" "),
            stderr: first_line(&r.stderr),
        }
    }

    /// Runs git and returns stdout; a non-zero exit is an error.
    fn run(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let r = self.raw(args)?;
        if r.ok() {
            Ok(r.stdout)
        } else {
            Err(self.failed(args, &r))
        }
    }

    fn text(&self, args: &[&str]) -> Result<String, GitError> {
        Ok(String::from_utf8_lossy(&self.run(args)?).into_owned())
    }

    /// Whether the clone is shallow (its history cut off at some depth).
    pub fn is_shallow(&self) -> Result<bool, GitError> {
        if let Some(s) = self.shallow.get() {
            return Ok(*s);
        }
        let s = self.text(&["rev-parse", "--is-shallow-repository"])?.trim() == "true";
        Ok(*self.shallow.get_or_init(|| s))
    }

    /// The error for a revision this checkout does not have.
    fn absent(&self, rev: &str) -> GitError {
        match self.is_shallow() {
            Ok(true) => GitError::ShallowClone { checkout: self.name.clone(), revision: rev.to_string() },
            Ok(false) => GitError::UnknownRevision { checkout: self.name.clone(), revision: rev.to_string() },
            Err(e) => e,
        }
    }

    /// The full id of the commit a revision names (a SHA or a prefix of one, a
    /// branch, a tag, `HEAD~2`...).
    pub fn rev_parse(&self, rev: &str) -> Result<String, GitError> {
        let rev = check_rev(&self.name, rev)?;
        let spec = format!("{rev}^{{commit}}");
        let args = ["rev-parse", "--verify", spec.as_str()];
        let r = self.raw(&args)?;
        if r.ok() {
            let sha = String::from_utf8_lossy(&r.stdout).trim().to_string();
            return if sha.bytes().all(|b| b.is_ascii_hexdigit()) && matches!(sha.len(), 40 | 64) {
                Ok(sha)
            } else {
                Err(GitError::Unexpected {
                    checkout: self.name.clone(),
                    command: "rev-parse".into(),
                    detail: format!("{sha:?} is not a commit id"),
                })
            };
        }
        if r.stderr.contains("ambiguous") {
            return Err(GitError::AmbiguousRevision { checkout: self.name.clone(), revision: rev.to_string() });
        }
        if r.code == Some(128) || r.code == Some(1) {
            return Err(self.absent(rev));
        }
        Err(self.failed(&args, &r))
    }

    /// The commit a revision names; `Ok(None)` when the repository, whose history
    /// is complete, has no such commit (a shallow clone cannot tell: that is
    /// [`GitError::ShallowClone`]).
    pub fn find_commit(&self, rev: &str) -> Result<Option<Commit>, GitError> {
        match self.commit(rev) {
            Ok(c) => Ok(Some(c)),
            Err(GitError::UnknownRevision { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The commit a revision names, with its header (no files).
    pub fn commit(&self, rev: &str) -> Result<Commit, GitError> {
        let sha = self.rev_parse(rev)?;
        let format = log::format_arg();
        let args = ["log", "-1", "--no-walk", format.as_str(), sha.as_str(), "--"];
        let out = self.run(&args)?;
        let mut commits = log::parse(&out, Detail::None).map_err(|detail| self.unexpected("log", detail))?;
        commits.pop().ok_or_else(|| self.absent(rev))
    }

    /// HEAD's commit.
    pub fn head(&self) -> Result<Commit, GitError> {
        self.commit("HEAD")
    }

    fn unexpected(&self, command: &str, detail: String) -> GitError {
        GitError::Unexpected { checkout: self.name.clone(), command: command.into(), detail }
    }

    /// The commits a query lists, in one git process. An endpoint the checkout does
    /// not have is named in the error.
    pub fn log(&self, q: &LogQuery) -> Result<Vec<Commit>, GitError> {
        let to = if q.to.is_empty() { "HEAD" } else { q.to.as_str() };
        check_rev(&self.name, to)?;
        let range = match &q.from {
            Some(from) => format!("{}..{to}", check_rev(&self.name, from)?),
            None => to.to_string(),
        };
        for p in &q.paths {
            check_path(&self.name, p)?;
        }
        let mut args: Vec<String> = vec!["log".into(), "--no-color".into(), "--no-renames".into(), log::format_arg()];
        match q.detail {
            Detail::None => {}
            Detail::Files => args.extend(["--name-only".into(), "--diff-merges=first-parent".into()]),
            Detail::Patch => args.extend(["-p".into(), "--unified=0".into(), "--no-ext-diff".into()]),
        }
        if q.first_parent {
            args.push("--first-parent".into());
        }
        if q.no_merges {
            args.push("--no-merges".into());
        }
        if q.reverse {
            args.push("--reverse".into());
        }
        if let Some(n) = q.max_count {
            args.push(format!("--max-count={n}"));
        }
        if let Some(t) = q.since {
            args.push(format!("--since=@{t} +0000"));
        }
        if let Some(t) = q.until {
            args.push(format!("--until=@{t} +0000"));
        }
        if let Some(s) = &q.pickaxe {
            if s.is_empty() || s.contains('\0') {
                return Err(GitError::BadArgument {
                    checkout: self.name.clone(),
                    what: "search string",
                    value: s.chars().take(80).collect(),
                    why: "empty or holds a NUL".into(),
                });
            }
            args.push(format!("-S{s}"));
        }
        args.push(range);
        args.push("--".into());
        args.extend(q.paths.iter().cloned());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = self.raw(&argv)?;
        if !r.ok() {
            // Name the endpoint the checkout lacks, rather than git's message.
            self.rev_parse(to)?;
            if let Some(from) = &q.from {
                self.rev_parse(from)?;
            }
            return Err(self.failed(&argv, &r));
        }
        log::parse(&r.stdout, q.detail).map_err(|detail| self.unexpected("log", detail))
    }

    /// `git log -S<needle>` over HEAD's history (optionally limited to a pathspec),
    /// oldest first, at most the newest `max` such commits, each with the
    /// occurrences of the string its diff added and removed; one git process.
    pub fn pickaxe(&self, needle: &str, pathspec: Option<&str>, max: usize) -> Result<Vec<PickaxeCommit>, GitError> {
        let q = LogQuery {
            pickaxe: Some(needle.to_string()),
            reverse: true,
            max_count: Some(max),
            paths: pathspec.map(|p| vec![p.to_string()]).unwrap_or_default(),
            ..LogQuery::of("HEAD").with_patches()
        };
        Ok(self
            .log(&q)?
            .into_iter()
            .map(|mut commit| {
                let (added, removed) = log::count_changes(&commit.patch, needle);
                commit.patch.clear();
                PickaxeCommit { commit, added, removed }
            })
            .collect())
    }

    /// The contents of files at a revision, in one git process for all of them:
    /// `None` for a path the revision does not have as a file.
    pub fn read_files(&self, rev: &str, paths: &[&str]) -> Result<Vec<Option<Vec<u8>>>, GitError> {
        let sha = self.rev_parse(rev)?;
        let mut input = Vec::new();
        for p in paths {
            let p = check_path(&self.name, p)?;
            input.extend_from_slice(format!("{sha}:{}\n", p.trim_start_matches("./")).as_bytes());
        }
        let args = ["cat-file", "--batch"];
        let r = self.program.run(&Run {
            dir: &self.dir,
            checkout: &self.name,
            args: &args,
            stdin: Some(&input),
            limit: self.limit,
        })?;
        if !r.ok() {
            return Err(self.failed(&args, &r));
        }
        parse_batch(&r.stdout, paths.len()).map_err(|d| self.unexpected("cat-file", d))
    }

    /// A file at a revision; `None` when the revision has no such file.
    pub fn read_file(&self, rev: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        Ok(self.read_files(rev, &[path])?.pop().flatten())
    }

    /// A file's lines at a revision (line breaks and a final `\r` removed; invalid
    /// UTF-8 replaced); `None` when the revision has no such file.
    pub fn file_lines(&self, rev: &str, path: &str) -> Result<Option<Vec<String>>, GitError> {
        Ok(self.read_file(rev, path)?.map(|b| split_lines(&b)))
    }

    /// Whether `ancestor` is an ancestor of (or equal to) `descendant`.
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, GitError> {
        let (a, d) = (self.rev_parse(ancestor)?, self.rev_parse(descendant)?);
        let args = ["merge-base", "--is-ancestor", a.as_str(), d.as_str()];
        let r = self.raw(&args)?;
        match r.code {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(self.failed(&args, &r)),
        }
    }

    /// Which of `tips` contain `commit` in their history (are it or descend from it):
    /// `Some(true)` or `Some(false)` for each tip the checkout has, `None` for a tip it
    /// does not have (and, in a shallow clone, for a tip it cannot tell). Two git
    /// processes however many tips: one `cat-file --batch-check` says which tips exist,
    /// one `rev-list --ancestry-path` lists the descendants of `commit` among their
    /// history. A `commit` the checkout lacks is an error ([`GitError::UnknownRevision`]).
    pub fn contained_in(&self, commit: &str, tips: &[&str]) -> Result<Vec<Option<bool>>, GitError> {
        let base = self.rev_parse(commit)?;
        let mut input = Vec::new();
        for t in tips {
            input.extend_from_slice(format!("{}^{{commit}}\n", check_rev(&self.name, t)?).as_bytes());
        }
        let check = ["cat-file", "--batch-check"];
        let r = self.program.run(&Run {
            dir: &self.dir,
            checkout: &self.name,
            args: &check,
            stdin: Some(&input),
            limit: self.limit,
        })?;
        if !r.ok() {
            return Err(self.failed(&check, &r));
        }
        let text = String::from_utf8_lossy(&r.stdout);
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() != tips.len() {
            return Err(self.unexpected("cat-file", format!("{} answers for {} tips", lines.len(), tips.len())));
        }
        let full: Vec<Option<String>> = lines
            .iter()
            .map(|l| {
                let mut f = l.split(' ');
                match (f.next(), f.next()) {
                    (Some(sha), Some("commit")) if sha.bytes().all(|b| b.is_ascii_hexdigit()) => Some(sha.to_string()),
                    _ => None,
                }
            })
            .collect();
        let present: Vec<&str> = full.iter().flatten().map(String::as_str).collect();
        if present.is_empty() {
            return Ok(vec![None; tips.len()]);
        }
        let mut stdin = format!("^{base}\n");
        for sha in &present {
            stdin.push_str(sha);
            stdin.push('\n');
        }
        let args = ["rev-list", "--ancestry-path", "--stdin"];
        let r = self.program.run(&Run {
            dir: &self.dir,
            checkout: &self.name,
            args: &args,
            stdin: Some(stdin.as_bytes()),
            limit: self.limit,
        })?;
        if !r.ok() {
            return Err(self.failed(&args, &r));
        }
        let out = String::from_utf8_lossy(&r.stdout);
        let descendants: std::collections::BTreeSet<&str> = out.lines().map(str::trim).collect();
        let shallow = self.is_shallow()?;
        Ok(full
            .iter()
            .map(|sha| {
                let sha = sha.as_deref()?;
                let contains = sha == base || descendants.contains(sha);
                (contains || !shallow).then_some(contains)
            })
            .collect())
    }

    /// The best common ancestor of two revisions; `None` when they share no history.
    pub fn merge_base(&self, a: &str, b: &str) -> Result<Option<String>, GitError> {
        let (a, b) = (self.rev_parse(a)?, self.rev_parse(b)?);
        let args = ["merge-base", a.as_str(), b.as_str()];
        let r = self.raw(&args)?;
        match r.code {
            Some(0) => Ok(Some(String::from_utf8_lossy(&r.stdout).trim().to_string())),
            Some(1) => Ok(None),
            _ => Err(self.failed(&args, &r)),
        }
    }

    /// The last commit of a revision's history committed at or before `until` (Unix
    /// seconds); `None` when every commit is newer.
    pub fn last_commit_before(&self, rev: &str, until: i64) -> Result<Option<String>, GitError> {
        let sha = self.rev_parse(rev)?;
        let before = format!("--before=@{until} +0000");
        let out = self.text(&["rev-list", "-1", before.as_str(), sha.as_str()])?;
        let out = out.trim();
        Ok((!out.is_empty()).then(|| out.to_string()))
    }

    /// The commits of HEAD's history that changed a path, newest first, at most `max`.
    pub fn file_history(&self, path: &str, max: usize) -> Result<Vec<String>, GitError> {
        let path = check_path(&self.name, path)?;
        let n = format!("-n{max}");
        let out = self.text(&["log", n.as_str(), "--format=%H", "--", path])?;
        Ok(out.lines().map(str::to_string).filter(|s| !s.is_empty()).collect())
    }

    /// The tracked files matching the pathspecs (all when empty), sorted.
    pub fn ls_files(&self, pathspecs: &[&str]) -> Result<Vec<String>, GitError> {
        let mut args = vec!["ls-files", "-z", "--"];
        for p in pathspecs {
            args.push(check_path(&self.name, p)?);
        }
        let out = self.run(&args)?;
        let mut files: Vec<String> =
            String::from_utf8_lossy(&out).split('\0').filter(|f| !f.is_empty()).map(str::to_string).collect();
        files.sort();
        Ok(files)
    }

    /// The lines holding `needle` (a fixed string, case-sensitive) in the tracked
    /// text files at `rev` (the work tree when `None`), under the pathspecs, sorted
    /// by path and line; at most `max` hits.
    pub fn grep(
        &self,
        needle: &str,
        rev: Option<&str>,
        pathspecs: &[&str],
        max: usize,
    ) -> Result<Vec<GrepHit>, GitError> {
        let sha = self.grep_args_checked(needle, rev)?;
        let mut args = vec!["grep", "-n", "-I", "-F", "--null", "-e", needle];
        if let Some(s) = &sha {
            args.push(s);
        }
        args.push("--");
        for p in pathspecs {
            args.push(check_path(&self.name, p)?);
        }
        let r = self.raw(&args)?;
        match r.code {
            Some(0) => {}
            Some(1) if r.stderr.is_empty() => return Ok(Vec::new()),
            _ => return Err(self.failed(&args, &r)),
        }
        let prefix = sha.map(|s| format!("{s}:")).unwrap_or_default();
        let mut hits = Vec::new();
        for line in String::from_utf8_lossy(&r.stdout).split('\n') {
            let mut parts = line.splitn(3, '\0');
            let (Some(path), Some(no), Some(text)) = (parts.next(), parts.next(), parts.next()) else { continue };
            let Ok(no) = no.parse() else { continue };
            hits.push(GrepHit {
                path: path.strip_prefix(prefix.as_str()).unwrap_or(path).to_string(),
                line: no,
                text: text.to_string(),
            });
        }
        hits.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        hits.truncate(max);
        Ok(hits)
    }

    /// Whether any tracked text file at `rev` (the work tree when `None`) under the
    /// pathspecs holds `needle`.
    pub fn contains_text(&self, needle: &str, rev: Option<&str>, pathspecs: &[&str]) -> Result<bool, GitError> {
        let sha = self.grep_args_checked(needle, rev)?;
        let mut args = vec!["grep", "-q", "-I", "-F", "-e", needle];
        if let Some(s) = &sha {
            args.push(s);
        }
        args.push("--");
        for p in pathspecs {
            args.push(check_path(&self.name, p)?);
        }
        let r = self.raw(&args)?;
        match r.code {
            Some(0) => Ok(true),
            Some(1) if r.stderr.is_empty() => Ok(false),
            _ => Err(self.failed(&args, &r)),
        }
    }

    /// A search string checked, and the revision it is searched at resolved.
    fn grep_args_checked(&self, needle: &str, rev: Option<&str>) -> Result<Option<String>, GitError> {
        if needle.is_empty() || needle.contains(['\n', '\0']) {
            return Err(GitError::BadArgument {
                checkout: self.name.clone(),
                what: "search string",
                value: needle.chars().take(80).collect(),
                why: "empty, or holds a line break or a NUL".into(),
            });
        }
        rev.map(|r| self.rev_parse(r)).transpose()
    }

    /// The branch HEAD is on; `None` when detached.
    pub fn current_branch(&self) -> Result<Option<String>, GitError> {
        let out = self.text(&["rev-parse", "--abbrev-ref", "HEAD"])?;
        let b = out.trim();
        Ok((!b.is_empty() && b != "HEAD").then(|| b.to_string()))
    }

    /// The commit that landed pull request `number` in a revision's history:
    /// GitHub's merge commit (`Merge pull request #N from …`), else the newest commit
    /// whose subject ends in `(#N)`. `None` when neither is there. One git process.
    pub fn find_pr_commit(&self, rev: &str, number: u64) -> Result<Option<PrCommit>, GitError> {
        let sha = self.rev_parse(rev)?;
        let merge = format!("--grep=Merge pull request #{number} from ");
        let squash = format!("--grep=(#{number})");
        let format = log::format_arg();
        let args = ["log", "--fixed-strings", merge.as_str(), squash.as_str(), format.as_str(), sha.as_str(), "--"];
        let out = self.run(&args)?;
        let commits = log::parse(&out, Detail::None).map_err(|d| self.unexpected("log", d))?;
        let named = |kind: PrMerge| {
            commits.iter().find(|c| c.pr == Some(PrRef { number, kind }) && (kind == PrMerge::Squash || c.is_merge()))
        };
        Ok(named(PrMerge::Merge)
            .map(|c| PrCommit { sha: c.sha.clone(), kind: PrMerge::Merge })
            .or_else(|| named(PrMerge::Squash).map(|c| PrCommit { sha: c.sha.clone(), kind: PrMerge::Squash })))
    }
}

fn first_line(s: &str) -> String {
    let l = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    l.strip_prefix("fatal: ").unwrap_or(l).chars().take(400).collect()
}

/// Lines of a file: split at `\n`, a final `\r` removed, no last empty line.
pub fn split_lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<String> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// `cat-file --batch` answers: `<oid> <type> <size>\n<bytes>\n`, or `<name> missing`.
fn parse_batch(out: &[u8], n: usize) -> Result<Vec<Option<Vec<u8>>>, String> {
    let mut at = 0;
    let mut files = Vec::with_capacity(n);
    while files.len() < n {
        let end = out[at..].iter().position(|&b| b == b'\n').ok_or("an answer without its header")? + at;
        let header = String::from_utf8_lossy(&out[at..end]).into_owned();
        at = end + 1;
        let fields: Vec<&str> = header.rsplitn(3, ' ').collect();
        match fields.as_slice() {
            [size, kind, _oid] if size.bytes().all(|b| b.is_ascii_digit()) && !size.is_empty() => {
                let size: usize = size.parse().map_err(|_| format!("bad size in {header:?}"))?;
                let body = out.get(at..at + size).ok_or_else(|| format!("{header:?}: the answer is cut short"))?;
                files.push((*kind == "blob").then(|| body.to_vec()));
                at += size + 1;
            }
            _ if header.ends_with(" missing") || header.ends_with(" ambiguous") => files.push(None),
            _ => return Err(format!("unexpected answer {header:?}")),
        }
    }
    Ok(files)
}
