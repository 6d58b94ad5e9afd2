//! Images through the object store: the release service serving 1,000
//! images of 1 MB to 32 clients from its folder store and, in the same run,
//! from a local S3 server (moto, installed into a virtual environment under
//! `target/`), the two alternated twice; and the floor, the same clients
//! fetching straight from the S3 server. Reports throughput, p99 and the
//! service's peak memory.
//!
//! `cargo bench --bench storage` (about two minutes; `STORAGE_BENCH_SECONDS`
//! sets each phase, `STORAGE_BENCH_IMAGES` the number of images: either one
//! set makes it a shortened run that does not write BENCHMARKS.md).

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "support/figures.rs"]
mod figures;
#[path = "support/service.rs"]
mod service;

const CLIENTS: usize = 32;
const IMAGE_BYTES: usize = 1024 * 1024;
const BUCKET: &str = "bench";

/// The S3 server (moto), in a virtual environment of the bench's own.
fn start_moto(port: u16) -> Child {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-moto-venv");
    let python = venv.join("bin/python");
    let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
    if !python.exists() {
        assert!(ok(Command::new("python3").args(["-m", "venv"]).arg(&venv)), "python3 -m venv");
    }
    if !ok(Command::new(&python).args(["-c", "import moto.server"])) {
        assert!(ok(Command::new(&python).args(["-m", "pip", "install", "--quiet", "moto[server]==5.2.6"])));
    }
    Command::new(&python)
        .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("moto")
}

/// What one phase measured.
struct Phase {
    per_second: f64,
    p99_ms: f64,
    peak_mb: f64,
}

