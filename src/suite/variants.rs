//! Parameter paths of a variant's `parameter_descriptions`: finding a parameter in a
//! JSON Schema by path and setting its description.
//!
//! A path names a property, nested with `.` through `properties` (`address.street`),
//! with `[]` stepping into an array's `items` (`stops[].city`, `matrix[][]`). A property
//! whose own name contains `.` or `[]` is found too: at each level the longest name that
//! matches is taken.

use serde_json::Value;

/// A path that does not name a parameter of the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// The path as written.
    pub path: String,
    /// Every path the schema has, in schema order.
    pub known: Vec<String>,
}

impl PathError {
    /// The hint for the user: the closest path, and the paths there are.
    pub fn hint(&self) -> String {
        hint(&self.path, &self.known)
    }
}

/// The hint for unknown `path` of a schema with `known` paths (see [`paths`]).
pub fn hint(path: &str, known: &[String]) -> String {
    {
        let list = if known.is_empty() {
            "the schema declares no parameters under `properties`".to_string()
        } else {
            format!(
                "the paths are: {}",
                known
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        match crate::util::suggest::closest(path, known.iter().map(String::as_str)) {
            Some(s) => format!(
                "did you mean `{s}`? {list} (`.` steps into `properties`, `[]` into an array's `items`)"
            ),
            None => format!("{list} (`.` steps into `properties`, `[]` into an array's `items`)"),
        }
    }
}

/// Set the `description` of the parameter at `path` of `schema` to `text` (replacing
/// one it has).
pub fn set_description(schema: &mut Value, path: &str, text: &str) -> Result<(), PathError> {
    if try_set_description(schema, path, text) {
        return Ok(());
    }
    Err(PathError {
        path: path.to_string(),
        known: paths(schema),
    })
}

/// [`set_description`] without the error's list of paths (which a caller reporting
/// many unknown paths of one schema builds once); false when `path` names nothing.
pub fn try_set_description(schema: &mut Value, path: &str, text: &str) -> bool {
    let Some(pointer) = locate(schema, path) else {
        return false;
    };
    match schema.pointer_mut(&pointer) {
        Some(Value::Object(node)) => {
            node.insert("description".into(), Value::String(text.to_string()));
            true
        }
        // `items: true` or a property declared as `true`: nothing to describe.
        _ => false,
    }
}

/// Most schema nodes one path may visit. Names with dots make several readings of a
/// path possible, and a hostile schema could make their number explode.
const WALK_BUDGET: usize = 10_000;

/// The JSON pointer of the schema at `path`, if there is one.
fn locate(schema: &Value, path: &str) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    walk(schema, path, String::new(), &mut WALK_BUDGET.clone())
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Resolve `rest` (a property name, then `[]`s, then `.` and more) under `node`.
fn walk(node: &Value, rest: &str, pointer: String, budget: &mut usize) -> Option<String> {
    *budget = budget.checked_sub(1)?;
    let props = node.get("properties").and_then(Value::as_object)?;
    // Candidate names: `rest` cut before each `.` or `[`, and `rest` whole; longest first.
    let mut cuts: Vec<usize> = rest
        .char_indices()
        .filter(|(_, c)| *c == '.' || *c == '[')
        .map(|(i, _)| i)
        .collect();
    cuts.push(rest.len());
    for &cut in cuts.iter().rev() {
        let name = &rest[..cut];
        let Some(mut child) = props.get(name) else {
            continue;
        };
        let mut p = format!("{pointer}/properties/{}", escape(name));
        let mut tail = &rest[cut..];
        let mut ok = true;
        while let Some(t) = tail.strip_prefix("[]") {
            match child.get("items") {
                Some(items) => {
                    child = items;
                    p.push_str("/items");
                    tail = t;
                }
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        if tail.is_empty() {
            return Some(p);
        }
        if let Some(t) = tail.strip_prefix('.')
            && let Some(found) = walk(child, t, p, budget)
        {
            return Some(found);
        }
    }
    None
}

/// Every parameter path of `schema`, in schema order (for hints).
pub fn paths(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect(schema, "", &mut out, 0);
    out
}

/// Most paths listed in a hint (a tool may declare thousands of parameters).
const MAX_PATHS: usize = 1000;

fn collect(node: &Value, prefix: &str, out: &mut Vec<String>, depth: usize) {
    // Schemas are at most 64 levels deep when read; this bounds hand-built ones.
    if depth > 64 || out.len() >= MAX_PATHS {
        return;
    }
    let Some(props) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, child) in props {
        let mut path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        out.push(path.clone());
        let mut child = child;
        collect(child, &path, out, depth + 1);
        while let Some(items) = child.get("items") {
            path.push_str("[]");
            out.push(path.clone());
            collect(items, &path, out, depth + 1);
            child = items;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City."},
                "address": {"type": "object", "properties": {"street": {"type": "string"}}},
                "stops": {"type": "array", "items": {"type": "object", "properties": {"city": {"type": "string"}}}},
                "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
                "a.b": {"type": "string"}
            }
        })
    }

    #[test]
    fn paths_step_through_properties_and_items() {
        let mut s = schema();
        set_description(&mut s, "city", "Town.").unwrap();
        set_description(&mut s, "address.street", "Street and number.").unwrap();
        set_description(&mut s, "stops[].city", "Stop city.").unwrap();
        set_description(&mut s, "stops[]", "One stop.").unwrap();
        set_description(&mut s, "grid[][]", "A cell.").unwrap();
        set_description(&mut s, "a.b", "Dotted.").unwrap();
        assert_eq!(s["properties"]["city"]["description"], "Town.");
        assert_eq!(
            s["properties"]["address"]["properties"]["street"],
            json!({"type": "string", "description": "Street and number."})
        );
        assert_eq!(
            s["properties"]["stops"]["items"]["properties"]["city"]["description"],
            "Stop city."
        );
        assert_eq!(
            s["properties"]["stops"]["items"]["description"],
            "One stop."
        );
        assert_eq!(
            s["properties"]["grid"]["items"]["items"]["description"],
            "A cell."
        );
        assert_eq!(s["properties"]["a.b"]["description"], "Dotted.");
        // A replaced description keeps its place among the keys.
        let keys: Vec<&String> = s["properties"]["city"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys, ["type", "description"]);
    }

    #[test]
    fn paths_with_many_readings_end_within_a_budget() {
        // Every level has `a`, `a.a`, `a.a.a`, ...: a path of 40 `a`s has 2^39 readings.
        let mut node = json!({"type": "string"});
        for _ in 0..40 {
            let mut props = serde_json::Map::new();
            for k in 1..=8 {
                props.insert(vec!["a"; k].join("."), node.clone());
            }
            node = json!({"type": "object", "properties": props});
            if node.to_string().len() > 1 << 20 {
                break;
            }
        }
        let path = format!("{}.zzz", vec!["a"; 40].join("."));
        let mut budget = WALK_BUDGET;
        assert_eq!(walk(&node, &path, String::new(), &mut budget), None);
        assert_eq!(budget, 0, "the walk stopped at its budget");
    }

    #[test]
    fn a_missing_path_lists_the_paths_with_the_closest_first() {
        let mut s = schema();
        let e = set_description(&mut s, "stops[].cty", "x").unwrap_err();
        assert_eq!(
            e.known,
            [
                "city",
                "address",
                "address.street",
                "stops",
                "stops[]",
                "stops[].city",
                "grid",
                "grid[]",
                "grid[][]",
                "a.b"
            ]
        );
        assert!(
            e.hint().starts_with("did you mean `stops[].city`?"),
            "{}",
            e.hint()
        );
        for bad in [
            "",
            "city.name",
            "city[]",
            "stops.city",
            "grid[][][]",
            "address.",
        ] {
            assert!(set_description(&mut s, bad, "x").is_err(), "{bad}");
        }
        // Nothing was changed by the failed attempts.
        assert_eq!(s, schema());
    }

    /// The problems of suite `text`, as (line, column, field, message, hint).
    fn problems(text: &str) -> Vec<(u32, u32, String, String, String)> {
        match crate::suite::load_str(text, std::path::Path::new("s.yaml")) {
            Ok(_) => Vec::new(),
            Err(crate::suite::SuiteError::Invalid(d)) => d
                .into_iter()
                .map(|d| {
                    (
                        d.line,
                        d.column,
                        d.field,
                        d.message,
                        d.hint.unwrap_or_default(),
                    )
                })
                .collect(),
            Err(e) => panic!("{e}"),
        }
    }

    const PARAMS: &str = "{type: object, properties: {city: {type: string}, stops: {type: array, items: {type: object, properties: {city: {type: string}}}}}}";

    fn suite(tool: &str, rest: &str) -> String {
        format!(
            "tools:\n  - name: t\n{tool}    parameters: {PARAMS}\ncases:\n  - {{id: a, kind: should_not_call, prompt: hi}}\n{rest}"
        )
    }

    #[test]
    fn a_parameter_path_that_does_not_exist_is_located_with_the_closest_path() {
        let text = suite(
            "    description: T.\n    variants:\n      doc:\n        parameter_descriptions:\n          city: City.\n          stops[].cty: A stop.\n",
            "",
        );
        let p = problems(&text);
        assert_eq!(p.len(), 1, "{p:?}");
        let (line, column, field, message, hint) = &p[0];
        assert_eq!((*line, *column), (8, 11), "the key of the bad path");
        assert_eq!(
            field,
            "tools[0].variants.doc.parameter_descriptions.stops[].cty"
        );
        assert_eq!(message, "tool `t` has no parameter `stops[].cty`");
        assert!(
            hint.starts_with("did you mean `stops[].city`? the paths are: `city`, `stops`, `stops[]`, `stops[].city`"),
            "{hint}"
        );
        // Against a variant's own schema, the path must exist in that schema.
        let text = suite(
            "    description: T.\n    variants:\n      own:\n        parameters: {type: object, properties: {town: {type: string}}}\n        parameter_descriptions: {city: City.}\n",
            "",
        );
        let p = problems(&text);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            p[0].3,
            "tool `t` has no parameter `city` in this variant's `parameters`"
        );
        assert!(p[0].4.starts_with("the paths are: `town`"), "{}", p[0].4);
    }

    #[test]
    fn many_unknown_paths_are_reported_twenty_by_twenty_then_counted() {
        let bad: String = (0..25).map(|i| format!("          nope{i}: x\n")).collect();
        let text = suite(
            &format!(
                "    description: T.\n    variants:\n      doc:\n        parameter_descriptions:\n{bad}"
            ),
            "",
        );
        let p = problems(&text);
        assert_eq!(p.len(), 21);
        assert_eq!(p[19].3, "tool `t` has no parameter `nope19`");
        assert_eq!(p[20].3, "and 5 more unknown parameter paths of tool `t`");
    }

    #[test]
    fn a_variant_schema_must_compile_like_the_tools() {
        let text = suite(
            "    description: T.\n    variants:\n      strict:\n        parameters: {type: object, properties: {city: {type: strin}}}\n",
            "",
        );
        let p = problems(&text);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            p[0].2,
            "tools[0].variants.strict.parameters.properties.city.type"
        );
        assert!(
            p[0].3
                .starts_with("the parameter schema of `t` does not compile"),
            "{}",
            p[0].3
        );
        let p = problems(&suite(
            "    description: T.\n    variants:\n      strict:\n        parameters: [1]\n",
            "",
        ));
        assert_eq!(p[0].3, "`parameters` must be a JSON Schema object, got [1]");
    }

    #[test]
    fn variant_names_are_checked_wherever_they_are_used() {
        // Unknown in the matrix, with the closest name and every declared name.
        let p = problems(&suite(
            "    description: T.\n    variants: {terse: Short.}\n",
            "variants:\n  dated: {system: Today is Monday.}\nmatrix: {variants: [terse, datd]}\n",
        ));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].3, "unknown variant `datd`");
        assert_eq!(
            p[0].4,
            "did you mean `dated`? the suite's variants are: terse, dated"
        );
        // A tool without `description` must word every variant the matrix runs; the hint
        // points to `description:` as the default wording.
        let p = problems(&suite(
            "    variants:\n      terse: Short.\n      doc: {parameter_descriptions: {city: City.}}\n",
            "variants:\n  dated: {system: Today is Monday.}\n",
        ));
        let got: Vec<(&str, &str)> = p.iter().map(|x| (x.2.as_str(), x.3.as_str())).collect();
        assert_eq!(
            got,
            [
                (
                    "tools[0].variants",
                    "variant `doc` of tool `t` has no `description`, and the tool has none"
                ),
                ("tools[0].variants", "tool `t` has no variant `dated`"),
            ]
        );
        assert!(
            p[1].4.ends_with(
                "`description:` gives a default wording for the variants a tool does not word"
            ),
            "{}",
            p[1].4
        );
        // With a description, every variant is worded.
        assert!(
            problems(&suite(
                "    description: T.\n    variants:\n      terse: Short.\n      doc: {parameter_descriptions: {city: City.}}\n",
                "variants:\n  dated: {system: Today is Monday.}\n",
            ))
            .is_empty()
        );
    }

    #[test]
    fn a_description_no_variant_uses_keeps_its_error() {
        let p = problems(&suite(
            "    description: T.\n    variants: {terse: Short., clear: Long.}\n",
            "",
        ));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].2, "tools[0].variants");
        assert_eq!(p[0].3, "tool `t` has both `description` and `variants`");
        assert!(p[0].4.contains("(terse, clear)"), "{}", p[0].4);
        // A variant the tool does not word (here one only the top level declares) uses it.
        assert!(
            problems(&suite(
                "    description: T.\n    variants: {terse: Short., clear: Long.}\n",
                "variants:\n  dated: {system: Today is Monday.}\n",
            ))
            .is_empty()
        );
    }

    #[test]
    fn variants_join_in_order_and_a_lone_default_is_a_description() {
        let s = crate::suite::load_str(
            &suite(
                "    description: T.\n    variants: {terse: Short.}\n",
                "variants:\n  plain: {}\n  terse: {system: Be brief.}\n  dated: {system: ''}\n",
            ),
            std::path::Path::new("s.yaml"),
        )
        .unwrap();
        assert_eq!(s.variants, ["terse", "plain", "dated"]);
        assert_eq!(s.tools[0].description("plain"), Some("T."));
        assert_eq!(s.tools[0].description("terse"), Some("Short."));
        assert_eq!(s.system_in("terse"), Some("Be brief."));
        assert_eq!(s.system_in("dated"), None, "`\"\"` sends no system prompt");
        assert_eq!(s.system_in("plain"), None);
        let s = crate::suite::load_str(
            &suite("    variants: {default: Only.}\n", ""),
            std::path::Path::new("s.yaml"),
        )
        .unwrap();
        assert_eq!(s.variants, ["default"]);
        assert_eq!(s.tools[0].description("anything"), Some("Only."));
    }
}
