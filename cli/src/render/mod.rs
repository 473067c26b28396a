//! Output for people, shared by the commands and the MCP servers:
//!
//! - [`terminal`]: colour, numbers, counts, model names, bars;
//! - [`table`]: the delivery report as a table;
//! - [`errors`]: the error document of commands without one of their own;
//! - [`budgeted`]: an answer within the `budgetBytes` an MCP caller gave.
//!
//! Nothing here reads a store or asks beed.

pub mod budgeted;
pub mod errors;
pub mod table;
pub mod terminal;
