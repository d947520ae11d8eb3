//! Commits as `git log` lists them, read in one process per question: the header
//! fields NUL-separated (no commit message, name or path can hold a NUL), each
//! tagged so no field is empty, then the files the commit changed (`--name-only`,
//! merges against their first parent) or its patch.

/// Which commits a [`crate::Git::log`] lists, and what it reads of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogQuery {
    /// Commits reachable from this revision (`HEAD` when empty)...
    pub to: String,
    /// ...and not from this one (`from..to`), when given.
    pub from: Option<String>,
    /// Only commits touching these paths (pathspecs, relative to the checkout).
    pub paths: Vec<String>,
    /// Follow only the first parent of merges (a branch's own history).
    pub first_parent: bool,
    /// Leave merge commits out.
    pub no_merges: bool,
    /// Only commits committed at or after / at or before these Unix seconds.
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// At most this many commits (the newest).
    pub max_count: Option<usize>,
    /// Oldest first instead of newest first.
    pub reverse: bool,
    /// What each commit carries besides its header.
    pub detail: Detail,
    /// Only commits whose diff changes the number of occurrences of this string
    /// (`git log -S`).
    pub pickaxe: Option<String>,
}

/// What a listed commit carries besides its header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Detail {
    /// Nothing.
    #[default]
    None,
    /// The paths it changed (`--name-only`; a merge against its first parent).
    Files,
    /// Its patch (`-p`, zero lines of context), merges without one.
    Patch,
}

impl LogQuery {
    /// The commits of `from..to`: reachable from `to` and not from `from`.
    pub fn range(from: &str, to: &str) -> LogQuery {
        LogQuery { from: Some(from.to_string()), to: to.to_string(), ..LogQuery::default() }
    }

    /// The history of one revision.
    pub fn of(rev: &str) -> LogQuery {
        LogQuery { to: rev.to_string(), ..LogQuery::default() }
    }

    /// Each commit with the paths it changed.
    pub fn with_files(mut self) -> LogQuery {
        self.detail = Detail::Files;
        self
    }

    /// Each commit with its patch.
    pub fn with_patches(mut self) -> LogQuery {
        self.detail = Detail::Patch;
        self
    }

    /// Only commits touching these paths.
    pub fn paths<S: AsRef<str>>(mut self, paths: &[S]) -> LogQuery {
        self.paths = paths.iter().map(|p| p.as_ref().to_string()).collect();
        self
    }
}

/// One commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commit {
    /// The full commit id.
    pub sha: String,
    /// Parent ids (two or more for a merge).
    pub parents: Vec<String>,
    pub author: String,
    pub author_email: String,
    /// Author date, Unix seconds, and as git writes it in strict ISO 8601 (with the
    /// author's offset).
    pub author_time: i64,
    pub author_date: String,
    /// Committer date, Unix seconds.
    pub commit_time: i64,
    pub subject: String,
    /// The message after the subject, without its trailing line breaks.
    pub body: String,
    /// The pull request the subject names: GitHub's merge (`Merge pull request #N
    /// from …`) or a squash (`… (#N)`).
    pub pr: Option<PrRef>,
    /// The paths changed (when asked for), sorted.
    pub files: Vec<String>,
    /// The patch (when asked for).
    pub patch: String,
}

impl Commit {
    /// True for a merge commit.
    pub fn is_merge(&self) -> bool {
        self.parents.len() > 1
    }
}

/// A pull request named by a commit subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PrRef {
    pub number: u64,
    pub kind: PrMerge,
}

/// How a pull request landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrMerge {
    /// GitHub's merge commit: `Merge pull request #N from owner/branch`.
    Merge,
    /// A squashed or rebased commit whose subject ends in `(#N)`.
    Squash,
}

