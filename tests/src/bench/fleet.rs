//! Pieces of the fleet bench (`bench-fleet`, issue 17 item 6) that are worth testing on their own:
//! a counting TCP proxy that attributes every HTTP request to the pulse that sent it, the
//! classification of those requests into the kinds the placement cost rules count, the
//! management-cluster capacities of a generated fleet, the spread of load, and the SVG plot of load
//! per management cluster as the fleet grows.
//!
//! Why a proxy: pulses run concurrently, so the fakes' global counters only give totals. Each
//! concurrency slot of the bench gets its own proxy in front of the HyperFleet API and of the
//! Maestro REST API, and runs its pulses one after another; the requests a slot's proxy saw between
//! a pulse's start and its exit are exactly that pulse's. The adapter waits for every answer, and
//! a request is logged before it is forwarded, so nothing is missed at exit. Both APIs speak
//! HTTP/1.1 in clear on loopback (reqwest without prior knowledge of HTTP/2), so the request lines
//! can be read off the byte stream; bodies are skipped by their `Content-Length`.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One request line seen by a [`Sniffer`]: method and request target (path and query, as sent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenRequest {
    pub method: String,
    pub target: String,
}

/// A TCP proxy on `127.0.0.1:0` forwarding to one upstream and logging the HTTP/1.1 request lines
/// the clients send. Dropping it stops accepting (open connections end with their peers).
#[derive(Debug)]
pub struct Sniffer {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<SeenRequest>>>,
    task: JoinHandle<()>,
}

impl Sniffer {
    /// Starts a proxy to `upstream`.
    ///
    /// # Errors
    /// When no port can be bound.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<Sniffer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let task_log = Arc::clone(&log);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let log = Arc::clone(&task_log);
                tokio::spawn(async move {
                    let _ = relay(client, upstream, log).await;
                });
            }
        });
        Ok(Sniffer { addr, log, task })
    }

    /// `http://127.0.0.1:<port>`, to give the client instead of the upstream's URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Takes the requests logged since the last call.
    pub fn take(&self) -> Vec<SeenRequest> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Drop for Sniffer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(
    client: TcpStream,
    upstream: SocketAddr,
    log: Arc<Mutex<Vec<SeenRequest>>>,
) -> std::io::Result<()> {
    let server = TcpStream::connect(upstream).await?;
    // As the fakes do (and Go's net package): no delayed-ACK stalls on the extra hop.
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let answers = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
        let _ = client_write.shutdown().await;
    });
    let mut parser = RequestParser::default();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = client_read.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        let seen = parser.feed(&buf[..n]);
        if !seen.is_empty() {
            log.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(seen);
        }
        server_write.write_all(&buf[..n]).await?;
    }
    let _ = server_write.shutdown().await;
    let _ = answers.await;
    Ok(())
}

/// Reads HTTP/1.1 request heads off a client's byte stream, skipping `Content-Length` bodies.
#[derive(Debug, Default)]
pub struct RequestParser {
    /// Bytes of an unfinished head.
    head: Vec<u8>,
    /// Body bytes still to skip.
    skip: usize,
    /// A body this parser cannot delimit (chunked) was seen: nothing after it is parsed.
    lost: bool,
}

/// A head larger than this is not HTTP from our clients: parsing stops (logged once).
const MAX_HEAD: usize = 64 * 1024;

impl RequestParser {
    /// Feeds the next bytes; returns the request lines completed by them.
    pub fn feed(&mut self, data: &[u8]) -> Vec<SeenRequest> {
        let mut out = Vec::new();
        if self.lost {
            return out;
        }
        let mut pending = data.to_vec();
        loop {
            let k = self.skip.min(pending.len());
            pending.drain(..k);
            self.skip -= k;
            self.head.append(&mut pending);
            let Some(end) = find(&self.head, b"\r\n\r\n") else {
                if self.head.len() > MAX_HEAD {
                    self.lose(&mut out, "a request head over 64 KiB");
                }
                return out;
            };
            let head: Vec<u8> = self.head.drain(..end + 4).collect();
            let text = String::from_utf8_lossy(&head);
            let mut lines = text.split("\r\n");
            let mut first = lines.next().unwrap_or_default().split(' ');
            let method = first.next().unwrap_or_default().to_owned();
            let target = first.next().unwrap_or_default().to_owned();
            let mut length = 0usize;
            let mut chunked = false;
            for line in lines {
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("transfer-encoding")
                    && value.to_ascii_lowercase().contains("chunked")
                {
                    chunked = true;
                }
            }
            out.push(SeenRequest { method, target });
            if chunked {
                self.lose(&mut out, "a chunked request body");
                return out;
            }
            self.skip = length;
            pending = std::mem::take(&mut self.head);
        }
    }

