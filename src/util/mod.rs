//! Small helpers that several layers need: hex digests, YAML options and parser errors in
//! plain words, safe file names, optimal assignment, "did you mean" suggestions, the metric vocabulary and
//! shared limits, TLS set-up.
//!
//! This module is the ground floor: it imports nothing from the rest of the crate (a
//! unit test below checks it), so any layer may use it without making a cycle.

pub mod assign;
pub mod digest;
pub mod file_name;
pub mod json_kind;
pub mod limits;
pub mod metric_names;
pub mod parse_error;
pub mod regex_cache;
pub mod suggest;
pub mod tls;
pub mod yaml;

/// `n` and the noun in the number it takes: `1 tool`, `0 tools`, `3 tools`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    /// Every path into the crate that the code of a file of `src/util` names, other than
    /// util's own (its unit tests, from `#[cfg(test)]` on, are not part of the build).
    fn paths_out(text: &str) -> Vec<String> {
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut out = Vec::new();
        for (i, line) in code.lines().enumerate() {
            for (at, _) in line.match_indices("crate::") {
                if !line[at..].starts_with("crate::util") {
                    out.push(format!("line {}: {}", i + 1, line.trim()));
                }
            }
            if line.contains("super::super") {
                out.push(format!("line {}: {}", i + 1, line.trim()));
            }
        }
        out
    }

    #[test]
    fn util_imports_nothing_from_the_rest_of_the_crate() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/util");
        let mut files = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                files += 1;
                let text = std::fs::read_to_string(&path).unwrap();
                let found = paths_out(&text);
                assert!(
                    found.is_empty(),
                    "{} reaches above util: {found:?}",
                    path.display()
                );
            }
        }
        assert!(files >= 2, "read {files} files of {}", dir.display());
        // The check itself sees an import out, and lets util's own paths through.
        assert_eq!(
            paths_out(
                "use crate::util::yaml;\nuse crate::suite::Suite;\n#[cfg(test)]\nuse crate::x;\n"
            ),
            vec!["line 2: use crate::suite::Suite;".to_string()]
        );
        assert_eq!(
            paths_out("use super::super::suite;\n"),
            vec!["line 1: use super::super::suite;".to_string()]
        );
    }
}

#[cfg(test)]
mod plural_tests {
    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(super::plural(1, "tool", "tools"), "1 tool");
        assert_eq!(super::plural(0, "tool", "tools"), "0 tools");
        assert_eq!(super::plural(2, "case", "cases"), "2 cases");
    }
}
