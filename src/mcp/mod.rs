//! MCP: a thin client for Model Context Protocol servers (stdio and Streamable HTTP, the
//! 2026-07-28 era and the legacy `initialize` era), their tools as suite tools, pinned
//! snapshots of a server's tools, and a tool host that executes loop calls on a server.
//!
//! The client is our own rather than an SDK's because the suite and the reports need a
//! tool's raw JSON (fields a typed SDK drops survive), every exchange logged verbatim,
//! and bounded, harness-level errors (a server fault is never the model's failure).
//!
//! Layers: [`server`] says what to talk to; [`transport`] moves JSON-RPC messages (one
//! per stdio process, one per HTTP endpoint) and logs them; [`client`] speaks the
//! protocol (era discovery, `tools/list`, `tools/call`); [`tool`] reads a tool's raw
//! JSON; [`snapshot`] pins a server's tools to a file. Under the client: [`jsonrpc`]
//! (message kinds), [`lifecycle`] (the era probe and handshake), [`input`] (answers to
//! `input_required` rounds).

pub mod client;
pub mod fetch;
pub mod host;
mod host_conn;
pub mod host_log;
pub mod http;
pub mod http_headers;
pub mod http_reply;
pub mod input;
pub mod jsonrpc;
pub mod lifecycle;
pub mod stdio;
pub mod suites;
pub mod transport;

pub use crate::suite::mcp::{
    Annotations, Era, InputPolicy, McpError, McpTool, ServerSpec, Snapshot, error, server,
    snapshot, tool,
};
pub use client::{CallResult, ClientOptions, InputAnswer, McpClient};
pub use transport::{Direction, Exchange, ExchangeLog};
