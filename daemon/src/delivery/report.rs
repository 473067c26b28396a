//! `delivery report` and `delivery read`: one implementation for the daemon
//! and the offline reader, so both print the same bytes.

use bee_proto::delivery::{
    DELIVERED_BYTES_COUNTED, Dimension, EventKinds, Group, Issue, NATIVE_WITHHELD_STATUS, ObservationKind,
    REPORT_CAP_BYTES, ReadAnswer, ReadStatus, RecordedObservation, Report, ReportCapAnswer, ReportEstimate,
    SCHEMA_VERSION, SURFACE_VERSION, SessionSelector, TotalsStatus,
};
use bee_proto::exit::Exit;
use std::collections::BTreeMap;
use std::path::Path;

use crate::delivery::store::{self, VerifiedStore};
use crate::rendered::Rendered;

/// What a report is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportQuery {
    pub session: Option<SessionSelector>,
    /// Groups returned per view, 0..=100.
    pub limit: u32,
}

/// `beectl delivery report` over the store at `dir`.
pub fn report(dir: &Path, query: &ReportQuery) -> Rendered {
    let verified = verified_with_pending(dir);
    render_report(&build_report(&verified, query), REPORT_CAP_BYTES)
}

/// `beectl delivery read` of `event` in the store at `dir`.
pub fn read(dir: &Path, event: uuid::Uuid) -> Rendered {
    let verified = verified_with_pending(dir);
    match verified.records.into_iter().find(|r| r.observation.event_id == event) {
        Some(record) => Rendered::json(
            Exit::Success,
            &ReadAnswer { status: ReadStatus::RecordedObservation, observation: Some(record) },
        ),
        None => Rendered::json(Exit::Unavailable, &ReadAnswer { status: ReadStatus::Unavailable, observation: None }),
    }
}

/// The store's records, and — for the default store, the one the hooks'
/// spool belongs to — the observations still waiting in that spool.
fn verified_with_pending(dir: &Path) -> store::VerifiedStore {
    let default = bee_proto::paths::default_delivery_store().and_then(|d| std::path::absolute(d).ok());
    let asked = std::path::absolute(dir).ok();
    match (default, asked, bee_proto::paths::spool_dir()) {
        (Some(default), Some(asked), Some(spool)) if default == asked => {
            crate::delivery::spool::read_verified_with_spool(dir, &spool)
        }
        _ => store::read_verified(dir),
    }
}

/// Serializes `report`, replacing it with the cap answer when it exceeds `cap` bytes.
pub fn render_report(report: &Report, cap: usize) -> Rendered {
    let exit = if report.observed_events > 0 { Exit::Success } else { Exit::Unavailable };
    let rendered = Rendered::json(exit, report);
    // The cap counts the JSON, not the final newline.
    if rendered.bytes.len() - 1 > cap {
        return Rendered::json(Exit::Unavailable, &ReportCapAnswer::new());
    }
    rendered
}

#[derive(Default)]
struct Tally {
    events: u64,
    bytes: u64,
    tokens: u64,
    /// The texts' own bytes of the events that recorded them…
    content: u64,
    /// …and how many did not.
    content_unknown: u64,
}

impl Tally {
    /// The texts' own bytes: unknown when any part is, or when nothing was
    /// delivered (no evidence is no zero).
    fn content(&self) -> Option<u64> {
        (self.content_unknown == 0 && self.events > 0).then_some(self.content)
    }
}

impl Tally {
    /// Adds `record`; `false` (and nothing added) when a total would overflow.
    #[must_use]
    fn add(&mut self, record: &RecordedObservation) -> bool {
        let sums = (
            self.events.checked_add(1),
            self.bytes.checked_add(record.observation.utf8_bytes),
            self.tokens.checked_add(record.observation.labelled_tokens()),
            self.content.checked_add(record.observation.content_utf8_bytes.unwrap_or(0)),
        );
        let (Some(events), Some(bytes), Some(tokens), Some(content)) = sums else { return false };
        let content_unknown = self.content_unknown + u64::from(record.observation.content_utf8_bytes.is_none());
        *self = Tally { events, bytes, tokens, content, content_unknown };
        true
    }
}

