//! Python's `random.Random(seed)`, output for output: BFCL's backends draw their ids,
//! timestamps and readings from it, and their result strings must match Python's.
//! A Mersenne Twister (MT19937) seeded as CPython seeds it, with CPython 3.11's
//! `random()`, `getrandbits`, `randrange`/`randint` (by rejection on `getrandbits`),
//! `choice`, `shuffle` and `uniform` built on it. Written from the published MT19937
//! algorithm and the documented behaviour of Python's `random` module; checked against
//! fixtures CPython produced (tests/bfcl_py/generate_fixtures.py).

use num_bigint::{BigInt, BigUint};
use sha2::{Digest, Sha512};

/// MT19937's state size in 32-bit words.
const N: usize = 624;
/// MT19937's middle word offset.
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// Why a draw fails, with the text of the exception Python raises (see
/// [`RandomError::python_type`] for its type).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RandomError {
    /// `randrange(start, stop)` (step 1) or `randint` over an empty range.
    #[error("empty range for randrange() ({start}, {stop}, {width})")]
    EmptyUnitRange {
        /// The range's start.
        start: i128,
        /// The range's stop (exclusive).
        stop: i128,
        /// `stop - start`.
        width: i128,
    },
    /// `randrange(stop)` or a stepped `randrange` over an empty range.
    #[error("empty range for randrange()")]
    EmptyRange,
    /// `randrange` with step 0.
    #[error("zero step for randrange()")]
    ZeroStep,
    /// `choice` of an empty sequence.
    #[error("Cannot choose from an empty sequence")]
    EmptySequence,
    /// Arguments whose arithmetic leaves i128 (Python's ints are unbounded; BFCL's
    /// ranges are far smaller).
    #[error("int too large to convert")]
    Overflow,
}

impl RandomError {
    /// The Python exception type of the error (`ValueError`, `IndexError`...).
    pub fn python_type(&self) -> &'static str {
        match self {
            RandomError::EmptyUnitRange { .. }
            | RandomError::EmptyRange
            | RandomError::ZeroStep => "ValueError",
            RandomError::EmptySequence => "IndexError",
            RandomError::Overflow => "OverflowError",
        }
    }
}

/// A generator in the state `random.Random(seed)` starts in, drawing as CPython 3.11.
#[derive(Clone)]
pub struct Random {
    state: [u32; N],
    /// Next word of `state` to hand out; `N` when the block is used up.
    index: usize,
}

impl std::fmt::Debug for Random {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Random")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl Random {
    /// `random.Random(seed)` for an int seed. Python seeds with the absolute value, so
    /// `-5` and `5` give the same stream.
    pub fn new(seed: i128) -> Random {
        Random::from_magnitude(&BigUint::from(seed.unsigned_abs()))
    }

