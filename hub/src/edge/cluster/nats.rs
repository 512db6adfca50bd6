//! The hub's client of the NATS cluster: the journal stream and the lease's bucket, made
//! at the first start of a hall with the settings the journal needs.

use std::time::Duration;

use anyhow::Context;
use async_nats::jetstream::{self, kv, stream};

/// The journal stream's replicas: a cluster of three keeps every acknowledged record when
/// any one machine dies.
pub const REPLICAS: usize = 3;

/// How long a request to the cluster may take before it counts as failed: longer than a
/// leader election (about 2 s), shorter than the lease.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The cluster as one hub uses it.
#[derive(Clone)]
pub struct Cluster {
    pub client: async_nats::Client,
    pub js: jetstream::Context,
    pub stream: stream::Stream,
    pub lease: kv::Store,
    /// The subject the journal's messages are appended on.
    pub subject: String,
}

/// A user name and its password.
type Login = (String, String);

/// The servers of `urls` without the login some carry (`nats://USER:PASSWORD@HOST:PORT`),
/// and that login: the client sends one login, whichever server it reaches.
fn servers_and_login(
    urls: &[String],
) -> anyhow::Result<(Vec<async_nats::ServerAddr>, Option<Login>)> {
    let mut login = None;
    let mut servers = Vec::new();
    for url in urls {
        let mut parsed = url::Url::parse(url)
            .map_err(|e| anyhow::anyhow!("NATS server {:?}: {e}", strip_login(url)))?;
        if !parsed.username().is_empty() {
            let user = percent_decode(parsed.username());
            let password = percent_decode(parsed.password().unwrap_or_default());
            login.get_or_insert((user, password));
            // Infallible for a URL with a host.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
        }
        let server = parsed
            .as_str()
            .parse()
            .map_err(|e| anyhow::anyhow!("NATS server {parsed}: {e}"))?;
        servers.push(server);
    }
    anyhow::ensure!(!servers.is_empty(), "no NATS server given (--cluster)");
    Ok((servers, login))
}

