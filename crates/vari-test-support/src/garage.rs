//! A real S3 object store on 127.0.0.1: Garage (crates.io `garage` 2.5), single node, started
//! by the test in a temporary directory and killed when the [`Garage`] value is dropped.
//!
//! Garage is a production S3 store written in Rust; one node with `replication_factor = 1`
//! and the sqlite metadata engine serves within seconds. The binary comes from
//! `scripts/garage-test-env` (`cargo install --locked garage` into
//! `${VARI_TEST_TOOLS:-$HOME/.cache/vari-test-tools}/garage`); tests find it through
//! `VARI_GARAGE` (which `scripts/test` sets) or that default path. Without it
//! [`Garage::start_or_skip`] returns `None` with a note, except under CI (`CI` set), where it
//! fails.
//!
//! Each node listens on free 127.0.0.1 ports: the S3 API ([`Garage::s3_endpoint`]), the website
//! endpoint ([`Garage::website`]: a bucket's objects by path, `index.html` for a path ending in
//! `/`, as a static host serves a site) and the admin API; RPC on a fourth port.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The S3 region the node answers to (clients must sign for it).
pub const REGION: &str = "garage";

/// The access key every node has (imported, so tests know it without parsing output).
pub const KEY_ID: &str = "GK0123456789abcdef01234567";
/// The secret of [`KEY_ID`].
pub const SECRET: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// A second key, which [`Garage::allow_read_only`] lets only read a bucket.
pub const READ_ONLY_KEY_ID: &str = "GKfedcba9876543210fedcba98";
/// The secret of [`READ_ONLY_KEY_ID`].
pub const READ_ONLY_SECRET: &str =
    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

/// The name [`Garage::website`] gives the served bucket: the website endpoint picks the bucket
/// by the request's host, and `localhost` is the one name every machine resolves to 127.0.0.1.
const WEBSITE_ALIAS: &str = "localhost";

/// The garage binary: `VARI_GARAGE`, else the default install path of `scripts/garage-test-env`.
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("VARI_GARAGE").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let tools = std::env::var_os("VARI_TEST_TOOLS")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/vari-test-tools")
        });
    tools.join("garage/bin/garage")
}

/// A running single-node Garage.
pub struct Garage {
    binary: PathBuf,
    config: PathBuf,
    child: Child,
    s3_port: u16,
    web_port: u16,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for Garage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Garage")
            .field("s3", &self.s3_endpoint())
            .field("web_port", &self.web_port)
            .finish_non_exhaustive()
    }
}

impl Garage {
    /// Starts a node with [`KEY_ID`] imported, or returns `None` (with a note on stderr) when
    /// the binary is missing, except under CI, where that fails the test.
    pub fn start_or_skip() -> Option<Self> {
        let binary = binary();
        if !binary.is_file() {
            assert!(
                std::env::var_os("CI").is_none(),
                "garage is missing at {}: run scripts/garage-test-env",
                binary.display()
            );
            eprintln!(
                "skipped: no garage at {} (run scripts/garage-test-env)",
                binary.display()
            );
            return None;
        }
        Some(Self::start(binary))
    }

    /// Starts a node with `binary`.
    pub fn start(binary: PathBuf) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let [rpc, s3, web, admin] = free_ports();
        let config = dir.path().join("garage.toml");
        std::fs::write(&config, config_text(dir.path(), rpc, s3, web, admin))
            .expect("write garage.toml");
        let log = std::fs::File::create(dir.path().join("garage.log")).expect("garage.log");
        let child = Command::new(&binary)
            .arg("-c")
            .arg(&config)
            .arg("server")
            .env("RUST_LOG", "garage=warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("garage.log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
        let mut garage = Self {
            binary,
            config,
            child,
            s3_port: s3,
            web_port: web,
            _dir: dir,
        };
        garage.wait_for_port(s3);
        garage.set_up_layout();
        garage.cli(&["key", "import", "--yes", "-n", "vari-test", KEY_ID, SECRET]);
        garage.cli(&[
            "key",
            "import",
            "--yes",
            "-n",
            "vari-read-only",
            READ_ONLY_KEY_ID,
            READ_ONLY_SECRET,
        ]);
        garage
    }

