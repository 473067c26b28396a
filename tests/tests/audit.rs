//! The audit classifier against the nine-case, content-free fixture: each
//! class exactly as the contract's table says, and the exit-code rule shown
//! to call all nine green while the receipt rule calls exactly one healthy.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_proto::audit::{AuditClass, Boundary, Evidence, Wait};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fixture {
    now_ms: i64,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    name: String,
    expected: String,
    hook_exit_codes: Vec<i32>,
    evidence: Evidence,
}

fn fixture() -> Fixture {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/audit-nine-cases.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn nine_cases_classify_as_the_table_says_and_only_one_is_healthy() {
    let fixture = fixture();
    assert_eq!(fixture.cases.len(), 9);
    let mut seen = Vec::new();
    for case in &fixture.cases {
        let class = case.evidence.classify(fixture.now_ms);
        assert_eq!(class.as_str(), case.expected, "{}", case.name);
        seen.push(class);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 9, "one case per class");
    // The naive rule: a run is green when every hook exited 0.
    let naive_green = fixture.cases.iter().filter(|c| c.hook_exit_codes.iter().all(|code| *code == 0)).count();
    assert_eq!(naive_green, 9, "exit codes alone call all nine green");
    let healthy = fixture.cases.iter().filter(|c| c.evidence.classify(fixture.now_ms) == AuditClass::Healthy).count();
    assert_eq!(healthy, 1, "receipts call exactly one healthy");
}

#[test]
fn a_wait_without_owner_or_past_its_deadline_is_a_coverage_gap() {
    let fixture = fixture();
    let waiting = fixture.cases.iter().find(|c| c.expected == "waiting").unwrap();
    let mut unowned = waiting.evidence.clone();
    unowned.waiting = Some(Wait { owner: None, ..unowned.waiting.clone().unwrap() });
    assert_eq!(unowned.classify(fixture.now_ms), AuditClass::CoverageGap);
    let mut blank = waiting.evidence.clone();
    blank.waiting = Some(Wait { owner: Some("  ".into()), ..blank.waiting.clone().unwrap() });
    assert_eq!(blank.classify(fixture.now_ms), AuditClass::CoverageGap);
    let later = fixture.now_ms + 3_600_000;
    assert_eq!(waiting.evidence.classify(later), AuditClass::CoverageGap, "the deadline passed");
}

#[test]
fn no_evidence_at_all_is_never_healthy() {
    let nothing = Evidence { evidence_ttl_seconds: 60, ..Evidence::default() };
    assert_ne!(nothing.classify(1_000_000), AuditClass::Healthy);
    let unchecked = Evidence {
        unverified: vec![Boundary::Transport, Boundary::Persistence, Boundary::Presentation, Boundary::Outcome],
        ..nothing
    };
    assert_eq!(unchecked.classify(1_000_000), AuditClass::PersistenceUnverified, "nothing stored proves nothing");
}

/// The contract's central rule: no pinned manifest, an unchecked version,
/// or no outcome check is never healthy, whatever else passed; each ranks
/// with the boundary it leaves unproven.
#[test]
fn healthy_needs_a_manifest_a_checked_version_and_an_outcome_check() {
    let fixture = fixture();
    let healthy = fixture.cases.iter().find(|c| c.expected == "healthy").unwrap().evidence.clone();
    assert_eq!(healthy.classify(fixture.now_ms), AuditClass::Healthy);
    let no_manifest =
        Evidence { drift: None, unverified: vec![Boundary::Configuration, Boundary::Coverage], ..healthy.clone() };
    assert_eq!(no_manifest.classify(fixture.now_ms), AuditClass::ManifestDrift);
    let version_unchecked = Evidence { unverified: vec![Boundary::Configuration], ..healthy.clone() };
    assert_eq!(version_unchecked.classify(fixture.now_ms), AuditClass::ManifestDrift);
    let no_outcome = Evidence { outcome: None, unverified: vec![Boundary::Outcome], ..healthy.clone() };
    assert_eq!(no_outcome.classify(fixture.now_ms), AuditClass::FalseComplete);
    let stream_unchecked = Evidence { unpresented: None, unverified: vec![Boundary::Presentation], ..healthy.clone() };
    assert_eq!(stream_unchecked.classify(fixture.now_ms), AuditClass::DashboardStale);
    // Expired evidence beats a wait and the outcome, not the boundaries before it.
    let old = Evidence { newest_ms: Some(0), outcome: None, ..healthy.clone() };
    assert_eq!(old.classify(fixture.now_ms), AuditClass::Stale);
    let old_without_manifest = Evidence { drift: None, ..old };
    assert_eq!(old_without_manifest.classify(fixture.now_ms), AuditClass::ManifestDrift);
}
