use citriage_verify::*;
use citriage_github::*;
#[test]
fn probe() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds/k8s-ci-triage-runbook-and-reports.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let f = lines.iter().position(|l| l.starts_with("Kubernetes CI Failures — Triage Report")).unwrap();
    let fl = lines.iter().position(|l| l.starts_with("Kubernetes CI Flakes — Triage Report")).unwrap();
    let rb = lines.iter().position(|l| l.starts_with("K8s CI Triage Report Generator")).unwrap();
    for (name, a, b) in [("failures", f, fl), ("flakes", fl, rb)] {
        let body = lines[a..b].join("\n");
        let client = GithubClient::new(ClientConfig { offline: true, ..Default::default() }, Box::new(MemoryCache::new()));
        let v = rules::verify(&body, &rules::Resolvers { refs: &client, code: &code::NoCode, builds: &rules::NoBuilds }, &rules::VerifyOptions::default());
        println!("==== {name}\n{}", render::render_markdown(&v, name));
        let r = report::parse(&body);
        for s in &r.sections { println!("S {} {} {:?} {}..{}", s.line, s.level, s.kind, s.title.chars().take(60).collect::<String>(), s.end); }
    }
}
