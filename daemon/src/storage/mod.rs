//! Storage plumbing every store shares, and nothing domain-specific: opening
//! SQLite stores (one writer, readers that create nothing), the single-writer
//! thread with group commits, private files and directories, and the bounded
//! line reader for spools and logs (one large read at a time), and the one
//! path rule for files read because something names them.
//!
//! May use: `bee_proto` only. Every other room may use this one.

pub mod files;
pub mod large;
pub mod lines;
pub mod path_rule;
pub mod spool;
pub mod sqlite;
pub mod writer;
