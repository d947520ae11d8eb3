//! Self-contained clustering properties: go.k8s.io/triage behaviour, determinism under
//! shuffling, no-drop accounting, stable ids.

use citriage_patterns::cluster::{cluster, ClusterConfig, Clustering, FailureRef};
use citriage_patterns::normalize::{normalize, Profile};
use citriage_patterns::similarity::k8s_id_of;
use citriage_patterns::stable::{CurrentCluster, IdOrigin, PreviousCluster, StableIdAssigner};

const PROFILES: [Profile; 2] = [Profile::K8sTriage, Profile::Default];

fn one_test(texts: &[&str], profile: Profile) -> Clustering {
    let fs: Vec<FailureRef> = texts.iter().map(|t| FailureRef { test: "t", text: t, job: "j", build: "1" }).collect();
    cluster(&fs, &ClusterConfig::new(profile))
}

#[test]
fn some_string_id() {
    assert_eq!(k8s_id_of("some string"), "eddb950347d1eb05b5d7");
}

#[test]
fn exit_codes_stay_apart() {
    for p in PROFILES {
        let c = one_test(&["exit 1", "exit 2"], p);
        assert_eq!(c.clusters.len(), 2, "{p:?}");
    }
}

#[test]
fn long_near_duplicates_merge() {
    for p in PROFILES {
        let c = one_test(
            &["long message immediately preceding exit code 1", "long message immediately preceding exit code 2"],
            p,
        );
        assert_eq!(c.clusters.len(), 1, "{p:?}");
        let a = "1 2 ".repeat(400);
        let b = format!("{}3 4 ", "1 2 ".repeat(399));
        let c = one_test(&["exit 1", &a, &b], p);
        assert_eq!(c.clusters.len(), 2, "{p:?}");
        assert_eq!(c.clusters[0].members, vec![1, 2]);
    }
}

#[test]
fn very_long_texts_are_truncated_and_still_cluster() {
    let mk = |seed: u32| {
        let mut s = String::new();
        for i in 0..2000u32 {
            s.push_str(&format!("line {} value {}\n", i % 50, (i * 7 + seed) % 13));
        }
        s
    };
    let (a, b) = (mk(1), mk(2));
    for p in PROFILES {
        assert!(normalize(&a, p).len() <= 10_019 + 8);
        let c = one_test(&[&a, &b], p);
        assert!(c.accounting.is_complete());
    }
}

/// A small deterministic corpus with near-duplicates across tests and jobs.
fn corpus() -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    let mut x: u64 = 12345;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let msgs = [
        "error waiting for pod {P} in namespace e2e-{N} to be running: timed out waiting for the condition",
        "[FAILED] Timed out after {D}s.\nExpected\n    <bool>: false\nto be true\nIn [It] at: test/e2e/apps/deploy.go:{L} @ 12/10/25 13:52:29.244",
        "Get \"https://{IP}:6443/api/v1/namespaces\": dial tcp {IP}:6443: connect: connection refused",
        "panic: runtime error: index out of range [{L}] with length {L}\n\ngoroutine {L} [running]:\nmain.f(0x{H})\n\t/src/main.go:{L} +0x{H}",
        "exit status 1",
        "exit status 2",
        "unexpected error: pods \"{P}\" not found",
    ];
    for i in 0..1500 {
        let m = msgs[(rnd() % msgs.len() as u64) as usize];
        let text = m
            .replace("{P}", &format!("web-{}-{:x}", rnd() % 100, rnd() % 0xfffff))
            .replace("{N}", &format!("{}", rnd() % 9000 + 1000))
            .replace("{D}", &format!("{}.{:03}", rnd() % 600, rnd() % 1000))
            .replace("{L}", &format!("{}", rnd() % 2000))
            .replace("{H}", &format!("{:x}", rnd() % 0xffffffff))
            .replace("{IP}", &format!("10.{}.{}.{}", rnd() % 256, rnd() % 256, rnd() % 256));
        let test = format!("[sig-{}] test {}", ["apps", "node", "network"][i % 3], rnd() % 40);
        let job = format!("ci-job-{}", rnd() % 12);
        let build = format!("{}", 1000 + rnd() % 300);
        out.push((test, text, job, build));
    }
    out
}

