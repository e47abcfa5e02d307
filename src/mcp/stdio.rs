//! The stdio transport: a spawned server process speaking newline-delimited JSON-RPC.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::transport::{Outgoing, Transport};
use super::{ExchangeLog, McpError, ServerSpec};

/// A server process and its pipes.
#[derive(Debug)]
pub struct StdioTransport {
    log: ExchangeLog,
}

impl StdioTransport {
    /// Spawn `program args`; stderr is drained into the log.
    pub async fn spawn(
        spec: &ServerSpec,
        program: &str,
        args: &[String],
        log: ExchangeLog,
    ) -> Result<StdioTransport, McpError> {
        let _ = (spec, program, args);
        let _ = log;
        unimplemented!("stdio transport")
    }
}

#[async_trait]
impl Transport for StdioTransport {
    async fn request(&self, out: &Outgoing, timeout: Duration) -> Result<Value, McpError> {
        let _ = (out, timeout);
        unimplemented!("stdio transport")
    }

    async fn notify(&self, out: &Outgoing) -> Result<(), McpError> {
        let _ = out;
        unimplemented!("stdio transport")
    }

    fn set_protocol(&self, _version: &str, _modern: bool) {}

    fn alive(&self) -> bool {
        unimplemented!("stdio transport")
    }

    async fn close(&self) {
        unimplemented!("stdio transport")
    }

    fn log(&self) -> &ExchangeLog {
        &self.log
    }
}
