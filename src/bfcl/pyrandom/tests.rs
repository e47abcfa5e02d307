//! Tests of Python's `random.Random`: every seed CPython wrote into
//! fixtures/bfcl_py/random.jsonl, and hand-picked edge cases.

use super::*;
use crate::bfcl::pyfmt::float_repr;
use crate::bfcl::pyfmt::tests::untag;
use crate::bfcl::value::PyValue;
use serde_json::Value;

const FIXTURE: &str = include_str!("../../../fixtures/bfcl_py/random.jsonl");

fn generator(seed: &PyValue) -> Random {
    match seed {
        PyValue::Int(i) => Random::new(*i),
        PyValue::Other { type_name, repr } if type_name == "int" => {
            Random::from_int(&repr.parse().expect("big int seed"))
        }
        PyValue::Str(s) => Random::from_str_seed(s),
        other => panic!("unexpected seed {other}"),
    }
}

/// The fixture's list under `key`, as texts (ints are written as strings, float bits
/// and shuffles as JSON numbers and arrays).
fn expected(line: &Value, key: &str) -> Vec<String> {
    line[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}"))
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// `n` draws from a fresh generator, as texts.
fn draws(seed: &PyValue, n: usize, mut f: impl FnMut(&mut Random) -> String) -> Vec<String> {
    let mut r = generator(seed);
    (0..n).map(|_| f(&mut r)).collect()
}

fn bits(x: f64) -> String {
    x.to_bits().to_string()
}

#[test]
fn every_fixture_seed_matches_cpython() {
    let mut lines = FIXTURE.lines();
    let header: Value = serde_json::from_str(lines.next().expect("header")).unwrap();
    assert_eq!(header["fixture"], "random");
    assert_eq!(header["implementation"], "CPython");
    let mut seeds = 0;
    for line in lines {
        let line: Value = serde_json::from_str(line).unwrap();
        let seed = untag(&line["seed"]);
        let int = |r: Result<i128, RandomError>| r.unwrap().to_string();
        let checks: Vec<(&str, Vec<String>)> = vec![
            ("random", draws(&seed, 12, |r| bits(r.random()))),
            ("random_repr", draws(&seed, 12, |r| float_repr(r.random()))),
            (
                "getrandbits32",
                draws(&seed, 10, |r| r.getrandbits(32).to_string()),
            ),
            (
                "getrandbits64",
                draws(&seed, 10, |r| r.getrandbits(64).to_string()),
            ),
            (
                "getrandbits100",
                draws(&seed, 10, |r| r.getrandbits(100).to_string()),
            ),
            (
                "getrandbits7",
                draws(&seed, 10, |r| r.getrandbits(7).to_string()),
            ),
            ("randint_1_10", draws(&seed, 30, |r| int(r.randint(1, 10)))),
            (
                "randint_0_1e12",
                draws(&seed, 10, |r| int(r.randint(0, 10i128.pow(12)))),
            ),
            (
                "randint_bfcl_ids",
                draws(&seed, 10, |r| {
                    int(r.randint(100_000_000_000, 999_999_999_999))
                }),
            ),
            (
                "randrange_0_1000_7",
                draws(&seed, 10, |r| int(r.randrange(0, 1000, 7))),
            ),
            ("randrange_1", draws(&seed, 5, |r| int(r.randrange_to(1)))),
            (
                "randrange_big",
                draws(&seed, 5, |r| int(r.randrange(-(1 << 70), 1 << 90, 1))),
            ),
            (
                "choice17",
                draws(&seed, 20, |r| r.choice(17).unwrap().to_string()),
            ),
            (
                "shuffle10",
                draws(&seed, 3, |r| {
                    let mut items: Vec<u32> = (0..10).collect();
                    r.shuffle(&mut items);
                    serde_json::to_string(&items).unwrap()
                }),
            ),
            (
                "uniform_1_5",
                draws(&seed, 10, |r| bits(r.uniform(1.0, 5.0))),
            ),
            ("mixed", mixed(&seed)),
        ];
        for (key, got) in checks {
            let want = expected(&line, key);
            assert!(!want.is_empty(), "{key}: empty fixture list");
            assert_eq!(got, want, "seed {seed}, {key}");
        }
        seeds += 1;
    }
    assert!(seeds >= 15, "only {seeds} seeds");
}

/// The generator's interleaved calls on one generator.
fn mixed(seed: &PyValue) -> Vec<String> {
    let mut r = generator(seed);
    let mut out = Vec::new();
    for i in 0..6 {
        out.push(r.randint(100_000, 999_999).unwrap().to_string());
        out.push(bits(r.uniform(-10.0, 40.0)));
        out.push(r.getrandbits(i * 13).to_string());
        out.push(r.randrange(10, -20, -3).unwrap().to_string());
    }
    out
}

#[test]
fn known_python_values() {
    // Values quoted widely for CPython (`random.seed(42); random.random()`).
    let mut r = Random::new(42);
    assert_eq!(r.random(), 0.6394267984578837);
    assert_eq!(Random::new(0).random(), 0.8444218515250481);
    // Python seeds with abs(seed).
    assert_eq!(Random::new(-42).random(), 0.6394267984578837);
    assert_eq!(Random::new(42).getrandbits(0), BigUint::ZERO);
}

#[test]
fn errors_carry_python_texts() {
    let mut r = Random::new(1);
    let e = r.randint(5, 1).unwrap_err();
    assert_eq!(e.to_string(), "empty range for randrange() (5, 2, -3)");
    assert_eq!(e.python_type(), "ValueError");
    assert_eq!(
        r.randrange(0, 10, 0).unwrap_err().to_string(),
        "zero step for randrange()"
    );
    assert_eq!(r.randrange(0, 10, -1), Err(RandomError::EmptyRange));
    assert_eq!(r.randrange_to(0), Err(RandomError::EmptyRange));
    assert_eq!(r.choice(0).unwrap_err().python_type(), "IndexError");
    assert_eq!(r.randint(0, i128::MAX), Err(RandomError::Overflow));
    // A negative step counts down.
    for _ in 0..50 {
        let v = r.randrange(10, -20, -3).unwrap();
        assert!((-20 + 1..=10).contains(&v) && (10 - v) % 3 == 0, "{v}");
    }
}
