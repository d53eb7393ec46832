//! The one rule for an address the server calls: platform endpoints and token URLs, lead
//! webhooks, the webhook integration, chat alerts, lead sources, and every sink added later.
//!
//! An address is parsed as a URL (the `url` crate, which reads the WHATWG standard's IPv4
//! forms such as `http://2130706433/` and `http://0177.0.0.1/` as `127.0.0.1`, lower-cases
//! the scheme and host, and turns an IDN host into its ASCII form), never matched by prefix.
//! [`Targets::check`] then refuses:
//!
//! - a scheme other than `https` (`http` only where the operator allows it);
//! - a user name or password before the host (`https://127.0.0.1@evil.example/`);
//! - a host in a range that is not the public internet ([`special`]: loopback, private,
//!   link-local, shared, multicast, unspecified, documentation and reserved ranges, also
//!   inside an IPv4-mapped, NAT64 or 6to4 IPv6 address), and `localhost` by name (RFC 6761),
//!   unless the operator allows the range.
//!
//! A name's addresses are known only when it is called: the HTTP client (`leadtrack-outbound`)
//! checks each resolved address with [`Targets::check_ip`] before it connects, so a name that
//! resolves to `127.0.0.1` later is refused too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;
use url::{Host, Url};

/// The longest address kept.
const MAX_LEN: usize = 2000;

/// The word in an allowance list that stands for every range of [`special`].
pub const PRIVATE: &str = "private";

/// The ranges refused unless allowed, with what each is, for people. Sources: RFC 6890 (the
/// special-purpose registries), RFC 1918, RFC 4193, RFC 6598 (shared), RFC 5737 and RFC 3849
/// (documentation), RFC 2544 (benchmarking).
const SPECIAL: [(IpNet, &str); 24] = [
    (v4(0, 0, 0, 0, 8), "unspecified"),
    (v4(10, 0, 0, 0, 8), "private"),
    (v4(100, 64, 0, 0, 10), "shared (carrier-grade NAT)"),
    (v4(127, 0, 0, 0, 8), "loopback"),
    (v4(169, 254, 0, 0, 16), "link-local"),
    (v4(172, 16, 0, 0, 12), "private"),
    (v4(192, 0, 0, 0, 24), "reserved"),
    (v4(192, 0, 2, 0, 24), "documentation"),
    (v4(192, 168, 0, 0, 16), "private"),
    (v4(198, 18, 0, 0, 15), "reserved"),
    (v4(198, 51, 100, 0, 24), "documentation"),
    (v4(203, 0, 113, 0, 24), "documentation"),
    (v4(224, 0, 0, 0, 4), "multicast"),
    (v4(240, 0, 0, 0, 4), "reserved"),
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), "unspecified"),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback"),
    // IPv4-compatible addresses, deprecated (RFC 4291); the mapped ones are read as IPv4.
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 96), "reserved"),
    (v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), "private"),
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), "reserved"),
    (v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), "documentation"),
    (v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), "private"),
    (v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), "link-local"),
    (v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), "private"),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast"),
];

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> IpNet {
    IpNet::new_assert(IpAddr::V4(Ipv4Addr::new(a, b, c, d)), prefix)
}

const fn v6(s: [u16; 8], prefix: u8) -> IpNet {
    let ip = Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    IpNet::new_assert(IpAddr::V6(ip), prefix)
}

/// What `ip` is when it is not an address of the public internet (`"loopback"`,
/// `"private"`, ...), else `None`. An IPv4 address inside an IPv6 one (mapped, NAT64's
/// `64:ff9b::/96`, 6to4's `2002::/16`) is what that IPv4 address is.
pub fn special(ip: IpAddr) -> Option<&'static str> {
    let ip = ip.to_canonical();
    if let Some(inner) = embedded_v4(ip) {
        return special(IpAddr::V4(inner));
    }
    SPECIAL
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map(|(_, kind)| *kind)
}

/// The IPv4 address a NAT64 or 6to4 address carries.
fn embedded_v4(ip: IpAddr) -> Option<Ipv4Addr> {
    let IpAddr::V6(ip) = ip else { return None };
    let o = ip.octets();
    match ip.segments() {
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(Ipv4Addr::new(o[12], o[13], o[14], o[15])),
        [0x2002, ..] => Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])),
        _ => None,
    }
}

/// The operator's exceptions to the rule: the ranges allowed (`--allow-targets`) and
/// whether `http://` is (`--allow-http-targets`). The default allows neither.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    allowed: Vec<IpNet>,
    private: bool,
    http: bool,
}

