//! ARCHITECTURE.md's "The only place that …" claims, checked on the workspace: its
//! crates and their dependencies from `cargo metadata`, their sources read as the
//! layout test reads them (code before the `#[cfg(test)]` module, `//` comments
//! dropped). A claim a grep cannot see (retries decided in one place, bodies counted
//! against the memory budget) is not tested here; every claim that is has its test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

struct Package {
    name: String,
    src: PathBuf,
    /// Normal (not dev or build) dependencies.
    deps: Vec<String>,
}

fn workspace() -> &'static [Package] {
    static PACKAGES: std::sync::OnceLock<Vec<Package>> = std::sync::OnceLock::new();
    PACKAGES.get_or_init(read_workspace)
}

fn read_workspace() -> Vec<Package> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--offline", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut packages: Vec<Package> = v["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| Package {
            name: p["name"].as_str().unwrap_or_default().to_string(),
            src: Path::new(p["manifest_path"].as_str().unwrap_or_default()).parent().expect("folder").join("src"),
            deps: p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap_or_default().to_string())
                .collect(),
        })
        .collect();
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(packages.len() > 10, "the workspace lists {} packages", packages.len());
    packages
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every source file of the workspace's crates: (crate, path under `src/`, code).
fn sources() -> &'static [(String, String, String)] {
    static SOURCES: std::sync::OnceLock<Vec<(String, String, String)>> = std::sync::OnceLock::new();
    SOURCES.get_or_init(read_sources)
}

fn read_sources() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for p in workspace() {
        let mut files = Vec::new();
        rust_files(&p.src, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let rel = f.strip_prefix(&p.src).unwrap().to_string_lossy().replace('\\', "/");
            out.push((p.name.clone(), rel, code_of(&text)));
        }
    }
    out
}

/// The code that counts: before the `#[cfg(test)]` module, without `//` comments
/// (a `//` inside a string literal cuts the line too, which only hides text).
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The code with the contents of its string literals blanked.
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut in_str = false;
    let mut escaped = false;
    for c in code.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
                out.push(c);
            }
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        out.push(c);
    }
    out
}