/// Computes the report document from what could be verified.
pub fn build_report(verified: &VerifiedStore, query: &ReportQuery) -> Report {
    let matching =
        verified.records.iter().filter(|record| query.session.as_ref().is_none_or(|s| s.matches(&record.observation)));
    let mut kinds = EventKinds::default();
    let mut delivered = Tally::default();
    let mut views: [BTreeMap<(String, String), Tally>; 3] = Default::default();
    let mut overflowed = false;
    for record in matching {
        let observation = &record.observation;
        match observation.kind {
            ObservationKind::Delivered => kinds.delivered += 1,
            ObservationKind::WriteFailed => kinds.write_failed += 1,
            ObservationKind::PartialWrite => kinds.partial_write += 1,
        }
        // Only delivered output counts; failed writes show in `eventKinds` alone.
        if observation.kind != ObservationKind::Delivered {
            continue;
        }
        // Validated counts cannot overflow a total; a store that makes one
        // overflow is not one Bee wrote: keep the prefix, name it corrupt.
        if !delivered.add(record) {
            overflowed = true;
            break;
        }
        let keys = [
            (observation.item_id.to_string(), observation.item_version.to_string()),
            (observation.surface.as_str().to_owned(), SURFACE_VERSION.to_owned()),
            (observation.session_id.to_string(), observation.session_kind.to_string()),
        ];
        for (view, key) in views.iter_mut().zip(keys) {
            // Each view's tally is at most the delivered total, which fit.
            let _fits = view.entry(key).or_default().add(record);
        }
    }
    let observed = kinds.delivered + kinds.write_failed + kinds.partial_write;

    let mut groups = Vec::new();
    let mut omitted = 0u64;
    for (dimension, view) in [Dimension::Item, Dimension::Surface, Dimension::Session].into_iter().zip(views) {
        let mut rows: Vec<Group> = view
            .into_iter()
            .map(|((identity, version), tally)| Group {
                dimension,
                identity,
                version,
                delivered_events: tally.events,
                delivered_utf8_bytes: tally.bytes,
                estimates: vec![ReportEstimate::labelled(tally.tokens)],
                delivered_content_utf8_bytes: tally.content(),
            })
            .collect();
        // Largest delivery first; ties by identity so the order is stable.
        rows.sort_by(|a, b| {
            b.delivered_utf8_bytes
                .cmp(&a.delivered_utf8_bytes)
                .then(b.delivered_events.cmp(&a.delivered_events))
                .then_with(|| a.identity.cmp(&b.identity))
                .then_with(|| a.version.cmp(&b.version))
        });
        let keep = rows.len().min(query.limit as usize);
        omitted += (rows.len() - keep) as u64;
        groups.extend(rows.into_iter().take(keep));
    }

    let mut issues = verified.issues.clone();
    if overflowed {
        issues.insert(Issue::Corrupt);
    }
    if observed == 0 {
        issues.insert(Issue::Missing);
    }
    issues.insert(Issue::ObservationWindowOpen);

    Report {
        schema_version: SCHEMA_VERSION,
        totals_status: if observed > 0 { TotalsStatus::LowerBound } else { TotalsStatus::Unknown },
        observed_events: observed,
        delivered_events: delivered.events,
        delivered_utf8_bytes: delivered.bytes,
        delivered_utf8_bytes_counted: DELIVERED_BYTES_COUNTED.to_owned(),
        delivered_content_utf8_bytes: delivered.content(),
        content_unknown_events: delivered.content_unknown,
        estimates: vec![ReportEstimate::labelled(delivered.tokens)],
        event_kinds: kinds,
        groups,
        omitted_groups: omitted,
        issues: issues.into_iter().collect(),
        observation_window_complete: false,
        dropped_observation_count: None,
        measured_provider_tokens: None,
        native_withheld_events: None,
        native_withheld_status: NATIVE_WITHHELD_STATUS.to_owned(),
        source_ref_hash: None,
        recipe_hash: None,
    }
}

