//! A private network namespace for a program that binds fixed ports on all interfaces (the
//! framework binds `:8080` and `:9090` with no flag to move them, `shared/real-systems/README.md`),
//! so that any number of copies run side by side on one machine.
//!
//! [`PrivateNet::command`] wraps a program as `unshare --net`: inside, `lo` is brought up and
//! every host loopback port listed in `reach` is served on the same port of the namespace's own
//! loopback by `socat`, which forwards each connection over a unix socket in the private
//! directory to a `socat` on the host side that connects to the real port. So URLs such as
//! `http://127.0.0.1:<kit port>` work unchanged inside. In the other direction every port listed
//! in `expose` (e.g. the health port) gets a unix socket in the directory
//! ([`PrivateNet::exposed_socket`]) whose connections reach that port inside; [`http_get`] speaks
//! HTTP/1.0 over it. Unix sockets live in the file system, which both sides share.
//!
//! The host-side forwarders, the namespace and the program are one process group (start the
//! command with [`crate::real::process::Daemon`]): stopping the group removes them all, and the
//! namespace disappears with its last process. Needs root, `unshare`, `ip` and `socat`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A private network namespace plan: which host ports it reaches and which of its ports the host
/// reaches, with the unix sockets in `dir`.
#[derive(Debug, Clone)]
pub struct PrivateNet {
    dir: PathBuf,
    reach: Vec<u16>,
    expose: Vec<u16>,
}

impl PrivateNet {
    /// A plan whose sockets live in `dir` (keep the path short: a unix socket path has at most
    /// 107 bytes).
    pub fn new(dir: &Path, reach: &[u16], expose: &[u16]) -> PrivateNet {
        let mut reach = reach.to_vec();
        reach.sort_unstable();
        reach.dedup();
        PrivateNet {
            dir: dir.to_owned(),
            reach,
            expose: expose.to_vec(),
        }
    }

    /// The host loopback ports reachable inside.
    pub fn reach(&self) -> &[u16] {
        &self.reach
    }

    /// The unix socket on the host whose connections reach `port` inside the namespace.
    pub fn exposed_socket(&self, port: u16) -> PathBuf {
        self.dir.join(format!("out-{port}.sock"))
    }

    fn reach_socket(&self, port: u16) -> PathBuf {
        self.dir.join(format!("in-{port}.sock"))
    }

    /// `program args…` run inside the namespace, with the forwarders around it. The program is
    /// exec'd by the inner shell, so it receives the group's signals directly.
    pub fn command(&self, program: &Path, args: &[String]) -> Command {
        let q = |p: &Path| shell_quote(&p.to_string_lossy());
        let mut host = String::new();
        for port in &self.reach {
            host.push_str(&format!(
                "socat UNIX-LISTEN:{},fork,unlink-early,mode=600 TCP:127.0.0.1:{port} &\n",
                q(&self.reach_socket(*port))
            ));
        }
        let mut inner = String::from("ip link set lo up || exit 97\n");
        for port in &self.reach {
            inner.push_str(&format!(
                "socat TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:{} &\n",
                q(&self.reach_socket(*port))
            ));
        }
        for port in &self.expose {
            inner.push_str(&format!(
                "socat UNIX-LISTEN:{},fork,unlink-early,mode=600 TCP:127.0.0.1:{port} &\n",
                q(&self.exposed_socket(*port))
            ));
        }
        // Give the inner listeners a moment to bind before the program dials out.
        inner.push_str("sleep 0.2\nexec \"$@\"\n");
        let script = format!(
            "{host}exec unshare --net -- sh -c {} sh \"$@\"\n",
            shell_quote(&inner)
        );
        let mut command = Command::new("sh");
        command
            .args(["-c", &script, "private-net"])
            .arg(program)
            .args(args);
        command
    }
}

/// `s` as one single-quoted shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r#"'"'"'"#))
}

/// The port of an `http://`, `https://` or `amqp://` URL (its scheme's default when absent).
///
/// # Errors
/// When the URL has no host part or its port is not a number.
pub fn url_port(url: &str) -> anyhow::Result<u16> {
    let (scheme, rest) = url.split_once("://").context("no scheme")?;
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    match host_port.rsplit_once(':') {
        Some((_, port)) => port
            .parse()
            .with_context(|| format!("port of {url} is not a number")),
        None => Ok(match scheme {
            "https" => 443,
            "amqp" => 5672,
            "amqps" => 5671,
            _ => 80,
        }),
    }
}

/// `GET path` over HTTP/1.0 through the unix socket `socket`: the status code and body.
///
/// # Errors
/// When the socket cannot be reached or the answer is not HTTP.
pub async fn http_get(socket: &Path, path: &str) -> anyhow::Result<(u16, String)> {
    let exchange = async {
        let mut stream = tokio::net::UnixStream::connect(socket).await?;
        stream
            .write_all(format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").as_bytes())
            .await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        anyhow::Ok(String::from_utf8_lossy(&answer).into_owned())
    };
    let answer = tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .context("no answer within 5 s")??;
    let Some((head, body)) = answer.split_once("\r\n\r\n") else {
        bail!("not an HTTP answer: {answer:?}");
    };
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .with_context(|| format!("no status code in {head:?}"))?;
    Ok((code, body.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_come_from_the_kits_urls() {
        assert_eq!(url_port("http://127.0.0.1:24933").unwrap(), 24933);
        assert_eq!(
            url_port("amqp://guest:guest@127.0.0.1:25165/").unwrap(),
            25165
        );
        assert_eq!(url_port("https://127.0.0.1:21284/api?x=1").unwrap(), 21284);
        assert_eq!(url_port("https://example.com/").unwrap(), 443);
        assert!(url_port("127.0.0.1:80").is_err());
    }

    #[test]
    fn the_command_quotes_paths_and_execs_the_program() {
        let net = PrivateNet::new(Path::new("/tmp/it's"), &[20001, 20001, 20000], &[8080]);
        assert_eq!(net.reach(), &[20000, 20001]);
        let command = net.command(Path::new("/bin/true"), &["a b".to_owned()]);
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[0], "-c");
        assert!(args[1].contains("exec unshare --net"), "{}", args[1]);
        assert!(
            args[1].contains(r#"'/tmp/it'"'"'s/in-20000.sock'"#),
            "{}",
            args[1]
        );
        assert_eq!(&args[2..], ["private-net", "/bin/true", "a b"]);
        assert_eq!(
            net.exposed_socket(8080),
            Path::new("/tmp/it's/out-8080.sock")
        );
    }
}
