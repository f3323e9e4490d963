//! The HTTP transport guardian's outgoing clients share: the reviewer backends, the MCP server's
//! `--server` mode and the OpenCode bridge build their `reqwest` client here (rustls with ring, no
//! default provider compiled in), and guardian's own clients find their bearer token here.

use std::time::Duration;

/// The environment variable guardian's own clients read their bearer token from.
pub const TOKEN_ENV: &str = "GUARDIAN_TOKEN";

/// An HTTP client that could not be built (reqwest's TLS setup failed).
#[derive(Debug, thiserror::Error)]
#[error("cannot build HTTP client: {0}")]
pub struct ClientError(#[from] reqwest::Error);

/// An HTTP client with an overall `timeout` and a connect timeout of at most 10 s.
pub fn http_client(timeout: Duration) -> Result<reqwest::Client, ClientError> {
    // reqwest is built without a default crypto provider; use ring (small, fast to build).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .build()
        .map_err(ClientError)
}

/// The bearer token guardian's own clients (`guardian hook`, `guardian mcp --server`,
/// `guardian run --server`) send: [`TOKEN_ENV`], when set and not empty.
pub fn client_token() -> Option<String> {
    std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty())
}
