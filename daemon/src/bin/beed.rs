//! `beed`: Bee's user daemon. Serves the socket API until SIGTERM or SIGINT
//! (its command line is the library's `server::command`, which `beectl`
//! also runs when started as `beed`).

// The allocator beectl has: the archives' and npm's `beed` is beectl under
// that name, so the daemon the tests run allocates as the one shipped.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    bee_daemon::server::command::main()
}
