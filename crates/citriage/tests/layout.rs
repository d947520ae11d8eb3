//! The layout rules of the CLI, use-case, benchmark, MCP and web crates, checked on
//! their sources: no import cycles between files; in the CLI, `context.rs` imports nothing of the crate, a
//! command imports no other command and not the dispatcher, and nothing but the
//! dispatcher imports the commands.
//!
//! A file's imports are the `crate::…` paths it names outside comments and its
//! `#[cfg(test)]` module (brace groups and `::*` globs expanded), the child modules a
//! `lib.rs` or `mod.rs` names relatively, and `#[macro_export]` macros (which count as
//! their defining file).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `commands/demo.rs` → `commands::demo`; `lib.rs` → `` (the root); `commands/mod.rs` → `commands`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> =
        rel.with_extension("").components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("lib" | "main" | "mod")) {
        parts.pop();
    }
    parts.join("::")
}

/// The code that counts: before the `#[cfg(test)]` module, without `//` comments.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Parses a path at `i` (after a prefix), appending every full path (brace groups
/// expanded) to `out`; returns where it ended.
fn parse_path(s: &[u8], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        let start = i;
        while i < s.len() && is_ident(s[i]) {
            i += 1;
        }
        if i > start {
            path.push(String::from_utf8_lossy(&s[start..i]).into_owned());
        }
        if s[i..].starts_with(b"::{") || (i == start && s.get(i) == Some(&b'{')) {
            i = i + if s[i] == b'{' { 1 } else { 3 };
            loop {
                while i < s.len() && matches!(s[i], b' ' | b'\n' | b'\t' | b',') {
                    i += 1;
                }
                if i >= s.len() || s[i] == b'}' {
                    return i + 1;
                }
                i = parse_path(s, i, &path, out);
                // `self`, `as` renames and the like end at the next separator.
                while i < s.len() && !matches!(s[i], b',' | b'}') {
                    i += 1;
                }
            }
        }
        if s[i..].starts_with(b"::") && s.get(i + 2).is_some_and(|&b| is_ident(b)) {
            i += 2;
            continue;
        }
        if s[i..].starts_with(b"::*") {
            path.push("*".into());
            i += 3;
        }
        out.push(path);
        return i;
    }
}

/// Every file's imports of other files of the crate whose `src` is `src`.
fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let texts: BTreeMap<String, String> =
        files.iter().map(|f| (module_of(f.strip_prefix(src).unwrap()), std::fs::read_to_string(f).unwrap())).collect();
    let mut macros = BTreeMap::new();
    for (m, t) in &texts {
        for part in t.split("#[macro_export]").skip(1) {
            if let Some(rest) = part.trim_start().strip_prefix("macro_rules!") {
                let name: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                macros.insert(name, m.clone());
            }
        }
    }
    let mut g = Graph::new();
    for (m, text) in &texts {
        let code = code_of(text);
        let bytes = code.as_bytes();
        let mut paths: Vec<Vec<String>> = Vec::new();
        let mut from = 0;
        while let Some(k) = code[from..].find("crate::") {
            let at = from + k;
            from = at + 7;
            if at > 0 && is_ident(bytes[at - 1]) {
                continue;
            }
            from = parse_path(bytes, from, &[], &mut paths);
        }
        // `use crate::x::*`: every child of x.
        let globs: Vec<Vec<String>> = paths.iter().filter(|p| p.last().is_some_and(|l| l == "*")).cloned().collect();
        for g in globs {
            let parent = g[..g.len() - 1].join("::");
            for child in texts.keys().filter(|c| c.starts_with(&format!("{parent}::"))) {
                paths.push(child.split("::").map(String::from).collect());
            }
        }
        // Children named relatively by their parent (`lib.rs`, `mod.rs`).
        for child in texts.keys() {
            let rest = match m.as_str() {
                "" => Some(child.as_str()),
                p => child.strip_prefix(&format!("{p}::")),
            };
            let Some(name) = rest.filter(|r| !r.is_empty() && !r.contains("::")) else { continue };
            let needle = format!("{name}::");
            let named =
                code.match_indices(&needle).any(|(i, _)| i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':');
            if named {
                paths.push(child.split("::").map(String::from).collect());
            }
        }
        let edges = g.entry(m.clone()).or_default();
        for p in paths {
            let target = match p.first().and_then(|f| macros.get(f)) {
                Some(def) => def.clone(),
                None => (0..=p.len())
                    .rev()
                    .map(|k| p[..k].join("::"))
                    .find(|cand| texts.contains_key(cand))
                    .unwrap_or_default(),
            };
            if &target != m {
                edges.insert(target);
            }
        }
    }
    g
}

/// A cycle through the graph, if there is one.
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(n: &str, g: &Graph, state: &mut BTreeMap<String, u8>, stack: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == m).unwrap_or(0);
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

fn show(c: &[String]) -> String {
    c.iter().map(|m| if m.is_empty() { "<crate root>" } else { m }).collect::<Vec<_>>().join(" → ")
}

#[test]
fn the_front_ends_and_the_use_cases_have_no_import_cycles() {
    for name in ["citriage", "citriage-app", "citriage-bench", "citriage-mcp", "citriage-web"] {
        let g = graph(&crate_src(name));
        assert!(g.len() > 5, "{name}: only {} files found", g.len());
        if let Some(c) = find_cycle(&g) {
            panic!("{name}: import cycle {}", show(&c));
        }
    }
}

#[test]
fn commands_use_the_context_and_the_library_never_each_other() {
    let g = graph(&crate_src("citriage"));
    assert_eq!(g.get("context"), Some(&BTreeSet::new()), "context.rs must import nothing of the crate");
    let commands: Vec<&String> = g.keys().filter(|m| m.starts_with("commands::")).collect();
    assert!(commands.len() >= 20, "{commands:?}");
    for (m, edges) in &g {
        for e in edges {
            let to_command = e.starts_with("commands::") || e == "commands";
            let ok = match m.as_str() {
                "cli" => true,
                _ if m.starts_with("commands::") => !to_command && e != "cli",
                _ => !to_command && e != "cli",
            };
            assert!(ok, "{m} imports {e}");
        }
    }
    // The dispatcher reaches every command.
    for c in commands {
        assert!(g["cli"].contains(c.as_str()), "cli does not run {c}");
    }
}

#[test]
fn the_checker_sees_cycles_and_groups() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("commands")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\npub mod commands;\n// a::x in a comment\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::{b::{Thing, other}, commands::*};\n#[cfg(test)]\nuse crate::lib;\n")
        .unwrap();
    std::fs::write(src.join("b.rs"), "#[macro_export]\nmacro_rules! say { () => {} }\nfn f() { crate::say!(); }\n")
        .unwrap();
    std::fs::write(src.join("commands/mod.rs"), "pub mod run;\n").unwrap();
    std::fs::write(src.join("commands/run.rs"), "fn f() { crate::say!(); let _ = crate::a::X; }\n").unwrap();
    let g = graph(src);
    assert_eq!(g[""], BTreeSet::new(), "mod declarations and comments are not imports");
    let globbed = ["b", "commands", "commands::run"].map(String::from);
    assert_eq!(g["a"], BTreeSet::from(globbed));
    assert_eq!(g["commands::run"], BTreeSet::from(["a".to_string(), "b".to_string()]));
    let c = find_cycle(&g).expect("a → commands::run → a");
    assert!(c.contains(&"a".to_string()) && c.contains(&"commands::run".to_string()), "{c:?}");
    std::fs::write(src.join("commands/run.rs"), "fn f() { crate::say!(); }\n").unwrap();
    assert_eq!(find_cycle(&graph(src)), None);
}
