//! Build-log rendering: the test container's `build-log.txt` with realistic
//! noise (timestamps, klog prefixes, ANSI colour, `\r` progress bars, Go and
//! Ginkgo output, stack traces, benign error lines) around the planted
//! failure lines, whose line numbers are recorded for `truth.json`.

use crate::catalog::SuiteKind;
use crate::rng::Rng;
use crate::text::{Text, Vars};
use citriage_model::time;

/// One failure cause as it appears in the log.
pub struct LogCause {
    /// Lines printed where the failure happens; each contains the signature.
    pub errors: Vec<String>,
    /// Lines printed right after them.
    pub context: Vec<String>,
    /// Printed during set-up (the run then stops) rather than among tests.
    pub setup: bool,
}

/// A failed test attempt as it appears in the test output.
pub struct LogTestFailure {
    pub cause: usize,
    pub name: String,
    /// Failure message (first line contains the cause's signature).
    pub message: String,
    /// Whether a later attempt of the same test passed in this run.
    pub retried_ok: bool,
}

/// Line numbers recorded per cause.
#[derive(Default, Clone, Debug)]
pub struct LogEvidence {
    pub errors: Vec<u32>,
    pub context: Vec<u32>,
}

/// Inputs of one build log.
pub struct LogSpec<'a> {
    pub suite: SuiteKind,
    pub job: &'a str,
    pub build_id: &'a str,
    pub start: i64,
    pub end: i64,
    pub target_lines: usize,
    pub passed: bool,
    pub aborted: bool,
    pub tests_run: usize,
    pub tests_skipped: usize,
    /// Names of some passing tests, for the progress output.
    pub passing: Vec<&'a str>,
    pub causes: &'a [LogCause],
    pub failures: &'a [LogTestFailure],
}

const RED: &str = "\u{1b}[38;5;9m";
const GREEN: &str = "\u{1b}[38;5;10m";
const BOLD: &str = "\u{1b}[1m";
const RESET: &str = "\u{1b}[0m";
const GREY: &str = "\u{1b}[38;5;243m";

struct Clock {
    now: i64,
    end: i64,
    step: i64,
}

impl Clock {
    fn tick(&mut self, r: &mut Rng) -> i64 {
        let jump = 1 + r.below((self.step.max(1) * 2) as u64) as i64;
        if self.now + jump < self.end {
            self.now += jump;
        }
        self.now
    }
}

const GO_MODULES: &[&str] = &[
    "github.com/onsi/ginkgo/v2 v2.27.2",
    "github.com/onsi/gomega v1.38.2",
    "k8s.io/klog/v2 v2.130.1",
    "sigs.k8s.io/kubetest2 v0.0.0-20251103183001-3a4bd8f2a1c8",
    "golang.org/x/net v0.47.0",
    "google.golang.org/grpc v1.76.0",
    "sigs.k8s.io/yaml v1.6.0",
    "github.com/spf13/cobra v1.10.1",
];
const INFO_MSGS: &[&str] = &[
    "Waiting for all nodes to be schedulable",
    "Found 3 ready nodes in the cluster",
    "Starting informer for *v1.Pod",
    "Caches populated for *v1.Node from k8s.io/client-go/informers/factory.go:160",
    "Creating namespace for test",
    "Waiting up to 5m0s for pod to be running",
    "Pod reached phase Running after 4.1s",
    "Deleting namespace and waiting for finalizers",
    "Skipping test because provider does not support it",
    "Using default storage class",
    "Validating cluster: 3 nodes ready",
    "Observed leader election lease renewal",
    "Dumping kubelet logs for node",
    "Reading kubeconfig from /root/.kube/config",
];
const RED_HERRINGS: &[&str] = &[
    "reflector.go:{line}] \"Unhandled Error\" err=\"k8s.io/client-go/informers/factory.go:160: Failed to watch *v1.Node: the server could not find the requested resource\"",
    "leaderelection.go:{line}] error retrieving resource lock kube-system/kube-scheduler: Get \"https://{ip}:6443/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler\": context deadline exceeded",
    "event.go:{line}] \"Server rejected event (will not retry!)\" err=\"namespaces \\\"{ns}\\\" not found\"",
    "metrics_grabber.go:{line}] Can't find kube-scheduler pod. Grabbing metrics from kube-scheduler is disabled.",
    "log_dump.go:{line}] failed to scp /var/log/cloud-init-output.log from {node}: exit status 1",
];

