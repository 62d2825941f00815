#![allow(clippy::unwrap_used)]

use base64::Engine as _;
use proptest::prelude::*;

use super::*;
use crate::pulse::nodes::testing::request_pem;

const NODE: &str = "prod-eu-1-worker-ignition-1";
const BOOTSTRAPPER: &str =
    "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn fields<'a>(signer: &'a str, username: &'a str, request: &'a str) -> CsrFields<'a> {
    CsrFields {
        name: "csr-7xq2p",
        created: None,
        signer_name: signer,
        username,
        request_base64: request,
        state: CsrState::Pending,
    }
}

#[test]
fn only_the_two_kubelet_signers_are_kubelet_signers() {
    assert_eq!(
        KubeletSigner::from_name("kubernetes.io/kube-apiserver-client-kubelet"),
        Some(KubeletSigner::Client)
    );
    assert_eq!(
        KubeletSigner::from_name("kubernetes.io/kubelet-serving"),
        Some(KubeletSigner::Serving)
    );
    for other in [
        "kubernetes.io/kube-apiserver-client",
        "kubernetes.io/legacy-unknown",
        "example.com/kubelet-serving",
        "",
    ] {
        assert_eq!(KubeletSigner::from_name(other), None, "{other}");
    }
    assert_eq!(KubeletSigner::Serving.name(), KUBELET_SERVING_SIGNER);
}

#[test]
fn state_comes_from_the_conditions() {
    let state = |c: &[(&str, &str)]| CsrState::from_conditions(c.iter().copied());
    assert_eq!(state(&[]), CsrState::Pending);
    assert_eq!(state(&[("Approved", "True")]), CsrState::Approved);
    assert_eq!(state(&[("Denied", "True")]), CsrState::Denied);
    assert_eq!(state(&[("Failed", "True")]), CsrState::Failed);
    // Approved, then the signer failed: ended, not issued.
    assert_eq!(
        state(&[("Approved", "True"), ("Failed", "True")]),
        CsrState::Failed
    );
    assert_eq!(
        state(&[("Approved", "True"), ("Denied", "True")]),
        CsrState::Denied
    );
    // Objects from before conditions had a status: the condition counts.
    assert_eq!(state(&[("Approved", "")]), CsrState::Approved);
    // A condition that is not true does not end the request.
    assert_eq!(state(&[("Approved", "False")]), CsrState::Pending);
    assert_eq!(state(&[("Failed", "Unknown")]), CsrState::Pending);
    assert_eq!(state(&[("SomethingElse", "True")]), CsrState::Pending);
}

#[test]
fn the_node_is_read_from_a_real_kubelet_request() {
    let pem = request_pem(&format!("system:node:{NODE}"));
    assert!(pem.starts_with("-----BEGIN CERTIFICATE REQUEST-----"));
    assert_eq!(node_from_request_pem(pem.as_bytes()), Ok(NODE.to_owned()));
    assert_eq!(
        node_from_request_base64(&b64(pem.as_bytes())),
        Ok(NODE.to_owned())
    );
    // Line-wrapped base64 with a trailing newline, as some tools write it.
    let wrapped = format!("{}\n", b64(pem.as_bytes()));
    assert_eq!(node_from_request_base64(&wrapped), Ok(NODE.to_owned()));
}

#[test]
fn unreadable_requests_say_why() {
    assert_eq!(
        node_from_request_base64("not base64 at all!"),
        Err(RequestError::Base64)
    );
    assert!(matches!(
        node_from_request_base64(""),
        Err(RequestError::Pem(_))
    ));
    assert!(matches!(
        node_from_request_pem(b"hello"),
        Err(RequestError::Pem(_))
    ));
    let certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    assert_eq!(
        node_from_request_pem(certificate.as_bytes()),
        Err(RequestError::Label("CERTIFICATE".to_owned()))
    );
    let garbage = format!(
        "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
        b64(b"\x30\x82\x01\x00 this is not DER")
    );
    assert!(matches!(
        node_from_request_pem(garbage.as_bytes()),
        Err(RequestError::Der(_))
    ));
    // A request whose subject has no common name.
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:nodes");
    let no_cn = params
        .serialize_request(&rcgen::KeyPair::generate().unwrap())
        .unwrap()
        .pem()
        .unwrap();
    assert_eq!(
        node_from_request_pem(no_cn.as_bytes()),
        Err(RequestError::NoCommonName)
    );
    for cn in [
        NODE,
        "system:node:",
        "system:node:Prod-Worker",
        "system:node:worker_1",
        "system:node:-worker",
        "system:nodes:worker",
    ] {
        assert_eq!(
            node_from_request_pem(request_pem(cn).as_bytes()),
            Err(RequestError::NotANode),
            "{cn}"
        );
    }
}

