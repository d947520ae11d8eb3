//! The verifier and time: claims about the past, hedges stated as facts, related
//! changes named as if they were a causal chain, and references within a report. Each
//! planted report (`twins/planted/NAME`) has a clean twin (`twins/clean/NAME`) that
//! says the same things truthfully, sentence for sentence.
//!
//! A planted fault is tagged on its line as `«fault:RULE/CLASS-label»` (`…@section`: a
//! finding of RULE anywhere in the line's section catches it). A true sentence of a
//! class in a clean twin is tagged `«true:CLASS»`: nothing may be flagged on it, and
//! nothing anywhere else in a clean twin either. Tags are removed before checking. The
//! classes are `past` (claims about the code before a named change), `hedge`,
//! `related` and `xref`.
//!
//! The world is real: a git repository built from `twins/checkouts/kubernetes/` — one
//! commit per stage listed in its `stages.txt`, each stage's files laid over the tree
//! at its date — and a build ledger (`twins/builds.txt`) covering
//! `kubernetes-ci-logs/logs`. `@@stage@@` (the stage's name without its number) stands
//! for the stage's short SHA. GitHub is not reachable (offline, no cache): references
//! are listed as not checked, never passed.
//!
//! Run `cargo test -p citriage-verify --test twins -- --nocapture` for the figures per
//! class.

use citriage_github::{ClientConfig, GithubClient, MemoryCache, RefContext, RepoRef};
use citriage_verify::rules::{verify, KnownBuilds, Resolvers, Verification, VerifyOptions};
use citriage_verify::{Checkout, Checkouts, GitProgram};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/twins")
}

fn git(dir: &Path, args: &[&str], date: &str) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
        .args(["-c", "user.name=Twins", "-c", "user.email=twins@example.com"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    let mut entries: Vec<_> = std::fs::read_dir(from).unwrap().map(|e| e.unwrap()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// Builds the repository stage by stage; returns `@@name@@` → short SHA.
fn make_checkout(dir: &Path, src: &Path) -> BTreeMap<String, String> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"], "2026-01-01T00:00:00Z");
    let stages = std::fs::read_to_string(src.join("stages.txt")).unwrap();
    let mut subs = BTreeMap::new();
    for l in stages.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let mut f = l.splitn(3, ' ');
        let (Some(stage), Some(date), Some(msg)) = (f.next(), f.next(), f.next()) else { panic!("stages.txt: {l:?}") };
        copy_tree(&src.join(stage), dir);
        git(dir, &["add", "-A"], date);
        git(dir, &["commit", "-q", "-m", msg], date);
        let name = stage.split_once('-').map_or(stage, |(_, n)| n);
        subs.insert(format!("@@{name}@@"), git(dir, &["rev-parse", "--short=11", "HEAD"], date));
    }
    subs
}

struct Fault {
    line: usize,
    rule: String,
    class: String,
    label: String,
    section: bool,
}

struct Case {
    name: String,
    planted: bool,
    text: String,
    faults: Vec<Fault>,
    /// (line, class) of the true sentences of a clean twin.
    truths: Vec<(usize, String)>,
    opts: VerifyOptions,
}

/// Removes every `«tag:…»` from a line, returning the tags' contents.
fn take_tags(line: &mut String, tag: &str) -> Vec<String> {
    let open = format!("«{tag}:");
    let mut out = Vec::new();
    while let Some(a) = line.find(&open) {
        let b = line[a..].find('»').map(|b| a + b).expect("closed tag");
        out.push(line[a + open.len()..b].to_string());
        line.replace_range(a..b + '»'.len_utf8(), "");
    }
    out
}

fn load_case(path: &Path, planted: bool, subs: &BTreeMap<String, String>) -> Case {
    let raw = std::fs::read_to_string(path).unwrap();
    let mut opts = VerifyOptions::default();
    let mut lines: Vec<String> = Vec::new();
    let mut faults = Vec::new();
    let mut truths = Vec::new();
    let mut header = true;
    for l in raw.lines() {
        if header {
            if let Some(o) = l.strip_prefix("%% ") {
                match o.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
                    Some(("repo", r)) => opts.refs = RefContext::kubernetes().with_default(RepoRef::parse(r).unwrap()),
                    other => panic!("{}: unknown option {other:?}", path.display()),
                }
                continue;
            }
            header = false;
        }
        let mut line = l.to_string();
        for (k, v) in subs {
            line = line.replace(k, v);
        }
        assert!(!line.contains("@@"), "{}: unknown substitution in {line:?}", path.display());
        let n = lines.len() + 1;
        for tag in take_tags(&mut line, "fault") {
            let (rule, rest) = tag.split_once('/').expect("«fault:RULE/CLASS-label»");
            let (label, section) = match rest.strip_suffix("@section") {
                Some(l) => (l, true),
                None => (rest, false),
            };
            let class = label.split('-').next().unwrap_or(label).to_string();
            faults.push(Fault { line: n, rule: rule.into(), class, label: label.into(), section });
        }
        truths.extend(take_tags(&mut line, "true").into_iter().map(|c| (n, c)));
        lines.push(line.trim_end().to_string());
    }
    let mut text = lines.join("\n");
    text.push('\n');
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(planted, !faults.is_empty(), "{name}: planted reports carry faults, clean ones none");
    assert!(planted || !truths.is_empty(), "{name}: a clean twin tags its true sentences");
    Case { name, planted, text, faults, truths, opts }
}

