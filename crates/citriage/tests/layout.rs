//! The layout rules, checked on the sources: no import cycles between the files of
//! any crate of the workspace (the crates are read from `cargo metadata`); in the CLI,
//! `context.rs` imports nothing of the crate, a command imports no other command and
//! not the dispatcher, and nothing but the dispatcher imports the commands.
//!
//! A file's imports are the `crate::…` and `super::…` paths it names outside comments
//! and its `#[cfg(test)]` module (brace groups and `::*` globs expanded), the child
//! modules a `lib.rs` or `mod.rs` names relatively, and `#[macro_export]` macros (which
//! count as their defining file). Re-exports (`pub use time::Day;`) are the module
//! tree's public face, not imports of the file that writes them: a path to a
//! re-exported item (`crate::Day`) leads to the file that defines it.

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
    let reexports = reexports(&texts);
    let mut g = Graph::new();
    for (m, text) in &texts {
        let code = without_reexports(&code_of(text));
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
        // `super::x` (and `super::super::x`) from the file's module.
        let mut from = 0;
        while let Some(k) = code[from..].find("super::") {
            let at = from + k;
            from = at + 7;
            if at > 0 && (is_ident(bytes[at - 1]) || bytes[at - 1] == b':') {
                continue;
            }
            let mut base: Vec<String> = m.split("::").filter(|p| !p.is_empty()).map(String::from).collect();
            base.pop();
            while code[from..].starts_with("super::") {
                base.pop();
                from += 7;
            }
            from = parse_path(bytes, from, &base, &mut paths);
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
                None => resolve(&p, &texts, &reexports),
            };
            if &target != m {
                edges.insert(target);
            }
        }
    }
    g
}

/// The file a path leads to: its longest prefix that is a module, or, for an item that
/// module re-exports, the module the item comes from.
fn resolve(
    p: &[String],
    texts: &BTreeMap<String, String>,
    reexports: &BTreeMap<(String, String), Vec<String>>,
) -> String {
    let mut p = p.to_vec();
    for _ in 0..8 {
        let k = (0..=p.len()).rev().find(|k| texts.contains_key(&p[..*k].join("::"))).unwrap_or(0);
        let module = p[..k].join("::");
        match p.get(k).and_then(|item| reexports.get(&(module.clone(), item.clone()))) {
            Some(from) if *from != p[..k] => p = from.iter().cloned().chain(p[k..].iter().cloned()).collect(),
            _ => return module,
        }
    }
    String::new()
}

const REEXPORT: [&str; 3] = ["pub use ", "pub(crate) use ", "pub(super) use "];

/// The code split into its re-export statements (each from a line starting with
/// `pub use` to its `;`) and the rest.
fn split_reexports(code: &str) -> (Vec<String>, String) {
    let (mut stmts, mut rest) = (Vec::new(), String::with_capacity(code.len()));
    let mut open: Option<String> = None;
    for line in code.lines() {
        match open.as_mut() {
            Some(stmt) => stmt.push_str(line),
            None if REEXPORT.iter().any(|k| line.trim_start().starts_with(k)) => open = Some(line.to_string()),
            None => {
                rest.push_str(line);
                rest.push('\n');
                continue;
            }
        }
        if line.trim_end().ends_with(';') {
            stmts.extend(open.take());
        }
    }
    stmts.extend(open);
    (stmts, rest)
}

/// The code without its re-export statements.
fn without_reexports(code: &str) -> String {
    split_reexports(code).1
}

/// Each module's re-exports (`pub use a::b::Item;`, `pub(crate) use …`): (module, item)
/// → the path of the module it is taken from.
fn reexports(texts: &BTreeMap<String, String>) -> BTreeMap<(String, String), Vec<String>> {
    let mut out = BTreeMap::new();
    for (m, text) in texts {
        let code = code_of(text);
        let here: Vec<String> = m.split("::").filter(|s| !s.is_empty()).map(String::from).collect();
        for stmt in split_reexports(&code).0 {
            let t = stmt.trim_start();
            let Some(rest) = REEXPORT.iter().find_map(|k| t.strip_prefix(k)) else { continue };
            let (prefix, rest) = match rest.trim_start() {
                r if r.starts_with("crate::") => (Vec::new(), &r[7..]),
                r if r.starts_with("self::") => (here.clone(), &r[6..]),
                r if r.starts_with("super::") => (here[..here.len().saturating_sub(1)].to_vec(), &r[7..]),
                r => (here.clone(), r),
            };
            let mut paths = Vec::new();
            parse_path(rest.as_bytes(), 0, &prefix, &mut paths);
            for p in paths {
                if let Some((item, from)) = p.split_last() {
                    if item != "*" && !from.is_empty() {
                        out.insert((m.clone(), item.clone()), from.to_vec());
                    }
                }
            }
        }
    }
    out
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

/// The groups of files that reach each other (strongly connected, two or more files).
fn cycle_groups(g: &Graph) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::from([from.to_string()]);
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in g.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let all: BTreeMap<&String, BTreeSet<String>> = g.keys().map(|n| (n, reach(n))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for (n, r) in &all {
        let group: Vec<String> = r.iter().filter(|m| all.get(m).is_some_and(|rm| rm.contains(*n))).cloned().collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

/// Every package of the workspace and its `src` folder, from `cargo metadata`.
fn workspace_crates() -> Vec<(String, PathBuf)> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--offline", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata writes JSON");
    let mut crates: Vec<(String, PathBuf)> = v["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest_path"));
            (p["name"].as_str().expect("name").to_string(), manifest.parent().expect("a folder").join("src"))
        })
        .collect();
    crates.sort();
    crates
}

