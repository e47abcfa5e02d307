//! TLS set-up shared by every HTTP client of the crate (the live providers and MCP's
//! Streamable HTTP transport), so neither needs the other to get it.

/// Install the ring crypto provider for rustls once per process (reqwest is built
/// without a default provider; see CRATES.md). Later calls do nothing.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
