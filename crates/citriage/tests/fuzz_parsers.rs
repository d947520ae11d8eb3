//! A seeded byte-mutation fuzzer for every parser of outside data, on stable Rust.
//!
//! Seeds come from a small synthetic world (its bucket files, dashboard snapshots
//! and payload stream), the bundled example snapshots and a few hand-written
//! hostile inputs. Each target gets mutants of its seeds (bit flips, interesting
//! bytes and numbers, splices of other seeds, deletions, duplications, truncation)
//! and must return (an error is fine) without panicking.
//!
//! By default each target runs a fixed number of executions with a fixed seed, so
//! the test is deterministic and short. `CITRIAGE_FUZZ_SECS=N` runs each target for N
//! seconds instead and `CITRIAGE_FUZZ_SEED` changes the seed (see `fuzz/README.md`);
//! the figures are printed. A panicking input is written to
//! `target/fuzz-crashes/<target>-<n>.bin` and fails the test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type Target = fn(&[u8]);

fn targets() -> Vec<(&'static str, Target)> {
    vec![
        ("snapshot", |b| {
            let _ = citriage_formats::snapshot::parse_snapshot(b, "fuzz", None);
        }),
        ("started", |b| {
            let _ = citriage_formats::prow::parse_started(b, "fuzz");
        }),
        ("finished", |b| {
            let _ = citriage_formats::prow::parse_finished(b, "fuzz");
        }),
        ("prowjob", |b| {
            let _ = citriage_formats::prow::parse_prowjob(b, "fuzz");
        }),
        ("prowjobs_js", |b| {
            let _ = citriage_formats::prow::parse_prowjobs_js(b, "fuzz");
        }),
        ("deck_history", |b| {
            let _ = citriage_formats::prow::parse_job_history(b, "fuzz");
        }),
        ("junit", |b| {
            let _ = citriage_formats::junit::parse_junit(b, "fuzz");
        }),
        ("payload_junit", |b| {
            let _ = citriage_payload::junit::parse_junit(b, "fuzz");
        }),
        ("gcs_listing", |b| {
            let _ = citriage_sources::artifacts::parse_listing_page(b, "logs/job/1/", "fuzz");
        }),
        ("gzip", |b| {
            let _ = citriage_sources::decode_limited("fuzz", b.to_vec(), 1 << 20);
        }),
        ("object_name", |b| {
            let s = String::from_utf8_lossy(b);
            let _ = citriage_sources::paths::check_name(&s);
        }),
        ("release_tags", |b| {
            let _ = citriage_payload::release::parse_tag_list(b, "fuzz");
        }),
        ("release_info", |b| {
            let _ = citriage_payload::release::parse_release_info(b, "fuzz");
        }),
        ("job_runs", |b| {
            let _ = citriage_payload::jobhistory::parse_job_runs(b, "fuzz");
        }),
        ("verify_report", |b| {
            let _ = citriage_verify::report::parse(&String::from_utf8_lossy(b));
        }),
        ("rule_expr", |b| {
            let _ = citriage_analysis::expr::Expr::parse(&String::from_utf8_lossy(b));
        }),
        ("rules_toml", |b| {
            let _ = citriage_analysis::rules::RuleSet::from_toml(&String::from_utf8_lossy(b), "fuzz");
        }),
        ("payload_snapshot", payload_snapshot),
        ("escape", |b| {
            let s = String::from_utf8_lossy(b);
            let md = citriage_model::escape::md_cell(&s);
            assert!(!md.contains('\n') && !md.contains('\u{1b}'), "md_cell left a control: {md:?}");
            let t = citriage_model::escape::one_line(&s);
            assert!(!t.chars().any(|c| c.is_control() && c != '\t'), "one_line left a control: {t:?}");
        }),
    ]
}