fn noise_line(r: &mut Rng, v: &mut Vars, suite: SuiteKind, out: &mut String) {
    out.clear();
    match r.below(10) {
        0..=3 => {
            let h = v.klog_header('I');
            let file = r.pick_str(&["util.go", "framework.go", "wait.go", "pods.go", "nodes.go", "up.go"]);
            out.push_str(&format!("{h} {file}:{}] {}", r.range(40, 900), r.pick_str(INFO_MSGS)));
        }
        4 => {
            let msg = r.pick_str(RED_HERRINGS);
            let h = v.klog_header('E');
            out.push_str(&h);
            out.push(' ');
            out.push_str(&v.render(msg));
            v.forget(&["line", "ip", "ns", "node"]);
        }
        5 => {
            out.push_str(&format!(
                "{} {GREY}STEP:{RESET} {} @ {}",
                GREY,
                r.pick_str(&[
                    "Creating a kubernetes client",
                    "Building a namespace api object",
                    "Waiting for a default service account to be provisioned in namespace",
                    "Destroying namespace",
                    "Collecting events from namespace",
                    "Dumping a list of prepulled images on each node",
                ]),
                time::ginkgo(v.now, r.below(1000) as u32)
            ));
        }
        6 => match suite {
            SuiteKind::GoUnit | SuiteKind::GoIntegration | SuiteKind::Minikube => {
                out.push_str(&format!("=== RUN   Test{}", r.alnum(6)));
            }
            _ => {
                out.push_str(&format!(
                    "{} [{}] {} {}",
                    time::golog(v.now),
                    r.pick_str(&["INFO", "INFO", "WARN"]),
                    r.pick_str(&[
                        "Retrying after transient error",
                        "Polling resource status",
                        "Listing cloud resources",
                        "Collecting artifacts"
                    ]),
                    r.hex(8)
                ));
            }
        },
        7 => {
            out.push_str(&format!(
                "  {}/{}/{}.go:{} +0x{:x}",
                r.pick_str(&["k8s.io/kubernetes/test/e2e", "k8s.io/client-go/tools", "k8s.io/apimachinery/pkg/util"]),
                r.pick_str(&["framework", "cache", "wait"]),
                r.pick_str(&["util", "reflector", "poll", "loop"]),
                r.range(40, 900),
                r.range(16, 900)
            ));
        }
        8 => {
            out.push_str(&format!(
                "{} I{} {}] {}",
                time::rfc3339(v.now),
                r.range(1000, 9999),
                r.pick_str(&["ssh.go:84", "ssh.go:112", "dump.go:219"]),
                r.pick_str(&["Running command on node", "Copying logs from node", "Node reported ready"])
            ));
        }
        _ => {
            out.push_str(&format!("{GREEN}•{RESET}{}", r.pick_str(&["", "", " [0.412 seconds]", " [12.030 seconds]"])));
        }
    }
}

fn preamble(t: &mut Text, s: &LogSpec, r: &mut Rng) {
    if s.suite == SuiteKind::OpenShift {
        t.line(&format!("INFO[{}] ci-operator version v20261119-{}", time::rfc3339(s.start), r.hex(9)));
        t.line(&format!(
            "INFO[{}] Loading configuration from https://config.ci.openshift.org for openshift/release@main [ci-4.22]",
            time::rfc3339(s.start)
        ));
        t.line(&format!(
            "INFO[{}] Resolved source https://github.com/openshift/release to main@{}",
            time::rfc3339(s.start + 1),
            r.hex(8)
        ));
        t.line(&format!(
            "INFO[{}] Using namespace https://console.build05.ci.openshift.org/k8s/cluster/projects/ci-op-{}",
            time::rfc3339(s.start + 2),
            r.alnum(8)
        ));
        t.line(&format!("INFO[{}] Running multi-stage test {}", time::rfc3339(s.start + 3), s.job));
        return;
    }
    t.line("+ WRAPPED_COMMAND_PID=178");
    t.line("+ wait 178");
    t.line(&format!("+ runner.sh {}", runner_cmd(s.suite)));
    t.line("Docker in Docker enabled, initializing...");
    t.line("================================================================================");
    t.line("Starting Docker: docker.");
    t.line("Waiting for docker to be ready, sleeping for 1 seconds.");
    t.line("================================================================================");
    t.line("Done setting up docker in docker.");
    t.line(&format!("{} Job {} build {} starting", time::golog(s.start), s.job, s.build_id));
    let _ = r;
}

