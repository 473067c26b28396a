//! The price table end to end: `beectl prices` names the bundled LiteLLM
//! release, its date and size, and the user's `~/.bee/prices.json` merged
//! over it; `beectl usage` estimates Claude Code, Gemini CLI and Qwen Code
//! logs from the right entries (long-context tiers and DashScope's ranges
//! included, ids with provider prefixes resolved) and from the user's file,
//! and leaves an unknown model unpriced. Expected figures come from the
//! bundled JSON read here on its own and from the fixture's counters.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::path::Path;

/// The bundled list, read apart from Bee's parser.
fn bundled() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../daemon/src/ledger/views/prices.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn rate(list: &Value, model: &str, field: &str) -> f64 {
    list[model][field].as_f64().unwrap_or_else(|| panic!("{model} {field}"))
}

fn json_of(home: &TestHome, args: &[&str]) -> Value {
    let output = home.beectl(args);
    assert_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stdout));
    parse_json_line(&output.stdout)
}

const USER_PRICES: &[u8] = br#"{
    "bee-private-model": {"input_cost_per_token": 1e-3, "output_cost_per_token": 2e-3},
    "gpt-5": {"input_cost_per_token": 1e-6, "output_cost_per_token": 8e-6}
}"#;

#[test]
fn prices_names_the_snapshot_its_date_its_size_and_the_user_file() {
    let home = TestHome::new();
    let list = bundled();
    let about = &list["bee_source"];
    let document = json_of(&home, &["prices", "--json"]);
    assert_eq!(document["date"], "2026-11-20", "the release day of litellm 1.110.2");
    assert_eq!(about["released"], "2026-11-20");
    let source = document["source"].as_str().unwrap();
    assert!(source.starts_with("LiteLLM 1.110.2 (PyPI package litellm, released 2026-11-20)"), "{source}");
    let rows = document["models"].as_array().unwrap();
    let count = document["modelCount"].as_u64().unwrap();
    assert_eq!(rows.len() as u64, count);
    let retained = about["retained"]["models"].as_array().unwrap().len() as u64;
    assert_eq!(count, about["models"].as_u64().unwrap() + retained);
    assert!(count > 3_500, "{count}");
    assert_eq!(document["aliases"]["claude-sonnet-latest"], "claude-sonnet-5-5");
    assert_eq!(document["userFile"], Value::Null);
    assert_eq!(document["skipped"], json!({}));
    // DashScope's ranges and xAI's inclusive threshold, in USD per million tokens.
    let row = |model: &str| rows.iter().find(|row| row["model"] == model).unwrap_or_else(|| panic!("{model}")).clone();
    let qwen = row("dashscope/qwen3-coder-plus");
    assert_eq!((qwen["input"].clone(), qwen["output"].clone()), (json!(1.0), json!(5.0)));
    let starts: Vec<&Value> = qwen["tiers"].as_array().unwrap().iter().map(|t| &t["aboveTokens"]).collect();
    assert_eq!(starts, [&json!(32_000), &json!(128_000), &json!(256_000)]);
    assert_eq!(qwen["tiers"][2]["output"], 60.0);
    assert_eq!(row("xai/grok-4.7")["tiers"][0]["aboveTokens"], 199_999, "xAI bills from 200,000 on");

    // The user's file, merged over the bundled table: one model added, one replaced.
    std::fs::create_dir_all(home.bee_dir()).unwrap();
    let user_file = home.bee_dir().join("prices.json");
    std::fs::write(&user_file, USER_PRICES).unwrap();
    let merged = json_of(&home, &["prices", "--json"]);
    assert_eq!(
        merged["userFile"],
        json!({"path": user_file.display().to_string(), "added": 1, "replaced": 1, "skipped": 0})
    );
    assert_eq!(merged["modelCount"].as_u64(), Some(count + 1));
    assert!(merged["source"].as_str().unwrap().ends_with(&format!("with {} over it", user_file.display())));
    let gpt5 = merged["models"].as_array().unwrap().iter().find(|row| row["model"] == "gpt-5").unwrap().clone();
    assert_eq!((gpt5["input"].clone(), gpt5["output"].clone()), (json!(1.0), json!(8.0)));

    // --prices FILE is that table alone, as it always was: nothing merged.
    let other = home.file("other.json", br#"{"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}"#);
    let alone = json_of(&home, &["prices", "--json", "--prices", other.to_str().unwrap()]);
    assert_eq!((alone["modelCount"].clone(), alone["userFile"].clone()), (json!(1), Value::Null));

    // A broken user file is an error naming it, never a silent fallback.
    std::fs::write(&user_file, b"{\"bee-private-model\": ").unwrap();
    for args in [&["prices", "--json"][..], &["usage", "--json", "--no-import"]] {
        let refused = home.beectl(args);
        assert_eq!(refused.status.code(), Some(5), "{args:?}: {}", String::from_utf8_lossy(&refused.stdout));
        let error = parse_json_line(&refused.stdout);
        assert_eq!(error["errorCode"], "invalid_price_file", "{error}");
        assert!(error["message"].as_str().unwrap().contains(&user_file.display().to_string()), "{error}");
    }
    // --prices does not read it.
    json_of(&home, &["prices", "--json", "--prices", other.to_str().unwrap()]);
}

/// Claude Code, Gemini CLI and Qwen Code logs of models the bundled table
/// prices in tiers, by prefixed ids, from the user's file, and not at all.
fn fixture() -> TestHome {
    let home = TestHome::new();
    let session = "1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
    let claude: [(&str, u64, u64, u64, u64); 4] = [
        // (model, input, cache write, cache read, output)
        ("claude-sonnet-4-20250514", 10, 0, 250_000, 100),
        ("anthropic/claude-sonnet-4.5", 1_000, 2_000, 3_000, 400),
        ("bee-private-model", 100, 0, 0, 50),
        ("claude-mystery-9", 100, 0, 0, 50),
    ];
    let mut body = String::new();
    for (n, (model, input, write, read, output)) in claude.iter().enumerate() {
        body += &(json!({"parentUuid": null, "isSidechain": false, "type": "assistant", "sessionId": session,
            "timestamp": format!("2026-11-30T10:0{n}:00.000Z"), "requestId": format!("req_{n}"), "cwd": "/home/dev/app",
            "version": "2.1.332", "message": {"id": format!("msg_{n}"), "type": "message", "role": "assistant",
                "model": model, "stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}],
                "usage": {"input_tokens": input, "cache_creation_input_tokens": write,
                          "cache_read_input_tokens": read, "output_tokens": output}}})
        .to_string()
            + "\n");
    }
    write_quiet(&home.path().join(format!(".claude/projects/-home-dev-app/{session}.jsonl")), &body);

    let gemini_session = "2a3b4c5d-6e7f-4809-9a1b-2c3d4e5f6a7b";
    let mut gemini = json!({"sessionId": gemini_session, "projectHash": "ab12", "startTime": "2026-11-30T11:00:00.000Z",
        "lastUpdated": "2026-11-30T11:00:00.000Z", "kind": "main"})
    .to_string() + "\n";
    for (n, (input, cached, output)) in
        [(100_000u64, 40_000u64, 2_000u64), (250_000, 200_000, 2_000)].iter().enumerate()
    {
        gemini += &(json!({"id": format!("5c4f3fdb-a174-40cc-bb36-b4cc2ca1356{n}"),
            "timestamp": format!("2026-11-30T11:0{n}:00.000Z"), "type": "gemini", "content": "", "thoughts": [],
            "tokens": {"input": input, "output": output, "cached": cached, "thoughts": 0, "tool": 0, "total": input + output},
            "model": "gemini-2.5-pro"})
        .to_string()
            + "\n");
    }
    write_quiet(&home.path().join(".gemini/tmp/app/chats/session-2026-11-30T11-00-2a3b4c5d.jsonl"), &gemini);

    let qwen_session = "98f11799-cca9-4f6a-a77d-732fa1a18f08";
    let mut qwen = String::new();
    for (n, (input, cached, output)) in [(20_000u64, 5_000u64, 1_000u64), (150_000, 100_000, 2_000)].iter().enumerate()
    {
        let at = format!("2026-11-30T12:0{n}:00.000Z");
        qwen += &(json!({"uuid": format!("3152226f-898b-4ea3-8b24-f4feea25487{n}"), "parentUuid": null,
            "sessionId": qwen_session, "timestamp": at, "type": "system", "provenance": "system", "cwd": "/home/dev/app",
            "version": "0.24.4", "subtype": "ui_telemetry", "systemPayload": {"uiEvent": {
                "event.name": "qwen-code.api_response", "event.timestamp": at, "response_id": format!("chatcmpl-{n}"),
                "model": "qwen3-coder-plus", "status_code": 200, "duration_ms": 200, "input_token_count": input,
                "output_token_count": output, "cached_content_token_count": cached, "thoughts_token_count": 0,
                "total_token_count": input + output, "auth_type": "openai"}}})
        .to_string()
            + "\n");
    }
    write_quiet(&home.path().join(".qwen/projects/-home-dev-app/chats/qwen-session.jsonl"), &qwen);
    let ingest = home.beectl(&["ingest"]);
    assert_eq!(ingest.status.code(), Some(0), "{}", String::from_utf8_lossy(&ingest.stdout));
    home
}

fn close(actual: &Value, expected: f64) {
    let actual = actual.as_f64().unwrap_or_else(|| panic!("not a cost: {actual}"));
    assert!((actual - expected).abs() < 1e-9, "{actual} vs {expected}");
}

#[test]
fn usage_estimates_each_agents_models_from_the_right_entry_and_the_user_file() {
    let home = fixture();
    let list = bundled();
    let report = |extra: &[&str]| {
        json_of(
            &home,
            &[&["usage", "--by", "model", "--since", "2026-11-30", "--json", "--no-import"][..], extra].concat(),
        )
    };

    // Claude: the retained Sonnet 4 above 200k at its long-context rates;
    // `anthropic/claude-sonnet-4.5` at claude-sonnet-4-5's.
    let sonnet_4 = |field: &str| rate(&list, "claude-sonnet-4-20250514", &format!("{field}_above_200k_tokens"));
    let long = 10.0 * sonnet_4("input_cost_per_token")
        + 250_000.0 * sonnet_4("cache_read_input_token_cost")
        + 100.0 * sonnet_4("output_cost_per_token");
    let sonnet_4_5 = |field: &str| rate(&list, "claude-sonnet-4-5", field);
    let prefixed = 1_000.0 * sonnet_4_5("input_cost_per_token")
        + 2_000.0 * sonnet_4_5("cache_creation_input_token_cost")
        + 3_000.0 * sonnet_4_5("cache_read_input_token_cost")
        + 400.0 * sonnet_4_5("output_cost_per_token");
    // Gemini 2.5 Pro: one request below 200k of prompt, one above (the whole request at the long rates).
    let gemini = |field: &str| rate(&list, "gemini-2.5-pro", field);
    let gemini_cost = 60_000.0 * gemini("input_cost_per_token")
        + 40_000.0 * gemini("cache_read_input_token_cost")
        + 2_000.0 * gemini("output_cost_per_token")
        + 50_000.0 * gemini("input_cost_per_token_above_200k_tokens")
        + 200_000.0 * gemini("cache_read_input_token_cost_above_200k_tokens")
        + 2_000.0 * gemini("output_cost_per_token_above_200k_tokens");
    // qwen3-coder-plus: DashScope's (0, 32k] and (128k, 256k] ranges.
    let ranges = list["dashscope/qwen3-coder-plus"]["tiered_pricing"].as_array().unwrap().clone();
    let range = |n: usize, field: &str| ranges[n][field].as_f64().unwrap();
    assert_eq!((ranges[0]["range"][1].clone(), ranges[2]["range"][0].clone()), (json!(32_000), json!(128_000)));
    let qwen_cost = 15_000.0 * range(0, "input_cost_per_token")
        + 5_000.0 * range(0, "cache_read_input_token_cost")
        + 1_000.0 * range(0, "output_cost_per_token")
        + 50_000.0 * range(2, "input_cost_per_token")
        + 100_000.0 * range(2, "cache_read_input_token_cost")
        + 2_000.0 * range(2, "output_cost_per_token");
    let bundled_only = long + prefixed + gemini_cost + qwen_cost;

    let without = report(&[]);
    close(&without["totals"]["estimatedCostUsd"], bundled_only);
    assert_eq!(without["unpricedModels"], json!(["bee-private-model", "claude-mystery-9"]));
    assert_eq!(without["totals"]["unpricedParts"], 2);

    // The user's file prices its model; the unknown one stays unpriced, never $0.
    std::fs::create_dir_all(home.bee_dir()).unwrap();
    std::fs::write(home.bee_dir().join("prices.json"), USER_PRICES).unwrap();
    let with = report(&[]);
    close(&with["totals"]["estimatedCostUsd"], bundled_only + 100.0 * 1e-3 + 50.0 * 2e-3);
    assert_eq!(with["unpricedModels"], json!(["claude-mystery-9"]));
    assert_eq!(with["totals"]["unpricedParts"], 1);
    assert!(with["prices"]["source"].as_str().unwrap().contains("prices.json over it"), "{}", with["prices"]);

    // --prices FILE alone: only what it names is priced.
    let file = home
        .file("only.json", br#"{"bee-private-model": {"input_cost_per_token": 1e-3, "output_cost_per_token": 2e-3}}"#);
    let alone = report(&["--prices", file.to_str().unwrap()]);
    close(&alone["totals"]["estimatedCostUsd"], 0.2);
    assert_eq!(alone["totals"]["unpricedParts"], 7);
}
