//! OTLP/HTTP: the series as an `ExportMetricsServiceRequest`, and the log
//! events (limit hits, lost records) as an `ExportLogsServiceRequest`, of the
//! official OpenTelemetry protobuf definitions (`opentelemetry-proto`'s
//! generated messages), binary protobuf.
//!
//! A Prometheus `_total` counter becomes a monotonic cumulative Sum named
//! without the suffix (a collector's Prometheus exporter adds it back);
//! every other series is a Gauge. The labels become data point attributes;
//! the resource says `service.name` `bee`, its version and `host.name`.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs, SeverityNumber};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, Gauge, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum, metric,
    number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;

use super::{LogEvent, LogLevel, Series};

/// OTLP's nanoseconds of a Unix millisecond instant (0 before the epoch).
pub fn unix_ns(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0).saturating_mul(1_000_000)
}

/// The OTLP name of a series: `_total` dropped from a counter's name.
pub fn metric_name(series_name: &str) -> &str {
    series_name.strip_suffix("_total").unwrap_or(series_name)
}

fn attribute(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.to_owned())) }),
        ..KeyValue::default()
    }
}

/// The request for `series` at `now_ns`; cumulative sums count from `start_ns`
/// (when this exporter started: the totals themselves cover the whole store).
pub fn metrics_request(series: &[Series], host: &str, start_ns: u64, now_ns: u64) -> ExportMetricsServiceRequest {
    let mut metrics: Vec<Metric> = Vec::new();
    for one in series {
        let mut attributes: Vec<KeyValue> = one.labels.iter().map(|(key, value)| attribute(key, value)).collect();
        attributes.extend(gen_ai_attributes(one));
        let point = NumberDataPoint {
            attributes,
            start_time_unix_nano: start_ns,
            time_unix_nano: now_ns,
            value: Some(number_data_point::Value::AsDouble(one.value)),
            ..NumberDataPoint::default()
        };
        let name = metric_name(one.name);
        let at = match metrics.iter().position(|m| m.name == name) {
            Some(at) => at,
            None => {
                let data = if one.name.ends_with("_total") {
                    metric::Data::Sum(Sum {
                        data_points: Vec::new(),
                        aggregation_temporality: AggregationTemporality::Cumulative as i32,
                        is_monotonic: true,
                    })
                } else {
                    metric::Data::Gauge(Gauge { data_points: Vec::new() })
                };
                let meta = bee_proto::export::series_meta(one.name);
                metrics.push(Metric {
                    name: name.to_owned(),
                    description: meta.map(|meta| meta.help.to_owned()).unwrap_or_default(),
                    unit: meta.map(|meta| otlp_unit(meta.unit)).unwrap_or_default().to_owned(),
                    data: Some(data),
                    ..Metric::default()
                });
                metrics.len() - 1
            }
        };
        match &mut metrics[at].data {
            Some(metric::Data::Sum(sum)) => sum.data_points.push(point),
            Some(metric::Data::Gauge(gauge)) => gauge.data_points.push(point),
            _ => {}
        }
    }
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(resource(host)),
            scope_metrics: vec![ScopeMetrics { scope: Some(scope()), metrics, ..ScopeMetrics::default() }],
            ..ResourceMetrics::default()
        }],
    }
}

/// A unit as OTLP spells it (UCUM; a count's unit in braces).
fn otlp_unit(prometheus_unit: &str) -> &'static str {
    match prometheus_unit {
        "seconds" => "s",
        "bytes" => "By",
        "ratio" => "1",
        "tokens" => "{token}",
        "usd" => "USD",
        _ => "",
    }
}

