//! Clustering benchmark: generates N realistic failure texts deterministically (Go/Ginkgo
//! failures, pod-termination messages, Go stack traces, timeouts, connection errors, long
//! test output; many near-duplicates differing in pod names, IPs, durations, timestamps, line
//! numbers) spread over ~4,000 tests and ~1,500 jobs, clusters them with both profiles and
//! prints time, peak RSS (VmHWM), cluster counts and the no-drop check.
//!
//! Usage: cluster1m [N] [--profile k8s-triage|default|both] [--threads T]

use std::fmt::Write;
use std::time::Instant;

use citriage_patterns::cluster::{cluster, ClusterConfig, Clustering, FailureRef};
use citriage_patterns::normalize::Profile;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    /// Zipf-like: small indices much more likely.
    fn skewed(&mut self, n: u64) -> u64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) - 1.0).floor() as u64 % n.max(1)
    }
}

const WORDS: &[&str] = &[
    "pod",
    "node",
    "volume",
    "service",
    "endpoint",
    "deployment",
    "replica",
    "container",
    "namespace",
    "secret",
    "configmap",
    "ingress",
    "storage",
    "network",
    "policy",
    "quota",
    "scheduler",
    "kubelet",
    "apiserver",
    "etcd",
    "controller",
    "webhook",
    "admission",
    "crd",
    "daemonset",
    "statefulset",
    "job",
    "cronjob",
    "lease",
    "token",
    "certificate",
    "proxy",
    "dns",
    "route",
    "image",
    "registry",
    "snapshot",
    "claim",
    "mount",
    "probe",
    "readiness",
    "liveness",
    "eviction",
    "taint",
    "toleration",
    "affinity",
    "topology",
    "priority",
];
const AREAS: &[&str] = &[
    "apps",
    "network",
    "storage",
    "node",
    "auth",
    "scheduling",
    "apimachinery",
    "cli",
    "instrumentation",
    "autoscaling",
    "lifecycle",
    "windows",
    "dra",
    "common",
];
const K8S_ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn suffix(r: &mut Rng, n: usize) -> String {
    (0..n).map(|_| K8S_ALPHA[r.below(K8S_ALPHA.len() as u64) as usize] as char).collect()
}

fn ip(r: &mut Rng) -> String {
    format!("10.{}.{}.{}", r.below(256), r.below(256), r.below(256))
}

fn ts(r: &mut Rng) -> String {
    format!(
        "2026-0{}-{:02} {:02}:{:02}:{:02}.{:06} +0000 UTC",
        1 + r.below(9),
        1 + r.below(28),
        r.below(24),
        r.below(60),
        r.below(60),
        r.below(1_000_000)
    )
}

fn ginkgo_ts(r: &mut Rng) -> String {
    format!(
        "{:02}/{:02}/26 {:02}:{:02}:{:02}.{:03}",
        1 + r.below(12),
        1 + r.below(28),
        r.below(24),
        r.below(60),
        r.below(60),
        r.below(1000)
    )
}

const SYLLABLES: &[&str] = &[
    "ka", "ro", "mi", "te", "lu", "sa", "no", "vi", "de", "pa", "qui", "zo", "ben", "tor", "gal", "sep", "mon", "ric",
    "dul", "fen", "har", "jix", "lom", "nus", "pel", "sor", "tam", "vex", "wil", "yan", "cre", "dra", "fli", "gro",
    "pla", "sti", "tri", "ver", "ent", "ion", "ate", "ing", "able", "ment", "ous", "ize", "ful", "less",
];

/// A pseudo-word of 2-4 syllables (a vocabulary of tens of thousands).
fn pseudo_word(r: &mut Rng) -> String {
    (0..2 + r.below(3)).map(|_| r.pick(SYLLABLES)).collect()
}

