//! The Pod status a kubelet writes (`pods/status`), built from its containers' states: the phase
//! (`restartPolicy: Never`), the kubelet's four conditions and one `containerStatuses` entry per
//! container.

use serde_json::{Value, json};

/// One container's state as the runtime reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Not started: `ContainerCreating`, or `CreateContainerConfigError` with the reason why.
    Waiting {
        reason: String,
        message: Option<String>,
    },
    Running {
        started_at: String,
    },
    Terminated(Terminated),
}

/// How a container ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terminated {
    pub exit_code: i32,
    /// `Completed`, `Error`, `OOMKilled` or `StartError`.
    pub reason: String,
    pub message: Option<String>,
    pub started_at: String,
    pub finished_at: String,
}

/// A container of the pod and its state.
#[derive(Debug, Clone)]
pub struct ContainerStatus {
    pub name: String,
    pub image: String,
    pub state: State,
    /// `<runtime>://<id>` once started (here the process id).
    pub container_id: Option<String>,
}

impl ContainerStatus {
    fn ready(&self) -> bool {
        matches!(self.state, State::Running { .. })
    }

    /// The entry as a strategic merge patch writes it: a key the state no longer has is `null`
    /// (removed), so a terminated container does not keep its `running` state or an old message.
    fn to_json(&self) -> Value {
        let mut state = json!({"waiting": null, "running": null, "terminated": null});
        match &self.state {
            State::Waiting { reason, message } => {
                state["waiting"] = json!({"reason": reason, "message": message});
            }
            State::Running { started_at } => state["running"] = json!({"startedAt": started_at}),
            State::Terminated(t) => {
                state["terminated"] = json!({
                    "exitCode": t.exit_code, "reason": t.reason, "message": t.message,
                    "startedAt": t.started_at, "finishedAt": t.finished_at,
                    "containerID": self.container_id,
                });
            }
        }
        let mut status = json!({
            "name": self.name, "image": self.image, "imageID": "",
            "ready": self.ready(), "started": self.ready(), "restartCount": 0, "state": state,
        });
        if let Some(id) = &self.container_id {
            status["containerID"] = json!(id);
        }
        status
    }
}

/// The phase of a `restartPolicy: Never` pod: `Pending` until a container started, `Running`
/// while one runs, then `Succeeded` when every container exited 0, else `Failed`.
pub fn phase(containers: &[ContainerStatus]) -> &'static str {
    let ended: Vec<&Terminated> = containers
        .iter()
        .filter_map(|c| match &c.state {
            State::Terminated(t) => Some(t),
            _ => None,
        })
        .collect();
    if ended.len() == containers.len() && !containers.is_empty() {
        if ended.iter().all(|t| t.exit_code == 0) {
            "Succeeded"
        } else {
            "Failed"
        }
    } else if containers
        .iter()
        .all(|c| matches!(c.state, State::Waiting { .. }))
    {
        "Pending"
    } else {
        "Running"
    }
}

/// The `status` the kubelet writes: phase, `startTime`, conditions (a condition keeps its
/// `lastTransitionTime` from `previous` while its status is unchanged) and container statuses.
pub fn pod_status(
    containers: &[ContainerStatus],
    start_time: &str,
    previous: &[Value],
    now: &str,
) -> Value {
    let phase = phase(containers);
    let unready: Vec<&str> = containers
        .iter()
        .filter(|c| !c.ready())
        .map(|c| c.name.as_str())
        .collect();
    let (ready, reason, message) = if phase == "Succeeded" || phase == "Failed" {
        (false, Some("PodCompleted"), None)
    } else if unready.is_empty() {
        (true, None, None)
    } else {
        let message = format!("containers with unready status: [{}]", unready.join(" "));
        (false, Some("ContainersNotReady"), Some(message))
    };
    let mut conditions = vec![
        condition("PodReadyToStartContainers", true, None, None),
        condition("Initialized", true, None, None),
        condition("Ready", ready, reason, message.clone()),
        condition("ContainersReady", ready, reason, message),
    ];
    for c in &mut conditions {
        let kept = previous
            .iter()
            .find(|p| p["type"] == c["type"] && p["status"] == c["status"])
            .and_then(|p| p.get("lastTransitionTime").cloned());
        c["lastTransitionTime"] = kept.unwrap_or_else(|| json!(now));
    }
    json!({
        "phase": phase,
        "startTime": start_time,
        "conditions": conditions,
        "containerStatuses": containers.iter().map(ContainerStatus::to_json).collect::<Vec<_>>(),
    })
}

