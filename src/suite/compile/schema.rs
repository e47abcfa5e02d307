//! Checking a tool's argument schema against JSON Schema (draft 2020-12), and locating
//! each defect at the key the user wrote rather than at the schema's first line.

use std::sync::Arc;

use serde_json::Value;

use super::Checker;
use crate::suite::span::Spanned;

/// Check a tool's argument schema (the tool's own or a variant's) and, in small suites,
/// compile it; `None` (with every problem reported) when it is unusable.
pub(super) fn check_schema(
    c: &mut Checker<'_>,
    params: &Spanned<Arc<Value>>,
    pfield: &str,
    name: &str,
    eager: bool,
) -> Option<std::sync::OnceLock<Result<jsonschema::Validator, String>>> {
    if !params.value.is_object() {
        c.report(
            params.at(),
            pfield,
            format!(
                "`parameters` must be a JSON Schema object, got {}",
                crate::suite::matcher::show(params.value.as_ref())
            ),
            Some("write `parameters: {type: object, properties: {...}}`".into()),
        );
        return None;
    }
    if let Some(ty) = params.value.get("type")
        && ty != "object"
    {
        c.report(
            params.at(),
            format!("{pfield}.type"),
            format!("tool arguments must be an object schema, got type {ty}"),
            Some("set `type: object` and describe arguments under `properties`".into()),
        );
    }
    // Small suites compile every schema now, so every defect is reported with its
    // location. Big ones (imported benchmarks: thousands of tools, most never
    // called) check each schema against the draft 2020-12 meta-schema now and
    // compile it on first use.
    let validator = std::sync::OnceLock::new();
    // The error's instance path points into the user's schema (the schema is the
    // instance its meta-schema validates), e.g. `/properties/city/type`: its keys as
    // they are written in the schema, `~1` and `~0` read back as `/` and `~` (RFC 6901).
    let describe = |e: &jsonschema::ValidationError<'_>| {
        (
            e.instance_path()
                .segments()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
            crate::util::parse_error::json_schema(e),
        )
    };
    // Every defect the meta-schema finds is reported; a schema it accepts may still
    // fail to compile (a `pattern` that is not a regex), which compiling reports.
    let meta = jsonschema::draft202012::meta::validator();
    let mut problems: Vec<(Vec<String>, String)> = meta
        .iter_errors(params.value.as_ref())
        .map(|e| describe(&e))
        .collect();
    if problems.is_empty() && eager {
        match jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(params.value.as_ref())
        {
            Ok(v) => {
                let _ = validator.set(Ok(v));
            }
            Err(e) => problems.push(describe(&e)),
        }
    }
    for (keys, e) in &problems {
        let segments: Vec<&str> = keys.iter().map(String::as_str).collect();
        let at = locate_path(c.text, params.at(), &segments);
        let field = segments.iter().fold(pfield.to_string(), |f, s| {
            if s.chars().all(|c| c.is_ascii_digit()) {
                format!("{f}[{s}]")
            } else {
                format!("{f}.{s}")
            }
        });
        c.report(
            at,
            field,
            format!("the parameter schema of `{name}` does not compile: {e}"),
            Some("parameters must be valid JSON Schema (draft 2020-12), e.g. `type` is one of string, number, integer, boolean, array, object, null".into()),
        );
    }
    if !problems.is_empty() {
        return None;
    }
    Some(validator)
}

/// Best-effort location of a path of keys inside the YAML under `start`: each key is
/// searched for (as `key:` or `"key":`) after the previous one. Falls back to `start`.
fn locate_path(text: &str, start: (u32, u32), keys: &[&str]) -> (u32, u32) {
    let Some(mut offset) = offset_of(text, start) else {
        return start;
    };
    let mut found = None;
    for key in keys
        .iter()
        .filter(|k| !k.chars().all(|c| c.is_ascii_digit()))
    {
        let hit = [
            format!("{key}:"),
            format!("\"{key}\":"),
            format!("'{key}':"),
        ]
        .iter()
        .filter_map(|pat| text[offset..].find(pat.as_str()))
        .min();
        match hit {
            Some(i) => {
                offset += i;
                found = Some(offset);
                offset += key.len();
            }
            None => return start,
        }
    }
    let Some(at) = found else { return start };
    let line = text[..at].matches('\n').count() as u32 + 1;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..at].chars().count() as u32 + 1)
}

/// The byte offset of a 1-based (line, column) in `text`; `None` for line 0 (no location).
fn offset_of(text: &str, (line, column): (u32, u32)) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let line_start = if line == 1 {
        0
    } else {
        text.match_indices('\n').nth(line as usize - 2)?.0 + 1
    };
    let col: usize = text[line_start..]
        .chars()
        .take(column.saturating_sub(1) as usize)
        .map(char::len_utf8)
        .sum();
    Some(line_start + col)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::suite::SuiteError;

    #[test]
    fn a_schema_error_points_at_the_bad_key() {
        let text = "tools:\n  - name: t\n    parameters:\n      type: object\n      properties:\n        city: { type: strin }\n";
        assert_eq!(
            locate_path(text, (4, 7), &["properties", "city", "type"]),
            (6, 17)
        );
        // A key that is not found falls back to the schema's own location.
        assert_eq!(locate_path(text, (4, 7), &["properties", "town"]), (4, 7));
    }

    /// A schema error under a property whose name has `/` or `~` (escaped `~1` and `~0`
    /// in the error's JSON pointer) names the property as written and points at it.
    #[test]
    fn a_schema_error_under_a_key_with_a_slash_or_tilde_names_the_key() {
        // `~1` (written `~01`) checks the order: `~01` is `~1`, not `/`.
        for (key, line, column) in [("a/b", 7, 16), ("m~n", 8, 16), ("~1", 9, 17)] {
            // `strin` (not a type) under `key` alone.
            let ty = |k: &str| if k == key { "strin" } else { "string" };
            let text = format!(
                "tools:\n  - name: t\n    description: T.\n    parameters:\n      type: object\n      properties:\n        a/b: {{ type: {} }}\n        m~n: {{ type: {} }}\n        \"~1\": {{ type: {} }}\ncases: []\n",
                ty("a/b"),
                ty("m~n"),
                ty("~1"),
            );
            let Err(SuiteError::Invalid(diags)) =
                crate::suite::load_str(&text, Path::new("s.yaml"))
            else {
                panic!("`strin` under `{key}` must be refused");
            };
            let found: Vec<(&str, u32, u32)> = diags
                .iter()
                .filter(|d| d.message.contains("does not compile"))
                .map(|d| (d.field.as_str(), d.line, d.column))
                .collect();
            let field = format!("tools[0].parameters.properties.{key}.type");
            assert_eq!(found, vec![(field.as_str(), line, column)], "{diags:?}");
        }
    }
}