fn runner_cmd(suite: SuiteKind) -> &'static str {
    match suite {
        SuiteKind::GoUnit => "make test KUBE_TIMEOUT=-timeout=60m",
        SuiteKind::GoIntegration => "make test-integration",
        SuiteKind::Kubetest => "kubetest --up --test --down --provider=gce --dump=$(ARTIFACTS)",
        SuiteKind::Kops => "kubetest2 kops -v 2 --up --down --build --test=kops",
        SuiteKind::Capi => "./scripts/ci-e2e.sh",
        SuiteKind::Minikube => "./hack/jenkins/minikube_linux_integration_tests.sh",
        SuiteKind::ImageBuild => "./hack/cloudbuild.sh --project k8s-staging-images",
        SuiteKind::Ginkgo => "./e2e-k8s.sh",
        SuiteKind::OpenShift => "ci-operator --target=e2e",
    }
}

fn progress_bar(t: &mut Text, r: &mut Rng, what: &str) {
    // One physical line made of lone-`\r` updates: many lines by convention.
    let mut s = String::new();
    let steps = r.range(3, 8);
    for i in 1..=steps {
        let pct = i * 100 / steps;
        let bar = "#".repeat((pct / 5) as usize);
        s.push_str(&format!("{what} {pct:>3}% [{bar:<20}]"));
        if i < steps {
            s.push('\r');
        }
    }
    t.line(&s);
}

fn setup_section(t: &mut Text, s: &LogSpec, r: &mut Rng, v: &mut Vars, clock: &mut Clock, budget: usize) {
    let start_lines = t.next_line();
    match s.suite {
        SuiteKind::GoUnit | SuiteKind::GoIntegration | SuiteKind::Minikube => {
            t.line(&format!("+++ [{}] Building go targets for linux/amd64", &time::klog(clock.tick(r), 0)[..11]));
        }
        SuiteKind::ImageBuild => {
            t.line(&format!(
                "Creating temporary archive of {} file(s) totalling {} KiB before compression.",
                r.range(200, 4000),
                r.range(500, 9000)
            ));
            t.line(&format!(
                "Uploading tarball of [.] to [gs://k8s-staging-images_cloudbuild/source/{}.{}.tgz]",
                clock.now,
                r.hex(8)
            ));
            t.line(&format!("Created [https://cloudbuild.googleapis.com/v1/projects/k8s-staging-images/locations/global/builds/{}].", r.uuid()));
        }
        SuiteKind::OpenShift => {
            t.line(&format!("INFO[{}] ci-operator version v20261120-{}", time::rfc3339(clock.tick(r)), r.hex(9)));
        }
        _ => {
            t.line(&format!("{} process.go:153: Running: ./hack/e2e-internal/e2e-up.sh", time::golog(clock.tick(r))));
        }
    }
    for m in GO_MODULES.iter().take(r.range(2, GO_MODULES.len() as u64) as usize) {
        t.line(&format!("go: downloading {m}"));
    }
    progress_bar(t, r, "Downloading kind v0.30.0");
    let mut line = String::new();
    while ((t.next_line() - start_lines) as usize) < budget {
        clock.tick(r);
        v.now = clock.now;
        if r.below(40) == 0 {
            progress_bar(t, r, "Pulling image layers");
            continue;
        }
        match s.suite {
            SuiteKind::ImageBuild => {
                line = format!(
                    "Step #{}: #{} [{}/{}] RUN {}",
                    r.range(0, 3),
                    r.range(2, 30),
                    r.range(1, 9),
                    r.range(9, 12),
                    r.pick_str(&[
                        "apt-get update && apt-get install -y ca-certificates",
                        "go build -trimpath ./cmd/...",
                        "make -j4 all",
                        "cp -r bin /usr/local/bin"
                    ])
                );
            }
            _ => noise_line(r, v, s.suite, &mut line),
        }
        t.line(&line);
    }
}

/// Re-stamps a klog header (`E1121 04:15:30.123456`) with the log's
/// current time, so planted lines fit the surrounding timeline.
fn restamp(line: &str, now: i64, micros: u32) -> String {
    let b = line.as_bytes();
    let is_klog = b.len() > 21
        && matches!(b[0], b'I' | b'W' | b'E' | b'F')
        && b[1..5].iter().all(u8::is_ascii_digit)
        && b[5] == b' '
        && b[8] == b':'
        && b[11] == b':'
        && b[14] == b'.'
        && b[15..21].iter().all(u8::is_ascii_digit);
    if is_klog && line.is_char_boundary(21) {
        format!("{}{}{}", &line[..1], time::klog(now, micros), &line[21..])
    } else {
        line.to_string()
    }
}