/// Clusters rendered without input positions: comparable across input orders.
fn canonical(rows: &[(String, String, String, String)], c: &Clustering) -> Vec<String> {
    c.clusters
        .iter()
        .map(|cl| {
            let mut members: Vec<String> = cl
                .members
                .iter()
                .map(|&m| {
                    let r = &rows[m as usize];
                    format!("{}|{}|{}|{}", r.0, r.1, r.2, r.3)
                })
                .collect();
            members.sort();
            let tests: Vec<String> = cl.tests.iter().map(|t| format!("{}:{}", t.test, t.members.len())).collect();
            format!("{}\n{}\n{}\n{:?}\n{:?}\n{}", cl.key, cl.k8s_id, cl.text, cl.spans, tests, members.join("\n"))
        })
        .collect()
}

fn run(rows: &[(String, String, String, String)], p: Profile) -> Clustering {
    let fs: Vec<FailureRef> =
        rows.iter().map(|(t, x, j, b)| FailureRef { test: t, text: x, job: j, build: b }).collect();
    cluster(&fs, &ClusterConfig::new(p))
}

#[test]
fn shuffled_input_gives_identical_output() {
    let rows = corpus();
    for p in PROFILES {
        let base = run(&rows, p);
        let want = canonical(&rows, &base);
        let mut shuffled = rows.clone();
        let mut x: u64 = 99;
        for i in (1..shuffled.len()).rev() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let j = (x >> 33) as usize % (i + 1);
            shuffled.swap(i, j);
        }
        let got = run(&shuffled, p);
        assert_eq!(canonical(&shuffled, &got), want, "{p:?}");
        shuffled.reverse();
        let got = run(&shuffled, p);
        assert_eq!(canonical(&shuffled, &got), want, "{p:?}");
        assert_eq!(got.accounting.clusters, base.accounting.clusters);
    }
}

#[test]
fn every_failure_is_in_exactly_one_cluster() {
    let rows = corpus();
    for p in PROFILES {
        let c = run(&rows, p);
        let a = &c.accounting;
        assert!(a.is_complete(), "{a:?}");
        assert_eq!(a.input, rows.len());
        let mut seen = vec![0u32; rows.len()];
        for (ci, cl) in c.clusters.iter().enumerate() {
            let per_test: usize = cl.tests.iter().map(|t| t.members.len()).sum();
            assert_eq!(per_test, cl.members.len());
            for &m in &cl.members {
                seen[m as usize] += 1;
                assert_eq!(c.assignment[m as usize], ci as u32);
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
        // the default profile merges at least as much as the reference normalization here
        assert!(a.clusters >= 5);
    }
    let k = run(&rows, Profile::K8sTriage).accounting.clusters;
    let d = run(&rows, Profile::Default).accounting.clusters;
    assert!(d <= k, "default {d} vs k8s {k}");
}

#[test]
fn empty_input_is_fine() {
    for p in PROFILES {
        let c = cluster(&[], &ClusterConfig::new(p));
        assert!(c.clusters.is_empty());
        assert!(c.accounting.is_complete());
    }
}

#[test]
fn stable_ids_carry_over_between_days() {
    let rows = corpus();
    let day1 = run(&rows, Profile::Default);
    let prev: Vec<PreviousCluster> = day1
        .clusters
        .iter()
        .map(|c| PreviousCluster { stable_id: StableIdAssigner::new_id(&c.key), key: c.key.clone() })
        .collect();
    // day 2: the same failures plus one drifted key
    let day2 = run(&rows[..1200], Profile::Default);
    let cur: Vec<CurrentCluster> =
        day2.clusters.iter().map(|c| CurrentCluster { key: &c.key, size: c.members.len() }).collect();
    let ids = StableIdAssigner::new(prev.clone()).assign(&cur);
    assert_eq!(ids.len(), cur.len());
    let known: std::collections::HashSet<&str> = prev.iter().map(|p| p.stable_id.as_str()).collect();
    for (c, a) in cur.iter().zip(&ids) {
        if a.origin == IdOrigin::Exact {
            assert_eq!(a.stable_id, StableIdAssigner::new_id(c.key));
        }
        if a.origin != IdOrigin::New {
            assert!(known.contains(a.stable_id.as_str()));
        }
    }
    // ids are unique
    let mut all: Vec<&str> = ids.iter().map(|a| a.stable_id.as_str()).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), ids.len());
}

