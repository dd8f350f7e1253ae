//! WebSocket tables against a server the tests start on 127.0.0.1: the handshake's
//! headers, the subscription messages, and a server that closes at once.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;
use axum::routing::get;

/// The message the WebSocket peer waits for before it sends. Subscription messages are
/// sensitive, so this value joins the process-wide known secrets: it must not be a word
/// that other tests' expected diagnostics contain ("subscribed" would be masked).
pub(crate) const WEBSOCKET_SUBSCRIPTION: &str = "subscribe feed 7f3a";

/// A WebSocket server on 127.0.0.1: `/feed` wants `Authorization: Bearer sesame` and,
/// after the text message [`WEBSOCKET_SUBSCRIPTION`], sends three messages (one not
/// JSON); `/closer` closes at once with a policy violation; other paths are 404s.
#[allow(clippy::result_large_err)] // The handshake callback's error type is tungstenite's.
pub(crate) async fn websocket_server() -> String {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
    use tokio_tungstenite::tungstenite::http::StatusCode;
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut path = String::new();
                let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
                    path = req.uri().path().to_string();
                    let refuse = |status: StatusCode| {
                        let mut r = ErrorResponse::new(None);
                        *r.status_mut() = status;
                        Err(r)
                    };
                    match req.uri().path() {
                        "/feed" => {
                            let auth = req.headers().get("authorization");
                            if auth.and_then(|v| v.to_str().ok()) == Some("Bearer sesame") {
                                Ok(resp)
                            } else {
                                refuse(StatusCode::UNAUTHORIZED)
                            }
                        }
                        "/closer" => Ok(resp),
                        _ => refuse(StatusCode::NOT_FOUND),
                    }
                };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, check).await else {
                    return;
                };
                if path == "/closer" {
                    let _ = ws
                        .close(Some(CloseFrame {
                            code: CloseCode::Policy,
                            reason: "no subscription allowed".into(),
                        }))
                        .await;
                    return;
                }
                while let Some(Ok(m)) = ws.next().await {
                    if m == Message::text(WEBSOCKET_SUBSCRIPTION) {
                        for out in [r#"{"id": 1}"#, "not json", r#"{"id": 3}"#] {
                            ws.send(Message::text(out)).await.unwrap();
                        }
                    }
                }
            });
        }
    });
    format!("ws://{address}")
}

#[tokio::test]
async fn websocket_tables_handshake_subscribe_and_read() {
    let base = websocket_server().await;
    let s = session();
    s.execute(&format!("CREATE TABLE feed (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/feed', headers = 'Authorization: Bearer sesame', 'subscription_messages.0' = '{WEBSOCKET_SUBSCRIPTION}', format = 'json')"))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE feed LIMIT 3").await.unwrap();
    assert_eq!(rows(&t[0]), ["1", "3"]);
    assert_a_message_was_undecodable(&t[0]);
    // Without a subscription nothing comes, and the message says why.
    s.execute(&format!("CREATE TABLE silent (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/feed', headers = 'Authorization: Bearer sesame', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE silent TIMEOUT '500 milliseconds'").await;
    assert!(
        e.contains("failed at stage 'read' [EMPTY]")
            && e.contains("send data only after a subscription"),
        "{e}"
    );
    // A wrong token is refused with 401, and not printed back.
    s.execute(&format!("CREATE TABLE denied (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/feed', headers = 'Authorization: Bearer wrong-token', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE denied").await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]")
            && e.contains("401")
            && !e.contains("wrong-token"),
        "{e}"
    );
    // A wrong path.
    s.execute(&format!("CREATE TABLE lost (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/nowhere', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE lost").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    // The server closes at once: its code and reason are shown.
    s.execute(&format!("CREATE TABLE closer (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/closer', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE closer").await;
    assert!(
        e.contains("[EMPTY]")
            && e.contains("closed the connection with code 1008 'no subscription allowed'"),
        "{e}"
    );
    // A plain HTTP endpoint does not upgrade.
    let http = serve(Router::new().route("/", get(|| async { "plain" }))).await;
    let plain = http.replace("http://", "ws://");
    s.execute(&format!("CREATE TABLE plain (id BIGINT) WITH (connector = 'websocket', endpoint = '{plain}/', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE plain").await;
    assert!(
        e.contains("[BAD_RESPONSE]") && e.contains("without upgrading to a WebSocket"),
        "{e}"
    );
    // Refused and unknown hosts.
    let port = closed_port();
    s.execute(&format!("CREATE TABLE off (id BIGINT) WITH (connector = 'websocket', endpoint = 'ws://127.0.0.1:{port}/feed', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE off").await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    s.execute("CREATE TABLE nowhere (id BIGINT) WITH (connector = 'websocket', endpoint = 'ws://no-such-host.invalid/feed', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE nowhere").await;
    assert!(
        e.contains("failed at stage 'resolve' [DNS_UNRESOLVED]"),
        "{e}"
    );
}
