//! Connection lifecycle abuse: silent sockets, preface fragments, idle keep-alives, slow bodies,
//! too many connections, idle tunnels and a log reader that stopped reading. shunt runs with
//! short timeouts; each test asserts the socket closes within timeout + margin (and, where it
//! matters, not before).

use std::{process::Stdio, time::Duration};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader},
    net::TcpStream,
    process::Command,
    sync::mpsc,
};

use crate::support::*;

const HOST: &str = "conn.example.com";

/// Slack on top of a timeout for "closed within": timers, scheduling, a loaded CI machine.
const MARGIN: Duration = Duration::from_secs(2);

fn mk_site_ingress() -> Ingress {
    mk_ingress("web", "app").rule(HOST, [mk_path("/", "Prefix", "app", 80)])
}

/// Echo backend `app` behind `HOST`, shunt started with `args`.
async fn mk_site(args: &[&str]) -> Site {
    Site::start("web", &["app"], &[&mk_site_ingress()], args).await
}

/// Reads until the peer closes (or resets) and returns what came; panics if still open after `within`.
async fn closed_within(stream: &mut (impl AsyncRead + Unpin), within: Duration) -> Vec<u8> {
    let mut seen = Vec::new();
    let read = tokio::time::timeout(within, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "connection still open after {within:?}; it sent {:?}",
        String::from_utf8_lossy(&seen)
    );
    seen
}

/// Panics if the peer closes within `period`; bytes it sends meanwhile are dropped.
async fn open_for(stream: &mut (impl AsyncRead + Unpin), period: Duration) {
    let read = tokio::time::timeout(period, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await;
    assert!(read.is_err(), "connection closed before {period:?}");
}

async fn closed_count(shunt: &Shunt, reason: &str) -> f64 {
    let metrics = shunt.metrics().await;
    sample(&metrics, "shunt_client_connections_closed_total", &[("reason", reason)]).unwrap_or(0.0)
}

#[tokio::test]
async fn a_silent_connection_is_closed_after_the_header_timeout() {
    let site = mk_site(&["--client-header-timeout", "1s"]).await;
    let mut stream = TcpStream::connect(site.shunt.http).await.expect("connect");
    open_for(&mut stream, Duration::from_millis(600)).await;
    let answer = closed_within(&mut stream, Duration::from_secs(1) + MARGIN).await;
    assert!(answer.is_empty(), "nothing was asked, nothing is answered: {answer:?}");
    assert!(closed_count(&site.shunt, "header_timeout").await >= 1.0);
}

#[tokio::test]
async fn an_http2_preface_fragment_is_closed_after_the_header_timeout() {
    let site = mk_site(&["--client-header-timeout", "1s"]).await;
    let mut stream = TcpStream::connect(site.shunt.http).await.expect("connect");
    stream.write_all(b"PRI").await.expect("write");
    open_for(&mut stream, Duration::from_millis(600)).await;
    let answer = closed_within(&mut stream, Duration::from_secs(1) + MARGIN).await;
    assert!(answer.is_empty(), "no HTTP/1.1 answer to a preface: {answer:?}");
}

#[tokio::test]
async fn a_started_request_head_gets_408_after_the_header_timeout() {
    let site = mk_site(&["--client-header-timeout", "1s"]).await;
    let mut stream = TcpStream::connect(site.shunt.http).await.expect("connect");
    stream
        .write_all(format!("GET / HTTP/1.1\r\nHost: {HOST}\r\nX-Slow: ").as_bytes())
        .await
        .expect("write");
    let answer = closed_within(&mut stream, Duration::from_secs(1) + MARGIN).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer:?}");
}