    /// `http://127.0.0.1:PORT`, the S3 API.
    pub fn s3_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.s3_port)
    }

    /// Creates `bucket` and lets [`KEY_ID`] read, write and own it.
    pub fn create_bucket(&self, bucket: &str) {
        self.cli(&["bucket", "create", bucket]);
        self.cli(&[
            "bucket",
            "allow",
            "--read",
            "--write",
            "--owner",
            bucket,
            "--key",
            "vari-test",
        ]);
    }

    /// Lets [`READ_ONLY_KEY_ID`] list and read `bucket`, and nothing more.
    pub fn allow_read_only(&self, bucket: &str) {
        self.cli(&[
            "bucket",
            "allow",
            "--read",
            bucket,
            "--key",
            "vari-read-only",
        ]);
    }

    /// Serves `bucket` on the website endpoint and returns its base URL,
    /// `http://localhost:PORT` (no trailing slash). One bucket per node can be served.
    pub fn website(&self, bucket: &str) -> String {
        self.cli(&["bucket", "website", "--allow", bucket]);
        self.cli(&["bucket", "alias", bucket, WEBSITE_ALIAS]);
        format!("http://{WEBSITE_ALIAS}:{}", self.web_port)
    }

    /// The environment a client needs for this node: the key, the region and the endpoint.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", KEY_ID.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.to_owned()),
            ("AWS_REGION", REGION.to_owned()),
            ("AWS_ENDPOINT_URL", self.s3_endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
        ]
    }

    /// Gives `command` (a client of this node) [`Garage::env`], and no other `AWS_*` variable
    /// of the caller's.
    pub fn client_env(&self, command: &mut Command) {
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("AWS_") {
                command.env_remove(key);
            }
        }
        for (key, value) in self.env() {
            command.env(key, value);
        }
    }

    /// Runs `garage -c CONFIG ARGS…`; panics with its output unless it succeeds.
    pub fn cli(&self, args: &[&str]) -> Output {
        let output = Command::new(&self.binary)
            .arg("-c")
            .arg(&self.config)
            .args(args)
            .env("RUST_LOG", "garage=warn")
            .output()
            .expect("garage runs");
        assert!(
            output.status.success(),
            "garage {}: {}\n{}{}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    fn wait_for_port(&mut self, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("garage exited ({status}): {}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "garage did not start: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One node, one zone, all of it in the layout: the store accepts writes once applied.
    fn set_up_layout(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let node = loop {
            let output = Command::new(&self.binary)
                .arg("-c")
                .arg(&self.config)
                .args(["node", "id", "-q"])
                .output()
                .expect("garage runs");
            let text = String::from_utf8_lossy(&output.stdout);
            if output.status.success() && !text.trim().is_empty() {
                // `ID@ADDRESS`: the layout takes the ID.
                break text.trim().split('@').next().unwrap_or_default().to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "garage node id: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        self.cli(&["layout", "assign", "-z", "dc1", "-c", "1G", &node]);
        self.cli(&["layout", "apply", "--version", "1"]);
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("garage.log")).unwrap_or_default()
    }
}

impl Drop for Garage {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Four distinct free ports on 127.0.0.1 (held together while chosen, so they differ).
fn free_ports() -> [u16; 4] {
    let listeners: Vec<TcpListener> = (0..4)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1"))
        .collect();
    let ports: Vec<u16> = listeners
        .iter()
        .map(|l| l.local_addr().expect("local address").port())
        .collect();
    [ports[0], ports[1], ports[2], ports[3]]
}

fn config_text(dir: &Path, rpc: u16, s3: u16, web: u16, admin: u16) -> String {
    format!(
        r#"metadata_dir = "{meta}"
data_dir = "{data}"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:{rpc}"
rpc_public_addr = "127.0.0.1:{rpc}"
rpc_secret = "{secret}"

[s3_api]
s3_region = "{REGION}"
api_bind_addr = "127.0.0.1:{s3}"
root_domain = ".s3.garage.localhost"

[s3_web]
bind_addr = "127.0.0.1:{web}"
root_domain = ".web.garage.localhost"
index = "index.html"

[admin]
api_bind_addr = "127.0.0.1:{admin}"
"#,
        meta = dir.join("meta").display(),
        data = dir.join("data").display(),
        secret = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
    )
}
