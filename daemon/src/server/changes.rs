//! The ledger's generation as a long poll: `beectl top` (on the socket)
//! and the usage page (on the loopback listener) wait here for a new
//! record instead of asking again and again.

use bee_proto::ledger::{CHANGES_WAIT_SECONDS, LedgerChanges};
use std::time::Duration;

/// The ledger's generation once it is not `after` (at once when `after` is
/// not given), or after [`CHANGES_WAIT_SECONDS`] anyway: `beectl top` and
/// the usage page wait here instead of asking again and again.
pub async fn next_change(changes: &tokio::sync::watch::Sender<u64>, after: Option<u64>) -> LedgerChanges {
    let mut receiver = changes.subscribe();
    let now = *receiver.borrow_and_update();
    if after.is_some_and(|after| after == now) {
        let _ = tokio::time::timeout(Duration::from_secs(CHANGES_WAIT_SECONDS), receiver.changed()).await;
    }
    let generation = *receiver.borrow();
    LedgerChanges { generation }
}
