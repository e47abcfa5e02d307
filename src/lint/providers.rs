//! Provider acceptance: what OpenAI, Anthropic and Gemini would refuse, or silently drop,
//! in one tool definition as toolgauge sends it.
//!
//! [`check`] reads a tool's name, description and `parameters` schema and returns one
//! [`ProviderIssue`] per problem, each with a stable code from [`catalogue`]. Severities:
//!
//! - `error`: the provider refuses the request (a 400), so every trial offering the tool
//!   errors.
//! - `warning`: the provider (or toolgauge on its way there) drops or changes part of
//!   the definition without saying so, so the model never sees it.
//! - `info`: fine today, but the definition would not be accepted under OpenAI's
//!   `strict: true` (Structured Outputs). toolgauge suites do not ask for strict mode, so
//!   these say what would have to change, not what fails.
//!
//! The rules are the providers' documented ones, each naming its source (the docs
//! page and section, as text), and are checked against how toolgauge sends a tool
//! (`src/provider/`): OpenAI gets `parameters` as written (none when the tool has
//! none); Anthropic gets them as `input_schema` (an empty object schema when the tool
//! has none, or `{}`); Gemini gets them as `parametersJsonSchema` (full JSON Schema, not
//! the OpenAPI-subset `parameters`) with a root `$schema` removed. So the Gemini rules
//! are those of its JSON Schema support, not the older OpenAPI `Schema` subset.
//!
//! Not checked here: duplicate names across a tool set and description quality (the
//! set and description rule families do those).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// One thing a provider would refuse or silently drop in a tool definition.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ProviderIssue {
    /// Stable rule code, one of [`catalogue`]'s.
    pub code: &'static str,
    /// `openai`, `anthropic` or `gemini`.
    pub provider: &'static str,
    /// `error` (refused: the request fails), `warning` (silently dropped or changed) or
    /// `info` (would be refused under OpenAI strict mode).
    pub severity: &'static str,
    /// JSON pointer into `parameters`; empty when the issue is about the tool itself
    /// (its name, its description, or the schema as a whole).
    pub pointer: String,
    /// What is wrong, with the definition's own values.
    pub message: String,
    /// How to fix it.
    pub hint: String,
    /// Where the rule comes from: the provider's docs page and section.
    pub source: &'static str,
}

/// One rule [`check`] can report: its code, provider, severity, summary and source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ProviderRule {
    /// Stable rule code.
    pub code: &'static str,
    /// `openai`, `anthropic` or `gemini`.
    pub provider: &'static str,
    /// `error`, `warning` or `info` (see [`ProviderIssue::severity`]).
    pub severity: &'static str,
    /// One line saying what the rule checks.
    pub summary: &'static str,
    /// The provider's docs page and section the rule comes from.
    pub source: &'static str,
}

const OPENAI_NAME_SOURCE: &str =
    "OpenAI API reference, Chat Completions, Create chat completion: tools[].function.name";
const OPENAI_PARAMS_SOURCE: &str = "OpenAI API reference, Chat Completions, Create chat completion: tools[].function.parameters (a JSON Schema object)";
const OPENAI_PROPERTIES_SOURCE: &str = "OpenAI API error invalid_function_parameters: \"In context=(), object schema missing properties\"";
const OPENAI_STRICT_SOURCE: &str =
    "OpenAI guide, Structured Outputs: Supported schemas (and Function calling: Strict mode)";
const ANTHROPIC_NAME_SOURCE: &str = "Anthropic docs, Tool use with Claude: Specifying client tools (name must match ^[a-zA-Z0-9_-]{1,64}$)";
const ANTHROPIC_SCHEMA_SOURCE: &str =
    "Anthropic docs, Tool use with Claude: Specifying client tools (input_schema)";
const GEMINI_NAME_SOURCE: &str = "Gemini API reference, Tools: FunctionDeclaration.name";
const GEMINI_NAME_START_SOURCE: &str =
    "Vertex AI API reference, FunctionDeclaration.name (must start with a letter or an underscore)";
const GEMINI_SCHEMA_SOURCE: &str =
    "Gemini API reference, Tools: FunctionDeclaration.parametersJsonSchema";
const GEMINI_JSON_SCHEMA_SOURCE: &str = "Gemini API docs, Structured output: JSON Schema support";
const TOOLGAUGE_GEMINI_SOURCE: &str =
    "toolgauge's Gemini provider (src/provider/gemini.rs): schemas go to parametersJsonSchema";

