//! HTTP/2 over TLS: a live run against an HTTPS endpoint that offers `h2` by ALPN sends
//! every request over HTTP/2, multiplexed on connections reused across trials (at most
//! one per request in flight at the start, usually just one); an endpoint that offers
//! only `http/1.1` gets HTTP/1.1 on kept-alive connections.
//!
//! The server (tokio-rustls + hyper, in this test process) uses the certificate in
//! `fixtures/tls/` (a test CA and a `localhost`/`127.0.0.1` leaf it signed, valid until
//! 2126); the binary trusts the CA through `SSL_CERT_FILE`, as any user with a private CA
//! would. The server counts TCP connections, and notes which connection and which HTTP
//! version carried each request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

use crate::support::{OK, THRESHOLD_FAILED, Toolgauge, fixtures_dir};

const OPENAI_CALL: &str =
    include_str!("../../src/provider/testdata/openai/chat_single_tool_call_recorded.json");

/// What the server saw.
#[derive(Default)]
struct Seen {
    /// TCP connections accepted.
    connections: AtomicUsize,
    /// (connection number, HTTP version) of each chat request.
    requests: Mutex<Vec<(usize, Version)>>,
}

/// The answer to every request: a `get_weather` call for Paris.
fn answer() -> Bytes {
    let mut v: Value = serde_json::from_str(OPENAI_CALL).unwrap();
    let f = &mut v["choices"][0]["message"]["tool_calls"][0]["function"];
    f["name"] = json!("get_weather");
    f["arguments"] = json!(r#"{"city":"Paris"}"#);
    Bytes::from(v.to_string())
}

/// Start the TLS server offering `alpn` on a runtime of its own; returns its port.
fn serve(alpn: &[&[u8]], seen: Arc<Seen>) -> (u16, tokio::runtime::Runtime) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = fixtures_dir().join("tls");
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("server.pem"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).unwrap();
    let mut config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    rt.spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let n = seen.connections.fetch_add(1, Ordering::SeqCst);
            let (acceptor, seen) = (acceptor.clone(), seen.clone());
            tokio::spawn(async move {
                // A client may drop a spare connection during the handshake.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let seen = seen.clone();
                    async move {
                        let version = req.version();
                        let body = req.into_body().collect().await?.to_bytes();
                        assert!(serde_json::from_slice::<Value>(&body).is_ok());
                        seen.requests.lock().unwrap().push((n, version));
                        let mut reply = Response::new(Full::new(answer()));
                        reply.headers_mut().insert(
                            "content-type",
                            hyper::header::HeaderValue::from_static("application/json"),
                        );
                        Ok::<_, hyper::Error>(reply)
                    }
                });
                let io = TokioIo::new(tls);
                let _ = if h2 {
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, service)
                        .await
                } else {
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await
                };
            });
        }
    });
    (port, rt)
}

/// Run `live.yaml` (12 trials a repeat) with `--repeats 2 -j 4` against the server and
/// return what it saw.
fn run_against(alpn: &[&[u8]]) -> Arc<Seen> {
    let seen = Arc::new(Seen::default());
    let (port, _rt) = serve(alpn, seen.clone());
    let t = Toolgauge::new();
    let suite = t.fixture("live.yaml");
    let target = format!("openai-compatible:local@https://localhost:{port}/v1");
    let ca = fixtures_dir().join("tls/ca.pem");
    let ca = ca.to_str().unwrap();
    let args = [
        "run",
        &suite,
        "--target",
        &target,
        "--repeats",
        "2",
        "-j",
        "4",
        "--out",
        "out",
    ];
    let o = t.run_env(&[("SSL_CERT_FILE", ca), ("SSL_CERT_DIR", "")], &args);
    assert!(
        matches!(o.code, Some(OK | THRESHOLD_FAILED)),
        "{}\n{}",
        o.stdout,
        o.stderr
    );
    let trials = t.run_dir("out").trials();
    assert_eq!(trials.len(), 24);
    for trial in &trials {
        assert!(
            trial["verdict"] == "pass" || trial["verdict"] == "fail",
            "{trial}"
        );
        assert_eq!(trial["response"]["attempts"], 1, "{trial}");
    }
    seen
}

#[test]
fn an_endpoint_offering_h2_gets_every_trial_over_http2_on_reused_connections() {
    let seen = run_against(&[b"h2", b"http/1.1"]);
    let requests = seen.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 24);
    assert!(
        requests.iter().all(|(_, v)| *v == Version::HTTP_2),
        "{requests:?}"
    );
    // Connections are reused across trials: the 24 requests share at most the 4
    // connections the first 4 requests (started together) may open before the first
    // one has negotiated h2 (usually all go over that one; the spares are dropped).
    let used: std::collections::BTreeSet<usize> = requests.iter().map(|(c, _)| *c).collect();
    assert!((1..=4).contains(&used.len()), "{requests:?}");
    let opened = seen.connections.load(Ordering::SeqCst);
    assert!((1..=4).contains(&opened), "{opened} connections");
}

#[test]
fn an_endpoint_offering_only_http1_gets_http1_on_kept_alive_connections() {
    let seen = run_against(&[b"http/1.1"]);
    let requests = seen.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 24);
    assert!(
        requests.iter().all(|(_, v)| *v == Version::HTTP_11),
        "{requests:?}"
    );
    // Connections are kept for the next requests rather than opened one per request. A
    // slot of -j 4 is given back as soon as its answer is in, so its next request can go
    // out while the previous connection is still on its way back to the pool and open a
    // second one (README, "Live-run overhead"): at most two per slot, 8 for 24 requests.
    let opened = seen.connections.load(Ordering::SeqCst);
    assert!(
        (1..=8).contains(&opened),
        "{opened} connections for 24 requests"
    );
}
