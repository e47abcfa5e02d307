//! BFCL's `GorillaFileSystem`: an in-memory directory tree with shell-like commands
//! that work on names in the current directory only.
//!
//! Nodes live in an arena and directories hold ids, because Python's `cp` of a
//! directory copies the contents mapping shallowly: both copies then share the same
//! file and subdirectory objects, and a write through one shows in the other.

use std::sync::LazyLock;

use serde::Deserialize;

use super::{Method, PyException, World, bind_method, dict, error, opt, py_cmp, req, s, truthy};
use crate::bfcl::pyfmt::py_str;
use crate::bfcl::value::PyValue;

const CLASS: &str = "GorillaFileSystem";

const METHODS: &[Method] = &[
    ("pwd", &[]),
    ("ls", &[opt("a", "False")]),
    ("cd", &[req("folder")]),
    ("mkdir", &[req("dir_name")]),
    ("touch", &[req("file_name")]),
    ("echo", &[req("content"), opt("file_name", "None")]),
    ("cat", &[req("file_name")]),
    ("find", &[opt("path", "'.'"), opt("name", "None")]),
    ("wc", &[req("file_name"), opt("mode", "'l'")]),
    ("sort", &[req("file_name")]),
    ("grep", &[req("file_name"), req("pattern")]),
    ("du", &[opt("human_readable", "False")]),
    ("tail", &[req("file_name"), opt("lines", "10")]),
    ("diff", &[req("file_name1"), req("file_name2")]),
    ("mv", &[req("source"), req("destination")]),
    ("rm", &[req("file_name")]),
    ("rmdir", &[req("dir_name")]),
    ("cp", &[req("source"), req("destination")]),
];

/// BFCL's long-context padding for this class (`long_context.py` in bfcl-eval,
/// Apache-2.0), generated into `filesystem_long_context.json` by
/// `tests/bfcl_worlds/generate_fs_long_context.py`.
#[derive(Debug, Deserialize)]
struct LongContext {
    /// Appended to every loaded file's content, except for `files_tail_used`.
    file_content_extension: String,
    /// File names that keep their content as loaded.
    files_tail_used: Vec<String>,
    /// Empty files added, in order, to every loaded directory without subdirectories.
    populate_file_extension: Vec<String>,
}

static LONG_CONTEXT: LazyLock<LongContext> = LazyLock::new(|| {
    serde_json::from_str(include_str!("filesystem_long_context.json"))
        .expect("src/bfcl/worlds/filesystem_long_context.json parses")
});

/// Characters `mkdir`, `touch`, `echo` and `cat` refuse in a name.
const INVALID: &str = "|/\\?%*:\"><";

#[derive(Debug, Clone)]
enum Node {
    Dir {
        name: String,
        parent: Option<usize>,
        contents: Vec<(String, usize)>,
    },
    File {
        name: String,
        content: String,
    },
}

/// State of a `GorillaFileSystem` instance.
#[derive(Debug, Clone)]
pub struct GorillaFileSystem {
    nodes: Vec<Node>,
    root: usize,
    cwd: usize,
    long_context: bool,
}

impl Default for GorillaFileSystem {
    fn default() -> Self {
        GorillaFileSystem {
            nodes: vec![Node::Dir {
                name: "/".into(),
                parent: None,
                contents: Vec::new(),
            }],
            root: 0,
            cwd: 0,
            long_context: false,
        }
    }
}

