//! Unified diffs (PR `code.diff`, `git log -p`, GitHub per-file patches) parsed
//! into files with their added and removed lines and the line numbers on the new
//! (added) / old (removed) side, so a match can be cited as `file:line`.

use serde::{Deserialize, Serialize};

/// One file of a diff.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffFile {
    /// Path on the new side (old side for deletions).
    pub path: String,
    /// Added lines: (new-side line, text without the `+`).
    pub added: Vec<(u32, String)>,
    /// Removed lines: (old-side line, text without the `-`).
    pub removed: Vec<(u32, String)>,
}

/// A parsed diff.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedDiff {
    pub files: Vec<DiffFile>,
}

impl ParsedDiff {
    /// Paths touched.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.path.as_str())
    }

    /// Number of added plus removed lines.
    pub fn size(&self) -> usize {
        self.files.iter().map(|f| f.added.len() + f.removed.len()).sum()
    }
}

fn strip_prefix_path(p: &str) -> String {
    let p = p.trim();
    let p = p.split('\t').next().unwrap_or(p);
    let p = p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p);
    p.trim_matches('"').to_string()
}

/// Parses `@@ -a,b +c,d @@` into ((old start, old count), (new start, new count)).
fn hunk_header(line: &str) -> Option<((u32, u32), (u32, u32))> {
    let rest = line.strip_prefix("@@")?;
    let range = |t: &str| -> Option<(u32, u32)> {
        let mut it = t.split(',');
        let start = it.next()?.parse().ok()?;
        let count = match it.next() {
            Some(c) => c.parse().ok()?,
            None => 1,
        };
        Some((start, count))
    };
    let mut old = None;
    let mut new = None;
    for tok in rest.split_whitespace() {
        if let Some(t) = tok.strip_prefix('-') {
            old = range(t);
        } else if let Some(t) = tok.strip_prefix('+') {
            new = range(t);
        } else if tok == "@@" {
            break;
        }
    }
    Some((old?, new?))
}

/// Parses a multi-file unified diff (`diff --git` headers or bare `---`/`+++` pairs).
pub fn parse_unified(text: &str) -> ParsedDiff {
    parse_inner(text, None)
}

/// Parses one file's patch (GitHub's `files[].patch`, hunks only).
pub fn parse_patch(path: &str, patch: &str) -> ParsedDiff {
    parse_inner(patch, Some(path))
}

fn parse_inner(text: &str, default_path: Option<&str>) -> ParsedDiff {
    let mut parser = DiffParser {
        current: default_path.map(|p| DiffFile { path: p.to_string(), ..Default::default() }),
        ..Default::default()
    };
    for raw in text.lines() {
        parser.line(raw.strip_suffix('\r').unwrap_or(raw));
    }
    parser.finish()
}

/// The state of a unified-diff parse: the files done, the file being read, and
/// the position in the current hunk.
#[derive(Default)]
struct DiffParser {
    files: Vec<DiffFile>,
    current: Option<DiffFile>,
    old_line: u32,
    new_line: u32,
    /// Lines left in the hunk on each side.
    old_left: u32,
    new_left: u32,
    /// The `---` path, for a deleted file (`+++ /dev/null`).
    pending_old: Option<String>,
}

impl DiffParser {
    fn line(&mut self, line: &str) {
        if line.starts_with("diff --git ") {
            // Path from `diff --git a/x b/x` until `+++` overrides it.
            let path = line.rsplit(" b/").next().map(|s| s.to_string()).unwrap_or_default();
            self.start_file(path);
            self.old_left = 0;
            self.new_left = 0;
            return;
        }
        if self.old_left > 0 || self.new_left > 0 {
            self.hunk_line(line);
        } else {
            self.header_line(line);
        }
    }

    fn start_file(&mut self, path: String) {
        if let Some(f) = self.current.take() {
            self.files.push(f);
        }
        self.current = Some(DiffFile { path, ..Default::default() });
    }

    /// Outside a hunk: `---`, `+++` and `@@` lines; anything else is skipped.
    fn header_line(&mut self, line: &str) {
        if let Some(p) = line.strip_prefix("--- ") {
            self.pending_old = Some(strip_prefix_path(p));
        } else if let Some(p) = line.strip_prefix("+++ ") {
            let np = strip_prefix_path(p);
            let path = if np == "/dev/null" { self.pending_old.take().unwrap_or_default() } else { np };
            match self.current.as_mut() {
                Some(f) if f.added.is_empty() && f.removed.is_empty() => f.path = path,
                _ => self.start_file(path),
            }
        } else if line.starts_with("@@") {
            if let Some(((o, oc), (n, nc))) = hunk_header(line) {
                self.old_line = o;
                self.new_line = n;
                self.old_left = oc;
                self.new_left = nc;
                if self.current.is_none() {
                    self.current = Some(DiffFile { path: String::new(), ..Default::default() });
                }
            }
        }
    }

    /// Inside a hunk: an added, removed, context or "no newline" line.
    fn hunk_line(&mut self, line: &str) {
        let Some(f) = self.current.as_mut() else { return };
        if let Some(t) = line.strip_prefix('+') {
            f.added.push((self.new_line, t.to_string()));
            self.new_line += 1;
            self.new_left = self.new_left.saturating_sub(1);
        } else if let Some(t) = line.strip_prefix('-') {
            f.removed.push((self.old_line, t.to_string()));
            self.old_line += 1;
            self.old_left = self.old_left.saturating_sub(1);
        } else if line.starts_with('\\') {
            // "\ No newline at end of file"
        } else {
            self.old_line += 1;
            self.new_line += 1;
            self.old_left = self.old_left.saturating_sub(1);
            self.new_left = self.new_left.saturating_sub(1);
        }
    }

    fn finish(mut self) -> ParsedDiff {
        if let Some(f) = self.current.take() {
            self.files.push(f);
        }
        let mut files = self.files;
        files.retain(|f| !f.path.is_empty() || !f.added.is_empty() || !f.removed.is_empty());
        ParsedDiff { files }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_git_diff() {
        let d = "diff --git a/pkg/a.go b/pkg/a.go\nindex 1..2 100644\n--- a/pkg/a.go\n+++ b/pkg/a.go\n@@ -10,3 +10,4 @@ func x() {\n ctx\n-old line\n+new line\n+another\n ctx\ndiff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+hello\n";
        let p = parse_unified(d);
        assert_eq!(p.files.len(), 2);
        assert_eq!(p.files[0].path, "pkg/a.go");
        assert_eq!(p.files[0].added, vec![(11, "new line".to_string()), (12, "another".to_string())]);
        assert_eq!(p.files[0].removed, vec![(11, "old line".to_string())]);
        assert_eq!(p.files[1].path, "b.txt");
        assert_eq!(p.files[1].added[0], (1, "hello".to_string()));
    }

    #[test]
    fn parses_bare_patch() {
        let p =
            parse_patch("ci-operator/step-registry/x/x-commands.sh", "@@ -1,2 +1,2 @@\n-a --old\n+a --new-flag\n b");
        assert_eq!(p.files[0].added, vec![(1, "a --new-flag".to_string())]);
    }
}