/// The lines (1-based, inclusive) of the section holding `line`: from the heading before
/// it to the line before the next one (a Markdown heading, or in rendered text a
/// `Pattern X — …` line).
fn section_of(text: &str, line: usize) -> (usize, usize) {
    let heading = |l: &str| l.starts_with('#') || l.starts_with("Pattern ");
    let lines: Vec<&str> = text.lines().collect();
    let start = (1..=line).rev().find(|&n| heading(lines[n - 1])).unwrap_or(1);
    let end = (line + 1..=lines.len()).find(|&n| heading(lines[n - 1])).map(|n| n - 1).unwrap_or(lines.len());
    (start, end)
}

fn cases(subs: &BTreeMap<String, String>) -> Vec<Case> {
    let mut out = Vec::new();
    for (dir, planted) in [("planted", true), ("clean", false)] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        out.extend(files.iter().map(|f| load_case(f, planted, subs)));
    }
    out
}

fn ledger() -> KnownBuilds {
    let text = std::fs::read_to_string(root().join("builds.txt")).unwrap();
    let mut k = KnownBuilds::default();
    k.covered.insert("kubernetes-ci-logs/logs".into());
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let f: Vec<&str> = l.split_whitespace().collect();
        k = k.with(f[0], f[1], f.get(2).copied());
    }
    k
}

struct World {
    _tmp: tempfile::TempDir,
    client: GithubClient,
    checkouts: Checkouts,
    builds: KnownBuilds,
    subs: BTreeMap<String, String>,
}

fn world() -> Option<World> {
    let Ok(git_bin) = GitProgram::locate() else {
        eprintln!("skipping: git is not available");
        return None;
    };
    let client = GithubClient::new(ClientConfig { offline: true, ..Default::default() }, Box::new(MemoryCache::new()));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kubernetes");
    let subs = make_checkout(&dir, &root().join("checkouts/kubernetes"));
    let mut checkouts = Checkouts::new();
    checkouts.add(Checkout::open("kubernetes", dir, Some(git_bin)).unwrap(), "kubernetes/kubernetes", &["k8s", "k/k"]);
    Some(World { _tmp: tmp, client, checkouts, builds: ledger(), subs })
}

fn run(w: &World, c: &Case) -> Verification {
    verify(&c.text, &Resolvers { refs: &w.client, code: &w.checkouts, builds: &w.builds }, &c.opts)
}

#[derive(Default)]
struct Tally {
    planted: usize,
    caught: usize,
    truths: usize,
    accused: usize,
}