/// A pattern whose messages differ only in ids (UUIDs, content hashes, commit ids, IPs,
/// pod suffixes, durations) is one cluster in both profiles, whatever test it hit.
#[test]
fn id_variants_form_one_cluster_in_both_profiles() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let hex = |r: &mut dyn FnMut() -> u64, n: usize| -> String {
        (0..n).map(|_| b"0123456789abcdef"[(r() % 16) as usize] as char).collect()
    };
    let k8s = |r: &mut dyn FnMut() -> u64, n: usize| -> String {
        (0..n).map(|_| b"bcdfghjklmnpqrstvwxz2456789"[(r() % 27) as usize] as char).collect()
    };
    let mut texts = Vec::new();
    for _ in 0..60 {
        let uuid = format!(
            "{}-{}-4{}-a{}-{}",
            hex(&mut rnd, 8),
            hex(&mut rnd, 4),
            hex(&mut rnd, 3),
            hex(&mut rnd, 3),
            hex(&mut rnd, 12)
        );
        texts.push(format!(
            "error attaching disk pvc-{uuid} to node gke-e2e-default-pool-{}-{}: image registry.k8s.io/pause@sha256:{} at commit {} from {}.{}.{}.{}:6443 failed for pod webserver-{}-{} after {}.{:03}s",
            hex(&mut rnd, 8),
            k8s(&mut rnd, 4),
            hex(&mut rnd, 64),
            hex(&mut rnd, 40),
            10,
            rnd() % 256,
            rnd() % 256,
            1 + rnd() % 254,
            hex(&mut rnd, 9),
            k8s(&mut rnd, 5),
            1 + rnd() % 600,
            rnd() % 1000
        ));
    }
    let tests = ["[sig-storage] a", "[sig-storage] b", "[sig-apps] c"];
    let fs: Vec<FailureRef> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| FailureRef { test: tests[i % 3], text: t, job: "j", build: "1" })
        .collect();
    for p in PROFILES {
        let c = cluster(&fs, &ClusterConfig::new(p));
        assert!(c.accounting.is_complete());
        assert_eq!(c.clusters.len(), 1, "{p:?}: {:?}", c.clusters.iter().map(|c| &c.key).collect::<Vec<_>>());
    }
    // and a different failure mode next to it stays apart
    let other = "error attaching disk: quota exceeded in region us-central1 for the project, request denied by policy";
    let mut fs2 = fs.clone();
    fs2.push(FailureRef { test: "[sig-storage] a", text: other, job: "j", build: "2" });
    for p in PROFILES {
        assert_eq!(cluster(&fs2, &ClusterConfig::new(p)).clusters.len(), 2, "{p:?}");
    }
}

/// The corpus plus near misses of one long message spread over many tests: the global fold
/// meets keys that match a query, keys that just miss, and keys created inside its batches.
fn near_miss_corpus() -> Vec<(String, String, String, String)> {
    let mut rows = corpus();
    let mut x: u64 = 777;
    let mut rnd = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let base: Vec<u8> = (0..400u64).map(|i| b"abcdefgh ijklmnop"[((i * 7 + i / 11) % 17) as usize]).collect();
    for i in 0..500 {
        let mut t = base.clone();
        for _ in 0..rnd(80) {
            let at = rnd(t.len() as u64) as usize;
            t[at] = b"QRSTUVWXYZ"[rnd(10) as usize];
        }
        let text = String::from_utf8(t).unwrap_or_default();
        rows.push((format!("near test {}", rnd(100)), text, format!("ci-job-{}", i % 7), format!("{}", rnd(50))));
    }
    rows
}

#[test]
fn thread_count_does_not_change_the_clustering() {
    let rows = near_miss_corpus();
    for p in PROFILES {
        let runs: Vec<Clustering> = [1, 2, 4]
            .iter()
            .map(|&threads| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool");
                pool.install(|| run(&rows, p))
            })
            .collect();
        assert!(runs[0].accounting.is_complete());
        assert!(
            runs[0].accounting.global_exact_checks > 1000 && runs[0].clusters.len() > 20,
            "{p:?}: the global fold has work to do ({} global exact checks, {} clusters)",
            runs[0].accounting.global_exact_checks,
            runs[0].clusters.len()
        );
        for (r, threads) in runs[1..].iter().zip([2, 4]) {
            assert_eq!(r.clusters, runs[0].clusters, "{p:?}, {threads} threads");
            assert_eq!(r.assignment, runs[0].assignment, "{p:?}, {threads} threads");
        }
    }
}
