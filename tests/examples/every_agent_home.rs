//! Writes the every-agent home (records of every agent Bee reads, each
//! where its agent keeps them, see `bee_tests::every_agent`) into a
//! directory a person names, and keeps it there: a home to point other
//! tools at (`HOME=DIR`, `--home DIR`), as `contrib/side-by-side/compare.sh`
//! does to set Bee beside ccusage and tokscale.
//!
//!     cargo run -p bee-tests --example every_agent_home -- DIR
//!
//! DIR is created if missing and must be empty: the home is never written
//! over anything (least of all a real home).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next(), args.next()) else {
        eprintln!("usage: every_agent_home DIR   (DIR: a new or empty directory)");
        return ExitCode::from(2);
    };
    let dir = PathBuf::from(dir);
    if let Err(err) = std::fs::create_dir_all(&dir) {
        eprintln!("{}: {err}", dir.display());
        return ExitCode::FAILURE;
    }
    // Some records name places in the home by their absolute path.
    let dir = match dir.canonicalize() {
        Ok(dir) => dir,
        Err(err) => {
            eprintln!("{}: {err}", dir.display());
            return ExitCode::FAILURE;
        }
    };
    match std::fs::read_dir(&dir).map(|mut entries| entries.next().is_none()) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("{}: not empty; the every-agent home is written only into an empty directory", dir.display());
            return ExitCode::FAILURE;
        }
        Err(err) => {
            eprintln!("{}: {err}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    let expected = bee_tests::every_agent::write_every_agent_into(&dir);
    println!("{}", dir.display());
    for agent in &expected {
        println!("  {:<11} {:>3} responses", agent.agent, agent.responses);
    }
    ExitCode::SUCCESS
}