/// The files of a payload-snapshot folder the `payload_snapshot` target writes, each
/// with a well-formed seed: one rejected payload after an accepted one, a failed
/// blocking job with its JUnit and build log, and a PR with its diff.
const SNAPSHOT_FILES: &[(&str, &str)] = &[
    (
        "summary.json",
        r#"{"payload_tag":"4.22.0-0.nightly-2026-11-20-101010","phase":"Rejected","payloads":[{"tag":"4.22.0-0.nightly-2026-11-20-101010","phase":"Rejected","prs":[{"url":"https://github.com/openshift/cno/pull/7","component":"cno","number":7,"description":"MTU","diff":"4.22.0-0.nightly-2026-11-20-101010/cno/prs/7/code.diff"}]},{"tag":"4.22.0-0.nightly-2026-11-19-101010","phase":"Accepted"}]}"#,
    ),
    (
        "4.22.0-0.nightly-2026-11-20-101010/payload.json",
        r#"{"name":"4.22.0-0.nightly-2026-11-20-101010","phase":"Rejected","results":{"blockingJobs":{"e2e-aws":{"state":"Failed","url":"https://prow.ci.openshift.org/view/gs/b/logs/e2e-aws/1"}}},"changeLogJson":{"components":[],"updatedImages":[]}}"#,
    ),
    (
        "4.22.0-0.nightly-2026-11-20-101010/changelog.json",
        r#"{"updatedImages":[{"name":"cno","path":"openshift/cno","commits":[{"subject":"MTU","pullID":7,"pullURL":"https://github.com/openshift/cno/pull/7"}]}]}"#,
    ),
    (
        "4.22.0-0.nightly-2026-11-20-101010/jobs/blocking/e2e-aws/job.json",
        r#"{"state":"Failed","url":"https://prow.ci.openshift.org/view/gs/b/logs/e2e-aws/1","retries":1,"previousAttemptURLs":["https://prow.ci.openshift.org/view/gs/b/logs/e2e-aws/0"]}"#,
    ),
    (
        "4.22.0-0.nightly-2026-11-20-101010/jobs/blocking/e2e-aws/build_log.json",
        r#"{"total_lines":900,"error_warning_count":1,"error_warning_lines":[{"line_number":812,"text":"E1120 mtu.go:77] validateClusterNetworkMTU: MTU 8901 exceeds the underlay"}],"tail_start_line":720,"tail_lines":["error: 1 failed"]}"#,
    ),
    (
        "4.22.0-0.nightly-2026-11-20-101010/jobs/blocking/e2e-aws/junit/junit_e2e.xml",
        r#"<testsuite name="openshift-tests"><testcase name="[sig-network] MTU probes"><failure message="validateClusterNetworkMTU: MTU 8901 exceeds the underlay">stack</failure></testcase><testcase name="ok"/></testsuite>"#,
    ),
    (
        "4.22.0-0.nightly-2026-11-20-101010/regressions.json",
        r#"{"[sig-network] MTU probes":{"first_failed_in":"4.22.0-0.nightly-2026-11-20-101010"}}"#,
    ),
    (
        "4.22.0-0.nightly-2026-11-20-101010/cno/prs/7/code.diff",
        "diff --git a/pkg/mtu.go b/pkg/mtu.go\n--- a/pkg/mtu.go\n+++ b/pkg/mtu.go\n@@ -70,1 +70,2 @@\n+\treturn fmt.Errorf(\"MTU %d exceeds the underlay\", mtu)\n",
    ),
    ("4.22.0-0.nightly-2026-11-19-101010/payload.json", r#"{"name":"4.22.0-0.nightly-2026-11-19-101010","phase":"Accepted"}"#),
];

/// A payload-snapshot folder read and analysed whole: the first byte picks which of
/// [`SNAPSHOT_FILES`] the rest replaces; the others keep their seeds.
fn payload_snapshot(b: &[u8]) {
    let Some((&which, content)) = b.split_first() else { return };
    let which = which as usize % SNAPSHOT_FILES.len();
    let dir = tempfile::tempdir().expect("temporary folder");
    for (i, (rel, seed)) in SNAPSHOT_FILES.iter().enumerate() {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
        std::fs::write(&path, if i == which { content } else { seed.as_bytes() }).expect("write");
    }
    if let Ok(snap) = citriage_payload::SnapshotDir::open(dir.path()) {
        let tag = snap.target_tag().unwrap_or_else(|| "4.22.0-0.nightly-2026-11-20-101010".into());
        let opts = citriage_payload::AnalyzeOptions::new(&tag);
        if let Ok(a) = citriage_payload::analyze(&snap, &snap, &opts) {
            let _ = citriage_payload::render_json(&a);
        }
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const TOKENS: &[&[u8]] = &[
    b"9223372036854775807",
    b"-9223372036854775808",
    b"1e300",
    b"-1",
    b"NaN",
    b"\"",
    b"\\u0000",
    b"\xef\xbb\xbf",
    b"{",
    b"}",
    b"[",
    b"]",
    b"<",
    b"</",
    b"<![CDATA[",
    b"]]>",
    b"&#0;",
    b"&amp;",
    b"../",
    b"\\",
    b"\0",
    b"\x1b[31m",
    b"\n# ",
    b"|",
    b"\x1f\x8b\x08\x00",
    b"\xff\xfe",
    b"null",
    b"true",
    b"\"timestamp\":",
];

fn mutate(rng: &mut Rng, input: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(8) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = [0u8, 0xff, b'"', b'<', b'{', b'9', b'\n', 0x80][rng.below(8)];
            }
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(v.len() + 1);
                v.splice(i..i, t.iter().copied());
            }
            3 if !others.is_empty() => {
                let o = &others[rng.below(others.len())];
                if !o.is_empty() {
                    let a = rng.below(o.len());
                    let b = (a + 1 + rng.below(256)).min(o.len());
                    let i = rng.below(v.len() + 1);
                    v.splice(i..i, o[a..b].iter().copied());
                }
            }
            4 if !v.is_empty() => {
                let a = rng.below(v.len());
                let b = (a + 1 + rng.below(64)).min(v.len());
                v.drain(a..b);
            }
            5 if !v.is_empty() && v.len() < 1 << 20 => {
                let a = rng.below(v.len());
                let b = (a + 1 + rng.below(64)).min(v.len());
                let chunk = v[a..b].to_vec();
                v.splice(b..b, chunk);
            }
            6 if !v.is_empty() => {
                v.truncate(rng.below(v.len()));
            }
            _ => {
                let i = rng.below(v.len() + 1);
                v.insert(i, rng.next() as u8);
            }
        }
    }
    v
}

