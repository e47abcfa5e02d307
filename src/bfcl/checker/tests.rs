//! The checker against BFCL's verdicts, item by item.

use serde_json::json;

use super::fault::*;
use super::*;

fn funcs(v: serde_json::Value) -> Vec<Function> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|f| Function::from_bfcl(f).unwrap())
        .collect()
}

fn calls(v: serde_json::Value) -> Decoded {
    Decoded::Calls(
        v.as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let (name, args) = c.as_object().unwrap().iter().next().unwrap();
                (name.clone(), PyValue::from_json(args))
            })
            .collect(),
    )
}

const STRICT: Options = Options {
    strict: true,
    underscore_names: false,
};
const DEFAULT: Options = Options {
    strict: false,
    underscore_names: false,
};

fn err(v: &Verdict) -> Option<&str> {
    v.error_type.as_deref()
}

#[test]
fn category_names() {
    use Category::*;
    let cases = [
        ("simple_python", Simple),
        ("live_simple", Simple),
        ("multiple", Multiple),
        ("live_multiple", Multiple),
        ("parallel", Parallel),
        ("parallel_multiple", Parallel),
        ("live_parallel_multiple", Parallel),
        ("irrelevance", Irrelevance),
        ("live_irrelevance", Irrelevance),
        ("live_relevance", Relevance),
    ];
    for (name, cat) in cases {
        assert_eq!(Category::from_name(name), cat, "{name}");
    }
}

