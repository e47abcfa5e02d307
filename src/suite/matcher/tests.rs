//! Unit tests of matchers: reading them, matching values, and their examples.

use super::*;
use crate::suite::model::NormalizeRule;
use serde_json::json;

fn ctx() -> CompileContext<'static> {
    CompileContext {
        norm: Normalizer::default(),
        extra: ExtraArgs::Allow,
        schema: None,
    }
}

fn m(v: Value) -> Matcher {
    Matcher::compile(&v, "x", ctx()).unwrap()
}

fn ok(mm: &Matcher, v: Value) -> bool {
    mm.check(Some(&v), "x").is_ok()
}

#[test]
fn literal_strings_use_normalisation() {
    let plain = m(json!("北京"));
    assert!(ok(&plain, json!("北京")));
    assert!(!ok(&plain, json!("北京 ")));
    let n = Matcher::compile(
        &json!("北京"),
        "x",
        CompileContext {
            norm: Normalizer::new(&[NormalizeRule::Whitespace]),
            ..ctx()
        },
    )
    .unwrap();
    assert!(ok(&n, json!("北京 ")));
}

#[test]
fn literal_numbers_compare_by_value_not_type_of_json() {
    let five = m(json!(5));
    assert!(ok(&five, json!(5.0)));
    assert!(!ok(&five, json!("5")));
    assert!(!ok(&five, json!(5.1)));
}

#[test]
fn one_of_regex_range_approx_type() {
    assert!(ok(
        &m(json!({"one_of": ["北京", "Beijing"]})),
        json!("Beijing")
    ));
    assert!(!ok(
        &m(json!({"one_of": ["北京", "Beijing"]})),
        json!("上海")
    ));
    let date = m(json!({"regex": "^\\d{4}-\\d{2}-\\d{2}$"}));
    assert!(ok(&date, json!("2026-08-09")));
    assert!(!ok(&date, json!("tomorrow")));
    assert!(!ok(&date, json!(20260809)));
    let r = m(json!({"range": {"min": 1, "max": 5}}));
    assert!(ok(&r, json!(1)) && ok(&r, json!(5)) && !ok(&r, json!(5.5)));
    let a = m(json!({"approx": 3.2, "tolerance": 0.05}));
    assert!(ok(&a, json!(3.24)) && !ok(&a, json!(3.3)));
    let t = m(json!({"type": "integer"}));
    assert!(ok(&t, json!(3)) && !ok(&t, json!(3.5)) && !ok(&t, json!("3")));
}

#[test]
fn any_absent_optional() {
    let any = m(json!({"any": true}));
    assert!(ok(&any, json!(null)));
    assert!(any.check(None, "x").is_err());
    let absent = m(json!({"absent": true}));
    assert!(absent.check(None, "x").is_ok());
    assert!(!ok(&absent, json!(1)));
    let opt = m(json!({"optional": true, "regex": "^a"}));
    assert!(opt.check(None, "x").is_ok());
    assert!(ok(&opt, json!("abc")));
    assert!(!ok(&opt, json!("bcd")));
    let bare = m(json!({"optional": true}));
    assert!(bare.check(None, "x").is_ok() && ok(&bare, json!(42)));
}

#[test]
fn nested_objects_and_arrays() {
    let obj = m(json!({"from": "北京", "to": {"one_of": ["上海", "Shanghai"]}}));
    assert!(ok(
        &obj,
        json!({"from": "北京", "to": "Shanghai", "class": "economy"})
    ));
    assert!(!ok(&obj, json!({"from": "北京"})));
    let ordered = m(json!([1, 2]));
    assert!(ok(&ordered, json!([1, 2])) && !ok(&ordered, json!([2, 1])));
    let unordered = m(json!({"unordered": [1, 2]}));
    assert!(ok(&unordered, json!([2, 1])) && !ok(&unordered, json!([2, 2])));
    assert!(!ok(&unordered, json!([1, 2, 3])));
}

#[test]
fn unordered_needs_optimal_not_greedy_assignment() {
    // Greedy pairing of element 0 (any string) with "a" leaves element 1 (only "a")
    // unmatched; the optimal assignment pairs 0 with "b" and 1 with "a".
    let u = m(json!({"unordered": [{"type": "string"}, "a"]}));
    assert!(ok(&u, json!(["a", "b"])));
}

#[test]
fn eq_takes_maps_literally() {
    let e = m(json!({"eq": {"type": "x"}}));
    assert!(ok(&e, json!({"type": "x"})));
    assert!(!ok(&e, json!({"type": "x", "more": 1})));
}

fn with_schema(v: Value, schema: &Value) -> Result<Matcher, MatcherError> {
    Matcher::compile(
        &v,
        "person",
        CompileContext {
            schema: Some(schema),
            ..ctx()
        },
    )
}

