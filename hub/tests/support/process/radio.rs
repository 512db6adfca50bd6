//! A fake Bluetooth radio: BlueZoo (PyPI `bluezoo`, a user-space mock of BlueZ's D-Bus
//! service, with the fixes of `../shared/tools/bluezoo/bluezoo_patched.py` for lost links)
//! on a private `dbus-daemon` given as the system bus, with two adapters that see each
//! other: `hci0` for the node, `hci1` for fake boards.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::{append, wait_for};

pub struct FakeRadio {
    bus: Child,
    bluezoo: Child,
    /// `DBUS_SYSTEM_BUS_ADDRESS` for every process on this radio.
    pub address: String,
    pub log: PathBuf,
}

/// A bus that lets every peer own names and call anything: it is private to the test.
const BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=SOCKET</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <allow user="*"/>
  </policy>
</busconfig>
"#;

impl FakeRadio {
    /// The bus and BlueZoo in `dir`, once both adapters are up.
    pub fn start(dir: &Path) -> FakeRadio {
        let socket = dir.join("system_bus");
        let config = dir.join("bus.conf");
        std::fs::write(
            &config,
            BUS_CONFIG.replace("SOCKET", &socket.display().to_string()),
        )
        .unwrap();
        let log = dir.join("radio.log");
        let mut bus = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .arg("--nofork")
            .stdout(Stdio::null())
            .stderr(append(&log))
            .spawn()
            .expect("dbus-daemon (Debian's dbus-daemon; .ci/run installs it)");
        wait_for(
            "dbus-daemon",
            &mut bus,
            &log,
            Duration::from_secs(10),
            || socket.exists(),
        );
        let address = format!("unix:path={}", socket.display());
        let patched = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/tools/bluezoo/bluezoo_patched.py");
        let mut bluezoo = Command::new("python3")
            .arg(patched)
            .args(["--auto-enable", "--scan-interval", "1"])
            .args([
                "--adapter",
                "00:00:00:11:11:11",
                "--adapter",
                "00:00:00:22:22:22",
            ])
            .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
            .stdout(append(&log))
            .stderr(append(&log))
            .spawn()
            .expect("python3 with bluezoo (PyPI; .ci/run installs it)");
        wait_for(
            "BlueZoo",
            &mut bluezoo,
            &log,
            Duration::from_secs(20),
            || std::fs::read_to_string(&log).is_ok_and(|l| l.contains("Adding adapter[1]")),
        );
        FakeRadio {
            bus,
            bluezoo,
            address,
            log,
        }
    }
}

impl Drop for FakeRadio {
    fn drop(&mut self) {
        let _ = self.bluezoo.kill();
        let _ = self.bluezoo.wait();
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}