/// The delivery store as `daemon status` shows it; unknown counts are `null`.
pub fn store_status(dir: &Path) -> bee_proto::api::StoreStatus {
    let verified = store::read_verified(dir);
    let readable = verified.schema_version.is_some();
    bee_proto::api::StoreStatus {
        name: "delivery".to_owned(),
        path: dir.display().to_string(),
        schema_version: verified.schema_version,
        records: readable.then_some(verified.records.len() as u64),
        capacity: verified.capacity,
        issues: verified.issues.into_iter().collect(),
        size_bytes: crate::storage::files::dir_size(dir).ok(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bee_proto::delivery::{Estimate, StoredObservation, Surface};
    use bee_proto::identity::Identity;

    fn record(sequence: u64, item: &str, surface: Surface, session: &str, bytes: u64) -> RecordedObservation {
        let observation = StoredObservation {
            kind: ObservationKind::Delivered,
            observed_at_utc: "2026-11-30T12:00:00.000Z".into(),
            event_id: uuid::Uuid::new_v4(),
            session_kind: Identity::parse("claude-native-session").unwrap(),
            session_id: Identity::parse(session).unwrap(),
            session_sequence: 1,
            surface,
            item_id: Identity::parse(item).unwrap(),
            item_version: Identity::parse("1").unwrap(),
            utf8_bytes: bytes,
            estimates: vec![Estimate {
                estimator: "utf16-ceil-div4".into(),
                version: 1,
                estimated_tokens: bytes.div_ceil(4),
            }],
            content_utf8_bytes: Some(bytes),
        };
        RecordedObservation {
            schema_version: 1,
            sequence,
            checksum: store::checksum(sequence, &observation),
            observation,
        }
    }

    fn sample() -> VerifiedStore {
        let s1 = "3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c";
        let s2 = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
        let mut failed = record(5, "b", Surface::Plain, s2, 1000);
        failed.observation.kind = ObservationKind::WriteFailed;
        VerifiedStore {
            records: vec![
                record(1, "a", Surface::Plain, s1, 10),
                record(2, "b", Surface::ContextJson, s1, 30),
                record(3, "c", Surface::Plain, s2, 30),
                record(4, "a", Surface::Plain, s2, 5),
                failed,
            ],
            capacity: Some(2048),
            schema_version: Some(1),
            issues: Default::default(),
        }
    }

    #[test]
    fn groups_sort_by_bytes_then_identity_and_failures_count_only_as_kinds() {
        let report = build_report(&sample(), &ReportQuery { session: None, limit: 100 });
        assert_eq!((report.observed_events, report.delivered_events, report.delivered_utf8_bytes), (5, 4, 75));
        assert_eq!(report.event_kinds.write_failed, 1);
        let items: Vec<_> =
            report.groups.iter().filter(|g| g.dimension == Dimension::Item).map(|g| g.identity.as_str()).collect();
        assert_eq!(items, ["b", "c", "a"], "30 (b) ties 30 (c) by bytes and events; identity breaks it");
        let a = report.groups.iter().find(|g| g.identity == "a").unwrap();
        assert_eq!((a.delivered_events, a.delivered_utf8_bytes), (2, 15));
    }

    #[test]
    fn the_texts_own_bytes_are_null_when_any_delivered_event_did_not_record_them() {
        let report = build_report(&sample(), &ReportQuery { session: None, limit: 100 });
        assert_eq!((report.delivered_content_utf8_bytes, report.content_unknown_events), (Some(75), 0));
        assert_eq!(report.delivered_utf8_bytes_counted, "whole_output_with_envelope_and_newline");
        let mut older = sample();
        older.records[2].observation.content_utf8_bytes = None;
        let report = build_report(&older, &ReportQuery { session: None, limit: 100 });
        assert_eq!((report.delivered_content_utf8_bytes, report.content_unknown_events), (None, 1), "not 45");
        assert_eq!(report.delivered_utf8_bytes, 75, "the whole output is still known");
        let c = report.groups.iter().find(|g| g.identity == "c").unwrap();
        let a = report.groups.iter().find(|g| g.identity == "a").unwrap();
        assert_eq!((c.delivered_content_utf8_bytes, a.delivered_content_utf8_bytes), (None, Some(15)));
    }

    #[test]
    fn limit_never_changes_totals() {
        let full = build_report(&sample(), &ReportQuery { session: None, limit: 100 });
        for limit in 0..=100 {
            let limited = build_report(&sample(), &ReportQuery { session: None, limit });
            assert_eq!(limited.delivered_utf8_bytes, full.delivered_utf8_bytes);
            assert_eq!(limited.estimates, full.estimates);
            assert_eq!(limited.event_kinds, full.event_kinds);
            let shown = limited.groups.len() as u64;
            assert_eq!(shown + limited.omitted_groups, full.groups.len() as u64, "limit {limit}");
            for dimension in [Dimension::Item, Dimension::Surface, Dimension::Session] {
                let per_view = limited.groups.iter().filter(|g| g.dimension == dimension).count();
                assert!(per_view <= limit as usize);
            }
            // Each view keeps its largest groups, in the same order.
            let prefix: Vec<_> = full.groups.iter().filter(|g| limited.groups.contains(g)).collect();
            assert_eq!(prefix, limited.groups.iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn an_oversized_report_is_replaced_by_the_cap_answer() {
        let report = build_report(&sample(), &ReportQuery { session: None, limit: 100 });
        let fits = render_report(&report, REPORT_CAP_BYTES);
        assert_eq!(fits.exit, Exit::Success);
        let json_len = fits.bytes.len() - 1;
        assert_eq!(render_report(&report, json_len).exit, Exit::Success, "the cap excludes the newline");
        let capped = render_report(&report, json_len - 1);
        assert_eq!(capped.exit, Exit::Unavailable);
        assert_eq!(capped.bytes, b"{\"status\":\"report_cap\",\"errorCode\":\"report_cap\",\"capBytes\":262144}\n");
    }

    #[test]
    fn the_largest_possible_report_fits_the_cap() {
        // 100 groups per view with the longest identities allowed.
        let mut records = Vec::new();
        for i in 0..100u64 {
            let item = format!("{i:0>128}");
            let session = format!("sess-{i:0>123}");
            let mut r = record(i + 1, &item, Surface::Plain, "3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c", u64::MAX / 1000);
            r.observation.session_kind = Identity::parse(&"k".repeat(128)).unwrap();
            r.observation.session_id = Identity::parse(&session).unwrap();
            records.push(r);
        }
        let verified =
            VerifiedStore { records, capacity: Some(2048), schema_version: Some(1), issues: Default::default() };
        let rendered =
            render_report(&build_report(&verified, &ReportQuery { session: None, limit: 100 }), REPORT_CAP_BYTES);
        assert_eq!(rendered.exit, Exit::Success);
        assert!(rendered.bytes.len() < REPORT_CAP_BYTES);
    }
}
