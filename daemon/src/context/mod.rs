//! What an agent's context is made of (spec/50): the domains that hand an
//! agent files, skills, plans and smaller texts, each verified or bounded
//! before anything is served. The MCP servers (`beectl mcp serve`) and the
//! matching `beectl` commands read them; nothing here reads the ledger.
//!
//! - [`artifacts`]: files stored on purpose, content-addressed and verified
//!   before they are served.
//! - [`skills`]: the skill bridge: Claude Code's skills found, searched and
//!   resolved.
//! - [`plans`]: plans and their steps, an append-only history with the
//!   current state derived, and checkouts bound to spaces.
//! - [`representation`]: the `bee-json-v1` codec: JSON values in fewer
//!   tokens, and back exactly.
//! - [`compression`]: local, extractive prose compression and its setting.
//! - [`rank`]: BM25, for the skill bridge and the MCP tool search.
//!
//! Each uses `storage` (the skill bridge also `rank`) and none of the others.

pub mod artifacts;
pub mod compression;
pub mod plans;
pub mod rank;
pub mod representation;
pub mod skills;
