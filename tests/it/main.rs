//! guardian's integration tests, as one test binary (one link instead of one per file): each
//! module drives the real router or the real `guardian` binary. `common` holds the shared
//! fixtures (a guardian from a config text, a `guardian serve` child, a fake reviewer).

mod agent_traces;
mod api;
mod architecture;
mod audit;
mod audit_rotation;
mod ci_recipes;
mod claude_code;
mod cli;
mod clients;
mod codex;
mod common;
mod config_cli;
mod config_readme;
mod contracts;
mod corpus;
mod datasets;
mod deploy;
mod escalation;
mod eval_cli;
mod faults;
mod fleet;
mod fuzz_corpus;
mod hardening;
mod install;
mod local_model;
mod mandate;
mod mcp;
mod openapi;
mod opencode;
mod option_paths;
mod policy_cli;
mod probe;
mod prompts;
mod properties;
mod reads;
mod reviewer;
mod run;
mod scoring;
mod signals;
mod tools_differential;
mod ui;
mod ui_browser;
