//! Adapters for the agents' own wire formats (Claude Code hooks, …), translating to and from
//! API v1. They decide nothing: every request goes through [`crate::pipeline::Guardian::review`].

pub mod claude_code;
pub mod contract;
pub mod hook_client;
pub mod install;
pub mod mcp;
pub mod opencode;
pub mod run;
