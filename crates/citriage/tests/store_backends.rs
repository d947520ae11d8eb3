//! The binary on both store engines: several `fetch` and `import` processes at once
//! leave the same store as one after the other (and the same on SQLite as on
//! PostgreSQL); a `fetch` killed with SIGKILL and rerun equals an uninterrupted one;
//! `store migrate` moves a SQLite store into PostgreSQL unchanged and refuses what it
//! must; `serve` answers from a PostgreSQL store; a password in a store URL is never
//! printed. PostgreSQL is a throwaway cluster started by the test (skipped, with the
//! reason printed, when none can start).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

mod common;
#[path = "common/stores.rs"]
mod stores;

use common::{bin, stderr};
use stores::Stores;

/// A small synthetic world: its mirror and its dashboard snapshot files.
struct World {
    _dir: tempfile::TempDir,
    mirror: PathBuf,
    snapshots: Vec<PathBuf>,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 16;
    p.builds_per_job = 10;
    p.payloads = 0;
    p.dashboard_days = 2;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    let mut snapshots = Vec::new();
    for ds in ["failures", "flakes"] {
        for e in std::fs::read_dir(root.join("k8s-metrics").join(ds)).unwrap() {
            snapshots.push(e.unwrap().path());
        }
    }
    snapshots.sort();
    assert!(snapshots.len() >= 4, "{snapshots:?}");
    World { mirror: root.join("gcs/kubernetes-ci-logs"), snapshots, _dir: dir }
}

fn cmd(db: &str, args: &[&str]) -> Command {
    let mut c = bin();
    c.args(["--db", db, "--quiet"]).args(args);
    c
}

fn fetch(db: &str, w: &World, extra: &[&str]) -> Command {
    let mut c = cmd(db, &["fetch", "--all", "--mirror"]);
    c.arg(&w.mirror).args(extra);
    c
}

fn import(db: &str, files: &[PathBuf]) -> Command {
    let mut c = cmd(db, &["import"]);
    c.args(files);
    c
}

fn ok(c: &mut Command) {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{:?}: {}", c, stderr(&o));
}