    /// [`Random::new`], copied from a generator kept per seed. Every trial and every
    /// judge replay seeds its backends afresh, nearly always with one of a few seeds, and
    /// seeding costs more than the copy (it took a tenth of replaying BFCL's multi-turn
    /// results). At most 64 seeds are kept; others are seeded each time.
    pub fn cached(seed: i128) -> Random {
        static SEEDED: std::sync::Mutex<Vec<(i128, Random)>> = std::sync::Mutex::new(Vec::new());
        let mut seeded = SEEDED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, r)) = seeded.iter().find(|(s, _)| *s == seed) {
            return r.clone();
        }
        let r = Random::new(seed);
        if seeded.len() < 64 {
            seeded.push((seed, r.clone()));
        }
        r
    }

    /// `random.Random(seed)` for an int seed of any size.
    pub fn from_int(seed: &BigInt) -> Random {
        Random::from_magnitude(seed.magnitude())
    }

    /// `random.Random(seed)` for a str seed: Python (seed version 2) seeds with the int
    /// whose big-endian bytes are the UTF-8 text followed by its SHA-512 digest.
    pub fn from_str_seed(seed: &str) -> Random {
        let mut bytes = seed.as_bytes().to_vec();
        bytes.extend_from_slice(&Sha512::digest(seed.as_bytes()));
        Random::from_magnitude(&BigUint::from_bytes_be(&bytes))
    }

    /// Python's int seeding: the key is the number's 32-bit words, least significant
    /// first, at least one word (so 0 seeds with the key `[0]`).
    fn from_magnitude(seed: &BigUint) -> Random {
        let mut key = seed.to_u32_digits();
        if key.is_empty() {
            key.push(0);
        }
        let mut r = Random {
            state: [0; N],
            index: N,
        };
        r.init_by_array(&key);
        r
    }

    /// MT19937's `init_genrand`: fill the state from one 32-bit value.
    fn init_genrand(&mut self, s: u32) {
        self.state[0] = s;
        for i in 1..N {
            let prev = self.state[i - 1];
            self.state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        self.index = N;
    }

    /// MT19937's `init_by_array`: mix a key of any length into the state.
    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let mt = &mut self.state;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = mt[i - 1];
            mt[i] = (mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = mt[i - 1];
            mt[i] =
                (mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        // A non-zero initial state is guaranteed by setting the top bit.
        mt[0] = 0x8000_0000;
    }

    /// MT19937's next tempered 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// Regenerate the whole block of `N` words.
    fn twist(&mut self) {
        let mt = &mut self.state;
        for k in 0..N {
            let y = (mt[k] & UPPER_MASK) | (mt[(k + 1) % N] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            mt[k] = mt[(k + M) % N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// `random()`: a float in [0, 1) with 53 random bits, from two outputs (27 and 26
    /// high bits).
    pub fn random(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `getrandbits(k)`: an int of `k` random bits. Each 32-bit word takes one output,
    /// least significant word first; the last word keeps the high bits of its output.
    pub fn getrandbits(&mut self, k: u32) -> BigUint {
        let mut words = Vec::with_capacity(k.div_ceil(32) as usize);
        let mut left = k;
        while left > 0 {
            let r = self.next_u32();
            words.push(if left < 32 { r >> (32 - left) } else { r });
            left = left.saturating_sub(32);
        }
        BigUint::from_slice(&words)
    }

    /// `getrandbits(k)` for `k <= 128`, as a u128 (the same outputs consumed).
    fn bits_u128(&mut self, k: u32) -> u128 {
        debug_assert!(k <= 128);
        let mut value = 0u128;
        let mut shift = 0;
        while shift < k {
            let left = k - shift;
            let r = self.next_u32();
            let word = if left < 32 { r >> (32 - left) } else { r };
            value |= u128::from(word) << shift;
            shift += 32;
        }
        value
    }

    /// `_randbelow(n)`: an int in [0, n), by drawing `n.bit_length()` bits until the
    /// draw is below `n`. `n` must be positive; 0 gives 0 (Python would loop forever).
    pub fn randbelow(&mut self, n: u128) -> u128 {
        if n == 0 {
            return 0;
        }
        let k = 128 - n.leading_zeros();
        loop {
            let r = self.bits_u128(k);
            if r < n {
                return r;
            }
        }
    }

    /// `randrange(stop)`: an int in [0, stop).
    pub fn randrange_to(&mut self, stop: i128) -> Result<i128, RandomError> {
        if stop > 0 {
            Ok(self.randbelow(stop as u128) as i128)
        } else {
            Err(RandomError::EmptyRange)
        }
    }

    /// `randrange(start, stop, step)`: one of `range(start, stop, step)`.
    pub fn randrange(&mut self, start: i128, stop: i128, step: i128) -> Result<i128, RandomError> {
        let width = stop.checked_sub(start).ok_or(RandomError::Overflow)?;
        if step == 1 {
            if width > 0 {
                let r = self.randbelow(width as u128) as i128;
                return start.checked_add(r).ok_or(RandomError::Overflow);
            }
            return Err(RandomError::EmptyUnitRange { start, stop, width });
        }
        // The number of items, by Python's floor division.
        let n = match step {
            0 => return Err(RandomError::ZeroStep),
            s if s > 0 => floor_div(width.checked_add(s - 1), s),
            s => floor_div(width.checked_add(s + 1), s),
        }
        .ok_or(RandomError::Overflow)?;
        if n <= 0 {
            return Err(RandomError::EmptyRange);
        }
        let r = self.randbelow(n as u128) as i128;
        step.checked_mul(r)
            .and_then(|offset| start.checked_add(offset))
            .ok_or(RandomError::Overflow)
    }

    /// `randint(a, b)`: an int in [a, b], both ends included (`randrange(a, b + 1)`).
    pub fn randint(&mut self, a: i128, b: i128) -> Result<i128, RandomError> {
        let stop = b.checked_add(1).ok_or(RandomError::Overflow)?;
        self.randrange(a, stop, 1)
    }

    /// `choice(seq)` for a sequence of `len` items: the index Python picks.
    pub fn choice(&mut self, len: usize) -> Result<usize, RandomError> {
        if len == 0 {
            return Err(RandomError::EmptySequence);
        }
        Ok(self.randbelow(len as u128) as usize)
    }

    /// `shuffle(items)` in place: Python's Fisher-Yates from the last item down.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.randbelow(i as u128 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// `uniform(a, b)`: `a + (b - a) * random()`.
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.random()
    }
}

/// Python's `a // b` (rounding toward negative infinity) on an already checked `a`.
fn floor_div(a: Option<i128>, b: i128) -> Option<i128> {
    let a = a?;
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        Some(q - 1)
    } else {
        Some(q)
    }
}

#[cfg(test)]
mod tests;