/// A condition; an absent reason or message is `null`, so the patch removes an earlier one.
fn condition(kind: &str, ok: bool, reason: Option<&str>, message: Option<String>) -> Value {
    json!({
        "type": kind, "status": if ok { "True" } else { "False" },
        "reason": reason, "message": message, "lastProbeTime": null,
    })
}

/// Now as the API server stores times: RFC 3339, UTC, whole seconds.
pub fn now() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(name: &str, state: State) -> ContainerStatus {
        ContainerStatus {
            name: name.into(),
            image: format!("{name}:dev"),
            state,
            container_id: None,
        }
    }

    fn ended(code: i32, reason: &str) -> State {
        State::Terminated(Terminated {
            exit_code: code,
            reason: reason.into(),
            message: None,
            started_at: "t0".into(),
            finished_at: "t1".into(),
        })
    }

    fn running() -> State {
        State::Running {
            started_at: "t0".into(),
        }
    }

    #[test]
    fn phases_follow_restart_policy_never() {
        let waiting = State::Waiting {
            reason: "ContainerCreating".into(),
            message: None,
        };
        let pod =
            |a: State, b: State| vec![container("adapter", a), container("status-reporter", b)];
        assert_eq!(phase(&pod(waiting.clone(), waiting.clone())), "Pending");
        assert_eq!(phase(&pod(running(), waiting)), "Running");
        assert_eq!(phase(&pod(ended(1, "Error"), running())), "Running");
        assert_eq!(
            phase(&pod(ended(0, "Completed"), ended(0, "Completed"))),
            "Succeeded"
        );
        assert_eq!(
            phase(&pod(ended(137, "OOMKilled"), ended(0, "Completed"))),
            "Failed"
        );
    }

    #[test]
    fn conditions_name_unready_containers_and_keep_their_transition_time() {
        let containers = vec![
            container("adapter", ended(1, "Error")),
            container("status-reporter", running()),
        ];
        let first = pod_status(&containers, "t0", &[], "t1");
        let ready = &first["conditions"][2];
        assert_eq!(ready["type"], "Ready");
        assert_eq!(ready["status"], "False");
        assert_eq!(ready["reason"], "ContainersNotReady");
        assert_eq!(
            ready["message"],
            "containers with unready status: [adapter]"
        );
        let previous = first["conditions"].as_array().unwrap().clone();
        let again = pod_status(&containers, "t0", &previous, "t2");
        assert_eq!(again["conditions"][2]["lastTransitionTime"], "t1");
        let done = vec![
            container("adapter", ended(1, "Error")),
            container("status-reporter", ended(0, "Completed")),
        ];
        let last = pod_status(&done, "t0", &previous, "t3");
        assert_eq!(last["phase"], "Failed");
        assert_eq!(last["conditions"][2]["reason"], "PodCompleted");
        assert_eq!(
            last["conditions"][2].get("message"),
            Some(&Value::Null),
            "an explicit null: the patch removes the earlier message"
        );
        let state = &last["containerStatuses"][1]["state"];
        assert_eq!(state.get("running"), Some(&Value::Null));
        assert_eq!(
            (
                state["running"].clone(),
                state["terminated"]["exitCode"].clone()
            ),
            (Value::Null, json!(0))
        );
        assert_eq!(
            last["conditions"][2]["lastTransitionTime"], "t1",
            "still False"
        );
        assert_eq!(
            last["containerStatuses"][0]["state"]["terminated"]["exitCode"],
            1
        );
    }
}