/// A `nats://` server that is not this machine.
fn in_clear_off_loopback(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    let loopback = match parsed.host() {
        // A `nats://` URL's host is opaque to the url crate: an address is a "domain".
        Some(url::Host::Domain(name)) => {
            name.eq_ignore_ascii_case("localhost")
                || name
                    .trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => true,
    };
    parsed.scheme() == "nats" && !loopback
}

/// `url` with its login left out, for messages.
fn strip_login(url: &str) -> String {
    match url.split_once('@') {
        Some((scheme_login, host)) => {
            let scheme = scheme_login.split_once("://").map_or("", |(s, _)| s);
            format!("{scheme}://…@{host}")
        }
        None => url.to_owned(),
    }
}

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// The stream's and bucket's names for `event` (NATS names take no dots).
fn names(event: &str) -> (String, String, String) {
    let safe = event.replace('.', "_");
    (
        format!("ZEITNOT_JOURNAL_{safe}"),
        format!("zeitnot.journal.{safe}"),
        format!("zeitnot_lease_{safe}"),
    )
}

impl Cluster {
    /// Connects to any of `urls` (`nats://[USER:PASSWORD@]HOST:PORT`), and makes the
    /// journal stream and the lease's bucket if the hall has none yet.
    /// `tls://` servers are reached over TLS with the hall CA (`ca`, PEM) pinned; a
    /// `nats://` server off this machine is warned about: the cluster's login and the
    /// journal's records would cross the hall's network in clear.
    pub async fn connect(
        urls: &[String],
        event: &str,
        replicas: usize,
        ca: &std::path::Path,
    ) -> anyhow::Result<Cluster> {
        let (servers, login) = servers_and_login(urls)?;
        let mut options = async_nats::ConnectOptions::new();
        if let Some((user, password)) = login {
            options = options.user_and_password(user, password);
        }
        let tls = urls.iter().any(|u| u.starts_with("tls://"));
        if tls {
            options = options
                .require_tls(true)
                .add_root_certificates(ca.to_path_buf());
        }
        for url in urls.iter().filter(|u| !tls && in_clear_off_loopback(u)) {
            tracing::warn!(
                server = %strip_login(url),
                "the NATS server is reached in clear off this machine: the cluster's login and the journal cross the network readable; use tls:// (deploy/nats/)"
            );
        }
        let shown: Vec<String> = servers.iter().map(|s| s.as_url_str().to_owned()).collect();
        let client = options
            .name(format!("zeitnot-hub {event}"))
            .connection_timeout(Duration::from_secs(3))
            .retry_on_initial_connect()
            .max_reconnects(None)
            // The first server is this hub's machine's: the journal's leaders are kept off
            // it ([`Cluster::keep_leaders_off`]).
            .retain_servers_order()
            .connect(servers)
            .await
            .with_context(|| format!("connecting to the NATS cluster at {}", shown.join(",")))?;
        let mut js = jetstream::new(client.clone());
        js.set_timeout(REQUEST_TIMEOUT);
        let (stream_name, subject, bucket) = names(event);
        let stream = js
            .get_or_create_stream(stream::Config {
                name: stream_name.clone(),
                subjects: vec![subject.clone()],
                storage: stream::StorageType::File,
                num_replicas: replicas,
                retention: stream::RetentionPolicy::Limits,
                // The journal is the hall's record: nothing ages out or is deleted.
                deny_delete: true,
                deny_purge: true,
                allow_direct: true,
                ..Default::default()
            })
            .await
            .with_context(|| format!("the journal stream {stream_name}"))?;
        let lease = match js.get_key_value(&bucket).await {
            Ok(store) => store,
            Err(_) => js
                .create_key_value(kv::Config {
                    bucket: bucket.clone(),
                    history: 1,
                    num_replicas: replicas,
                    storage: stream::StorageType::File,
                    ..Default::default()
                })
                .await
                .with_context(|| format!("the lease's bucket {bucket}"))?,
        };
        Ok(Cluster {
            client,
            js,
            stream,
            lease,
            subject,
        })
    }

    /// The streams the hall needs to be served: the journal, the lease and the MQTT
    /// gateway's sessions and messages.
    fn served_by(&self) -> [String; 7] {
        [
            self.stream.cached_info().config.name.clone(),
            format!("KV_{}", self.lease.name),
            "$MQTT_sess".into(),
            "$MQTT_msgs".into(),
            "$MQTT_rmsgs".into(),
            "$MQTT_qos2in".into(),
            "$MQTT_out".into(),
        ]
    }

    /// Asks the streams the hall needs to elect a leader elsewhere when it is the server
    /// this hub is connected to (its own machine's): when that machine dies with the active
    /// hub, the standby then finds every leader alive, instead of waiting for elections
    /// (4 to 9 s each in NATS) before it can take over.
    pub async fn keep_leaders_off(&self) {
        let here = self.client.server_info().server_name;
        for name in self.served_by() {
            let Ok(mut stream) = self.js.get_stream(&name).await else {
                continue;
            };
            let Ok(info) = stream.info().await else {
                continue;
            };
            let leader = info.cluster.as_ref().and_then(|c| c.leader.clone());
            if leader.as_deref() != Some(here.as_str()) {
                continue;
            }
            let subject = format!("$JS.API.STREAM.LEADER.STEPDOWN.{name}");
            match self.client.request(subject, bytes::Bytes::new()).await {
                Ok(_) => {
                    tracing::info!(stream = %name, server = %here, "asked the stream's leader on this hub's server to step down")
                }
                Err(e) => {
                    tracing::warn!(stream = %name, error = %e, "the stream's leader did not step down")
                }
            }
        }
    }

    /// The stream's last sequence number now.
    pub async fn last_seq(&self) -> anyhow::Result<u64> {
        let info = self
            .stream
            .get_info()
            .await
            .context("asking the journal stream for its last record")?;
        Ok(info.state.last_sequence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_in_the_urls_is_taken_out_and_used_for_all() {
        let urls = vec![
            "nats://zeitnot-cluster:p%40ss@10.0.0.1:4222".to_owned(),
            "nats://10.0.0.2:4222".to_owned(),
        ];
        let (servers, login) = servers_and_login(&urls).unwrap();
        assert_eq!(login, Some(("zeitnot-cluster".into(), "p@ss".into())));
        let shown: Vec<&str> = servers.iter().map(|s| s.as_url_str()).collect();
        assert_eq!(shown, ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222"]);
        assert!(servers_and_login(&[]).is_err());
        let bad = servers_and_login(&["nats://u:secret@".into()]).unwrap_err();
        assert!(!bad.to_string().contains("secret"), "{bad}");
    }

    #[test]
    fn a_plain_server_off_this_machine_is_told_apart() {
        assert!(in_clear_off_loopback("nats://u:p@10.0.0.1:4222"));
        assert!(!in_clear_off_loopback("nats://127.0.0.1:4222"));
        assert!(!in_clear_off_loopback("nats://localhost:4222"));
        assert!(!in_clear_off_loopback("nats://[::1]:4222"));
        assert!(!in_clear_off_loopback("tls://u:p@10.0.0.1:4222"));
    }
}
