//! Bee for agents over MCP (the official Rust SDK, on stdin/stdout):
//!
//! - [`evidence`]: `beectl mcp serve`, the evidence tools (each one a
//!   beectl command) and the context tools, with its discovery mode;
//! - [`design`]: `beectl design mcp`, a checkout's design bundles;
//! - [`packet`]: context packets (also `beectl context packet`), with
//!   [`outline`]s from real parsers;
//! - [`transport`]: the stdio transport both servers speak, its frame
//!   limit and the tool deadline;
//! - [`schema`]: the tools' input schemas with their real limits and words,
//!   and calls that miss them answered as tool errors.

pub mod design;
pub mod evidence;
pub mod grammars;
pub mod outline;
pub mod packet;
pub mod schema;
pub mod transport;
