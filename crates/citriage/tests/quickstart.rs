//! The README's quickstart, run as a newcomer would: in a fresh folder with a fresh,
//! empty HOME, every `cargo run -- …` line of the quickstart's blocks is run with the
//! same arguments (through the binary `cargo run` would start), then every command the
//! demo prints as a next step, exactly as printed. Each must succeed (`serve` must
//! answer its overview page), and none may create the default store in HOME. A
//! read-only command pointed at the default store in that HOME must refuse it (exit 2,
//! naming the path) and leave nothing behind. `cargo test` lines are not re-run: this
//! test is one of the tests they run.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `sh` blocks of the README's Quickstart section, line by line, comments removed.
fn quickstart_lines() -> Vec<String> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&readme).expect("README.md");
    let start = text.find("## Quickstart").expect("a Quickstart section");
    let section = &text[start..];
    let section = &section[..section[3..].find("\n## ").map(|i| i + 3).unwrap_or(section.len())];
    let mut lines = Vec::new();
    let mut in_block = false;
    for l in section.lines() {
        if l.trim_start().starts_with("```") {
            in_block = !in_block && l.trim() == "```sh";
            continue;
        }
        if in_block {
            let cmd = l.split(" #").next().unwrap_or("").trim();
            if !cmd.is_empty() {
                lines.push(cmd.to_string());
            }
        }
    }
    lines
}

/// The binary with a fresh HOME, no store variables, in `cwd`.
fn citriage(home: &Path, cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_citriage"));
    c.current_dir(cwd).env("HOME", home).env_remove("XDG_DATA_HOME").env_remove("CITRIAGE_DB").env("NO_COLOR", "1");
    c
}

/// The arguments of a command line that starts with one of `prefixes`.
fn args_of<'a>(line: &'a str, prefixes: &[&str]) -> Option<Vec<&'a str>> {
    prefixes.iter().find_map(|p| line.strip_prefix(p).map(|rest| rest.split_whitespace().collect()))
}

/// Runs `serve` with `args` until it answers `/`, then stops it. When 8080 is taken on
/// this machine, the same command listens on a free port instead (said on stderr).
fn check_serve(home: &Path, cwd: &Path, args: &[&str]) {
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    if !args.iter().any(|a| a == "--addr") && std::net::TcpListener::bind("127.0.0.1:8080").is_err() {
        eprintln!("note: 127.0.0.1:8080 is in use here; running {args:?} with --addr 127.0.0.1:0");
        args.extend(["--addr".to_string(), "127.0.0.1:0".to_string()]);
    }
    let mut child =
        citriage(home, cwd).args(&args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut addr = None;
    let mut seen = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("stdout line");
        seen.push_str(&line);
        seen.push('\n');
        if let Some(rest) = line.split("serving on http://").nth(1) {
            addr = rest.split_whitespace().next().map(str::to_string);
            break;
        }
    }
    let addr = addr.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("serve {args:?} never said where it listens:\n{seen}")
    });
    let mut s = std::net::TcpStream::connect(&addr).expect("connect");
    write!(s, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").expect("request");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("answer");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "serve {args:?}: GET / answered {}",
        answer.lines().next().unwrap_or("")
    );
    assert!(answer.contains("citriage"), "serve {args:?}: the overview page lacks the name");
}