/// The pull request a commit subject names, if any: `Merge pull request #N from …`,
/// else a subject ending in `(#N)`. A revert's subject (`Revert "x (#N)"`) names
/// none: it ends in a quote.
pub fn pr_of_subject(subject: &str) -> Option<PrRef> {
    let s = subject.trim();
    if let Some(rest) = s.strip_prefix("Merge pull request #") {
        let digits: &str = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
        if rest[digits.len()..].starts_with(" from ") {
            return digits.parse().ok().map(|number| PrRef { number, kind: PrMerge::Merge });
        }
        return None;
    }
    let inner = s.strip_suffix(')')?;
    let open = inner.rfind("(#")?;
    let digits = &inner[open + 2..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().map(|number| PrRef { number, kind: PrMerge::Squash })
}

/// The header fields, in order, each after its tag letter.
const FIELDS: [(&str, char); 9] = [
    ("%H", 'H'),
    ("%P", 'P'),
    ("%an", 'N'),
    ("%ae", 'E'),
    ("%at", 'T'),
    ("%aI", 'D'),
    ("%ct", 'C'),
    ("%s", 'S'),
    ("%b", 'B'),
];

/// The `--format` of every listed commit: two NULs open a record (fields are
/// never empty, so two NULs never meet inside one), then each field after its tag.
pub(crate) fn format_arg() -> String {
    let mut f = String::from("--format=%x00%x00");
    for (i, (code, tag)) in FIELDS.iter().enumerate() {
        if i > 0 {
            f.push_str("%x00");
        }
        f.push(*tag);
        f.push_str(code);
    }
    f.push_str("%x00");
    f
}

/// Reads the records [`format_arg`] writes; `Err` says what was malformed.
pub(crate) fn parse(out: &[u8], detail: Detail) -> Result<Vec<Commit>, String> {
    let text = String::from_utf8_lossy(out);
    let mut commits = Vec::new();
    let mut rest = text.as_ref();
    if rest.is_empty() {
        return Ok(commits);
    }
    rest = rest.strip_prefix("\0\0").ok_or_else(|| "no commit record at the start".to_string())?;
    for record in rest.split("\0\0") {
        commits.push(parse_record(record, detail)?);
    }
    Ok(commits)
}

fn parse_record(record: &str, detail: Detail) -> Result<Commit, String> {
    let mut parts = record.splitn(FIELDS.len() + 1, '\0');
    let mut field = |tag: char| -> Result<&str, String> {
        let p = parts.next().ok_or_else(|| format!("a record ends before its {tag} field"))?;
        p.strip_prefix(tag)
            .ok_or_else(|| format!("expected the {tag} field, found {:?}", p.chars().take(20).collect::<String>()))
    };
    let sha = field('H')?.to_string();
    if !(sha.len() == 40 || sha.len() == 64) || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{sha:?} is not a commit id"));
    }
    let parents = field('P')?.split_whitespace().map(str::to_string).collect();
    let author = field('N')?.to_string();
    let author_email = field('E')?.to_string();
    let author_time = field('T')?.trim().parse().map_err(|_| format!("{sha}: bad author time"))?;
    let author_date = field('D')?.to_string();
    let commit_time = field('C')?.trim().parse().map_err(|_| format!("{sha}: bad commit time"))?;
    let subject = field('S')?.to_string();
    let body = field('B')?.trim_end_matches(['\n', '\r']).to_string();
    let tail = parts.next().unwrap_or("");
    let (files, patch) = match detail {
        Detail::None => (Vec::new(), String::new()),
        Detail::Files => {
            let mut f: Vec<String> = tail.lines().filter(|l| !l.is_empty()).map(unquote_path).collect();
            f.sort();
            f.dedup();
            (f, String::new())
        }
        Detail::Patch => (Vec::new(), tail.trim_start_matches('\n').to_string()),
    };
    Ok(Commit {
        pr: pr_of_subject(&subject),
        sha,
        parents,
        author,
        author_email,
        author_time,
        author_date,
        commit_time,
        subject,
        body,
        files,
        patch,
    })
}