impl Targets {
    /// The rule with the operator's exceptions: `allowed` is a comma-separated list of CIDR
    /// ranges or single addresses (`127.0.0.0/8,10.1.2.3`) and the word `private` for every
    /// range [`special`] names; `http` allows `http://`.
    pub fn new(allowed: &str, http: bool) -> Result<Self, String> {
        let mut targets = Self {
            http,
            ..Self::default()
        };
        for item in allowed.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item.eq_ignore_ascii_case(PRIVATE) {
                targets.private = true;
                continue;
            }
            let net = item
                .parse::<IpNet>()
                .or_else(|_| item.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| {
                    format!("{item:?} is neither a range such as 10.1.2.0/24, an address, nor `{PRIVATE}`")
                })?;
            targets.allowed.push(net.trunc());
        }
        Ok(targets)
    }

    /// Every well-formed address, `http://` and every range included: the check of form a
    /// store makes of what it keeps, leaving ranges to whoever saves and sends.
    pub fn any() -> Self {
        Self {
            allowed: Vec::new(),
            private: true,
            http: true,
        }
    }

    /// `Ok` when the server may connect to `ip`.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Refusal> {
        let ip = ip.to_canonical();
        match special(ip) {
            None => Ok(()),
            Some(_) if self.private || self.allows(ip) => Ok(()),
            Some(kind) => Err(Refusal::Special {
                kind,
                host: ip.to_string(),
            }),
        }
    }

    fn allows(&self, ip: IpAddr) -> bool {
        let inner = embedded_v4(ip).map(IpAddr::V4);
        self.allowed
            .iter()
            .any(|net| net.contains(&ip) || inner.is_some_and(|inner| net.contains(&inner)))
    }

    /// `text` (trimmed) as an address the server may call, in the URL standard's form.
    pub fn check(&self, text: &str) -> Result<Target, Refusal> {
        let text = text.trim();
        if text.is_empty() || text.len() > MAX_LEN || text.contains(char::is_whitespace) {
            return Err(Refusal::NotAnAddress);
        }
        let url = Url::parse(text).map_err(|_| Refusal::NotAnAddress)?;
        match url.scheme() {
            "https" => {}
            "http" if self.http => {}
            "http" => return Err(Refusal::Http),
            other => return Err(Refusal::Scheme(other.to_owned())),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refusal::UserInfo);
        }
        match url.host() {
            Some(Host::Ipv4(ip)) => self.check_ip(ip.into())?,
            Some(Host::Ipv6(ip)) => self.check_ip(ip.into())?,
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.');
                if name.is_empty() {
                    return Err(Refusal::NotAnAddress);
                }
                // RFC 6761: these names are this machine, whatever a resolver says.
                if name == "localhost" || name.ends_with(".localhost") {
                    self.check_ip(Ipv4Addr::LOCALHOST.into())
                        .map_err(|_| Refusal::Special {
                            kind: "loopback",
                            host: name.to_owned(),
                        })?;
                }
            }
            None => return Err(Refusal::NotAnAddress),
        }
        Ok(Target(url))
    }
}

/// Why an address is not called, in words for the dashboard, the command line and the
/// deliveries table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not a URL with a host.
    #[error("this is not a web address")]
    NotAnAddress,
    /// A scheme other than `https` and `http` (`file`, `gopher`, `javascript`).
    #[error("{0}: addresses are not called; give an https:// address")]
    Scheme(String),
    /// `http://` where the operator has not allowed it.
    #[error(
        "http:// would send in clear text; give an https:// address (the server's operator can allow http://)"
    )]
    Http,
    /// A user name or password before the host.
    #[error("an address with a user name or password before its host is not called")]
    UserInfo,
    /// A host in a range that is not the public internet.
    #[error("the address is {kind} ({host}); the server's operator can allow it")]
    Special {
        /// What the range is (`loopback`, `private`, `link-local`, ...).
        kind: &'static str,
        /// The host as resolved or given (`10.0.0.1`, `localhost`).
        host: String,
    },
}

/// An address the server may call, checked by [`Targets::check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target(Url);

impl Target {
    /// The address, in the URL standard's form.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The parsed URL.
    pub fn url(&self) -> &Url {
        &self.0
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Target> for String {
    fn from(target: Target) -> Self {
        target.0.into()
    }
}

#[cfg(test)]
mod tests;
