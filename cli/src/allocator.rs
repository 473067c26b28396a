//! The allocator, chosen once per process by the name it was started
//! under: beectl's own commands use mimalloc (a first import makes a few
//! hundred thousand small allocations on four threads and frees them in
//! bulk: mimalloc serves that with an eighth of glibc's page faults and
//! about a tenth less CPU; built without transparent huge pages, which
//! would hold the first import's peak above its 100 MiB bound), and beectl
//! started as `beed` uses the system's, as the `beed` binary does: the
//! daemon's repeated ingestion passes, each on threads of their own, kept
//! more under mimalloc than its 256 MiB bound on hostile records allows.
//!
//! The name also decides what the process is (`main` runs the daemon when
//! started as `beed`): one reading of it for both. A module of the binary
//! beside `main.rs`, not of the library the tests link.
//!
//! The choice is made at the process's first allocation, before any
//! thread exists, from the program name the C library saved from argv[0]
//! (read without allocating), and never changes: every block is freed by
//! the allocator that made it. The only other module allowed `unsafe`
//! beside `mcp::grammars`.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{CStr, c_char};
use std::sync::atomic::{AtomicU8, Ordering};

use mimalloc::MiMalloc;

const UNDECIDED: u8 = 0;
const MIMALLOC: u8 = 1;
const SYSTEM: u8 = 2;

static CHOSEN: AtomicU8 = AtomicU8::new(UNDECIDED);

/// mimalloc, or the system's allocator when started as `beed`.
pub struct ByProgram;

#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe extern "C" {
    // glibc and musl both set it from argv[0] before any Rust code runs.
    static program_invocation_short_name: *const c_char;
}

/// The program's own name as the C library saved it, without allocating.
fn program_name() -> &'static [u8] {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: set by the C library at start-up to a NUL-terminated string
    // that lives as long as the process, and never written after.
    let name = unsafe { program_invocation_short_name };
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    // SAFETY: as above (getprogname(3) returns the same saved string).
    let name = unsafe { libc::getprogname() };
    if name.is_null() {
        return b"";
    }
    // SAFETY: non-null, NUL-terminated, static (above).
    unsafe { CStr::from_ptr(name) }.to_bytes()
}

/// Whether this process was started under the name `beed` (its argv[0]):
/// then it is the daemon (main's dispatch) and allocates as the daemon.
pub fn started_as_beed() -> bool {
    program_name() == crate::setup::hooks::BEED.as_bytes()
}

#[inline]
fn mimalloc_chosen() -> bool {
    match CHOSEN.load(Ordering::Relaxed) {
        MIMALLOC => true,
        SYSTEM => false,
        _ => {
            let mimalloc = !started_as_beed();
            CHOSEN.store(if mimalloc { MIMALLOC } else { SYSTEM }, Ordering::Relaxed);
            mimalloc
        }
    }
}

// SAFETY: each call is passed whole to one allocator, the same one for
// every call of the process (decided at the first and never changed).
//
// Not inlined: with both allocators' paths inlined at every allocation
// site, fat LTO made beectl 1.8 MB larger; one call more per allocation
// is nothing beside the allocation.
unsafe impl GlobalAlloc for ByProgram {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mimalloc_chosen() { unsafe { MiMalloc.alloc(layout) } } else { unsafe { System.alloc(layout) } }
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mimalloc_chosen() {
            unsafe { MiMalloc.alloc_zeroed(layout) }
        } else {
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mimalloc_chosen() {
            unsafe { MiMalloc.dealloc(ptr, layout) }
        } else {
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if mimalloc_chosen() {
            unsafe { MiMalloc.realloc(ptr, layout, new_size) }
        } else {
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }
}