/// Python's `str.splitlines()` (the line breaks it knows, `\r\n` as one).
fn splitlines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if is_break {
            out.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r'
                && let Some((j, '\n')) = chars.peek().copied()
            {
                chars.next();
                end = j + 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The invalid-character check: `char in name` for each refused character, which
/// raises for a non-str name as Python's `in` does.
fn has_invalid(name: &PyValue) -> Result<bool, PyException> {
    match name {
        PyValue::Str(t) => Ok(t.chars().any(|c| INVALID.contains(c))),
        PyValue::List(_) | PyValue::Tuple(_) | PyValue::Dict(_) => Ok(false),
        other => Err(PyException::type_error(format!(
            "argument of type '{}' is not iterable",
            other.type_name()
        ))),
    }
}

impl GorillaFileSystem {
    fn name(&self, id: usize) -> &str {
        match &self.nodes[id] {
            Node::Dir { name, .. } | Node::File { name, .. } => name,
        }
    }

    fn contents(&self, id: usize) -> &[(String, usize)] {
        match &self.nodes[id] {
            Node::Dir { contents, .. } => contents,
            Node::File { .. } => &[],
        }
    }

    fn contents_mut(&mut self, id: usize) -> &mut Vec<(String, usize)> {
        match &mut self.nodes[id] {
            Node::Dir { contents, .. } => contents,
            Node::File { .. } => unreachable!("directories only"),
        }
    }

    fn parent(&self, id: usize) -> Option<usize> {
        match &self.nodes[id] {
            Node::Dir { parent, .. } => *parent,
            Node::File { .. } => None,
        }
    }

    fn is_dir(&self, id: usize) -> bool {
        matches!(self.nodes[id], Node::Dir { .. })
    }

    fn child(&self, dir: usize, name: &str) -> Option<usize> {
        self.contents(dir)
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, id)| *id)
    }

    fn file_here(&self, name: &str) -> Option<usize> {
        self.child(self.cwd, name).filter(|id| !self.is_dir(*id))
    }

    fn content(&self, id: usize) -> &str {
        match &self.nodes[id] {
            Node::File { content, .. } => content,
            Node::Dir { .. } => "",
        }
    }

    fn add(&mut self, dir: usize, node: Node) -> usize {
        let name = match &node {
            Node::Dir { name, .. } | Node::File { name, .. } => name.clone(),
        };
        self.nodes.push(node);
        let id = self.nodes.len() - 1;
        self.contents_mut(dir).push((name, id));
        id
    }

    fn remove_entry(&mut self, dir: usize, name: &str) -> Option<usize> {
        let list = self.contents_mut(dir);
        let pos = list.iter().position(|(n, _)| n == name)?;
        Some(list.remove(pos).1)
    }

    /// BFCL's `_load_directory`: a node from its config. In long-context mode each
    /// file's content gets the filler text appended (except a few names), and each
    /// directory without subdirectories gets the image files added after its own
    /// entries.
    fn build(
        &mut self,
        name: &str,
        parent: Option<usize>,
        spec: &serde_json::Value,
    ) -> Result<usize, PyException> {
        if spec.get("type").and_then(|t| t.as_str()) == Some("file") {
            let mut content = spec
                .get("content")
                .and_then(|c| c.as_str())
                .unwrap_or("")
                .to_string();
            if self.long_context && !LONG_CONTEXT.files_tail_used.iter().any(|n| n == name) {
                content.push_str(&LONG_CONTEXT.file_content_extension);
            }
            self.nodes.push(Node::File {
                name: name.into(),
                content,
            });
            return Ok(self.nodes.len() - 1);
        }
        self.nodes.push(Node::Dir {
            name: name.into(),
            parent,
            contents: Vec::new(),
        });
        let id = self.nodes.len() - 1;
        let mut bottommost = true;
        if let Some(children) = spec.get("contents").and_then(|c| c.as_object()) {
            for (child_name, child_spec) in children {
                let child = self.build(child_name, Some(id), child_spec)?;
                bottommost &= !self.is_dir(child);
                self.contents_mut(id).push((child_name.clone(), child));
            }
        }
        if bottommost && self.long_context {
            for file_name in &LONG_CONTEXT.populate_file_extension {
                if self.child(id, file_name).is_some() {
                    return Err(PyException::new(
                        "ValueError",
                        format!("File '{file_name}' already exists in directory '{name}'."),
                    ));
                }
                self.add(
                    id,
                    Node::File {
                        name: file_name.clone(),
                        content: String::new(),
                    },
                );
            }
        }
        Ok(id)
    }

    fn value(&self, id: usize) -> PyValue {
        match &self.nodes[id] {
            Node::File { name, content } => dict([
                ("__type__", s("File")),
                ("name", s(name.clone())),
                ("content", s(content.clone())),
            ]),
            Node::Dir { name, contents, .. } => dict([
                ("__type__", s("Directory")),
                ("name", s(name.clone())),
                (
                    "contents",
                    PyValue::Dict(
                        contents
                            .iter()
                            .map(|(n, c)| (s(n.clone()), self.value(*c)))
                            .collect(),
                    ),
                ),
            ]),
        }
    }

    fn pwd(&self) -> String {
        let mut names = Vec::new();
        let mut at = Some(self.cwd);
        while let Some(id) = at {
            names.push(self.name(id).to_string());
            at = self.parent(id);
        }
        names.reverse();
        format!("/{}", names.join("/"))
    }

    /// The directory a `find` path names, relative to the current one.
    fn resolve(&self, path: &str) -> Option<usize> {
        let (mut at, rest) = match path.strip_prefix('/') {
            Some(rest) => (self.root, rest),
            None => (self.cwd, path),
        };
        for part in rest.split('/') {
            match part {
                "" | "." => {}
                ".." => at = self.parent(at)?,
                name => at = self.child(at, name).filter(|id| self.is_dir(*id))?,
            }
        }
        Some(at)
    }

    fn walk(&self, dir: usize, prefix: &str, name: Option<&str>, out: &mut Vec<PyValue>) {
        for (n, id) in self.contents(dir) {
            let path = format!("{prefix}/{n}");
            if name.is_none_or(|want| n.contains(want)) {
                out.push(s(path.clone()));
            }
            if self.is_dir(*id) {
                self.walk(*id, &path, name, out);
            }
        }
    }

    fn size(&self, dir: usize) -> usize {
        self.contents(dir)
            .iter()
            .map(|(_, id)| match &self.nodes[*id] {
                Node::File { content, .. } => content.len(),
                Node::Dir { .. } => self.size(*id),
            })
            .sum()
    }

    fn cd(&mut self, folder: &PyValue) -> PyValue {
        let raw = py_str(folder);
        if raw == "/" {
            self.cwd = self.root;
            return dict([("current_working_directory", s(self.name(self.root)))]);
        }
        let folder = raw.trim_end_matches('/');
        if folder.contains('/') {
            return error(format!(
                "cd: {folder}: Unsupported path. Only one folder level at a time is supported."
            ));
        }
        match folder {
            ".." => match self.parent(self.cwd) {
                Some(p) => {
                    self.cwd = p;
                    PyValue::Dict(Vec::new())
                }
                None => error("Current directory is already the root. Cannot go back."),
            },
            "." => dict([("current_working_directory", s(self.name(self.cwd)))]),
            name => match self.child(self.cwd, name).filter(|id| self.is_dir(*id)) {
                Some(id) => {
                    self.cwd = id;
                    dict([("current_working_directory", s(name))])
                }
                None => error(format!("cd: '{name}': No such file or directory")),
            },
        }
    }

    fn mv_or_cp(&mut self, a: &[PyValue], copy: bool) -> Result<PyValue, PyException> {
        let (src, dst) = (py_str(&a[0]), py_str(&a[1]));
        let (cmd, verb) = if copy { ("cp", "copy") } else { ("mv", "move") };
        let done = if copy { "copied" } else { "moved" };
        let Some(id) = self.child(self.cwd, &src) else {
            return Ok(error(format!(
                "{cmd}: cannot {verb} '{src}': No such file or directory"
            )));
        };
        if dst.contains('/') {
            return Ok(error(format!(
                "{cmd}: path not allowed in destination. Provide only a file or directory name."
            )));
        }
        let (target, new_name) = match self.child(self.cwd, &dst) {
            Some(t) if self.is_dir(t) => {
                if self.child(t, &src).is_some() {
                    if copy {
                        return Err(PyException::new(
                            "Exception",
                            format!("File '{src}' already exists in directory '{dst}'."),
                        ));
                    }
                    return Ok(error(format!(
                        "mv: cannot move '{src}' to '{dst}/{src}': File exists"
                    )));
                }
                (t, src.clone())
            }
            Some(_) => {
                return Ok(error(format!(
                    "{cmd}: cannot {verb} '{src}' to '{dst}': Not a directory"
                )));
            }
            None => (self.cwd, dst.clone()),
        };
        let shown = if target == self.cwd {
            dst.clone()
        } else {
            format!("{dst}/{src}")
        };
        if copy {
            let node = match &self.nodes[id] {
                Node::File { content, .. } => Node::File {
                    name: new_name,
                    content: content.clone(),
                },
                Node::Dir { contents, .. } => Node::Dir {
                    name: new_name,
                    parent: Some(target),
                    contents: contents.clone(),
                },
            };
            self.add(target, node);
        } else {
            self.remove_entry(self.cwd, &src);
            match &mut self.nodes[id] {
                Node::File { name, .. } => *name = new_name.clone(),
                Node::Dir { name, parent, .. } => {
                    *name = new_name.clone();
                    *parent = Some(target);
                }
            }
            self.contents_mut(target).push((new_name, id));
        }
        Ok(dict([(
            "result",
            s(format!("'{src}' {done} to '{shown}'")),
        )]))
    }

    fn dispatch(&mut self, m: &str, a: Vec<PyValue>) -> Result<PyValue, PyException> {
        let no_file = |cmd: &str, n: &str| error(format!("{cmd}: {n}: No such file or directory"));
        Ok(match m {
            "pwd" => dict([("current_working_directory", s(self.pwd()))]),
            "ls" => {
                let all = truthy(&a[0]);
                let names = self
                    .contents(self.cwd)
                    .iter()
                    .filter(|(n, _)| all || !n.starts_with('.'))
                    .map(|(n, _)| s(n.clone()))
                    .collect();
                dict([("current_directory_content", PyValue::List(names))])
            }
            "cd" => self.cd(&a[0]),
            "mkdir" | "touch" => {
                let name = &a[0];
                let (what, cmd) = if m == "mkdir" {
                    ("create directory", "mkdir")
                } else {
                    ("touch", "touch")
                };
                let text = py_str(name);
                if has_invalid(name)? {
                    return Ok(error(format!(
                        "{cmd}: cannot {what} '{text}': Invalid character"
                    )));
                }
                if self.child(self.cwd, &text).is_some() {
                    return Ok(error(format!("{cmd}: cannot {what} '{text}': File exists")));
                }
                let node = if m == "mkdir" {
                    Node::Dir {
                        name: text,
                        parent: Some(self.cwd),
                        contents: Vec::new(),
                    }
                } else {
                    Node::File {
                        name: text,
                        content: String::new(),
                    }
                };
                self.add(self.cwd, node);
                PyValue::None
            }
            "echo" => {
                if !truthy(&a[1]) {
                    return Ok(dict([("terminal_output", a[0].clone())]));
                }
                let name = py_str(&a[1]);
                if has_invalid(&a[1])? {
                    return Ok(error(format!(
                        "echo: cannot write to '{name}': Invalid character"
                    )));
                }
                match self.file_here(&name) {
                    Some(id) => {
                        if let Node::File { content, .. } = &mut self.nodes[id] {
                            *content = py_str(&a[0]);
                        }
                        PyValue::None
                    }
                    None => error(format!("echo: cannot write to '{name}': No such file")),
                }
            }
            "cat" => {
                let name = py_str(&a[0]);
                if has_invalid(&a[0])? {
                    return Ok(error(format!("cat: '{name}': Invalid character")));
                }
                match self.child(self.cwd, &name) {
                    Some(id) if self.is_dir(id) => error(format!("cat: '{name}': Is a directory")),
                    Some(id) => dict([("file_content", s(self.content(id)))]),
                    None => error(format!("cat: '{name}': No such file or directory")),
                }
            }
            "find" => {
                let path = py_str(&a[0]);
                let Some(dir) = self.resolve(&path) else {
                    return Ok(error(format!("find: '{path}': No such file or directory")));
                };
                let name = match &a[1] {
                    PyValue::None => None,
                    v => Some(py_str(v)),
                };
                let mut out = Vec::new();
                self.walk(dir, path.trim_end_matches('/'), name.as_deref(), &mut out);
                dict([("matches", PyValue::List(out))])
            }
            "wc" => {
                let name = py_str(&a[0]);
                let Some(id) = self.file_here(&name) else {
                    return Ok(no_file("wc", &name));
                };
                let text = self.content(id);
                let (count, kind) = match py_str(&a[1]).as_str() {
                    "l" => (splitlines(text).len(), "lines"),
                    "w" => (text.split_whitespace().count(), "words"),
                    "c" => (text.chars().count(), "characters"),
                    other => return Ok(error(format!("wc: invalid mode '{other}'"))),
                };
                dict([("count", PyValue::Int(count as i128)), ("type", s(kind))])
            }
            "sort" => {
                let name = py_str(&a[0]);
                let Some(id) = self.file_here(&name) else {
                    return Ok(no_file("sort", &name));
                };
                let mut lines = splitlines(self.content(id));
                lines.sort();
                dict([("sorted_content", s(lines.join("\n")))])
            }
            "grep" => {
                let name = py_str(&a[0]);
                let Some(id) = self.file_here(&name) else {
                    return Ok(no_file("grep", &name));
                };
                let pattern = py_str(&a[1]);
                let hits = splitlines(self.content(id))
                    .into_iter()
                    .filter(|l| l.contains(&pattern))
                    .map(s)
                    .collect();
                dict([("matching_lines", PyValue::List(hits))])
            }
            "du" => {
                let bytes = self.size(self.cwd);
                let text = if truthy(&a[0]) {
                    let mut size = bytes as f64;
                    let mut unit = 0;
                    let units = ["B", "KB", "MB", "GB", "TB"];
                    while size >= 1024.0 && unit < units.len() - 1 {
                        size /= 1024.0;
                        unit += 1;
                    }
                    format!("{size:.2} {}", units[unit])
                } else {
                    format!("{bytes} bytes")
                };
                dict([("disk_usage", s(text))])
            }
            "tail" => {
                let name = py_str(&a[0]);
                let Some(id) = self.file_here(&name) else {
                    return Ok(no_file("tail", &name));
                };
                let lines = splitlines(self.content(id));
                let len = lines.len() as i128;
                let n = if py_cmp(&a[1], ">", &PyValue::Int(len))? {
                    len
                } else {
                    match &a[1] {
                        PyValue::Int(n) => *n,
                        PyValue::Bool(b) => i128::from(*b),
                        other => {
                            return Err(PyException::type_error(format!(
                                "slice indices must be integers or None or have an __index__ method, not {}",
                                other.type_name()
                            )));
                        }
                    }
                };
                // Python's lines[-n:]: n == 0 keeps everything.
                let start = if n > 0 { len - n } else { (-n).min(len) };
                dict([("last_lines", s(lines[start as usize..].join("\n")))])
            }
            "diff" => {
                let (n1, n2) = (py_str(&a[0]), py_str(&a[1]));
                let (Some(f1), Some(f2)) = (self.file_here(&n1), self.file_here(&n2)) else {
                    return Ok(error(format!(
                        "diff: {n1} or {n2}: No such file or directory"
                    )));
                };
                let out: Vec<String> = splitlines(self.content(f1))
                    .into_iter()
                    .zip(splitlines(self.content(f2)))
                    .filter(|(x, y)| x != y)
                    .map(|(x, y)| format!("- {x}\n+ {y}"))
                    .collect();
                dict([("diff_lines", s(out.join("\n")))])
            }
            "mv" => return self.mv_or_cp(&a, false),
            "cp" => return self.mv_or_cp(&a, true),
            "rm" => {
                let name = py_str(&a[0]);
                match self.remove_entry(self.cwd, &name) {
                    Some(_) => dict([("result", s(format!("'{name}' removed")))]),
                    None => error(format!(
                        "rm: cannot remove '{name}': No such file or directory"
                    )),
                }
            }
            "rmdir" => {
                let name = py_str(&a[0]);
                let msg = |why: &str| error(format!("rmdir: cannot remove '{name}': {why}"));
                match self.child(self.cwd, &name) {
                    None => msg("No such file or directory"),
                    Some(id) if !self.is_dir(id) => msg("Not a directory"),
                    Some(id) if !self.contents(id).is_empty() => msg("Directory not empty"),
                    Some(_) => {
                        self.remove_entry(self.cwd, &name);
                        dict([("result", s(format!("'{name}' removed")))])
                    }
                }
            }
            _ => unreachable!("method table and dispatch agree"),
        })
    }
}