#[tokio::test]
async fn a_second_head_that_stalls_gets_408_while_an_idle_keep_alive_waits_longer() {
    let site = mk_site(&["--client-header-timeout", "1s", "--client-idle-timeout", "30s"]).await;
    let mut stream = TcpStream::connect(site.shunt.http).await.expect("connect");
    let request = format!("GET / HTTP/1.1\r\nHost: {HOST}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut buf = [0u8; 8192];
    let n = stream.read(&mut buf).await.expect("response");
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 "));
    // Idle, but well within the idle timeout: longer than the header timeout, still open.
    open_for(&mut stream, Duration::from_millis(1500)).await;
    stream.write_all(b"GET / HTTP/1.1\r\nHo").await.expect("write");
    let answer = closed_within(&mut stream, Duration::from_secs(1) + MARGIN).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer:?}");
}

#[tokio::test]
async fn an_idle_http11_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let site = mk_site(&["--client-idle-timeout", "1s"]).await;
    let stream = TcpStream::connect(site.shunt.http).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    let connection = tokio::spawn(connection);
    let reply = collect(sender.send_request(get(HOST, "/")).await.expect("request"))
        .await
        .expect("body");
    assert_eq!(reply.status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!connection.is_finished(), "closed before the idle timeout");
    tokio::time::timeout(Duration::from_secs(1) + MARGIN, connection)
        .await
        .expect("closed within the idle timeout")
        .expect("connection task")
        .expect("a clean close");
    assert!(closed_count(&site.shunt, "idle_timeout").await >= 1.0);
}

#[tokio::test]
async fn an_idle_http2_connection_gets_goaway_after_the_idle_timeout() {
    let site = mk_site(&["--client-idle-timeout", "1s"]).await;
    let stream = TcpStream::connect(site.shunt.http).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
        .await
        .expect("handshake");
    let connection = tokio::spawn(connection);
    let mut req = get(HOST, "/");
    *req.uri_mut() = format!("http://{HOST}/").parse().expect("uri");
    let reply = collect(sender.send_request(req).await.expect("request"))
        .await
        .expect("body");
    assert_eq!(reply.status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!connection.is_finished(), "closed before the idle timeout");
    tokio::time::timeout(Duration::from_secs(1) + MARGIN, connection)
        .await
        .expect("closed within the idle timeout")
        .expect("connection task")
        .expect("a GOAWAY, not a reset");
}

#[tokio::test]
async fn an_http2_connection_idle_after_its_preface_and_settings_is_closed() {
    let site = mk_site(&["--client-header-timeout", "1s"]).await;
    let mut stream = TcpStream::connect(site.shunt.http).await.expect("connect");
    stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .expect("preface");
    // An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
    stream.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await.expect("settings");
    open_for(&mut stream, Duration::from_millis(600)).await;
    closed_within(&mut stream, Duration::from_secs(1) + MARGIN).await;
}

#[tokio::test]
async fn an_http2_client_that_sends_no_request_gets_goaway_at_the_header_timeout() {
    let site = mk_site(&["--client-header-timeout", "1s"]).await;
    let stream = TcpStream::connect(site.shunt.http).await.expect("connect");
    let (mut sender, connection) = h2::client::handshake(stream).await.expect("h2 handshake");
    let connection = tokio::spawn(connection);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!connection.is_finished(), "closed before the header timeout");
    tokio::time::timeout(Duration::from_secs(1) + MARGIN, connection)
        .await
        .expect("closed within the header timeout")
        .expect("connection task")
        .expect("a clean close");
    // A refused request names the cause: the server's GOAWAY, not a dropped socket.
    let req = Request::get(format!("http://{HOST}/")).body(()).expect("request");
    let refused = sender.send_request(req, true).expect_err("no request after the close");
    assert!(refused.is_go_away(), "closed without GOAWAY: {refused}");
    assert!(refused.is_remote(), "{refused}");
    assert_eq!(refused.reason(), Some(h2::Reason::NO_ERROR), "{refused}");
    assert!(closed_count(&site.shunt, "header_timeout").await >= 1.0);
}

