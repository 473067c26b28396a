//! The hook event pipeline's data (spec/40): the events store, the audit's
//! evidence and classification, and Claude Code's `settings.json` as far as
//! the hooks go.
//!
//! May use: `storage`, `bee_proto`. Never `server` or `client`.

pub mod agent_hooks;
pub mod audit;
pub mod claude_settings;
pub mod intake;
pub mod spool;
pub mod store;
