//! The mocked API server of the crates' tests and benchmarks: a `tower` service behind a
//! `kube::Client`, each request read into a [`Seen`], logged, and answered with the JSON (and
//! status code) the caller's function gives, in process. Used by the test suites and benchmarks
//! of `kudo-client`, `kudo-manager` and `kudo-webhook`. Streaming answers (watches) are not its
//! job.

use std::sync::{Arc, Mutex};

use http::{Request, Response};
use http_body_util::BodyExt;
use kube::client::Body;
use serde_json::{Value, json};

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The URI's path.
    pub path: String,
    /// The URI's query, without the leading `&` kube writes (`fieldManager=kudo`).
    pub query: String,
    /// The `content-type` header (empty when absent).
    pub content_type: String,
    /// The `accept` header (empty when absent): `...;as=PartialObjectMetadataList;...` for a
    /// list of metadata only.
    pub accept: String,
    /// The JSON body (`null` when there is none).
    pub body: Value,
    /// The `impersonate-user` header: whose rights the request asks for (empty when absent:
    /// the client's own).
    pub impersonate: String,
}

impl Seen {
    /// The path and, when there is one, the query: `/api/v1/...?dryRun=All`.
    pub fn uri(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, self.query)
        }
    }
}

/// Every request the server received, in order.
pub type Log = Arc<Mutex<Vec<Seen>>>;

/// A client for namespace `namespace` whose server answers each request with `answer` (an
/// HTTP status code and a JSON body), and the log of the requests.
pub fn client(
    namespace: &str,
    mut answer: impl FnMut(&Seen) -> (u16, Value) + Send + 'static,
) -> (kube::Client, Log) {
    let log: Log = Arc::default();
    let seen = log.clone();
    let client = answering(namespace, move |request: Seen| {
        let reply = answer(&request);
        seen.lock().unwrap().push(request);
        reply
    });
    (client, log)
}

/// The same without a log (benchmarks: nothing grows with the iterations).
pub fn answering(
    namespace: &str,
    answer: impl FnMut(Seen) -> (u16, Value) + Send + 'static,
) -> kube::Client {
    let answer = Arc::new(Mutex::new(answer));
    let service = tower::service_fn(move |request: Request<Body>| {
        let answer = answer.clone();
        async move {
            let method = request.method().to_string();
            let path = request.uri().path().to_string();
            let query = request
                .uri()
                .query()
                .unwrap_or("")
                .trim_start_matches('&')
                .to_string();
            let content_type = request
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let accept = request
                .headers()
                .get("accept")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let impersonate = request
                .headers()
                .get("impersonate-user")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let bytes = request
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let (code, reply) = (answer.lock().unwrap())(Seen {
                method,
                path,
                query,
                content_type,
                accept,
                body,
                impersonate,
            });
            // A string is sent as text (what `pods/log` answers), anything else as JSON.
            let bytes = match reply {
                Value::String(text) => text.into_bytes(),
                other => serde_json::to_vec(&other).unwrap_or_default(),
            };
            let response = Response::builder()
                .status(code)
                .body(Body::from(bytes))
                .unwrap();
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    kube::Client::new(service, namespace)
}

/// The same server on a real socket, `http://127.0.0.1:PORT` ([`crate::Served::url`]), until
/// dropped: for the `kudo` binary, given a kubeconfig that names it ([`kubeconfig`]).
pub fn serve(answer: impl FnMut(&Seen) -> (u16, Value) + Send + 'static) -> crate::Served {
    let answer = Arc::new(Mutex::new(answer));
    let app = axum::Router::new().fallback(move |request: Request<axum::body::Body>| {
        let answer = answer.clone();
        async move {
            let (parts, body) = request.into_parts();
            let header = |name: &str| {
                parts
                    .headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string()
            };
            let bytes = axum::body::to_bytes(body, usize::MAX)
                .await
                .unwrap_or_default();
            let seen = Seen {
                method: parts.method.to_string(),
                path: parts.uri.path().to_string(),
                query: parts
                    .uri
                    .query()
                    .unwrap_or("")
                    .trim_start_matches('&')
                    .to_string(),
                content_type: header("content-type"),
                accept: header("accept"),
                body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                impersonate: header("impersonate-user"),
            };
            let (code, reply) = (answer.lock().unwrap())(&seen);
            Response::builder()
                .status(code)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(
                    serde_json::to_vec(&reply).unwrap_or_default(),
                ))
                .unwrap()
        }
    });
    crate::serve_app(app)
}

/// A kubeconfig whose current context is `url`, without credentials, namespace `namespace`.
pub fn kubeconfig(url: &str, namespace: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: mock\n\
         clusters:\n- name: mock\n  cluster:\n    server: {url}\n\
         users:\n- name: mock\n  user: {{}}\n\
         contexts:\n- name: mock\n  context:\n    cluster: mock\n    user: mock\n    \
         namespace: {namespace}\n"
    )
}

/// A `Status` failure as kube-apiserver sends it.
pub fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code})
}
