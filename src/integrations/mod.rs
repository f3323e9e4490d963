//! Adapters for the agents' own wire formats, translating to and from API v1. They decide
//! nothing: every request goes through [`crate::pipeline::Guardian::review`].
//!
//! This module owns the list of agents and what each must provide. One file per agent
//! ([`claude_code`], [`codex`], [`opencode`]) holds everything that is that agent's own: its
//! [`Info`], and an [`AgentIntegration`] (with [`Hooks`] when it calls guardian through hooks)
//! that parses its hook input, renders its hook output, merges guardian's snippet into its
//! settings, wires it for `guardian run` and reads its recorded sessions for eval. The shared
//! machinery takes the agents from the one list at the bottom of this file ([`Agent::ALL`]):
//! the server's hook routes, `guardian install`, `guardian run`, `guardian hook` and
//! `guardian-hook`, the CLI's agent values and `guardian traces import`. Adding an agent is one
//! new file, its `mod` line below and its line in the list.

pub mod claude_code;
pub mod codex;
pub mod contract;
pub mod hook_client;
pub mod install;
pub mod mcp;
pub mod opencode;
pub mod run;

use std::path::PathBuf;

use serde_json::Value;

use self::claude_code::{HookError, HookInput};
use self::contract::{Event, HookAnswer};
use self::install::{InstallError, Options, Plan, SettingsError};
use self::run::{Endpoint, RunError};
use crate::request::{Action, Escalation, TranscriptEntry};
use crate::verdict::Decision;

/// An agent's facts, as data (the small `guardian-hook` binary reads them without linking any
/// agent's code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    /// The agent's name in URLs, on the command line and in audit records (`claude-code`).
    pub name: &'static str,
    /// Its name for people (`Claude Code`).
    pub title: &'static str,
    /// The program `guardian run` recognises it by (`claude`; a path's file name counts).
    pub program: &'static str,
    /// Whether it calls guardian through hooks: `/v1/hooks/<name>`, `guardian hook <name>` and
    /// `guardian-hook <name>` (its [`AgentIntegration::hooks`] is then `Some`).
    pub hooks: bool,
}

/// The start of every hook endpoint's path: an agent's is this and its name.
pub const HOOK_PATH_PREFIX: &str = "/v1/hooks/";

/// guardian's snippet merged into a settings file: its new content, what changed (one line
/// each) and what the user must still do or know.
pub type Merged = (String, Vec<String>, Vec<String>);

/// What `guardian run` adds to an agent's command line and environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wiring {
    /// The agent's arguments, guardian's included.
    pub args: Vec<String>,
    /// Variables added to its environment (beside `GUARDIAN_URL` and the token).
    pub env: Vec<(String, String)>,
    /// The URL of the agent's own server whose permission requests a bridge answers
    /// (OpenCode), when it has one.
    pub bridge: Option<String>,
}

/// Reads one recorded session of an agent (a transcript or rollout file's text).
pub type SessionReader = fn(&str) -> RecordedSession;

/// A session an agent recorded, read for eval (`guardian traces import`).
#[derive(Debug, Clone, Default)]
pub struct RecordedSession {
    /// The session's id, when the file names one.
    pub id: Option<String>,
    /// The conversation in order, each entry whole.
    pub entries: Vec<TranscriptEntry>,
    /// The tool calls guardian judges, in order.
    pub calls: Vec<RecordedCall>,
}

/// A tool call of a recorded session, as the hook tool name and input guardian translates.
#[derive(Debug, Clone)]
pub struct RecordedCall {
    /// The call's id.
    pub id: String,
    /// The tool, as a hook input names it.
    pub tool: String,
    /// Its input, as a hook input carries it.
    pub input: Value,
    /// The directory it ran in.
    pub cwd: Option<String>,
    /// How many entries of the session come before it.
    pub before: usize,
    /// The decision a human recorded for it in the session, if any.
    pub label: Option<Decision>,
    /// Where the label comes from, or why there is none.
    pub notes: String,
}

/// Everything that is one agent's own. Implemented once per agent file, by its `Integration`.
pub trait AgentIntegration: Sync {
    /// Its hooks, when it calls guardian through hooks in Claude Code's hook format.
    fn hooks(&self) -> Option<&dyn Hooks> {
        None
    }
    /// The settings file `guardian install` writes for `o`'s scope.
    fn settings_path(&self, o: &Options) -> PathBuf;
    /// guardian's snippet merged into the settings file's content (`None`: no file yet),
    /// keeping every key that is there.
    fn merge_settings(&self, old: Option<&str>, o: &Options) -> Result<Merged, SettingsError>;
    /// More changes an install makes once the settings file's plan is made (Codex: trusting
    /// guardian's hooks).
    fn complete_plans(&self, o: &Options, plans: &mut Vec<Plan>) -> Result<(), InstallError> {
        let _ = (o, plans);
        Ok(())
    }
    /// The agent's arguments (after the program) wired to `ep` for one `guardian run`.
    fn wire(&self, args: &[String], ep: &Endpoint) -> Result<Wiring, RunError>;
    /// How its recorded sessions are read for eval, when it records them in a form guardian
    /// reads.
    fn session_reader(&self) -> Option<SessionReader> {
        None
    }
}

