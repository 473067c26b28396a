//! `beed`: Bee's user daemon. Serves the socket API until SIGTERM or SIGINT
//! (its command line is the library's `server::command`, which `beectl`
//! also runs when started as `beed`).

fn main() -> std::process::ExitCode {
    bee_daemon::server::command::main()
}