/// Crates with an import cycle that is being removed elsewhere; each entry is taken
/// out when its fix lands. The test fails if a listed crate has no cycle any more.
const PENDING: &[(&str, &str)] = &[];

fn show(c: &[String]) -> String {
    c.iter().map(|m| if m.is_empty() { "<crate root>" } else { m }).collect::<Vec<_>>().join(" → ")
}

#[test]
fn no_crate_has_import_cycles() {
    let crates = workspace_crates();
    let names: Vec<&str> = crates.iter().map(|(n, _)| n.as_str()).collect();
    for must in ["citriage", "citriage-web", "citriage-store", "citriage-model"] {
        assert!(names.contains(&must), "the workspace lists {names:?}");
    }
    let mut failures = Vec::new();
    for (name, src) in &crates {
        let g = graph(src);
        assert!(!g.is_empty(), "{name}: no source file found under {}", src.display());
        let pending = PENDING.iter().find(|(p, _)| p == name);
        match (find_cycle(&g), pending) {
            (Some(c), None) => failures.push(format!("{name}: import cycle {}", show(&c))),
            (None, Some((_, why))) => {
                failures.push(format!("{name} has no import cycle any more: take it out of PENDING ({why})"))
            }
            (Some(_), Some(_)) => {
                for group in cycle_groups(&g) {
                    let files: Vec<&str> =
                        group.iter().map(|m| if m.is_empty() { "<crate root>" } else { m.as_str() }).collect();
                    eprintln!("{name}: pending, files importing each other: {}", files.join(", "));
                }
            }
            (None, None) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
    // `super::` from a file in a folder names its parent module's items.
    std::fs::write(src.join("commands/mod.rs"), "pub mod run;\nfn g() { run::f(); }\n").unwrap();
    std::fs::write(src.join("commands/run.rs"), "use super::super::b;\nfn f() { super::g(); }\n").unwrap();
    let g = graph(src);
    assert_eq!(g["commands::run"], BTreeSet::from(["b".to_string(), "commands".to_string()]));
    let c = find_cycle(&g).expect("commands → commands::run → commands");
    assert!(c.contains(&"commands".to_string()) && c.contains(&"commands::run".to_string()), "{c:?}");
}

/// ARCHITECTURE.md is the map a newcomer reads first: it must name every crate of the
/// workspace in its code map and in its bird's-eye view, and its prose lines must be
/// readable (tables, code blocks and link lists aside).
#[test]
fn the_architecture_map_names_every_crate_and_reads_as_prose() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let view = text.split("## Entry points").next().expect("a bird's-eye view before the entry points");
    let mut missing = Vec::new();
    for (name, _) in workspace_crates() {
        let heading = if name == "citriage" { "### `citriage` (the CLI)".to_string() } else { format!("### `{name}`") };
        if !text.lines().any(|l| l == heading) {
            missing.push(format!("{name}: no `{heading}` paragraph in the code map"));
        }
        if !view.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).any(|w| w == name) {
            missing.push(format!("{name}: not on the bird's-eye view"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let mut in_code = false;
    let long: Vec<String> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            if l.starts_with("```") {
                in_code = !in_code;
            }
            !in_code && !l.starts_with('|') && !l.starts_with("- [") && l.chars().count() > 100
        })
        .map(|(i, l)| format!("line {}: {} characters", i + 1, l.chars().count()))
        .collect();
    assert!(long.is_empty(), "ARCHITECTURE.md lines over 100 characters:\n{}", long.join("\n"));
}