/// Every rule, in code order.
const CATALOGUE: &[ProviderRule] = &[
    ProviderRule {
        code: "provider-anthropic-input-schema-object",
        provider: "anthropic",
        severity: "error",
        summary: "input_schema must be a JSON Schema with `type: object`",
        source: ANTHROPIC_SCHEMA_SOURCE,
    },
    ProviderRule {
        code: "provider-anthropic-name",
        provider: "anthropic",
        severity: "error",
        summary: "tool name must match ^[a-zA-Z0-9_-]{1,64}$",
        source: ANTHROPIC_NAME_SOURCE,
    },
    ProviderRule {
        code: "provider-gemini-dropped-by-toolgauge",
        provider: "gemini",
        severity: "info",
        summary: "toolgauge removes a root `$schema` before sending the schema to Gemini",
        source: TOOLGAUGE_GEMINI_SOURCE,
    },
    ProviderRule {
        code: "provider-gemini-enum-type",
        provider: "gemini",
        severity: "warning",
        summary: "enum values must be strings or numbers",
        source: GEMINI_JSON_SCHEMA_SOURCE,
    },
    ProviderRule {
        code: "provider-gemini-name",
        provider: "gemini",
        severity: "error",
        summary: "function name must be a-z, A-Z, 0-9, underscores, colons, dots or dashes, at most 64",
        source: GEMINI_NAME_SOURCE,
    },
    ProviderRule {
        code: "provider-gemini-name-start",
        provider: "gemini",
        severity: "warning",
        summary: "function name should start with a letter or an underscore (Vertex AI requires it)",
        source: GEMINI_NAME_START_SOURCE,
    },
    ProviderRule {
        code: "provider-gemini-parameters-object",
        provider: "gemini",
        severity: "error",
        summary: "parametersJsonSchema must describe an object",
        source: GEMINI_SCHEMA_SOURCE,
    },
    ProviderRule {
        code: "provider-gemini-unsupported-keyword",
        provider: "gemini",
        severity: "info",
        summary: "a JSON Schema keyword outside the subset Gemini supports is ignored",
        source: GEMINI_JSON_SCHEMA_SOURCE,
    },
    ProviderRule {
        code: "provider-openai-name",
        provider: "openai",
        severity: "error",
        summary: "function name must match ^[a-zA-Z0-9_-]{1,64}$",
        source: OPENAI_NAME_SOURCE,
    },
    ProviderRule {
        code: "provider-openai-parameters-object",
        provider: "openai",
        severity: "error",
        summary: "parameters must be a JSON Schema with `type: object`",
        source: OPENAI_PARAMS_SOURCE,
    },
    ProviderRule {
        code: "provider-openai-parameters-properties",
        provider: "openai",
        severity: "error",
        summary: "an object parameters schema must have `properties` (`{}` for none)",
        source: OPENAI_PROPERTIES_SOURCE,
    },
    ProviderRule {
        code: "provider-openai-strict-additional-properties",
        provider: "openai",
        severity: "info",
        summary: "strict mode: every object needs `additionalProperties: false`",
        source: OPENAI_STRICT_SOURCE,
    },
    ProviderRule {
        code: "provider-openai-strict-limits",
        provider: "openai",
        severity: "info",
        summary: "strict mode: at most 5000 properties, 10 levels of nesting, 1000 enum values, 120000 characters of names and values",
        source: OPENAI_STRICT_SOURCE,
    },
    ProviderRule {
        code: "provider-openai-strict-required",
        provider: "openai",
        severity: "info",
        summary: "strict mode: every property must be listed in `required`",
        source: OPENAI_STRICT_SOURCE,
    },
    ProviderRule {
        code: "provider-openai-strict-root-any-of",
        provider: "openai",
        severity: "info",
        summary: "strict mode: the root schema must not be `anyOf`",
        source: OPENAI_STRICT_SOURCE,
    },
    ProviderRule {
        code: "provider-openai-strict-unsupported-keyword",
        provider: "openai",
        severity: "info",
        summary: "strict mode: allOf, not, if/then/else, dependentRequired and dependentSchemas are not supported",
        source: OPENAI_STRICT_SOURCE,
    },
];

