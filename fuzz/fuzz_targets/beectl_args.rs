//! beectl's argument rules never panic, whatever the arguments (split on NUL).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

fuzz_target!(|data: &[u8]| {
    let args: Vec<OsString> = data.split(|&b| b == 0).map(|arg| OsString::from_vec(arg.to_vec())).collect();
    let _ = beectl::args::parse(args);
});
