//! What the API server said, as one sentence for a person: [`said`] turns a `kube::Error` into
//! the server's own message (never the Rust `Debug` of its `Status`), and [`Forbidden`] reads
//! RBAC's refusal (`User "u" cannot create resource "instances" in API group "kudo.dev" in the
//! namespace "t1"`) into the verb and resource to ask for.

use std::fmt;

/// The API server's message for a refused request (its `Status.message`, else its reason and
/// code); any other error as its own `Display`. RBAC's refusals are rewritten by [`Forbidden`].
pub fn said(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => {
            if let Some(f) = Forbidden::parse(&s.message).filter(|_| s.code == 403) {
                return f.to_string();
            }
            match (s.message.is_empty(), s.reason.is_empty()) {
                (false, _) => s.message.clone(),
                (true, false) => format!("{} (HTTP {})", s.reason, s.code),
                (true, true) => format!("HTTP {}", s.code),
            }
        }
        other => other.to_string(),
    }
}

/// The namespace the API server says does not exist (a 404 whose details name a
/// `namespaces` object), when it is `namespace`.
pub fn missing_namespace(e: &kube::Error, namespace: &str) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404
        && s.details.as_ref().is_some_and(|d| d.kind == "namespaces" && d.name == namespace))
}

/// RBAC's refusal of a request, read from the API server's message: who may not do what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forbidden {
    /// The user refused (`system:serviceaccount:t1:tenant`), when the message says.
    pub user: Option<String>,
    /// The verb (`create`, `list`, `patch`).
    pub verb: String,
    /// The resource, with its API group (`instances.kudo.dev`; `namespaces` for the core
    /// group; a subresource as `instances.kudo.dev/status`).
    pub resource: String,
    /// The namespace, for a namespaced request.
    pub namespace: Option<String>,
}

impl Forbidden {
    /// Reads `... User "U" cannot VERB resource "R" in API group "G" [in the namespace "N"]`
    /// (kube-apiserver's RBAC message); `None` for any other message (an admission webhook's
    /// denial, say).
    pub fn parse(message: &str) -> Option<Forbidden> {
        let (before, rest) = message.split_once(" cannot ")?;
        let user = before
            .rsplit_once("User \"")
            .and_then(|(_, u)| u.strip_suffix('"'))
            .map(String::from);
        let (verb, rest) = rest.split_once(" resource \"")?;
        let (resource, rest) = rest.split_once('"')?;
        let group = rest
            .split_once("in API group \"")
            .and_then(|(_, g)| g.split_once('"'))
            .map(|(g, _)| g)
            .unwrap_or_default();
        let namespace = rest
            .split_once("in the namespace \"")
            .and_then(|(_, n)| n.split_once('"'))
            .map(|(n, _)| n.to_string());
        let resource = match (group, resource.split_once('/')) {
            ("", _) => resource.to_string(),
            (g, Some((r, sub))) => format!("{r}.{g}/{sub}"),
            (g, None) => format!("{resource}.{g}"),
        };
        Some(Forbidden {
            user,
            verb: verb.to_string(),
            resource,
            namespace,
        })
    }
}

impl fmt::Display for Forbidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Forbidden {
            user,
            verb,
            resource,
            namespace,
        } = self;
        write!(f, "you")?;
        if let Some(u) = user {
            write!(f, " ({u})")?;
        }
        write!(f, " may not {verb} {resource}")?;
        match namespace {
            Some(ns) => write!(
                f,
                " in namespace {ns}: ask for the verb {verb} on {resource} in namespace {ns}"
            ),
            None => write!(
                f,
                " cluster-wide: ask for the verb {verb} on {resource} (a ClusterRole)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn the_api_server_s_message_is_the_sentence_never_its_status() {
        let cases: &[(kube::Error, &str)] = &[
            (
                api(404, "NotFound", r#"namespaces "nosuchns" not found"#),
                r#"namespaces "nosuchns" not found"#,
            ),
            (
                api(
                    403,
                    "Forbidden",
                    r#"instances.kudo.dev is forbidden: User "system:serviceaccount:t1:tenant" cannot create resource "instances" in API group "kudo.dev" in the namespace "t1""#,
                ),
                "you (system:serviceaccount:t1:tenant) may not create instances.kudo.dev in \
                 namespace t1: ask for the verb create on instances.kudo.dev in namespace t1",
            ),
            (
                api(
                    403,
                    "Forbidden",
                    r#"namespaces is forbidden: User "bob" cannot create resource "namespaces" in API group "" at the cluster scope"#,
                ),
                "you (bob) may not create namespaces cluster-wide: ask for the verb create on \
                 namespaces (a ClusterRole)",
            ),
            (
                api(
                    403,
                    "Forbidden",
                    r#"admission webhook "instances.kudo.dev" denied the request: no"#,
                ),
                r#"admission webhook "instances.kudo.dev" denied the request: no"#,
            ),
            (api(500, "InternalError", ""), "InternalError (HTTP 500)"),
            (api(502, "", ""), "HTTP 502"),
        ];
        for (e, want) in cases {
            let got = said(e);
            assert_eq!(&got, want);
            assert!(!got.contains("Status {"), "{got}");
        }
    }

    #[test]
    fn a_subresource_keeps_its_group_before_the_slash() {
        let f = Forbidden::parse(
            r#"User "u" cannot patch resource "instances/status" in API group "kudo.dev" in the namespace "n""#,
        )
        .unwrap();
        assert_eq!(f.resource, "instances.kudo.dev/status");
        assert_eq!(f.namespace.as_deref(), Some("n"));
    }
}
