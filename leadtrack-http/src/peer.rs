//! Who is at the other end: the peer's address as whichever server accepted the connection
//! saw it, and the client's address behind a trusted proxy.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

use warp::Filter;
use warp::http::HeaderMap;

/// The client's address as a server other than warp's own saw it (the standalone server's
/// accept loop puts it in each request's extensions); `warp::addr::remote()` only knows
/// the address under warp's own server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// The address of the client at the other end of the connection: under a server that sets
/// [`PeerAddr`], warp's own server, or `warp::test` with a remote address.
pub fn remote() -> impl Filter<Extract = (Option<SocketAddr>,), Error = Infallible> + Copy {
    warp::addr::remote()
        .and(warp::ext::optional::<PeerAddr>())
        .map(|warp: Option<SocketAddr>, ours: Option<PeerAddr>| {
            warp.or(ours.map(|PeerAddr(addr)| addr))
        })
}

/// The client's address: the first `X-Forwarded-For` address when the proxy is trusted
/// and the header holds one, else the peer's.
pub fn client_ip(
    headers: &HeaderMap,
    remote: Option<SocketAddr>,
    trust_forwarded_for: bool,
) -> Option<String> {
    let forwarded = trust_forwarded_for
        .then(|| headers.get("x-forwarded-for"))
        .flatten()
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .and_then(|first| first.trim().parse::<IpAddr>().ok());
    forwarded
        .or(remote.map(|addr| addr.ip()))
        .map(|ip| ip.to_canonical().to_string())
}

/// The network one client is known by: an IPv4 address itself, an IPv6 client by its /64,
/// the network one subscriber usually gets whole, so that cycling addresses within it gains
/// nothing (rates and connection shares are counted per network).
pub fn client_network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn forwarded_addresses_count_only_when_trusted() {
        let remote = Some(SocketAddr::from(([10, 0, 0, 1], 4000)));
        let forwarded = headers(&[("x-forwarded-for", " 203.0.113.7 , 10.0.0.2")]);
        assert_eq!(
            client_ip(&forwarded, remote, false).as_deref(),
            Some("10.0.0.1")
        );
        assert_eq!(
            client_ip(&forwarded, remote, true).as_deref(),
            Some("203.0.113.7")
        );
        let garbage = headers(&[("x-forwarded-for", "unknown")]);
        assert_eq!(
            client_ip(&garbage, remote, true).as_deref(),
            Some("10.0.0.1")
        );
        let mapped = Some("[::ffff:192.0.2.9]:80".parse().unwrap());
        assert_eq!(
            client_ip(&HeaderMap::new(), mapped, false).as_deref(),
            Some("192.0.2.9")
        );
    }
}
