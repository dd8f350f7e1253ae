//! `tributary serve` bounds every connection and its own shutdown: a client that sends
//! its headers byte by byte is closed, SIGTERM lets a request in flight finish, and
//! SIGTERM with an endless query in flight exits within the grace period. (What requests may reach and spend: crates/server/tests/api/boundary.rs.)

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::server::{Server, TOKEN};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn host_port(url: &str) -> String {
    url.trim_start_matches("http://").to_string()
}

#[test]
fn a_slow_header_client_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("catalog"), dir.path().join("log"));
    let mut stream = TcpStream::connect(host_port(&server.url)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let started = Instant::now();
    let request = format!(
        "GET /api/v1/ping HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nX-Slow: "
    );
    let mut closed = false;
    // One byte every 200 ms, for as long as the server keeps the connection.
    for byte in request.bytes().chain(std::iter::repeat(b'a')) {
        if stream.write_all(&[byte]).is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 256];
        match stream.read(&mut buf) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(_) => {} // A 408 answer before the close is fine.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => {
                closed = true;
                break;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the connection was still open after 15 s"
        );
    }
    assert!(closed);
    // The header timeout is 5 s.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() >= Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn sigterm_with_a_slow_query_exits_within_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start_with(
        &dir.path().join("catalog"),
        dir.path().join("log"),
        &["--shutdown-grace", "2s"],
    );
    let body = r#"{"sql": "CREATE TABLE slow WITH (connector = 'impulse', event_rate = 1000000000, message_count = 1000000000); SELECT count(*) FROM slow"}"#;
    let mut stream = TcpStream::connect(host_port(&server.url)).unwrap();
    write!(
        stream,
        "POST /api/v1/sql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    server.terminate();
    let status = server.wait_exit();
    let took = started.elapsed();
    assert_eq!(status, Some(0), "{}", server.log());
    assert!(
        took < Duration::from_secs(4),
        "exit took {took:?}: {}",
        server.log()
    );
    assert!(server.log().contains("cancelled"), "{}", server.log());
}

#[test]
fn sigterm_lets_a_request_in_flight_finish() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start_with(
        &dir.path().join("catalog"),
        dir.path().join("log"),
        &["--shutdown-grace", "20s"],
    );
    // Ten rows at five a second: the answer takes two seconds.
    let body = r#"{"sql": "CREATE TABLE ticks WITH (connector = 'impulse', event_rate = 5, message_count = 10); SELECT counter FROM ticks"}"#;
    let url = host_port(&server.url);
    let started = Instant::now();
    let client = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(url).unwrap();
        request(&mut stream, "POST", "/api/v1/sql", body)
    });
    std::thread::sleep(Duration::from_millis(500));
    server.terminate();
    let answer = client.join().unwrap();
    let status = server.wait_exit();
    assert_eq!(status, Some(0), "{}", server.log());
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // Every row, not a cut-short answer.
    assert!(
        answer.contains("\"rows\":[[0],[1],[2],[3],[4],[5],[6],[7],[8],[9]]"),
        "{answer}"
    );
    // The request was in flight when the signal came: its rows took their time.
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert!(!server.log().contains("cancelled"), "{}", server.log());
}

/// A request over a fresh connection, the connection kept open; the answer's head and
/// body as text.
fn request(stream: &mut TcpStream, method: &str, path: &str, body: &str) -> String {
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 65536];
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let started = Instant::now();
    // Read until the answer has stopped coming (it is small) or a minute has passed.
    while started.elapsed() < Duration::from_secs(60) {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(_) if !answer.is_empty() => break,
            Err(_) => {}
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn an_idle_keep_alive_connection_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("catalog"), dir.path().join("log"));
    let mut stream = TcpStream::connect(host_port(&server.url)).unwrap();
    let answer = request(&mut stream, "GET", "/api/v1/ping", "");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // Then nothing: the server closes the connection after the header timeout.
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 16];
    let n = stream.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "the server sent more instead of closing");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

/// The process's peak resident memory, in bytes (Linux).
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[test]
fn a_query_over_its_memory_fails_and_the_process_stays_under_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        &dir.path().join("catalog"),
        dir.path().join("log"),
        &["--query-memory", "64MB", "--total-query-memory", "512MB"],
    );
    let mut stream = TcpStream::connect(host_port(&server.url)).unwrap();
    let body = r#"{"sql": "CREATE TABLE fast WITH (connector = 'impulse', event_rate = 1000000000, message_count = 100000000); SELECT length(string_agg(repeat('x', 1000), ',')) FROM fast"}"#;
    let answer = request(&mut stream, "POST", "/api/v1/sql", body);
    assert!(answer.contains("--query-memory"), "{answer}");
    let peak = peak_memory(server.pid().unwrap());
    assert!(peak < 512 << 20, "peak {} MiB", peak >> 20);
    // The server carries on.
    let mut again = TcpStream::connect(host_port(&server.url)).unwrap();
    assert!(request(&mut again, "GET", "/api/v1/ping", "").starts_with("HTTP/1.1 200"));
}