/// report.html stands beside report.md, self-contained (inline style, no script, no
/// link, image or frame loaded from anywhere) with the same content.
fn check_report_html(dir: &Path) {
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html beside report.md");
    assert!(html.contains("<style>"), "the style is inline");
    for banned in ["<script", "<link", "<img", "<iframe", "src=", "@import", "url("] {
        assert!(!html.contains(banned), "{}: report.html contains {banned}", dir.display());
    }
    let title = md.lines().find_map(|l| l.strip_prefix("# ")).expect("report.md has a title");
    let first_words: String = title.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    assert!(html.contains(&first_words), "report.html lacks the report's title {first_words:?}");
    let sections = md.lines().filter(|l| l.starts_with("## ")).count();
    assert_eq!(
        html.matches("<h2").count(),
        sections,
        "{}: every section of report.md is in report.html",
        dir.display()
    );
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} failed ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn readme_quickstart_works_as_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let cwd = dir.path().join("work");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let default_store: PathBuf = home.join(".local/share/citriage");

    // A read-only command on the default store of a fresh HOME: refused, nothing made.
    let o = citriage(&home, &cwd).arg("reports").output().expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "reports without a store: {err}");
    assert!(err.contains(&default_store.join("citriage.db").display().to_string()), "names the path: {err}");
    assert!(!default_store.exists(), "a read-only command created {}", default_store.display());
    // A mistyped --db is refused the same way.
    let o = citriage(&home, &cwd).args(["snapshots", "--db", "no-such.db"]).output().expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no-such.db"));
    assert!(!cwd.join("no-such.db").exists(), "a mistyped --db created a store");

    let lines = quickstart_lines();
    assert!(lines.iter().any(|l| l == "cargo run -- demo"), "the quickstart runs the demo: {lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("cargo test")), "the quickstart runs the tests: {lines:?}");
    let mut printed = Vec::new();
    let mut ran = 0;
    for line in &lines {
        if line.starts_with("cargo test") {
            continue;
        }
        let args = args_of(line, &["cargo run -- ", "cargo run --release -- "])
            .unwrap_or_else(|| panic!("a quickstart line that is not `cargo run`: {line}"));
        if args.first() == Some(&"serve") {
            check_serve(&home, &cwd, &args);
        } else {
            let o = citriage(&home, &cwd).args(&args).output().expect("runs");
            ok(&o, line);
            if args.first() == Some(&"demo") {
                let out = String::from_utf8_lossy(&o.stdout).into_owned();
                assert!(out.contains("The demo succeeded"), "the demo says it succeeded:\n{out}");
                printed.extend(out.lines().map(str::trim).map(str::to_string));
                check_report_html(&cwd.join("demo-report/failures"));
                check_report_html(&cwd.join("demo-report/world-flakes"));
            }
        }
        ran += 1;
    }
    assert!(ran >= 2, "ran {ran} quickstart lines");
    // Every command the demo prints, as printed.
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_citriage")).expect("exe");
    let exe_prefix = format!("{} ", exe.display());
    let prefixes = ["cargo run -- ", "cargo run --release -- ", "citriage ", exe_prefix.as_str()];
    let commands: Vec<&String> = printed.iter().filter(|l| args_of(l, &prefixes).is_some()).collect();
    assert!(commands.len() >= 2, "the demo prints the commands to run next:\n{}", printed.join("\n"));
    for line in commands {
        let cmd = line.split(" #").next().unwrap_or("").trim();
        let args = args_of(cmd, &prefixes).expect("a command");
        if args.first() == Some(&"serve") {
            check_serve(&home, &cwd, &args);
        } else {
            let o = citriage(&home, &cwd).args(&args).output().expect("runs");
            ok(&o, cmd);
            assert!(!o.stdout.is_empty(), "{cmd} printed nothing");
        }
    }
    assert!(!default_store.exists(), "the quickstart created the default store {}", default_store.display());

    // The demo's store of dashboard snapshots alone is browsed by job too: the
    // overview's categories lead to the jobs list, grouped by category.
    let srv = citriage_web::Server::bind(cwd.join("demo-report/citriage.db"), "127.0.0.1:0".parse().expect("addr"))
        .expect("bind")
        .spawn()
        .expect("serve");
    let overview = http_get(srv.addr, "/");
    let link = overview
        .split("href=\"")
        .filter_map(|h| h.split('"').next())
        .find(|h| h.starts_with("/jobs?group=category#group-"))
        .expect("a category links to the jobs list")
        .to_string();
    let anchor = link.split('#').nth(1).expect("anchor").to_string();
    let jobs = http_get(srv.addr, &link);
    assert!(jobs.contains(&format!("id=\"{anchor}\"")), "the category's group is on the jobs list");
    let kops = http_get(srv.addr, "/jobs?q=kops");
    assert!(kops.contains("snapshot-jobs") && kops.contains("e2e-kops-"), "snapshot jobs listed and filtered");
    assert!(!kops.contains("<code>ci-kubernetes"), "the filter keeps kops jobs only");
}

fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    let path = path.split('#').next().unwrap_or(path);
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").expect("request");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "GET {path}: {}", answer.lines().next().unwrap_or(""));
    answer
}
