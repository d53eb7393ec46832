//! A real headless Chromium driven through chromedriver, or Firefox ESR through geckodriver,
//! for the tests that look at pages, and a way to serve an app in the test's own process.
//! Shared by the browser tests.
//!
//! Needs Debian's `chromium` and `chromium-driver`, and `firefox-esr` with `geckodriver`
//! (`cargo install geckodriver`); `.ci/run` installs them. The suites that use it are built
//! only with `LEADTRACK_BROWSER_TESTS=required` (`build.rs`), and then fail without them.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use fantoccini::wd::Capabilities;
use fantoccini::{ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::sync::{Semaphore, SemaphorePermit};
use warp::Filter;

/// Where the browser and its driver are, unless the environment says otherwise.
pub(crate) fn binary(env: &str, default: &str) -> PathBuf {
    std::env::var_os(env).map_or_else(|| PathBuf::from(default), PathBuf::from)
}

/// Which browser a test runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// Debian's Chromium, through chromedriver.
    Chromium,
    /// Debian's Firefox ESR, through geckodriver (WebDriver over Marionette).
    Firefox,
}

/// Each check (an `async fn` of an [`Engine`]) as two tests, `chromium::CHECK` and
/// `firefox::CHECK`, under `#[TEST]` (a tokio test attribute): run one engine's with a
/// filter (`-- inbox::firefox::`), and the two in parallel, as any two tests.
macro_rules! in_both_browsers {
    (#[$test:meta] $($check:ident),* $(,)?) => {
        mod chromium {
            $(
                #[$test]
                async fn $check() {
                    super::$check($crate::support::browser::Engine::Chromium).await;
                }
            )*
        }
        mod firefox {
            $(
                #[$test]
                async fn $check() {
                    super::$check($crate::support::browser::Engine::Firefox).await;
                }
            )*
        }
    };
}
pub(crate) use in_both_browsers;

/// A DevTools command sent through chromedriver (`POST /session/{id}/goog/cdp/execute`).
#[derive(Debug)]
struct Cdp(&'static str, Value);

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (warp::http::Method, Option<String>) {
        let body = json!({"cmd": self.0, "params": self.1});
        (warp::http::Method::POST, Some(body.to_string()))
    }
}

