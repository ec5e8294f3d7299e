//! Why a Pod's containers do not run, read from its status as `kubectl get pods` and `kubectl
//! describe` show it ([`troubles`]): an init or main container waiting in a state it will not
//! leave by itself (`CrashLoopBackOff`, `ImagePullBackOff`, `CreateContainerConfigError`...),
//! one that exited non-zero (`Error`, `OOMKilled`), one that keeps restarting. Each
//! [`Trouble`] names the Pod, the container, the reason, the exit code, the restart count and
//! (once [`Trouble::logs`] is filled by the caller, which reads them) the container's last log
//! lines; [`Trouble::say`] writes it for a step's message, bounded and with the Instance's
//! `writeOnly` values masked.

use serde_json::Value;

/// Waiting reasons that only change when something outside the Pod does: kubelet's
/// back-offs and refusals.
const STUCK: &[&str] = &[
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "PreStartHookError",
    "PostStartHookError",
];

/// Most log lines named per container.
pub const LOG_LINES: i64 = 5;
/// Most bytes of log read per container.
pub const LOG_BYTES: i64 = 2048;
/// Longest log line kept (characters).
const LINE_CHARS: usize = 200;
/// Most troubles named in one message.
pub const MAX_TROUBLES: usize = 3;

/// A container of a Pod that fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trouble {
    /// The Pod.
    pub pod: String,
    /// The container.
    pub container: String,
    /// An init container.
    pub init: bool,
    /// As `kubectl get pods` says it: `Init:CrashLoopBackOff`, `OOMKilled`, `Error`...
    pub reason: String,
    /// The exit code of its last run that ended, if one ended.
    pub exit_code: Option<i64>,
    /// Why that run ended, when it is not `reason` (`OOMKilled` under `CrashLoopBackOff`).
    pub last_reason: Option<String>,
    /// Its restart count.
    pub restarts: i64,
    /// What kubelet says (an image pull's error, a missing ConfigMap...).
    pub message: Option<String>,
    /// Its last log lines, once read (bounded by [`LOG_LINES`] and [`LOG_BYTES`]).
    pub logs: Option<String>,
    /// The container has no run of its own yet (an image that cannot be pulled): no log to read.
    pub never_ran: bool,
}

impl Trouble {
    /// How many times it has failed: its restarts, and the failure it is in now.
    pub fn failures(&self) -> i64 {
        self.restarts + i64::from(self.exit_code.is_some_and(|c| c != 0))
    }

    /// One line for a step's message: `Pod p: init container init: Init:CrashLoopBackOff (exit
    /// code 4, failed 2 times): connecting to example.org ...: bad address`, `mask` applied to
    /// kubelet's message and the logs.
    pub fn say(&self, mask: &dyn Fn(&str) -> String) -> String {
        let what = if self.init {
            "init container"
        } else {
            "container"
        };
        let mut facts = Vec::new();
        if let Some(r) = &self.last_reason {
            facts.push(format!("last run {r}"));
        }
        if let Some(c) = self.exit_code {
            facts.push(format!("exit code {c}"));
        }
        facts.push(match self.failures() {
            1 => "failed once".to_string(),
            n if n > 1 => format!("failed {n} times"),
            _ => format!("{} restarts", self.restarts),
        });
        let mut out = format!(
            "Pod {}: {what} {}: {} ({})",
            self.pod,
            self.container,
            self.reason,
            facts.join(", ")
        );
        if let Some(m) = self.message.as_deref().filter(|m| !m.is_empty()) {
            out.push_str(&format!(": {}", mask(&bounded(m))));
        }
        if let Some(l) = self.logs.as_deref().filter(|l| !l.trim().is_empty()) {
            out.push_str(&format!("; last log lines: {}", mask(&bounded(l))));
        }
        out
    }
}