/// Every code [`check`] can return, with its provider, severity, one-line summary and
/// source (for the rule catalogue and the SARIF rule list), sorted by code.
pub fn catalogue() -> &'static [ProviderRule] {
    CATALOGUE
}

/// The catalogue row of `code`. Every code [`check`] emits has one (a unit test keeps it
/// so), so the fallback is never used; it keeps a missing row from panicking.
fn rule(code: &'static str) -> ProviderRule {
    CATALOGUE
        .iter()
        .copied()
        .find(|r| r.code == code)
        .unwrap_or(ProviderRule {
            code,
            provider: "openai",
            severity: "info",
            summary: "",
            source: "",
        })
}

/// An issue of rule `code` at `pointer`.
fn issue(
    code: &'static str,
    pointer: impl Into<String>,
    message: String,
    hint: impl Into<String>,
) -> ProviderIssue {
    let r = rule(code);
    ProviderIssue {
        code,
        provider: r.provider,
        severity: r.severity,
        pointer: pointer.into(),
        message,
        hint: hint.into(),
        source: r.source,
    }
}

/// What `name`, `description` and `parameters` (the tool's JSON Schema; `null` when it
/// takes none) would run into at each provider, sorted by pointer, then code.
pub fn check(name: &str, description: &str, parameters: &Value) -> Vec<ProviderIssue> {
    // No provider documents a limit on the description that toolgauge's suites could
    // reach, so it is not checked; the parameter is in the interface for when one does.
    let _ = description;
    let mut out = Vec::new();
    names(name, &mut out);
    root(parameters, &mut out);
    if parameters.is_object() {
        let mut walk = Walk::default();
        walk.schema(parameters, "", 1, &mut out);
        walk.limits(&mut out);
    }
    out.sort_by(|a, b| {
        (&a.pointer, a.code, a.provider, &a.message)
            .cmp(&(&b.pointer, b.code, b.provider, &b.message))
    });
    out
}

