//! The webhook's Prometheus metrics: requests by endpoint and outcome, findings by rule (requests that
//! are not dry runs), and a latency histogram by endpoint, rendered in the text exposition format.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// The upper bounds of the latency histogram's buckets, in seconds.
pub const LATENCY_BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];

/// One endpoint's latency histogram.
#[derive(Debug, Clone, Default)]
struct Histogram {
    /// Cumulative counts per bucket of [`LATENCY_BUCKETS`].
    buckets: Vec<u64>,
    count: u64,
    sum: f64,
}

#[derive(Debug, Default)]
struct Counters {
    requests: BTreeMap<(String, String), u64>,
    findings: BTreeMap<String, u64>,
    latency: BTreeMap<String, Histogram>,
}

/// The metrics, shared by every connection.
#[derive(Debug, Default)]
pub struct Metrics {
    counters: Mutex<Counters>,
}

impl Metrics {
    /// Counts a request to `endpoint` that ended as `outcome` after `elapsed`.
    pub fn request(&self, endpoint: &str, outcome: &str, elapsed: Duration) {
        let mut counters = self.counters.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *counters.requests.entry((endpoint.to_string(), outcome.to_string())).or_default() += 1;
        let histogram = counters.latency.entry(endpoint.to_string()).or_default();
        if histogram.buckets.is_empty() {
            histogram.buckets = vec![0; LATENCY_BUCKETS.len()];
        }
        let seconds = elapsed.as_secs_f64();
        for (bucket, bound) in histogram.buckets.iter_mut().zip(LATENCY_BUCKETS) {
            if seconds <= *bound {
                *bucket += 1;
            }
        }
        histogram.count += 1;
        histogram.sum += seconds;
    }

    /// Counts one finding of rule `code`.
    pub fn finding(&self, code: &str) {
        let mut counters = self.counters.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *counters.findings.entry(code.to_string()).or_default() += 1;
    }

    /// The metrics in Prometheus' text format.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let counters = self.counters.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out = String::new();
        out.push_str("# HELP capslint_admission_requests_total Admission requests by endpoint and outcome.\n");
        out.push_str("# TYPE capslint_admission_requests_total counter\n");
        for ((endpoint, outcome), count) in &counters.requests {
            let _ = writeln!(
                out,
                "capslint_admission_requests_total{{endpoint=\"{endpoint}\",outcome=\"{outcome}\"}} {count}"
            );
        }
        out.push_str("# HELP capslint_admission_findings_total Findings on admitted objects by rule (not dry runs).\n");
        out.push_str("# TYPE capslint_admission_findings_total counter\n");
        for (rule, count) in &counters.findings {
            let _ = writeln!(out, "capslint_admission_findings_total{{rule=\"{rule}\"}} {count}");
        }
        out.push_str("# HELP capslint_admission_request_duration_seconds Time to answer a request, by endpoint.\n");
        out.push_str("# TYPE capslint_admission_request_duration_seconds histogram\n");
        for (endpoint, histogram) in &counters.latency {
            for (bucket, bound) in histogram.buckets.iter().zip(LATENCY_BUCKETS) {
                let _ = writeln!(
                    out,
                    "capslint_admission_request_duration_seconds_bucket{{endpoint=\"{endpoint}\",le=\"{bound}\"}} {bucket}"
                );
            }
            let _ = writeln!(
                out,
                "capslint_admission_request_duration_seconds_bucket{{endpoint=\"{endpoint}\",le=\"+Inf\"}} {}",
                histogram.count
            );
            let _ = writeln!(
                out,
                "capslint_admission_request_duration_seconds_sum{{endpoint=\"{endpoint}\"}} {}",
                histogram.sum
            );
            let _ = writeln!(
                out,
                "capslint_admission_request_duration_seconds_count{{endpoint=\"{endpoint}\"}} {}",
                histogram.count
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_is_cumulative() {
        let metrics = Metrics::default();
        metrics.request("validate", "allowed", Duration::from_millis(3));
        metrics.request("validate", "denied", Duration::from_millis(30));
        metrics.finding("CAP202");
        let text = metrics.render();
        assert!(text.contains("capslint_admission_requests_total{endpoint=\"validate\",outcome=\"denied\"} 1"));
        assert!(text.contains("capslint_admission_findings_total{rule=\"CAP202\"} 1"));
        assert!(
            text.contains("capslint_admission_request_duration_seconds_bucket{endpoint=\"validate\",le=\"0.005\"} 1")
        );
        assert!(
            text.contains("capslint_admission_request_duration_seconds_bucket{endpoint=\"validate\",le=\"0.05\"} 2")
        );
        assert!(text.contains("capslint_admission_request_duration_seconds_count{endpoint=\"validate\"} 2"));
    }
}