/// `text`'s last [`LOG_LINES`] lines, each cut at [`LINE_CHARS`] characters, joined with ` | `.
fn bounded(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let keep = usize::try_from(LOG_LINES).unwrap_or(5);
    lines[lines.len().saturating_sub(keep)..]
        .iter()
        .map(|l| {
            let l = l.trim_end();
            match l.char_indices().nth(LINE_CHARS) {
                Some((at, _)) => format!("{}…", &l[..at]),
                None => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The failing containers of `pod` (init containers first, in order), from its status.
pub fn troubles(pod: &Value) -> Vec<Trouble> {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut out = Vec::new();
    for (field, init) in [
        ("initContainerStatuses", true),
        ("containerStatuses", false),
    ] {
        let statuses = pod
            .pointer(&format!("/status/{field}"))
            .and_then(Value::as_array);
        for s in statuses.into_iter().flatten() {
            if let Some(t) = trouble(name, s, init) {
                out.push(t);
            }
        }
    }
    out
}

fn text(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// One container's status as a [`Trouble`], when it is one.
fn trouble(pod: &str, s: &Value, init: bool) -> Option<Trouble> {
    let restarts = s.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
    let prefix = if init { "Init:" } else { "" };
    let last_code = s
        .pointer("/lastState/terminated/exitCode")
        .and_then(Value::as_i64);
    let mut t = Trouble {
        pod: pod.into(),
        container: text(s, "/name").unwrap_or_default(),
        init,
        reason: String::new(),
        exit_code: None,
        last_reason: None,
        restarts,
        message: None,
        logs: None,
        never_ran: false,
    };
    if let Some(reason) = text(s, "/state/waiting/reason") {
        if !STUCK.contains(&reason.as_str()) {
            return None;
        }
        t.reason = format!("{prefix}{reason}");
        // A crash loop's message only repeats the reason, with the back-off and the Pod's uid.
        if reason != "CrashLoopBackOff" {
            t.message = text(s, "/state/waiting/message");
        }
        t.exit_code = last_code;
        t.last_reason = text(s, "/lastState/terminated/reason").filter(|r| r != "Error");
        t.never_ran = last_code.is_none();
        return Some(t);
    }
    if let Some(code) = s
        .pointer("/state/terminated/exitCode")
        .and_then(Value::as_i64)
    {
        if code == 0 {
            return None;
        }
        let reason = text(s, "/state/terminated/reason").unwrap_or_else(|| "Error".into());
        t.reason = format!("{prefix}{reason}");
        t.exit_code = Some(code);
        t.message = text(s, "/state/terminated/message");
        return Some(t);
    }
    // Running again after runs that failed: named, so a wait says it is a crash loop.
    match last_code {
        Some(code) if code != 0 && restarts > 0 => {
            t.reason = format!(
                "{prefix}{}",
                text(s, "/lastState/terminated/reason").unwrap_or_else(|| "Error".into())
            );
            t.reason.push_str(", restarted");
            t.exit_code = Some(code);
            // The failure is over: it is counted in the restarts already.
            t.restarts = restarts - 1;
            Some(t)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(init: Value, main: Value) -> Value {
        json!({"metadata": {"name": "p"},
            "status": {"initContainerStatuses": init, "containerStatuses": main}})
    }

    #[test]
    fn an_init_container_in_a_crash_loop_is_named_with_its_exit_code_and_failures() {
        let p = pod(
            json!([{"name": "init", "restartCount": 1,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s restarting failed container=init"}},
                "lastState": {"terminated": {"exitCode": 4, "reason": "Error"}}}]),
            json!([{"name": "waiter", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}]),
        );
        let found = troubles(&p);
        assert_eq!(found.len(), 1, "{found:?}");
        let t = &found[0];
        assert_eq!(
            (t.reason.as_str(), t.exit_code, t.failures()),
            ("Init:CrashLoopBackOff", Some(4), 2)
        );
        let mut t = t.clone();
        t.logs = Some(
            "Connecting to cowsay.morecode.org\nwget: bad address 'cowsay.morecode.org'\n".into(),
        );
        assert_eq!(
            t.say(&|s| s.to_string()),
            "Pod p: init container init: Init:CrashLoopBackOff (exit code 4, failed 2 times); last log lines: Connecting to cowsay.morecode.org | wget: bad address 'cowsay.morecode.org'"
        );
    }

    #[test]
    fn a_failed_run_an_oom_kill_and_an_image_that_cannot_be_pulled() {
        let p = pod(
            json!([{"name": "init", "restartCount": 0,
                "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]),
            json!([
                {"name": "app", "restartCount": 3,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}},
                {"name": "side", "restartCount": 0,
                    "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"nope:1\""}}},
                {"name": "ok", "restartCount": 0, "state": {"running": {}}},
                {"name": "done", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
                {"name": "flaky", "restartCount": 2, "state": {"running": {}},
                    "lastState": {"terminated": {"exitCode": 2, "reason": "Error"}}},
            ]),
        );
        let said: Vec<String> = troubles(&p)
            .iter()
            .map(|t| t.say(&|s| s.to_string()))
            .collect();
        assert_eq!(
            said,
            [
                "Pod p: init container init: Init:Error (exit code 1, failed once)",
                "Pod p: container app: CrashLoopBackOff (last run OOMKilled, exit code 137, failed 4 times)",
                "Pod p: container side: ImagePullBackOff (0 restarts): Back-off pulling image \"nope:1\"",
                "Pod p: container flaky: Error, restarted (exit code 2, failed 2 times)",
            ]
        );
        assert!(troubles(&p)[2].never_ran);
    }

    #[test]
    fn logs_are_bounded_and_masked() {
        let t = Trouble {
            pod: "p".into(),
            container: "c".into(),
            init: false,
            reason: "Error".into(),
            exit_code: Some(1),
            last_reason: None,
            restarts: 0,
            message: None,
            logs: Some(format!(
                "one\ntwo\nthree\nfour\nfive\nsix: password=hunter22\n{}\n",
                "x".repeat(500)
            )),
            never_ran: false,
        };
        let said = t.say(&|s| s.replace("hunter22", "(secret)"));
        assert!(!said.contains("two") && said.contains("three"), "{said}");
        assert!(said.contains("password=(secret)") && !said.contains("hunter22"));
        assert!(
            said.contains(&format!("{}…", "x".repeat(200))) && said.len() < 400,
            "{said}"
        );
    }

    #[test]
    fn a_pod_without_statuses_or_only_starting_has_none() {
        assert!(troubles(&json!({"metadata": {"name": "p"}})).is_empty());
        let starting = pod(
            json!([{"name": "init", "state": {"running": {}}}]),
            json!([{"name": "app", "state": {"waiting": {"reason": "ContainerCreating"}}}]),
        );
        assert!(troubles(&starting).is_empty());
    }
}