/// OpenTelemetry's GenAI attributes where one names what a label does: the
/// model (`gen_ai.request.model`), and for input and output tokens their
/// type (`gen_ai.token.type`). Bee's own labels stay beside them.
fn gen_ai_attributes(series: &Series) -> Vec<KeyValue> {
    let label = |name: &str| series.labels.iter().find(|(key, _)| *key == name).map(|(_, value)| value.as_str());
    let mut attributes = Vec::new();
    if let Some(model) = label(bee_proto::export::LABEL_MODEL) {
        attributes.push(attribute("gen_ai.request.model", model));
    }
    if series.name == bee_proto::export::TOKENS_TOTAL
        && let Some(kind @ ("input" | "output")) = label(bee_proto::export::LABEL_KIND)
    {
        attributes.push(attribute("gen_ai.token.type", kind));
    }
    attributes
}

/// Bee on this host: the resource of every request.
fn resource(host: &str) -> Resource {
    Resource {
        attributes: vec![
            attribute("service.name", "bee"),
            attribute("service.version", env!("CARGO_PKG_VERSION")),
            attribute("host.name", host),
        ],
        ..Resource::default()
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope {
        name: "bee".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        ..InstrumentationScope::default()
    }
}

/// The binary protobuf body of the log events, observed at `now_ns`.
pub fn encode_logs(events: &[LogEvent], host: &str, now_ns: u64) -> Vec<u8> {
    let log_records = events
        .iter()
        .map(|event| {
            let (severity, text) = match event.level {
                LogLevel::Info => (SeverityNumber::Info, "INFO"),
                LogLevel::Warn => (SeverityNumber::Warn, "WARN"),
                LogLevel::Error => (SeverityNumber::Error, "ERROR"),
            };
            LogRecord {
                time_unix_nano: unix_ns(event.at_ms),
                observed_time_unix_nano: now_ns,
                severity_number: severity as i32,
                severity_text: text.to_owned(),
                body: Some(AnyValue { value: Some(any_value::Value::StringValue(event.body.clone())) }),
                attributes: event.attributes.iter().map(|(key, value)| attribute(key, value)).collect(),
                event_name: event.name.to_owned(),
                ..LogRecord::default()
            }
        })
        .collect();
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(resource(host)),
            scope_logs: vec![ScopeLogs { scope: Some(scope()), log_records, ..ScopeLogs::default() }],
            ..ResourceLogs::default()
        }],
    }
    .encode_to_vec()
}

/// The binary protobuf body of [`metrics_request`].
pub fn encode(series: &[Series], host: &str, start_ns: u64, now_ns: u64) -> Vec<u8> {
    metrics_request(series, host, start_ns, now_ns).encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_cumulative_sums_without_total_and_the_rest_gauges() {
        let series = vec![
            Series { name: "bee_tokens_total", labels: vec![("kind", "output".to_owned())], value: 7.0 },
            Series { name: "bee_tokens_total", labels: vec![("kind", "input".to_owned())], value: 3.0 },
            Series { name: "bee_window_utilisation_ratio", labels: vec![], value: 0.5 },
        ];
        let body = encode(&series, "box", 1, 2);
        let request = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap();
        let metrics = &request.resource_metrics[0].scope_metrics[0].metrics;
        assert_eq!(metrics.len(), 2);
        assert_eq!(metrics[0].name, "bee_tokens");
        let Some(metric::Data::Sum(sum)) = &metrics[0].data else { panic!("{metrics:?}") };
        assert!(sum.is_monotonic && sum.aggregation_temporality == AggregationTemporality::Cumulative as i32);
        assert_eq!(sum.data_points.len(), 2);
        assert!(matches!(metrics[1].data, Some(metric::Data::Gauge(_))));
        assert_eq!((metrics[0].unit.as_str(), metrics[1].unit.as_str()), ("{token}", "1"));
        assert!(metrics.iter().all(|metric| !metric.description.is_empty()), "described from the one table");
        let token_types: Vec<String> = sum
            .data_points
            .iter()
            .flat_map(|point| &point.attributes)
            .filter(|kv| kv.key == "gen_ai.token.type")
            .filter_map(|kv| match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(any_value::Value::StringValue(text)) => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(token_types, ["output", "input"], "GenAI's token type beside Bee's kind");
    }
}