fn write_cause(t: &mut Text, c: &LogCause, ev: &mut LogEvidence, now: i64) {
    // Sub-second digits derived from the time and the line, not constants.
    let micros = |i: usize, e: &str| {
        ((now.rem_euclid(1_000_003) as u64 * 7_919 + i as u64 * 104_729 + e.len() as u64 * 97) % 1_000_000) as u32
    };
    for (i, e) in c.errors.iter().enumerate() {
        ev.errors.push(t.line(&restamp(e, now, micros(i, e))));
    }
    for (i, e) in c.context.iter().enumerate() {
        ev.context.push(t.line(&restamp(e, now, micros(i + 7, e))));
    }
}

fn go_fail_block(t: &mut Text, f: &LogTestFailure, ev: &mut LogEvidence, r: &mut Rng) {
    t.line(&format!("=== RUN   {}", f.name));
    let mut first = true;
    for l in f.message.lines() {
        let n = t.line(&format!("    {l}"));
        if first {
            ev.errors.push(n);
            first = false;
        } else {
            ev.context.push(n);
        }
    }
    ev.context.push(t.line(&format!("--- FAIL: {} ({}.{:02}s)", f.name, r.range(0, 120), r.below(100))));
    if f.retried_ok {
        t.line(&format!("=== RUN   {}", f.name));
        t.line(&format!("--- PASS: {} ({}.{:02}s)", f.name, r.range(0, 60), r.below(100)));
    }
}

fn ginkgo_fail_block(t: &mut Text, f: &LogTestFailure, ev: &mut LogEvidence, r: &mut Rng, now: i64) {
    t.line("------------------------------");
    ev.context.push(t.line(&format!(
        "{RED}{BOLD}• [FAILED] [{}.{:03} seconds]{RESET}",
        r.range(5, 900),
        r.below(1000)
    )));
    t.line(&f.name.replacen("[It] ", "", 1));
    t.line(&format!(
        "{GREY}test/e2e/{}.go:{}{RESET}",
        r.pick_str(&[
            "storage/testsuites/provisioning",
            "network/service",
            "apps/deployment",
            "node/pods",
            "apimachinery/garbage_collector"
        ]),
        r.range(40, 1500)
    ));
    t.line("");
    let mut first = true;
    for l in f.message.lines() {
        let n = if first { t.line(&format!("  {RED}[FAILED] {l}{RESET}")) } else { t.line(&format!("  {l}")) };
        if first {
            ev.errors.push(n);
            first = false;
        } else {
            ev.context.push(n);
        }
    }
    t.line(&format!(
        "  {RED}In {BOLD}[It]{RESET}{RED} at: test/e2e/framework/util.go:{} @ {}{RESET}",
        r.range(100, 900),
        time::ginkgo(now, r.below(1000) as u32)
    ));
    t.line("");
    t.line("  Full Stack Trace");
    for _ in 0..r.range(3, 7) {
        t.line(&format!(
            "    k8s.io/kubernetes/test/e2e/{}.{}({{0x{}}})",
            r.pick_str(&["framework", "storage/utils", "network/common"]),
            r.pick_str(&["WaitForPodRunning", "ExpectNoError", "pollImmediate"]),
            r.hex(10)
        ));
        t.line(&format!(
            "    \t/home/prow/go/src/k8s.io/kubernetes/test/e2e/framework/util.go:{} +0x{:x}",
            r.range(40, 900),
            r.range(16, 600)
        ));
    }
    t.line("------------------------------");
    if f.retried_ok {
        t.line(&format!(
            "{GREEN}• [FLAKEY TEST - TOOK 2 ATTEMPTS TO PASS] [{}.{:03} seconds]{RESET}",
            r.range(5, 300),
            r.below(1000)
        ));
        t.line(&f.name.replacen("[It] ", "", 1));
    }
}