    fn lose(&mut self, out: &mut Vec<SeenRequest>, why: &str) {
        self.lost = true;
        self.head.clear();
        out.push(SeenRequest {
            method: "UNPARSED".into(),
            target: format!("the rest of this connection ({why})"),
        });
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The request kinds the placement cost rules count (P-design "Cost"), plus anything else seen.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequestKind {
    /// `GET /api/hyperfleet/v1/clusters/{id}`.
    HyperfleetCluster,
    /// `GET …/managementclusters?search=spec.region='<r>'`: the candidates of a create.
    McSearchByRegion,
    /// `GET …/managementclusters?search=spec.maestro_consumer='<c>'`: a placed work's MC record.
    McSearchByConsumer,
    /// Maestro `GET /resource-bundles?search=…` (not a count): a cluster's works.
    MaestroFind,
    /// Maestro `GET /resource-bundles?…&size=1` (read for `total`): a consumer's load.
    MaestroCount,
    /// Maestro `GET /resource-bundles/{id}`.
    MaestroGet,
    /// Maestro `DELETE /resource-bundles/{id}`.
    MaestroDelete,
    /// Maestro gRPC Publish (counted by the fake, not per pulse).
    MaestroPublish,
    /// Kubernetes `POST …/namespaces/{ns}/leases`: a placement lease created (or a 409).
    LeaseCreate,
    /// Kubernetes `GET …/namespaces/{ns}/leases/{name}`: a placement lease read after a 409.
    LeaseGet,
    /// Kubernetes `PUT …/namespaces/{ns}/leases/{name}`: a placement lease taken or released.
    LeaseUpdate,
    /// Anything else, as `<METHOD> <path with ids as {id}>`.
    Other(String),
}

impl RequestKind {
    /// Whether Maestro serves it (else the HyperFleet API).
    pub fn is_maestro(&self) -> bool {
        match self {
            RequestKind::MaestroFind
            | RequestKind::MaestroCount
            | RequestKind::MaestroGet
            | RequestKind::MaestroDelete
            | RequestKind::MaestroPublish => true,
            RequestKind::Other(label) => label.contains("/api/maestro/"),
            _ => false,
        }
    }

    /// Whether the Kubernetes API serves it (the placement lease).
    pub fn is_kube(&self) -> bool {
        match self {
            RequestKind::LeaseCreate | RequestKind::LeaseGet | RequestKind::LeaseUpdate => true,
            RequestKind::Other(label) => label.contains(" /apis/") || label.contains(" /api/v1/"),
            _ => false,
        }
    }
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self {
            RequestKind::HyperfleetCluster => "HyperFleet GET cluster",
            RequestKind::McSearchByRegion => "HyperFleet MC search by region",
            RequestKind::McSearchByConsumer => "HyperFleet MC search by consumer",
            RequestKind::MaestroFind => "Maestro find search",
            RequestKind::MaestroCount => "Maestro count search",
            RequestKind::MaestroGet => "Maestro GET bundle",
            RequestKind::MaestroDelete => "Maestro DELETE bundle",
            RequestKind::MaestroPublish => "Maestro publish (gRPC)",
            RequestKind::LeaseCreate => "Kubernetes lease create",
            RequestKind::LeaseGet => "Kubernetes lease GET",
            RequestKind::LeaseUpdate => "Kubernetes lease PUT",
            RequestKind::Other(label) => label,
        };
        f.pad(label)
    }
}

const HYPERFLEET: &str = "/api/hyperfleet/v1/";
const BUNDLES: &str = "/api/maestro/v1/resource-bundles";
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/";

/// The kind of request `method target`.
pub fn classify(request: &SeenRequest) -> RequestKind {
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((request.target.as_str(), ""));
    let params = query_params(query);
    let method = request.method.as_str();
    if let Some(rest) = path.strip_prefix(HYPERFLEET) {
        let segments: Vec<&str> = rest.split('/').collect();
        match (method, segments.as_slice()) {
            ("GET", ["clusters", id]) if !id.is_empty() => return RequestKind::HyperfleetCluster,
            ("GET", ["managementclusters"]) => {
                let search = params.get("search").map(String::as_str).unwrap_or("");
                match search.split_once('=').map(|(field, _)| field.trim()) {
                    Some("spec.region") => return RequestKind::McSearchByRegion,
                    Some("spec.maestro_consumer") => return RequestKind::McSearchByConsumer,
                    _ => {}
                }
            }
            _ => {}
        }
    } else if let Some(rest) = path.strip_prefix(BUNDLES) {
        match (method, rest) {
            ("GET", "" | "/") => {
                return if params.get("size").map(String::as_str) == Some("1") {
                    RequestKind::MaestroCount
                } else {
                    RequestKind::MaestroFind
                };
            }
            ("GET", id) if id.len() > 1 && !id[1..].contains('/') => {
                return RequestKind::MaestroGet;
            }
            ("DELETE", id) if id.len() > 1 && !id[1..].contains('/') => {
                return RequestKind::MaestroDelete;
            }
            _ => {}
        }
    } else if let Some(rest) = path.strip_prefix(LEASES) {
        let segments: Vec<&str> = rest.split('/').collect();
        match (method, segments.as_slice()) {
            ("POST", [_, "leases"]) => return RequestKind::LeaseCreate,
            ("GET", [_, "leases", name]) if !name.is_empty() => return RequestKind::LeaseGet,
            ("PUT", [_, "leases", name]) if !name.is_empty() => return RequestKind::LeaseUpdate,
            _ => {}
        }
    }
    RequestKind::Other(format!("{method} {}", generic_path(path)))
}

/// `path` with every segment that looks like an id (has a digit and a dash, or is 32+ hex) as
/// `{id}`, so "other" kinds group.
fn generic_path(path: &str) -> String {
    path.split('/')
        .map(|s| {
            let id_like = (s.contains('-') && s.bytes().any(|b| b.is_ascii_digit()))
                || (s.len() >= 32 && s.bytes().all(|b| b.is_ascii_hexdigit()));
            if id_like { "{id}" } else { s }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The query's parameters, percent-decoded (`+` as a space).
pub fn query_params(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// Decodes `%XX` escapes and `+`; a malformed escape is kept as written.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Requests of one pulse, by kind.
pub fn count_kinds(requests: &[SeenRequest]) -> BTreeMap<RequestKind, u64> {
    let mut counts = BTreeMap::new();
    for r in requests {
        *counts.entry(classify(r)).or_default() += 1;
    }
    counts
}

/// `max_hosted_clusters` of the `per_region` management clusters of a region that receives
/// `clusters` control planes, so that the region's clusters fit with one of them full: the first
/// holds half an even share (it fills up early and is then passed over as `full`), the others
/// share the rest with 10 % headroom (never full). One management cluster alone gets the region's
/// clusters plus 10 %.
pub fn capacities(clusters: u64, per_region: usize) -> Vec<u64> {
    let per_region_u = per_region as u64;
    match per_region {
        0 => Vec::new(),
        1 => vec![clusters + clusters.div_ceil(10)],
        _ => {
            let small = clusters / (2 * per_region_u);
            let rest = clusters - small;
            let others = per_region_u - 1;
            let share = rest.div_ceil(others);
            let big = share + share.div_ceil(10);
            std::iter::once(small)
                .chain(std::iter::repeat_n(big, per_region - 1))
                .collect()
        }
    }
}

/// The `ManagementCluster` kind's path segment (`fixtures/hyperfleet/real-api/47`).
pub const MC_PLURAL: &str = "managementclusters";

/// The body of `POST /managementclusters` for one management cluster: the spec the README
/// defines (`region`, `maestro_consumer`, `max_hosted_clusters`, `cordoned`).
pub fn management_cluster_body(
    name: &str,
    region: &str,
    consumer: &str,
    max: Option<u64>,
) -> Value {
    json!({
        "kind": "ManagementCluster",
        "name": name,
        "labels": {"region": region},
        "spec": {
            "region": region,
            "maestro_consumer": consumer,
            "max_hosted_clusters": max,
            "cordoned": false,
        },
    })
}

/// `mgmt-health`'s report that a management cluster at `generation` is available, in recording
/// 49's shape (so its `Reconciled` is True).
pub fn mgmt_health_report(generation: &Value, observed_time: &str, max: Option<u64>) -> Value {
    json!({
        "adapter": "mgmt-health",
        "observed_generation": generation,
        "observed_time": observed_time,
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestsApplied", "message": "resources applied"},
            {"type": "Available", "status": "True", "reason": "Ready", "message": "available=True"},
            {"type": "Health", "status": "True", "reason": "Healthy", "message": "adapter healthy"},
            {"type": "Finalized", "status": "False", "reason": "NotFinalizing", "message": "finalized=False"}
        ],
        "data": {"hosted_clusters": 0, "capacity": max}
    })
}

/// The body of `POST /clusters` for cluster `name` in `region`: the `local-pulse` GCP spec with
/// the region (and a zone of it) set.
pub fn cluster_body(name: &str, region: &str) -> Value {
    let mut spec = crate::local_pulse::cluster_object()["spec"].clone();
    spec["platform"]["gcp"]["region"] = region.into();
    spec["platform"]["gcp"]["zone"] = format!("{region}-b").into();
    json!({
        "kind": "Cluster",
        "name": name,
        "labels": {"region": region},
        "spec": spec,
    })
}

/// A name of exactly `length` characters: `prefix` then `index`, zero-padded.
pub fn padded_name(prefix: &str, index: usize, length: usize) -> String {
    let width = length.saturating_sub(prefix.len()).max(1);
    format!("{prefix}{index:0width$}")
}

/// Highest and lowest of `loads` (0, 0 when empty).
pub fn spread(loads: &[u64]) -> (u64, u64) {
    let max = loads.iter().copied().max().unwrap_or(0);
    let min = loads.iter().copied().min().unwrap_or(0);
    (max, min)
}

/// One management cluster's line in the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend: the management cluster's name.
    pub name: String,
    pub region: String,
    /// `max_hosted_clusters`, drawn as a dashed line (`None` in static mode: no inventory).
    pub capacity: Option<u64>,
    /// (clusters placed in the whole fleet, control planes on this management cluster).
    pub points: Vec<(u64, u64)>,
}

/// Colours of the lines, one per management cluster of a region (then repeated).
const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
/// Dash patterns, one per region, so regions read apart.
const DASHES: [&str; 4] = ["", "6 3", "2 2", "8 3 2 3"];

/// A hand-written SVG of `series`: x = clusters placed, y = control planes per management
/// cluster, one polyline each (its colour by its place in its region, its dash by the region), its
/// capacity a thin dotted line of the same colour, and a legend.
pub fn svg(title: &str, subtitle: &str, series: &[Series]) -> String {
    let (width, height) = (1000.0_f64, 560.0_f64);
    let (left, right, top, bottom) = (70.0_f64, 290.0_f64, 64.0_f64, 60.0_f64);
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let x_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .max()
        .unwrap_or(1)
        .max(1);
    let y_data = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1).chain(s.capacity))
        .max()
        .unwrap_or(1)
        .max(1);
    let x_step = nice_step(x_max);
    let y_step = nice_step(y_data);
    let x_top = x_max.div_ceil(x_step) * x_step;
    // At least 5 % above the highest line or capacity, so none runs along the frame.
    let y_top = (y_data + y_data.div_ceil(20)).div_ceil(y_step) * y_step;
    let px = |x: u64| left + plot_w * x as f64 / x_top as f64;
    let py = |y: u64| top + plot_h - plot_h * y as f64 / y_top as f64;
    let mut out = String::new();
    out.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    ));
    out.push_str(&format!(
        "<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"26\" font-size=\"15\">{}</text>\n\
         <text x=\"{left}\" y=\"46\" fill=\"#555\">{}</text>\n",
        xml_escape(title),
        xml_escape(subtitle)
    ));
    // Grid and ticks.
    let mut x = 0;
    while x <= x_top {
        let gx = px(x);
        out.push_str(&format!(
            "<line x1=\"{gx:.1}\" y1=\"{top}\" x2=\"{gx:.1}\" y2=\"{:.1}\" stroke=\"#e0e0e0\"/>\n\
             <text x=\"{gx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{x}</text>\n",
            top + plot_h,
            top + plot_h + 18.0
        ));
        x += x_step;
    }
    let mut y = 0;
    while y <= y_top {
        let gy = py(y);
        out.push_str(&format!(
            "<line x1=\"{left}\" y1=\"{gy:.1}\" x2=\"{:.1}\" y2=\"{gy:.1}\" stroke=\"#e0e0e0\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{y}</text>\n",
            left + plot_w,
            left - 8.0,
            gy + 4.0
        ));
        y += y_step;
    }
    out.push_str(&format!(
        "<rect x=\"{left}\" y=\"{top}\" width=\"{plot_w}\" height=\"{plot_h}\" fill=\"none\" stroke=\"#444\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">clusters placed (whole fleet)</text>\n\
         <text x=\"18\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1})\">control planes per management cluster</text>\n",
        left + plot_w / 2.0,
        height - 18.0,
        top + plot_h / 2.0,
        top + plot_h / 2.0
    ));
    // Lines, coloured by their place within their region, dashed by region.
    let mut regions: Vec<&str> = Vec::new();
    let mut place_in_region: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, s) in series.iter().enumerate() {
        if !regions.contains(&s.region.as_str()) {
            regions.push(&s.region);
        }
        let region_index = regions.iter().position(|r| *r == s.region).unwrap_or(0);
        let place = place_in_region.entry(&s.region).or_default();
        let colour = PALETTE[*place % PALETTE.len()];
        *place += 1;
        let dash = DASHES[region_index % DASHES.len()];
        let dash_attr = if dash.is_empty() {
            String::new()
        } else {
            format!(" stroke-dasharray=\"{dash}\"")
        };
        if let Some(cap) = s.capacity {
            out.push_str(&format!(
                "<line x1=\"{left}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" stroke=\"{colour}\" \
                 stroke-width=\"0.8\" stroke-dasharray=\"1 3\"/>\n",
                left + plot_w,
                cy = py(cap)
            ));
        }
        let points: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        out.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.6\"{dash_attr} points=\"{}\"/>\n",
            points.join(" ")
        ));
        let ly = top + 8.0 + 18.0 * i as f64;
        let lx = left + plot_w + 16.0;
        let cap = s
            .capacity
            .map(|c| format!(" (max {c})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "<line x1=\"{lx:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash_attr}/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}{}</text>\n",
            lx + 28.0,
            lx + 34.0,
            ly + 4.0,
            xml_escape(&s.name),
            xml_escape(&cap)
        ));
    }
    out.push_str("</svg>\n");
    out
}

