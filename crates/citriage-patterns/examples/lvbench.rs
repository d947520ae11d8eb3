use citriage_patterns::similarity::edit_distance_below;
use std::time::Instant;
fn main() {
    let a = "[FAILED] Timed out after DURATION.\nstorage webhook probe-eviction-UNIQ1 was not priority within the timeout: expected 1 endpoint in namespace e2e-priority-UNIQ2, got 1\nExpected\n    <bool>: false\nto be true\nIn [It] at: k8s.io/kubernetes/test/e2e/dra/job_affinity.go:LINE @ TIME";
    let b = "[FAILED] Timed out after DURATION.\ningress job snapshot-controller-UNIQ1 was not apiserver within the timeout: expected 2 volume in namespace e2e-pod-UNIQ2, got 2\nExpected\n    <bool>: false\nto be true\nIn [It] at: k8s.io/kubernetes/test/e2e/network/controller_job.go:LINE @ TIME";
    let limit = (a.len() + b.len()) / 20;
    let t = Instant::now();
    let mut r = None;
    for _ in 0..10000 {
        r = edit_distance_below(a.as_bytes(), b.as_bytes(), limit);
    }
    println!(
        "short: len {} limit {} result {:?}: {:.2} us/check",
        a.len(),
        limit,
        r,
        t.elapsed().as_secs_f64() * 1e6 / 10000.0
    );
    // mid-size rejection: two stack traces with different frames
    let mut sa = String::new(); let mut sb = String::new();
    for i in 0..20 { sa.push_str(&format!("k8s.io/kubernetes/pkg/apps/pod.(*tamzo{}node).benric{}(UNIQ{}, UNIQ{})\n\t/go/src/k8s.io/kubernetes/pod_node.go:LINE +UNIQ{}\n", i, i*3, 2*i, 2*i+1, 60+i)); sb.push_str(&format!("k8s.io/kubernetes/pkg/node/quota.(*vexsep{}etcd).lomfli{}(UNIQ{}, UNIQ{})\n\t/go/src/k8s.io/kubernetes/quota_etcd.go:LINE +UNIQ{}\n", i, i*7, 2*i, 2*i+1, 60+i)); }
    let limit = (sa.len() + sb.len()) / 20;
    let t = Instant::now();
    for _ in 0..1000 { r = edit_distance_below(sa.as_bytes(), sb.as_bytes(), limit); }
    println!("mid: len {} limit {} result {:?}: {:.2} us/check", sa.len(), limit, r, t.elapsed().as_secs_f64() * 1e6 / 1000.0);
    let mut la = String::new();
    let mut lb = String::new();
    for i in 0..100 {
        la.push_str(&format!("TIME NUM file.go:LINE] storage webhook pod-UNIQ1 priority={} took DURATION\n", i % 97));
        lb.push_str(&format!(
            "TIME NUM file.go:LINE] storage webhook pod-UNIQ1 priority={} took DURATION\n",
            (i * 7) % 89
        ));
    }
    let limit = (la.len() + lb.len()) / 20;
    let t = Instant::now();
    for _ in 0..100 {
        r = edit_distance_below(la.as_bytes(), lb.as_bytes(), limit);
    }
    println!(
        "long: len {} limit {} result {:?}: {:.2} us/check",
        la.len(),
        limit,
        r,
        t.elapsed().as_secs_f64() * 1e6 / 100.0
    );
}