impl World for GorillaFileSystem {
    fn class(&self) -> &'static str {
        CLASS
    }

    fn load(&mut self, config: &serde_json::Value, long_context: bool) -> Result<(), PyException> {
        *self = GorillaFileSystem::default();
        self.long_context = long_context;
        if let Some((name, spec)) = config
            .get("root")
            .and_then(|r| r.as_object())
            .and_then(|r| r.iter().next())
        {
            self.nodes.clear();
            self.root = self.build(name, None, spec)?;
            self.cwd = self.root;
        }
        Ok(())
    }

    fn call(
        &mut self,
        method: &str,
        args: Vec<PyValue>,
        kwargs: Vec<(String, PyValue)>,
    ) -> Result<PyValue, PyException> {
        let (m, a) = bind_method(CLASS, METHODS, method, args, kwargs)?;
        self.dispatch(m, a)
    }

    fn state(&self) -> Vec<(String, PyValue)> {
        vec![
            ("long_context".into(), PyValue::Bool(self.long_context)),
            ("root".into(), self.value(self.root)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::worlds::execute_text;

    fn loaded(long_context: bool) -> Box<dyn World> {
        let config = serde_json::json!({"root": {"w": {"type": "directory", "contents": {
            "d": {"type": "directory", "contents": {
                "a.txt": {"type": "file", "content": "x"},
                "log.txt": {"type": "file", "content": "y"},
            }},
            "top.txt": {"type": "file", "content": "z"},
        }}}});
        let mut w = super::super::world(CLASS).expect("ported");
        w.load(&config, long_context).expect("load");
        w
    }

    #[test]
    fn long_context_pads_files_and_bottom_directories() {
        let n = LONG_CONTEXT.populate_file_extension.len();
        let mut w = loaded(true);
        // The root has a subdirectory: no images; its own file is padded.
        assert_eq!(
            execute_text(w.as_mut(), "ls()"),
            r#"{"current_directory_content": ["d", "top.txt"]}"#
        );
        let top = 1 + LONG_CONTEXT.file_content_extension.chars().count();
        assert_eq!(
            execute_text(w.as_mut(), "wc(file_name='top.txt', mode='c')"),
            format!(r#"{{"count": {top}, "type": "characters"}}"#)
        );
        execute_text(w.as_mut(), "cd(folder='d')");
        let ls = execute_text(w.as_mut(), "ls()");
        assert!(ls.starts_with(r#"{"current_directory_content": ["a.txt", "log.txt", "image_"#));
        assert_eq!(ls.matches(".jpg").count(), n);
        // log.txt is one of the names BFCL leaves unpadded.
        assert_eq!(
            execute_text(w.as_mut(), "cat(file_name='log.txt')"),
            r#"{"file_content": "y"}"#
        );
        let plain = loaded(false);
        assert!(!format!("{:?}", plain.state()).contains(".jpg"));
    }

    #[test]
    fn clones_of_a_loaded_instance_are_independent() {
        let original = loaded(true);
        let before = format!("{:?}", original.state());
        let mut copy = original.clone_box();
        execute_text(copy.as_mut(), "cd(folder='d')");
        execute_text(
            copy.as_mut(),
            "rm(file_name='image_344822349461074042.jpg')",
        );
        execute_text(copy.as_mut(), "echo(content='new', file_name='a.txt')");
        assert_eq!(format!("{:?}", original.state()), before);
        let mut again = original.clone_box();
        assert_eq!(
            execute_text(again.as_mut(), "pwd()"),
            r#"{"current_working_directory": "/w"}"#
        );
        assert_eq!(format!("{:?}", again.state()), before);
    }
}
