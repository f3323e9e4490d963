//! Fuzz target `policy_import`: Codex, Claude Code and OpenCode policy importers.
//!
//! This file owns only the libFuzzer entry point. The code it runs is
//! `guardian_fuzz::policy_import` (fuzz/src/lib.rs), which tests/fuzz_corpus.rs also replays on
//! stable over the saved corpus: change the logic there, never here, so the two stay in sync.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    guardian_fuzz::policy_import(data);
});
