//! Kubelet certificate signing requests as a kubelet makes them, for the end-to-end tests and
//! `bench-nodes`: a real PKCS#10 request (rcgen, a fresh P-256 key) for
//! `O=system:nodes, CN=system:node:<node>`, in the CertificateSigningRequest the API server
//! would hold.

use jiff::Timestamp;
use serde_json::Value;

pub use hypershift_adapter::pulse::nodes::csr::{KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER};
pub use hypershift_adapter::pulse::nodes::testing::BOOTSTRAPPER;

/// A PEM `CERTIFICATE REQUEST` with subject `O=system:nodes, CN=<common_name>`.
pub fn request_pem(common_name: &str) -> Result<String, rcgen::Error> {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:nodes");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    let key = rcgen::KeyPair::generate()?;
    params.serialize_request(&key)?.pem()
}

/// What a kubelet request says and where it stands.
#[derive(Debug, Clone)]
pub struct KubeletCsr<'a> {
    pub name: &'a str,
    pub created: Timestamp,
    pub signer: &'a str,
    /// `spec.username`: [`BOOTSTRAPPER`] for a joining node's first client request, else
    /// `system:node:<node>`.
    pub username: &'a str,
    /// The node its request names (`CN=system:node:<node>`).
    pub node: &'a str,
    /// `Approved`, `Denied`, `Failed`; none while pending.
    pub conditions: &'a [&'a str],
}

impl KubeletCsr<'_> {
    /// The CertificateSigningRequest as JSON, with a real request.
    pub fn object(&self) -> Result<Value, rcgen::Error> {
        let pem = request_pem(&format!("system:node:{}", self.node))?;
        let object = hypershift_adapter::pulse::nodes::testing::csr_object(
            self.name,
            self.created,
            self.signer,
            self.username,
            pem.as_bytes(),
            self.conditions,
        );
        Ok(serde_json::to_value(object).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_a_real_one_the_adapter_reads_the_node_from() {
        let csr = KubeletCsr {
            name: "csr-7xq2p",
            created: Timestamp::UNIX_EPOCH,
            signer: KUBELET_CLIENT_SIGNER,
            username: BOOTSTRAPPER,
            node: "prod-eu-1-worker-ignition-1",
            conditions: &[],
        };
        let object = csr.object().unwrap();
        assert_eq!(object["kind"], "CertificateSigningRequest");
        assert_eq!(object["spec"]["username"], BOOTSTRAPPER);
        let request = object["spec"]["request"].as_str().unwrap();
        assert_eq!(
            hypershift_adapter::pulse::nodes::csr::node_from_request_base64(request),
            Ok("prod-eu-1-worker-ignition-1".to_owned())
        );
    }
}
