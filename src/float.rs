//! Decimal text to `f64`, exactly as `str::parse::<f64>` reads it, without its 10 KB table.
//!
//! core's parser tries an exact fast path, then the Eisel-Lemire algorithm, whose table of 651
//! 128-bit powers of five is 10.4 KB of the wasm that gzip cannot shrink. The numbers this
//! package reads (a temperature, a Retry-After, a token count written `12.0`) take Clinger's fast
//! path: at most 19 digits and a power of ten up to 1e22, both exact in an f64, so the one
//! rounding of a multiply or divide is the correct one.
//!
//! Everything else is read exactly, in integers, which is short to write and cannot be wrong by
//! an ulp: the text is `D x 10^E` with `D` an integer, so the value is the fraction `N / M` with
//! `N = D x 10^max(E, 0)` and `M = 10^max(-E, 0)`. Both are scaled by a power of two until
//! their quotient lies in [1/2, 2); then 55 steps of schoolbook binary long division (compare,
//! subtract, double) give the quotient's first 55 bits, and the remainder says whether anything
//! follows them. Those bits, the first one cut off and that "anything follows" are all
//! round-to-nearest-even needs, for normal and subnormal results alike; carrying into the
//! exponent field makes overflow infinity. (Clinger's Algorithm R starts from a guess and
//! corrects it by big-integer comparisons; dividing exactly needs no guess, so no loop that
//! must be shown to end.) Written from the arithmetic above, not ported from any parser.
//!
//! The work is bounded whatever the input. A value under 10^-325 is below half the smallest
//! subnormal (about 2.47e-324), so zero; one of 10^310 or more is infinity. In between, only
//! the first [`KEPT_DIGITS`] significant digits are read into the integer: every point halfway
//! between two f64s is `odd x 2^k` with `k >= -1075`, which has at most 768 significant digits,
//! so none lies strictly between the kept digits and the next number at their last place. The
//! digits past them therefore only matter as "some are nonzero", which is read as one more
//! digit `1`. The integers stay under 4,000 bits, and a megabyte of digits costs one pass.
//!
//! It is here, built for size, not in the wire crate built for speed: a stream frame needs it
//! only for a token count not written as an integer (`12.0`); the rest of what it reads is a
//! config's, a header's or a whole body's numbers, so opt-level 3 only made it 0.6 KB gzipped
//! larger.

