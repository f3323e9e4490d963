//! guardian decides whether an AI coding agent may run a tool call.
//!
//! The crate reads as the pipeline it implements:
//! [`request`] → [`normalize`] → [`policy`] → [`signals`] → [`reviewer`] → [`decision`] →
//! [`verdict`] → [`audit`], tied together by [`pipeline::Guardian`]. [`server`] (HTTP) and the `guardian` binary (CLI)
//! are thin adapters over [`pipeline::Guardian::review`].
#![recursion_limit = "256"]
#![warn(missing_docs)]
// The house keeps its shape: no function of the library over `clippy.toml`'s 120 lines (tests
// aside); `cargo clippy -- -D warnings` in CI makes it an error.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod audit;
pub mod audit_report;
pub mod auth;
pub mod config;
pub mod decision;
pub mod eval;
pub mod flock;
pub mod http_error;
pub mod integrations;
pub mod labels;
pub mod mandate;
pub mod metrics;
pub mod normalize;
pub mod openapi;
pub mod pipeline;
pub mod policy;
pub mod redact;
pub mod request;
pub mod reviewer;
pub mod server;
pub mod session;
pub mod signals;
pub mod texts;
pub mod transport;
pub mod ui;
pub mod verdict;

pub use config::Config;
pub use pipeline::Guardian;
pub use request::{Action, ReviewRequest};
pub use verdict::{DecidedBy, Decision, ReviewResponse};