/// A template: fixed words chosen once per template id, filled with fresh variables per use.
struct Template {
    kind: u64,
    phrase: String,
    words: Vec<&'static str>,
    area: &'static str,
    file: String,
    line: u64,
    frames: Vec<String>,
}

fn make_template(id: u64) -> Template {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15 ^ (id.wrapping_mul(0x1000_0000_01B3) + 1));
    let words: Vec<&'static str> = (0..8).map(|_| r.pick(WORDS)).collect();
    let area = r.pick(AREAS);
    let file = format!("{}_{}", r.pick(WORDS), r.pick(WORDS));
    let nframes = 6 + r.below(20);
    let frames = (0..nframes)
        .map(|_| {
            format!(
                "k8s.io/kubernetes/pkg/{}/{}.(*{}{}).{}",
                r.pick(AREAS),
                r.pick(WORDS),
                pseudo_word(&mut r),
                r.pick(WORDS),
                pseudo_word(&mut r)
            )
        })
        .collect();
    let phrase = (0..3 + r.below(10)).map(|_| pseudo_word(&mut r)).collect::<Vec<_>>().join(" ");
    Template { kind: r.below(100), phrase, words, area, file, line: 50 + r.below(2000), frames }
}

fn render(t: &Template, r: &mut Rng, out: &mut String) {
    let w = &t.words;
    let pod = format!("{}-{}-{}", w[0], w[1], suffix(r, 5));
    let ns = format!("e2e-{}-{}", w[2], r.below(9000) + 1000);
    match t.kind {
        0..=24 => {
            let _ = write!(
                out,
                "[FAILED] Timed out after {}.{:03}s.\n{}: {} {} {} was not {} within the timeout: expected {} {} in namespace {}, got {}\nExpected\n    <bool>: false\nto be true\nIn [It] at: k8s.io/kubernetes/test/e2e/{}/{}.go:{} @ {}",
                30 + r.below(600),
                r.below(1000),
                t.phrase,
                w[3], w[4], pod, w[5], 1 + r.below(3), w[6], ns, r.below(3),
                t.area, t.file, t.line + r.below(3), ginkgo_ts(r)
            );
        }
        25..=39 => {
            let _ = write!(
                out,
                "[FAILED] 1 errors:\npod {}-{}-{} on node {} container {} unexpected exit code {}: start={} end={} reason=Error message={}\nIn [It] at: k8s.io/kubernetes/test/e2e/{}/{}.go:{} @ {}",
                w[0], r.below(3), r.below(20),
                match r.below(3) {
                    0 => format!("nodes-us-west1-a-{}", suffix(r, 4)),
                    1 => format!("i-0{:016x}", r.next() & 0x0fff_ffff_ffff_ffff),
                    _ => format!("kind-worker{}", r.below(3) + 1),
                },
                w[1], 1 + (t.kind % 3), ts(r), ts(r), t.phrase, t.area, t.file, t.line, ginkgo_ts(r)
            );
        }
        40..=54 => {
            let _ = write!(
                out,
                "panic: {} [recovered]\n\tpanic: {}\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x{:x} pc=0x{:x}]\n\ngoroutine {} [running]:\n",
                t.phrase, t.phrase, r.below(4096), 0x1000000 + r.below(0xffffff), r.below(5000)
            );
            for f in &t.frames {
                let _ = write!(
                    out,
                    "{}(0x{:x}, 0x{:x})\n\t/go/src/k8s.io/kubernetes/{}.go:{} +0x{:x}\n",
                    f,
                    0xc000000000u64 + r.below(0xffffff),
                    0xc000000000u64 + r.below(0xffffff),
                    t.file,
                    t.line + r.below(5),
                    r.below(0x400)
                );
            }
        }
        55..=69 => {
            let _ = write!(
                out,
                "error waiting for {} {} in namespace {} to be {}: timed out waiting for the condition\n{}\nunexpected error:\n    <*errors.errorString | 0x{:x}>: {{\n        s: \"{} {} did not become {} after {}m{}s\",\n    }}\n    {} {} did not become {} after {}m{}s\noccurred",
                w[0], pod, ns, w[3], t.phrase,
                0xc000000000u64 + r.below(0xffffff),
                w[4], pod, w[5], r.below(10), r.below(60),
                w[4], pod, w[5], r.below(10), r.below(60)
            );
        }
        70..=84 => {
            let (a, p) = (ip(r), 30000 + r.below(30000));
            let _ = write!(
                out,
                "{}\nUnexpected error:\n    <*url.Error | 0x{:x}>: Get \"https://{}:{}/api/v1/namespaces/{}/{}s/{}\": dial tcp {}:{}: connect: connection refused\noccurred\nIn [BeforeEach] at: k8s.io/kubernetes/test/e2e/framework/{}.go:{} @ {}",
                t.phrase, 0xc000000000u64 + r.below(0xffffff), a, p, ns, w[0], pod, a, p, t.file, t.line, ginkgo_ts(r)
            );
        }
        85..=97 => {
            let _ = write!(out, "{} {} {} failed: exit status {}", t.phrase, w[1], w[2], t.kind % 3);
        }
        _ => {
            // long test output: many log lines, a few varying values
            let n = 20 + r.below(100);
            for i in 0..n {
                let _ = writeln!(
                    out,
                    "I{:02}{:02} {:02}:{:02}:{:02}.{:06} {:5} {}.go:{}] {} {} {} {} {}={} took {}ms",
                    1 + r.below(12),
                    1 + r.below(28),
                    r.below(24),
                    r.below(60),
                    r.below(60),
                    r.below(1_000_000),
                    1000 + r.below(9000),
                    t.file,
                    100 + (i * 7) % 900,
                    t.phrase.split(' ').nth((i % 3) as usize).unwrap_or("x"),
                    w[(i % 8) as usize],
                    w[((i + 3) % 8) as usize],
                    pod,
                    w[((i + 5) % 8) as usize],
                    r.below(100),
                    r.below(5000)
                );
            }
            let _ = write!(out, "--- FAIL: Test{}{} ({}.{:02}s)", w[0], w[1], r.below(300), r.below(100));
        }
    }
}

