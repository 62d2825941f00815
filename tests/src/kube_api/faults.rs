//! Faults injected into matching requests.

use std::time::Duration;

use http::Method;

/// Makes the next `times` requests that match `method` and `path_contains` misbehave.
#[derive(Debug, Clone)]
pub struct Fault {
    /// Only this method matches; `None` matches every method.
    pub method: Option<Method>,
    /// A substring of the request path (without query).
    pub path_contains: String,
    /// How many matching requests the fault affects before it is spent.
    pub times: usize,
    pub action: FaultAction,
}

/// What a fault does to a matching request.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultAction {
    /// Answer with this code and the real server's body for it
    /// (401, 403, 404, 429 with `Retry-After`, 500, 503; others get a plain `Status`).
    Status(u16),
    /// Wait, then serve the request normally.
    Delay(Duration),
    /// Never answer.
    Hang,
}

impl Fault {
    /// A fault for every method.
    pub fn new(path_contains: &str, times: usize, action: FaultAction) -> Self {
        Fault {
            method: None,
            path_contains: path_contains.to_owned(),
            times,
            action,
        }
    }

    /// Restricts the fault to one method.
    pub fn on(mut self, method: Method) -> Self {
        self.method = Some(method);
        self
    }

    fn matches(&self, method: &Method, path: &str) -> bool {
        self.times > 0
            && self.method.as_ref().is_none_or(|m| m == method)
            && path.contains(&self.path_contains)
    }
}

/// The armed faults, in injection order.
#[derive(Debug, Default)]
pub struct Faults(Vec<Fault>);

impl Faults {
    /// Arms a fault.
    pub fn push(&mut self, fault: Fault) {
        self.0.push(fault);
    }

    /// Consumes one use of the first fault matching the request and returns its action.
    pub fn take(&mut self, method: &Method, path: &str) -> Option<FaultAction> {
        let fault = self.0.iter_mut().find(|f| f.matches(method, path))?;
        fault.times -= 1;
        let action = fault.action.clone();
        self.0.retain(|f| f.times > 0);
        Some(action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_is_spent_after_times_matches() {
        let mut faults = Faults::default();
        faults.push(Fault::new("/jobs/", 2, FaultAction::Status(500)));
        assert_eq!(
            faults.take(&Method::GET, "/apis/batch/v1/namespaces/a/jobs/b"),
            Some(FaultAction::Status(500))
        );
        assert_eq!(
            faults.take(&Method::GET, "/apis/batch/v1/namespaces/a/jobs/b"),
            Some(FaultAction::Status(500))
        );
        assert_eq!(
            faults.take(&Method::GET, "/apis/batch/v1/namespaces/a/jobs/b"),
            None
        );
    }

    #[test]
    fn a_fault_matches_only_its_method_and_path() {
        let mut faults = Faults::default();
        faults.push(Fault::new("/status", 1, FaultAction::Hang).on(Method::PATCH));
        assert_eq!(faults.take(&Method::GET, "/x/status"), None);
        assert_eq!(faults.take(&Method::PATCH, "/x"), None);
        assert_eq!(
            faults.take(&Method::PATCH, "/x/status"),
            Some(FaultAction::Hang)
        );
    }
}
