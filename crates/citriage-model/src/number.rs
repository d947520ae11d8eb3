//! Figures as citriage prints and stores them: the one rounding to thousandths every
//! rate and ratio of the workspace goes through (kettle's consistencies, the corrected
//! figures, the dashboard's pass rates).

/// Rounds like BigQuery's `ROUND(x, 3)`: from the exact value of the stored binary
/// number (1 − 7/80 is stored as 0.91249999…, so 0.912), halfway cases away from zero.
/// The decision is made on the exact binary value with integer arithmetic, never on a
/// product that was itself rounded (`(x * 1000.0).round()` sees 912.5 there and gives
/// 0.913).
pub fn round3(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let a = x.abs();
    // From 2^52 on every double is an integer: nothing to round.
    if a >= 4_503_599_627_370_496.0 {
        return x;
    }
    // a = m · 2^-s exactly, m < 2^53.
    let bits = a.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, s) = if exp == 0 { (frac, 1074) } else { (frac | (1u64 << 52), 1075 - exp) };
    if s <= 0 {
        return x;
    }
    // 1000·a = 1000·m / 2^s: its integer part and whether its fraction is at least ½.
    let scaled = u128::from(m) * 1000;
    let (thousandths, up) = if s >= 128 {
        (0u128, false)
    } else {
        let k = scaled >> s;
        let rest = scaled - (k << s);
        (k, rest >= 1u128 << (s - 1))
    };
    let v = (thousandths + u128::from(up)) as f64 / 1000.0;
    if x < 0.0 {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition itself: the exact decimal expansion of the double (a double has
    /// at most 1074 fractional digits), its fourth digit on deciding.
    fn round3_by_decimal_expansion(x: f64) -> f64 {
        let exact = format!("{:.1100}", x.abs());
        let (int, frac) = exact.split_once('.').unwrap_or((&exact, ""));
        let mut thousandths: i64 = format!("{int}{:0<3}", &frac[..3]).parse().unwrap();
        if frac.as_bytes()[3] >= b'5' {
            thousandths += 1;
        }
        let v = thousandths as f64 / 1000.0;
        if x < 0.0 {
            -v
        } else {
            v
        }
    }

    #[test]
    fn rounds_the_binary_value() {
        assert_eq!(round3(1.0 - 7.0 / 80.0), 0.912, "0.9125 is stored as 0.91249999…");
        assert_eq!(round3(0.9375), 0.938, "an exact binary half rounds away from zero");
        assert_eq!(round3(2.0 / 3.0), 0.667);
        assert_eq!(round3(1.0), 1.0);
        assert_eq!(round3(0.0), 0.0);
        assert_eq!(round3(0.0625), 0.063);
        assert_eq!(round3(-0.0625), -0.063);
        assert_eq!(round3(0.0005), 0.001, "0.0005 is stored as 0.000500000000000000010…");
        assert_eq!(round3(5e-324), 0.0);
        assert_eq!(round3(123_456.789_51), 123_456.79);
        assert!(round3(f64::NAN).is_nan());
        assert_eq!(round3(f64::INFINITY), f64::INFINITY);
        assert_eq!(round3(1e300), 1e300);
    }

    #[test]
    fn a_product_rounded_first_would_differ() {
        // The dashboard's former `(x * 1000.0).round() / 1000.0` on 73 of 80.
        let x: f64 = 73.0 / 80.0;
        assert_eq!((x * 1000.0).round() / 1000.0, 0.913);
        assert_eq!(round3(x), 0.912);
    }

    #[test]
    fn agrees_with_the_decimal_expansion() {
        // Every ratio a/b of small counts (where halves are common), then a spread of
        // doubles from a fixed sequence.
        for b in 1..=200u32 {
            for a in 0..=b {
                let x = f64::from(a) / f64::from(b);
                assert_eq!(round3(x).to_bits(), round3_by_decimal_expansion(x).to_bits(), "{a}/{b}");
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..5_000 {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let x = f64::from_bits(state >> 2) % 1e12;
            if x.is_finite() {
                assert_eq!(round3(x).to_bits(), round3_by_decimal_expansion(x).to_bits(), "{x:e}");
                let y = (state >> 11) as f64 / (1u64 << 40) as f64;
                assert_eq!(round3(y).to_bits(), round3_by_decimal_expansion(y).to_bits(), "{y:e}");
            }
        }
    }
}
