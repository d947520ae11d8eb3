//! What keeps the use cases a library every front end can sit on, checked on the
//! crate's manifest and sources: no dependency on a front end (the CLI, the MCP server,
//! the dashboard) or on their tools (argument parsing, progress bars), and no code
//! that prints, reads the process's arguments or exits the process.

use std::path::{Path, PathBuf};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_front_end_among_the_dependencies() {
    let manifest = std::fs::read_to_string(manifest_dir().join("Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    let names: Vec<&str> = deps.lines().filter_map(|l| l.split(['=', ' ']).next()).filter(|n| !n.is_empty()).collect();
    assert!(names.contains(&"citriage-store"), "the parser reads the dependency table: {names:?}");
    for banned in ["citriage", "citriage-web", "citriage-mcp", "citriage-bench", "clap", "indicatif"] {
        assert!(!names.contains(&banned), "citriage-app must not depend on {banned}");
    }
}

#[test]
fn no_printing_no_arguments_no_exit() {
    let mut files = Vec::new();
    sources(&manifest_dir().join("src"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for line in code.lines().map(|l| l.split("//").next().unwrap()) {
            for banned in ["println!", "eprintln!", "print!(", "eprint!(", "std::process::exit", "env::args"] {
                assert!(!line.contains(banned), "{}: {banned} in {line:?}", f.display());
            }
        }
    }
}
