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
    let mut files: Vec<DiffFile> = Vec::new();
    let mut cur: Option<DiffFile> = default_path.map(|p| DiffFile { path: p.to_string(), ..Default::default() });
    let mut old_line = 0u32;
    let mut new_line = 0u32;
    let mut old_rem = 0u32;
    let mut new_rem = 0u32;
    let mut pending_old: Option<String> = None;
    for raw in text.lines() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.starts_with("diff --git ") {
            if let Some(f) = cur.take() {
                files.push(f);
            }
            // Path from `diff --git a/x b/x` until `+++` overrides it.
            let path = line.rsplit(" b/").next().map(|s| s.to_string()).unwrap_or_default();
            cur = Some(DiffFile { path, ..Default::default() });
            old_rem = 0;
            new_rem = 0;
            continue;
        }
        let in_hunk = old_rem > 0 || new_rem > 0;
        if !in_hunk {
            if let Some(p) = line.strip_prefix("--- ") {
                pending_old = Some(strip_prefix_path(p));
                continue;
            }
            if let Some(p) = line.strip_prefix("+++ ") {
                let np = strip_prefix_path(p);
                let path = if np == "/dev/null" { pending_old.take().unwrap_or_default() } else { np };
                match cur.as_mut() {
                    Some(f) if f.added.is_empty() && f.removed.is_empty() => f.path = path,
                    _ => {
                        if let Some(f) = cur.take() {
                            files.push(f);
                        }
                        cur = Some(DiffFile { path, ..Default::default() });
                    }
                }
                continue;
            }
        }
        if !in_hunk && line.starts_with("@@") {
            if let Some(((o, oc), (n, nc))) = hunk_header(line) {
                old_line = o;
                new_line = n;
                old_rem = oc;
                new_rem = nc;
                if cur.is_none() {
                    cur = Some(DiffFile { path: String::new(), ..Default::default() });
                }
            }
            continue;
        }
        if !in_hunk {
            continue;
        }
        let Some(f) = cur.as_mut() else { continue };
        if let Some(t) = line.strip_prefix('+') {
            f.added.push((new_line, t.to_string()));
            new_line += 1;
            new_rem = new_rem.saturating_sub(1);
        } else if let Some(t) = line.strip_prefix('-') {
            f.removed.push((old_line, t.to_string()));
            old_line += 1;
            old_rem = old_rem.saturating_sub(1);
        } else if line.starts_with('\\') {
            // "\ No newline at end of file"
        } else {
            old_line += 1;
            new_line += 1;
            old_rem = old_rem.saturating_sub(1);
            new_rem = new_rem.saturating_sub(1);
        }
    }
    if let Some(f) = cur.take() {
        files.push(f);
    }
    files.retain(|f| !f.path.is_empty() || !f.added.is_empty() || !f.removed.is_empty());
    ParsedDiff { files }
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