#[test]
fn every_fault_of_the_four_classes_is_caught_and_no_true_twin_is_accused() {
    let Some(w) = world() else { return };
    let cases = cases(&w.subs);
    let mut per_class: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut missed, mut false_clean, mut false_planted) = (Vec::new(), Vec::new(), Vec::new());
    for c in &cases {
        let v = run(&w, c);
        let scope = |f: &Fault| if f.section { section_of(&c.text, f.line) } else { (f.line, f.line) };
        for f in &c.faults {
            let (lo, hi) = scope(f);
            let t = per_class.entry(f.class.clone()).or_default();
            t.planted += 1;
            if v.findings.iter().any(|x| x.rule_id == f.rule && (lo..=hi).contains(&x.line)) {
                t.caught += 1;
            } else {
                let near: Vec<&str> =
                    v.findings.iter().filter(|x| (lo..=hi).contains(&x.line)).map(|x| x.rule_id.as_str()).collect();
                missed.push(format!(
                    "{}:{} {} ({}) [flagged: {}] — {}",
                    c.name,
                    f.line,
                    f.rule,
                    f.label,
                    near.join(", "),
                    c.text.lines().nth(f.line - 1).unwrap_or("").trim()
                ));
            }
        }
        for (line, class) in &c.truths {
            let t = per_class.entry(class.clone()).or_default();
            t.truths += 1;
            t.accused += usize::from(v.findings.iter().any(|x| x.line == *line));
        }
        for x in &v.findings {
            let explained = c.faults.iter().any(|f| {
                let (lo, hi) = scope(f);
                f.rule == x.rule_id && (lo..=hi).contains(&x.line)
            });
            if explained {
                continue;
            }
            let msg = format!(
                "{}:{} {} — {} — line: {}",
                c.name,
                x.line,
                x.rule_id,
                x.message,
                c.text.lines().nth(x.line.saturating_sub(1)).unwrap_or("").trim()
            );
            if c.planted {
                false_planted.push(msg)
            } else {
                false_clean.push(msg)
            }
        }
        eprintln!(
            "{:<8} {:<26} {:>3} fault(s), {:>3} true sentence(s) tagged, {:>3} finding(s), claims: {} verified / {} false / {} unchecked",
            if c.planted { "planted" } else { "clean" },
            c.name,
            c.faults.len(),
            c.truths.len(),
            v.findings.len(),
            v.stats.claims_verified,
            v.stats.claims_false,
            v.stats.claims_unchecked
        );
        if std::env::var_os("TWINS_CLAIMS").is_some_and(|n| n == c.name.as_str()) {
            for x in &v.claims {
                eprintln!(
                    "  {}:{} [{}] {} {} — {:?} {}",
                    c.name, x.line, x.kind, x.subject, x.claim, x.verdict, x.detail
                );
            }
            for x in &v.findings {
                eprintln!("  finding {}:{} {} — {}", c.name, x.line, x.rule_id, x.message);
            }
            for x in &v.checks {
                eprintln!("  check {} {:?}: {}", x.rule_id, x.status, x.note);
            }
        }
    }
    eprintln!("\nper class: planted faults caught; true sentences of the clean twins accused");
    for (k, t) in &per_class {
        eprintln!("  {k:<8} caught {:>2}/{:<2}   accused {:>2}/{:<2}", t.caught, t.planted, t.accused, t.truths);
    }
    eprintln!("false findings on the clean twins: {}", false_clean.len());
    eprintln!("findings on untagged lines of the planted reports: {}", false_planted.len());
    for m in missed.iter().chain(&false_clean).chain(&false_planted) {
        eprintln!("  {m}");
    }
    let names = |p: bool| cases.iter().filter(|c| c.planted == p).map(|c| c.name.clone()).collect::<BTreeSet<_>>();
    assert_eq!(names(true), names(false), "every planted report has a clean twin");
    for class in ["past", "hedge", "related", "xref"] {
        let t = per_class.get(class).unwrap_or_else(|| panic!("no {class} case"));
        assert!(t.planted >= 3 && t.truths >= 3, "{class}: at least 3 planted faults and 3 true twins");
    }
    assert!(missed.is_empty(), "{} planted fault(s) missed", missed.len());
    assert!(false_clean.is_empty(), "{} false finding(s) on the clean twins", false_clean.len());
    assert!(false_planted.is_empty(), "{} finding(s) on untagged lines of planted reports", false_planted.len());
}
