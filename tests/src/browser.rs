//! Harness for the board's browser tests: Debian's headless Chromium driven through its
//! `chromedriver` (WebDriver, by `fantoccini`), against a real `fivezero-board`. The driver is a
//! child process on a free loopback port, killed when the harness is dropped; screenshots go to
//! `target/board-screenshots/` (kept as the test run's artifacts).

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// Where the browser tests' screenshots are written.
pub fn screenshot_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/board-screenshots"
    ))
}

/// Why the browser tests cannot run here, if they cannot (no chromedriver on PATH).
pub fn unavailable() -> Option<String> {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("chromedriver").is_file()));
    (!found).then(|| {
        "no chromedriver on PATH (Debian's chromium and chromium-driver; scripts/test-board.sh \
         installs them as root)"
            .to_string()
    })
}

/// A headless Chromium under its driver.
pub struct Browser {
    driver: Child,
    pub client: Client,
}

impl Browser {
    pub async fn start() -> Browser {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        // Its own process group: the browsers it starts go with it when the test ends.
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let caps = json!({
            "goog:chromeOptions": {
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,1000"]
            }
        });
        let Value::Object(caps) = caps else {
            unreachable!()
        };
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a Chromium session");
        Browser { driver, client }
    }

    /// Elements matching `css` now.
    pub async fn all(&self, css: &str) -> Vec<Element> {
        self.client
            .find_all(Locator::Css(css))
            .await
            .unwrap_or_default()
    }

    pub async fn count(&self, css: &str) -> usize {
        self.all(css).await.len()
    }

    /// Polls `probe` until it gives a value; past `timeout`, fails with its last complaint and
    /// the page's state.
    async fn poll<T>(
        &self,
        timeout: Duration,
        mut probe: impl AsyncFnMut(&Self) -> Result<T, String>,
    ) -> T {
        let end = Instant::now() + timeout;
        loop {
            match probe(self).await {
                Ok(v) => return v,
                Err(why) if Instant::now() > end => {
                    panic!(
                        "{why} after {timeout:?}; page state: {}",
                        self.debug().await
                    )
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    /// The first element matching `css`, waiting up to `timeout` for it.
    pub async fn wait(&self, css: &str, timeout: Duration) -> Element {
        self.poll(timeout, async |b| {
            b.all(css)
                .await
                .into_iter()
                .next()
                .ok_or_else(|| format!("no {css}"))
        })
        .await
    }

    /// Waits until `count(css)` satisfies `ok`; returns the count.
    pub async fn wait_count(
        &self,
        css: &str,
        timeout: Duration,
        ok: impl Fn(usize) -> bool,
    ) -> usize {
        self.poll(timeout, async |b| {
            let n = b.count(css).await;
            if ok(n) {
                Ok(n)
            } else {
                Err(format!("{css}: {n} elements"))
            }
        })
        .await
    }

    /// Waits until the text of `css` satisfies `ok`; returns it.
    pub async fn wait_text(
        &self,
        css: &str,
        timeout: Duration,
        ok: impl Fn(&str) -> bool,
    ) -> String {
        self.poll(timeout, async |b| {
            let t = b.text(css).await;
            if ok(&t) {
                Ok(t)
            } else {
                Err(format!("{css} reads {t:?}"))
            }
        })
        .await
    }

    /// The text of `#id` (empty when it has none).
    pub async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(e) => e.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Clicks the first element matching `css`, again when the page redrew it in between (a
    /// live analysis redraws its table four times a second).
    pub async fn click(&self, css: &str) {
        self.poll(Duration::from_secs(10), async |b| {
            let e = b
                .all(css)
                .await
                .into_iter()
                .next()
                .ok_or_else(|| format!("no {css}"))?;
            e.click().await.map_err(|e| format!("click {css}: {e}"))
        })
        .await
    }

    /// Clicks the board's point (x, y).
    pub async fn click_point(&self, x: u32, y: u32) {
        self.click(&format!("#board rect.hit[data-x=\"{x}\"][data-y=\"{y}\"]"))
            .await;
    }

    /// Replaces the value of an input or textarea.
    pub async fn fill(&self, css: &str, text: &str) {
        let e = self.wait(css, Duration::from_secs(10)).await;
        e.clear().await.expect("clear");
        e.send_keys(text).await.expect("type");
    }

    pub async fn select(&self, css: &str, value: &str) {
        self.wait(css, Duration::from_secs(10))
            .await
            .select_by_value(value)
            .await
            .unwrap_or_else(|e| panic!("select {value} in {css}: {e}"));
    }

    /// Runs `script` in the page and returns what it returns.
    pub async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script {script}: {e}"))
    }

    /// Saves a screenshot as `target/board-screenshots/NAME.png`; returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("a screenshot");
        std::fs::create_dir_all(screenshot_dir()).expect("screenshot folder");
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("screenshot written");
        path
    }

    /// What a failed wait shows: the status, error and the page's last state.
    async fn debug(&self) -> String {
        let r = self
            .client
            .execute(
                "return JSON.stringify({status: document.querySelector('#status')?.textContent, \
                 error: document.querySelector('#error')?.textContent, \
                 fault: document.querySelector('#fault')?.textContent, \
                 queue: document.querySelector('#queue')?.textContent, \
                 state: window.fivezero && window.fivezero.state})",
                Vec::new(),
            )
            .await;
        format!("{r:?}")
    }

    /// Ends the browser session (the driver goes when the harness is dropped).
    pub async fn close(&self) {
        let _ = self.client.clone().close().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the driver's process group, which it leads; no memory is touched.
        unsafe { libc::kill(-(self.driver.id() as i32), libc::SIGKILL) };
        let _ = self.driver.wait();
    }
}
