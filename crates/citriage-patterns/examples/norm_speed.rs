use citriage_patterns::benchgen::generate;
use citriage_patterns::normalize::{name_template, normalize, Profile};
use std::time::Instant;
fn main() {
    let d = generate(200_000, 1);
    for p in [Profile::Default, Profile::K8sTriage] {
        let t = Instant::now();
        let mut total = 0usize;
        for f in &d.failures { total += normalize(&f.text, p).len(); }
        eprintln!("{:?} normalize: {:.2}s ({total})", p, t.elapsed().as_secs_f64());
    }
    let norms: Vec<String> = d.failures.iter().map(|f| normalize(&f.text, Profile::Default)).collect();
    let t = Instant::now();
    let k = norms.iter().filter_map(|n| name_template(n)).count();
    eprintln!("templates: {:.2}s ({k})", t.elapsed().as_secs_f64());
}
