//! Debian's Chromium, driven by playwright-core through `tests/browser/agent.mjs`: the
//! supervision page's tests and bench open the page in a real browser and read its DOM.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// Where `agent.mjs` and its `node_modules` are.
pub fn agent_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

/// Where screenshots go: `target/screenshots/`, kept as CI artifacts.
pub fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("screenshots");
    std::fs::create_dir_all(&dir).expect("creating target/screenshots");
    dir
}

/// One headless Chromium with one page.
pub struct Browser {
    child: Child,
    commands: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl Browser {
    pub fn start() -> Browser {
        Browser::launch(None)
    }

    /// A browser whose page is `device`'s, by playwright's descriptor ("Pixel 7"): its
    /// viewport, touch and mobile user agent.
    pub fn on_device(device: &str) -> Browser {
        Browser::launch(Some(device))
    }

    fn launch(device: Option<&str>) -> Browser {
        let dir = agent_dir();
        assert!(
            dir.join("node_modules/playwright-core").is_dir(),
            "playwright-core is not installed: run `npm ci --prefix hub/tests/browser` (.ci/run does)"
        );
        assert!(
            std::path::Path::new("/usr/bin/chromium").exists()
                || std::env::var_os("CHROMIUM").is_some(),
            "Chromium is not installed: `apt-get install chromium` (.ci/run does), or set CHROMIUM"
        );
        let mut command = Command::new("node");
        if let Some(device) = device {
            command.env("DEVICE", device);
        }
        let mut child = command
            .arg(dir.join("agent.mjs"))
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting node (the browser tests need Node.js)");
        let commands = child.stdin.take().expect("piped stdin");
        let answers = BufReader::new(child.stdout.take().expect("piped stdout"));
        Browser {
            child,
            commands,
            answers,
        }
    }

    fn command(&mut self, command: Value) -> Result<Value, String> {
        writeln!(self.commands, "{command}").expect("the browser agent is running");
        let mut line = String::new();
        self.answers
            .read_line(&mut line)
            .expect("the browser agent answers");
        let answer: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("browser agent answered {line:?}: {e}"));
        if answer["ok"] == true {
            Ok(answer["value"].clone())
        } else {
            Err(answer["error"].as_str().unwrap_or("?").to_owned())
        }
    }

    pub fn goto(&mut self, url: &str) {
        self.command(json!({"cmd": "goto", "url": url}))
            .unwrap_or_else(|e| panic!("opening {url}: {e}"));
    }

    /// Opens the supervision page at `url` and waits until its live stream delivered the
    /// hall.
    pub fn open_page(&mut self, url: &str) {
        self.goto(url);
        self.expect(
            "the hall arrives",
            "window.zeitnot.stats.halls > 0",
            Duration::from_secs(20),
        );
    }

    /// The value of a JavaScript expression in the page.
    pub fn eval(&mut self, expr: &str) -> Value {
        self.command(json!({"cmd": "eval", "expr": expr}))
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    /// Waits until `expr` is truthy in the page; its value and how long that took, or the
    /// agent's error (a timeout).
    pub fn wait(&mut self, expr: &str, timeout: Duration) -> Result<(Value, Duration), String> {
        let answer = self.command(json!({
            "cmd": "wait", "expr": expr, "timeout_ms": timeout.as_millis() as u64
        }))?;
        let waited = Duration::from_millis(answer["waited_ms"].as_u64().unwrap_or(0));
        Ok((answer["value"].clone(), waited))
    }

    /// Like [`Browser::wait`], but a timeout fails the test with `what`.
    pub fn expect(&mut self, what: &str, expr: &str, timeout: Duration) -> Value {
        self.wait(expr, timeout)
            .unwrap_or_else(|e| panic!("{what}: not within {timeout:?}: {e}"))
            .0
    }

    pub fn click(&mut self, selector: &str) {
        self.command(json!({"cmd": "click", "selector": selector}))
            .unwrap_or_else(|e| panic!("clicking {selector}: {e}"));
    }

    /// Types `value` into the input `selector`.
    pub fn fill(&mut self, selector: &str, value: &str) {
        self.command(json!({"cmd": "fill", "selector": selector, "value": value}))
            .unwrap_or_else(|e| panic!("filling {selector}: {e}"));
    }

    /// Touches `selector` (a device with touch: [`Browser::on_device`]).
    pub fn tap(&mut self, selector: &str) {
        self.command(json!({"cmd": "tap", "selector": selector}))
            .unwrap_or_else(|e| panic!("tapping {selector}: {e}"));
    }

    /// Resizes the page's viewport.
    pub fn viewport(&mut self, width: u32, height: u32) {
        self.command(json!({"cmd": "viewport", "width": width, "height": height}))
            .unwrap_or_else(|e| panic!("viewport {width}x{height}: {e}"));
    }

    /// Runs `script` in every page opened from now on, before the page's own scripts.
    pub fn init_script(&mut self, script: &str) {
        self.command(json!({"cmd": "init", "script": script}))
            .unwrap_or_else(|e| panic!("init script: {e}"));
    }

    /// The answer the page's next `prompt()` gets.
    pub fn answer_prompts(&mut self, text: &str) {
        self.command(json!({"cmd": "dialog", "answer": text}))
            .expect("setting the prompt's answer");
    }

    /// A screenshot of the page as `target/screenshots/{name}.png`.
    pub fn screenshot(&mut self, name: &str) -> PathBuf {
        let path = screenshot_dir().join(format!("{name}.png"));
        self.command(json!({"cmd": "screenshot", "path": path}))
            .unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
        path
    }

    /// A screenshot the README shows, `docs/img/{name}.png`: taken again by every run of
    /// the test that makes it, so the picture is today's page.
    pub fn screenshot_for_docs(&mut self, name: &str) -> PathBuf {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/img")
            .join(format!("{name}.png"));
        self.command(json!({"cmd": "screenshot", "path": path}))
            .unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
