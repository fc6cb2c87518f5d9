//! Decimal text to `f64`, exactly as `str::parse::<f64>` reads it, without its 10 KB table.
//!
//! core's parser tries an exact fast path, then the Eisel-Lemire algorithm, whose table of 651
//! 128-bit powers of five is 10.4 KB of the wasm that gzip cannot shrink. The numbers this
//! package reads (a temperature, a Retry-After, a token count written `12.0`) take the fast path;
//! everything else takes core's own fallback, Simple Decimal Conversion (Nigel Tao and Ken
//! Thompson; ported below from core's `dec2flt/slow.rs` and `decimal_seq.rs`), which is slower
//! but always rounds to the nearest `f64` as well. So the answers are core's, bit for bit; only
//! the table is gone.

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
    if let Some(b'e' | b'E') = text.get(at) {
        at += 1;
        let negative = text.get(at) == Some(&b'-');
        if matches!(text.get(at), Some(b'-' | b'+')) {
            at += 1;
        }
        let start = at;
        let mut written: i64 = 0;
        while let Some(d @ b'0'..=b'9') = text.get(at) {
            written = (written * 10 + i64::from(d - b'0')).min(1 << 20);
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
    Some(f64::from_bits(slow_bits(text)))
}

/// 1e0 to 1e22, every one exact in an f64.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

const SIG_BITS: u32 = 52;
const EXP_MIN: i32 = -1022;
const INFINITE_POWER: i32 = 0x7ff;

/// The bits of the nearest f64 to a valid unsigned decimal (core's `parse_long_mantissa`): the
/// digits shifted by powers of two into [1/2, 1), then rounded at the mantissa's last bit.
fn slow_bits(text: &[u8]) -> u64 {
    const MAX_SHIFT: usize = 60;
    const POWERS: [u8; 19] = [0, 3, 6, 9, 13, 16, 19, 23, 26, 29, 33, 36, 39, 43, 46, 49, 53, 56, 59];
    let shift_for = |n: usize| POWERS.get(n).map_or(MAX_SHIFT, |&s| s as usize);
    let infinity = (INFINITE_POWER as u64) << SIG_BITS;

    let mut d = Decimal::read(text);
    if d.num_digits == 0 || d.decimal_point < -324 {
        return 0;
    } else if d.decimal_point >= 310 {
        return infinity;
    }
    let mut exp2 = 0_i32;
    while d.decimal_point > 0 {
        let shift = shift_for(d.decimal_point as usize);
        d.right_shift(shift);
        if d.decimal_point < -Decimal::DECIMAL_POINT_RANGE {
            return 0;
        }
        exp2 += shift as i32;
    }
    while d.decimal_point <= 0 {
        let shift = if d.decimal_point == 0 {
            match d.digits[0] {
                digit if digit >= 5 => break,
                0 | 1 => 2,
                _ => 1,
            }
        } else {
            shift_for((-d.decimal_point) as usize)
        };
        d.left_shift(shift);
        if d.decimal_point > Decimal::DECIMAL_POINT_RANGE {
            return infinity;
        }
        exp2 -= shift as i32;
    }
    // In [1/2, 1); the binary format's mantissa is in [1, 2).
    exp2 -= 1;
    while EXP_MIN > exp2 {
        let n = ((EXP_MIN - exp2) as usize).min(MAX_SHIFT);
        d.right_shift(n);
        exp2 += n as i32;
    }
    if (exp2 - EXP_MIN + 1) >= INFINITE_POWER {
        return infinity;
    }
    d.left_shift(SIG_BITS as usize + 1);
    let mut mantissa = d.round();
    if mantissa >= (1_u64 << (SIG_BITS + 1)) {
        // Rounding carried into the next bit.
        d.right_shift(1);
        exp2 += 1;
        mantissa = d.round();
        if (exp2 - EXP_MIN + 1) >= INFINITE_POWER {
            return infinity;
        }
    }
    let mut power2 = exp2 - EXP_MIN + 1;
    if mantissa < (1_u64 << SIG_BITS) {
        power2 -= 1;
    }
    (mantissa & ((1_u64 << SIG_BITS) - 1)) | ((power2 as u64) << SIG_BITS)
}

/// A decimal as its digits and the point's place: `digits[..num_digits]` are 0 to 9, the value
/// is 0.d1d2d3... * 10^decimal_point, and `truncated` says nonzero digits were dropped.
struct Decimal {
    num_digits: usize,
    decimal_point: i32,
    truncated: bool,
    digits: [u8; Decimal::MAX_DIGITS],
}

impl Decimal {
    /// The digits that can decide the rounding of an f64 (767), and one more.
    const MAX_DIGITS: usize = 768;
    /// The digits that fit in a u64.
    const MAX_DIGITS_WITHOUT_OVERFLOW: usize = 19;
    const DECIMAL_POINT_RANGE: i32 = 2047;

    fn add_digit(&mut self, digit: u8) {
        if self.num_digits < Self::MAX_DIGITS {
            self.digits[self.num_digits] = digit;
        }
        self.num_digits += 1;
    }

    /// A valid unsigned decimal (`magnitude` has checked it).
    fn read(text: &[u8]) -> Decimal {
        let mut d = Decimal { num_digits: 0, decimal_point: 0, truncated: false, digits: [0; Self::MAX_DIGITS] };
        let mut s = text;
        while let [b'0', rest @ ..] = s {
            s = rest;
        }
        while let [c @ b'0'..=b'9', rest @ ..] = s {
            d.add_digit(c - b'0');
            s = rest;
        }
        if let [b'.', rest @ ..] = s {
            s = rest;
            let first = s.len();
            if d.num_digits == 0 {
                while let [b'0', rest @ ..] = s {
                    s = rest;
                }
            }
            while let [c @ b'0'..=b'9', rest @ ..] = s {
                d.add_digit(c - b'0');
                s = rest;
            }
            d.decimal_point = s.len() as i32 - first as i32;
        }
        if d.num_digits != 0 {
            let read = &text[..text.len() - s.len()];
            let trailing_zeros = read.iter().rev().filter(|&&c| c != b'.').take_while(|&&c| c == b'0').count();
            d.decimal_point += trailing_zeros as i32;
            d.num_digits -= trailing_zeros;
            d.decimal_point += d.num_digits as i32;
            if d.num_digits > Self::MAX_DIGITS {
                d.truncated = true;
                d.num_digits = Self::MAX_DIGITS;
            }
        }
        if let [b'e' | b'E', rest @ ..] = s {
            s = rest;
            let negative = s.first() == Some(&b'-');
            if let [b'-' | b'+', rest @ ..] = s {
                s = rest;
            }
            let mut written = 0_i32;
            for &c in s {
                if written < 0x10000 {
                    written = 10 * written + i32::from(c - b'0');
                }
            }
            d.decimal_point += if negative { -written } else { written };
        }
        d
    }

    fn trim(&mut self) {
        while self.num_digits != 0 && self.digits[self.num_digits - 1] == 0 {
            self.num_digits -= 1;
        }
    }

    /// The integer part, rounded half to even (a dropped nonzero digit breaks the tie upwards).
    fn round(&self) -> u64 {
        if self.num_digits == 0 || self.decimal_point < 0 {
            return 0;
        } else if self.decimal_point >= Self::MAX_DIGITS_WITHOUT_OVERFLOW as i32 {
            return u64::MAX;
        }
        let dp = self.decimal_point as usize;
        let mut n = 0_u64;
        for i in 0..dp {
            n *= 10;
            if i < self.num_digits {
                n += u64::from(self.digits[i]);
            }
        }
        let mut round_up = false;
        if dp < self.num_digits {
            round_up = self.digits[dp] >= 5;
            if self.digits[dp] == 5 && dp + 1 == self.num_digits {
                round_up = self.truncated || (dp != 0 && self.digits[dp - 1] & 1 != 0);
            }
        }
        n + u64::from(round_up)
    }

    /// Multiplies by 2^shift.
    fn left_shift(&mut self, shift: usize) {
        if self.num_digits == 0 {
            return;
        }
        let new_digits = self.new_digits_of_left_shift(shift);
        let mut read = self.num_digits;
        let mut write = self.num_digits + new_digits;
        let mut n = 0_u64;
        let put = |d: &mut Decimal, write: usize, n: u64| {
            let (quotient, remainder) = (n / 10, n % 10);
            if write < Self::MAX_DIGITS {
                d.digits[write] = remainder as u8;
            } else if remainder > 0 {
                d.truncated = true;
            }
            quotient
        };
        while read != 0 {
            read -= 1;
            write -= 1;
            n += u64::from(self.digits[read]) << shift;
            n = put(self, write, n);
        }
        while n > 0 {
            write -= 1;
            n = put(self, write, n);
        }
        self.num_digits = (self.num_digits + new_digits).min(Self::MAX_DIGITS);
        self.decimal_point += new_digits as i32;
        self.trim();
    }

    /// Divides by 2^shift.
    fn right_shift(&mut self, shift: usize) {
        let mut read = 0;
        let mut write = 0;
        let mut n = 0_u64;
        while (n >> shift) == 0 {
            if read < self.num_digits {
                n = 10 * n + u64::from(self.digits[read]);
                read += 1;
            } else if n == 0 {
                return;
            } else {
                while (n >> shift) == 0 {
                    n *= 10;
                    read += 1;
                }
                break;
            }
        }
        self.decimal_point -= read as i32 - 1;
        if self.decimal_point < -Self::DECIMAL_POINT_RANGE {
            self.num_digits = 0;
            self.decimal_point = 0;
            self.truncated = false;
            return;
        }
        let mask = (1_u64 << shift) - 1;
        while read < self.num_digits {
            let digit = (n >> shift) as u8;
            n = 10 * (n & mask) + u64::from(self.digits[read]);
            read += 1;
            self.digits[write] = digit;
            write += 1;
        }
        while n > 0 {
            let digit = (n >> shift) as u8;
            n = 10 * (n & mask);
            if write < Self::MAX_DIGITS {
                self.digits[write] = digit;
                write += 1;
            } else if digit > 0 {
                self.truncated = true;
            }
        }
        self.num_digits = write;
        self.trim();
    }

    /// How many digits multiplying by 2^shift adds: the digits of 5^shift, and one fewer if
    /// this decimal's digits are below 5^shift's.
    fn new_digits_of_left_shift(&self, shift: usize) -> usize {
        let shift = shift & 63;
        let (a, b) = (LEFT_SHIFT[shift], LEFT_SHIFT[shift + 1]);
        let new_digits = usize::from(a >> 11);
        let pow5 = &POW5_DIGITS[usize::from(a & 0x7ff)..usize::from(b & 0x7ff)];
        for (i, &p5) in pow5.iter().enumerate() {
            if i >= self.num_digits || self.digits[i] < p5 {
                return new_digits - 1;
            } else if self.digits[i] > p5 {
                return new_digits;
            }
        }
        new_digits
    }
}

/// Per shift: the digits a left shift adds (top 5 bits) and where 5^shift's digits start in
/// `POW5_DIGITS` (low 11 bits).
#[rustfmt::skip]
const LEFT_SHIFT: [u16; 65] = [
    0x0000, 0x0800, 0x0801, 0x0803, 0x1006, 0x1009, 0x100D, 0x1812, 0x1817, 0x181D, 0x2024,
    0x202B, 0x2033, 0x203C, 0x2846, 0x2850, 0x285B, 0x3067, 0x3073, 0x3080, 0x388E, 0x389C,
    0x38AB, 0x38BB, 0x40CC, 0x40DD, 0x40EF, 0x4902, 0x4915, 0x4929, 0x513E, 0x5153, 0x5169,
    0x5180, 0x5998, 0x59B0, 0x59C9, 0x61E3, 0x61FD, 0x6218, 0x6A34, 0x6A50, 0x6A6D, 0x6A8B,
    0x72AA, 0x72C9, 0x72E9, 0x7B0A, 0x7B2B, 0x7B4D, 0x8370, 0x8393, 0x83B7, 0x83DC, 0x8C02,
    0x8C28, 0x8C4F, 0x9477, 0x949F, 0x94C8, 0x9CF2, 0x051C, 0x051C, 0x051C, 0x051C,
];

/// The decimal digits of 5^1, 5^2, ... 5^60, one after another.
static POW5_DIGITS: [u8; 0x051C] = pow5_digits();

/// Built at compile time, so the wasm holds the digits and not the code that makes them.
const fn pow5_digits() -> [u8; 0x051C] {
    let mut out = [0u8; 0x051C];
    let mut power = [0u8; 64]; // 5^k, least significant digit first
    power[0] = 1;
    let mut len = 1;
    let mut at = 0;
    let mut k = 1;
    while k <= 60 {
        let mut carry = 0;
        let mut i = 0;
        while i < len {
            let v = power[i] * 5 + carry;
            power[i] = v % 10;
            carry = v / 10;
            i += 1;
        }
        if carry > 0 {
            power[len] = carry;
            len += 1;
        }
        let mut j = len;
        while j > 0 {
            j -= 1;
            out[at] = power[j];
            at += 1;
        }
        k += 1;
    }
    out
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
    fn the_table_is_the_digits_of_the_powers_of_five() {
        // 5^1 to 5^55, as far as a u128 goes.
        let mut expected = Vec::new();
        let mut power: u128 = 1;
        for _ in 1..=55 {
            power *= 5;
            expected.extend(power.to_string().bytes().map(|b| b - b'0'));
        }
        assert_eq!(&POW5_DIGITS[..expected.len()], &expected[..]);
        assert_eq!(POW5_DIGITS.len(), usize::from(LEFT_SHIFT[61] & 0x7ff), "the table ends where 5^60's digits end");
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
