//! nginx from the system's packages (`apt-get install nginx`) serving a directory on a free
//! 127.0.0.1 port: started by the test in the foreground (`daemon off`) with its own
//! configuration, logs and temporary directories in a temporary directory, and stopped when the
//! [`Nginx`] value is dropped.
//!
//! The binary is `VARI_NGINX`, else `nginx` on `PATH`, else `/usr/sbin/nginx`. Without one,
//! [`Nginx::serve_or_skip`] returns `None` with a note, except under CI (`CI` set), where it
//! fails.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nginx.
pub struct Nginx {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub base: String,
    child: Child,
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for Nginx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nginx")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// The nginx binary, when there is one.
pub fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("VARI_NGINX").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("nginx"))
            .find(|candidate| candidate.is_file())
    });
    on_path.or_else(|| Some(PathBuf::from("/usr/sbin/nginx")).filter(|p| p.is_file()))
}

impl Nginx {
    /// Serves `root` with `site_config`: text for nginx's `http {}` block holding one
    /// `server {}` whose `listen` and `root` lines are replaced with this server's port and
    /// `root`. `None` (with a note) when nginx is missing, outside CI.
    pub fn serve_or_skip(root: &Path, site_config: &str) -> Option<Self> {
        let Some(binary) = binary() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "nginx is missing: apt-get install nginx (or set VARI_NGINX)"
            );
            eprintln!("skipped: no nginx (apt-get install nginx, or set VARI_NGINX)");
            return None;
        };
        Some(Self::serve(&binary, root, site_config))
    }

    /// Serves `root` with `binary` (see [`Nginx::serve_or_skip`]).
    pub fn serve(binary: &Path, root: &Path, site_config: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let server = rewrite_server_lines(site_config, port, root);
        let d = dir.path().display();
        let config = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\nhttp {{\n\
             access_log {d}/access.log;\n\
             client_body_temp_path {d}/body;\nproxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\nuwsgi_temp_path {d}/uwsgi;\n\
             scgi_temp_path {d}/scgi;\n{server}\n}}\n"
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, config).expect("write nginx.conf");
        let mut child = Command::new(binary)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            let log = || std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default();
            if let Ok(Some(status)) = child.try_wait() {
                panic!("nginx exited ({status}): {}", log());
            }
            assert!(Instant::now() < deadline, "nginx did not start: {}", log());
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            base: format!("http://127.0.0.1:{port}"),
            child,
            dir,
        }
    }

    /// nginx's access log so far.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `site_config` with its `listen …;` and `root …;` lines pointing at `port` and `root`.
fn rewrite_server_lines(site_config: &str, port: u16, root: &Path) -> String {
    site_config
        .lines()
        .map(|line| {
            let indent = &line[..line.len() - line.trim_start().len()];
            let trimmed = line.trim_start();
            if trimmed.starts_with("listen ") {
                format!("{indent}listen 127.0.0.1:{port};")
            } else if trimmed.starts_with("root ") {
                format!("{indent}root {};", root.display())
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
