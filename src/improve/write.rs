//! `improve --write FILE`: a copy of the suite with the search's final wording as a new
//! variant, so `toolgauge run` and `compare` can check it again beside the original.
//!
//! The copy is the suite's document with one entry added per tool: under the tool's
//! `variants` for tools the suite declares, under `tools_from.variants` for tools an MCP
//! server or snapshot lists. Every other key is kept as written; comments are not (the
//! document is read and written again), which the copy's first lines say.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::report::ToolText;
use super::wording::Wording;

/// Why the copy could not be made.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WriteError {
    /// The suite file does not parse (it loaded before, so it changed meanwhile).
    #[error("`{path}` cannot be read again: {message}")]
    Parse {
        /// The suite.
        path: String,
        /// What the parser said.
        message: String,
    },
    /// The variant name is taken.
    #[error("the suite already has a variant `{0}`")]
    Taken(String),
    /// A tool to word is not written in the file (a shared tool list).
    #[error("tool `{tool}` is not declared in `{path}` itself")]
    NotHere {
        /// The tool.
        tool: String,
        /// The suite.
        path: String,
    },
}

impl WriteError {
    /// How to fix it.
    pub fn hint(&self) -> &'static str {
        match self {
            WriteError::Parse { .. } => "run the search again on the suite as it is now",
            WriteError::Taken(_) => "choose another name with --write-variant",
            WriteError::NotHere { .. } => {
                "add the variant by hand where the tool is declared; improve.json holds the final wording"
            }
        }
    }
}

/// The text of `suite_text` (the suite at `path`) with `name` added: each tool worded as
/// in `final_wording`. `original` is the wording of `base` the search started from.
pub fn with_variant(
    suite_text: &str,
    path: &Path,
    name: &str,
    base: &str,
    original: &Wording,
    final_wording: &Wording,
) -> Result<String, WriteError> {
    let shown = path.display().to_string();
    let json = path.extension().is_some_and(|e| e == "json");
    let mut doc: Value = if json {
        serde_json::from_str(suite_text).map_err(|e| WriteError::Parse {
            path: shown.clone(),
            message: e.to_string(),
        })?
    } else {
        serde_saphyr::from_str_with_options(suite_text, crate::util::yaml::options()).map_err(
            |e| WriteError::Parse {
                path: shown.clone(),
                message: e.to_string(),
            },
        )?
    };
    let Some(root) = doc.as_object_mut() else {
        return Err(WriteError::Parse {
            path: shown,
            message: "the document is not a mapping".into(),
        });
    };
    if has_variant(root, name) {
        return Err(WriteError::Taken(name.to_string()));
    }
    let mut named_base = has_variant(root, base);
    if let Some(tf) = root.get_mut("tools_from").and_then(Value::as_object_mut) {
        let variants = tf
            .entry("variants")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(variants) = variants {
            for (tool, text) in final_wording {
                let worded = variants.contains_key(tool);
                if worded || original.get(tool) != Some(text) {
                    let own = variants.entry(tool.clone()).or_insert_with(|| json!({}));
                    if let Some(own) = own.as_object_mut() {
                        own.insert(name.to_string(), spec(text, original.get(tool), true));
                    }
                }
            }
        }
        // The server's description words every variant a tool does not word itself.
        named_base = true;
    } else {
        let tools = root.get_mut("tools").and_then(Value::as_array_mut);
        let mut placed: Vec<&str> = Vec::new();
        if let Some(tools) = tools {
            for t in tools.iter_mut() {
                let Some(t) = t.as_object_mut() else { continue };
                let Some(tname) = t.get("name").and_then(Value::as_str).map(str::to_string) else {
                    continue;
                };
                let Some((key, text)) = final_wording.get_key_value(&tname) else {
                    continue;
                };
                let has_own = t.get("variants").is_some_and(Value::is_object);
                if !has_own && original.get(&tname) == Some(text) {
                    // Its `description` words every variant, the new one too.
                    placed.push(key);
                    continue;
                }
                let full = has_own
                    && t["variants"]
                        .get(base)
                        .is_some_and(|v| v.get("parameter_descriptions").is_some());
                let entry = spec(text, original.get(&tname), full);
                let variants = t.entry("variants").or_insert_with(|| json!({}));
                if let Some(v) = variants.as_object_mut() {
                    v.insert(name.to_string(), entry);
                }
                placed.push(key);
            }
        }
        if let Some(missing) = final_wording
            .keys()
            .find(|k| !placed.contains(&k.as_str()) && original.get(*k) != final_wording.get(*k))
        {
            return Err(WriteError::NotHere {
                tool: missing.clone(),
                path: shown,
            });
        }
    }
    if !named_base {
        // The suite had no named variant: its wording is now one of two, so it gets a
        // name (a tool's `description` words the variants it does not word itself).
        let top = root.entry("variants").or_insert_with(|| json!({}));
        if let Some(top) = top.as_object_mut() {
            top.insert(base.to_string(), json!({}));
        }
    }
    if let Some(list) = root
        .get_mut("matrix")
        .and_then(|m| m.get_mut("variants"))
        .and_then(Value::as_array_mut)
    {
        list.push(Value::String(name.to_string()));
    }
    let header = format!(
        "Written by `toolgauge improve` from `{}`: variant `{name}` is the search's final wording (started from `{base}`). The original's comments are not kept.",
        path.display()
    );
    if json {
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        let _ = header;
        return Ok(text);
    }
    let body = serde_saphyr::to_string(&doc).map_err(|e| WriteError::Parse {
        path: shown,
        message: e.to_string(),
    })?;
    Ok(format!("# {header}\n{body}"))
}