struct Corpus {
    arena: String,
    rows: Vec<(u32, u32, u32, u32, u32)>, // text start, end, test, job, build
    tests: Vec<String>,
    jobs: Vec<String>,
    builds: Vec<String>,
}

fn generate(n: usize) -> Corpus {
    let ntests = 4000u64;
    let njobs = 1500u64;
    let tests: Vec<String> = (0..ntests)
        .map(|i| {
            let mut r = Rng(i * 7919 + 17);
            format!(
                "Kubernetes e2e suite.[It] [sig-{}] {} {} should {} {} [{}]",
                AREAS[(i % AREAS.len() as u64) as usize],
                r.pick(WORDS),
                r.pick(WORDS),
                r.pick(WORDS),
                i,
                if i % 3 == 0 { "Conformance" } else { "Slow" }
            )
        })
        .collect();
    let jobs: Vec<String> =
        (0..njobs).map(|i| format!("ci-kubernetes-e2e-{}-{}", AREAS[(i % 14) as usize], i)).collect();
    let builds: Vec<String> =
        (0..20_000u64).map(|i| format!("{}", 1_790_000_000_000_000_000u64 + i * 7_777_777)).collect();
    let templates: Vec<Template> = (0..6000u64).map(make_template).collect();
    let mut r = Rng(42);
    let mut arena = String::with_capacity(n * 520);
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let test = r.skewed(ntests);
        // each test fails in a handful of ways: templates are tied to the test
        let tpl = (test * 3 + r.skewed(4) * 1733 + if r.below(20) == 0 { r.below(6000) } else { 0 }) % 6000;
        let start = arena.len();
        render(&templates[tpl as usize], &mut r, &mut arena);
        let end = arena.len();
        let job = (test * 13 + r.below(3)) % njobs;
        let build = r.below(builds.len() as u64);
        rows.push((start as u32, end as u32, test as u32, job as u32, build as u32));
    }
    Corpus { arena, rows, tests, jobs, builds }
}

