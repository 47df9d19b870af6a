//! A small closed-loop HTTP/1.1 load generator for bench/proxy.sh (std only, so the bench
//! compiles it with a bare `rustc -O` and it adds nothing to the workspace).
//!
//!     loadgen ADDR CONNECTIONS SECONDS ACCEPT PATH...
//!
//! Each of CONNECTIONS threads keeps one keep-alive connection to ADDR (127.0.0.1:PORT) and
//! sends GET requests for the PATHs in turn, each as soon as the previous answer is read (like
//! wrk's closed loop), for SECONDS. It prints the request count, the rate and the latency
//! percentiles. Responses must carry Content-Length and status 200.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn request(
    reader: &mut BufReader<TcpStream>,
    addr: &str,
    path: &str,
    accept: &str,
) -> Result<(), String> {
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\n\r\n");
    reader
        .get_mut()
        .write_all(head.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut line = String::new();
    reader.read_line(&mut line).map_err(|e| e.to_string())?;
    if !line.starts_with("HTTP/1.1 200") {
        return Err(format!("{path}: {}", line.trim_end()));
    }
    let mut length = None;
    loop {
        line.clear();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let length = length.ok_or_else(|| format!("{path}: no Content-Length"))?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).map_err(|e| e.to_string())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 6 {
        eprintln!("usage: loadgen ADDR CONNECTIONS SECONDS ACCEPT PATH...");
        std::process::exit(2);
    }
    let addr = args[1].clone();
    let connections: usize = args[2].parse().expect("CONNECTIONS is a number");
    let seconds: f64 = args[3].parse().expect("SECONDS is a number");
    let accept = args[4].clone();
    let paths: Vec<String> = args[5..].to_vec();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let workers: Vec<_> = (0..connections)
        .map(|worker| {
            let (addr, accept, paths) = (addr.clone(), accept.clone(), paths.clone());
            std::thread::spawn(move || -> Result<Vec<Duration>, String> {
                let stream = TcpStream::connect(&addr).map_err(|e| format!("{addr}: {e}"))?;
                stream.set_nodelay(true).map_err(|e| e.to_string())?;
                let mut reader = BufReader::new(stream);
                let mut latencies = Vec::new();
                let mut i = worker;
                while Instant::now() < deadline {
                    let path = &paths[i % paths.len()];
                    let sent = Instant::now();
                    request(&mut reader, &addr, path, &accept)?;
                    latencies.push(sent.elapsed());
                    i += 1;
                }
                Ok(latencies)
            })
        })
        .collect();
    let mut all = Vec::new();
    for worker in workers {
        match worker.join() {
            Ok(Ok(latencies)) => all.extend(latencies),
            Ok(Err(e)) => {
                eprintln!("loadgen: {e}");
                std::process::exit(1);
            }
            Err(_) => std::process::exit(1),
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_unstable();
    if all.is_empty() {
        eprintln!("loadgen: no request completed");
        std::process::exit(1);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{} requests in {:.1} s ({:.0}/s) over {} connections: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        all.len(),
        elapsed,
        all.len() as f64 / elapsed,
        connections,
        ms(percentile(&all, 0.50)),
        ms(percentile(&all, 0.90)),
        ms(percentile(&all, 0.99)),
        ms(*all.last().unwrap_or(&Duration::ZERO)),
    );
}
