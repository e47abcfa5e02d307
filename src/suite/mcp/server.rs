//! What MCP server to talk to: `stdio:CMD ARGS…` (spawn a command) or an `http(s)://` URL
//! (Streamable HTTP).
//!
//! Where a `stdio:` command's relative paths point depends on where it is written: on the
//! command line, at the current directory; in a suite, at the suite's directory, as every
//! other path of a suite (its snapshot, its distractor pool), so a suite works from
//! wherever it is run. A suite's servers carry their directory ([`ServerSpec::in_dir`]);
//! the process starts there.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::McpError;

/// An MCP server as a user names it on the command line or in a suite.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ServerSpec {
    /// Spawn `program` with `args` and speak newline-delimited JSON-RPC on its stdio.
    Stdio {
        /// The command.
        program: String,
        /// Its arguments (split like a POSIX shell would, quotes honoured; no expansion).
        args: Vec<String>,
        /// The directory the process starts in, which a relative `program` path and
        /// relative paths among `args` are relative to: the suite's directory for a
        /// suite's server; `None` for toolgauge's own working directory (the command
        /// line). Not part of the text of the spec.
        dir: Option<PathBuf>,
    },
    /// POST JSON-RPC to one Streamable HTTP endpoint.
    Http {
        /// The endpoint URL (`http://` or `https://`).
        url: String,
    },
}

impl FromStr for ServerSpec {
    type Err = McpError;

    fn from_str(text: &str) -> Result<ServerSpec, McpError> {
        let bad = |why: &str| McpError::BadSpec {
            spec: text.to_string(),
            why: why.to_string(),
        };
        let trimmed = text.trim();
        if let Some(command) = trimmed.strip_prefix("stdio:") {
            let words = shlex::split(command)
                .ok_or_else(|| bad("its command has an unclosed quote or a trailing `\\`"))?;
            let mut words = words.into_iter();
            let program = words.next().ok_or_else(|| {
                bad("`stdio:` needs a command after it, e.g. `stdio:npx -y @modelcontextprotocol/server-everything`")
            })?;
            return Ok(ServerSpec::Stdio {
                program,
                args: words.collect(),
                dir: None,
            });
        }
        let lower = trimmed.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            if trimmed.len() <= "https://".len() || trimmed.contains(char::is_whitespace) {
                return Err(bad("the URL has no host, or contains spaces"));
            }
            return Ok(ServerSpec::Http {
                url: trimmed.to_string(),
            });
        }
        Err(bad(
            "write `stdio:CMD ARGS…` to spawn a server, or an `http://`/`https://` URL of a Streamable HTTP endpoint",
        ))
    }
}

impl ServerSpec {
    /// The same server as a suite in `dir` names it: a `stdio:` command starts in `dir`
    /// (an empty `dir`, a suite in the current directory, changes nothing). URLs are
    /// left alone.
    pub fn in_dir(self, dir: &Path) -> ServerSpec {
        match self {
            ServerSpec::Stdio { program, args, .. } if !dir.as_os_str().is_empty() => {
                ServerSpec::Stdio {
                    program,
                    args,
                    dir: Some(dir.to_path_buf()),
                }
            }
            other => other,
        }
    }

    /// The server a suite at `suite` names with `text`: parsed, in the suite's directory.
    pub fn in_suite(text: &str, suite: &Path) -> Result<ServerSpec, McpError> {
        let spec: ServerSpec = text.parse()?;
        Ok(spec.in_dir(suite.parent().unwrap_or_else(|| Path::new(""))))
    }

    /// The directory a `stdio:` command starts in, when it is not the current one.
    pub fn dir(&self) -> Option<&Path> {
        match self {
            ServerSpec::Stdio { dir, .. } => dir.as_deref(),
            ServerSpec::Http { .. } => None,
        }
    }
}

impl fmt::Display for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerSpec::Stdio { program, args, .. } => {
                let words = std::iter::once(program).chain(args);
                let joined = shlex::try_join(words.map(String::as_str))
                    .unwrap_or_else(|_| format!("{program} {}", args.join(" ")));
                write!(f, "stdio:{joined}")
            }
            ServerSpec::Http { url } => f.write_str(url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_splits_like_a_shell() {
        let s: ServerSpec = "stdio:npx -y '@scope/server x' --root \"/tmp/a b\""
            .parse()
            .unwrap();
        assert_eq!(
            s,
            ServerSpec::Stdio {
                program: "npx".into(),
                args: vec![
                    "-y".into(),
                    "@scope/server x".into(),
                    "--root".into(),
                    "/tmp/a b".into()
                ],
                dir: None,
            }
        );
        assert_eq!(
            s.to_string(),
            "stdio:npx -y '@scope/server x' --root '/tmp/a b'"
        );
    }

    #[test]
    fn a_suite_s_stdio_server_starts_in_the_suite_s_directory_and_prints_as_written() {
        let s = ServerSpec::in_suite("stdio:python srv.py", Path::new("suites/mine.yaml")).unwrap();
        assert_eq!(s.dir(), Some(Path::new("suites")));
        assert_eq!(s.to_string(), "stdio:python srv.py");
        // A suite in the current directory, and URLs, keep no directory.
        let here = ServerSpec::in_suite("stdio:python srv.py", Path::new("mine.yaml")).unwrap();
        assert_eq!(here.dir(), None);
        assert_eq!(here, "stdio:python srv.py".parse().unwrap());
        let url = ServerSpec::in_suite("http://127.0.0.1:1/mcp", Path::new("a/b.yaml")).unwrap();
        assert_eq!(url.dir(), None);
    }

    #[test]
    fn urls_and_bad_specs() {
        assert_eq!(
            "http://127.0.0.1:3001/mcp".parse::<ServerSpec>().unwrap(),
            ServerSpec::Http {
                url: "http://127.0.0.1:3001/mcp".into()
            }
        );
        for bad in [
            "stdio:",
            "stdio:'open",
            "ftp://x",
            "server-everything",
            "http://",
        ] {
            let e = bad.parse::<ServerSpec>().unwrap_err();
            assert!(matches!(e, McpError::BadSpec { .. }), "{bad}: {e}");
            assert!(e.to_string().contains(bad), "{e}");
        }
    }
}