/// `text` read as `str::parse::<f64>` reads it: an optional sign, then `inf`, `infinity`, `nan`
/// (any case) or digits with an optional point and exponent; `None` where it would be an error.
pub fn parse_f64(text: &str) -> Option<f64> {
    let (negative, unsigned) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        all => (false, all),
    };
    let is = |word: &[u8]| unsigned.eq_ignore_ascii_case(word);
    let magnitude = if is(b"inf") || is(b"infinity") {
        f64::INFINITY
    } else if is(b"nan") {
        f64::NAN
    } else {
        magnitude(unsigned)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// An unsigned decimal number's nearest `f64`, if the text is one.
fn magnitude(text: &[u8]) -> Option<f64> {
    let mut at = 0;
    let mut mantissa: u64 = 0;
    // Significant digits read into `mantissa` (leading zeros are not), and digits past the 19
    // that fit: those take the slow path.
    let mut significant = 0usize;
    let mut exponent: i64 = 0;
    let mut digits = 0usize;
    let mut fraction = false;
    while at < text.len() {
        match text[at] {
            d @ b'0'..=b'9' => {
                digits += 1;
                if significant < 19 {
                    if d != b'0' || significant > 0 {
                        mantissa = mantissa * 10 + u64::from(d - b'0');
                        significant += 1;
                    }
                    if fraction {
                        exponent -= 1;
                    }
                } else {
                    significant += 1;
                    if !fraction {
                        exponent += 1;
                    }
                }
            }
            b'.' if !fraction => fraction = true,
            _ => break,
        }
        at += 1;
    }
    if digits == 0 {
        return None;
    }
    let digits_end = at;
    if let Some(b'e' | b'E') = text.get(at) {
        at += 1;
        let negative = text.get(at) == Some(&b'-');
        if matches!(text.get(at), Some(b'-' | b'+')) {
            at += 1;
        }
        let start = at;
        let mut written: i64 = 0;
        while let Some(d @ b'0'..=b'9') = text.get(at) {
            // core stops adding an exponent's digits once it is 65,536 or more (found by trying
            // it; only a number with that many digits of its own can come back into range).
            if written < 1 << 16 {
                written = written * 10 + i64::from(d - b'0');
            }
            at += 1;
        }
        if at == start {
            return None;
        }
        exponent += if negative { -written } else { written };
    }
    if at != text.len() {
        return None;
    }
    if mantissa == 0 && significant == 0 {
        return Some(0.0);
    }
    // Both factors exact and one rounding: the nearest f64 (Clinger's fast path).
    if significant <= 19 && mantissa <= 1 << 53 && (-22..=22).contains(&exponent) {
        let power = POWERS_OF_TEN[exponent.unsigned_abs() as usize];
        let m = mantissa as f64;
        return Some(if exponent < 0 { m / power } else { m * power });
    }
    // The digits are d1 d2 d3 ... x 10^exponent with the point after the first 19 (or all).
    let point = exponent + significant.min(19) as i64;
    Some(f64::from_bits(slow_bits(&text[..digits_end], point)))
}

/// 1e0 to 1e22, every one exact in an f64.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

const EXPONENT_FIELD: u32 = 52;
/// Biased exponent 1 holds 2^-1022, so an ulp of a subnormal (and of the first binade) is 2^-1074.
const SMALLEST_ULP_POWER: i64 = -1074;
/// Quotient bits computed: 53 of mantissa, at least one to round on, one more for where the
/// leading bit falls.
const QUOTIENT_BITS: i64 = 55;
/// Significant digits read exactly; the module doc says why no halfway point needs more.
const KEPT_DIGITS: usize = 800;

/// The bits of the nearest f64 to `0.d1d2d3... x 10^point`, where `digits` is the text before
/// any exponent (digits and perhaps a point, one digit at least nonzero).
fn slow_bits(digits: &[u8], point: i64) -> u64 {
    let infinity = f64::INFINITY.to_bits();
    if point < -324 {
        return 0;
    }
    if point > 310 {
        return infinity;
    }
    // The kept digits as an integer, nine at a time, and whether any nonzero digit follows.
    let mut numerator = Vec::new();
    let (mut kept, mut chunk, mut chunk_digits) = (0usize, 0u32, 0u32);
    for &d in digits {
        if d == b'.' || (kept == 0 && d == b'0') {
            continue;
        }
        let digit = if kept < KEPT_DIGITS {
            u32::from(d - b'0')
        } else if d != b'0' {
            1
        } else {
            continue;
        };
        chunk = chunk * 10 + digit;
        chunk_digits += 1;
        kept += 1;
        if chunk_digits == 9 || kept > KEPT_DIGITS {
            mul_add(&mut numerator, 10u32.pow(chunk_digits), chunk);
            (chunk, chunk_digits) = (0, 0);
        }
        if kept > KEPT_DIGITS {
            break;
        }
    }
    mul_add(&mut numerator, 10u32.pow(chunk_digits), chunk);
    let decimal_exponent = point - kept as i64;
    let mut denominator = vec![1];
    times_ten_to(if decimal_exponent < 0 { &mut denominator } else { &mut numerator }, decimal_exponent.unsigned_abs());

    // Scale by 2^-shift so the quotient lies in [1/2, 2), then divide bit by bit: after the
    // loop, quotient = floor(value x 2^scale) has 54 or 55 bits.
    let shift = bit_length(&numerator) - bit_length(&denominator);
    if shift > 0 {
        shift_left(&mut denominator, shift.unsigned_abs());
    } else {
        shift_left(&mut numerator, shift.unsigned_abs());
    }
    let mut quotient: u64 = 0;
    for _ in 0..QUOTIENT_BITS {
        quotient <<= 1;
        if compare(&numerator, &denominator).is_ge() {
            subtract(&mut numerator, &denominator);
            quotient |= 1;
        }
        mul_add(&mut numerator, 2, 0);
    }
    let more_follows = !numerator.is_empty();
    let scale = QUOTIENT_BITS - 1 - shift;

    // value in [2^leading, 2^(leading+1)); its f64 is mantissa x 2^ulp_power.
    let leading = i64::from(63 - quotient.leading_zeros()) - scale;
    let ulp_power = (leading - i64::from(EXPONENT_FIELD)).max(SMALLEST_ULP_POWER);
    // At least 1, since the quotient has 54 bits or more; at most 60, since point >= -324 keeps
    // the value at 10^-325 or more.
    let cut = (ulp_power + scale) as u32;
    let mut mantissa = quotient >> cut;
    let rest = quotient & ((1 << cut) - 1);
    let half = 1 << (cut - 1);
    if rest > half || (rest == half && (more_follows || mantissa & 1 == 1)) {
        mantissa += 1;
    }
    // A mantissa of 2^53 (or 2^52 from a subnormal) carries into the exponent field, and past
    // its largest value into infinity.
    let field = (ulp_power - SMALLEST_ULP_POWER) as u64;
    ((field << EXPONENT_FIELD) + mantissa).min(infinity)
}

/// `number = number x factor + add`, the number as little-endian u32 limbs with no zero on top
/// (so zero is empty).
fn mul_add(number: &mut Vec<u32>, factor: u32, add: u32) {
    let mut carry = u64::from(add);
    for limb in number.iter_mut() {
        let wide = u64::from(*limb) * u64::from(factor) + carry;
        *limb = wide as u32;
        carry = wide >> 32;
    }
    if carry != 0 {
        number.push(carry as u32);
    }
}

fn times_ten_to(number: &mut Vec<u32>, mut power: u64) {
    while power > 0 {
        let step = power.min(9);
        mul_add(number, 10u32.pow(step as u32), 0);
        power -= step;
    }
}

fn shift_left(number: &mut Vec<u32>, bits: u64) {
    mul_add(number, 1 << (bits % 32), 0);
    number.splice(0..0, core::iter::repeat_n(0, (bits / 32) as usize));
}

fn bit_length(number: &[u32]) -> i64 {
    number.last().map_or(0, |top| number.len() as i64 * 32 - i64::from(top.leading_zeros()))
}

fn compare(a: &[u32], b: &[u32]) -> core::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

/// `a = a - b`, for `a >= b`.
fn subtract(a: &mut Vec<u32>, b: &[u32]) {
    let mut borrow = 0;
    for (at, limb) in a.iter_mut().enumerate() {
        let wide = i64::from(*limb) - i64::from(b.get(at).copied().unwrap_or(0)) - borrow;
        *limb = wide as u32;
        borrow = i64::from(wide < 0);
    }
    while a.last() == Some(&0) {
        a.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same(text: &str) {
        let ours = parse_f64(text);
        let core = text.parse::<f64>().ok();
        assert_eq!(ours.map(f64::to_bits), core.map(f64::to_bits), "{text:?}: {ours:?} against core's {core:?}");
    }

    #[test]
    fn reads_what_core_reads() {
        for text in [
            "0",
            "-0",
            "+0",
            "00",
            "0.0",
            ".0",
            "0.",
            ".",
            "",
            "-",
            "+",
            "e5",
            "1e",
            "1e+",
            "1e-",
            "1.5e3",
            "1E3",
            "1e+3",
            "-1.5e-3",
            "0.7",
            "1",
            "12.0",
            "9007199254740993",
            "9007199254740992",
            "123456789012345678901234567890",
            "1e22",
            "1e23",
            "1e-22",
            "1e-23",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e309",
            "1e400",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "1e-400",
            "inf",
            "-inf",
            "+infinity",
            "INF",
            "Infinity",
            "NaN",
            "nan",
            "-nan",
            "infinit",
            "in",
            " 1",
            "1 ",
            "1..0",
            "1.0.0",
            "0x10",
            "1_0",
            "١",
            "1e99999999999999999999",
            "1e-99999999999999999999",
            "0e99999999",
            "0.000000000000000000000000000000000000000000000000001",
            "1000000000000000000000000000000.5",
            "0.1",
            "0.2",
            "0.30000000000000004",
            "3.141592653589793238462643383279",
            "5e-324",
            "7.5e-324",
        ] {
            same(text);
        }
        // Halfway between two f64s, then a hair either side, past the 768 digits kept.
        let half = "9007199254740993";
        same(half);
        same(&format!("{half}.{}", "0".repeat(800)));
        same(&format!("{half}.{}1", "0".repeat(800)));
        same(&format!("9007199254740992.{}1", "9".repeat(800)));
    }

    /// `(terms[0] + terms[1] + ...) / 2` written out exactly: each term in full (1076 places
    /// after the point hold any f64 and any half of one), added and halved digit by digit.
    fn half_of_sum(terms: &[f64]) -> String {
        let written: Vec<Vec<u8>> = terms.iter().map(|x| format!("{x:01400.1076}").into_bytes()).collect();
        let mut sum = written[0].clone();
        for term in &written[1..] {
            let mut carry = 0;
            for at in (0..sum.len()).rev().filter(|&at| term[at] != b'.') {
                let digit = sum[at] - b'0' + term[at] - b'0' + carry;
                (sum[at], carry) = (b'0' + digit % 10, digit / 10);
            }
            assert_eq!(carry, 0, "1400 places hold the sum");
        }
        let mut remainder = 0;
        let half: String = sum
            .iter()
            .map(|&d| {
                if d == b'.' {
                    return '.';
                }
                let value = remainder * 10 + d - b'0';
                remainder = value % 2;
                char::from(b'0' + value / 2)
            })
            .collect();
        assert_eq!(remainder, 0, "1076 places hold half of any sum of f64s");
        half.trim_start_matches('0').trim_end_matches('0').trim_end_matches('.').to_owned()
    }

    fn next_up(x: f64) -> f64 {
        f64::from_bits(x.to_bits() + 1)
    }

    /// A decimal exactly halfway between two f64s, as an integer times a power of ten too, then a
    /// hair below and a hair above it, the hair hundreds of digits out.
    fn same_around_halfway(halfway: &str) {
        same(halfway);
        let (whole, places) = halfway.split_once('.').unwrap_or((halfway, ""));
        same(&format!("{whole}{places}e-{}", places.len()));
        let mut below = halfway.to_owned().into_bytes();
        if places.is_empty() {
            below.push(b'.');
        }
        for digit in below.iter_mut().rev().filter(|d| **d != b'.') {
            if *digit > b'0' {
                *digit -= 1;
                break;
            }
            *digit = b'9';
        }
        same(&format!("{}{}", String::from_utf8(below).unwrap(), "9".repeat(900)));
        same(&format!("{halfway}{}{}1", if places.is_empty() { "." } else { "" }, "0".repeat(900)));
    }

    #[test]
    fn rounds_halfway_points_as_core_does() {
        let largest_subnormal = f64::from_bits((1 << 52) - 1);
        for low in [
            0.0,
            5e-324,
            1e-323,
            largest_subnormal,
            f64::MIN_POSITIVE,
            next_up(f64::MIN_POSITIVE),
            1e-300,
            0.1,
            1.0,
            9007199254740992.0,
            1e300,
            f64::from_bits(f64::MAX.to_bits() - 1),
        ] {
            same_around_halfway(&half_of_sum(&[low, next_up(low)]));
        }
        // Between f64::MAX and 2^1024: ties to even go up, to infinity.
        let top_half_ulp = 2f64.powi(970);
        same_around_halfway(&half_of_sum(&[f64::MAX, f64::MAX, 2.0 * top_half_ulp]));
        let two_to_1024 = half_of_sum(&[2f64.powi(1023); 4]);
        same(&two_to_1024);
        same(&format!("{two_to_1024}e-1"));
        // 2^-1075, half the smallest subnormal, and its first 17 digits either side.
        same(&half_of_sum(&[0.0, 5e-324]));
        same("2.4703282292062327e-324");
        same("2.4703282292062328e-324");
        same("1e-324");
        same("4.4501477170144023e-308");
        same("2.2250738585072009e-308");
        same("2.2250738585072012e-308");
    }

    #[test]
    fn reads_long_and_hostile_digit_strings_as_core_does() {
        let halfway_above_one = half_of_sum(&[1.0, next_up(1.0)]);
        same(&format!("{halfway_above_one}{}", "0".repeat(100_000)));
        same(&format!("{halfway_above_one}{}1", "0".repeat(100_000)));
        same(&format!("1{}e-100000", "0".repeat(100_000)));
        same(&format!("0.{}1e100001", "0".repeat(100_000)));
        // A megabyte of digits is one pass: no quadratic work and no megabyte-sized integer.
        for digit in ["1", "5", "9"] {
            let megabyte = digit.repeat(1 << 20);
            same(&megabyte);
            same(&format!("{megabyte}e-1048576"));
            same(&format!("0.{megabyte}"));
            same(&format!("{megabyte}e-1048890"));
        }
        same(&format!("0.{}1", "0".repeat(1 << 20)));
        // core reads an exponent's digits only until it reaches 65,536.
        same(&format!("{}e-1996910", "1".repeat(200_000)));
        same(&format!("0.{}1e700050", "0".repeat(70_000)));
        same(&format!("{}e-1048576", "0".repeat(1 << 20)));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1_000, ..ProptestConfig::default() })]

        #[test]
        fn any_f64_written_in_many_digits_or_halfway_to_the_next_reads_as_core_reads_it(
            bits in 0..f64::MAX.to_bits(), digits in 17usize..800
        ) {
            let x = f64::from_bits(bits);
            same(&format!("{x:.digits$e}"));
            same(&format!("{x:.1076}"));
            same_around_halfway(&half_of_sum(&[x, next_up(x)]));
        }

        #[test]
        fn any_long_decimal_text_reads_as_core_reads_it(text in "[0-9]{1,400}(\\.[0-9]{0,600})?([eE]-?[0-9]{1,3})?") {
            same(&text);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        #[test]
        fn any_float_written_any_way_reads_back(x in any::<f64>(), digits in 1usize..25) {
            same(&format!("{x}"));
            same(&format!("{x:e}"));
            same(&format!("{x:.digits$e}"));
            same(&format!("{x:.digits$}"));
        }

        #[test]
        fn any_decimal_text_reads_as_core_reads_it(text in "[-+]?[0-9]{0,30}(\\.[0-9]{0,30})?([eE][-+]?[0-9]{1,4})?") {
            same(&text);
        }

        #[test]
        fn any_short_text_reads_as_core_reads_it(text in "[-+.eE0-9a-z]{0,8}") {
            same(&text);
        }
    }
}