/// 32 clients fetching `urls` at random for `seconds`; the service's peak
/// memory when `pid` is given.
async fn load(urls: Arc<Vec<String>>, seconds: u64, pid: Option<u32>) -> Phase {
    if let Some(pid) = pid {
        service::reset_peak(pid);
    }
    let client = reqwest::Client::builder().pool_max_idle_per_host(CLIENTS).build().expect("client");
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (client, urls, stop, done, latencies) =
                (client.clone(), urls.clone(), stop.clone(), done.clone(), latencies.clone());
            tokio::spawn(async move {
                let mut state = 0x2545_f491_4f6c_dd1du64 ^ (c as u64) << 17;
                let mut mine = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let url = &urls[(state % urls.len() as u64) as usize];
                    let t = Instant::now();
                    let resp = client.get(url).send().await.expect("get");
                    assert!(resp.status().is_success(), "{url}: {}", resp.status());
                    let body = resp.bytes().await.expect("body");
                    assert_eq!(body.len(), IMAGE_BYTES);
                    mine.push(t.elapsed().as_secs_f64() * 1000.0);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                latencies.lock().expect("lock").extend(mine);
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.expect("client");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut l = latencies.lock().expect("lock").clone();
    l.sort_by(f64::total_cmp);
    let p99 = l.get(l.len() * 99 / 100).copied().unwrap_or(f64::NAN);
    Phase {
        per_second: done.load(Ordering::Relaxed) as f64 / elapsed,
        p99_ms: p99,
        peak_mb: pid.map_or(f64::NAN, |p| service::rss_mb(p).1),
    }
}

#[tokio::main]
async fn main() {
    let seconds: u64 = std::env::var("STORAGE_BENCH_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    let images: usize = std::env::var("STORAGE_BENCH_IMAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let full_run = std::env::var("STORAGE_BENCH_SECONDS").is_err() && std::env::var("STORAGE_BENCH_IMAGES").is_err();
    let dir = tempfile::tempdir().expect("dir");
    let http = reqwest::Client::new();
    let moto_port = service::free_port();
    let mut moto = start_moto(moto_port);
    let endpoint = format!("http://127.0.0.1:{moto_port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while http.get(format!("{endpoint}/")).send().await.is_err() {
        assert!(Instant::now() < deadline, "moto did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    http.put(format!("{endpoint}/{BUCKET}")).send().await.expect("bucket");
    let vars: Vec<(String, String)> = [
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();

    // One service, two stores: the folder (its data directory's uploads)
    // and the bucket, each holding the same 1,000 images of 1 MB.
    let (h, _token, first) = service::start(dir.path(), &http).await;
    drop_child(first);
    let uploads = h.data_dir.join("uploads");
    std::fs::create_dir_all(&uploads).expect("uploads");
    let location = atelier::storage::Location::S3 { bucket: BUCKET.into(), prefix: "images".into() };
    let bucket = atelier::storage::Storage::open(&location, &vars, false).expect("bucket");
    let mut names = Vec::with_capacity(images);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..images {
        let bytes: Vec<u8> = (0..IMAGE_BYTES)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let name = format!("{}.png", hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)));
        std::fs::write(uploads.join(&name), &bytes).expect("file");
        bucket.put(atelier::storage::Object::Upload(&name), bytes.into()).await.expect("object");
        names.push(name);
    }
    let urls = |base: &str| Arc::new(names.iter().map(|n| format!("{base}/images/{n}")).collect::<Vec<_>>());
    // The floor's addresses: presigned, so the S3 server serves them to anyone.
    let signer = atelier::storage::Storage::open(&location, &vars, true).expect("signer");
    let mut direct = Vec::with_capacity(names.len());
    for name in &names {
        direct
            .push(signer.presigned(atelier::storage::Object::Upload(name)).await.expect("signed").expect("an address"));
    }
    let direct = Arc::new(direct);

    let mut file_phases = Vec::new();
    let mut s3_phases = Vec::new();
    let mut floor_phases = Vec::new();
    for round in 0..2 {
        let child = h.serve_with(&["--storage", &format!("file://{}", uploads.display())], &[]);
        h.ready(&http).await;
        let phase = load(urls(&h.url("")), seconds, Some(child.id())).await;
        println!(
            "round {round} file: {:.0}/s p99 {:.1} ms peak {:.0} MB",
            phase.per_second, phase.p99_ms, phase.peak_mb
        );
        file_phases.push(phase);
        drop_child(child);
        let child = h.serve_with(&["--storage", &format!("s3://{BUCKET}/images")], &vars);
        h.ready(&http).await;
        let phase = load(urls(&h.url("")), seconds, Some(child.id())).await;
        println!("round {round} s3: {:.0}/s p99 {:.1} ms peak {:.0} MB", phase.per_second, phase.p99_ms, phase.peak_mb);
        s3_phases.push(phase);
        drop_child(child);
        let phase = load(direct.clone(), seconds, None).await;
        println!("round {round} floor (S3 server directly): {:.0}/s p99 {:.1} ms", phase.per_second, phase.p99_ms);
        floor_phases.push(phase);
    }
    let _ = moto.kill();
    let _ = moto.wait();
    let mean = |p: &[Phase], f: fn(&Phase) -> f64| p.iter().map(f).sum::<f64>() / p.len() as f64;
    let max = |p: &[Phase], f: fn(&Phase) -> f64| p.iter().map(f).fold(f64::MIN, f64::max);
    let (file_rate, s3_rate, floor_rate) = (
        mean(&file_phases, |p| p.per_second),
        mean(&s3_phases, |p| p.per_second),
        mean(&floor_phases, |p| p.per_second),
    );
    let s3_p99 = max(&s3_phases, |p| p.p99_ms);
    let floor_p99 = max(&floor_phases, |p| p.p99_ms);
    let peak = max(&file_phases, |p| p.peak_mb).max(max(&s3_phases, |p| p.peak_mb));
    let ratio = s3_rate / file_rate;
    let command = "`cargo bench --bench storage`".to_owned();
    let rows = vec![
        figures::Row {
            what: format!(
                "an image of 1 MB through a local S3 server (moto), {CLIENTS} clients, {} images",
                figures::thousands(images as u64)
            ),
            figure: format!("{s3_rate:.0}/s, p99 {s3_p99:.1} ms"),
            baseline: format!(
                "the folder store in the same run {file_rate:.0}/s: **{ratio:.2}**; the floor, the S3 server fetched \
                 directly by the same clients: {floor_rate:.0}/s, p99 {floor_p99:.1} ms (the service gives {:.2} of it)",
                s3_rate / floor_rate
            ),
            target: format!(
                "≥ 0.5 of the folder store ({}), p99 < 50 ms ({})",
                figures::met(ratio >= 0.5),
                if s3_p99 < 50.0 { "met".to_owned() } else { format!("**not met**: the floor's own p99 is {floor_p99:.1} ms") }
            ),
            command: command.clone(),
        },
        figures::Row {
            what: format!(
                "service memory while serving {} images of 1 MB to {CLIENTS} clients, folder and S3 stores",
                figures::thousands(images as u64)
            ),
            figure: format!("peak {peak:.0} MB"),
            baseline: String::new(),
            target: format!("< 100 MB ({})", figures::met(peak < 100.0)),
            command,
        },
    ];
    figures::record(&rows, full_run);
}

/// Stops a service (SIGTERM) and waits for it.
fn drop_child(mut child: Child) {
    service::signal(child.id() as i32, nix::sys::signal::Signal::SIGTERM);
    let _ = child.wait();
}
