//! Deterministic randomness: SplitMix64 seeding, xoshiro256** streams and
//! stable string hashing, so every job, build and payload draws from its own
//! stream keyed by stable names (never by iteration order or addresses).
//!
//! Only integer arithmetic and IEEE-exact float operations are used, so the
//! same seed yields the same numbers on every platform.

/// 64-bit FNV-1a over the bytes, finished with the SplitMix64 mixer.
pub fn hash_bytes(seed: u64, bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    mix64(h)
}

/// Hash of several string parts (each part is length-prefixed so that
/// `["ab","c"]` and `["a","bc"]` differ).
pub fn hash_parts(seed: u64, parts: &[&str]) -> u64 {
    let mut h = mix64(seed ^ 0x9e37_79b9_7f4a_7c15);
    for p in parts {
        h = hash_bytes(h, &(p.len() as u64).to_le_bytes());
        h = hash_bytes(h, p.as_bytes());
    }
    h
}

/// The SplitMix64 finaliser.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded through SplitMix64.
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(x)
        };
        let mut s = [next(), next(), next(), next()];
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// A generator for a stable key (world seed plus name parts).
    pub fn for_key(seed: u64, parts: &[&str]) -> Self {
        Rng::new(hash_parts(seed, parts))
    }

    /// An independent child stream labelled by `label`.
    pub fn fork(&mut self, label: &str) -> Rng {
        let base = self.next_u64();
        Rng::new(hash_parts(base, &[label]))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (returns 0 when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        // Lemire's multiply-shift with rejection: unbiased.
        let threshold = n.wrapping_neg() % n;
        loop {
            let x = self.next_u64();
            let m = u128::from(x) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform in `lo..=hi` (returns `lo` when `hi <= lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// Uniform `usize` in `0..n`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// Uniform in `[0, 1)` with 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        self.unit() < p
    }

    /// One element of a non-empty slice; `None` for an empty one.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        if xs.is_empty() {
            None
        } else {
            xs.get(self.index(xs.len()))
        }
    }

    /// One `&str` of a slice, or `""` for an empty slice.
    pub fn pick_str(&mut self, xs: &[&'static str]) -> &'static str {
        self.pick(xs).copied().unwrap_or("")
    }

    /// Index drawn with the given integer weights (0 when all are zero).
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        if total == 0 {
            return 0;
        }
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            let w = u64::from(w);
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    /// `n` lowercase hex digits.
    pub fn hex(&mut self, n: usize) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(n);
        let mut bits = 0u64;
        let mut left = 0;
        for _ in 0..n {
            if left == 0 {
                bits = self.next_u64();
                left = 16;
            }
            s.push(HEX[(bits & 15) as usize] as char);
            bits >>= 4;
            left -= 1;
        }
        s
    }

    /// `n` characters from Kubernetes' random-suffix alphabet (no vowels).
    pub fn k8s_suffix(&mut self, n: usize) -> String {
        const ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n).map(|_| ALPHA[self.index(ALPHA.len())] as char).collect()
    }

    /// `n` lowercase alphanumerics.
    pub fn alnum(&mut self, n: usize) -> String {
        const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        (0..n).map(|_| ALPHA[self.index(ALPHA.len())] as char).collect()
    }

    /// A random-looking UUID (version 4 layout).
    pub fn uuid(&mut self) -> String {
        let h = self.hex(32);
        format!("{}-{}-4{}-a{}-{}", &h[0..8], &h[8..12], &h[13..16], &h[17..20], &h[20..32])
    }
}

/// A 40-hex-digit git-style object id derived from a key (not a real SHA-1).
pub fn fake_sha(seed: u64, parts: &[&str]) -> String {
    let mut r = Rng::for_key(seed, parts);
    r.hex(40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let mut a = Rng::for_key(7, &["job", "x"]);
        let mut b = Rng::for_key(7, &["job", "x"]);
        let mut c = Rng::for_key(7, &["job", "y"]);
        let va: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
        assert_ne!(hash_parts(1, &["ab", "c"]), hash_parts(1, &["a", "bc"]));
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(3);
        for n in 1..50u64 {
            for _ in 0..50 {
                assert!(r.below(n) < n);
            }
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.weighted(&[0, 0, 5]), 2);
    }
}