/// A round tick step giving 4 to 10 ticks up to `max`.
fn nice_step(max: u64) -> u64 {
    let mut step = 1;
    loop {
        for m in [1, 2, 5] {
            if max / (step * m) <= 8 {
                return step * m;
            }
        }
        step *= 10;
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, target: &str) -> SeenRequest {
        SeenRequest {
            method: method.into(),
            target: target.into(),
        }
    }

    #[test]
    fn the_parser_finds_every_request_line_across_reads_and_skips_bodies() {
        let mut p = RequestParser::default();
        let stream = b"GET /a HTTP/1.1\r\nhost: x\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 22\r\n\r\nGET /fake HTTP/1.1\r\n\r\nDELETE /c HTTP/1.1\r\n\r\n";
        // Fed one byte at a time: heads and the body split everywhere.
        let mut seen = Vec::new();
        for b in stream.iter() {
            seen.extend(p.feed(std::slice::from_ref(b)));
        }
        assert_eq!(
            seen,
            vec![req("GET", "/a"), req("POST", "/b"), req("DELETE", "/c")],
            "the 22-byte body holding a request line is skipped"
        );
        // And all at once.
        let mut p = RequestParser::default();
        assert_eq!(p.feed(stream).len(), 3);
    }

    #[test]
    fn a_chunked_body_stops_the_parse_and_says_so() {
        let mut p = RequestParser::default();
        let seen = p.feed(
            b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /y HTTP/1.1\r\n\r\n",
        );
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[1].method, "UNPARSED");
        assert!(p.feed(b"GET /z HTTP/1.1\r\n\r\n").is_empty());
    }

    #[test]
    fn requests_are_classified_by_the_cost_rule_kinds() {
        let id = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
        let lease = "hypershift-placement-8b1f3c2e-5d4a-5e6f-9a7b-0c1d2e3f4a5b";
        let cases = [
            (
                req("GET", &format!("/api/hyperfleet/v1/clusters/{id}")),
                RequestKind::HyperfleetCluster,
            ),
            (
                req(
                    "GET",
                    "/api/hyperfleet/v1/managementclusters?search=spec.region%3D%27us-east1%27&page=1",
                ),
                RequestKind::McSearchByRegion,
            ),
            (
                req(
                    "GET",
                    "/api/hyperfleet/v1/managementclusters?search=spec.maestro_consumer+%3D+%27mgmt-a%27",
                ),
                RequestKind::McSearchByConsumer,
            ),
            (
                req(
                    "GET",
                    "/api/hyperfleet/v1/managementclusters?search=status.conditions.Reconciled%3D%27True%27",
                ),
                RequestKind::Other("GET /api/hyperfleet/v1/managementclusters".into()),
            ),
            (
                req(
                    "GET",
                    "/api/hyperfleet/v1/managementclusters?search=spec.maestro_consumer%3D%27mgmt-a%27",
                ),
                RequestKind::McSearchByConsumer,
            ),
            (
                req(
                    "GET",
                    "/api/maestro/v1/resource-bundles?search=source%3D%27s%27&page=1&size=1",
                ),
                RequestKind::MaestroCount,
            ),
            (
                req(
                    "GET",
                    "/api/maestro/v1/resource-bundles?search=source%3D%27s%27&size=10",
                ),
                RequestKind::MaestroFind,
            ),
            (
                req("GET", &format!("/api/maestro/v1/resource-bundles/{id}")),
                RequestKind::MaestroGet,
            ),
            (
                req("DELETE", &format!("/api/maestro/v1/resource-bundles/{id}")),
                RequestKind::MaestroDelete,
            ),
            (
                req(
                    "GET",
                    &format!("/api/hyperfleet/v1/clusters/{id}/nodepools"),
                ),
                RequestKind::Other("GET /api/hyperfleet/v1/clusters/{id}/nodepools".into()),
            ),
            (
                req(
                    "POST",
                    "/apis/coordination.k8s.io/v1/namespaces/hyperfleet/leases",
                ),
                RequestKind::LeaseCreate,
            ),
            (
                req(
                    "GET",
                    &format!("/apis/coordination.k8s.io/v1/namespaces/hyperfleet/leases/{lease}"),
                ),
                RequestKind::LeaseGet,
            ),
            (
                req(
                    "PUT",
                    &format!("/apis/coordination.k8s.io/v1/namespaces/hyperfleet/leases/{lease}"),
                ),
                RequestKind::LeaseUpdate,
            ),
            (
                req(
                    "DELETE",
                    &format!("/apis/coordination.k8s.io/v1/namespaces/hyperfleet/leases/{lease}"),
                ),
                RequestKind::Other(
                    "DELETE /apis/coordination.k8s.io/v1/namespaces/hyperfleet/leases/{id}".into(),
                ),
            ),
        ];
        for (request, kind) in cases {
            assert_eq!(classify(&request), kind, "{request:?}");
        }
        assert!(RequestKind::MaestroCount.is_maestro());
        assert!(!RequestKind::HyperfleetCluster.is_maestro());
        assert!(RequestKind::LeaseUpdate.is_kube() && !RequestKind::LeaseUpdate.is_maestro());
        assert!(!RequestKind::MaestroCount.is_kube() && !RequestKind::HyperfleetCluster.is_kube());
    }

    #[test]
    fn percent_decoding_keeps_malformed_escapes() {
        assert_eq!(percent_decode("a%3D%27b%27+c"), "a='b' c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("%7B%22k%22%3A%22v%22%7D"), r#"{"k":"v"}"#);
    }

    #[test]
    fn the_fleet_fits_with_the_first_management_cluster_of_a_region_full() {
        for (clusters, per_region) in [(3334, 4), (334, 4), (10_000, 3), (100, 2)] {
            let caps = capacities(clusters, per_region);
            assert_eq!(caps.len(), per_region);
            assert!(
                caps.iter().sum::<u64>() >= clusters,
                "{caps:?} for {clusters}"
            );
            // Least-loaded placement fills the small one, then the others hold the rest.
            let others = (clusters - caps[0]).div_ceil(per_region as u64 - 1);
            assert!(
                caps[1..].iter().all(|&c| c > others),
                "{caps:?}: the others are never full"
            );
            assert!(caps[0] < clusters / per_region as u64, "{caps:?}");
        }
        assert_eq!(capacities(1000, 1), vec![1100]);
        assert!(capacities(1000, 0).is_empty());
    }

    #[test]
    fn the_plot_has_a_line_per_management_cluster_and_escapes_names() {
        let series = vec![
            Series {
                name: "mgmt-us-east1-00".into(),
                region: "us-east1".into(),
                capacity: Some(416),
                points: vec![(0, 0), (100, 26), (200, 50)],
            },
            Series {
                name: "a<b".into(),
                region: "europe-west2".into(),
                capacity: None,
                points: vec![(0, 0), (200, 150)],
            },
        ];
        let text = svg("fleet & load", "3 regions", &series);
        assert!(text.starts_with("<svg "), "{text}");
        assert!(text.trim_end().ends_with("</svg>"));
        assert_eq!(text.matches("<polyline").count(), 2);
        assert_eq!(
            text.matches("stroke-dasharray=\"1 3\"").count(),
            1,
            "one capacity"
        );
        assert!(text.contains("fleet &amp; load") && text.contains("a&lt;b"));
        assert!(!text.contains("NaN"));
    }

    #[test]
    fn tick_steps_are_round() {
        assert_eq!(nice_step(10_000), 2000);
        assert_eq!(nice_step(1), 1);
        assert_eq!(nice_step(416), 50);
        assert_eq!(nice_step(3334), 500);
        assert_eq!(spread(&[3, 9, 5]), (9, 3));
    }

    #[tokio::test]
    async fn the_sniffer_forwards_both_ways_and_logs_each_request() {
        let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let up_addr = upstream.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = upstream.accept().await.unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            while !got.ends_with(b"GET /two HTTP/1.1\r\n\r\n") {
                let n = s.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            s.write_all(b"answer").await.unwrap();
        });
        let sniffer = Sniffer::start(up_addr).await.unwrap();
        let mut client = TcpStream::connect(sniffer.addr).await.unwrap();
        client
            .write_all(b"GET /one HTTP/1.1\r\n\r\nGET /two HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        let mut answer = [0u8; 6];
        client.read_exact(&mut answer).await.unwrap();
        assert_eq!(&answer, b"answer");
        assert_eq!(sniffer.take(), vec![req("GET", "/one"), req("GET", "/two")]);
        assert!(sniffer.take().is_empty(), "taken once");
    }
}