/// parallel_178 from the BFCL data (functions and answer verbatim in shape).
fn parallel_178() -> (Vec<Function>, Vec<GroundTruthCall>) {
    let f = funcs(
        json!([{"name": "get_stock_price", "description": "", "parameters": {"type": "dict", "properties": {
        "company_name": {"type": "string"}, "date": {"type": "string"},
        "exchange": {"type": "string", "default": "NASDAQ"}}, "required": ["company_name", "date"]}}]),
    );
    let gt = ground_truth_from_bfcl(&json!([
        {"get_stock_price": {"company_name": ["Microsoft", "Apple"], "date": ["2022-01-01"], "exchange": ["NASDAQ", ""]}},
        {"get_stock_price": {"company_name": ["Microsoft"], "date": ["2022-02-01"], "exchange": ["NASDAQ", ""]}},
        {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-01-01"], "exchange": ["NASDAQ", ""]}},
        {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-02-01"], "exchange": ["NASDAQ", ""]}}
    ]))
    .unwrap();
    (f, gt)
}

#[test]
fn parallel_178_greedy_fails_matching_passes() {
    let (f, gt) = parallel_178();
    let bad_order = calls(json!([
        {"get_stock_price": {"company_name": "Apple", "date": "2022-01-01"}},
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-01-01"}},
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
        {"get_stock_price": {"company_name": "Apple", "date": "2022-02-01"}}
    ]));
    let good_order = calls(json!([
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-01-01"}},
        {"get_stock_price": {"company_name": "Apple", "date": "2022-01-01"}},
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
        {"get_stock_price": {"company_name": "Apple", "date": "2022-02-01"}}
    ]));
    let strict = check(Category::Parallel, &f, &gt, &bad_order, &STRICT);
    assert_eq!(err(&strict), Some(CANNOT_FIND_MATCH));
    assert!(check(Category::Parallel, &f, &gt, &good_order, &STRICT).valid);
    assert!(check(Category::Parallel, &f, &gt, &bad_order, &DEFAULT).valid);
    assert!(check(Category::Parallel, &f, &gt, &good_order, &DEFAULT).valid);
    // A genuinely wrong answer still fails in default mode, with BFCL's error type.
    let wrong = calls(json!([
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-01-01"}},
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-01-01"}},
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
        {"get_stock_price": {"company_name": "Apple", "date": "2022-02-01"}}
    ]));
    let v = check(Category::Parallel, &f, &gt, &wrong, &DEFAULT);
    assert_eq!(err(&v), Some(CANNOT_FIND_MATCH));
}

#[test]
fn a_failed_pairing_names_the_first_expected_call_left_out() {
    let (f, _) = parallel_178();
    // Expected calls 0 and 1 both need the one Apple call: 1 is the first that cannot
    // be paired together with the calls before it.
    let gt = ground_truth_from_bfcl(&json!([
        {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-01-01"]}},
        {"get_stock_price": {"company_name": ["Apple"], "date": ["2022-01-01"]}},
        {"get_stock_price": {"company_name": ["Microsoft"], "date": ["2022-02-01"]}},
        {"get_stock_price": {"company_name": ["Microsoft"], "date": ["2022-02-01"]}}
    ]))
    .unwrap();
    let answer = calls(json!([
        {"get_stock_price": {"company_name": "Apple", "date": "2022-01-01"}},
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}},
        {"get_stock_price": {"company_name": "Microsoft", "date": "2022-02-01"}}
    ]));
    let v = check(Category::Parallel, &f, &gt, &answer, &DEFAULT);
    assert_eq!(err(&v), Some(CANNOT_FIND_MATCH));
    assert_eq!(
        v.messages[0],
        "No pairing of model calls with expected calls passes: expected call 1 cannot be paired together with the ones before it."
    );
    // The greedy pass's messages follow.
    assert!(v.messages[1].starts_with("Could not find a matching function"));
}

#[test]
fn parallel_96_optional_param_order() {
    let f = funcs(
        json!([{"name": "calculate_electric_field_strength", "description": "", "parameters": {"type": "dict", "properties": {
        "charge": {"type": "float"}, "distance": {"type": "float"},
        "medium_permittivity": {"type": "float"}}, "required": ["charge", "distance"]}}]),
    );
    let gt = ground_truth_from_bfcl(&json!([
        {"calculate_electric_field_strength": {"charge": [0.01], "distance": [4.0], "medium_permittivity": [8.854e-12, ""]}},
        {"calculate_electric_field_strength": {"charge": [0.01], "distance": [4.0], "medium_permittivity": [5e-12, ""]}}
    ]))
    .unwrap();
    let fails = calls(json!([
        {"calculate_electric_field_strength": {"charge": 0.01, "distance": 4}},
        {"calculate_electric_field_strength": {"charge": 0.01, "distance": 4, "medium_permittivity": 8.854e-12}}
    ]));
    let passes = calls(json!([
        {"calculate_electric_field_strength": {"charge": 0.01, "distance": 4, "medium_permittivity": 8.854e-12}},
        {"calculate_electric_field_strength": {"charge": 0.01, "distance": 4}}
    ]));
    assert_eq!(
        err(&check(Category::Parallel, &f, &gt, &fails, &STRICT)),
        Some(CANNOT_FIND_MATCH)
    );
    assert!(check(Category::Parallel, &f, &gt, &passes, &STRICT).valid);
    assert!(check(Category::Parallel, &f, &gt, &fails, &DEFAULT).valid);
    assert!(check(Category::Parallel, &f, &gt, &passes, &DEFAULT).valid);
}

fn triangle() -> (Vec<Function>, Vec<GroundTruthCall>) {
    let f = funcs(
        json!([{"name": "geo.calculate_triangle_area", "description": "", "parameters": {"type": "dict", "properties": {
        "base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}},
        "required": ["base", "height"]}}]),
    );
    let gt = ground_truth_from_bfcl(&json!([
        {"geo.calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}
    ]))
    .unwrap();
    (f, gt)
}

#[test]
fn simple_checks_and_precedence() {
    let (f, gt) = triangle();
    let run = |v: serde_json::Value, o: &Options| check(Category::Simple, &f, &gt, &calls(v), o);
    assert!(
        run(
            json!([{"geo.calculate_triangle_area": {"base": 10, "height": 5}}]),
            &STRICT
        )
        .valid
    );
    assert!(
        run(
            json!([{"geo.calculate_triangle_area": {"height": 5, "base": 10, "unit": "U-nits"}}]),
            &STRICT
        )
        .valid
    );
    let us = Options {
        strict: true,
        underscore_names: true,
    };
    assert!(
        run(
            json!([{"geo_calculate_triangle_area": {"base": 10, "height": 5}}]),
            &us
        )
        .valid
    );
    let cases = [
        (
            json!([{"geo_calculate_triangle_area": {"base": 10, "height": 5}}]),
            "simple_function_checker:wrong_func_name",
        ),
        (
            json!([{"geo.calculate_triangle_area": {"base": 10}}]),
            "simple_function_checker:missing_required",
        ),
        (
            json!([{"geo.calculate_triangle_area": {"base": 10, "height": 5, "x": 1}}]),
            "simple_function_checker:unexpected_param",
        ),
        // The first bad parameter in the model's order decides.
        (
            json!([{"geo.calculate_triangle_area": {"height": 5.0, "base": 11}}]),
            "type_error:simple",
        ),
        (
            json!([{"geo.calculate_triangle_area": {"base": 11, "height": 5.0}}]),
            "value_error:others",
        ),
        (
            json!([{"geo.calculate_triangle_area": {"base": true, "height": 5}}]),
            "type_error:simple",
        ),
        (
            json!([{"geo.calculate_triangle_area": {"base": 10, "height": 5, "unit": "cm"}}]),
            "value_error:string",
        ),
        (json!([]), "simple_function_checker:wrong_count"),
    ];
    for (v, want) in cases {
        assert_eq!(err(&run(v.clone(), &STRICT)), Some(want), "{v}");
    }
    let fmt = Decoded::Calls(vec![("f".into(), PyValue::List(vec![]))]);
    assert_eq!(
        err(&check(Category::Simple, &f, &gt, &fmt, &STRICT)),
        Some("ast_decoder:decoder_wrong_output_format")
    );
    let failed = Decoded::Failed {
        reason: "text".into(),
        attempt: false,
    };
    assert_eq!(
        err(&check(Category::Simple, &f, &gt, &failed, &STRICT)),
        Some("ast_decoder:decoder_failed")
    );
}

#[test]
fn missing_optional_and_variables() {
    let f = funcs(
        json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
        "a": {"type": "integer"}, "b": {"type": "float"}, "c": {"type": "string"}}, "required": []}}]),
    );
    let gt = ground_truth_from_bfcl(
        &json!([{"f": {"a": ["", "dontcare"], "b": [2.0], "c": [null, ""]}}]),
    )
    .unwrap();
    let run = |v: serde_json::Value| check(Category::Simple, &f, &gt, &calls(v), &STRICT);
    assert_eq!(
        err(&run(json!([{"f": {}}]))),
        Some("simple_function_checker:missing_optional")
    );
    assert!(
        run(json!([{"f": {"b": 2}}])).valid,
        "int accepted for float"
    );
    assert!(
        run(json!([{"f": {"b": 2, "a": "dontcare"}}])).valid,
        "variable of the option type"
    );
    assert_eq!(
        err(&run(json!([{"f": {"b": 2, "a": "DontCare"}}]))),
        Some("value_error:others")
    );
    assert!(
        run(json!([{"f": {"b": 2, "c": null}}])).valid,
        "None accepted via options"
    );
    assert_eq!(
        err(&run(json!([{"f": {"b": 2, "c": "x"}}]))),
        Some("value_error:others")
    );
}