/// The keys of a suite document that name files or commands relative to the suite's
/// directory, with their values: a copy written into another directory would not find
/// them.
pub fn relative_paths(suite_text: &str, path: &Path) -> Vec<String> {
    let json = path.extension().is_some_and(|e| e == "json");
    let doc: Value = if json {
        serde_json::from_str(suite_text).unwrap_or(Value::Null)
    } else {
        serde_saphyr::from_str_with_options(suite_text, crate::util::yaml::options())
            .unwrap_or(Value::Null)
    };
    let mut out = Vec::new();
    let mut check = |key: &str, v: Option<&Value>| {
        if let Some(text) = v.and_then(Value::as_str) {
            let file = text.strip_prefix("stdio:").unwrap_or(text);
            let is_url = file.starts_with("http://") || file.starts_with("https://");
            if !is_url && !Path::new(file.split_whitespace().next().unwrap_or("")).is_absolute() {
                out.push(format!("{key}: {text}"));
            }
        }
    };
    check("cassette", doc.get("cassette"));
    let tf = doc.get("tools_from");
    check("tools_from.snapshot", tf.and_then(|t| t.get("snapshot")));
    check("tools_from.mcp", tf.and_then(|t| t.get("mcp")));
    check(
        "judge.prompt",
        doc.get("judge").and_then(|j| j.get("prompt")),
    );
    check(
        "distractors.from",
        doc.get("distractors").and_then(|d| d.get("from")),
    );
    out
}

/// Whether the document names variant `name`: at the top level, in a tool's
/// `variants`, in `tools_from.variants`, or in `matrix.variants`.
fn has_variant(root: &Map<String, Value>, name: &str) -> bool {
    let in_map = |v: Option<&Value>| {
        v.and_then(Value::as_object)
            .is_some_and(|m| m.contains_key(name))
    };
    if in_map(root.get("variants")) {
        return true;
    }
    let tools = root.get("tools").and_then(Value::as_array);
    if tools.is_some_and(|ts| ts.iter().any(|t| in_map(t.get("variants")))) {
        return true;
    }
    let tf = root
        .get("tools_from")
        .and_then(|t| t.get("variants"))
        .and_then(Value::as_object);
    if tf.is_some_and(|m| m.values().any(|v| in_map(Some(v)))) {
        return true;
    }
    root.get("matrix")
        .and_then(|m| m.get("variants"))
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|v| v.as_str() == Some(name)))
}