/// Renders a build log; returns the text and per-cause evidence lines.
pub fn render(s: &LogSpec, r: &mut Rng, v: &mut Vars) -> (Text, Vec<LogEvidence>) {
    let mut t = Text::with_capacity(s.target_lines * 90 + 2048);
    let mut ev = vec![LogEvidence::default(); s.causes.len()];
    let step = ((s.end - s.start) / (s.target_lines.max(10) as i64)).max(1);
    let mut clock = Clock { now: s.start, end: s.end.max(s.start + 1), step };
    v.now = s.start;
    preamble(&mut t, s, r);
    let setup_budget = s.target_lines / 4;
    let test_budget = s.target_lines / 2;
    let teardown_budget = s.target_lines - setup_budget - test_budget;
    setup_section(&mut t, s, r, v, &mut clock, setup_budget);

    let setup_cause = s.causes.iter().position(|c| c.setup);
    let mut printed_all = vec![false; s.causes.len()];
    if let Some(ci) = setup_cause {
        v.now = clock.tick(r);
        write_cause(&mut t, &s.causes[ci], &mut ev[ci], v.now);
        // A little more noise after the error, then the harness gives up.
        let mut line = String::new();
        for _ in 0..r.range(3, 12) {
            clock.tick(r);
            v.now = clock.now;
            noise_line(r, v, s.suite, &mut line);
            t.line(&line);
        }
        match s.suite {
            SuiteKind::Kubetest | SuiteKind::Kops => {
                t.line(&format!("{} main.go:331: Something went wrong: starting e2e cluster: error during ./hack/e2e-internal/e2e-up.sh: exit status 1", time::golog(clock.tick(r))));
            }
            SuiteKind::OpenShift => {
                t.line(&format!(
                    "INFO[{}] Step e2e-ipi-install-install failed after {}.",
                    time::rfc3339(clock.tick(r)),
                    time::go_duration(clock.now - s.start)
                ));
            }
            _ => {
                t.line(&format!(
                    "{} make: *** [Makefile:{}: test] Error 1",
                    time::golog(clock.tick(r)),
                    r.range(80, 400)
                ));
            }
        }
    } else if !s.aborted {
        printed_all = test_section(&mut t, s, r, v, &mut clock, test_budget, &mut ev);
    } else {
        let mut line = String::new();
        for _ in 0..test_budget / 2 {
            clock.tick(r);
            v.now = clock.now;
            noise_line(r, v, s.suite, &mut line);
            t.line(&line);
        }
    }
    // Causes not tied to a test (timeouts, abort) print near the end.
    for (ci, c) in s.causes.iter().enumerate() {
        if !c.setup && !printed_all.get(ci).copied().unwrap_or(false) && !c.errors.is_empty() {
            v.now = clock.tick(r);
            write_cause(&mut t, c, &mut ev[ci], v.now);
        }
    }
    // Teardown: log dumps, red herrings, uploads.
    if !s.aborted {
        let mut line = String::new();
        t.line(&format!("{} Dumping logs locally to: {}", time::golog(clock.tick(r)), "/logs/artifacts"));
        let start = t.next_line();
        while ((t.next_line() - start) as usize) < teardown_budget {
            clock.tick(r);
            v.now = clock.now;
            noise_line(r, v, s.suite, &mut line);
            t.line(&line);
        }
    }
    let exit = if s.passed { 0 } else { 1 };
    t.line(&format!("+ EXIT_VALUE={exit}"));
    t.line("+ set +o xtrace");
    t.line("Cleaning up after docker in docker.");
    t.line("================================================================================");
    t.line("Done cleaning up after docker in docker.");
    (t, ev)
}