#[test]
fn nested_types_and_lists() {
    let f = funcs(
        json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
        "xs": {"type": "array", "items": {"type": "float"}},
        "ys": {"type": "array", "items": {"type": "string"}},
        "zs": {"type": "array", "items": {"type": "integer"}}}, "required": []}}]),
    );
    let gt = ground_truth_from_bfcl(&json!([{"f": {
        "xs": [[1.0, 2.5]], "ys": [["New York", "LA"], ""], "zs": [[1, 2], ""]}}]))
    .unwrap();
    let run = |v: serde_json::Value| check(Category::Simple, &f, &gt, &calls(v), &STRICT);
    assert!(run(json!([{"f": {"xs": [1.0, 2.5]}}])).valid);
    assert_eq!(
        err(&run(json!([{"f": {"xs": [1, 2.5]}}]))),
        Some("type_error:nested")
    );
    assert!(run(json!([{"f": {"xs": [1.0, 2.5], "ys": ["new-york", "l.a."]}}])).valid);
    assert_eq!(
        err(&run(
            json!([{"f": {"xs": [1.0, 2.5], "ys": ["LA", "New York"]}}])
        )),
        Some("value_error:list/tuple")
    );
    assert!(
        run(json!([{"f": {"xs": [1.0, 2.5], "ys": []}}])).valid,
        "[] matches the \"\" option"
    );
    assert!(
        run(json!([{"f": {"xs": [1.0, 2.5], "zs": [1.0, 2]}}])).valid,
        "\"\" option skips the nested type check"
    );
    assert_eq!(
        err(&run(json!([{"f": {"xs": "1,2"}}]))),
        Some("type_error:simple")
    );
}