/// A tool's entry: its description alone when no parameter changes, else the
/// description and the parameter descriptions (all of them when `full`).
fn spec(text: &ToolText, original: Option<&ToolText>, full: bool) -> Value {
    let params: Map<String, Value> = text
        .parameters
        .iter()
        .filter(|(p, d)| full || original.and_then(|o| o.parameters.get(*p)) != Some(*d))
        .map(|(p, d)| (p.clone(), Value::String(d.clone())))
        .collect();
    if params.is_empty() {
        Value::String(text.description.clone())
    } else {
        json!({"description": text.description, "parameter_descriptions": params})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::improve::wording::of_suite;
    use crate::suite::load_str;

    const PLAIN: &str = r#"# a comment
name: plain
tools:
  - name: get_weather
    description: Weather.
    parameters:
      type: object
      properties:
        city: {type: string, description: The city.}
        unit: {type: string, enum: ["yes", "no", "on"], description: "1.5"}
      required: [city]
  - name: get_time
    description: Time.
    parameters: {type: object}
cases:
  - id: c1
    kind: should_call
    prompt: "no"
    expect:
      calls:
        - tool: get_weather
          args: {city: "null", unit: "yes"}
"#;

    fn improved(w: &Wording) -> Wording {
        let mut w = w.clone();
        let g = w.get_mut("get_weather").unwrap();
        g.description = "Weather forecast: rain, wind; for a city.".into();
        g.parameters.insert("unit".into(), "true".into());
        w
    }

    #[test]
    fn a_suite_without_variants_gets_both_named_and_loads_alike() {
        let path = Path::new("plain.yaml");
        let suite = load_str(PLAIN, path).unwrap();
        let original = of_suite(&suite, "default");
        let fin = improved(&original);
        let text = with_variant(PLAIN, path, "improved", "default", &original, &fin).unwrap();
        assert!(text.starts_with("# Written by `toolgauge improve` from `plain.yaml`"));
        let copy = load_str(&text, path).unwrap();
        assert_eq!(copy.variants, ["improved", "default"]);
        assert_eq!(of_suite(&copy, "improved"), fin);
        assert_eq!(of_suite(&copy, "default"), original);
        // Strings that YAML 1.1 reads as other things stay strings.
        assert_eq!(
            copy.cases[0].messages.last(),
            Some(&crate::chat::Message::User {
                content: "no".into()
            })
        );
        let schema = &copy.tools[0].parameters;
        assert_eq!(
            schema["properties"]["unit"]["enum"],
            json!(["yes", "no", "on"])
        );
        assert_eq!(schema["properties"]["unit"]["description"], "1.5");
        // The untouched tool got no entry.
        assert!(copy.tools[1].variants.is_empty());
        // The name is taken now.
        let again = with_variant(&text, path, "improved", "default", &original, &fin);
        assert!(matches!(again, Err(WriteError::Taken(n)) if n == "improved"));
    }

    #[test]
    fn a_suite_with_variants_words_the_new_one_for_every_tool_that_words_its_own() {
        let text = r#"
name: v
matrix: {variants: [vague, clear]}
tools:
  - name: get_weather
    variants:
      vague: Weather.
      clear: {description: Live weather for one city., parameter_descriptions: {city: City name.}}
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
  - name: get_time
    variants:
      vague: Time.
      clear: Local time in one IANA timezone.
    parameters: {type: object}
cases:
  - id: c1
    kind: should_not_call
    prompt: hi
"#;
        let path = Path::new("v.yaml");
        let suite = load_str(text, path).unwrap();
        let original = of_suite(&suite, "clear");
        let mut fin = original.clone();
        fin.get_mut("get_weather").unwrap().description = "Forecast for one city.".into();
        let out = with_variant(text, path, "improved", "clear", &original, &fin).unwrap();
        let copy = load_str(&out, path).unwrap();
        assert_eq!(copy.variants, ["vague", "clear", "improved"]);
        assert_eq!(of_suite(&copy, "improved"), fin);
        assert_eq!(
            copy.tools[1].description("improved"),
            Some("Local time in one IANA timezone.")
        );
        assert_eq!(of_suite(&copy, "vague"), of_suite(&suite, "vague"));
    }

    #[test]
    fn an_mcp_suite_gets_its_wording_under_tools_from_variants() {
        let text = "name: m\ntools_from: {snapshot: tools.json}\ncases: []\n";
        let mut original = Wording::new();
        original.insert(
            "read_file".into(),
            ToolText {
                description: "Read a file.".into(),
                parameters: Default::default(),
            },
        );
        original.insert("list_dir".into(), ToolText::default());
        let mut fin = original.clone();
        fin.get_mut("read_file").unwrap().description = "Read a UTF-8 text file.".into();
        let out = with_variant(
            text,
            Path::new("m.yaml"),
            "improved",
            "default",
            &original,
            &fin,
        )
        .unwrap();
        let doc: Value = serde_saphyr::from_str(out.split_once('\n').unwrap().1).unwrap();
        assert_eq!(
            doc["tools_from"]["variants"],
            json!({"read_file": {"improved": "Read a UTF-8 text file."}})
        );
        assert!(
            doc.get("variants").is_none(),
            "the server's wording needs no name"
        );
    }

    #[test]
    fn paths_relative_to_the_suite_are_found() {
        let text = "name: r\ncassette: ../fixtures/r.jsonl\ntools_from: {mcp: \"stdio:python server.py\", snapshot: /abs/s.json}\njudge: {target: scripted:judge, prompt: judge.j2}\ncases: []\n";
        assert_eq!(
            relative_paths(text, Path::new("r.yaml")),
            [
                "cassette: ../fixtures/r.jsonl",
                "tools_from.mcp: stdio:python server.py",
                "judge.prompt: judge.j2"
            ]
        );
        let remote = "name: h\ntools_from: {mcp: \"https://example.test/mcp\"}\ncases: []\n";
        assert!(relative_paths(remote, Path::new("h.yaml")).is_empty());
    }

    #[test]
    fn an_mcp_copy_loads_with_the_new_wording_over_the_snapshot() {
        let snapshot = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/mcp_sdk.snapshot.json"
        );
        let text = format!(
            "name: m\ntools_from:\n  snapshot: {snapshot}\n  variants:\n    fail:\n      guarded: Always fails.\nvariants:\n  server: {{}}\ncases:\n  - id: c1\n    kind: should_not_call\n    prompt: hi\n"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.yaml");
        std::fs::write(&path, &text).unwrap();
        let load = |p: &Path| crate::mcp::suites::load(p).unwrap();
        let suite = load(&path);
        let original = of_suite(&suite, "server");
        let mut fin = original.clone();
        let (first, _) = fin.get_index(0).unwrap();
        let first = first.clone();
        fin.get_mut(&first).unwrap().description = "A new wording.".into();
        let out = with_variant(&text, &path, "improved", "server", &original, &fin).unwrap();
        let copied = dir.path().join("m.improved.yaml");
        std::fs::write(&copied, out).unwrap();
        let copy = load(&copied);
        assert_eq!(of_suite(&copy, "improved"), fin);
        assert_eq!(of_suite(&copy, "server"), original);
        assert_eq!(
            copy.tools
                .iter()
                .find(|t| t.name == "fail")
                .unwrap()
                .description("guarded"),
            Some("Always fails.")
        );
    }

    #[test]
    fn a_tool_declared_elsewhere_is_named() {
        let text = "name: s\ntools: []\ncases: []\n";
        let mut original = Wording::new();
        original.insert("shared".into(), ToolText::default());
        let mut fin = original.clone();
        fin.get_mut("shared").unwrap().description = "Now worded.".into();
        let e = with_variant(
            text,
            Path::new("s.yaml"),
            "improved",
            "default",
            &original,
            &fin,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "tool `shared` is not declared in `s.yaml` itself"
        );
    }
}