/// Seeds per target: files of the synthetic world by kind, examples, and inline ones.
fn seeds(world: &Path) -> BTreeMap<&'static str, Vec<Vec<u8>>> {
    let mut m: BTreeMap<&'static str, Vec<Vec<u8>>> = BTreeMap::new();
    let mut files = Vec::new();
    let mut stack = vec![world.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/k8s");
    for e in std::fs::read_dir(examples).into_iter().flatten().flatten() {
        files.push(e.path());
    }
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    for f in files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        let path = f.display().to_string();
        let kind: &'static str = match name.as_str() {
            "started.json" => "started",
            "finished.json" => "finished",
            "prowjob.json" => "prowjob",
            n if n.starts_with("junit") && n.ends_with(".xml") => "junit",
            n if n.ends_with(".json") && (path.contains("k8s-metrics") || path.contains("examples")) => "snapshot",
            n if n.ends_with(".json") && path.contains("release") => "release_info",
            n if n.ends_with(".html") => "deck_history",
            _ => continue,
        };
        // At most 20 seeds of a kind: the world has many alike.
        let c = counts.entry(kind).or_default();
        if *c >= 20 {
            continue;
        }
        if let Ok(b) = std::fs::read(&f) {
            if b.len() <= 256 * 1024 {
                *c += 1;
                m.entry(kind).or_default().push(b);
            }
        }
    }
    let inline: &[(&'static str, &[u8])] = &[
        ("prowjobs_js", br#"{"items":[{"spec":{"job":"j","type":"periodic"},"status":{"state":"error","startTime":"2026-11-20T10:00:00Z","build_id":"1"}}]}"#),
        ("deck_history", br#"<html><script>var allBuilds = [{"ID":"2","SpyglassLink":"/view/gs/b/logs/j/2","Started":"2026-11-20T10:00:00Z","Duration":60000000000,"Result":"SUCCESS"}];</script><a href="?buildId=1">Older Runs</a></html>"#),
        ("gcs_listing", br#"{"kind":"storage#objects","items":[{"name":"logs/job/1/started.json","size":"10"},{"name":"logs/job/1/../x","size":3}],"prefixes":["logs/job/1/artifacts/"],"nextPageToken":"t"}"#),
        ("object_name", b"logs/job/1/artifacts/junit_01.xml"),
        ("release_tags", br#"{"name":"4.19.0-0.nightly","tags":[{"name":"4.19.0-0.nightly-2026-11-20-101010","phase":"Accepted","pullSpec":"q/r:x","downloadURL":""}]}"#),
        ("release_info", br#"{"name":"4.19.0-0.nightly-2026-11-20-101010","phase":"Rejected","results":{"blockingJobs":{"e2e":{"state":"Failed","url":"https://prow/view/gs/b/logs/e2e/1"}}},"changeLogJson":{"components":[],"updatedImages":[]}}"#),
        ("job_runs", br#"[{"id":"1","job":"e2e","state":"failure","started":"2026-11-20T10:00:00Z","url":"https://prow/view/gs/b/logs/e2e/1"}]"#),
        ("verify_report", b"# Report\n\n## 1. Patterns\n\n| Job | Days |\n|---|---:|\n| `ci-a` | 3 |\n\nPR #123 is merged. Build https://prow.k8s.io/view/gs/b/logs/j/1 FAILED.\n"),
        ("rule_expr", b"failing_days >= 30 && job =~ \"^ci-\" || !(flakes > 2)"),
        ("rules_toml", b"[[rule]]\nname = \"infra\"\nwhen = \"job =~ 'e2e'\"\n"),
        ("escape", b"job\n# Heading | x\0y\x1b[31m"),
        ("junit", b"<testsuites><testsuite name=\"s\"><testcase classname=\"c\" name=\"t\" time=\"1\"><failure message=\"m\">text</failure></testcase></testsuite></testsuites>"),
        ("payload_junit", b"<testsuite name=\"s\"><testcase name=\"t\"><system-out>out</system-out></testcase></testsuite>"),
        ("started", br#"{"timestamp": 1700000000, "repos": {"k/k": "master"}}"#),
        ("finished", br#"{"timestamp": 1700000600, "result": "SUCCESS"}"#),
        ("prowjob", br#"{"spec":{"job":"j","type":"periodic"},"status":{"state":"success"}}"#),
        ("snapshot", br#"{"ci-a": {"failing_days": 3}}"#),
    ];
    for (i, (_, seed)) in SNAPSHOT_FILES.iter().enumerate() {
        let mut b = vec![i as u8];
        b.extend_from_slice(seed.as_bytes());
        m.entry("payload_snapshot").or_default().push(b);
    }
    for (k, b) in inline {
        m.entry(k).or_default().push(b.to_vec());
    }
    let junits = m.get("junit").cloned().unwrap_or_default();
    m.entry("payload_junit").or_default().extend(junits);
    // gzip seeds: some of the world's files, compressed.
    let mut gz = Vec::new();
    for s in m.values().flatten().take(8) {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(s).unwrap();
        gz.push(e.finish().unwrap());
    }
    m.insert("gzip", gz);
    m
}

#[test]
fn parsers_of_outside_data_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 6;
    p.builds_per_job = 4;
    p.dashboard_days = 1;
    citriage_synth::generate(&p, &world, &mut |_| {}).unwrap();
    let seeds = seeds(&world);
    let secs: Option<u64> = std::env::var("CITRIAGE_FUZZ_SECS").ok().and_then(|s| s.parse().ok());
    let execs: u64 = std::env::var("CITRIAGE_FUZZ_EXECS").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    let seed: u64 = std::env::var("CITRIAGE_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_c17e);
    let only = std::env::var("CITRIAGE_FUZZ_TARGET").ok();
    let crash_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../fuzz-crashes");
    // Panics are caught and reported below, not printed for every mutant.
    std::panic::set_hook(Box::new(|_| {}));
    let mut crashes = Vec::new();
    println!("{:<14} {:>6} {:>10} {:>9} {:>8}", "target", "seeds", "execs", "seconds", "crashes");
    for (name, target) in targets() {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let corpus = seeds.get(name).cloned().unwrap_or_default();
        assert!(!corpus.is_empty(), "{name}: no seeds");
        let mut rng = Rng(seed ^ (name.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let start = Instant::now();
        let mut n = 0u64;
        let mut found = 0;
        loop {
            match secs {
                Some(s) if start.elapsed() >= Duration::from_secs(s) => break,
                None if n >= execs => break,
                _ => {}
            }
            let input = if n < corpus.len() as u64 {
                corpus[n as usize].clone()
            } else {
                let pick = rng.below(corpus.len());
                mutate(&mut rng, &corpus[pick], &corpus)
            };
            n += 1;
            if std::panic::catch_unwind(|| target(&input)).is_err() {
                found += 1;
                let _ = std::fs::create_dir_all(&crash_dir);
                let f = crash_dir.join(format!("{name}-{n}.bin"));
                let _ = std::fs::write(&f, &input);
                crashes.push(format!("{name}: panicked on input written to {}", f.display()));
            }
        }
        println!("{name:<14} {:>6} {n:>10} {:>9.1} {found:>8}", corpus.len(), start.elapsed().as_secs_f64());
    }
    let _ = std::panic::take_hook();
    assert!(crashes.is_empty(), "{}", crashes.join("\n"));
}