#[test]
fn node_names_follow_the_dns_subdomain_rule() {
    assert!(is_node_name(NODE));
    assert!(is_node_name("10.0.1.23"));
    assert!(is_node_name("a"));
    assert!(is_node_name(&"a".repeat(253)));
    assert!(!is_node_name(&"a".repeat(254)));
    for bad in ["", "A", "a_b", "a b", "-a", "a-", ".a", "a.", "ä"] {
        assert!(!is_node_name(bad), "{bad:?}");
    }
}

#[test]
fn a_pending_bootstrap_request_names_the_node_from_its_subject() {
    let request = b64(request_pem(&format!("system:node:{NODE}")).as_bytes());
    let s = CsrSummary::new(fields(KUBELET_CLIENT_SIGNER, BOOTSTRAPPER, &request));
    assert_eq!(s.signer, Some(KubeletSigner::Client));
    assert_eq!(s.state, CsrState::Pending);
    assert_eq!(s.node.as_deref(), Some(NODE));
    assert_eq!(s.requester, BOOTSTRAPPER);
}

#[test]
fn an_unreadable_request_falls_back_to_a_node_requester_then_to_none() {
    let node_user = format!("system:node:{NODE}");
    let s = CsrSummary::new(fields(KUBELET_SERVING_SIGNER, &node_user, "@@@"));
    assert_eq!(
        s.node.as_deref(),
        Some(NODE),
        "a renewal or serving request"
    );
    let s = CsrSummary::new(fields(KUBELET_CLIENT_SIGNER, BOOTSTRAPPER, "@@@"));
    assert_eq!(s.node, None);
    assert_eq!(s.requester, BOOTSTRAPPER);
    let s = CsrSummary::new(fields(KUBELET_CLIENT_SIGNER, "", ""));
    assert_eq!((s.node, s.requester.as_str()), (None, ""));
}

#[test]
fn requests_that_cannot_matter_keep_no_node_and_no_requester() {
    let request = b64(request_pem(&format!("system:node:{NODE}")).as_bytes());
    let mut f = fields(KUBELET_CLIENT_SIGNER, BOOTSTRAPPER, &request);
    f.state = CsrState::Approved;
    let s = CsrSummary::new(f);
    assert_eq!((s.node, s.requester.as_str()), (None, ""));
    let s = CsrSummary::new(fields(
        "kubernetes.io/kube-apiserver-client",
        BOOTSTRAPPER,
        &request,
    ));
    assert_eq!(s.signer, None);
    assert_eq!((s.node, s.requester.as_str()), (None, ""));
}

#[test]
fn a_long_requester_is_cut_on_a_character_boundary() {
    let long = format!("oidc:{}", "é".repeat(300));
    let s = CsrSummary::new(fields(KUBELET_CLIENT_SIGNER, &long, ""));
    assert!(s.requester.len() <= MAX_REQUESTER_LEN + '…'.len_utf8());
    assert!(s.requester.ends_with('…'));
    assert!(long.starts_with(s.requester.trim_end_matches('…')));
}

proptest! {
    /// Whatever `spec.request` holds, reading it never panics; bytes that are not a request
    /// give an error, never a node.
    #[test]
    fn arbitrary_requests_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(node_from_request_pem(&bytes).is_err());
        prop_assert!(node_from_request_base64(&b64(&bytes)).is_err());
        let text = String::from_utf8_lossy(&bytes);
        prop_assert!(node_from_request_base64(&text).is_err());
    }

    /// A PEM frame around arbitrary bytes: the DER parser refuses it without panicking.
    #[test]
    fn arbitrary_der_in_a_request_frame_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let pem = format!(
            "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
            b64(&bytes)
        );
        prop_assert!(node_from_request_pem(pem.as_bytes()).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Every valid node name survives the trip through a real request.
    #[test]
    fn node_names_round_trip_through_a_real_request(name in "[a-z0-9]([-a-z0-9.]{0,60}[a-z0-9])?") {
        let pem = request_pem(&format!("system:node:{name}"));
        prop_assert_eq!(node_from_request_pem(pem.as_bytes()), Ok(name));
    }
}