/// Browsers running at once in this process: one a core. A browser keeps a core busy, where
/// most tests wait on sockets and timers; so however many tests run at once
/// (`RUST_TEST_THREADS`), a test waits here for its browser rather than slow every other.
static BROWSERS: LazyLock<Semaphore> = LazyLock::new(|| {
    Semaphore::new(std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
});

/// A browser session and the driver process behind it.
pub(crate) struct Browser {
    /// The WebDriver session.
    pub(crate) client: fantoccini::Client,
    /// Which browser it is.
    pub(crate) engine: Engine,
    driver: Child,
    _profile: tempfile::TempDir,
    _turn: SemaphorePermit<'static>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(id) = self.driver.id().and_then(|id| i32::try_from(id).ok()) {
            let group = nix::unistd::Pid::from_raw(id);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

impl Browser {
    /// Starts chromedriver and a headless Chromium.
    pub(crate) async fn start() -> Self {
        Self::start_in(Engine::Chromium).await
    }

    /// Starts the driver and a headless `engine`.
    pub(crate) async fn start_in(engine: Engine) -> Self {
        let turn = BROWSERS
            .acquire()
            .await
            .expect("the browsers' semaphore is never closed");
        match engine {
            Engine::Chromium => Self::start_chromium(turn).await,
            Engine::Firefox => Self::start_firefox(turn).await,
        }
    }

    /// Makes the page itself (the viewport) `width` × `height` CSS pixels: a laptop's screen,
    /// or a phone's, narrower than Chromium lets a window be (500 px), so Chromium emulates
    /// it (DevTools' `Emulation.setDeviceMetricsOverride`), and Firefox's window is sized
    /// around it.
    pub(crate) async fn viewport(&self, width: u32, height: u32) {
        let c = &self.client;
        if self.engine == Engine::Chromium {
            let metrics =
                json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false});
            c.issue_cmd(Cdp("Emulation.setDeviceMetricsOverride", metrics))
                .await
                .expect("emulate the screen");
        } else {
            self.bidi_viewport(width, height).await;
        }
        let inner = c
            .execute("return [window.innerWidth, window.innerHeight];", vec![])
            .await
            .unwrap();
        assert_eq!(inner, json!([width, height]), "the viewport");
    }

    /// Photographs the element `id` centred on a laptop's screen and on a phone's, into
    /// `target/screenshots/NAME-laptop.png` and `NAME-phone.png`, to be looked at; the
    /// viewport is a laptop's again afterwards.
    pub(crate) async fn photograph_at_both_widths(&self, id: &str, name: &str) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        for (width, height, screen) in [(1366, 768, "laptop"), (390, 844, "phone")] {
            self.viewport(width, height).await;
            let scroll =
                format!("document.getElementById('{id}').scrollIntoView({{block: 'center'}})");
            self.client.execute(&scroll, vec![]).await.unwrap();
            let png = self.client.screenshot().await.unwrap();
            std::fs::write(dir.join(format!("{name}-{screen}.png")), png).unwrap();
        }
        self.viewport(1366, 768).await;
    }

    /// Makes Chromium's pages see a dark (or a light) system: `prefers-color-scheme`
    /// (DevTools' `Emulation.setEmulatedMedia`).
    pub(crate) async fn prefer_dark(&self, dark: bool) {
        let scheme = if dark { "dark" } else { "light" };
        let media = json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]});
        self.client
            .issue_cmd(Cdp("Emulation.setEmulatedMedia", media))
            .await
            .expect("emulate the colour scheme");
    }

    /// Puts Chromium's pages in the time zone `zone` (an IANA name), whatever the
    /// machine's (DevTools' `Emulation.setTimezoneOverride`).
    pub(crate) async fn time_zone(&self, zone: &str) {
        self.client
            .issue_cmd(Cdp(
                "Emulation.setTimezoneOverride",
                json!({"timezoneId": zone}),
            ))
            .await
            .expect("emulate the time zone");
    }

    /// Firefox's viewport through WebDriver BiDi's `browsingContext.setViewport`
    /// (<https://w3c.github.io/webdriver-bidi/#command-browsingContext-setViewport>): its
    /// windows are 500 px wide at the least, and the command sizes the page inside.
    async fn bidi_viewport(&self, width: u32, height: u32) {
        use futures_util::{SinkExt, StreamExt};
        use tokio_tungstenite::tungstenite::Message;
        let url = self
            .client
            .capabilities()
            .and_then(|caps| caps.get("webSocketUrl"))
            .and_then(Value::as_str)
            .expect("Firefox gives a BiDi address")
            .to_owned();
        let context: String = self.client.window().await.unwrap().into();
        let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("connect to BiDi");
        let command = json!({"id": 1, "method": "browsingContext.setViewport",
            "params": {"context": context, "viewport": {"width": width, "height": height}}});
        socket
            .send(Message::text(command.to_string()))
            .await
            .unwrap();
        while let Some(message) = socket.next().await {
            let reply: Value = serde_json::from_str(message.unwrap().to_text().unwrap()).unwrap();
            if reply["id"] == 1 {
                assert_eq!(reply["type"], "success", "{reply}");
                break;
            }
        }
        let _ = socket.close(None).await;
    }

    /// Starts geckodriver and a headless Firefox ESR.
    async fn start_firefox(turn: SemaphorePermit<'static>) -> Self {
        let firefox = binary("LEADTRACK_FIREFOX", "/usr/bin/firefox-esr");
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
            .unwrap_or_default();
        let geckodriver = std::env::var_os("LEADTRACK_GECKODRIVER")
            .map_or_else(|| home.join("bin").join("geckodriver"), PathBuf::from);
        assert!(
            firefox.exists() && geckodriver.exists(),
            "the browser tests need {} and {}; install firefox-esr, and geckodriver with `cargo install geckodriver`",
            firefox.display(),
            geckodriver.display()
        );
        let (port, bidi) = (unclaimed_port(), unclaimed_port());
        // BiDi's own port too: Firefoxes of tests running at once would share 9222.
        let driver = Command::new(&geckodriver)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--websocket-port", &bidi.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("start geckodriver");
        wait_until_ready(port).await;
        let profile = tempfile::tempdir().expect("a browser profile directory");
        let mut capabilities = Capabilities::new();
        capabilities.insert("browserName".into(), json!("firefox"));
        // WebDriver BiDi, for sizing the page below the window's 500 px ([`Self::viewport`]).
        capabilities.insert("webSocketUrl".into(), json!(true));
        capabilities.insert(
            "moz:firefoxOptions".into(),
            json!({
                "binary": firefox,
                "args": ["-headless", "-profile", profile.path()],
                "prefs": {
                    "app.update.enabled": false,
                    "browser.shell.checkDefaultBrowser": false,
                    "datareporting.policy.dataSubmissionEnabled": false,
                    "network.captive-portal-service.enabled": false,
                    "browser.safebrowsing.malware.enabled": false,
                    "browser.safebrowsing.phishing.enabled": false,
                    // JSON as a plain page (as Chromium shows it), not in the viewer's own
                    // document, where a page's script and cookies cannot run.
                    "devtools.jsonview.enabled": false,
                },
            }),
        );
        let mut builder = ClientBuilder::new(HttpConnector::new());
        builder.capabilities(capabilities);
        let client = builder
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_or_else(|err| panic!("Firefox did not start under geckodriver: {err}"));
        Self {
            client,
            engine: Engine::Firefox,
            driver,
            _profile: profile,
            _turn: turn,
        }
    }

    /// Starts chromedriver and a headless Chromium.
    async fn start_chromium(turn: SemaphorePermit<'static>) -> Self {
        let chromium = binary("LEADTRACK_CHROMIUM", "/usr/bin/chromium");
        let chromedriver = binary("LEADTRACK_CHROMEDRIVER", "/usr/bin/chromedriver");
        assert!(
            chromium.exists() && chromedriver.exists(),
            "the browser tests need {} and {}; install chromium and chromium-driver",
            chromium.display(),
            chromedriver.display()
        );
        let profile = tempfile::tempdir().expect("a browser profile directory");
        let (driver, port) = start_chromedriver(&chromedriver, profile.path()).await;

        let mut capabilities = Capabilities::new();
        capabilities.insert("browserName".into(), json!("chrome"));
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-extensions", "--no-first-run", "--disable-quic",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }),
        );
        let mut builder = ClientBuilder::new(HttpConnector::new());
        builder.capabilities(capabilities);
        let client = builder
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_or_else(|err| panic!("Chromium did not start under chromedriver: {err}"));
        Self {
            client,
            engine: Engine::Chromium,
            driver,
            _profile: profile,
            _turn: turn,
        }
    }

    /// Ends the session.
    pub(crate) async fn close(self) {
        let _ = self.client.clone().close().await;
    }

    /// Sets a first-party cookie on the current page's host, as the GA and Meta tags do.
    pub(crate) async fn cookie(&self, name: &str, value: &str) {
        self.client
            .execute(
                "document.cookie = arguments[0] + '=' + arguments[1] + '; path=/; SameSite=Lax';",
                vec![json!(name), json!(value)],
            )
            .await
            .expect("set a cookie");
        let cookies = self
            .client
            .execute("return document.cookie;", vec![])
            .await
            .expect("read cookies");
        assert!(
            cookies
                .as_str()
                .is_some_and(|c| c.contains(&format!("{name}={value}"))),
            "{cookies}"
        );
    }

    /// Clicks the element with id `click`, then waits for the page showing id `shown`.
    pub(crate) async fn click_and_wait(&self, click: &str, shown: &str) {
        self.client
            .find(Locator::Id(click))
            .await
            .unwrap_or_else(|err| panic!("no #{click}: {err}"))
            .click()
            .await
            .unwrap_or_else(|err| panic!("clicking #{click}: {err}"));
        self.wait_for(shown).await;
    }

    /// Waits up to 15 seconds for an element with id `id`. Every failed look is tried
    /// again: chromedriver answers one that runs while the page navigates with "aborted by
    /// navigation", which fantoccini's own wait does not retry.
    pub(crate) async fn wait_for(&self, id: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            match self.client.find(Locator::Id(id)).await {
                Ok(_) => return,
                Err(err) if Instant::now() >= deadline => panic!("#{id} never appeared: {err}"),
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }
}