#[test]
fn a_field_named_like_a_matcher_is_a_field_when_the_schema_declares_it() {
    let schema = json!({"type": "object", "properties": {
        "type": {"type": "string", "enum": ["adult", "child"]},
        "range": {"type": "string"}, "contains": {"type": "string"},
        "any": {"type": "boolean"}, "regex": {"type": "string"}, "name": {"type": "string"}}});
    let person = with_schema(json!({"type": "adult"}), &schema).unwrap();
    assert!(ok(&person, json!({"type": "adult", "name": "Ann"})));
    assert!(!ok(&person, json!({"type": "child"})));
    // Not a `type` matcher: an object is not enough.
    assert!(!ok(&person, json!({"name": "Ann"})));
    let many = with_schema(
        json!({"range": "near", "contains": "nuts", "any": true, "regex": "^a$"}),
        &schema,
    )
    .unwrap();
    assert!(ok(
        &many,
        json!({"range": "near", "contains": "nuts", "any": true, "regex": "^a$"})
    ));
    assert!(!ok(
        &many,
        json!({"range": "far", "contains": "nuts", "any": true, "regex": "^a$"})
    ));
    // A field's value can itself be a matcher.
    let nested = with_schema(json!({"type": {"one_of": ["adult", "child"]}}), &schema).unwrap();
    assert!(ok(&nested, json!({"type": "child"})));
    assert!(!ok(&nested, json!({"type": "senior"})));
}

#[test]
fn a_keyword_the_schema_does_not_declare_is_a_matcher() {
    // The object's schema has no `type` property: `{type: object}` is a type matcher.
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let typed = with_schema(json!({"type": "object"}), &schema).unwrap();
    assert!(ok(&typed, json!({"name": "x"})));
    assert!(!ok(&typed, json!("x")));
    // Without a schema, as before.
    assert!(ok(&m(json!({"type": "string"})), json!("x")));
    // Mixing a declared field with a keyword that is not one is named.
    let schema = json!({"type": "object", "properties": {"type": {"type": "string"}}});
    let e = with_schema(json!({"type": "adult", "optional": true}), &schema).unwrap_err();
    assert_eq!(
        e.message,
        "this map mixes fields of the object (`type`) with matcher keywords (`optional`)"
    );
    assert!(e.hint.unwrap().contains("Fields are: `type`"));
}

#[test]
fn eq_is_the_literal_form_whatever_the_keys() {
    // No schema says `type` is a field; `eq` takes the object as it is written.
    let e = m(json!({"eq": {"type": "adult", "range": [1, 2]}}));
    assert!(ok(&e, json!({"type": "adult", "range": [1, 2]})));
    assert!(!ok(&e, json!({"type": "adult", "range": [2, 1]})));
    assert!(!ok(&e, json!("adult")));
}

#[test]
fn compile_errors_name_the_problem() {
    let e = Matcher::compile(&json!({"one_of": [], "x": 1}), "city", ctx()).unwrap_err();
    assert!(e.message.contains("unknown matcher key `x`"), "{e:?}");
    let e = Matcher::compile(&json!({"regex": "("}), "city", ctx()).unwrap_err();
    assert!(e.message.contains("invalid regex"), "{e:?}");
    let e = Matcher::compile(&json!({"one_of": [1], "regex": "a"}), "c", ctx()).unwrap_err();
    assert!(e.message.contains("one test"), "{e:?}");
    let schema = json!({"type": "string"});
    let e = Matcher::compile(
        &json!({"oneof": ["a"]}),
        "city",
        CompileContext {
            schema: Some(&schema),
            ..ctx()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("unknown matcher `oneof`"), "{e:?}");
    assert_eq!(
        e.hint.as_deref(),
        Some("`oneof` is not a matcher; did you mean `one_of`?")
    );
}

#[test]
fn mismatch_says_expected_and_actual() {
    let e = m(json!({"one_of": ["北京", "Beijing"]}))
        .check(Some(&json!("上海")), "city")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "`city`: expected one of [\"北京\", \"Beijing\"], got \"上海\""
    );
}

#[test]
fn examples_satisfy_their_matchers() {
    for v in [
        json!("北京"),
        json!({"one_of": ["a", "b"]}),
        json!({"range": {"min": 2, "max": 4}}),
        json!({"type": "boolean"}),
        json!({"a": 1, "b": {"optional": true}}),
        json!({"unordered": [1, 2]}),
    ] {
        let mm = m(v.clone());
        let ex = mm.example().unwrap();
        assert!(ok(&mm, ex.clone()), "{v} vs {ex}");
    }
}
