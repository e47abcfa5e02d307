//! What MCP server to talk to: `stdio:CMD ARGS…` (spawn a command) or an `http(s)://` URL
//! (Streamable HTTP).

use std::fmt;
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

impl fmt::Display for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerSpec::Stdio { program, args } => {
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
            }
        );
        assert_eq!(
            s.to_string(),
            "stdio:npx -y '@scope/server x' --root '/tmp/a b'"
        );
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
