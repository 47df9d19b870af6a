//! HTTPS: the client verifies servers against the system's roots (read on the first
//! handshake), offers ALPN `h2` and `http/1.1`, and refuses a certificate no root vouches for.
//!
//! Certificates are made by the `openssl` command for each run. The system's roots are
//! replaced by a test CA through `SSL_CERT_FILE` — the variable users set for a private CA —
//! which must be in the environment before anything reads it, so the checks run in a child
//! copy of this test binary started with it set.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use crate::support::{client, name, settings};

const CHILD_ENV: &str = "VARI_TLS_TEST_CERTS";

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command (needed to make test certificates)");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `ca.pem` (the trusted root), `leaf.pem`/`leaf.key` (127.0.0.1, signed by it) and
/// `rogue.pem`/`rogue.key` (127.0.0.1, self-signed: no root vouches for it).
fn make_certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509", "-days", "2", "-subj", "/CN=vari test CA"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    ]);
    openssl(dir, &ca);
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    let mut csr = vec!["req", "-subj", "/CN=127.0.0.1", "-keyout", "leaf.key"];
    csr.extend(ec);
    csr.extend(["-out", "leaf.csr"]);
    openssl(dir, &csr);
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
            "-out",
            "leaf.pem",
        ],
    );
    let mut rogue = vec!["req", "-x509", "-days", "2", "-subj", "/CN=127.0.0.1"];
    rogue.extend(ec);
    rogue.extend([
        "-keyout",
        "rogue.key",
        "-out",
        "rogue.pem",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
    ]);
    openssl(dir, &rogue);
}

#[test]
fn https_is_verified_against_the_system_roots() {
    let dir = tempfile::tempdir().unwrap();
    make_certificates(dir.path());
    let exe = std::env::current_exe().unwrap();
    let output = Command::new(exe)
        .args(["tls::https_child", "--exact", "--ignored", "--nocapture"])
        .env("SSL_CERT_FILE", dir.path().join("ca.pem"))
        .env_remove("SSL_CERT_DIR")
        .env(CHILD_ENV, dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // The child really ran the checks (a filter that matched nothing also exits 0).
    assert!(stdout.contains("1 passed"), "{stdout}\n{stderr}");
}

/// A TLS server on 127.0.0.1 with `cert`/`key`, answering every request with a one-wheel
/// project page over HTTP/1.1; it records the ALPN protocols each client offered.
async fn tls_server(dir: &Path, cert: &str, key: &str) -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let certs = CertificateDer::pem_file_iter(dir.join(cert))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join(key)).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let config = Arc::new(config);
    let offered = Arc::new(Mutex::new(Vec::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/simple/", listener.local_addr().unwrap());
    let seen = offered.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (config, seen) = (config.clone(), seen.clone());
            tokio::spawn(async move {
                let acceptor = tokio_rustls::LazyConfigAcceptor::new(
                    rustls::server::Acceptor::default(),
                    stream,
                );
                let Ok(start) = acceptor.await else { return };
                if let Some(alpn) = start.client_hello().alpn() {
                    seen.lock().unwrap().extend(alpn.map(<[u8]>::to_vec));
                }
                let Ok(tls) = start.into_stream(config).await else {
                    return;
                };
                let service = hyper::service::service_fn(|_req| async {
                    let page = r#"<a href="/files/pkg-1.0-py3-none-any.whl">pkg</a>"#;
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(
                        http_body_util::Full::new(bytes::Bytes::from(page)),
                    ))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (url, offered)
}

#[tokio::test]
#[ignore = "run by https_is_verified_against_the_system_roots, in a child process with SSL_CERT_FILE set"]
async fn https_child() {
    let dir =
        std::env::var_os(CHILD_ENV).expect("started by https_is_verified_against_the_system_roots");
    let dir = Path::new(&dir);

    let (trusted, offered) = tls_server(dir, "leaf.pem", "leaf.key").await;
    let project = client(settings(&[trusted]))
        .project(&name("pkg"))
        .await
        .unwrap();
    assert_eq!(project.files.len(), 1);
    assert_eq!(
        *offered.lock().unwrap(),
        [b"h2".to_vec(), b"http/1.1".to_vec()]
    );

    let (rogue, _) = tls_server(dir, "rogue.pem", "rogue.key").await;
    let err = client(settings(&[rogue]))
        .project(&name("pkg"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("certificate"), "{err}");
}
