//! Acting for an Instance with the rights of a ServiceAccount of its namespace.
//!
//! The manager's own identity only watches kudo's kinds, writes Instance status and
//! finalizers, publishes events, holds its Lease and reads discovery. Everything it does *for*
//! an Instance (server-side applies, deletes, the health reads of Pods, ReplicaSets and Events,
//! Pipe Pods and their `exec`, KudoOperator child Instances, the cleanup plan) goes through the
//! client [`Tenants::client_for`] returns: the manager's connection with the header
//! `Impersonate-User: system:serviceaccount:NAMESPACE:NAME` on every request, so the API server
//! authorizes each request as that ServiceAccount (with its groups `system:serviceaccounts` and
//! `system:serviceaccounts:NAMESPACE`, which it adds itself).
//!
//! The ServiceAccount is the Instance's `spec.serviceAccountName`, else the manager's
//! `--default-service-account` (`kudo init` deploys it with
//! [`kudo_crd::labels::DEFAULT_SERVICE_ACCOUNT`]). Always one of the Instance's own namespace:
//! whoever may write an Instance in a namespace acts, through kudo, with the rights of that
//! namespace's ServiceAccounts, and no further (`docs/tenancy.md`). With neither, the manager
//! acts with its own identity, as Flux does without `--default-service-account`.
//!
//! Clients are made once per (namespace, ServiceAccount) and share the manager's connection
//! pool. The same client is the one to read anything else of the Instance's namespace with
//! (a `spec.parametersFrom` Secret, say): what the ServiceAccount may not read, the Instance
//! may not use.

use std::collections::HashMap;
use std::sync::Mutex;

use http::HeaderValue;
use kube::{Client, ResourceExt};

use kudo_crd::v1beta2::Instance;

/// A ServiceAccount of an Instance's namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServiceAccount {
    /// Its namespace (the Instance's).
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl ServiceAccount {
    /// The user name the API server knows it by:
    /// `system:serviceaccount:NAMESPACE:NAME`.
    pub fn user_name(&self) -> String {
        format!("system:serviceaccount:{}:{}", self.namespace, self.name)
    }
}

impl std::fmt::Display for ServiceAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServiceAccount {}/{}", self.namespace, self.name)
    }
}

/// The identity the manager acts with for one Instance, and the client that carries it.
#[derive(Clone)]
pub struct Tenant {
    /// The client: impersonating [`Tenant::service_account`], or the manager's own.
    pub client: Client,
    /// The ServiceAccount impersonated; `None`: the manager's own identity.
    pub service_account: Option<ServiceAccount>,
}

impl Tenant {
    /// Who acts, for messages: `ServiceAccount ns/name`, or `kudo-manager's own identity`.
    pub fn who(&self) -> String {
        match &self.service_account {
            Some(sa) => sa.to_string(),
            None => "kudo-manager's own identity (no ServiceAccount named)".into(),
        }
    }
}

/// Makes and keeps the clients the manager acts with for Instances.
pub struct Tenants {
    own: Client,
    default_service_account: Option<String>,
    clients: Mutex<HashMap<ServiceAccount, Client>>,
}

impl Tenants {
    /// Clients derived from the manager's `own`; Instances that name no ServiceAccount get
    /// `default_service_account` (`None`: the manager's own identity).
    pub fn new(own: Client, default_service_account: Option<String>) -> Tenants {
        Tenants {
            own,
            default_service_account: default_service_account.filter(|s| !s.is_empty()),
            clients: Mutex::default(),
        }
    }

    /// The ServiceAccount the manager acts as for `inst`, if any; refused when
    /// `spec.serviceAccountName` is not a valid ServiceAccount name.
    pub fn service_account(&self, inst: &Instance) -> Result<Option<ServiceAccount>, InvalidName> {
        let name = match inst.spec.service_account_name.as_deref() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => match &self.default_service_account {
                Some(n) => n.clone(),
                None => return Ok(None),
            },
        };
        if !is_dns_subdomain(&name) {
            return Err(InvalidName(name));
        }
        Ok(Some(ServiceAccount {
            namespace: inst.namespace().unwrap_or_default(),
            name,
        }))
    }

    /// The ServiceAccount `name` of `namespace` (else the default one; `None`: the manager's
    /// own identity), and the client that acts as it: a Rollout's writes.
    pub fn client_as(&self, namespace: &str, name: Option<&str>) -> Result<Tenant, InvalidName> {
        let Some(name) = name
            .filter(|n| !n.is_empty())
            .or(self.default_service_account.as_deref())
        else {
            return Ok(Tenant {
                client: self.own.clone(),
                service_account: None,
            });
        };
        if !is_dns_subdomain(name) {
            return Err(InvalidName(name.to_string()));
        }
        Ok(self.acting_as(ServiceAccount {
            namespace: namespace.to_string(),
            name: name.to_string(),
        }))
    }

    /// The tenant acting as `sa`, its client made once.
    fn acting_as(&self, sa: ServiceAccount) -> Tenant {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let client = clients
            .entry(sa.clone())
            .or_insert_with(|| impersonating(&self.own, &sa))
            .clone();
        Tenant {
            client,
            service_account: Some(sa),
        }
    }

    /// The identity and client to act with for `inst` (see the module docs).
    pub fn client_for(&self, inst: &Instance) -> Result<Tenant, InvalidName> {
        let Some(sa) = self.service_account(inst)? else {
            return Ok(Tenant {
                client: self.own.clone(),
                service_account: None,
            });
        };
        Ok(self.acting_as(sa))
    }
}

/// `spec.serviceAccountName` is not a ServiceAccount name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "spec.serviceAccountName `{0}` is not a ServiceAccount name (lower-case letters, digits, `-` and `.`, at most 253 characters)"
)]
pub struct InvalidName(pub String);

/// A DNS subdomain (RFC 1123), as Kubernetes names ServiceAccounts. Nothing else can reach the
/// `Impersonate-User` header: no `:` to name another namespace, no control characters.
fn is_dns_subdomain(name: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.starts_with(alnum)
                && label.ends_with(alnum)
                && label.chars().all(|c| alnum(c) || c == '-')
        })
}

/// A client sending each request through `own` with `Impersonate-User` set to `sa`.
fn impersonating(own: &Client, sa: &ServiceAccount) -> Client {
    let user = sa.user_name();
    // Namespace and ServiceAccount names are DNS names (checked above): a valid header value.
    let header = HeaderValue::from_str(&user)
        .unwrap_or_else(|_| HeaderValue::from_static("system:anonymous"));
    let own = own.clone();
    let service = tower::service_fn(move |mut request: http::Request<kube::client::Body>| {
        request
            .headers_mut()
            .insert("impersonate-user", header.clone());
        let own = own.clone();
        async move { own.send(request).await }
    });
    Client::new(service, sa.namespace.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dns_names_are_service_account_names() {
        let cases: &[(&str, bool)] = &[
            ("kudo-instance", true),
            ("a.b-c.d1", true),
            ("x", true),
            ("", false),
            ("Upper", false),
            ("t:cluster-admin", false), // another namespace through the user name
            ("a\nb", false),
            ("-a", false),
            ("a-", false),
            ("a..b", false),
        ];
        for (name, valid) in cases {
            assert_eq!(is_dns_subdomain(name), *valid, "name: {name:?}");
        }
        assert!(!is_dns_subdomain(&"a".repeat(254)));
    }
}
