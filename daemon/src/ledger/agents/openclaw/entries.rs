//! OpenClaw's entries as pi's session reader reads them: the one fact that
//! reader needs of OpenClaw (the name its responses count under), apart
//! from the agent, so the database and log readers use it without
//! reaching back into the folder's registry file.

use bee_proto::ledger::Provider;

use crate::ledger::agents::pi::session::PiLog;

/// pi's entries, counted under OpenClaw's name.
pub(crate) struct OpenClawEntries;

impl PiLog for OpenClawEntries {
    const PROVIDER: Provider = Provider::OpenClaw;
}
