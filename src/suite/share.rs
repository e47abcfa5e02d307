//! Sharing identical tool definitions while a JSON suite is read (see
//! [`super::model::CaseTools`]).
//!
//! Two tool entries with the same JSON text are the same tool: the second is not parsed,
//! it shares the first's [`ToolSpec`]. Sharing is keyed by the exact text, so nothing is
//! ever merged that differs in any byte; a suite whose identical tools are formatted
//! differently is only read more slowly.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::model::ToolSpec;

thread_local! {
    /// The tools read so far, by their JSON text; `None` when not sharing.
    static SEEN: RefCell<Option<HashMap<Box<str>, Arc<ToolSpec>>>> = const { RefCell::new(None) };
}

/// Run `f` (a JSON deserialization of a suite) with identical case tools shared.
pub fn sharing<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(Option<HashMap<Box<str>, Arc<ToolSpec>>>);
    impl Drop for Reset {
        fn drop(&mut self) {
            SEEN.with(|s| *s.borrow_mut() = self.0.take());
        }
    }
    let _reset = Reset(SEEN.with(|s| s.borrow_mut().replace(HashMap::new())));
    f()
}

/// True inside [`sharing`].
pub fn active() -> bool {
    SEEN.with(|s| s.borrow().is_some())
}

/// The tool whose JSON text is `text`: the one already read, or `text` parsed.
///
/// A parse error carries no position in the file; [`super::load::parse_json`] reads the
/// file again without sharing to report it where it is.
pub fn tool(text: &str) -> Result<Arc<ToolSpec>, String> {
    if let Some(t) = SEEN.with(|s| s.borrow().as_ref().and_then(|m| m.get(text).cloned())) {
        return Ok(t);
    }
    let t = Arc::new(serde_json::from_str::<ToolSpec>(text).map_err(|e| e.to_string())?);
    SEEN.with(|s| {
        if let Some(m) = s.borrow_mut().as_mut() {
            m.insert(text.into(), t.clone());
        }
    });
    Ok(t)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use crate::suite::{compile, load};

    const TOOL: &str = r#"{"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}"#;

    fn suite(tools: [&str; 3]) -> String {
        let cases: Vec<String> = tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                format!(
                    r#"{{"id": "c{i}", "kind": "should_call", "prompt": "Paris?", "tools": [{t}],
                        "expect": {{"calls": [{{"tool": "get_weather", "args": {{"city": "Paris"}}}}]}}}}"#
                )
            })
            .collect();
        format!(r#"{{"name": "s", "cases": [{}]}}"#, cases.join(",\n"))
    }

    #[test]
    fn identical_tools_are_read_and_compiled_once() {
        let other = TOOL.replace("Weather.", "Weather today.");
        let text = suite([TOOL, TOOL, &other]);
        let path = Path::new("s.json");
        let model = load::parse_json(&text, path).unwrap();
        let specs: Vec<_> = model
            .cases
            .iter()
            .map(|c| c.tools.as_ref().unwrap().0[0].clone())
            .collect();
        assert!(Arc::ptr_eq(&specs[0], &specs[1]));
        assert!(!Arc::ptr_eq(&specs[0], &specs[2]));
        let s = compile::compile(
            model,
            &text,
            path,
            &crate::suite::servers::ServerTools::none(),
        )
        .unwrap();
        let tool = |i: usize| s.cases[i].tools.as_ref().unwrap()[0].clone();
        assert!(Arc::ptr_eq(&tool(0), &tool(1)));
        assert!(!Arc::ptr_eq(&tool(0), &tool(2)));
        assert_eq!(tool(2).description("default"), Some("Weather today."));
        // Sharing ends with the read.
        assert!(!super::active());
    }

    #[test]
    fn the_same_tool_written_differently_is_read_twice_and_means_the_same() {
        let spaced = TOOL.replace(": ", ":  ");
        let text = suite([TOOL, &spaced, TOOL]);
        let model = load::parse_json(&text, Path::new("s.json")).unwrap();
        let specs: Vec<_> = model
            .cases
            .iter()
            .map(|c| c.tools.as_ref().unwrap().0[0].clone())
            .collect();
        assert!(!Arc::ptr_eq(&specs[0], &specs[1]));
        assert!(Arc::ptr_eq(&specs[0], &specs[2]));
        assert_eq!(specs[0].parameters.value, specs[1].parameters.value);
    }

    #[test]
    fn a_bad_shared_tool_is_reported_where_it_is() {
        // The shared read parses tools on their own (no position in the file); the file is
        // read again without sharing to point at the line.
        let bad = TOOL.replace("\"description\"", "\"descripton\"");
        let text = suite([TOOL, TOOL, &bad]);
        let err = load::parse_json(&text, Path::new("s.json")).unwrap_err();
        let crate::suite::SuiteError::Invalid(diags) = err else {
            panic!("not a diagnostic: {err}");
        };
        // Each case takes two lines: the third starts on line 5.
        assert_eq!(diags[0].line, 5, "{diags:?}");
        assert!(
            diags[0]
                .source_line
                .as_deref()
                .unwrap_or("")
                .contains("\"c2\""),
            "{diags:?}"
        );
        assert!(
            diags[0].message.contains("unknown field `descripton`"),
            "{diags:?}"
        );
    }
}
