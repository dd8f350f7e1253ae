//! A `tributary serve` process for tests: on a free loopback port, with a token.

#![allow(dead_code)] // Each test file uses what it needs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The token the servers accept.
pub const TOKEN: &str = "e2e-token-0123456789";

/// A `tributary serve` process on a free loopback port; stopped (SIGTERM) on drop.
pub struct Server {
    child: Option<Child>,
    pub url: String,
    log: PathBuf,
}

impl Server {
    /// Start the server on `catalog` and wait until it has announced its address.
    pub fn start(catalog: &Path, log: PathBuf) -> Self {
        Self::start_with(catalog, log, &[])
    }

    /// [`Server::start`] with more `serve` flags.
    pub fn start_with(catalog: &Path, log: PathBuf, flags: &[&str]) -> Self {
        Self::start_env(catalog, log, flags, &[])
    }

    /// [`Server::start_with`] with more environment variables (`RUST_LOG`, `{{ VAR }}`s).
    pub fn start_env(catalog: &Path, log: PathBuf, flags: &[&str], envs: &[(&str, &str)]) -> Self {
        let notice = catalog.join("tributary.server");
        let _ = std::fs::remove_file(&notice);
        let child = spawn(catalog.as_os_str(), "127.0.0.1:0", &log, flags, envs);
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            if let Ok(text) = std::fs::read_to_string(&notice)
                && let Some(url) = text.lines().next()
                && text.lines().count() >= 2
            {
                break url.to_string();
            }
            assert!(
                Instant::now() < deadline,
                "the server did not announce itself: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Self {
            child: Some(child),
            url,
            log,
        }
    }

    /// Start the server on a shared catalog (a `postgres://` URL, which records no
    /// address) and wait until it answers.
    pub fn start_shared(catalog: &str, log: PathBuf) -> Self {
        Self::start_shared_env(catalog, log, &[], &[])
    }

    /// [`Server::start_shared`] with more `serve` flags and environment variables.
    pub fn start_shared_env(
        catalog: &str,
        log: PathBuf,
        flags: &[&str],
        envs: &[(&str, &str)],
    ) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = spawn(
            catalog.as_ref(),
            &format!("127.0.0.1:{port}"),
            &log,
            flags,
            envs,
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the server did not start: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child: Some(child),
            url: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    /// Stop with SIGTERM, as a service manager would; the exit status.
    pub fn stop(&mut self) -> Option<i32> {
        self.terminate();
        self.wait_exit()
    }

    /// Send SIGTERM.
    pub fn terminate(&mut self) {
        if let Some(child) = &self.child {
            let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
            rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        }
    }

    /// Wait for the process to exit (30 s at most); its exit status.
    pub fn wait_exit(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the server did not stop on SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

fn spawn(
    catalog: &std::ffi::OsStr,
    bind: &str,
    log: &Path,
    flags: &[&str],
    envs: &[(&str, &str)],
) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .args(["--token", TOKEN, "serve", "--bind", bind])
        .args(flags)
        .env_remove("TRIBUTARY_CATALOG")
        .env_remove("TRIBUTARY_TOKENS")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
