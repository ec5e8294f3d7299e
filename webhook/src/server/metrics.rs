//! The server's Prometheus metrics (`kudo_webhook_*`).

use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct RequestLabels {
    endpoint: String,
    code: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct EndpointLabels {
    endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ReasonLabels {
    pub(super) reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct LaneLabels {
    pub(super) lane: &'static str,
}

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    pub(super) requests: Family<RequestLabels, Counter>,
    pub(super) latency: Family<EndpointLabels, Histogram>,
    pub(super) objects: Counter,
    pub(super) failed_objects: Counter,
    pub(super) reloads: Counter,
    pub(super) refused: Family<ReasonLabels, Counter>,
    pub(super) budget_in_use: Family<LaneLabels, Gauge>,
    pub(super) budget_waits: Family<LaneLabels, Counter>,
    pub(super) cancelled: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("kudo_webhook");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<EndpointLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
            ])
        });
        let objects = Counter::default();
        let failed_objects = Counter::default();
        let reloads = Counter::default();
        let refused = Family::<ReasonLabels, Counter>::default();
        let budget_in_use = Family::<LaneLabels, Gauge>::default();
        let budget_waits = Family::<LaneLabels, Counter>::default();
        let cancelled = Counter::default();
        registry.register(
            "requests",
            "Requests by endpoint and HTTP status",
            requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time to answer a request, by endpoint",
            latency.clone(),
        );
        registry.register("conversion_objects", "Objects converted", objects.clone());
        registry.register(
            "conversion_failures",
            "Objects that could not be converted",
            failed_objects.clone(),
        );
        registry.register(
            "certificate_reloads",
            "Times the TLS certificate was loaded again from disk",
            reloads.clone(),
        );
        registry.register(
            "refused",
            "Reviews refused by a limit, by reason: read_timeout (408: the body did not arrive \
             in time), body_too_large (413), body_unreadable (400: the client broke the body \
             off), budget_timeout (408: no room in the memory budget before the request \
             timeout), request_timeout (408: not answered in time; its work is cancelled)",
            refused.clone(),
        );
        registry.register(
            "memory_budget_in_use_bytes",
            "Bytes of the memory budget held by request bodies, by lane (small, large)",
            budget_in_use.clone(),
        );
        registry.register(
            "memory_budget_waits",
            "Request bodies that waited for room in the memory budget, by lane",
            budget_waits.clone(),
        );
        registry.register(
            "cancelled_reviews",
            "Reviews whose work stopped early because their deadline passed or their client \
             went away",
            cancelled.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            objects,
            failed_objects,
            reloads,
            refused,
            budget_in_use,
            budget_waits,
            cancelled,
        }
    }
}

impl Metrics {
    /// Counts one answer of `endpoint` with `code`, and its latency since `started`.
    pub(super) fn observe(&self, endpoint: &str, code: u16, started: Instant) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint: endpoint.into(),
                code,
            })
            .inc();
        self.latency
            .get_or_create(&EndpointLabels {
                endpoint: endpoint.into(),
            })
            .observe(started.elapsed().as_secs_f64());
    }

    /// The metrics in Prometheus' text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
