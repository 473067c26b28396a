//! Output for people, shared by the commands and the MCP servers:
//!
//! - [`terminal`]: whether a report is for people, colour, numbers, counts,
//!   model names, bars;
//! - [`ids`]: ids cut to the shortest prefix that tells them apart;
//! - [`table`]: the delivery report as a table;
//! - [`errors`]: the error document of commands without one of their own;
//! - [`budgeted`]: an answer within the `budgetBytes` an MCP caller gave;
//! - [`output`]: writing the answer, and ending quietly when its reader has gone;
//! - [`manual`]: a man page shown formatted on a terminal.
//!
//! Nothing here reads a store or asks beed.

pub mod budgeted;
pub mod errors;
pub mod ids;
pub mod manual;
pub mod output;
pub mod table;
pub mod terminal;
