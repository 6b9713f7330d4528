//! Decimal digit counts and leading digits of big integers without printing them.
//!
//! PostgreSQL stores a numeric in base 10000, so its weight and first digit are free; keel
//! holds the unscaled value as a binary big integer. Printing it to count digits costs
//! O(M(n) log n) and was most of the time of a long chain of divisions (each step asks for
//! both operands' weights). Here an f64 estimate from the top 64 bits answers exactly whenever
//! it is not within its error of a digit boundary; near one (exact powers of ten are the
//! common case) one power of ten is built and compared, O(M(n)).

use bigdecimal::num_bigint::BigUint;
use bigdecimal::num_traits::ToPrimitive;
use std::cell::RefCell;

/// Estimated log10 of `n` (> 0) and a bound on the estimate's absolute error.
fn log10_estimate(n: &BigUint) -> (f64, f64) {
    let bits = n.bits();
    if bits <= 64 {
        let v = n.to_u64().unwrap_or(u64::MAX) as f64;
        return (v.log10(), 1e-12);
    }
    let shift = bits - 64;
    let top = (n >> shift).to_u64().unwrap_or(u64::MAX) as f64;
    let l = top.log10() + shift as f64 * std::f64::consts::LOG10_2;
    // Rounding of the product and of the top bits: a few ulps of `l`, far below 1e-9 for the
    // 450,000 bits of the largest numeric.
    (l, 1e-9 + l.abs() * 1e-14)
}

/// 10^k. The last large power built on this thread is kept, and a power within a few
/// hundred digits of it is derived from it by one multiplication or exact division by a small
/// power: the values of a chain of operations grow a little per step, so this is linear in
/// the digits where building the power afresh is O(M(n)).
fn pow10(k: u64) -> BigUint {
    const NEAR: u64 = 256;
    thread_local! {
        static LAST: RefCell<Option<(u64, BigUint)>> = const { RefCell::new(None) };
    }
    let small = |d: u64| BigUint::from(10u8).pow(d as u32);
    if k < 2 * NEAR {
        return small(k);
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        let p = match last.as_ref() {
            Some((c, p)) if *c <= k && k - c <= NEAR => p * small(k - c),
            Some((c, p)) if *c > k && c - k <= NEAR => p / small(c - k),
            _ => small(k),
        };
        *last = Some((k, p.clone()));
        p
    })
}

/// floor(log10 n) for n > 0: the number of decimal digits minus one.
pub(crate) fn log10_floor(n: &BigUint) -> i64 {
    let (l, err) = log10_estimate(n);
    let (lo, hi) = ((l - err).floor(), (l + err).floor());
    if lo == hi {
        return lo as i64;
    }
    // Within the error of 10^hi: compare exactly.
    let k = hi.max(0.0) as u64;
    if *n >= pow10(k) {
        k as i64
    } else {
        k as i64 - 1
    }
}

/// Decimal digits of `n` (1 for zero).
pub(crate) fn digit_count(n: &BigUint) -> i64 {
    if n.bits() == 0 {
        return 1;
    }
    log10_floor(n) + 1
}

/// floor(n / 10^drop), for a result below 10^15 (the caller keeps `drop` at least
/// `digit_count(n) - 15`). A negative `drop` multiplies.
pub(crate) fn leading(n: &BigUint, drop: i64) -> u64 {
    if drop <= 0 {
        return (n * pow10(drop.unsigned_abs()))
            .to_u64()
            .unwrap_or(u64::MAX);
    }
    if n.bits() == 0 {
        return 0;
    }
    let (l, err) = log10_estimate(n);
    let x = 10f64.powf(l - drop as f64);
    // Relative error of x is about ln(10) * err.
    let slack = x * 2.5 * err + 1e-12;
    if x < 1e12 && (x - slack).floor() == (x + slack).floor() {
        return (x - slack).floor().max(0.0) as u64;
    }
    (n / pow10(drop as u64)).to_u64().unwrap_or(u64::MAX)
}

/// log10 n as an f64 (n > 0), good to about 1e-9 absolute.
pub(crate) fn log10(n: &BigUint) -> f64 {
    log10_estimate(n).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(n: &BigUint) -> (i64, String) {
        let s = n.to_string();
        (s.len() as i64 - 1, s)
    }

    #[test]
    fn digits_and_leading_digits_match_the_printed_value() {
        let mut cases: Vec<BigUint> = Vec::new();
        // Ascending and descending near each other, so the derived powers are tested too.
        for k in [
            0u64, 1, 3, 4, 18, 19, 20, 63, 64, 100, 1000, 1100, 1030, 5000, 30000,
        ] {
            let p = pow10(k);
            cases.push(p.clone());
            if k > 0 {
                cases.push(&p - 1u8);
            }
            cases.push(&p + 1u8);
            cases.push(&p * 9999u32 + 1u8);
            cases.push(&p * 10000u32 - 1u8);
            cases.push(&p * 1234u32);
        }
        for bits in [63u64, 64, 65, 128, 4096] {
            cases.push((BigUint::from(1u8) << bits) - 1u8);
            cases.push(BigUint::from(1u8) << bits);
        }
        for n in &cases {
            let (lg, s) = exact(n);
            assert_eq!(log10_floor(n), lg, "{s}");
            assert_eq!(digit_count(n), lg + 1);
            for take in 1..=5usize {
                let drop = lg + 1 - take as i64;
                let want: u64 = s[..take.min(s.len())].parse().unwrap();
                let want = if drop < 0 {
                    want * 10u64.pow((-drop) as u32)
                } else {
                    want
                };
                assert_eq!(leading(n, drop), want, "{s} drop {drop}");
            }
        }
    }
}
