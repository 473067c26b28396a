//! `beectl setup`, by the agent it wires: Cline's hook files
//! (`cline.rs`), else the hooks in an agent's settings file (`mod.rs`).

use bee_daemon::rendered::Rendered;
use bee_proto::ledger::Provider;
use beectl::args::SetupArgs;

pub fn setup(args: SetupArgs) -> Rendered {
    let answer = match (args.agent, args.undo) {
        // Cline's hooks are files of their own, not entries in a settings file.
        (Provider::Cline, false) => super::cline::wire(&args),
        (Provider::Cline, true) => super::cline::undo(&args),
        (_, true) => super::undo(&args),
        (_, false) => super::wire(&args),
    };
    super::answered(answer)
}
