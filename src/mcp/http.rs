//! The http transport: a spawned server process speaking newline-delimited JSON-RPC.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::transport::{Outgoing, Transport};
use super::{ExchangeLog, McpError, ServerSpec};

/// One endpoint, its session and protocol headers.
#[derive(Debug)]
pub struct HttpTransport {
    log: ExchangeLog,
}

impl HttpTransport {
    /// Prepare the endpoint `url` (nothing is sent yet).
    pub fn new(spec: &ServerSpec, url: &str, log: ExchangeLog) -> Result<HttpTransport, McpError> {
        let _ = (spec, url);
        Ok(HttpTransport { log })
    }
}

#[async_trait]
impl Transport for HttpTransport {
    async fn request(&self, out: &Outgoing, timeout: Duration) -> Result<Value, McpError> {
        let _ = (out, timeout);
        unimplemented!("http transport")
    }

    async fn notify(&self, out: &Outgoing) -> Result<(), McpError> {
        let _ = out;
        unimplemented!("http transport")
    }

    fn set_protocol(&self, _version: &str, _modern: bool) {}

    fn alive(&self) -> bool {
        unimplemented!("http transport")
    }

    async fn close(&self) {
        unimplemented!("http transport")
    }

    fn log(&self) -> &ExchangeLog {
        &self.log
    }
}
