//! Text building blocks: a byte buffer that counts lines the way the truth
//! file reports them, XML/JSON escaping, and `{placeholder}` templates whose
//! values (node names, pod suffixes, IPs, durations, line numbers...) vary
//! per build so that clustering has real work to do.
//!
//! Line convention (used everywhere in `truth.json`): lines are numbered from
//! 1, and a line ends at `\r\n`, at a lone `\r`, or at `\n` (the convention of
//! Java's `BufferedReader.readLine`, also used by CiDiff's ground truth).

use crate::rng::Rng;
use citriage_model::time;

/// Growable text with a running count of line ends.
#[derive(Default)]
pub struct Text {
    pub buf: Vec<u8>,
    ended: u32,
    pending_cr: bool,
}

impl Text {
    pub fn with_capacity(n: usize) -> Self {
        Text { buf: Vec::with_capacity(n), ended: 0, pending_cr: false }
    }

    /// 1-based number of the line the next byte will belong to.
    pub fn next_line(&self) -> u32 {
        self.ended + 1
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Appends raw text, counting line ends.
    pub fn push(&mut self, s: &str) {
        for &b in s.as_bytes() {
            match b {
                b'\r' => {
                    self.ended += 1;
                    self.pending_cr = true;
                }
                b'\n' => {
                    if self.pending_cr {
                        self.pending_cr = false;
                    } else {
                        self.ended += 1;
                    }
                }
                _ => self.pending_cr = false,
            }
        }
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// Appends `s` and a `\n`; returns the line number `s` starts on.
    pub fn line(&mut self, s: &str) -> u32 {
        let n = self.next_line();
        self.push(s);
        self.push("\n");
        n
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// Escapes text for an XML attribute value (newlines become `&#xA;`);
/// control characters XML cannot carry are dropped.
pub fn xml_attr(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#xA;"),
            '\t' => out.push_str("&#x9;"),
            '\r' => out.push_str("&#xD;"),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
}

/// Escapes XML element text; control characters other than tab/newline are
/// dropped.
pub fn xml_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
}

/// Removes ANSI SGR escape sequences (`ESC [ ... m`).
#[cfg(test)]
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\u{1b}' && it.peek() == Some(&'[') {
            it.next();
            for d in it.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { T[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}

const POD_BASES: &[&str] = &[
    "coredns",
    "kube-proxy",
    "metrics-server",
    "csi-gce-pd-controller",
    "cilium-operator",
    "calico-kube-controllers",
    "ebs-csi-controller",
    "cluster-autoscaler",
    "konnectivity-agent",
    "netserver",
    "webserver",
    "pod-network-test",
    "sample-webhook-deployment",
    "agnhost-primary",
];
const NS_WORDS: &[&str] = &[
    "provisioning",
    "volume",
    "pods",
    "services",
    "statefulset",
    "kubectl",
    "webhook",
    "gc",
    "resourcequota",
    "network",
    "sched-pred",
    "crd-publish-openapi",
    "dns",
    "job",
];
const MACHINES: &[&str] = &["e2-standard-2", "e2-standard-4", "n2-standard-2", "n1-standard-4", "e2-medium"];
const ZONES: &[&str] = &["us-central1-b", "us-central1-c", "us-east1-b", "us-west1-a", "europe-west4-a"];
const AWS_REGIONS: &[&str] = &["us-east-1", "us-east-2", "us-west-2", "eu-west-1"];
const GATES: &[&str] = &[
    "CPUCFSQuotaPeriod",
    "InPlacePodVerticalScaling",
    "SidecarContainers",
    "DynamicResourceAllocation",
    "PodLevelResources",
    "UserNamespacesSupport",
    "NodeSwap",
    "StorageVersionMigrator",
];
const CAPS: &[&str] = &["MachineAPI", "Build", "DeploymentConfig", "ImageRegistry"];
const VOLS: &[&str] = &["pvc", "vol", "test-volume", "data", "scratch"];

/// Per-build template values: generated on first use, then reused so a
/// placeholder names the same node/pod everywhere within one build.
pub struct Vars {
    rng: Rng,
    memo: Vec<(String, String)>,
    /// Current log time, used by `{klog}`, `{E}`, `{I}`, `{W}`, `{ts}`.
    pub now: i64,
    micros: u32,
}

impl Vars {
    pub fn new(rng: Rng, now: i64) -> Self {
        Vars { rng, memo: Vec::new(), now, micros: 0 }
    }

    /// Presets a value (job-level constants such as a pinned image tag).
    pub fn set(&mut self, name: &str, value: String) {
        if let Some(slot) = self.memo.iter_mut().find(|(k, _)| k == name) {
            slot.1 = value;
        } else {
            self.memo.push((name.to_string(), value));
        }
    }

    /// Forgets generated values (not preset ones are kept as well; callers
    /// use this between independent failures of one build).
    pub fn forget(&mut self, names: &[&str]) {
        self.memo.retain(|(k, _)| !names.contains(&k.as_str()));
    }

    /// A klog header (`E1121 04:15:30.123456    4242`) at the current time.
    pub fn klog_header(&mut self, level: char) -> String {
        self.micros = (self.micros + 1 + self.rng.below(900_000) as u32) % 1_000_000;
        let pid = 1 + self.rng.below(9) * 1000 + self.rng.below(999);
        format!("{level}{} {pid:>8}", time::klog(self.now, self.micros))
    }

    fn generate(&mut self, name: &str) -> Option<String> {
        let r = &mut self.rng;
        let v = match name {
            "node" => match r.below(3) {
                0 => format!("bootstrap-e2e-minion-group-{}", r.alnum(4)),
                1 => format!("ip-10-{}-{}-{}.ec2.internal", r.below(256), r.below(256), r.range(1, 254)),
                _ => format!("kind-worker{}", ["", "2", "3"][r.index(3)]),
            },
            "pod" => format!("{}-{}-{}", r.pick_str(POD_BASES), r.k8s_suffix(9), r.k8s_suffix(5)),
            "suffix" => r.k8s_suffix(5),
            "ip" => format!("10.{}.{}.{}", r.below(256), r.below(256), r.range(1, 254)),
            "port" => r.range(30_000, 32_767).to_string(),
            "hiport" => r.range(33_000, 60_999).to_string(),
            "dur" => format!("{}.{:03}s", r.range(1, 900), r.below(1000)),
            "secs" => r.range(30, 900).to_string(),
            "line" => r.range(40, 1999).to_string(),
            "line2" => r.range(40, 1999).to_string(),
            "n" => r.range(2, 9).to_string(),
            "i" => r.below(8).to_string(),
            "hex8" => r.hex(8),
            "hex12" => r.hex(12),
            "hex17" => r.hex(17),
            "sha7" => r.hex(7),
            "sha40" => r.hex(40),
            "sha64" => r.hex(64),
            "uuid" => r.uuid(),
            "machine" => r.pick_str(MACHINES).to_string(),
            "zone" => r.pick_str(ZONES).to_string(),
            "region" => r.pick_str(AWS_REGIONS).to_string(),
            "ns" => format!("{}-{}", r.pick_str(NS_WORDS), r.range(1000, 9999)),
            "cluster" => format!("capz-{}", r.alnum(6)),
            "gate" => r.pick_str(GATES).to_string(),
            "cap" => r.pick_str(CAPS).to_string(),
            "vol" => format!("{}-{}", r.pick_str(VOLS), r.k8s_suffix(5)),
            "goroutine" => r.range(100, 9999).to_string(),
            "addr" => format!("0xc{}", r.hex(9)),
            "count" => r.range(2, 40).to_string(),
            "tries" => r.range(3, 5).to_string(),
            "pin" => format!("v2021{:02}{:02}-{}", r.range(1, 12), r.range(10, 28), r.hex(10)),
            "kver" => format!("v1.37.0-alpha.0.{}+{}", r.range(100, 999), r.hex(14)),
            "ocpver" => format!("4.22.0-0.nightly-2026-11-{:02}-{:06}", r.range(10, 20), r.below(235_959)),
            "vcpu" => (r.range(2, 12) * 32).to_string(),
            "ts" => time::rfc3339(self.now),
            "area" => r
                .pick_str(&[
                    "kubelet/cm",
                    "scheduler/framework",
                    "controller/job",
                    "proxy/nftables",
                    "volume/csi",
                    "registry/core/service",
                ])
                .to_string(),
            "file" => r.pick_str(&["helpers", "types", "controller", "validation", "util", "handler"]).to_string(),
            "symbol" => format!(
                "{}{}",
                r.pick_str(&["new", "validate", "sync", "compute", "apply", "reconcile"]),
                r.pick_str(&[
                    "PodStatus",
                    "ClaimAllocation",
                    "EndpointHints",
                    "QuotaUsage",
                    "LeaseHolder",
                    "ResizePolicy"
                ])
            ),
            "klog" => {
                let t = self.klog_header('I');
                return Some(t);
            }
            "E" => return Some(self.klog_header('E')),
            "W" => return Some(self.klog_header('W')),
            "I" => return Some(self.klog_header('I')),
            _ => return None,
        };
        Some(v)
    }

    /// Renders a `{name}` template; unknown names are kept literally.
    pub fn render(&mut self, tpl: &str) -> String {
        let mut out = String::with_capacity(tpl.len() + 32);
        let mut rest = tpl;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) if close > 0 && after[..close].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => {
                    let name = &after[..close];
                    let volatile = matches!(name, "klog" | "E" | "W" | "I" | "ts");
                    let val = if volatile {
                        self.generate(name)
                    } else if let Some((_, v)) = self.memo.iter().find(|(k, _)| k == name) {
                        Some(v.clone())
                    } else {
                        let v = self.generate(name);
                        if let Some(v) = &v {
                            self.memo.push((name.to_string(), v.clone()));
                        }
                        v
                    };
                    match val {
                        Some(v) => out.push_str(&v),
                        None => {
                            out.push('{');
                            out.push_str(name);
                            out.push('}');
                        }
                    }
                    rest = &after[close + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_with_cr_convention() {
        let mut t = Text::default();
        assert_eq!(t.line("a"), 1);
        t.push("10%\r50%\r100%\n");
        assert_eq!(t.line("b"), 5);
        t.push("x\r\n");
        assert_eq!(t.line("c"), 7);
    }

    #[test]
    fn renders_and_memoizes() {
        let mut v = Vars::new(Rng::new(1), 0);
        let s = v.render("{node} and {node} {unknown} {");
        let parts: Vec<&str> = s.split(" and ").collect();
        assert_eq!(parts.len(), 2);
        assert!(parts[1].starts_with(parts[0]));
        assert!(s.contains("{unknown}"));
        assert_eq!(base64(b"hello"), "aGVsbG8=");
        assert_eq!(strip_ansi("\u{1b}[1;31mred\u{1b}[0m"), "red");
    }
}
