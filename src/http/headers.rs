//! What a request's headers say about its sender: the client's address
//! behind trusted proxies and the cookies it sent.

/// The client's address: the peer, or, when the peer is a trusted proxy, the
/// right-most address in `X-Forwarded-For` that is not a trusted proxy.
pub fn client_ip(
    peer: std::net::IpAddr,
    headers: &axum::http::HeaderMap,
    trusted: &[ipnet::IpNet],
) -> std::net::IpAddr {
    let is_trusted = |ip: &std::net::IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let forwarded: Vec<std::net::IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    forwarded.into_iter().rev().find(|ip| !is_trusted(ip)).unwrap_or(peer)
}

/// The value of one cookie in a request's headers.
pub fn cookie(headers: &axum::http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (k, v) = pair.trim().split_once('=')?;
            (k == name).then(|| v.to_owned())
        })
}
