//! AUTH and TLS come through the URL alone: a password-protected redis-server refuses a URL
//! without the password and serves one with it; a TLS-only redis-server (self-signed certificate
//! made here with openssl; `#insecure` skips verification of it) serves `rediss://`. The server is
//! the one `scripts/fetch-redis.sh` provides; when that one has no TLS (the PyPI fallback on a
//! machine where it could not install Debian's), the TLS test is reported as skipped (`fivezero_tests::skip`), not passed.

use crate::distributed_support as support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use trainer::distributed::DistError;
use trainer::distributed::payload::GamePayload;
use trainer::distributed::queue::Queue;

struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(args: &[String]) -> Server {
    Server(
        Command::new(support::redis_server())
            .args(args)
            .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server"),
    )
}

fn push_one(url: &str) -> Result<u64, DistError> {
    let mut q = Queue::open(url, "fz")?;
    q.redis.backoff.give_up_after = Duration::from_secs(5);
    q.push_game(&GamePayload {
        game_id: "w:1:0".into(),
        worker_id: "w".into(),
        model_version: 1,
        record: support::games(1, 3).remove(0),
    })?;
    Ok(q.stats()?.get("games_pushed").copied().unwrap_or(0))
}

fn wait_for(url: &str) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        if let Ok(c) = redis::Client::open(url)
            && let Ok(mut con) = c.get_connection()
            && redis::cmd("PING").query::<String>(&mut con).is_ok()
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    panic!("{url} never answered");
}

#[test]
fn auth_through_the_url() {
    let _watchdog = support::watchdog(120);
    let port = free_port();
    let _s = start(&[
        "--bind".into(),
        "127.0.0.1".into(),
        "--port".into(),
        port.to_string(),
        "--requirepass".into(),
        "s3cret".into(),
    ]);
    let good = format!("redis://:s3cret@127.0.0.1:{port}/");
    wait_for(&good);
    assert!(
        push_one(&format!("redis://127.0.0.1:{port}/")).is_err(),
        "no password, no access"
    );
    assert_eq!(push_one(&good).unwrap(), 1);
}

#[test]
fn tls_through_rediss() {
    let _watchdog = support::watchdog(120);
    let openssl = Command::new("openssl")
        .arg("version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !support::redis_speaks_tls() || !openssl {
        // scripts/fetch-redis.sh found no TLS-capable server to install (not root): say so.
        let reason = format!(
            "{} (TLS: {}), openssl command: {openssl}; as root, make test installs Debian's \
             redis-server (with TLS) and openssl",
            support::redis_server().display(),
            support::redis_speaks_tls()
        );
        fivezero_tests::skip::skip("trainer distributed_auth_tls::tls_through_rediss", &reason);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
    let ok = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=127.0.0.1", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(Stdio::null())
        .status()
        .expect("openssl");
    assert!(ok.success());
    let port = free_port();
    let _s = start(&[
        "--bind".into(),
        "127.0.0.1".into(),
        "--port".into(),
        "0".into(),
        "--tls-port".into(),
        port.to_string(),
        "--tls-cert-file".into(),
        cert.display().to_string(),
        "--tls-key-file".into(),
        key.display().to_string(),
        "--tls-ca-cert-file".into(),
        cert.display().to_string(),
        "--tls-auth-clients".into(),
        "no".into(),
    ]);
    let url = format!("rediss://127.0.0.1:{port}/#insecure");
    wait_for(&url);
    assert_eq!(push_one(&url).unwrap(), 1);
}
