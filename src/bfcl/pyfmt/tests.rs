//! Tests of the Python text forms: every case CPython wrote into
//! fixtures/bfcl_py/pyfmt.jsonl, and hand-picked edge cases.

use super::*;
use serde_json::Value;

const FIXTURE: &str = include_str!("../../../fixtures/bfcl_py/pyfmt.jsonl");

/// The Python value a fixture's type-tagged JSON stands for (see the generator's
/// docstring for the tags).
pub(in crate::bfcl) fn untag(v: &Value) -> PyValue {
    let tag = v["t"].as_str().expect("tag");
    let items = || -> Vec<PyValue> {
        v["v"]
            .as_array()
            .expect("items")
            .iter()
            .map(untag)
            .collect()
    };
    match tag {
        "none" => PyValue::None,
        "bool" => PyValue::Bool(v["v"].as_bool().expect("bool")),
        "int" => {
            let text = v["v"].as_str().expect("int text");
            text.parse().map(PyValue::Int).unwrap_or(PyValue::Other {
                type_name: "int".into(),
                repr: text.into(),
            })
        }
        "float" => PyValue::Float(f64::from_bits(v["bits"].as_u64().expect("bits"))),
        "str" => PyValue::Str(v["v"].as_str().expect("str").into()),
        "list" => PyValue::List(items()),
        "tuple" => PyValue::Tuple(items()),
        "dict" => PyValue::Dict(
            v["v"]
                .as_array()
                .expect("entries")
                .iter()
                .map(|e| (untag(&e[0]), untag(&e[1])))
                .collect(),
        ),
        "other" => PyValue::Other {
            type_name: v["type"].as_str().expect("type").into(),
            repr: v["repr"].as_str().expect("repr").into(),
        },
        t => panic!("unknown tag {t}"),
    }
}

#[test]
fn every_fixture_case_matches_cpython() {
    let mut lines = FIXTURE.lines();
    let header: Value = serde_json::from_str(lines.next().expect("header")).unwrap();
    assert_eq!(header["fixture"], "pyfmt");
    assert_eq!(header["implementation"], "CPython");
    let mut failures = Vec::new();
    let mut cases = 0;
    for line in lines {
        let case: Value = serde_json::from_str(line).unwrap();
        let v = untag(&case["value"]);
        let json = match json_dumps(&v) {
            Ok(text) => ("json", text),
            Err(e) => ("json_error", e.to_string()),
        };
        let got = [
            ("repr", py_repr(&v)),
            ("str", py_str(&v)),
            json,
            ("result", result_text(&v)),
        ];
        for (key, text) in got {
            if case[key].as_str() != Some(text.as_str()) {
                failures.push(format!("{key}: python {} rust {text:?}", case[key]));
            }
        }
        cases += 1;
    }
    // The fixture has over a thousand values; an empty or truncated file must fail.
    assert!(cases > 1000, "only {cases} cases");
    assert!(
        failures.is_empty(),
        "{} of {cases} cases differ, e.g.:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn floats_switch_notation_where_python_does() {
    let cases = [
        (1.0, "1.0"),
        (0.1, "0.1"),
        (-0.0, "-0.0"),
        (1e16, "1e+16"),
        (9999999999999998.0, "9999999999999998.0"),
        (1.5e-7, "1.5e-07"),
        (1e-4, "0.0001"),
        (1e-5, "1e-05"),
        (123456789.125, "123456789.125"),
        // Halfway between two 16-digit candidates: Python takes the even one.
        (961_224_003_834_359.0 + 0.25, "961224003834359.2"),
        (961_224_003_834_359.0 + 0.75, "961224003834359.8"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (5e-324, "5e-324"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (f64::NAN, "nan"),
    ];
    for (x, want) in cases {
        assert_eq!(float_repr(x), want, "{x:e}");
    }
}

#[test]
fn strings_pick_quotes_and_escapes_as_python() {
    assert_eq!(str_repr("it's"), r#""it's""#);
    assert_eq!(str_repr(r#"both ' and ""#), r#"'both \' and "'"#);
    assert_eq!(str_repr("a\tb\n\\"), r"'a\tb\n\\'");
    assert_eq!(str_repr("\u{7f}\u{a0}\u{ad}é"), r"'\x7f\xa0\xadé'");
    assert_eq!(
        str_repr("\u{200b}\u{2028}\u{e000}"),
        r"'\u200b\u2028\ue000'"
    );
    assert_eq!(str_repr("😀\u{f0000}"), r"'😀\U000f0000'");
    assert!(is_printable(' ') && !is_printable('\u{3000}') && is_printable('中'));
}

#[test]
fn json_dumps_follows_python_defaults() {
    use PyValue::*;
    let v = Dict(vec![
        (Int(1), Float(1.0)),
        (Bool(true), Float(f64::NAN)),
        (None, Tuple(vec![Float(f64::NEG_INFINITY)])),
        (Float(0.5), Str("é😀\u{7f}\"".into())),
    ]);
    assert_eq!(
        json_dumps(&v).unwrap(),
        r#"{"1": 1.0, "true": NaN, "null": [-Infinity], "0.5": "\u00e9\ud83d\ude00\u007f\""}"#
    );
    let bad = Dict(vec![(Tuple(vec![]), Int(1))]);
    assert_eq!(
        json_dumps(&bad).unwrap_err().to_string(),
        "keys must be str, int, float, bool or None, not tuple"
    );
    // BFCL falls back to str() for a dict json.dumps rejects.
    assert_eq!(result_text(&bad), "{(): 1}");
    assert_eq!(result_text(&List(vec![Str("a".into())])), "['a']");
    assert_eq!(result_text(&Str("plain".into())), "plain");
    assert_eq!(result_text(&Tuple(vec![Int(1)])), "(1,)");
}
