//! What the ledger shows: the views, top to bottom [`live`] (the stream
//! `beectl top` follows) → [`glance`] (one look at a day) → [`usage`]
//! (`beectl usage`) → [`quota`] (`beectl quota` and `status`), with
//! [`calendar`] (local days, weeks and months), [`newest`] (each agent's
//! newest record, for `beectl agents`), [`models`] (one label per
//! model) and [`prices`] (the bundled price snapshot and a user's file over
//! it) beneath them.

pub mod calendar;
pub mod glance;
pub mod live;
pub mod models;
pub mod newest;
pub mod prices;
pub mod quota;
pub mod usage;