/// Where `needle` occurs, as `crate/src/path:line`, among the files `keep` accepts.
fn occurrences(needle: &dyn Fn(&str) -> bool, keep: &dyn Fn(&str, &str) -> bool, strip: bool) -> Vec<String> {
    let mut hits = Vec::new();
    for (krate, rel, code) in sources() {
        if !keep(krate, rel) {
            continue;
        }
        let code = if strip { without_strings(code) } else { code.clone() };
        for (n, line) in code.lines().enumerate() {
            if needle(line) {
                hits.push(format!("{krate}/src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    hits
}

/// The crates with `dep` as a normal dependency.
fn depending_on(dep: &str) -> Vec<String> {
    workspace().iter().filter(|p| p.deps.iter().any(|d| d == dep)).map(|p| p.name.clone()).collect()
}

#[test]
fn only_the_sources_crate_speaks_http_as_a_client() {
    assert_eq!(depending_on("ureq"), vec!["citriage-sources"]);
    for other in ["reqwest", "isahc", "attohttpc", "curl", "surf"] {
        assert_eq!(depending_on(other), Vec::<String>::new(), "{other}");
    }
}

#[test]
fn only_the_delivery_crate_speaks_smtp() {
    for other in ["lettre", "mail-send", "async-smtp", "samotop", "mailin-embedded"] {
        assert_eq!(depending_on(other), Vec::<String>::new(), "{other}");
    }
    // SMTP's commands written anywhere else in the sources.
    let command =
        |l: &str| ["\"EHLO ", "\"MAIL FROM:", "\"RCPT TO:", "\"AUTH PLAIN", "\"QUIT"].iter().any(|c| l.contains(c));
    let hits = occurrences(&command, &|_, _| true, false);
    let elsewhere: Vec<&String> = hits.iter().filter(|h| !h.starts_with("citriage-delivery/src/smtp.rs:")).collect();
    assert!(
        !hits.is_empty() && elsewhere.is_empty(),
        "SMTP spoken outside the delivery crate's client:\n{elsewhere:#?}"
    );
}

#[test]
fn only_the_store_opens_a_database_and_holds_sql() {
    assert_eq!(depending_on("rusqlite"), vec!["citriage-store"]);
    assert_eq!(depending_on("postgres"), vec!["citriage-store"]);
    for other in ["tokio-postgres", "sqlx", "diesel", "sqlite"] {
        assert_eq!(depending_on(other), Vec::<String>::new(), "{other}");
    }
    let sql = |l: &str| {
        ["\"SELECT ", "\"INSERT INTO", "\"UPDATE ", "\"DELETE FROM", "\"CREATE TABLE", "\"CREATE INDEX", "\"PRAGMA "]
            .iter()
            .any(|k| l.contains(k) || l.contains(&format!("r{k}")) || l.contains(&format!("r#{k}")))
    };
    let hits = occurrences(&sql, &|krate, _| krate != "citriage-store", false);
    assert!(hits.is_empty(), "SQL outside the store:\n{}", hits.join("\n"));
}

/// Crates that still start `git` themselves, while their move to `citriage-git` is
/// under way elsewhere; each entry is taken out when it lands (the test then fails
/// until it is).
const GIT_PENDING: &[(&str, &str)] = &[];

#[test]
fn only_citriage_git_starts_git() {
    let spawn = |l: &str| {
        let compact: String = l.chars().filter(|c| !c.is_whitespace()).collect();
        compact.contains("Command::new(\"git\")")
    };
    let hits = occurrences(&spawn, &|krate, _| krate != "citriage-git", false);
    let mut failures: Vec<String> =
        hits.iter().filter(|h| !GIT_PENDING.iter().any(|(k, _)| h.starts_with(&format!("{k}/")))).cloned().collect();
    for (k, why) in GIT_PENDING {
        if !hits.iter().any(|h| h.starts_with(&format!("{k}/"))) {
            failures.push(format!("{k} starts git no more: take it out of GIT_PENDING ({why})"));
        }
    }
    assert!(failures.is_empty(), "git started outside citriage-git:\n{}", failures.join("\n"));
    let own = occurrences(&|l| l.contains("Command::new("), &|krate, _| krate == "citriage-git", false);
    assert!(
        !own.is_empty() && own.iter().all(|h| h.starts_with("citriage-git/src/program.rs:")),
        "citriage-git starts processes in program.rs only: {own:?}"
    );
}

#[test]
fn only_model_escape_escapes() {
    let escaper = |l: &str| {
        let l = l.trim_start().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
        ["fn esc(", "fn cell(", "fn fence(", "fn escape_html(", "fn html_escape(", "fn md_cell(", "fn md_code("]
            .iter()
            .any(|f| l.starts_with(f) && !l.contains("&self"))
    };
    // The synthetic world writes XML as the producers it stands for do, byte for byte.
    let keep = |krate: &str, rel: &str| krate != "citriage-synth" && !(krate == "citriage-model" && rel == "escape.rs");
    let hits = occurrences(&escaper, &keep, false);
    assert!(hits.is_empty(), "escapers outside citriage_model::escape:\n{}", hits.join("\n"));
    let entities = occurrences(&|l| l.contains("\"&lt;\"") || l.contains("\"&gt;\""), &keep, false);
    assert!(entities.is_empty(), "HTML escaping outside citriage_model::escape:\n{}", entities.join("\n"));
}

#[test]
fn one_rounding_of_figures() {
    let hits = occurrences(&|l| l.contains("fn round3"), &|_, _| true, false);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].starts_with("citriage-model/src/number.rs:"), "{hits:?}");
}

#[test]
fn profile_names_are_spelled_by_profile_only() {
    let hits = occurrences(&|l| l.contains("\"k8s-triage\""), &|_, _| true, false);
    assert!(!hits.is_empty());
    let elsewhere: Vec<&String> =
        hits.iter().filter(|h| !h.starts_with("citriage-patterns/src/normalize.rs:")).collect();
    assert!(elsewhere.is_empty(), "profile names spelled outside Profile:\n{elsewhere:#?}");
}

#[test]
fn one_place_reads_the_wall_clock() {
    let clock = |l: &str| l.contains("SystemTime::now") || l.contains("UNIX_EPOCH");
    let hits = occurrences(&clock, &|_, _| true, false);
    let elsewhere: Vec<&String> = hits.iter().filter(|h| !h.starts_with("citriage-sources/src/http.rs:")).collect();
    assert!(!hits.is_empty() && elsewhere.is_empty(), "the wall clock read outside unix_now:\n{elsewhere:#?}");
}

#[test]
fn dates_are_computed_and_spelled_by_model_time() {
    for lib in ["chrono", "jiff", "time", "humantime", "httpdate"] {
        assert_eq!(depending_on(lib), Vec::<String>::new(), "{lib}");
    }
    // Seconds in a day or an hour written out (in code, not in text) outside the
    // calendar module. `citriage-patterns` stands alone (no crate of ours below it):
    // its benchmark generator and export step a day themselves.
    let literal = |l: &str| {
        l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| matches!(w, "86_400" | "86400" | "3_600" | "3600"))
    };
    let keep = |krate: &str, rel: &str| {
        !(krate == "citriage-model" && rel == "time.rs") && krate != "citriage-patterns" && krate != "citriage-synth"
    };
    let hits = occurrences(&literal, &keep, true);
    let mut allowed = BTreeMap::new();
    // A retry policy's ceiling of an hour is a duration, not a date.
    allowed.insert("citriage-alerts/src/retry.rs", "Backoff { first: 30, max: 3_600 }");
    let hits: Vec<&String> = hits
        .iter()
        .filter(|h| !allowed.iter().any(|(f, l)| h.starts_with(&format!("{f}:")) && h.contains(l)))
        .collect();
    assert!(hits.is_empty(), "date arithmetic outside citriage_model::time:\n{hits:#?}");
    // No RFC 3339 / ISO 8601 reader or writer of its own: `now_rfc3339` reads the
    // clock and spells it through `citriage_model::time`.
    let own = |l: &str| {
        let l = l.trim_start();
        (l.starts_with("fn ") || l.starts_with("pub fn ") || l.starts_with("pub(crate) fn "))
            && (l.contains("rfc3339") || l.contains("iso8601"))
            && !l.contains("fn now_rfc3339(")
    };
    let hits = occurrences(&own, &|krate, rel| !(krate == "citriage-model" && rel == "time.rs"), false);
    assert!(hits.is_empty(), "time spelled outside citriage_model::time:\n{}", hits.join("\n"));
}

#[test]
fn only_the_dashboard_serves_http() {
    let hits = occurrences(&|l| l.contains("TcpListener::bind"), &|_, _| true, false);
    assert!(!hits.is_empty());
    // `bench pr` serves a synthetic world's recorded GitHub answers on loopback, as the
    // tests' GitHub-shaped servers do: a fixture of the benchmark, not a service.
    let fixture = |h: &&String| h.starts_with("citriage-bench/src/pr.rs:");
    let elsewhere: Vec<&String> =
        hits.iter().filter(|h| !h.starts_with("citriage-web/src/")).filter(|h| !fixture(h)).collect();
    assert!(elsewhere.is_empty(), "a listener outside citriage-web:\n{elsewhere:#?}");
}

#[test]
fn only_the_formats_crate_reads_xml() {
    assert_eq!(depending_on("quick-xml"), vec!["citriage-formats"]);
    for other in ["roxmltree", "xml-rs", "xmltree", "minidom"] {
        assert_eq!(depending_on(other), Vec::<String>::new(), "{other}");
    }
}

#[test]
fn tokens_are_read_in_two_places() {
    // `Token::from_env` for every client token, and the server's two write tokens
    // where `serve` starts.
    let read = |l: &str| (l.contains("env::var(") || l.contains("env::var_os(")) && l.contains("TOKEN");
    let hits = occurrences(&read, &|_, _| true, false);
    let elsewhere: Vec<&String> = hits
        .iter()
        .filter(|h| !h.contains("/src/commands/serve.rs:") && !h.starts_with("citriage-sources/src/http.rs:"))
        .collect();
    assert!(elsewhere.is_empty(), "a token read outside Token::from_env and serve:\n{elsewhere:#?}");
    let names = occurrences(&|l| l.contains("std::env::var(n)"), &|_, _| true, false);
    assert_eq!(names.len(), 1, "Token::from_env reads the variables it is given: {names:?}");
}

#[test]
fn only_the_cli_decides_the_exit_code() {
    let hits = occurrences(&|l| l.contains("process::exit"), &|_, _| true, false);
    assert!(!hits.is_empty());
    let elsewhere: Vec<&String> = hits.iter().filter(|h| !h.starts_with("citriage/src/")).collect();
    assert!(elsewhere.is_empty(), "an exit outside the CLI:\n{elsewhere:#?}");
}

#[test]
fn the_checks_see_what_they_look_for() {
    assert_eq!(without_strings("let a = \"x\\\"86_400\"; b(3600)"), "let a = \"\"; b(3600)");
    assert_eq!(code_of("a // b\n#[cfg(test)]\nc"), "a ");
    let hits = occurrences(&|l| l.contains("pub fn html("), &|k, _| k == "citriage-model", false);
    assert_eq!(hits.len(), 1, "{hits:?}");
}