fn test_section(
    t: &mut Text,
    s: &LogSpec,
    r: &mut Rng,
    v: &mut Vars,
    clock: &mut Clock,
    budget: usize,
    ev: &mut [LogEvidence],
) -> Vec<bool> {
    let ginkgo_like = matches!(
        s.suite,
        SuiteKind::Ginkgo | SuiteKind::Kubetest | SuiteKind::Kops | SuiteKind::Capi | SuiteKind::OpenShift
    );
    let start = t.next_line();
    if ginkgo_like {
        t.line(&format!(
            "{BOLD}Running Suite: Kubernetes e2e suite - /home/prow/go/src/k8s.io/kubernetes/_output/bin{RESET}"
        ));
        t.line("===================================================================================================");
        t.line(&format!("Random Seed: {BOLD}{}{RESET} - will randomize all specs", 1_760_000_000 + r.below(9_999_999)));
        t.line("");
        t.line(&format!(
            "Will run {BOLD}{}{RESET} of {BOLD}{}{RESET} specs",
            s.tests_run,
            s.tests_run + s.tests_skipped
        ));
    } else if s.suite != SuiteKind::ImageBuild {
        t.line(&format!(
            "+++ [{}] Running tests without code coverage and with -race",
            &time::klog(clock.tick(r), 0)[..11]
        ));
    }
    // Interleave failures with noise, so the failure is buried mid-log.
    let n_fail = s.failures.len();
    let mut positions: Vec<usize> = (0..n_fail).map(|_| r.below(budget.max(1) as u64) as usize).collect();
    positions.sort_unstable();
    let mut fi = 0;
    let mut line = String::new();
    let mut pass_i = 0usize;
    let mut printed = vec![false; s.causes.len()];
    let mut done = 0usize;
    while done < budget || fi < n_fail {
        while fi < n_fail && positions[fi] <= done {
            let f = &s.failures[fi];
            v.now = clock.tick(r);
            if let Some(c) = s.causes.get(f.cause) {
                if !printed[f.cause] && !c.setup {
                    printed[f.cause] = true;
                    write_cause(t, c, &mut ev[f.cause], v.now);
                }
            }
            if ginkgo_like {
                ginkgo_fail_block(t, f, &mut ev[f.cause], r, v.now);
            } else {
                go_fail_block(t, f, &mut ev[f.cause], r);
            }
            fi += 1;
        }
        if done >= budget {
            continue;
        }
        clock.tick(r);
        v.now = clock.now;
        if !s.passing.is_empty() && r.below(6) == 0 {
            let name = s.passing[pass_i % s.passing.len()];
            pass_i += 1;
            if ginkgo_like {
                t.line(&format!(
                    "{GREEN}•{RESET} [{}.{:03} seconds] {}",
                    r.range(0, 120),
                    r.below(1000),
                    name.replacen("[It] ", "", 1)
                ));
            } else {
                t.line(&format!("--- PASS: {name} ({}.{:02}s)", r.range(0, 30), r.below(100)));
            }
        } else {
            noise_line(r, v, s.suite, &mut line);
            t.line(&line);
        }
        done = (t.next_line() - start) as usize;
    }
    if ginkgo_like && s.suite != SuiteKind::OpenShift {
        if n_fail > 0 {
            t.line(&format!("{BOLD}{RED}Summarizing {n_fail} Failure{}:{RESET}", if n_fail == 1 { "" } else { "s" }));
            for f in s.failures {
                t.line(&format!("  {RED}[FAILED]{RESET} {}", f.name.replacen("[It] ", "", 1)));
            }
        }
        let failed = s.failures.iter().filter(|f| !f.retried_ok).count();
        t.line(&format!(
            "Ran {} of {} Specs in {}.{:03} seconds",
            s.tests_run,
            s.tests_run + s.tests_skipped,
            (clock.now - s.start).max(1),
            r.below(1000)
        ));
        if failed > 0 {
            t.line(&format!(
                "{BOLD}{RED}FAIL!{RESET} -- {} Passed | {failed} Failed | 0 Pending | {} Skipped",
                s.tests_run.saturating_sub(failed),
                s.tests_skipped
            ));
        } else {
            t.line(&format!(
                "{BOLD}{GREEN}SUCCESS!{RESET} -- {} Passed | 0 Failed | 0 Pending | {} Skipped",
                s.tests_run, s.tests_skipped
            ));
        }
    } else if matches!(s.suite, SuiteKind::GoUnit | SuiteKind::GoIntegration | SuiteKind::Minikube) {
        if s.failures.iter().any(|f| !f.retried_ok) {
            t.line("FAIL");
            t.line(&format!(
                "FAIL\tk8s.io/kubernetes/{}\t{}.{:03}s",
                r.pick_str(&["pkg/kubelet", "test/integration/scheduler", "pkg/controller"]),
                r.range(5, 900),
                r.below(1000)
            ));
        } else {
            t.line(&format!("ok  \tk8s.io/kubernetes/pkg/kubelet\t{}.{:03}s", r.range(5, 300), r.below(1000)));
        }
    }
    printed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restamps_klog_headers_only() {
        let l = "E0101 00:00:00.000000    42 x.go:1] boom";
        let r = restamp(l, 86_400 * 3 + 3_600, 5);
        assert!(r.starts_with("E0104 01:00:00.000005"), "{r}");
        assert!(r.ends_with("    42 x.go:1] boom"));
        assert_eq!(restamp("plain line", 0, 0), "plain line");
    }
}
