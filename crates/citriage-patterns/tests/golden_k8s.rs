//! go.k8s.io/triage behaviour checked against the golden cases transcribed from
//! kubernetes/test-infra (read at test time from the shared reference directory next to the
//! checkout; skipped with a message when it is absent).

use std::collections::BTreeMap;
use std::path::PathBuf;

use citriage_patterns::cluster::{cluster, ClusterConfig, FailureRef};
use citriage_patterns::normalize::{normalize, Profile};
use citriage_patterns::similarity::{common_spans, edit_distance, k8s_id_of, lower_bound, ngram_histogram};
use serde_json::Value;

fn triage_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/k8s/test-infra/triage");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("skipping: shared golden data not found at {}", d.display());
        None
    }
}

fn load(name: &str) -> Option<Value> {
    let d = triage_dir()?;
    let text = std::fs::read_to_string(d.join(name)).ok()?;
    serde_json::from_str(&text).ok()
}

fn s(v: &Value) -> &str {
    v.as_str().expect("string")
}

#[test]
fn golden_normalize_cases() {
    let Some(g) = load("golden_normalize.json") else {
        return;
    };
    let mut n = 0;
    for case in g["cases"].as_array().expect("cases") {
        let got = normalize(s(&case["input"]), Profile::K8sTriage);
        assert_eq!(got, s(&case["expected"]), "{}", s(&case["test"]));
        n += 1;
    }
    assert!(n >= 12);
    // generated: 'foobarbaz ' * 500000
    let input = "foobarbaz ".repeat(500_000);
    let want = format!("{}\n...[truncated]...\n{}", &input[..5000], &input[..5000]);
    assert_eq!(normalize(&input, Profile::K8sTriage), want);
}

#[test]
fn golden_pod_failure_messages_share_one_id() {
    let Some(g) = load("pod_failure_messages.json") else {
        return;
    };
    let msgs: Vec<&str> = g["messages"].as_array().expect("messages").iter().map(s).collect();
    assert_eq!(msgs.len(), 5);
    let norms: Vec<String> = msgs.iter().map(|m| normalize(m, Profile::K8sTriage)).collect();
    for nm in &norms {
        assert_eq!(nm, s(&g["computed_normalized"]));
    }
    let ids: Vec<String> = norms.iter().map(|t| k8s_id_of(t)).collect();
    for id in &ids {
        assert_eq!(id, s(&g["computed_id"]));
    }
    // and they cluster into one cluster under both profiles
    for profile in [Profile::K8sTriage, Profile::Default] {
        let fs: Vec<FailureRef> =
            msgs.iter().map(|m| FailureRef { test: "t", text: m, job: "j", build: "1" }).collect();
        let c = cluster(&fs, &ClusterConfig::new(profile));
        assert_eq!(c.clusters.len(), 1, "{profile:?}");
    }
}

#[test]
fn golden_misc_ids_distances_spans() {
    let Some(g) = load("golden_misc.json") else {
        return;
    };
    for c in g["makeNgramCountsDigest"].as_array().expect("digest") {
        assert_eq!(k8s_id_of(s(&c["input"])), s(&c["expected"]));
    }
    for c in g["ngramEditDist"].as_array().expect("ngram") {
        let a = ngram_histogram(s(&c["a"]).as_bytes());
        let b = ngram_histogram(s(&c["b"]).as_bytes());
        assert_eq!(lower_bound(&a, &b) as u64, c["expected"].as_u64().expect("n"));
    }
    for c in g["commonSpans"].as_array().expect("spans") {
        let input: Vec<&str> = c["input"].as_array().expect("in").iter().map(s).collect();
        let want: Vec<usize> =
            c["expected"].as_array().expect("exp").iter().map(|v| v.as_u64().expect("n") as usize).collect();
        assert_eq!(common_spans(&input), want, "{}", s(&c["test"]));
    }
    for c in g["berghelroach_Dist_python_era_editdist"].as_array().expect("bd") {
        let d = edit_distance(s(&c["a"]).as_bytes(), s(&c["b"]).as_bytes());
        assert_eq!(d as u64, c["expected"].as_u64().expect("n"), "{c}");
    }
}

fn clusters_by_key(texts: &[String], profile: Profile) -> BTreeMap<String, Vec<u32>> {
    let fs: Vec<FailureRef> =
        texts.iter().map(|t| FailureRef { test: "test", text: t, job: "job", build: "1" }).collect();
    let c = cluster(&fs, &ClusterConfig::new(profile));
    assert!(c.accounting.is_complete());
    c.clusters.into_iter().map(|c| (c.key, c.members)).collect()
}

#[test]
fn golden_cluster_test_cases() {
    let Some(g) = load("golden_misc.json") else {
        return;
    };
    for c in g["clusterTest"].as_array().expect("ct") {
        let name = s(&c["test"]);
        let (texts, expected): (Vec<String>, BTreeMap<String, Vec<u32>>) = if let Some(ft) = c.get("failure_texts") {
            let texts = ft.as_array().expect("ft").iter().map(|v| s(v).to_string()).collect();
            let exp = c["expected_clusters"]
                .as_object()
                .expect("exp")
                .iter()
                .map(|(k, v)| {
                    (k.clone(), v.as_array().expect("idx").iter().map(|x| x.as_u64().expect("n") as u32).collect())
                })
                .collect();
            (texts, exp)
        } else {
            // "Huge strings": exit 1, '1 2 ' * 400, '1 2 ' * 399 + '3 4 '
            let a = "1 2 ".repeat(400);
            let b = format!("{}3 4 ", "1 2 ".repeat(399));
            let texts = vec!["exit 1".to_string(), a.clone(), b];
            let mut exp = BTreeMap::new();
            exp.insert("exit 1".to_string(), vec![0]);
            exp.insert(a, vec![1, 2]);
            (texts, exp)
        };
        for profile in [Profile::K8sTriage, Profile::Default] {
            assert_eq!(clusters_by_key(&texts, profile), expected, "{name} {profile:?}");
        }
    }
}

#[test]
fn golden_cluster_global_cases() {
    let Some(g) = load("golden_misc.json") else {
        return;
    };
    for c in g["clusterGlobal"].as_array().expect("cg") {
        let mut owned: Vec<(String, String, String)> = Vec::new(); // test, text, build
        for (test, by_text) in c["input"].as_object().expect("in") {
            for (text, builds) in by_text.as_object().expect("t") {
                for b in builds.as_array().expect("b") {
                    owned.push((test.clone(), text.clone(), s(b).to_string()));
                }
            }
        }
        let fs: Vec<FailureRef> =
            owned.iter().map(|(t, x, b)| FailureRef { test: t, text: x, job: "job", build: b }).collect();
        let mut cfg = ClusterConfig::new(Profile::K8sTriage);
        if let Some(prev) = c.get("previous_keys") {
            cfg.seed_keys = prev.as_array().expect("prev").iter().map(|v| s(v).to_string()).collect();
        }
        let got = cluster(&fs, &cfg);
        let mut got_map: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for cl in &got.clusters {
            let e = got_map.entry(cl.key.clone()).or_default();
            for t in &cl.tests {
                let mut builds: Vec<String> = t.members.iter().map(|&m| fs[m as usize].build.to_string()).collect();
                builds.sort();
                e.insert(t.test.clone(), builds);
            }
        }
        let want: BTreeMap<String, BTreeMap<String, Vec<String>>> =
            serde_json::from_value(c["expected"].clone()).expect("expected");
        assert_eq!(got_map, want, "{}", s(&c["test"]));
    }
}