/// A free port for geckodriver, or Firefox's BiDi, to bind later: below the range the kernel
/// hands out for `bind(…:0)`. A port found free there and let go could go to a test's
/// server before Firefox bound it (seen: BiDi's address answered by a leadtrack server's
/// 404). Each call of a process takes the next port from a start of its own.
fn unclaimed_port() -> u16 {
    const LOWEST: u32 = 10_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    static SPAN: LazyLock<u32> = LazyLock::new(|| {
        let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .ok()
            .and_then(|range| range.split_whitespace().next()?.parse::<u32>().ok())
            .unwrap_or(32_768);
        ephemeral.saturating_sub(LOWEST).max(1)
    });
    let start = std::process::id().wrapping_mul(7_919);
    (0..*SPAN)
        .map(|_| LOWEST + start.wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed)) % *SPAN)
        .filter_map(|port| u16::try_from(port).ok())
        .find(|&port| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok())
        .expect("a free port below the ephemeral range")
}

/// chromedriver on a port of its own choosing, once it says which and answers there. A
/// start that says nothing in 30 seconds (seen under a loaded CI machine) is retried, twice.
/// Chromium's temporary files go into `profile`, which goes with the browser: a Chromium
/// killed with its driver (a session never closed) left its `org.chromium.Chromium.*`
/// directory in the system's temporary directory.
async fn start_chromedriver(chromedriver: &Path, profile: &Path) -> (Child, u16) {
    for _ in 0..3 {
        // Its own process group, so that Chromium (chromedriver's child) goes with it even
        // when a failing test never reaches `close`.
        let mut driver = Command::new(chromedriver)
            .arg("--port=0")
            .env("TMPDIR", profile)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("start chromedriver");
        let mut lines = BufReader::new(driver.stdout.take().expect("chromedriver stdout")).lines();
        let port = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(rest) = line.split("started successfully on port ").nth(1) {
                    return rest.trim_end_matches('.').trim().parse::<u16>().ok();
                }
            }
            None
        })
        .await
        .ok()
        .flatten();
        let Some(port) = port else {
            let _ = driver.kill().await;
            continue;
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        wait_until_ready(port).await;
        return (driver, port);
    }
    panic!("chromedriver never announced its port, in three starts");
}

async fn wait_until_ready(port: u16) {
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = match http
            .get(format!("http://127.0.0.1:{port}/status"))
            .send()
            .await
        {
            Ok(response) => response
                .json::<Value>()
                .await
                .is_ok_and(|v| v["value"]["ready"] == json!(true)),
            Err(_) => false,
        };
        if ready {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the WebDriver server never became ready"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Serves `filter` on a free port of this machine, in this process.
pub(crate) async fn serve(
    filter: impl Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible>
    + Clone
    + Send
    + Sync
    + 'static,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(warp::serve(filter).incoming(listener).run());
    addr
}