fn digest(db: &str) -> (String, serde_json::Value) {
    let o = cmd(db, &["--format", "json", "store", "info", "--digest"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    (v["digest"].as_str().unwrap().to_string(), v)
}

#[test]
fn concurrent_fetches_and_imports_equal_one_sequential_run_on_both_engines() {
    let w = world();
    let stores = Stores::new("concurrent_fetches_and_imports_equal_one_sequential_run_on_both_engines");
    let mut digests = Vec::new();
    for ((engine, seq), (_, conc)) in stores.fresh("seq").into_iter().zip(stores.fresh("conc")) {
        ok(&mut fetch(&seq, &w, &["--concurrency", "2"]));
        ok(&mut import(&seq, &w.snapshots));
        let (want, info) = digest(&seq);
        let builds =
            info["tables"].as_array().unwrap().iter().find(|t| t["table"] == "builds").unwrap()["rows"].as_u64();
        assert!(builds.unwrap_or(0) > 100, "{engine}: {info}");
        // Six processes at once on a store nobody has opened: they race on its
        // migrations, on interning the same test names, on the same builds and on the
        // same snapshots.
        let half = w.snapshots.len() / 2;
        let mut children: Vec<(String, Child)> = vec![
            (format!("{engine} fetch a"), fetch(&conc, &w, &["--concurrency", "4"])),
            (format!("{engine} fetch b"), fetch(&conc, &w, &["--concurrency", "1"])),
            (format!("{engine} fetch c"), fetch(&conc, &w, &["--max-builds", "3"])),
            (format!("{engine} import all"), import(&conc, &w.snapshots)),
            (format!("{engine} import first"), import(&conc, &w.snapshots[..half])),
            (format!("{engine} import rest"), import(&conc, &w.snapshots[half..])),
        ]
        .into_iter()
        .map(|(n, mut c)| (n, c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()))
        .collect();
        for (name, child) in children.drain(..) {
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "{name} failed: {}", stderr(&o));
        }
        let (got, _) = digest(&conc);
        assert_eq!(got, want, "{engine}: six writers at once differ from one after the other");
        digests.push((engine, want));
    }
    // The same content on SQLite and PostgreSQL.
    for pair in digests.windows(2) {
        assert_eq!(pair[0].1, pair[1].1, "{} and {} stores differ", pair[0].0, pair[1].0);
    }
}

fn builds_in(db: &str) -> u64 {
    citriage_store::Location::parse(db).open().and_then(|s| s.build_counts()).map(|c| c.0).unwrap_or(0)
}

#[test]
#[cfg(unix)]
fn a_fetch_killed_mid_ingest_and_rerun_equals_an_uninterrupted_one_on_both_engines() {
    let w = world();
    let stores = Stores::new("a_fetch_killed_mid_ingest_and_rerun_equals_an_uninterrupted_one_on_both_engines");
    for ((engine, whole), (_, killed)) in stores.fresh("whole").into_iter().zip(stores.fresh("killed")) {
        ok(&mut fetch(&whole, &w, &["--concurrency", "1"]));
        let total = builds_in(&whole);
        let mut child = fetch(&killed, &w, &["--concurrency", "1"]).stdout(Stdio::null()).spawn().unwrap();
        let t = std::time::Instant::now();
        while builds_in(&killed) < 20 && t.elapsed().as_secs() < 60 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        let partial = builds_in(&killed);
        eprintln!("{engine}: killed after {partial} of {total} builds ({status})");
        assert!(!status.success() && partial < total, "{engine}: killed before finishing ({partial}/{total})");
        ok(&mut fetch(&killed, &w, &["--concurrency", "1"]));
        assert_eq!(builds_in(&killed), total, "{engine}");
        assert_eq!(digest(&killed).0, digest(&whole).0, "{engine}: killed and rerun differs from uninterrupted");
    }
}

#[test]
#[cfg(feature = "postgres")]
fn store_migrate_moves_a_sqlite_store_into_postgres_unchanged() {
    let stores = Stores::new("store_migrate_moves_a_sqlite_store_into_postgres_unchanged");
    let Some(cluster) = &stores.cluster else { return };
    let w = world();
    let sqlite = stores.dir.path().join("team.db");
    let sqlite_s = sqlite.display().to_string();
    ok(&mut fetch(&sqlite_s, &w, &[]));
    ok(&mut import(&sqlite_s, &w.snapshots));
    // A password in the URL (the throwaway cluster trusts local users, so any does).
    let url = cluster.create_database("team").unwrap().replace("postgres@", "postgres:hunter2secret@");
    let out = bin()
        .args(["--format", "json", "store", "migrate", "--from", &format!("sqlite:{sqlite_s}"), "--to", &url])
        .output()
        .unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert!(!all.contains("hunter2secret"), "the password was printed: {all}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (want, _) = digest(&sqlite_s);
    assert_eq!(v["digest"].as_str(), Some(want.as_str()), "{v}");
    let (got, info) = digest(&url);
    assert_eq!(got, want);
    assert_eq!(info["backend"], "postgres");
    assert!(info["location"].as_str().unwrap().contains("***"), "{info}");
    // The same reports from either store.
    for args in [&["--format", "json", "snapshots"][..], &["--format", "json", "metrics"][..]] {
        let a = cmd(&sqlite_s, args).output().unwrap();
        let b = cmd(&url, args).output().unwrap();
        assert!(a.status.success() && b.status.success(), "{}{}", stderr(&a), stderr(&b));
        if args[2] == "snapshots" {
            // The listing names its store.
            let strip = |o: &[u8]| {
                let mut v: serde_json::Value = serde_json::from_slice(o).unwrap();
                v["store"] = serde_json::Value::Null;
                v
            };
            assert_eq!(strip(&a.stdout), strip(&b.stdout));
        } else {
            assert_eq!(String::from_utf8_lossy(&a.stdout), String::from_utf8_lossy(&b.stdout), "{args:?}");
        }
    }
    // Into a store that is not empty: refused, exit 2, nothing changed.
    let o = bin().args(["store", "migrate", "--from", &sqlite_s, "--to", &url]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not empty") && !stderr(&o).contains("hunter2secret"), "{}", stderr(&o));
    assert_eq!(digest(&url).0, want);
    // From a file that does not exist: exit 2.
    let o = bin().args(["store", "migrate", "--from", "sqlite:/nonexistent/x.db", "--to", &url]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A malformed URL: exit 2, named.
    let o = cmd("postgres://u:pw@host:notaport/db", &["snapshots"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stderr(&o).contains(":pw@"), "{}", stderr(&o));
}

#[test]
#[cfg(feature = "postgres")]
fn serve_answers_from_a_postgres_store() {
    let stores = Stores::new("serve_answers_from_a_postgres_store");
    let Some(cluster) = &stores.cluster else { return };
    let w = world();
    let url = cluster.create_database("serve").unwrap();
    ok(&mut fetch(&url, &w, &[]));
    let mut child =
        cmd(&url, &["serve", "--addr", "127.0.0.1:0"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut err = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut addr = None;
    let mut seen = String::new();
    for _ in 0..20 {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut err, &mut line).unwrap_or(0) == 0 {
            break;
        }
        seen.push_str(&line);
        if let Some(a) = line.trim().strip_prefix("serving on ").and_then(|r| r.split_whitespace().next()) {
            addr = Some(a.to_string());
            break;
        }
    }
    let Some(addr) = addr else {
        let _ = child.kill();
        panic!("serve did not start: {seen}");
    };
    let job = citriage_store::Location::parse(&url).open().unwrap().build_jobs().unwrap()[0].clone();
    let res = ureq::get(&format!("{addr}/api/v1/jobs")).call();
    let _ = child.kill();
    let _ = child.wait();
    let body = res.expect("the jobs API answers").into_body().read_to_string().unwrap();
    assert!(body.contains(&job), "{job} not in {body}");
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn files_under(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn the_analyses_write_the_same_bytes_on_both_engines() {
    let w = world();
    let stores = Stores::new("the_analyses_write_the_same_bytes_on_both_engines");
    let out = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for (engine, db) in stores.fresh("analyses") {
        ok(&mut fetch(&db, &w, &[]));
        ok(&mut import(&db, &w.snapshots));
        let dir = out.path().join(engine);
        let d = |name: &str| dir.join(name).display().to_string();
        let mut stdout = Vec::new();
        // What a morning runs, each command's files and printed answer kept.
        let runs: Vec<Vec<String>> = vec![
            vec!["--format".into(), "json".into(), "metrics".into()],
            vec!["metrics".into(), "--emit".into(), "kettle".into(), "--out".into(), d("kettle")],
            vec!["cluster".into(), "--out".into(), d("clusters")],
            vec!["cluster".into(), "--profile".into(), "k8s-triage".into(), "--out".into(), d("clusters-k8s")],
            vec!["triage".into(), "--offline".into(), "--out".into(), d("triage")],
            vec!["brief".into(), "--out".into(), d("briefs")],
            vec!["--format".into(), "json".into(), "suspects".into(), "--all".into()],
        ];
        for args in runs {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = cmd(&db, &args).output().unwrap();
            assert!(o.status.success(), "{engine} {args:?}: {}", stderr(&o));
            // Paths printed name this engine's folder.
            let text = String::from_utf8_lossy(&o.stdout).replace(&dir.display().to_string(), "OUT");
            stdout.push((args.join(" ").replace(&dir.display().to_string(), "OUT"), text));
        }
        let files = files_under(&dir);
        assert!(files.keys().any(|k| k.starts_with("clusters")), "{engine}: {:?}", files.keys());
        assert!(files.keys().any(|k| k.starts_with("triage")), "{engine}: {:?}", files.keys());
        assert!(files.keys().any(|k| k.starts_with("briefs")), "{engine}: {:?}", files.keys());
        outputs.push((engine, stdout, files));
    }
    for pair in outputs.windows(2) {
        let ((a, a_out, a_files), (b, b_out, b_files)) = (&pair[0], &pair[1]);
        for ((cmd_a, x), (_, y)) in a_out.iter().zip(b_out) {
            assert_eq!(x, y, "`{cmd_a}` prints differently on {a} and {b}");
        }
        assert_eq!(a_files.keys().collect::<Vec<_>>(), b_files.keys().collect::<Vec<_>>(), "{a} vs {b}");
        for (name, bytes) in a_files {
            assert!(&b_files[name] == bytes, "{name} differs between {a} and {b}");
        }
    }
}