#[test]
fn empty_option_list_reports_simple_type_error() {
    // live_simple_106-63-0 ships `[]` option lists; BFCL then says type_error:simple.
    let f = funcs(
        json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
        "xs": {"type": "array", "items": {"type": "string"}}}, "required": ["xs"]}}]),
    );
    let gt = ground_truth_from_bfcl(&json!([{"f": {"xs": []}}])).unwrap();
    let v = check(
        Category::Simple,
        &f,
        &gt,
        &calls(json!([{"f": {"xs": []}}])),
        &STRICT,
    );
    assert_eq!(err(&v), Some("type_error:simple"));
}

#[test]
fn dicts_and_lists_of_dicts() {
    let f = funcs(
        json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
        "d": {"type": "dict", "properties": {}},
        "ld": {"type": "array", "items": {"type": "dict"}}}, "required": []}}]),
    );
    let gt = ground_truth_from_bfcl(&json!([{"f": {
        "d": [{"city": ["New York", "NYC"], "zip": ["", "10001"]}, ""],
        "ld": [[{"k": ["A"]}, {"k": ["B"], "n": [1, ""]}], ""]}}]))
    .unwrap();
    let run = |v: serde_json::Value| check(Category::Simple, &f, &gt, &calls(v), &STRICT);
    assert!(run(json!([{"f": {"d": {"city": "new york"}}}])).valid);
    assert_eq!(
        err(&run(json!([{"f": {"d": {"town": "NYC"}}}]))),
        Some("value_error:dict_key")
    );
    assert_eq!(
        err(&run(json!([{"f": {"d": {"city": "Boston"}}}]))),
        Some("value_error:dict_value")
    );
    assert_eq!(
        err(&run(json!([{"f": {"d": {}}}]))),
        Some("value_error:dict_key")
    );
    assert!(run(json!([{"f": {"ld": [{"k": "a"}, {"k": "b", "n": 1}]}}])).valid);
    assert!(run(json!([{"f": {"ld": []}}])).valid);
    // The last option ("") decides the error type.
    assert_eq!(
        err(&run(json!([{"f": {"ld": [{"k": "b"}, {"k": "a"}]}}]))),
        Some("value_error:list_dict_count")
    );
    assert_eq!(
        err(&run(json!([{"f": {"ld": [{"k": "a"}]}}]))),
        Some("value_error:list_dict_count")
    );
    assert_eq!(
        err(&run(json!([{"f": {"ld": ["a", "b"]}}]))),
        Some(CRASH_NON_DICT)
    );
}

#[test]
fn relevance_and_irrelevance() {
    let none: [Function; 0] = [];
    let attempt = Decoded::Failed {
        reason: "bad json".into(),
        attempt: true,
    };
    let text = Decoded::Failed {
        reason: "text".into(),
        attempt: false,
    };
    let call = calls(json!([{"anything": {}}]));
    let empty = calls(json!([]));
    let irr = |d: &Decoded, o: &Options| check(Category::Irrelevance, &none, &[], d, o);
    let rel = |d: &Decoded, o: &Options| check(Category::Relevance, &none, &[], d, o);
    for o in [&STRICT, &DEFAULT] {
        assert!(irr(&text, o).valid);
        assert!(irr(&empty, o).valid);
        assert_eq!(
            err(&irr(&call, o)),
            Some("irrelevance_error:decoder_success")
        );
        assert!(rel(&call, o).valid);
        assert_eq!(
            err(&rel(&attempt, o)),
            Some("relevance_error:decoder_failed")
        );
        assert_eq!(err(&rel(&empty, o)), Some("relevance_error:decoder_failed"));
    }
    assert!(irr(&attempt, &STRICT).valid);
    assert_eq!(
        err(&irr(&attempt, &DEFAULT)),
        Some("irrelevance_error:malformed_call")
    );
}

