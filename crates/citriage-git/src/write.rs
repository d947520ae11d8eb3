//! Writing a history: a bare repository made from a `git fast-import` stream built
//! with [`ImportStream`] (one git process for the whole history). Authors, committers
//! and dates are given, never taken from the environment or the clock, so the same
//! stream gives the same commit ids on every machine.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::GitError;
use crate::program::{GitProgram, Run};
use crate::repo::Git;

/// A person and an instant, as a commit records them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub name: String,
    pub email: String,
    /// Unix seconds (written with a `+0000` offset).
    pub time: i64,
}

/// One commit of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCommit {
    /// The branch it is committed on (`main`).
    pub branch: String,
    pub author: Signature,
    pub committer: Signature,
    pub message: String,
    /// The files it writes (`Some(content)`) or deletes (`None`), by path.
    pub changes: Vec<(String, Option<Vec<u8>>)>,
}

/// A `git fast-import` stream: commits marked `:1`, `:2`, … in the order added,
/// each on top of the previous commit of its branch.
#[derive(Debug, Default)]
pub struct ImportStream {
    bytes: Vec<u8>,
    marks: u64,
    tips: BTreeMap<String, u64>,
}

fn data(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(format!("data {}\n", bytes.len()).as_bytes());
    out.extend_from_slice(bytes);
    out.push(b'\n');
}

fn person(s: &Signature) -> String {
    let clean = |t: &str| t.replace(['<', '>', '\n', '\r'], "");
    format!("{} <{}> {} +0000", clean(&s.name), clean(&s.email), s.time)
}

impl ImportStream {
    pub fn new() -> ImportStream {
        ImportStream::default()
    }

    /// Adds a commit; returns its mark (the key of [`Git::fast_import`]'s answer).
    /// A path holding a line break or a NUL is refused.
    pub fn commit(&mut self, c: &NewCommit) -> Result<u64, GitError> {
        for (p, _) in &c.changes {
            if p.is_empty() || p.contains(['\n', '\r', '\0']) || p.starts_with('/') || p.starts_with('"') {
                return Err(GitError::BadArgument {
                    checkout: "fast-import stream".into(),
                    what: "path",
                    value: p.chars().take(120).collect(),
                    why: "empty, absolute, quoted, or holds a line break or a NUL".into(),
                });
            }
        }
        self.marks += 1;
        let mark = self.marks;
        let b = &mut self.bytes;
        b.extend_from_slice(format!("commit refs/heads/{}\nmark :{mark}\n", c.branch).as_bytes());
        b.extend_from_slice(format!("author {}\ncommitter {}\n", person(&c.author), person(&c.committer)).as_bytes());
        data(b, c.message.as_bytes());
        if let Some(parent) = self.tips.get(&c.branch) {
            b.extend_from_slice(format!("from :{parent}\n").as_bytes());
        }
        for (path, content) in &c.changes {
            match content {
                Some(bytes) => {
                    b.extend_from_slice(format!("M 100644 inline {path}\n").as_bytes());
                    data(b, bytes);
                }
                None => b.extend_from_slice(format!("D {path}\n").as_bytes()),
            }
        }
        b.push(b'\n');
        self.tips.insert(c.branch.clone(), mark);
        Ok(mark)
    }

    /// Commits added so far.
    pub fn len(&self) -> u64 {
        self.marks
    }

    pub fn is_empty(&self) -> bool {
        self.marks == 0
    }
}

impl Git {
    /// Creates a bare repository in `dir` (made when missing; it must be empty) whose
    /// `HEAD` names `branch`.
    pub fn init_bare(program: &GitProgram, dir: &Path, branch: &str) -> Result<Git, GitError> {
        let name = dir.display().to_string();
        let failed =
            |detail: String| GitError::Failed { checkout: name.clone(), command: "init".into(), stderr: detail };
        std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
        if std::fs::read_dir(dir).map_err(|e| failed(e.to_string()))?.next().is_some() {
            return Err(failed("the folder is not empty".into()));
        }
        let head = format!("--initial-branch={branch}");
        let r = program.run(&Run {
            dir,
            checkout: &name,
            args: &["init", "--quiet", "--bare", &head, "."],
            stdin: None,
            limit: 1 << 16,
        })?;
        if !r.ok() {
            return Err(failed(r.stderr));
        }
        Git::open_with(program, dir)
    }

