//! tools/call round trips over stdio by toolgauge's MCP client (a bench binary, not
//! criterion: `benches/mcp_calls.sh` runs it next to the Python SDK's own client,
//! `benches/mcp_calls_sdk.py`, on the same server, and both print the same JSON line).
//!
//! Spawns the server (by default the Python SDK server `tests/mcp/servers/sdk_server.py`
//! from `tests/mcp/.venv`), connects (era discovery included, outside the timing), makes
//! `--warmup` untimed calls, then `--calls` timed sequential calls of `echo`, checking
//! each answer, and prints calls/s and the latency percentiles.
//!
//! Usage: cargo bench --bench mcp_calls -- [--calls N] [--warmup N] [--server SPEC]

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolgauge::mcp::{ClientOptions, McpClient, ServerSpec};

struct Args {
    calls: usize,
    warmup: usize,
    server: String,
}

fn parse_args() -> Result<Args, String> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut args = Args {
        calls: 2000,
        warmup: 50,
        server: format!(
            "stdio:{root}/tests/mcp/.venv/bin/python {root}/tests/mcp/servers/sdk_server.py stdio"
        ),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--calls" => {
                args.calls = value("--calls")?
                    .parse()
                    .map_err(|e| format!("--calls: {e}"))?
            }
            "--warmup" => {
                args.warmup = value("--warmup")?
                    .parse()
                    .map_err(|e| format!("--warmup: {e}"))?
            }
            "--server" => args.server = value("--server")?,
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if args.calls == 0 {
        return Err("--calls must be at least 1".into());
    }
    Ok(args)
}

/// The nearest-rank percentile (`q` in 0..=1) of sorted samples; the Python client
/// computes it the same way so the two lines compare.
fn percentile(sorted: &[Duration], q: f64) -> Duration {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

async fn bench(args: &Args) -> Result<Value, String> {
    let spec: ServerSpec = args.server.parse().map_err(|e| format!("{e}"))?;
    let client = McpClient::connect(&spec, ClientOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let mut arguments = Map::new();
    let call = |i: usize, arguments: &mut Map<String, Value>| {
        arguments.insert("text".into(), json!(format!("hello {i}")));
    };
    let mut one = async |i: usize| -> Result<Duration, String> {
        call(i, &mut arguments);
        let started = Instant::now();
        let result = client
            .call_tool("echo", &arguments)
            .await
            .map_err(|e| e.to_string())?;
        let took = started.elapsed();
        // A bench of wrong answers measures nothing: every echo must come back.
        let text = result.text_for_model();
        if result.is_error || text != format!("hello {i}") {
            return Err(format!(
                "call {i}: unexpected answer (is_error {}): {text}",
                result.is_error
            ));
        }
        Ok(took)
    };
    for i in 0..args.warmup {
        one(i).await?;
    }
    let mut latencies = Vec::with_capacity(args.calls);
    let started = Instant::now();
    for i in 0..args.calls {
        latencies.push(one(i).await?);
    }
    let wall = started.elapsed();
    let era = client.era();
    let version = client.protocol_version().to_string();
    client.close().await;
    latencies.sort();
    let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    Ok(json!({
        "client": "toolgauge",
        "era": era,
        "protocol_version": version,
        "calls": args.calls,
        "calls_per_s": (args.calls as f64 / wall.as_secs_f64() * 10.0).round() / 10.0,
        "p50_ms": ms(percentile(&latencies, 0.50)),
        "p95_ms": ms(percentile(&latencies, 0.95)),
    }))
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("error: {e}\nusage: mcp_calls [--calls N] [--warmup N] [--server SPEC]");
        std::process::exit(2);
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(bench(&args)) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
