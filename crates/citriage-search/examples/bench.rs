//! Benchmark: builds an index over a deterministic synthetic corpus of Go/Ginkgo failure
//! texts and times typical searches with the index against a brute-force scan.
//!
//! ```sh
//! cargo run --release -p citriage-search --example bench -- 1000000
//! ```
//!
//! Prints figures only; nothing is asserted.

use citriage_search::{plan_pattern, IndexBuilder, SearchBudget, TextIndex};
use regex::Regex;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

const QUERIES: &[&str] = &[
    "i/o timeout",
    "(?i)connection refused",
    "context deadline exceeded",
    r#"pods? ".*" not found"#,
    r"\d+\.\d+\.\d+\.\d+:6443",
    ".",
];

fn main() {
    let n: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 100_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("bench: the argument must be a number of texts: {e}");
            std::process::exit(2);
        }
    };
    let mut gen = Corpus::new(0x00c1_7a1a_9e00_0001);
    let t0 = Instant::now();
    let texts: Vec<String> = (0..n).map(|_| gen.next_text()).collect();
    let gen_time = t0.elapsed();
    let raw_bytes: usize = texts.iter().map(String::len).sum();

    let (t0, c0) = (Instant::now(), cpu_time());
    let mut b = IndexBuilder::new();
    for t in &texts {
        b.add(t);
    }
    let (add_time, add_cpu) = (t0.elapsed(), cpu_time().saturating_sub(c0));
    drop(texts);
    let rss_before = reset_peak_rss();
    let (t0, c0) = (Instant::now(), cpu_time());
    let ix = b.finish();
    let (finish_time, finish_cpu) = (t0.elapsed(), cpu_time().saturating_sub(c0));
    let finish_peak = status_kib("VmHWM:");

    println!("corpus: {n} texts generated in {}, {} of text", secs(gen_time), mib(raw_bytes));
    println!("distinct texts: {} ({} of text stored)", ix.len(), mib(ix.text_bytes()));
    println!(
        "build: add+dedup {} ({} CPU), finish (postings) {} ({} CPU), total {}",
        secs(add_time),
        secs(add_cpu),
        secs(finish_time),
        secs(finish_cpu),
        secs(add_time + finish_time)
    );
    if let (Some(before), Some(peak)) = (rss_before, finish_peak) {
        println!(
            "finish memory: resident before {} MiB, peak during {} MiB (+{} MiB)",
            before / 1024,
            peak / 1024,
            peak.saturating_sub(before) / 1024
        );
    }
    println!(
        "index: {} heap ({} text compressed from {} + {} postings + tables), {} distinct trigrams, {} postings, {:.2} bytes/posting",
        mib(ix.heap_bytes()),
        mib(ix.packed_text_bytes()),
        mib(ix.text_bytes()),
        mib(ix.posting_bytes()),
        ix.trigram_count(),
        ix.posting_count(),
        ix.posting_bytes() as f64 / ix.posting_count().max(1) as f64
    );
    println!();
    println!(
        "| query | plan trigrams | candidates | matches | index: all matches | index: first 100 | scan: all matches |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for q in QUERIES {
        let re = Regex::new(q).expect("benchmark queries are valid");
        let plan = plan_pattern(q);
        let (stats, index_time) = measure(9, || search_all(&ix, &re));
        let (_, first_time) = measure(9, || search_first(&ix, &re, 100));
        let (scan_matches, scan_time) = measure(5, || scan(&ix, &re));
        if scan_matches != stats.matched {
            eprintln!("bench: {q}: index found {} matches, the scan {scan_matches}", stats.matched);
            std::process::exit(1);
        }
        println!(
            "| `{}` | {} | {} | {} | {} | {} | {} |",
            q.replace('|', "\\|"),
            plan.leaves(),
            if stats.used_index { stats.candidates.to_string() } else { format!("{} (scan)", stats.candidates) },
            stats.matched,
            index_time,
            first_time,
            scan_time
        );
    }
    println!();
    println!("times: median wall-clock / mean CPU per run (CPU in 10 ms ticks over all runs)");
}

fn search_all(ix: &TextIndex, re: &Regex) -> citriage_search::SearchStats {
    ix.search(re, SearchBudget::unlimited(), |_, _, _| ControlFlow::Continue(()))
}

