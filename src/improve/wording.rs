//! Wordings: the descriptions of a suite's tools and of their top-level parameters,
//! read from a suite's variant, changed by a proposer's candidate, and added back to the
//! suite as named variants so the runner offers them like any variant a user wrote.

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::proposal::Candidate;
use super::report::ToolText;
use crate::suite::{Suite, Tool, ToolVariant};

/// A wording of every tool of a suite, by tool name, in suite order.
pub type Wording = IndexMap<String, ToolText>;

/// The wording of `suite`'s tools under `variant`.
pub fn of_suite(suite: &Suite, variant: &str) -> Wording {
    suite
        .tools
        .iter()
        .map(|t| {
            let text = ToolText {
                description: t.description(variant).unwrap_or_default().to_string(),
                parameters: parameter_texts(t.parameters_in(variant)),
            };
            (t.name.clone(), text)
        })
        .collect()
}

/// The descriptions of a schema's top-level properties that have one, in schema order.
fn parameter_texts(schema: &Value) -> IndexMap<String, String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter_map(|(name, p)| {
                    let d = p.get("description")?.as_str()?;
                    Some((name.clone(), d.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Each tool's name and top-level parameter names (what [`super::proposal::Proposal::check`]
/// holds candidates to).
pub fn tool_shapes(suite: &Suite) -> Vec<(String, Vec<String>)> {
    suite
        .tools
        .iter()
        .map(|t| {
            let params = t
                .parameters
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            (t.name.clone(), params)
        })
        .collect()
}

/// `current` with `candidate`'s changes (a checked candidate: every tool and parameter
/// it names exists).
pub fn apply(current: &Wording, candidate: &Candidate) -> Wording {
    let mut out = current.clone();
    for (tool, change) in &candidate.tools {
        let Some(text) = out.get_mut(tool) else {
            continue;
        };
        if let Some(d) = &change.description {
            text.description = d.trim().to_string();
        }
        for (param, d) in &change.parameters {
            text.parameters.insert(param.clone(), d.trim().to_string());
        }
    }
    out
}

/// The tools `new` words differently from `old`, as `new` words them.
pub fn changed(old: &Wording, new: &Wording) -> IndexMap<String, ToolText> {
    new.iter()
        .filter(|(name, text)| old.get(*name) != Some(*text))
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect()
}

/// A short stable fingerprint of a wording: two candidates worded alike are one
/// wording, run once.
pub fn fingerprint(w: &Wording) -> String {
    let bytes = serde_json::to_vec(w).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// A copy of `suite` whose tools also carry each of `variants` (name and wording) as a
/// named variant: the description and the parameter descriptions set, the schema's
/// shape unchanged. Variants the suite already had stay as they were.
pub fn with_variants(suite: &Suite, variants: &[(String, Wording)]) -> Suite {
    let mut out = suite.clone();
    out.tools = suite
        .tools
        .iter()
        .map(|t| Arc::new(tool_with(t, variants)))
        .collect();
    for (name, _) in variants {
        if !out.variants.contains(name) {
            out.variants.push(name.clone());
        }
    }
    out
}

fn tool_with(t: &Tool, variants: &[(String, Wording)]) -> Tool {
    let mut own: IndexMap<String, ToolVariant> = t
        .variants
        .iter()
        .map(|(name, v)| (name.clone(), copy_variant(v)))
        .collect();
    for (name, wording) in variants {
        let Some(text) = wording.get(&t.name) else {
            continue;
        };
        let mut schema = (*t.parameters).clone();
        let mut set = Vec::new();
        for (param, d) in &text.parameters {
            if crate::suite::variants::try_set_description(&mut schema, param, d) {
                set.push(param.clone());
            }
        }
        own.insert(
            name.clone(),
            ToolVariant {
                description: Some(text.description.clone()),
                parameter_descriptions: set,
                replaces_schema: false,
                parameters: Some(Arc::new(schema)),
                validator: Default::default(),
                required: Vec::new(),
            },
        );
    }
    Tool {
        name: t.name.clone(),
        description: t.description.clone(),
        variants: own,
        parameters: t.parameters.clone(),
        validator: Default::default(),
        required: t.required.clone(),
        effects: t.effects,
        mcp: t.mcp.clone(),
    }
}

fn copy_variant(v: &ToolVariant) -> ToolVariant {
    ToolVariant {
        description: v.description.clone(),
        parameter_descriptions: v.parameter_descriptions.clone(),
        replaces_schema: v.replaces_schema,
        parameters: v.parameters.clone(),
        validator: Default::default(),
        required: v.required.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::improve::proposal::ToolWording;

    fn suite() -> Suite {
        let yaml = r#"
name: w
tools:
  - name: get_weather
    parameters:
      type: object
      properties:
        city: {type: string, description: The city.}
        unit: {type: string}
      required: [city]
    variants:
      plain: Get the weather.
      terse: Weather.
  - name: send_email
    description: Send an e-mail.
    parameters: {type: object, properties: {to: {type: string}}}
cases:
  - id: w1
    kind: should_call
    prompt: Weather in Paris?
    expect: {calls: [{tool: get_weather, args: {city: Paris}}]}
"#;
        crate::suite::load_str(yaml, std::path::Path::new("w.yaml")).unwrap()
    }

    #[test]
    fn reads_applies_and_adds_a_wording_as_a_variant() {
        let s = suite();
        let base = of_suite(&s, "plain");
        assert_eq!(base["get_weather"].description, "Get the weather.");
        assert_eq!(base["get_weather"].parameters["city"], "The city.");
        assert!(!base["get_weather"].parameters.contains_key("unit"));
        assert_eq!(of_suite(&s, "terse")["get_weather"].description, "Weather.");

        let mut change = ToolWording {
            description: Some(" Get the weather forecast for a city. ".into()),
            parameters: IndexMap::new(),
        };
        change
            .parameters
            .insert("unit".into(), "celsius or fahrenheit".into());
        let cand = Candidate {
            rationale: String::new(),
            tools: [("get_weather".to_string(), change)].into_iter().collect(),
        };
        let new = apply(&base, &cand);
        assert_eq!(
            new["get_weather"].description,
            "Get the weather forecast for a city."
        );
        let diff = changed(&base, &new);
        assert_eq!(diff.keys().collect::<Vec<_>>(), ["get_weather"]);
        assert_ne!(fingerprint(&base), fingerprint(&new));
        assert_eq!(fingerprint(&new), fingerprint(&apply(&base, &cand)));

        let s2 = with_variants(&s, &[("r1c1".into(), new)]);
        assert!(s2.variants.contains(&"r1c1".to_string()));
        let d = s2.tools[0].definition("r1c1");
        assert_eq!(d.description, "Get the weather forecast for a city.");
        assert_eq!(
            d.parameters["properties"]["unit"]["description"],
            "celsius or fahrenheit"
        );
        // The shape is unchanged and the old variants stay.
        assert_eq!(d.parameters["required"], serde_json::json!(["city"]));
        assert_eq!(s2.tools[0].definition("terse").description, "Weather.");
        assert_eq!(
            s2.tools[1].definition("r1c1").description,
            "Send an e-mail."
        );
        // The original suite is untouched.
        assert!(!s.variants.contains(&"r1c1".to_string()));
    }
}
