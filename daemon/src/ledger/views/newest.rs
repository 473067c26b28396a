//! Each agent's newest record in the ledger (`beectl agents`): the time
//! its records say they were written, never a file's modification time —
//! a transcript copied, restored or touched today may hold nothing newer
//! than last month.
//!
//! Read in two steps, each cheap whatever the ledger's size: the hours
//! with usage of each agent from the hourly aggregates, then the newest of
//! those hours from its records, to the millisecond. Limit hits, which the
//! aggregates do not hold, are read from their own (small) table.

use bee_proto::delivery::Issue;
use bee_proto::ledger::Provider;
use std::collections::BTreeMap;

use crate::ledger::stored::schema::{Range, hour_of};
use crate::ledger::stored::store::Reader;

/// One agent in the ledger.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentInLedger {
    /// Its distinct responses.
    pub responses: u64,
    /// The own time of its newest record (a response's, a producer call's
    /// or a limit hit's), unix ms; `None` while the ledger holds none.
    pub newest_ms: Option<i64>,
}

/// Every agent with a record in the ledger `reader` reads.
pub fn by_agent(reader: &Reader) -> Result<BTreeMap<Provider, AgentInLedger>, Issue> {
    let all = Range { since_ms: i64::MIN / 2, until_ms: i64::MAX / 2 };
    let mut found: BTreeMap<Provider, AgentInLedger> = BTreeMap::new();
    // By the hour: whole hours come from the aggregates, not the records.
    let mut newest_hour: BTreeMap<Provider, i64> = BTreeMap::new();
    for (key, part) in &reader.usage(all, &|_, at| hour_of(at))?.parts {
        if part.responses + part.producer_calls == 0 {
            continue;
        }
        found.entry(key.provider).or_default().responses += part.responses;
        let hour = newest_hour.entry(key.provider).or_insert(key.bucket);
        *hour = (*hour).max(key.bucket);
    }
    // Each agent's newest hour, read to the millisecond from its records.
    for (provider, hour) in newest_hour {
        let within = reader.usage(Range::hour(hour), &|_, at| at)?;
        let newest = within
            .parts
            .iter()
            .filter(|(key, part)| key.provider == provider && part.responses + part.producer_calls > 0)
            .map(|(key, _)| key.bucket)
            .max();
        // The aggregates said the hour has usage: if its records no longer
        // say when (a damaged record), the hour's start is the best bound.
        found.entry(provider).or_default().newest_ms = Some(newest.unwrap_or(hour));
    }
    for (_, hit) in reader.limit_notices()? {
        let agent = found.entry(hit.provider).or_default();
        agent.newest_ms = Some(agent.newest_ms.map_or(hit.at_ms, |at| at.max(hit.at_ms)));
    }
    Ok(found)
}