fn search_first(ix: &TextIndex, re: &Regex, max: usize) -> usize {
    let mut n = 0;
    ix.search(re, SearchBudget::unlimited(), |_, _, _| {
        n += 1;
        if n == max {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    n
}

/// The brute-force scan: every text through the regex, keeping the match (as the
/// indexed search does).
fn scan(ix: &TextIndex, re: &Regex) -> usize {
    let mut n = 0;
    ix.for_each_text(|_, t| n += usize::from(re.find(t).is_some()));
    n
}

/// Runs `f` `runs` times: its last result and "median wall / mean CPU" per run.
fn measure<T>(runs: usize, mut f: impl FnMut() -> T) -> (T, String) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    let c0 = cpu_time();
    for _ in 0..runs {
        let t0 = Instant::now();
        last = Some(f());
        times.push(t0.elapsed());
    }
    let cpu = cpu_time().saturating_sub(c0) / runs as u32;
    times.sort();
    (last.expect("runs > 0"), format!("{} / {}", ms(times[runs / 2]), ms(cpu)))
}

/// CPU time of this process so far (user + system, from `/proc/self/stat` on Linux;
/// zero elsewhere): wall-clock figures on a shared machine overstate the work done.
/// The resident memory now (KiB), after resetting the peak the kernel keeps (Linux:
/// `clear_refs` 5), so the next `VmHWM` is the peak since this call.
fn reset_peak_rss() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    status_kib("VmRSS:")
}

/// A `/proc/self/status` figure in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix(field))?.trim().trim_end_matches("kB").trim().parse().ok()
}

fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return Duration::ZERO };
    // Fields after the command name (which is in parentheses and may contain spaces).
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { return Duration::ZERO };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields.get(11..13).map_or(0, |f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum());
    // Clock ticks are 100 per second on Linux.
    Duration::from_millis(ticks * 10)
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn mib(b: usize) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}

/// Deterministic generator of Go/Ginkgo-style failure texts: many near-duplicates
/// (same message, different pod names, IPs, durations, line numbers), a share of exact
/// repeats, stack traces, and a few very large goroutine dumps.
struct Corpus {
    state: u64,
    recent: Vec<String>,
}

const PKGS: &[&str] =
    &["apps", "network", "storage", "node", "auth", "apimachinery", "kubectl", "scheduling", "autoscaling"];
const FUNCS: &[&str] = &[
    "(*Framework).BeforeEach",
    "(*Framework).AfterEach",
    "ExpectNoError",
    "(*PodClient).CreateSync",
    "WaitForPodRunningInNamespace",
    "(*Framework).CreateNamespace",
    "RunHostCmdOrDie",
    "(*TestJig).WaitForEndpointOnNode",
    "CheckReachabilityFromPod",
    "(*StatefulSetTester).WaitForRunning",
];
const APPS: &[&str] =
    &["coredns", "kube-proxy", "webserver", "agnhost", "netexec", "pause", "csi-hostpath", "busybox", "nginx"];
const FIXED: &[&str] = &[
    "error during ./hack/ginkgo-e2e.sh: exit status 1",
    "Job was active longer than specified deadline",
    "timed out waiting for the condition",
    "Process did not finish before 2h0m0s timeout",
    "kubetest --test failed: error during ./hack/ginkgo-e2e.sh --ginkgo.skip=\\[Slow\\]|\\[Serial\\]: exit status 1",
    "unexpected error: the server could not find the requested resource",
    "failed to acquire lease: resource quota exceeded",
    "Couldn't delete ns: \"e2e-tests-kubectl-fixture\": namespace e2e-tests-kubectl-fixture was not deleted",
];

impl Corpus {
    fn new(seed: u64) -> Corpus {
        Corpus { state: seed, recent: Vec::new() }
    }