/// A path as git lists it: as written, or C-quoted (`"a\tb"`, octal escapes for
/// bytes) when it holds a quote, a backslash or a control character.
pub(crate) fn unquote_path(line: &str) -> String {
    let Some(inner) = line.strip_prefix('"').and_then(|l| l.strip_suffix('"')) else {
        return line.to_string();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'a') => bytes.push(7),
            Some(b'b') => bytes.push(8),
            Some(b'f') => bytes.push(12),
            Some(b'v') => bytes.push(11),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match it.peek() {
                        Some(&o @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(o - b'0');
                            it.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Occurrences of `needle` on the added and on the removed lines of a patch.
pub(crate) fn count_changes(patch: &str, needle: &str) -> (usize, usize) {
    let (mut added, mut removed) = (0, 0);
    for line in patch.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if let Some(rest) = line.strip_prefix('+') {
            added += rest.matches(needle).count();
        } else if let Some(rest) = line.strip_prefix('-') {
            removed += rest.matches(needle).count();
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_requests_from_subjects() {
        assert_eq!(
            pr_of_subject("Merge pull request #123 from alice/fix-x"),
            Some(PrRef { number: 123, kind: PrMerge::Merge })
        );
        assert_eq!(pr_of_subject("Fix the MTU check (#4567)"), Some(PrRef { number: 4567, kind: PrMerge::Squash }));
        assert_eq!(pr_of_subject("Revert \"Fix the MTU check (#4567)\""), None);
        assert_eq!(pr_of_subject("Merge pull request #12"), None);
        assert_eq!(pr_of_subject("Bump x (#)"), None);
        assert_eq!(pr_of_subject("see (#12) for details"), None);
        assert_eq!(pr_of_subject("Merge branch 'main' (#9x)"), None);
    }

    #[test]
    fn quoted_paths() {
        assert_eq!(unquote_path("plain/é.go"), "plain/é.go");
        assert_eq!(unquote_path("\"we\\\"ird\\tname\""), "we\"ird\tname");
        assert_eq!(unquote_path("\"\\303\\251t\\303\\251\""), "été");
        assert_eq!(unquote_path("\"a\\\\b\""), "a\\b");
    }

    #[test]
    fn records_with_empty_fields_and_hostile_messages() {
        let sha = "a".repeat(40);
        let out = format!(
            "\0\0H{sha}\0P\0Nx\0Ey@z\0T1\0D1970-01-01T00:00:01+00:00\0C2\0S\0B\0\n\0\0H{sha}\0P{sha} {sha}\0Nn\0Ee\0T3\0Dd\0C4\0SMerge pull request #7 from a/b\0Bbody \0\0 looks like a record\n\0\n\nf1\n\"q\\tq\"\n"
        );
        // A NUL pair cannot come from a message: git keeps no NUL in one. The
        // second record here is malformed on purpose.
        assert!(parse(out.as_bytes(), Detail::Files).is_err());
        let out = format!(
            "\0\0H{sha}\0P\0Nx\0Ey@z\0T1\0D1970-01-01T00:00:01+00:00\0C2\0S\0B\0\n\0\0H{sha}\0P{sha} {sha}\0Nn\0Ee\0T3\0Dd\0C4\0SMerge pull request #7 from a/b\0Bbody\nline\n\0\n\nf1\n\"q\\tq\"\n"
        );
        let c = parse(out.as_bytes(), Detail::Files).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].subject.as_str(), c[0].body.as_str(), c[0].files.len()), ("", "", 0));
        assert!(c[1].is_merge());
        assert_eq!(c[1].pr, Some(PrRef { number: 7, kind: PrMerge::Merge }));
        assert_eq!(c[1].body, "body\nline");
        assert_eq!(c[1].files, vec!["f1".to_string(), "q\tq".to_string()]);
    }

    #[test]
    fn counts_a_string_on_changed_lines() {
        let patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-timeout = 10 // timeout\n+timeout = 20\n";
        assert_eq!(count_changes(patch, "timeout"), (1, 2));
    }
}
