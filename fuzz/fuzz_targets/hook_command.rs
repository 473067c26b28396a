//! Reading a hook command in settings.json for Bee's roles never panics on
//! any text, and what it reads as Bee's entry is written back as a command
//! that reads as the same roles (so setup's merge is stable).
#![no_main]

use bee_daemon::events::claude_settings::Roles;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else { return };
    let Some(roles) = Roles::of_command(command) else { return };
    if let Some(written) = roles.command("bee-hook", "Stop") {
        assert_eq!(Roles::of_command(&written), Some(roles), "{command:?} -> {written:?}");
    }
});
