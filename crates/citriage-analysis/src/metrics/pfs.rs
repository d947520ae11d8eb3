//! Bayesian probability of flaky failure (PFS) in the formulation Allure 3 documents
//! after Meta's work: each run is either good (each attempt fails independently with
//! probability p) or bad (every attempt fails, probability q). Priors p ~ Beta(1, 19)
//! and q ~ Beta(1, 1); q is integrated out and PFS is the posterior mean of p. A test
//! is flaky when PFS > 0.1.

/// One run of a test: failed and passed attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub failed: u32,
    pub passed: u32,
}

/// The threshold above which a test is called flaky.
pub const FLAKY_PFS: f64 = 0.1;

/// Posterior mean of p. Runs with no attempts are ignored; no runs gives the prior mean.
pub fn pfs(runs: &[Run]) -> f64 {
    let runs: Vec<Run> = runs.iter().copied().filter(|r| r.failed + r.passed > 0).collect();
    // Runs with a pass contribute (1-q) p^F (1-p)^P: their p-part is a Beta update and
    // their q-part a factor (1-q) each. Runs with only failures contribute q + (1-q) p^F.
    let mut a = 1.0f64;
    let mut b = 19.0f64;
    let mut k = 0i32; // power of (1 - q)
                      // Failure-only runs grouped by their number of attempts: F → count.
    let mut all_fail: std::collections::BTreeMap<u32, i32> = std::collections::BTreeMap::new();
    for r in &runs {
        if r.passed > 0 {
            a += f64::from(r.failed);
            b += f64::from(r.passed);
            k += 1;
        } else {
            *all_fail.entry(r.failed).or_insert(0) += 1;
        }
    }
    if all_fail.is_empty() {
        return a / (a + b);
    }
    // Many tests share a run history shape; integrate each shape once per thread.
    let key = (a as u32, b as u32, k, all_fail.iter().map(|(f, n)| (*f, *n)).collect::<Vec<_>>());
    if let Some(v) = CACHE.with(|c| c.borrow().get(&key).copied()) {
        return v;
    }
    let v = integrate(a, b, k, &all_fail);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 100_000 {
            c.clear();
        }
        c.insert(key, v);
    });
    v
}

type ShapeKey = (u32, u32, i32, Vec<(u32, i32)>);

thread_local! {
    static CACHE: std::cell::RefCell<std::collections::HashMap<ShapeKey, f64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

fn integrate(a: f64, b: f64, k: i32, all_fail: &std::collections::BTreeMap<u32, i32>) -> f64 {
    // Numeric integration over p (Simpson) and q (Gauss-Legendre-free midpoint, fine grid),
    // in log space to stay stable for long histories.
    const NP: usize = 400;
    const NQ: usize = 128;
    let qs: Vec<f64> = (0..NQ).map(|i| (i as f64 + 0.5) / NQ as f64).collect();
    let mut num = 0.0f64;
    let mut den = 0.0f64;
    let mut logs: Vec<f64> = Vec::with_capacity(NP + 1);
    for i in 0..=NP {
        let p = (i as f64 / NP as f64).clamp(1e-12, 1.0 - 1e-12);
        let base = (a - 1.0) * p.ln() + (b - 1.0) * (1.0 - p).ln();
        // ln ∫ (1-q)^k Π (q + (1-q) p^F)^n dq, by the midpoint rule in log space.
        let lv: Vec<f64> = qs
            .iter()
            .map(|&q| {
                let mut l = f64::from(k) * (1.0 - q).ln();
                for (&f, &n) in all_fail {
                    l += f64::from(n) * (q + (1.0 - q) * p.powi(f as i32)).ln();
                }
                l
            })
            .collect();
        let m = lv.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let acc = m + (lv.iter().map(|l| (l - m).exp()).sum::<f64>() / NQ as f64).ln();
        logs.push(base + acc);
    }
    let max = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    for (i, l) in logs.iter().enumerate() {
        let w = if i == 0 || i == NP {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let p = i as f64 / NP as f64;
        let d = w * (l - max).exp();
        den += d;
        num += d * p;
    }
    if den > 0.0 {
        num / den
    } else {
        a / (a + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_example_and_shape() {
        // Two runs that each failed once, then passed: Beta(3, 21), mean 0.125.
        let two = [Run { failed: 1, passed: 1 }, Run { failed: 1, passed: 1 }];
        assert!((pfs(&two) - 0.125).abs() < 1e-12);
        assert!((pfs(&[]) - 0.05).abs() < 1e-12, "prior mean 1/20");
        // Always-failing runs are mostly explained by "bad runs", so p stays low-ish...
        let hard = pfs(&[Run { failed: 3, passed: 0 }; 10]);
        // ...while failures that pass on retry look flaky: Beta(1+5, 19+20).
        let mixed: Vec<Run> =
            (0..20).map(|i| if i < 5 { Run { failed: 1, passed: 1 } } else { Run { failed: 0, passed: 1 } }).collect();
        let m = pfs(&mixed);
        assert!((m - 6.0 / 45.0).abs() < 1e-12 && m > FLAKY_PFS, "{m}");
        assert!(hard < m, "{hard} vs {m}");
        let clean = pfs(&[Run { failed: 0, passed: 1 }; 50]);
        assert!(clean < 0.02, "{clean}");
        // A failure-only run contributes q + (1-q)p: check against the closed form
        // for runs [fail], [pass]: posterior ∝ (1-p)^19 (1 + 2p); mean = 26/9240 / (23/420).
        let v = pfs(&[Run { failed: 1, passed: 0 }, Run { failed: 0, passed: 1 }]);
        let exact = (26.0 / 9240.0) / (23.0 / 420.0);
        assert!((v - exact).abs() < 1e-5, "{v} vs {exact}");
    }
}
