//! Server processes of the tests' own (a second Redis, Mosquitto or NATS with
//! credentials, Mosquitto over TLS) on free ports of 127.0.0.1, killed and reaped when
//! dropped.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;
use std::time::Duration;

/// A server process of the test's own (a second Redis, Mosquitto or NATS with
/// credentials) on a free port of 127.0.0.1; killed and reaped when dropped.
pub(super) struct Guarded {
    child: std::process::Child,
    pub(super) port: u16,
    _dir: Option<tempfile::TempDir>,
}

impl Guarded {
    /// Start `program` with the arguments `args(port)` gives, and wait until it listens.
    // The child is killed and reaped by `Drop` once it is returned inside `Self`.
    #[allow(clippy::zombie_processes)]
    async fn start(
        program: &str,
        args: impl FnOnce(u16) -> Vec<String>,
        dir: Option<tempfile::TempDir>,
    ) -> Self {
        let port = closed_port();
        let mut child = std::process::Command::new(program)
            .args(args(port))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} must be installed (.ci/run installs it): {e}"));
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Self {
                    child,
                    port,
                    _dir: dir,
                };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("{program} did not start on port {port}");
    }

    /// A Redis that requires `password`.
    pub(super) async fn redis(password: &str) -> Self {
        let password = password.to_string();
        Self::start(
            "redis-server",
            move |port| {
                [
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--requirepass",
                    &password,
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ]
                .map(String::from)
                .to_vec()
            },
            None,
        )
        .await
    }

    /// A Mosquitto speaking MQTT over TLS with a certificate for `localhost` and 127.0.0.1,
    /// signed by a CA made for it (`ca.crt` in its directory; see [`Self::dir`]).
    pub(super) async fn mosquitto_tls() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let openssl = |args: &[&str]| {
            let out = std::process::Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .expect("openssl must be installed");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "2",
            "-subj",
            "/CN=Tributary Test CA",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ]);
        std::fs::write(
            d.join("san.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ]);
        // Mosquitto reads its key after dropping to its own user; the key is a throwaway.
        use std::os::unix::fs::PermissionsExt;
        for (path, mode) in [(d.to_path_buf(), 0o755), (d.join("server.key"), 0o644)] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let conf = d.join("mosquitto.conf");
        let conf_arg = conf.display().to_string();
        let base = d.to_path_buf();
        Self::start(
            "mosquitto",
            move |port| {
                std::fs::write(
                    &conf,
                    format!(
                        "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\ncafile {0}/ca.crt\ncertfile {0}/server.crt\nkeyfile {0}/server.key\n",
                        base.display()
                    ),
                )
                .unwrap();
                vec!["-c".into(), conf_arg]
            },
            Some(dir),
        )
        .await
    }

    /// The directory of the server's files.
    pub(super) fn dir(&self) -> &std::path::Path {
        self._dir.as_ref().unwrap().path()
    }

    /// A Mosquitto that requires `user` and `password`.
    pub(super) async fn mosquitto(user: &str, password: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let passwords = dir.path().join("passwords");
        let made = std::process::Command::new("mosquitto_passwd")
            .args(["-b", "-c"])
            .arg(&passwords)
            .args([user, password])
            .status()
            .expect("mosquitto_passwd must be installed (.ci/run installs mosquitto)");
        assert!(made.success());
        let conf = dir.path().join("mosquitto.conf");
        let conf_arg = conf.display().to_string();
        Self::start(
            "mosquitto",
            move |port| {
                std::fs::write(
                    &conf,
                    format!(
                        "listener {port} 127.0.0.1\nallow_anonymous false\npassword_file {}\npersistence false\n",
                        passwords.display()
                    ),
                )
                .unwrap();
                vec!["-c".into(), conf_arg]
            },
            Some(dir),
        )
        .await
    }

    /// A NATS server that requires `user` and `password`.
    pub(super) async fn nats(user: &str, password: &str) -> Self {
        let (user, password) = (user.to_string(), password.to_string());
        Self::start(
            "nats-server",
            move |port| {
                [
                    "-a",
                    "127.0.0.1",
                    "-p",
                    &port.to_string(),
                    "--user",
                    &user,
                    "--pass",
                    &password,
                ]
                .map(String::from)
                .to_vec()
            },
            None,
        )
        .await
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