/// An agent that calls guardian through hooks in Claude Code's hook input format
/// ([`claude_code::HookInput`]). The format is shared: the tools and fields any hook agent
/// added to it are understood at every hook endpoint, while the escalation rules and the output
/// contract are those of the agent whose endpoint was called.
pub trait Hooks: Sync {
    /// Tools that touch nothing outside the conversation: they pass with no decision.
    fn no_op_tools(&self) -> &'static [&'static str] {
        &[]
    }
    /// The actions of a tool this agent added to the format (`None`: not one of its tools).
    fn tool_actions(
        &self,
        tool: &str,
        input: &Value,
        cwd: Option<&str>,
    ) -> Option<Result<Vec<Action>, HookError>>;
    /// Actions asked for by fields this agent added to the input (Codex: a network approval's
    /// host), judged beside the tool's own.
    fn extra_actions(
        &self,
        input: &HookInput,
        tool_input: &Value,
    ) -> Result<Vec<Action>, HookError> {
        let _ = (input, tool_input);
        Ok(Vec::new())
    }
    /// The escalation an input to this agent's endpoint asks for, if any.
    fn escalation(
        &self,
        input: &HookInput,
        tool_input: &Value,
    ) -> Result<Option<Escalation>, HookError>;
    /// The transcript entries of one line of this agent's transcript file (`None`: the line is
    /// not in its format).
    fn transcript_line(&self, line: &Value) -> Option<Vec<TranscriptEntry>>;
    /// The hook output for `answer`, in the only shape this agent accepts for `event` (an
    /// empty object prints nothing). See [`contract`].
    fn render(&self, event: Event, answer: &HookAnswer) -> Value;
}

impl Agent {
    /// The agent's name (`claude-code`).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The agent named `name`, if any.
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.iter().copied().find(|a| a.name() == name)
    }

    /// The agent a command's program name says (a path's file name counts), if any.
    pub fn detect(program: &str) -> Option<Agent> {
        let name = std::path::Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(program);
        Agent::ALL
            .iter()
            .copied()
            .find(|a| a.info().program == name)
    }

    /// The agents that call guardian through hooks, in the list's order.
    pub fn with_hooks() -> impl Iterator<Item = Agent> {
        Agent::ALL.iter().copied().filter(|a| a.info().hooks)
    }

    /// The hook agent that answers when none is named: the first of the list with hooks
    /// (Claude Code, whose hook format the others extend).
    pub fn hook_default() -> Agent {
        Agent::with_hooks().next().unwrap_or(Agent::ALL[0])
    }

    /// The agent whose hook endpoint `path` is. A path under [`HOOK_PATH_PREFIX`] that no
    /// agent serves is answered as [`Agent::hook_default`]'s, so even a refusal there is a deny
    /// an agent reads.
    pub fn of_hook_path(path: &str) -> Agent {
        let name = path.strip_prefix(HOOK_PATH_PREFIX).unwrap_or("");
        Agent::with_hooks()
            .find(|a| name.starts_with(a.name()))
            .unwrap_or_else(Agent::hook_default)
    }

    /// The agent's hook endpoint, e.g. `/v1/hooks/claude-code`.
    pub fn hook_path(self) -> String {
        format!("{HOOK_PATH_PREFIX}{}", self.name())
    }
}

impl clap::ValueEnum for Agent {
    fn value_variants<'a>() -> &'a [Self] {
        Agent::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.info().title))
    }
}

/// The list of agents: `Variant => module;`, where the module (declared above) has
/// `pub const INFO: Info` and `pub struct Integration` implementing [`AgentIntegration`].
macro_rules! agents {
    ($($(#[$doc:meta])* $variant:ident => $module:ident;)*) => {
        /// An agent guardian integrates with: one per line of the list.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Agent {
            $($(#[$doc])* $variant,)*
        }

        impl Agent {
            /// Every agent, in the list's order.
            pub const ALL: &'static [Agent] = &[$(Agent::$variant,)*];

            /// The agent's facts.
            pub const fn info(self) -> &'static Info {
                match self {
                    $(Agent::$variant => &$module::INFO,)*
                }
            }

            /// What the agent's file does.
            pub fn integration(self) -> &'static dyn AgentIntegration {
                match self {
                    $(Agent::$variant => &$module::Integration,)*
                }
            }
        }
    };
}

agents! {
    /// Claude Code (HTTP or command hooks).
    ClaudeCode => claude_code;
    /// Codex (command hooks).
    Codex => codex;
    /// OpenCode (its permission requests, answered by the bridge).
    Opencode => opencode;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_is_listed_once_and_its_facts_agree_with_its_code() {
        for (i, a) in Agent::ALL.iter().enumerate() {
            assert_eq!(Agent::from_name(a.name()), Some(*a));
            assert_eq!(Agent::ALL.iter().position(|b| b == a), Some(i));
            assert_eq!(
                a.info().hooks,
                a.integration().hooks().is_some(),
                "{}: Info::hooks and AgentIntegration::hooks disagree",
                a.name()
            );
        }
    }

    #[test]
    fn hook_paths_name_their_agent() {
        for a in Agent::with_hooks() {
            assert_eq!(Agent::of_hook_path(&a.hook_path()), a);
        }
        assert_eq!(Agent::of_hook_path("/v1/hooks/cursor"), Agent::ClaudeCode);
    }

    #[test]
    fn detects_agents_by_program_name() {
        assert_eq!(Agent::detect("claude"), Some(Agent::ClaudeCode));
        assert_eq!(Agent::detect("/usr/local/bin/codex"), Some(Agent::Codex));
        assert_eq!(Agent::detect("opencode"), Some(Agent::Opencode));
        assert_eq!(Agent::detect("./my-bot"), None);
        assert_eq!(Agent::detect("claude-wrapper"), None);
    }
}