#[test]
fn multiple_uses_the_answers_function() {
    let f = funcs(json!([
        {"name": "a", "description": "", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
        {"name": "b", "description": "", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}
    ]));
    let gt = ground_truth_from_bfcl(&json!([{"b": {"x": [1]}}])).unwrap();
    let run = |v: serde_json::Value| check(Category::Multiple, &f, &gt, &calls(v), &STRICT);
    assert!(run(json!([{"b": {"x": 1}}])).valid);
    assert_eq!(
        err(&run(json!([{"a": {"x": 1}}]))),
        Some("simple_function_checker:wrong_func_name")
    );
    assert_eq!(
        err(&run(json!([{"b": {"x": 1}}, {"b": {"x": 1}}]))),
        Some("multiple_function_checker:wrong_count")
    );
    let missing = ground_truth_from_bfcl(&json!([{"c": {"x": [1]}}])).unwrap();
    let v = check(
        Category::Multiple,
        &f,
        &missing,
        &calls(json!([{"c": {"x": 1}}])),
        &STRICT,
    );
    assert_eq!(err(&v), Some(CRASH_NO_FUNCTION));
}

#[test]
fn ints_beyond_i128_become_the_nearest_float() {
    // Python: float(2**130 + 1) == float(2**130 + 2**77) == 2.0**130 (a tie goes to
    // the even neighbour), float(2**130 + 2**77 + 1) == 1.3611294676837542e39.
    let f = funcs(
        json!([{"name": "f", "description": "", "parameters": {"type": "dict",
        "properties": {"x": {"type": "float"}}, "required": ["x"]}}]),
    );
    let gt = ground_truth_from_bfcl(&json!([{"f": {"x": [1.361129467683754e39]}}])).unwrap();
    let call = |repr: &str| {
        Decoded::Calls(vec![(
            "f".into(),
            PyValue::Dict(vec![(
                PyValue::Str("x".into()),
                PyValue::Other {
                    type_name: "int".into(),
                    repr: repr.into(),
                },
            )]),
        )])
    };
    let run = |repr: &str| check(Category::Simple, &f, &gt, &call(repr), &STRICT);
    assert_eq!(err(&run("1361129467683753853853498429727072845825")), None);
    assert_eq!(err(&run("1361129467683754004969225881555719684096")), None);
    assert_eq!(
        err(&run("1361129467683754004969225881555719684097")),
        Some("value_error:others")
    );
    assert_eq!(
        err(&run(&format!("-1{}", "0".repeat(308)))),
        Some("value_error:others")
    );
    assert_eq!(
        err(&run(&format!("-1{}", "0".repeat(309)))),
        Some(CRASH_INT)
    );
}

#[test]
fn malformed_inputs_do_not_panic() {
    let f = funcs(
        json!([{"name": "f", "description": "", "parameters": {"type": "dict", "properties": {
        "u": {"type": "number"}, "a": {"type": "array"}, "d": {"type": "dict"}, "x": {"type": "float"}}, "required": []}}]),
    );
    let gt =
        ground_truth_from_bfcl(&json!([{"f": {"u": [1], "a": [[1]], "d": ["junk"], "x": [1.0]}}]))
            .unwrap();
    let run = |v: serde_json::Value| check(Category::Simple, &f, &gt, &calls(v), &STRICT);
    assert_eq!(err(&run(json!([{"f": {"u": 1}}]))), Some(CRASH_SCHEMA));
    assert_eq!(err(&run(json!([{"f": {"a": [1]}}]))), Some(CRASH_SCHEMA));
    // "junk" as first option makes the dict a variable: plain `in`, no crash.
    assert_eq!(
        err(&run(json!([{"f": {"d": {}}}]))),
        Some("value_error:others")
    );
    let big = Decoded::Calls(vec![(
        "f".into(),
        PyValue::Dict(vec![(
            PyValue::Str("x".into()),
            PyValue::Other {
                type_name: "int".into(),
                repr: format!("1{}", "0".repeat(400)),
            },
        )]),
    )]);
    assert_eq!(
        err(&check(Category::Simple, &f, &gt, &big, &STRICT)),
        Some(CRASH_INT)
    );
    assert_eq!(
        err(&check(
            Category::Simple,
            &[],
            &gt,
            &calls(json!([{"f": {}}])),
            &STRICT
        )),
        Some(CRASH_NO_FUNCTION)
    );
    assert_eq!(
        err(&check(
            Category::Simple,
            &f,
            &[],
            &calls(json!([{"f": {}}])),
            &STRICT
        )),
        Some(CRASH_NO_GT)
    );
    assert!(Function::from_bfcl(&json!({"name": "f"})).is_err());
    assert!(Function::from_bfcl(&json!({"name": "f", "parameters": {"required": "x"}})).is_err());
    let bare = Function::from_bfcl(&json!({"name": "f", "parameters": {"type": "dict"}})).unwrap();
    assert!(bare.properties.is_empty() && bare.required.is_empty());
    assert!(ground_truth_from_bfcl(&json!([{"f": {"a": 1}}])).is_err());
    assert!(ground_truth_from_bfcl(&json!([{"f": {}, "g": {}}])).is_err());
}