    /// splitmix64.
    fn u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.u64() % n
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }

    fn alnum(&mut self, n: usize) -> String {
        const A: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n).map(|_| A[self.below(A.len() as u64) as usize] as char).collect()
    }

    fn hex(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from_digit(self.below(16) as u32, 16).unwrap_or('0')).collect()
    }

    fn ip(&mut self) -> String {
        format!("10.{}.{}.{}", self.below(256), self.below(256), self.below(254) + 1)
    }

    fn pod(&mut self) -> String {
        let app = self.pick(APPS);
        let (h, s) = (self.alnum(10), self.alnum(5));
        format!("{app}-{h}-{s}")
    }

    fn ns(&mut self) -> String {
        let p = self.pick(PKGS);
        format!("e2e-{p}-{}", self.below(10_000))
    }

    fn duration(&mut self) -> String {
        format!("{}.{:03}s", self.below(600), self.below(1000))
    }

    fn stack(&mut self, frames: usize) -> String {
        let mut s = String::new();
        for _ in 0..frames {
            let pkg = self.pick(PKGS);
            let f = self.pick(FUNCS);
            let line = self.below(2000) + 1;
            let arg = self.hex(10);
            let off = self.hex(3);
            s.push_str(&format!(
                "k8s.io/kubernetes/test/e2e/{pkg}.{f}(0xc{arg})\n\t/home/prow/go/src/k8s.io/kubernetes/test/e2e/{pkg}/{pkg}.go:{line} +0x{off}\n"
            ));
        }
        s
    }

    fn footer(&mut self) -> String {
        let pkg = self.pick(PKGS);
        let line = self.below(3000) + 1;
        let (d, h, m, sec) = (self.below(28) + 1, self.below(24), self.below(60), self.below(60));
        format!("\nIn [It] at: k8s.io/kubernetes/test/e2e/{pkg}/{pkg}.go:{line} @ 11/{d:02}/26 {h:02}:{m:02}:{sec:02}.{:03}\n", self.below(1000))
    }

    fn next_text(&mut self) -> String {
        // A quarter are exact repeats of a recent text (the same failure in other builds).
        if !self.recent.is_empty() && self.below(4) == 0 {
            let i = self.below(self.recent.len() as u64) as usize;
            return self.recent[i].clone();
        }
        let kind = self.below(100);
        let text = match kind {
            0..=14 => {
                let (ip, ns, pod) = (self.ip(), self.ns(), self.pod());
                let mut s = format!(
                    "Get \"https://{ip}:6443/api/v1/namespaces/{ns}/pods/{pod}\": dial tcp {ip}:6443: i/o timeout"
                );
                if self.below(2) == 0 {
                    s.push_str(&self.footer());
                    let frames = 3 + self.below(6) as usize;
                    s.push_str(&self.stack(frames));
                }
                s
            }
            15..=24 => {
                let ip = self.ip();
                if self.below(3) == 0 {
                    format!("curl: (7) Failed to connect to {ip} port 80: Connection refused\ncommand terminated with exit code 7")
                } else {
                    let port = [10250, 6443, 8080, 443][self.below(4) as usize];
                    format!("error dialing backend: dial tcp {ip}:{port}: connect: connection refused")
                }
            }
            25..=36 => {
                let (pod, ns, d) = (self.pod(), self.ns(), self.duration());
                let mut s = format!(
                    "failed to wait for pod {pod} in namespace {ns} after {d}: client rate limiter Wait returned an error: context deadline exceeded"
                );
                s.push_str(&self.footer());
                s
            }
            37..=44 => {
                let (pod, ns) = (self.pod(), self.ns());
                let p = if self.below(2) == 0 { "pods" } else { "pod" };
                format!("{p} \"{pod}\" not found\nunexpected error getting pod in namespace {ns}")
            }
            45..=69 => {
                let (a, b) = (self.below(100), self.below(100));
                let mut s = format!("[FAILED] Expected\n    <int>: {a}\nto equal\n    <int>: {b}");
                s.push_str(&self.footer());
                let frames = 5 + self.below(20) as usize;
                s.push_str(&self.stack(frames));
                s
            }
            70..=79 => {
                let d = self.duration();
                let mut s = format!("Timed out after {d}.\nExpected\n    <bool>: false\nto be true");
                s.push_str(&self.footer());
                let frames = 3 + self.below(10) as usize;
                s.push_str(&self.stack(frames));
                s
            }
            80..=84 => {
                let h = self.hex(64);
                format!(
                    "failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"{h}\": plugin type=\"calico\" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized"
                )
            }
            85..=97 => self.pick(FIXED).to_string(),
            _ => {
                // A large goroutine dump.
                let mut s = String::from("panic: test timed out after 2h0m0s\n\n");
                let goroutines = 10 + self.below(40) as usize;
                for g in 0..goroutines {
                    s.push_str(&format!("goroutine {} [chan receive, {} minutes]:\n", g * 7 + 1, self.below(120)));
                    let frames = 2 + self.below(6) as usize;
                    s.push_str(&self.stack(frames));
                    s.push('\n');
                }
                s
            }
        };
        if self.recent.len() < 4096 {
            self.recent.push(text.clone());
        } else {
            let i = self.below(4096) as usize;
            self.recent[i] = text.clone();
        }
        text
    }
}
