//! Kubelet certificate signing requests: what the `nodes` check keeps of one
//! `certificates.k8s.io/v1` CertificateSigningRequest, and the node it would admit.
//!
//! Pure: the source hands in the fields it read, [`CsrSummary::new`] keeps only what the judge
//! needs. Only the two kubelet signers matter here:
//!
//! - `kubernetes.io/kube-apiserver-client-kubelet` — the kubelet's client certificate. A joining
//!   node's first one (bootstrap) is requested by the bootstrapper's identity (OpenShift:
//!   `system:serviceaccount:openshift-machine-config-operator:node-bootstrapper`; kubeadm:
//!   `system:bootstrap:<token id>`), so the node's name is only in the request's subject,
//!   `CN=system:node:<name>`. Renewals are requested by `system:node:<name>` itself.
//! - `kubernetes.io/kubelet-serving` — the kubelet's serving certificate, requested by the node.
//!
//! The node is read from the PKCS#10 request (`spec.request`: base64 of a PEM block) because that
//! is the name the certificate would carry; when the request cannot be read, a requester that is
//! a node (`system:node:<name>`) names it; otherwise only the requester is known.

use jiff::Timestamp;
use x509_parser::prelude::{FromDer, X509CertificationRequest};

/// The kubelet client certificate signer (bootstrap and renewals).
pub const KUBELET_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client-kubelet";
/// The kubelet serving certificate signer.
pub const KUBELET_SERVING_SIGNER: &str = "kubernetes.io/kubelet-serving";
/// How a node's identity is spelled, as a user name and as a certificate's common name.
pub const NODE_USER_PREFIX: &str = "system:node:";
/// Longest requester name kept (a node name's limit); longer ones are cut, so one odd user
/// name cannot blow up a condition message.
pub const MAX_REQUESTER_LEN: usize = 253;

/// One of the two kubelet signers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KubeletSigner {
    Client,
    Serving,
}

impl KubeletSigner {
    /// The signer for `spec.signerName`; `None` for every other signer.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            KUBELET_CLIENT_SIGNER => Some(KubeletSigner::Client),
            KUBELET_SERVING_SIGNER => Some(KubeletSigner::Serving),
            _ => None,
        }
    }

    /// `spec.signerName`.
    pub fn name(self) -> &'static str {
        match self {
            KubeletSigner::Client => KUBELET_CLIENT_SIGNER,
            KubeletSigner::Serving => KUBELET_SERVING_SIGNER,
        }
    }
}

/// Where a request stands, from its `status.conditions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsrState {
    /// Neither approved nor denied, and not failed.
    Pending,
    Approved,
    Denied,
    /// The signer could not sign it; ends the request like a denial.
    Failed,
}

impl CsrState {
    /// From `(type, status)` of each condition. A condition counts unless its status is
    /// `False` or `Unknown`: objects written before `status` existed on these conditions have
    /// none, and the API server only allows `True` on `Approved` and `Denied`.
    pub fn from_conditions<'a>(conditions: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let held: Vec<&str> = conditions
            .into_iter()
            .filter(|(_, status)| !matches!(*status, "False" | "Unknown"))
            .map(|(type_, _)| type_)
            .collect();
        let has = |type_| held.contains(&type_);
        if has("Denied") {
            CsrState::Denied
        } else if has("Failed") {
            CsrState::Failed
        } else if has("Approved") {
            CsrState::Approved
        } else {
            CsrState::Pending
        }
    }
}

/// What the check keeps of one CertificateSigningRequest: no request bytes, no certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsrSummary {
    pub name: String,
    /// `metadata.creationTimestamp`; the grace is measured from it.
    pub created: Option<Timestamp>,
    /// `None` when the signer is not a kubelet signer.
    pub signer: Option<KubeletSigner>,
    pub state: CsrState,
    /// The node the certificate would admit (see the module docs); only looked for on a
    /// pending kubelet request.
    pub node: Option<String>,
    /// `spec.username`, cut to [`MAX_REQUESTER_LEN`]; empty unless the request is a pending
    /// kubelet one.
    pub requester: String,
}

