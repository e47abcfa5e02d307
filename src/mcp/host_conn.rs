//! One connection of the MCP tool host ([`super::host::McpHost`]) and one attempt at a
//! call on it: the call's own log window, and whether the call had the server to itself.
//!
//! A server shared by concurrent trials (`isolation: suite`) can die under several calls
//! at once, and every one of them then fails alike. Whether a call was *alone* on the
//! connection (no other call in flight at any moment of its life) is what tells the call
//! that killed the server from the calls that were merely in flight: a call that dies
//! alone killed it. [`Connection`] counts the calls in flight and the calls started, so
//! [`Connection::attempt`] can say so afterwards without any lock around the server.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use serde_json::{Map, Value};
use tokio::sync::Mutex;

use super::host_log::{LoggedExchange, call_exchanges};
use super::{CallResult, McpClient, McpError, McpTool};

/// A connected client and the server's tools by name (read once per connection: the
/// annotations decide what may run).
#[derive(Debug)]
pub(super) struct Connection {
    /// The client, connected.
    pub(super) client: McpClient,
    /// The server's tools by name, as listed when the connection was made.
    pub(super) tools: HashMap<String, McpTool>,
    /// One lock per distinct call (tool and arguments) in flight: identical calls on this
    /// connection take turns, so the only request of that tool with those arguments in a
    /// call's log window is its own, and its transcript can be cut out exactly. Different
    /// calls still run concurrently.
    identical: std::sync::Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Calls in flight on this connection now.
    in_flight: AtomicUsize,
    /// Calls ever started on this connection (with `in_flight`, whether a call was alone).
    started: AtomicU64,
}

/// What one attempt at a call on a connection gave.
#[derive(Debug)]
pub(super) struct Attempt {
    /// The server's answer, or why there was none.
    pub(super) result: Result<CallResult, McpError>,
    /// The call's own exchanges (see [`call_exchanges`]).
    pub(super) exchanges: Vec<LoggedExchange>,
    /// No other call was in flight on the connection at any moment of this one.
    pub(super) alone: bool,
    /// The server process was alive when the call was sent (a call sent to a server that
    /// had already died can not have killed it).
    pub(super) sent_alive: bool,
}

impl Attempt {
    /// Whether the server died under this call: it went away during the call and its
    /// process is gone (a transport that merely closed a request is not a death).
    pub(super) fn died(&self, conn: &Connection) -> bool {
        matches!(self.result, Err(McpError::Closed { .. })) && !conn.client.alive()
    }
}

impl Connection {
    /// A connection over `client`, whose server listed `tools`.
    pub(super) fn new(client: McpClient, tools: HashMap<String, McpTool>) -> Connection {
        Connection {
            client,
            tools,
            identical: std::sync::Mutex::default(),
            in_flight: AtomicUsize::new(0),
            started: AtomicU64::new(0),
        }
    }

    /// Call `tool` with `arguments` once, keeping the call's own exchanges and whether
    /// it was alone on the connection.
    pub(super) async fn attempt(&self, tool: &str, arguments: &Map<String, Value>) -> Attempt {
        let key = call_key(tool, arguments);
        let turn = self.turn_of(&key);
        let attempt = {
            let _mine = turn.lock().await;
            // Counted once its turn came, so a call waiting behind an identical one is
            // not in flight yet.
            let before = self.in_flight.fetch_add(1, Ordering::SeqCst);
            let number = self.started.fetch_add(1, Ordering::SeqCst);
            let sent_alive = self.client.alive();
            let from = self.client.log().len();
            let result = self.client.call_tool(tool, arguments).await;
            let window = self.client.log().since(from);
            // Calls started after this one, while it was in flight.
            let later = self.started.load(Ordering::SeqCst) - number - 1;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            Attempt {
                result,
                exchanges: call_exchanges(&window, tool, arguments),
                alone: before == 0 && later == 0,
                sent_alive,
            }
        };
        self.release(&key, turn);
        attempt
    }

    /// The lock identical calls share (taken out of the map when no one holds it).
    fn turn_of(&self, key: &str) -> Arc<Mutex<()>> {
        let mut map = self.identical.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(key.to_string()).or_default().clone()
    }

    /// Forget `key`'s lock once only the map holds it.
    fn release(&self, key: &str, lock: Arc<Mutex<()>>) {
        let mut map = self.identical.lock().unwrap_or_else(|p| p.into_inner());
        drop(lock);
        if map.get(key).is_some_and(|l| Arc::strong_count(l) == 1) {
            map.remove(key);
        }
    }
}

/// A text equal for calls with equal arguments whatever their key order.
fn call_key(tool: &str, arguments: &Map<String, Value>) -> String {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let sorted: std::collections::BTreeMap<&String, Value> =
                    m.iter().map(|(k, v)| (k, canonical(v))).collect();
                serde_json::json!(sorted)
            }
            Value::Array(a) => a.iter().map(canonical).collect(),
            other => other.clone(),
        }
    }
    let args = canonical(&Value::Object(arguments.clone()));
    format!("{tool}\u{0}{args}")
}
