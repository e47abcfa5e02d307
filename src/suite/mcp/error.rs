//! Errors of the MCP layer: every one is the harness's (transport, protocol, server),
//! never the model's.

/// What went wrong talking to an MCP server. Messages name the server as the user wrote
/// it and say how to fix the problem where there is something to fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    /// The server spec (`stdio:CMD ARGS…` or an `http(s)://` URL) could not be read.
    #[error("`{spec}` is not an MCP server: {why}")]
    BadSpec {
        /// The spec as written.
        spec: String,
        /// Why it is not one.
        why: String,
    },
    /// The server could not be started or reached.
    #[error("could not reach MCP server `{server}`: {why}")]
    Connect {
        /// The server as written.
        server: String,
        /// Why.
        why: String,
    },
    /// No answer within the request's timeout.
    #[error("MCP server `{server}` did not answer `{method}` within {timeout_ms} ms")]
    Timeout {
        /// The server as written.
        server: String,
        /// The request's method.
        method: String,
        /// The bound.
        timeout_ms: u64,
    },
    /// The server went away (process exited, connection closed) before answering.
    #[error("MCP server `{server}` went away during `{method}`: {why}")]
    Closed {
        /// The server as written.
        server: String,
        /// The request's method.
        method: String,
        /// Exit status, stderr tail or transport error.
        why: String,
    },
    /// The server sent something that is not valid JSON-RPC, or not the result shape the
    /// method has.
    #[error("MCP server `{server}` sent a malformed answer to `{method}`: {why}")]
    Malformed {
        /// The server as written.
        server: String,
        /// The request's method.
        method: String,
        /// What is wrong, with an excerpt of what arrived.
        why: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server `{server}` refused `{method}`: {message} (JSON-RPC error {code})")]
    Rpc {
        /// The server as written.
        server: String,
        /// The request's method.
        method: String,
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
        /// The error's `data`, if any (boxed: it keeps every `Result<_, McpError>` small).
        data: Option<Box<serde_json::Value>>,
    },
    /// The server speaks no protocol version toolgauge speaks.
    #[error("MCP server `{server}` speaks no protocol version toolgauge does: {why}")]
    Incompatible {
        /// The server as written.
        server: String,
        /// What it offered and what toolgauge speaks.
        why: String,
    },
    /// A snapshot file could not be read or written.
    #[error("MCP snapshot `{path}`: {why}")]
    Snapshot {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
}