/// The fields of a CertificateSigningRequest that [`CsrSummary::new`] reads.
#[derive(Debug, Clone, Copy)]
pub struct CsrFields<'a> {
    pub name: &'a str,
    pub created: Option<Timestamp>,
    /// `spec.signerName`.
    pub signer_name: &'a str,
    /// `spec.username`.
    pub username: &'a str,
    /// `spec.request` as the JSON carries it: base64 of the PEM text.
    pub request_base64: &'a str,
    pub state: CsrState,
}

impl CsrSummary {
    /// Summarizes one request. Reading the node never fails the summary: an unreadable
    /// request leaves `node` to the requester's identity, or `None`.
    pub fn new(fields: CsrFields<'_>) -> Self {
        let signer = KubeletSigner::from_name(fields.signer_name);
        let relevant = signer.is_some() && fields.state == CsrState::Pending;
        let (node, requester) = if relevant {
            let node = node_from_request_base64(fields.request_base64)
                .ok()
                .or_else(|| node_from_user(fields.username));
            (node, cut(fields.username, MAX_REQUESTER_LEN))
        } else {
            (None, String::new())
        };
        CsrSummary {
            name: fields.name.to_owned(),
            created: fields.created,
            signer,
            state: fields.state,
            node,
            requester,
        }
    }
}

/// Why no node name could be read from a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("spec.request is not base64")]
    Base64,
    #[error("spec.request is not a PEM block: {0}")]
    Pem(String),
    #[error("the PEM block is {0:?}, not CERTIFICATE REQUEST")]
    Label(String),
    #[error("the certificate request does not parse: {0}")]
    Der(String),
    #[error("the certificate request's subject has no common name")]
    NoCommonName,
    #[error("the common name is not system:node:<node name>")]
    NotANode,
}

/// The node named by a request given as the API's JSON carries it (base64 of the PEM).
pub fn node_from_request_base64(request: &str) -> Result<String, RequestError> {
    use base64::Engine as _;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(request.trim())
        .map_err(|_| RequestError::Base64)?;
    node_from_request_pem(&pem)
}

/// The node named by a PKCS#10 request in PEM: its subject's first common name, which must be
/// `system:node:<name>` with a valid node name.
pub fn node_from_request_pem(pem: &[u8]) -> Result<String, RequestError> {
    let (_, block) =
        x509_parser::pem::parse_x509_pem(pem).map_err(|e| RequestError::Pem(e.to_string()))?;
    if block.label != "CERTIFICATE REQUEST" {
        return Err(RequestError::Label(cut(&block.label, 64)));
    }
    let (_, request) = X509CertificationRequest::from_der(&block.contents)
        .map_err(|e| RequestError::Der(e.to_string()))?;
    let common_name = request
        .certification_request_info
        .subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .ok_or(RequestError::NoCommonName)?;
    node_from_user(common_name).ok_or(RequestError::NotANode)
}

/// `<name>` of `system:node:<name>`, when `<name>` is a valid node name.
pub fn node_from_user(user: &str) -> Option<String> {
    user.strip_prefix(NODE_USER_PREFIX)
        .filter(|name| is_node_name(name))
        .map(ToOwned::to_owned)
}

/// A DNS-1123 subdomain, as node names are: at most 253 characters of lower-case letters,
/// digits, `-` and `.`, beginning and ending with a letter or digit.
pub fn is_node_name(name: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 253
        && bytes.first().copied().is_some_and(alnum)
        && bytes.last().copied().is_some_and(alnum)
        && bytes.iter().all(|&b| alnum(b) || b == b'-' || b == b'.')
}

/// `s` cut to at most `max` bytes on a character boundary, with `…` when cut.
pub(super) fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests;