/// Why `name` does not fit `[allowed]{1,64}`: `None` when it does. `allowed` says which
/// characters besides ASCII letters and digits are allowed.
fn name_problem(name: &str, extra: &[char]) -> Option<String> {
    let len = name.chars().count();
    if len == 0 {
        return Some("is empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || extra.contains(c)))
    {
        return Some(match c {
            ' ' => "has a space".into(),
            c if c.is_whitespace() => format!("has whitespace ({c:?})"),
            c => format!("has `{c}`"),
        });
    }
    if len > 64 {
        return Some(format!("is {len} characters long"));
    }
    None
}

/// The name rules of the three providers.
fn names(name: &str, out: &mut Vec<ProviderIssue>) {
    if let Some(why) = name_problem(name, &['_', '-']) {
        out.push(issue(
            "provider-openai-name",
            "",
            format!("name `{name}` {why}: OpenAI accepts ^[a-zA-Z0-9_-]{{1,64}}$"),
            "rename the tool with letters, digits, `_` and `-` only, at most 64 characters (e.g. `get_weather`)",
        ));
        out.push(issue(
            "provider-anthropic-name",
            "",
            format!("name `{name}` {why}: Anthropic accepts ^[a-zA-Z0-9_-]{{1,64}}$"),
            "rename the tool with letters, digits, `_` and `-` only, at most 64 characters (e.g. `get_weather`)",
        ));
    }
    if let Some(why) = name_problem(name, &['_', '-', '.', ':']) {
        out.push(issue(
            "provider-gemini-name",
            "",
            format!(
                "name `{name}` {why}: Gemini accepts letters, digits, `_`, `.`, `:` and `-`, at most 64 characters"
            ),
            "rename the tool with letters, digits and `_` only, at most 64 characters",
        ));
    } else if let Some(first) = name.chars().next()
        && !(first.is_ascii_alphabetic() || first == '_')
    {
        out.push(issue(
            "provider-gemini-name-start",
            "",
            format!("name `{name}` starts with `{first}`: Vertex AI's Gemini wants a letter or an underscore first"),
            "start the name with a letter or `_`",
        ));
    }
}

/// The `type` of a schema when it is one string.
fn type_of(schema: &Map<String, Value>) -> Option<&str> {
    schema.get("type").and_then(Value::as_str)
}

/// A short rendering of `v` for messages.
fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// The rules about the schema as a whole: it must be an object schema.
fn root(parameters: &Value, out: &mut Vec<ProviderIssue>) {
    // No parameters: OpenAI gets none (a function without arguments), Anthropic an
    // empty object schema, Gemini no schema: all accepted. An empty schema `{}` is
    // read the same way (toolgauge sends Anthropic an empty object schema for it), and
    // no provider documents refusing it.
    let obj = parameters.as_object();
    if parameters.is_null() || obj.is_some_and(Map::is_empty) {
        return;
    }
    let is_object = obj.is_some_and(|o| type_of(o) == Some("object"));
    if !is_object {
        let got = match obj {
            None => format!("is {}", show(parameters)),
            Some(o) => match o.get("type") {
                None => "has no `type`".to_string(),
                Some(t) => format!("has `type: {}`", show(t)),
            },
        };
        let hint = "make the root `{\"type\": \"object\", \"properties\": {...}}` and put the arguments in `properties`";
        out.push(issue(
            "provider-openai-parameters-object",
            "",
            format!("parameters {got}: OpenAI wants a JSON Schema of `type: object`"),
            hint,
        ));
        out.push(issue(
            "provider-anthropic-input-schema-object",
            "",
            format!("parameters {got}: Anthropic's input_schema must be of `type: object`"),
            hint,
        ));
        out.push(issue(
            "provider-gemini-parameters-object",
            "",
            format!("parameters {got}: Gemini's parametersJsonSchema must describe an object"),
            hint,
        ));
        return;
    }
    let Some(o) = obj else { return };
    if !o.contains_key("properties") {
        out.push(issue(
            "provider-openai-parameters-properties",
            "",
            "parameters are `type: object` without `properties`: OpenAI refuses it (\"object schema missing properties\")".into(),
            "add `\"properties\": {}` when the tool takes no arguments",
        ));
    }
    if o.contains_key("$schema") {
        out.push(issue(
            "provider-gemini-dropped-by-toolgauge",
            "/$schema",
            format!(
                "root `$schema` ({}) is removed by toolgauge before the schema goes to Gemini",
                show(&o["$schema"])
            ),
            "nothing to fix: the schema means the same without it; remove it to send every provider the same schema",
        ));
    }
    if o.contains_key("anyOf") {
        out.push(issue(
            "provider-openai-strict-root-any-of",
            "/anyOf",
            "the root schema has `anyOf`: it would not be accepted with `strict: true`".into(),
            "give each alternative its own tool, or move the `anyOf` into a property",
        ));
    }
}

/// The keywords of Gemini's JSON Schema support (others are ignored), plus the
/// non-standard `propertyOrdering` it reads.
const GEMINI_KEYWORDS: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

/// The keywords Structured Outputs does not support (its "unsupported" list; the
/// longer list for fine-tuned models is left out).
const OPENAI_STRICT_UNSUPPORTED: &[&str] = &[
    "allOf",
    "not",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
];

/// Structured Outputs' documented size limits.
const STRICT_MAX_PROPERTIES: usize = 5000;
const STRICT_MAX_DEPTH: usize = 10;
const STRICT_MAX_ENUM_VALUES: usize = 1000;
const STRICT_MAX_CHARS: usize = 120_000;
const STRICT_BIG_ENUM: usize = 250;
const STRICT_BIG_ENUM_CHARS: usize = 15_000;

/// Keywords whose value is a map of name → schema.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value is one schema.
const SCHEMA_ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// A JSON pointer segment: `~` as `~0`, `/` as `~1`.
fn segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The walk over every schema in `parameters`, with the totals the strict limits need.
#[derive(Default)]
struct Walk {
    properties: usize,
    enum_values: usize,
    chars: usize,
    /// Where the nesting limit was first exceeded, and the depth there.
    too_deep: Option<(String, usize)>,
}

impl Walk {
    /// Check the schema at `pointer` (`depth`: its object nesting level, the root's 1)
    /// and every schema inside it.
    fn schema(
        &mut self,
        schema: &Value,
        pointer: &str,
        depth: usize,
        out: &mut Vec<ProviderIssue>,
    ) {
        let Some(o) = schema.as_object() else { return };
        let is_object = type_of(o) == Some("object")
            || o.get("type")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|t| t == "object"))
            || o.contains_key("properties");
        if is_object && depth > STRICT_MAX_DEPTH && self.too_deep.is_none() {
            self.too_deep = Some((pointer.to_string(), depth));
        }
        for key in o.keys() {
            let at = format!("{pointer}/{}", segment(key));
            // The root `$schema` is reported as removed by toolgauge instead.
            let root_schema = pointer.is_empty() && key == "$schema";
            if !root_schema && !GEMINI_KEYWORDS.contains(&key.as_str()) {
                out.push(issue(
                    "provider-gemini-unsupported-keyword",
                    at.clone(),
                    format!("`{key}` is not in Gemini's JSON Schema subset: Gemini ignores it, so the model is not held to it"),
                    "say the constraint in the description too, or check the value in the tool",
                ));
            }
            if OPENAI_STRICT_UNSUPPORTED.contains(&key.as_str()) {
                out.push(issue(
                    "provider-openai-strict-unsupported-keyword",
                    at,
                    format!("`{key}` would not be accepted with `strict: true`"),
                    "express it with `anyOf`, `enum` or separate tools, or leave strict mode off",
                ));
            }
        }
        if is_object {
            self.object(o, pointer, out);
        }
        if let Some(values) = o.get("enum").and_then(Value::as_array) {
            self.enumeration(values, pointer, out);
        }
        if let Some(c) = o.get("const") {
            self.chars += c.as_str().map_or(0, |s| s.chars().count());
        }
        let inner = if is_object { depth + 1 } else { depth };
        for key in SCHEMA_MAPS {
            if let Some(map) = o.get(*key).and_then(Value::as_object) {
                for (name, s) in map {
                    if *key != "properties" {
                        self.chars += name.chars().count();
                    }
                    let at = format!("{pointer}/{key}/{}", segment(name));
                    // `$defs` are not a level of their own: they are nested where used.
                    let d = if *key == "properties" || *key == "patternProperties" {
                        inner
                    } else {
                        depth
                    };
                    self.schema(s, &at, d, out);
                }
            }
        }
        for key in SCHEMA_LISTS {
            if let Some(list) = o.get(*key).and_then(Value::as_array) {
                for (i, s) in list.iter().enumerate() {
                    self.schema(s, &format!("{pointer}/{key}/{i}"), depth, out);
                }
            }
        }
        for key in SCHEMA_ONE {
            match o.get(*key) {
                Some(s @ Value::Object(_)) => {
                    let d = if *key == "additionalProperties" {
                        inner
                    } else {
                        depth
                    };
                    self.schema(s, &format!("{pointer}/{key}"), d, out);
                }
                // `items` as a list is the older tuple form.
                Some(Value::Array(list)) if *key == "items" => {
                    for (i, s) in list.iter().enumerate() {
                        self.schema(s, &format!("{pointer}/items/{i}"), depth, out);
                    }
                }
                _ => {}
            }
        }
    }

    /// The strict-mode rules of one object schema.
    fn object(&mut self, o: &Map<String, Value>, pointer: &str, out: &mut Vec<ProviderIssue>) {
        let shown = if pointer.is_empty() {
            "the root object"
        } else {
            "this object"
        };
        if o.get("additionalProperties") != Some(&Value::Bool(false)) {
            let now = match o.get("additionalProperties") {
                None => "has no `additionalProperties`".to_string(),
                Some(v) => format!("has `additionalProperties: {}`", show(v)),
            };
            out.push(issue(
                "provider-openai-strict-additional-properties",
                pointer,
                format!("{shown} {now}: it would not be accepted with `strict: true`, which needs `additionalProperties: false`"),
                "add `\"additionalProperties\": false` to every object schema",
            ));
        }
        let Some(props) = o.get("properties").and_then(Value::as_object) else {
            return;
        };
        self.properties += props.len();
        self.chars += props.keys().map(|k| k.chars().count()).sum::<usize>();
        let required: BTreeSet<&str> = o
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let optional: Vec<&str> = props
            .keys()
            .map(String::as_str)
            .filter(|k| !required.contains(k))
            .collect();
        if !optional.is_empty() {
            let list = optional
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push(issue(
                "provider-openai-strict-required",
                pointer,
                format!("{shown} leaves {list} out of `required`: it would not be accepted with `strict: true`, where every property is required"),
                "list every property in `required`; make an optional one nullable (`\"type\": [\"string\", \"null\"]`)",
            ));
        }
    }

    /// The rules of one `enum` (Gemini's value types; the strict totals).
    fn enumeration(&mut self, values: &[Value], pointer: &str, out: &mut Vec<ProviderIssue>) {
        self.enum_values += values.len();
        let chars: usize = values
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count())
            .sum();
        self.chars += chars;
        if values.len() > STRICT_BIG_ENUM && chars > STRICT_BIG_ENUM_CHARS {
            out.push(issue(
                "provider-openai-strict-limits",
                format!("{pointer}/enum"),
                format!(
                    "this enum has {} values of {chars} characters in all: with `strict: true` an enum of more than {STRICT_BIG_ENUM} values may have at most {STRICT_BIG_ENUM_CHARS} characters",
                    values.len()
                ),
                "shorten the values, or take the value as a string and check it in the tool",
            ));
        }
        let odd: Vec<String> = values
            .iter()
            .filter(|v| !(v.is_string() || v.is_number()))
            .map(show)
            .collect();
        if !odd.is_empty() {
            out.push(issue(
                "provider-gemini-enum-type",
                format!("{pointer}/enum"),
                format!(
                    "enum holds {}: Gemini's enum takes strings and numbers",
                    odd.join(", ")
                ),
                "use string values (e.g. `\"true\"`), or a `boolean` type instead of an enum",
            ));
        }
    }

    /// The strict-mode totals, once the walk is done.
    fn limits(&self, out: &mut Vec<ProviderIssue>) {
        let hint = "split the tool, or flatten the arguments";
        if let Some((pointer, depth)) = &self.too_deep {
            out.push(issue(
                "provider-openai-strict-limits",
                pointer.clone(),
                format!("objects nest {depth} levels deep here: `strict: true` allows {STRICT_MAX_DEPTH}"),
                hint,
            ));
        }
        if self.properties > STRICT_MAX_PROPERTIES {
            out.push(issue(
                "provider-openai-strict-limits",
                "",
                format!("the schema has {} properties: `strict: true` allows {STRICT_MAX_PROPERTIES} in all", self.properties),
                hint,
            ));
        }
        if self.enum_values > STRICT_MAX_ENUM_VALUES {
            out.push(issue(
                "provider-openai-strict-limits",
                "",
                format!("the schema has {} enum values: `strict: true` allows {STRICT_MAX_ENUM_VALUES} in all", self.enum_values),
                "take long lists of values as a string checked in the tool",
            ));
        }
        if self.chars > STRICT_MAX_CHARS {
            out.push(issue(
                "provider-openai-strict-limits",
                "",
                format!("property names, definition names and enum and const values have {} characters: `strict: true` allows {STRICT_MAX_CHARS}", self.chars),
                hint,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn codes(issues: &[ProviderIssue]) -> Vec<(&str, &str)> {
        issues
            .iter()
            .map(|i| (i.pointer.as_str(), i.code))
            .collect()
    }

    /// A schema every provider accepts, strict mode included.
    fn clean() -> Value {
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["C", "F"]}
            },
            "required": ["city", "unit"],
            "additionalProperties": false
        })
    }

    #[test]
    fn a_clean_definition_has_no_issues() {
        assert_eq!(check("get_weather", "Weather.", &clean()), vec![]);
        assert_eq!(check("ping", "No arguments.", &Value::Null), vec![]);
    }

    #[test]
    fn a_name_with_a_space_is_refused_by_every_provider() {
        let issues = check("get weather", "", &clean());
        assert_eq!(
            codes(&issues),
            vec![
                ("", "provider-anthropic-name"),
                ("", "provider-gemini-name"),
                ("", "provider-openai-name")
            ]
        );
        let openai = issues.iter().find(|i| i.provider == "openai").unwrap();
        assert_eq!(
            openai.message,
            "name `get weather` has a space: OpenAI accepts ^[a-zA-Z0-9_-]{1,64}$"
        );
        assert_eq!(openai.severity, "error");
    }

    #[test]
    fn dots_and_colons_are_gemini_only_and_length_is_64() {
        let issues = check("weather.get:v1", "", &clean());
        assert_eq!(
            codes(&issues),
            vec![
                ("", "provider-anthropic-name"),
                ("", "provider-openai-name")
            ]
        );
        assert!(
            issues[0].message.contains("has `.`"),
            "{}",
            issues[0].message
        );
        assert_eq!(check(&"a".repeat(64), "", &clean()), vec![]);
        let long = check(&"a".repeat(65), "", &clean());
        assert_eq!(long.len(), 3);
        assert!(
            long.iter()
                .all(|i| i.message.contains("is 65 characters long"))
        );
        assert_eq!(check("", "", &clean()).len(), 3);
    }

    #[test]
    fn gemini_warns_of_a_name_that_does_not_start_with_a_letter() {
        let issues = check("2fa-code", "", &clean());
        assert_eq!(codes(&issues), vec![("", "provider-gemini-name-start")]);
        assert_eq!(issues[0].severity, "warning");
        assert_eq!(check("_private", "", &clean()), vec![]);
    }

    #[test]
    fn a_root_that_is_not_an_object_is_refused() {
        let issues = check("f", "", &json!({"type": "string"}));
        assert_eq!(
            codes(&issues),
            vec![
                ("", "provider-anthropic-input-schema-object"),
                ("", "provider-gemini-parameters-object"),
                ("", "provider-openai-parameters-object")
            ]
        );
        assert!(issues[0].message.contains("has `type: \"string\"`"));
        let issues = check("f", "", &json!(["x"]));
        assert!(
            issues[0].message.contains("is [\"x\"]"),
            "{}",
            issues[0].message
        );
        // An empty schema is no parameters (toolgauge sends Anthropic an empty object
        // schema for it).
        assert_eq!(check("f", "", &json!({})), vec![]);
    }

    #[test]
    fn openai_refuses_a_root_object_without_properties() {
        let issues = check(
            "ping",
            "",
            &json!({"type": "object", "additionalProperties": false}),
        );
        assert_eq!(
            codes(&issues),
            vec![("", "provider-openai-parameters-properties")]
        );
        assert_eq!(issues[0].severity, "error");
    }

    #[test]
    fn strict_mode_findings_point_at_nested_objects() {
        let schema = json!({
            "type": "object",
            "properties": {
                "address": {
                    "type": "object",
                    "properties": {
                        "zip": {"type": "string"},
                        "street": {"type": "string"}
                    },
                    "required": ["street"]
                }
            },
            "required": ["address"],
            "additionalProperties": false
        });
        let issues = check("ship", "", &schema);
        assert_eq!(
            codes(&issues),
            vec![
                (
                    "/properties/address",
                    "provider-openai-strict-additional-properties"
                ),
                ("/properties/address", "provider-openai-strict-required"),
            ]
        );
        assert!(issues.iter().all(|i| i.severity == "info"));
        assert!(issues[1].message.contains("leaves `zip` out of `required`"));
    }

    #[test]
    fn gemini_unsupported_keywords_are_warnings_at_their_pointer() {
        let schema = json!({
            "type": "object",
            "properties": {
                "zip": {"type": "string", "pattern": "^[0-9]{5}$", "minLength": 5},
                "a/b": {"type": "string", "const": "x"}
            },
            "required": ["zip", "a/b"],
            "additionalProperties": false
        });
        let issues = check("f", "", &schema);
        assert_eq!(
            codes(&issues),
            vec![
                (
                    "/properties/a~1b/const",
                    "provider-gemini-unsupported-keyword"
                ),
                (
                    "/properties/zip/minLength",
                    "provider-gemini-unsupported-keyword"
                ),
                (
                    "/properties/zip/pattern",
                    "provider-gemini-unsupported-keyword"
                ),
            ]
        );
        assert_eq!(issues[0].severity, "info");
        // A property named like a keyword is not a keyword.
        let schema = json!({
            "type": "object",
            "properties": {"pattern": {"type": "string"}},
            "required": ["pattern"],
            "additionalProperties": false
        });
        assert_eq!(check("f", "", &schema), vec![]);
    }

    #[test]
    fn strict_unsupported_keywords_and_root_any_of() {
        let schema = json!({
            "type": "object",
            "properties": {"n": {"allOf": [{"type": "integer"}]}},
            "required": ["n"],
            "additionalProperties": false,
            "anyOf": [{"required": ["n"]}]
        });
        let issues = check("f", "", &schema);
        let got = codes(&issues);
        assert!(
            got.contains(&("/anyOf", "provider-openai-strict-root-any-of")),
            "{got:?}"
        );
        assert!(
            got.contains(&(
                "/properties/n/allOf",
                "provider-openai-strict-unsupported-keyword"
            )),
            "{got:?}"
        );
        assert!(
            got.contains(&("/properties/n/allOf", "provider-gemini-unsupported-keyword")),
            "{got:?}"
        );
    }

    #[test]
    fn root_dollar_schema_is_dropped_by_toolgauge_for_gemini() {
        let mut schema = clean();
        schema["$schema"] = json!("draft 2020-12");
        let issues = check("f", "", &schema);
        assert_eq!(
            codes(&issues),
            vec![("/$schema", "provider-gemini-dropped-by-toolgauge")]
        );
    }

    #[test]
    fn gemini_enums_take_strings_and_numbers() {
        let schema = json!({
            "type": "object",
            "properties": {"flag": {"enum": [true, false, null]}, "n": {"enum": [1, 2]}},
            "required": ["flag", "n"],
            "additionalProperties": false
        });
        let issues = check("f", "", &schema);
        assert_eq!(
            codes(&issues),
            vec![("/properties/flag/enum", "provider-gemini-enum-type")]
        );
        assert!(issues[0].message.contains("true, false, null"));
    }

    #[test]
    fn strict_limits_depth_and_enum_values() {
        // Eleven levels of objects: the root and ten nested.
        let mut schema = json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false});
        for _ in 0..10 {
            schema = json!({
                "type": "object",
                "properties": {"x": schema},
                "required": ["x"],
                "additionalProperties": false
            });
        }
        let issues = check("deep", "", &schema);
        let deep = "/properties/x".repeat(10);
        assert_eq!(
            codes(&issues),
            vec![(deep.as_str(), "provider-openai-strict-limits")]
        );
        assert!(
            issues[0].message.contains("11 levels"),
            "{}",
            issues[0].message
        );

        let values: Vec<Value> = (0..1001).map(|i| json!(format!("v{i}"))).collect();
        let schema = json!({
            "type": "object",
            "properties": {"v": {"type": "string", "enum": values}},
            "required": ["v"],
            "additionalProperties": false
        });
        let issues = check("big", "", &schema);
        assert_eq!(codes(&issues), vec![("", "provider-openai-strict-limits")]);
        assert!(issues[0].message.contains("1001 enum values"));
    }

    #[test]
    fn every_code_emitted_is_in_the_catalogue_once_and_sorted() {
        let codes: Vec<&str> = catalogue().iter().map(|r| r.code).collect();
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(codes, sorted);
        for r in catalogue() {
            assert!(["openai", "anthropic", "gemini"].contains(&r.provider));
            assert!(["error", "warning", "info"].contains(&r.severity));
            assert!(r.code.starts_with(&format!("provider-{}-", r.provider)));
            assert!(!r.source.contains("://"), "{}", r.source);
        }
        let schema = json!({
            "$schema": "x",
            "type": "object",
            "anyOf": [{"not": {"enum": [true]}}],
            "properties": {"a": {"type": "object", "properties": {"b": {"pattern": "x"}}}}
        });
        for i in check("2 x", "", &schema)
            .into_iter()
            .chain(check("1", "", &json!(3)))
        {
            let r = catalogue().iter().find(|r| r.code == i.code).expect(i.code);
            assert_eq!(
                (r.provider, r.severity, r.source),
                (i.provider, i.severity, i.source)
            );
        }
    }

    #[test]
    fn the_order_is_by_pointer_then_code() {
        let schema = json!({
            "type": "object",
            "properties": {
                "b": {"type": "string", "minLength": 1},
                "a": {"type": "string", "maxLength": 1}
            }
        });
        let issues = check("f", "", &schema);
        let got = codes(&issues);
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(got, sorted);
        assert_eq!(got[0], ("", "provider-openai-strict-additional-properties"));
    }

    #[test]
    fn the_shipped_suites_are_accepted_by_every_provider() {
        // No error (a refused request) in any tool of the suites toolgauge ships; their
        // warnings and strict-mode notes are allowed.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("suites");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            // A suite whose tools come from an MCP server does not load on its own.
            let Ok(suite) = crate::suite::load(&path) else {
                continue;
            };
            for tool in &suite.tools {
                let description = tool.description.as_deref().unwrap_or_default();
                let errors: Vec<ProviderIssue> = check(&tool.name, description, &tool.parameters)
                    .into_iter()
                    .filter(|i| i.severity == "error")
                    .collect();
                assert_eq!(errors, vec![], "{} `{}`", path.display(), tool.name);
                checked += 1;
            }
        }
        assert!(checked > 10, "{checked} tools checked");
    }
}
