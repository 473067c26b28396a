//! beectl's argument rules, as a library so that they can be fuzzed.

pub mod args;
