//! The `admission.k8s.io/v1` AdmissionReview: the request the API server sends (only the fields the
//! webhook reads) and the response it answers with, and the checks that tell a review from anything else.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The API version of every review the webhook reads and writes.
pub const API_VERSION: &str = "admission.k8s.io/v1";

/// The kind of every review.
pub const KIND: &str = "AdmissionReview";

/// An AdmissionReview as the API server sends it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReview {
    /// Must be [`API_VERSION`].
    #[serde(default)]
    pub api_version: String,
    /// Must be [`KIND`].
    #[serde(default)]
    pub kind: String,
    /// The request; a review without one is refused.
    pub request: Option<AdmissionRequest>,
}

/// What the API server asks about.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// The request's identifier, echoed in the response.
    pub uid: String,
    /// The kind of the object (`{group, version, kind}`).
    #[serde(default)]
    pub kind: GroupVersionKind,
    /// The subresource (`status`, `scale`...), empty for the object itself.
    #[serde(default)]
    pub sub_resource: Option<String>,
    /// The object's name (empty when the server generates it).
    #[serde(default)]
    pub name: Option<String>,
    /// The object's namespace (empty for cluster-scoped objects).
    #[serde(default)]
    pub namespace: Option<String>,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    #[serde(default)]
    pub operation: String,
    /// The object as it would be stored; absent for `DELETE`.
    #[serde(default)]
    pub object: Option<Value>,
    /// Whether the API server will not persist the result.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

/// A group, version and kind.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct GroupVersionKind {
    /// The API group (empty for the core group).
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
}

/// The review the webhook answers with.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewResponse {
    /// [`API_VERSION`].
    pub api_version: &'static str,
    /// [`KIND`].
    pub kind: &'static str,
    /// The answer.
    pub response: AdmissionResponse,
}

/// Whether the object is admitted, and how it is changed.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's identifier.
    pub uid: String,
    /// Whether the object is admitted.
    pub allowed: bool,
    /// Why it is refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Warnings shown to the client (kubectl prints them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// `JSONPatch` when [`Self::patch`] is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<&'static str>,
    /// The RFC 6902 patch, base64-encoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
}

/// A `metav1.Status` of a refusal.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Status {
    /// The HTTP code the client sees (403).
    pub code: u16,
    /// The findings, in one message.
    pub message: String,
}

/// Why a body is not a review the webhook can answer: the server answers HTTP 400 with this message,
/// and the API server applies the webhook's `failurePolicy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads a review from a body: UTF-8 JSON within serde_json's nesting limit, of [`API_VERSION`] and
/// [`KIND`], with a request that has a `uid`.
pub fn parse(body: &[u8]) -> Result<AdmissionRequest, Malformed> {
    let text = std::str::from_utf8(body).map_err(|error| {
        Malformed(format!("the body is not UTF-8 (invalid byte at offset {})", error.valid_up_to()))
    })?;
    let review: AdmissionReview = serde_json::from_str(text)
        .map_err(|error| Malformed(format!("the body is not an AdmissionReview: {error}")))?;
    if review.api_version != API_VERSION {
        return Err(Malformed(format!(
            "apiVersion `{}` is not supported: the webhook reads `{API_VERSION}` (admissionReviewVersions: [\"v1\"])",
            review.api_version
        )));
    }
    if review.kind != KIND {
        return Err(Malformed(format!("kind `{}` is not `{KIND}`", review.kind)));
    }
    let request = review.request.ok_or_else(|| Malformed("the AdmissionReview has no `request`".to_string()))?;
    if request.uid.is_empty() {
        return Err(Malformed("the request has no `uid`".to_string()));
    }
    Ok(request)
}

impl ReviewResponse {
    /// The review that carries `response`.
    pub fn new(response: AdmissionResponse) -> Self {
        ReviewResponse { api_version: API_VERSION, kind: KIND, response }
    }

    /// The review as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec())
    }
}

impl AdmissionResponse {
    /// Admits the object of request `uid` unchanged.
    pub fn allow(uid: &str) -> Self {
        AdmissionResponse { uid: uid.to_string(), allowed: true, ..AdmissionResponse::default() }
    }

    /// Refuses the object of request `uid`, with `message` (HTTP 403 to the client).
    pub fn deny(uid: &str, message: String) -> Self {
        AdmissionResponse {
            uid: uid.to_string(),
            allowed: false,
            status: Some(Status { code: 403, message }),
            ..AdmissionResponse::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(api_version: &str, kind: &str) -> String {
        format!(
            r#"{{"apiVersion":"{api_version}","kind":"{kind}","request":{{"uid":"u-1","kind":{{"group":"","version":"v1","kind":"Pod"}},"operation":"CREATE","namespace":"ml","object":{{"kind":"Pod"}},"dryRun":true}}}}"#
        )
    }

    #[test]
    fn a_v1_review_is_read() {
        let request = parse(review(API_VERSION, KIND).as_bytes()).unwrap();
        assert_eq!(request.uid, "u-1");
        assert_eq!(request.kind.kind, "Pod");
        assert_eq!(request.namespace.as_deref(), Some("ml"));
        assert_eq!(request.dry_run, Some(true));
        assert!(request.object.is_some());
    }

    #[test]
    fn other_versions_kinds_and_bodies_are_malformed() {
        let v1beta1 = parse(review("admission.k8s.io/v1beta1", KIND).as_bytes()).unwrap_err();
        assert!(v1beta1.0.contains("v1beta1"), "{v1beta1}");
        let kind = parse(review(API_VERSION, "Pod").as_bytes()).unwrap_err();
        assert!(kind.0.contains("`Pod`"), "{kind}");
        assert!(parse(b"\xff\xfe").unwrap_err().0.contains("not UTF-8"));
        assert!(parse(b"not json").unwrap_err().0.contains("not an AdmissionReview"));
        let no_request = format!(r#"{{"apiVersion":"{API_VERSION}","kind":"{KIND}"}}"#);
        assert!(parse(no_request.as_bytes()).unwrap_err().0.contains("no `request`"));
    }

    #[test]
    fn deep_nesting_stops_at_the_recursion_limit() {
        let deep = format!(
            r#"{{"apiVersion":"{API_VERSION}","kind":"{KIND}","request":{{"uid":"u","object":{}{}}}}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        assert!(parse(deep.as_bytes()).unwrap_err().0.contains("recursion limit"));
    }

    #[test]
    fn a_refusal_serialises_as_the_api_server_reads_it() {
        let json = ReviewResponse::new(AdmissionResponse::deny("u-1", "CAP202: no caps".into())).to_json();
        let value: Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value["apiVersion"], API_VERSION);
        assert_eq!(value["response"]["uid"], "u-1");
        assert_eq!(value["response"]["allowed"], false);
        assert_eq!(value["response"]["status"]["code"], 403);
        assert!(value["response"].get("patch").is_none());
        assert!(value["response"].get("warnings").is_none());
    }
}
