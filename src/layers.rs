//! The crate's layers, bottom to top, and the test that keeps imports pointing down.
//!
//! ```text
//! app                           the command line
//! cli                           its flags
//! bfcl, when2call, scripted     benchmark plugins and the scripted models (the oracle)
//! improve                       the description lab's search for better wordings
//! lint                          checks tool definitions; evidence from a run
//! compare                       paired comparison
//! report                        exporters
//! runner                        plans and runs trials
//! score                         records, metrics, statistics, thresholds
//! judge                         verdicts
//! episode                       the loop of rounds
//! mcp                           MCP servers as tool hosts
//! provider, tools               answer a conversation; execute tool calls
//! functions                     the function-definition dialect the benchmarks share
//! suite                         loads and compiles suite files (no network, provider, judge;
//!                               MCP tool lists are listed before and handed in)
//! behaviour                     the text classifier
//! chat, exit                    the conversation types; exit codes
//! util                          shared helpers
//! ```
//!
//! [`LAYERS`] says which modules each top-level module may name (`crate::NAME`) in its
//! non-test code: those of the layers below its own. A new import that climbs a layer
//! (or reaches across one) fails the test below, so the layering is kept by CI rather
//! than by review. Imports that climbed before the test
//! existed are listed in [`KNOWN_UPWARD`], each to be removed; the test also fails when one
//! of them is gone, so the list only shrinks.

/// The top-level modules of `src/`, in layers from the bottom up. A module may import
/// every module of the layers below its own, and none of its own layer or above: so the
/// providers and the tool hosts do not use each other, and no benchmark uses another.
/// Every top-level module is in one layer; a module missing here fails the test.
pub const LAYERS: &[&[&str]] = &[
    &["util"],
    &["chat", "exit"],
    &["behaviour"],
    &["suite"],
    // The function-definition dialect the benchmarks share.
    &["functions"],
    &["provider", "tools"],
    // MCP servers as tool hosts.
    &["mcp"],
    &["episode"],
    &["judge"],
    &["score"],
    &["runner"],
    &["report"],
    &["compare"],
    // Static checks of tool definitions (suites, MCP listings, token counts, the
    // providers' rules) and the evidence of a finished run's trial records.
    &["lint"],
    // The description lab's search: reads suites, runs, comparisons and lint findings.
    &["improve"],
    // Benchmarks and the scripted models: on the core, never on each other.
    &["bfcl", "when2call", "scripted"],
    &["cli"],
    &["app"],
];

/// The layer of `module` (its index in [`LAYERS`]), if it has one.
pub fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Imports that climb a layer and are still to be removed, as `(from, to)`. Empty
/// since issue 30: keep it so. Never add a line; fix the import instead.
pub const KNOWN_UPWARD: &[(&str, &str)] = &[];

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    use super::{KNOWN_UPWARD, LAYERS, layer_of};

    /// The code of `text` before its test module: the first `#[cfg(test)]` that guards a
    /// `mod` (the convention here is one test module at the end of a file). A
    /// `#[cfg(test)]` on a single item elsewhere does not cut the file short.
    fn before_tests(text: &str) -> &str {
        let mut at = 0;
        while let Some(i) = text[at..].find("#[cfg(test)]") {
            let start = at + i;
            let rest = text[start + "#[cfg(test)]".len()..].trim_start();
            let rest = rest.strip_prefix("pub(crate) ").unwrap_or(rest);
            let rest = rest.strip_prefix("pub ").unwrap_or(rest);
            if rest.starts_with("mod ") {
                return &text[..start];
            }
            at = start + 1;
        }
        text
    }

    /// The top-level modules that every `crate::NAME` in the code lines of `text` names
    /// (its test module and comments left out), with the first line that names each.
    fn names_out(text: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
        let code = before_tests(text);
        let mut out = BTreeMap::new();
        for line in code.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::") {
                let preceded = line[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if preceded {
                    continue;
                }
                let name: String = line[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if modules.contains(&name) {
                    out.entry(name).or_insert_with(|| trimmed.to_string());
                }
            }
        }
        out
    }

    /// Every `.rs` file under `dir` that is not a test file of its own.
    fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                source_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = path.file_name().unwrap().to_string_lossy();
                if name != "tests.rs" && !name.ends_with("_tests.rs") {
                    out.push(path);
                }
            }
        }
    }

    /// The top-level module a file of `src/` belongs to (`src/judge/model/prompt.rs` →
    /// `judge`, `src/chat.rs` → `chat`).
    fn module_of(src: &Path, file: &Path) -> String {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    }

    #[test]
    fn imports_point_down_the_layers() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        source_files(&src, &mut files);
        let roots = ["main", "lib", "layers"];
        let modules: BTreeSet<String> = files
            .iter()
            .map(|f| module_of(&src, f))
            .filter(|m| !roots.contains(&m.as_str()))
            .collect();
        for m in &modules {
            assert!(
                layer_of(m).is_some(),
                "`src/{m}` is in no layer of layers::LAYERS: add it to the layer it belongs to"
            );
        }
        let mut upward = Vec::new();
        let mut seen_known = BTreeSet::new();
        for file in &files {
            let from = module_of(&src, file);
            let Some(own) = layer_of(&from) else {
                continue;
            };
            let text = std::fs::read_to_string(file).unwrap();
            for (to, line) in names_out(&text, &modules) {
                if to == from || layer_of(&to).is_some_and(|l| l < own) {
                    continue;
                }
                if KNOWN_UPWARD.contains(&(from.as_str(), to.as_str())) {
                    seen_known.insert((from.clone(), to.clone()));
                    continue;
                }
                upward.push(format!(
                    "{} ({from} → {to}): {line}",
                    file.strip_prefix(&src).unwrap().display()
                ));
            }
        }
        assert!(
            upward.is_empty(),
            "imports that climb a layer or reach across one (see src/layers.rs; move the shared part down instead):\n{}",
            upward.join("\n")
        );
        let gone: Vec<_> = KNOWN_UPWARD
            .iter()
            .filter(|(f, t)| !seen_known.contains(&(f.to_string(), t.to_string())))
            .collect();
        assert!(
            gone.is_empty(),
            "these imports are gone: take them out of layers::KNOWN_UPWARD: {gone:?}"
        );
    }

    #[test]
    fn every_module_is_in_one_layer() {
        let mut seen = BTreeSet::new();
        for m in LAYERS.iter().flat_map(|l| l.iter()) {
            assert!(seen.insert(*m), "`{m}` is in two layers");
        }
    }

    #[test]
    fn the_scan_sees_imports_and_skips_tests_and_comments() {
        let modules: BTreeSet<String> = ["suite", "judge", "util"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let text = "//! see [`crate::judge`]\nuse crate::util::yaml;\n#[cfg(test)]\nfn t() {}\n\
                    let x = crate::suite::load(p);\nmy_crate::judge::x();\n#[cfg(test)]\n\
                    mod tests {\nuse crate::judge::Verdict;\n}\n";
        let found = names_out(text, &modules);
        assert_eq!(
            found.keys().map(String::as_str).collect::<Vec<_>>(),
            vec!["suite", "util"]
        );
        assert_eq!(found["suite"], "let x = crate::suite::load(p);");
    }
}
