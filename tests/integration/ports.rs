//! Local ports for tests, without the race of "bind port 0, read the port, drop the
//! listener, start a server on it": between the drop and the server's bind, another
//! process can take the port (a parallel test's outgoing connection draws its local
//! port from the same ephemeral range), and the server then dies unable to bind, or a
//! test expecting a refused connection reaches someone else.
//!
//! - [`RefusingPort`] keeps a socket bound to the port, never listening, for as long as
//!   the test holds it: every connection is refused and nobody else can bind it.
//! - [`spawn_on_free_port`] starts a server that binds the port itself (a Node or Python
//!   peer, which cannot be handed our socket) and starts it again on another port when
//!   it exits before listening.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A local port that refuses every connection while this value lives (see the module
/// documentation).
pub struct RefusingPort {
    _socket: tokio::net::TcpSocket,
    /// The port.
    pub port: u16,
}

impl RefusingPort {
    /// Reserve a port on 127.0.0.1 that nothing listens on.
    pub fn new() -> RefusingPort {
        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        socket
            .bind(([127, 0, 0, 1], 0).into())
            .expect("bind a free port");
        let port = socket.local_addr().expect("its address").port();
        RefusingPort {
            _socket: socket,
            port,
        }
    }
}

/// A server process listening on `port`, killed when dropped (even when the test
/// panics).
pub struct PortServer {
    /// The process.
    pub child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl Drop for PortServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How many ports a server is tried on before the test fails: one lost race is rare,
/// five in a row mean the server cannot listen at all.
const TRIES: usize = 5;

/// Start the server `command(port)` builds on a port the OS just handed out, and wait
/// until it accepts connections (60 s in all: a Python server importing its SDK on a
/// busy 2-core machine takes seconds). A server that exits before listening lost the
/// port to another process: it is started again on a new port, up to [`TRIES`] times.
pub fn spawn_on_free_port(name: &str, mut command: impl FnMut(u16) -> Command) -> PortServer {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut exits = Vec::new();
    for _ in 0..TRIES {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
            l.local_addr().unwrap().port()
        };
        let mut cmd = command(port);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {name}: {e}"));
        let mut s = PortServer { child, port };
        loop {
            if let Ok(Some(status)) = s.child.try_wait() {
                exits.push(format!("port {port}: {status}"));
                break;
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                // Listening, unless another process took the port and ours is about to
                // find that out: it must still be running.
                std::thread::sleep(Duration::from_millis(50));
                if matches!(s.child.try_wait(), Ok(None)) {
                    return s;
                }
                continue;
            }
            assert!(
                Instant::now() < deadline,
                "{name} did not listen on {port} within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    panic!(
        "{name} exited before listening on each of {TRIES} ports: {}",
        exits.join("; ")
    );
}