#[tokio::test]
async fn a_connection_idle_after_its_tls_handshake_is_closed() {
    let site = mk_site(&["--client-header-timeout", "1s"]).await;
    let mut stream = TlsClient::any_certificate()
        .handshake(site.shunt.https, Some(HOST))
        .await
        .expect("TLS handshake");
    open_for(&mut stream, Duration::from_millis(600)).await;
    closed_within(&mut stream, Duration::from_secs(1) + MARGIN).await;
}

/// Reads the request body, then reports how that went on `outcomes`.
async fn mk_body_reader(outcomes: mpsc::UnboundedSender<Result<usize, String>>) -> Backend {
    Backend::http1("app")
        .handler(move |req: Request<Incoming>| {
            let outcomes = outcomes.clone();
            async move {
                let outcome = match req.into_body().collect().await {
                    Ok(body) => Ok(body.to_bytes().len()),
                    Err(error) => Err(error.to_string()),
                };
                let _ = outcomes.send(outcome);
                text(StatusCode::OK, "read")
            }
        })
        .start()
        .await
}

#[tokio::test]
async fn a_body_at_one_byte_per_second_gets_408_and_the_backend_request_ends() {
    let (outcomes, mut outcome) = mpsc::unbounded_channel();
    let backend = mk_body_reader(outcomes).await;
    let service = mk_backend_service("web", "app", None, &[&backend]);
    let (_manifests, shunt) = serve(&[&mk_site_ingress(), &service], &["--client-body-timeout", "500ms"]).await;
    let mut stream = TcpStream::connect(shunt.http).await.expect("connect");
    let head = format!("POST / HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: 100\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("head");
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    // One byte a second, until shunt answers; bounded at 10 bytes.
    for _ in 0..10 {
        if stream.write_all(b"x").await.is_err() {
            break;
        }
        match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => {
                answer.extend_from_slice(&buf[..n]);
                break;
            }
            Err(_) => continue,
        }
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer:?}");
    let seen = tokio::time::timeout(MARGIN, outcome.recv())
        .await
        .expect("the backend's request ended")
        .expect("an outcome");
    assert!(seen.is_err(), "the backend saw the body cut short, got {seen:?}");
    // The endpoint is free again: a normal request goes through.
    let reply = shunt.get(HOST, "/").await;
    assert_eq!(reply.status, StatusCode::OK);
}

#[tokio::test]
async fn connections_beyond_max_connections_are_closed_and_counted_until_one_frees() {
    let site = mk_site(&["--max-connections", "2", "--client-header-timeout", "30s"]).await;
    let shunt = &site.shunt;
    let first = TcpStream::connect(shunt.http).await.expect("connect");
    let _second = TcpStream::connect(shunt.https).await.expect("connect");
    eventually("two open connections", Duration::from_secs(5), async || {
        let metrics = shunt.metrics().await;
        (sample(&metrics, "shunt_client_connections", &[]) == Some(2.0)).then_some(())
    })
    .await;
    let mut third = TcpStream::connect(shunt.http).await.expect("the kernel still accepts");
    closed_within(&mut third, MARGIN).await;
    let metrics = shunt.metrics().await;
    assert!(sample(&metrics, "shunt_client_connections_rejected_total", &[]) >= Some(1.0));
    assert!(shunt.try_send(get(HOST, "/")).await.is_err(), "the limit holds");
    drop(first);
    let reply = eventually("a request after a slot freed", Duration::from_secs(5), async || {
        shunt.try_send(get(HOST, "/")).await.ok()
    })
    .await;
    assert_eq!(reply.status, StatusCode::OK);
}

