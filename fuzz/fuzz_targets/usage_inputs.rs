//! What a user hands `beectl usage` never panics it: a price file in
//! LiteLLM's format (any bytes), the time words of `--since`/`--until`, a
//! zone name; and a parsed price table never prices a model it lacks.
#![no_main]

use bee_daemon::ledger::views::calendar::Zone;
use bee_daemon::ledger::views::prices::PriceTable;
use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(table) = PriceTable::parse(&text, "fuzz".into(), None) {
        let tokens = Counters { input_tokens: Some(1), output_tokens: Some(1), ..Counters::default() };
        for model in ["claude-sonnet-4-5", "not-in-any-table-\u{1}"] {
            let cost = table.cost(Provider::Claude, Some(model), 1, &tokens);
            assert!(table.lookup(model).is_some() || cost.is_none(), "{model} priced without an entry");
            assert!(cost.is_none_or(|c| c >= 0.0 && !c.is_nan()));
        }
        let _ = table.list();
    }
    let zone = Zone::named("Europe/Paris").expect("a bundled zone");
    for end in [false, true] {
        let _ = zone.parse_time(&text, end, 1_764_460_800_000);
    }
    let _ = Zone::named(&text);
});
