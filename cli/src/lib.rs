//! `beectl`, Bee's operator CLI. The library holds its argument rules, so
//! that they can be fuzzed; the binary (`main.rs`) parses, dispatches and
//! prints. The binary's rooms:
//!
//! - `mcp/`: the two MCP servers (`beectl mcp serve`, `beectl design mcp`),
//!   their stdio transport and discovery mode, the context packet and its
//!   tree-sitter outlines;
//! - `commands/`: one file per subcommand a person types, and the
//!   dispatcher the evidence server answers its tools through;
//! - `setup/`: `beectl setup`, `hooks install|uninstall`, the user
//!   service, editing a settings file with a backup;
//! - `design/`: design bundles, their manifest and checks, which the
//!   design server reads;
//! - `render/`: tables, colours, numbers, the shared error document, the
//!   one rule of a table on a terminal and JSON in a pipe, writing the
//!   answer (a reader that has gone ends beectl quietly), man pages;
//! - `input.rs`: the token estimate's inputs, read by the one path rule
//!   (`bee_daemon::storage::path_rule`); `ask.rs`: asking beed, or deciding
//!   to work offline;
//! - `args.rs` (this library): the command tree and its rules.
//!
//! Files, not rooms, form a one-way stack here, and
//! `tests/tests/layering.rs` fails when a file reaches itself through
//! others. The rooms' arrows: `main.rs` → `commands`, `mcp`; `mcp` →
//! `commands` (each evidence tool is a command, answered through
//! `commands::run`), `design`, `render`, `input`; `commands` → `mcp`'s
//! packet and design server only (`beectl context`, `beectl design mcp`),
//! `setup::hooks` (where bee-hook is), `setup::file_change`, `design`,
//! `render`, `input`, `ask`; `setup` → `commands::daemon` (starting beed),
//! `render`; `design` → `mcp::outline`, `setup::file_change`; `render`,
//! `input` and `ask` use no room.

pub mod args;