fn vm_hwm_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// CPU seconds (user + system) used by this process so far.
fn cpu_seconds() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // fields after the command name (which is in parentheses)
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|a| a.replace('_', "").parse().ok()).unwrap_or(1_000_000);
    let profile_arg =
        args.iter().position(|a| a == "--profile").and_then(|i| args.get(i + 1)).map(String::as_str).unwrap_or("both");
    if let Some(t) =
        args.iter().position(|a| a == "--threads").and_then(|i| args.get(i + 1)).and_then(|v| v.parse::<usize>().ok())
    {
        let _ = rayon::ThreadPoolBuilder::new().num_threads(t).build_global();
    }
    let t0 = Instant::now();
    let corpus = generate(n);
    let gen_s = t0.elapsed().as_secs_f64();
    let failures: Vec<FailureRef> = corpus
        .rows
        .iter()
        .map(|&(s, e, t, j, b)| FailureRef {
            test: &corpus.tests[t as usize],
            text: &corpus.arena[s as usize..e as usize],
            job: &corpus.jobs[j as usize],
            build: &corpus.builds[b as usize],
        })
        .collect();
    println!(
        "generated {} failures ({:.0} MB of text, mean {:.0} B) in {:.2} s; threads {}; RSS after generation {:.0} MiB",
        failures.len(),
        corpus.arena.len() as f64 / 1e6,
        corpus.arena.len() as f64 / failures.len().max(1) as f64,
        gen_s,
        rayon::current_num_threads(),
        vm_hwm_mib().unwrap_or(0.0)
    );
    let profiles: Vec<Profile> = match Profile::parse(profile_arg) {
        Some(p) => vec![p],
        None => vec![Profile::K8sTriage, Profile::Default],
    };
    for p in profiles {
        let t = Instant::now();
        let c0 = cpu_seconds();
        let res = cluster(&failures, &ClusterConfig::new(p));
        let dt = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - c0;
        let a = &res.accounting;
        println!(
            "profile {:11} {:7.2} s wall ({:.1} s CPU)  clusters {:7} (singletons {:6}, local {:7})  distinct raw {:7} normalized {:7}  exact checks {:9} (global {:9}) bound checks {:11}  no-drop: input {} clustered {} missing {} duplicated {} -> {}  peak RSS {:.0} MiB",
            p.name(),
            dt,
            cpu,
            a.clusters,
            a.singleton_clusters,
            a.local_clusters,
            a.distinct_raw,
            a.distinct_normalized,
            a.exact_checks,
            a.global_exact_checks,
            a.bound_checks,
            a.input,
            a.clustered,
            a.missing,
            a.duplicated,
            if a.is_complete() { "OK" } else { "FAILED" },
            vm_hwm_mib().unwrap_or(0.0)
        );
        println!("  result digest {:016x} (keys, ids, texts, spans, members, tests, assignment)", digest(&res));
        if let Some(c) = res.clusters.first() {
            let mut key = c.key.clone();
            key.truncate(160);
            println!(
                "  largest: {} failures, {} tests, id {}, key {:?}",
                c.members.len(),
                c.tests.len(),
                c.k8s_id,
                key
            );
        }
    }
}

/// A digest of everything a clustering decides, to compare two builds' results.
fn digest(c: &Clustering) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for cl in &c.clusters {
        (&cl.key, &cl.k8s_id, &cl.text, &cl.spans, &cl.members, cl.distinct_normalized).hash(&mut h);
        for t in &cl.tests {
            (&t.test, &t.members).hash(&mut h);
        }
    }
    c.assignment.hash(&mut h);
    h.finish()
}