    /// Loads a stream in one `git fast-import`; returns each mark's commit id.
    pub fn fast_import(&self, stream: &ImportStream) -> Result<BTreeMap<u64, String>, GitError> {
        let marks_file = self.dir().join("citriage-import.marks");
        let export = format!("--export-marks={}", marks_file.display());
        let name = self.dir().display().to_string();
        let args = ["fast-import", "--quiet", "--done", &export];
        let mut input = stream.bytes.clone();
        input.extend_from_slice(b"done\n");
        let r = self.program().run(&Run {
            dir: self.dir(),
            checkout: &name,
            args: &args,
            stdin: Some(&input),
            limit: 1 << 20,
        })?;
        let text = std::fs::read_to_string(&marks_file);
        let _ = std::fs::remove_file(&marks_file);
        if !r.ok() {
            return Err(GitError::Failed { checkout: name, command: "fast-import".into(), stderr: r.stderr });
        }
        let text = text.map_err(|e| GitError::Unexpected {
            checkout: name.clone(),
            command: "fast-import".into(),
            detail: format!("no marks written: {e}"),
        })?;
        let mut out = BTreeMap::new();
        for line in text.lines() {
            let parsed = line
                .strip_prefix(':')
                .and_then(|l| l.split_once(' '))
                .and_then(|(m, sha)| Some((m.parse::<u64>().ok()?, sha.trim().to_string())));
            match parsed {
                Some((m, sha)) if sha.len() == 40 => {
                    out.insert(m, sha);
                }
                _ => {
                    return Err(GitError::Unexpected {
                        checkout: name,
                        command: "fast-import".into(),
                        detail: format!("marks line {line:?}"),
                    })
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::LogQuery;

    fn sig(time: i64) -> Signature {
        Signature { name: "Ada Example".into(), email: "ada@example.com".into(), time }
    }

    fn two_commits() -> ImportStream {
        let mut s = ImportStream::new();
        for (i, (path, body)) in [("a.go", "package a\n"), ("pkg/b.go", "package b\n")].iter().enumerate() {
            s.commit(&NewCommit {
                branch: "main".into(),
                author: sig(1_700_000_000 + i as i64),
                committer: sig(1_700_000_000 + i as i64),
                message: format!("commit {i}\n"),
                changes: vec![(path.to_string(), Some(body.as_bytes().to_vec()))],
            })
            .unwrap();
        }
        s
    }

    #[test]
    fn a_stream_makes_the_same_commits_twice() {
        let Ok(program) = GitProgram::locate() else {
            eprintln!("skipped: git is not installed");
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let mut ids = Vec::new();
        for n in ["one", "two"] {
            let git = Git::init_bare(&program, &tmp.path().join(n), "main").unwrap();
            let marks = git.fast_import(&two_commits()).unwrap();
            assert_eq!(marks.len(), 2);
            let log = git.log(&LogQuery::of("main").with_files()).unwrap();
            assert_eq!(log.len(), 2);
            assert_eq!(log[0].sha, marks[&2]);
            assert_eq!(log[0].files, vec!["pkg/b.go".to_string()]);
            assert_eq!(log[1].parents.len(), 0);
            assert_eq!(log[0].parents, vec![marks[&1].clone()]);
            ids.push(marks);
        }
        assert_eq!(ids[0], ids[1]);
        // A second import into a repository that is not empty is refused at init.
        assert!(Git::init_bare(&program, &tmp.path().join("one"), "main").is_err());
    }

    #[test]
    fn a_path_with_a_line_break_is_refused() {
        let mut s = ImportStream::new();
        let c = NewCommit {
            branch: "main".into(),
            author: sig(1),
            committer: sig(1),
            message: "x".into(),
            changes: vec![("a\nM 100644 inline b".into(), Some(b"x".to_vec()))],
        };
        assert!(matches!(s.commit(&c), Err(GitError::BadArgument { .. })));
        assert!(s.is_empty());
    }
}