#[tokio::test]
async fn running_out_of_file_descriptors_backs_off_counts_and_recovers() {
    let site = mk_site(&["--client-header-timeout", "30s"]).await;
    let shunt = &site.shunt;
    let pid = shunt.pid();
    let open = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("shunt's fds")
        .count();
    let limit = format!("--nofile={}:", open + 4);
    let status = std::process::Command::new("prlimit")
        .args(["--pid", &pid.to_string(), &limit])
        .status()
        .expect("running prlimit");
    assert!(status.success(), "prlimit {limit} failed: {status}");
    let mut clients = Vec::new();
    for _ in 0..16 {
        clients.push(TcpStream::connect(shunt.http).await.expect("the kernel still accepts"));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(clients);
    let metrics = eventually(
        "/metrics once descriptors are free",
        Duration::from_secs(5),
        async || {
            let reply = collect(send_h1(shunt.admin, get("localhost", "/metrics")).await.ok()?)
                .await
                .ok()?;
            Some(reply.text())
        },
    )
    .await;
    assert!(
        sample(&metrics, "shunt_accept_errors_total", &[]) >= Some(1.0),
        "{metrics}"
    );
    // Backing off, not spinning: a handful of failures in half a second, not thousands. Log
    // lines reach stderr through a background writer: wait for the first before counting.
    let failures = eventually("an \"Accept failed\" log line", Duration::from_secs(5), async || {
        let count = shunt
            .json_logs()
            .iter()
            .filter(|line| line["message"] == "Accept failed")
            .count();
        (count > 0).then_some(count)
    })
    .await;
    assert!(failures < 100, "{failures} accept failures logged");
    let reply = eventually(
        "a request after descriptors are free",
        Duration::from_secs(5),
        async || shunt.try_send(get(HOST, "/")).await.ok(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
}

/// Accepts `Upgrade: x-echo` and echoes bytes until the proxy side closes.
async fn echo_upgrade(mut req: Request<Incoming>) -> Response<Body> {
    let on_upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else { return };
        let mut io = TokioIo::new(upgraded);
        let mut buf = [0u8; 1024];
        while let Ok(n @ 1..) = io.read(&mut buf).await {
            if io.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, "x-echo")
        .body(full(Bytes::new()))
        .expect("a valid 101")
}

/// A connection through shunt upgraded to `x-echo`, its response head read.
async fn upgraded(shunt: &Shunt) -> BufReader<TcpStream> {
    let mut stream = TcpStream::connect(shunt.http).await.expect("connect");
    let head = format!("GET / HTTP/1.1\r\nHost: {HOST}\r\nConnection: upgrade\r\nUpgrade: x-echo\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("upgrade request");
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).await.expect("status line");
    assert!(status.starts_with("HTTP/1.1 101 "), "{status:?}");
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.expect("header line");
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    reader
}

#[tokio::test]
async fn an_idle_tunnel_is_closed_after_the_tunnel_idle_timeout_and_the_gauge_follows() {
    let backend = Backend::http1("app").handler(echo_upgrade).start().await;
    let service = mk_backend_service("web", "app", None, &[&backend]);
    let (_manifests, shunt) = serve(
        &[&mk_site_ingress(), &service],
        &["--tunnel-idle-timeout", "1s", "--allow-upgrade", "x-echo"],
    )
    .await;
    let mut reader = upgraded(&shunt).await;
    // Bytes every 400 ms keep a 1 s tunnel open past its timeout.
    for round in 0..4 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let ping = format!("ping {round}");
        reader.get_mut().write_all(ping.as_bytes()).await.expect("write");
        let mut echoed = vec![0u8; ping.len()];
        reader.read_exact(&mut echoed).await.expect("echo");
        assert_eq!(echoed, ping.as_bytes());
    }
    let metrics = shunt.metrics().await;
    assert_eq!(sample(&metrics, "shunt_tunnels", &[]), Some(1.0));
    closed_within(&mut reader, Duration::from_secs(1) + MARGIN).await;
    let metrics = shunt.metrics().await;
    assert_eq!(sample(&metrics, "shunt_tunnels", &[]), Some(0.0));
    assert_eq!(
        sample(
            &metrics,
            "shunt_client_connections_closed_total",
            &[("reason", "tunnel_idle")]
        ),
        Some(1.0)
    );
}

#[tokio::test]
async fn an_open_tunnel_is_closed_at_the_drain_deadline_and_shunt_exits() {
    let backend = Backend::http1("app").handler(echo_upgrade).start().await;
    let service = mk_backend_service("web", "app", None, &[&backend]);
    let (_manifests, mut shunt) = serve(
        &[&mk_site_ingress(), &service],
        &["--drain-timeout", "1s", "--allow-upgrade", "x-echo"],
    )
    .await;
    let mut reader = upgraded(&shunt).await;
    shunt.signal("TERM");
    // Still open while the drain runs ...
    open_for(&mut reader, Duration::from_millis(500)).await;
    // ... closed at its deadline, and shunt exits cleanly.
    closed_within(&mut reader, Duration::from_secs(1) + MARGIN).await;
    let status = shunt.wait_exit(Duration::from_secs(5)).await;
    assert!(status.success(), "{status}");
    shunt
        .wait_for_log("a drain-timeout line naming the open tunnel", |line| {
            line["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Drain timeout reached"))
                && line["tunnels"] == 1
        })
        .await;
}

#[tokio::test]
async fn a_stalled_log_reader_does_not_stall_requests() {
    let backend = Backend::start("app").await;
    let manifests = Manifests::new();
    let service = mk_backend_service("web", "app", None, &[&backend]);
    manifests.write("routes.yaml", &[&mk_site_ingress(), &service]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_shunt"))
        .arg("serve")
        .arg("--manifests")
        .arg(manifests.path())
        .args(["--http-addr", "127.0.0.1:0", "--https-addr", "127.0.0.1:0"])
        .args([
            "--admin-addr",
            "127.0.0.1:0",
            "--log-format",
            "json",
            "--access-log",
            "true",
        ])
        .env("RUST_LOG", "info")
        .env_remove("SHUNT_LOG_FORMAT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawning shunt");
    // Read only until the proxy listener's address is known, then never again: the pipe
    // fills after a few hundred access lines.
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
    let (http, admin) = tokio::time::timeout(Duration::from_secs(10), async {
        let (mut http, mut admin) = (None, None);
        while http.is_none() || admin.is_none() {
            let mut line = String::new();
            if stderr.read_line(&mut line).await.expect("stderr") == 0 {
                panic!("shunt exited during startup");
            }
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if json["message"] != "Listening" {
                continue;
            }
            let addr = json["addr"]
                .as_str()
                .and_then(|a| a.parse::<std::net::SocketAddr>().ok());
            match json["listener"].as_str() {
                Some("http") => http = addr,
                Some("admin") => admin = addr,
                _ => {}
            }
        }
        (http.expect("http"), admin.expect("admin"))
    })
    .await
    .expect("shunt listens");
    let ready = eventually("the route to be served", Duration::from_secs(10), async || {
        let reply = collect(send_h1(http, get(HOST, "/")).await.ok()?).await.ok()?;
        (reply.status == StatusCode::OK).then_some(())
    });
    ready.await;
    let mut completed = 0;
    for _ in 0..800 {
        let sent = tokio::time::timeout(REQUEST_TIMEOUT, async {
            collect(send_h1(http, get(HOST, "/")).await?).await
        });
        let reply = sent
            .await
            .expect("a request completes while nobody reads the logs")
            .expect("a reply");
        assert_eq!(reply.status, StatusCode::OK);
        completed += 1;
    }
    assert_eq!(completed, 800);
    let metrics = collect(send_h1(admin, get("localhost", "/metrics")).await.expect("/metrics"))
        .await
        .expect("/metrics body")
        .text();
    assert!(
        sample(&metrics, "shunt_log_lines_dropped_total", &[]).is_some(),
        "the dropped-lines counter is exposed"
    );
    drop(stderr);
    let _ = child.kill().await;
}
