//! Who holds the other end of a loopback TCP connection: the uid the kernel
//! lists for the peer's socket in `/proc/net/tcp` and `/proc/net/tcp6`,
//! looked up as identd does. The loopback listener asks it for one thing
//! only: whether an answer to an agent's question sent without the secret
//! comes from one of beed's own user's processes (the reference client
//! cannot send the secret).
//!
//! From beed's side a connection is (beed's address, the peer's address);
//! the peer's socket is the row whose local address is the peer's and whose
//! remote address is beed's. Rows list each address as the kernel holds it
//! in memory — the IPv4 address as one 32-bit word, the IPv6 one as four,
//! each printed in the host's byte order — and the port as a number. An
//! IPv4 client of a dual-stack socket is listed in `tcp6` under its
//! IPv4-mapped address, so both sides are compared unmapped.
//!
//! Only an ESTABLISHED row counts: a socket in TIME_WAIT is listed with uid
//! 0 whoever made it, so a client that hung up at once must not pass for
//! root. Both tables are read with a size cap and a line cap; a line that
//! does not parse is skipped, never trusted. Elsewhere than on Linux there
//! is no such table and nothing is found: the secret stays required.

use std::io::{self, BufRead};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Most bytes read from one table: about 200,000 connections' rows. A busy
/// host's table beyond that is not searched further (the answer then needs
/// the secret), so a lookup's time and memory stay bounded.
pub const MAX_TABLE_BYTES: u64 = 32 << 20;
/// A row is about 150 bytes (`tcp`) or 180 (`tcp6`); a longer line is not a
/// row this parser knows and is skipped.
const MAX_LINE_BYTES: usize = 512;
/// The kernel's `TCP_ESTABLISHED`, as the `st` column prints it.
const ESTABLISHED: u8 = 0x01;

/// What a search of the connection tables found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The peer's socket, owned by this uid.
    Uid(u32),
    /// No established row for the connection.
    NotFound,
    /// A table hit the size cap before the row was found.
    TooLarge,
}

/// One row of `/proc/net/tcp` or `/proc/net/tcp6`, the fields this needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    local: SocketAddr,
    remote: SocketAddr,
    state: u8,
    uid: u32,
}

/// The owner of the socket at the peer's end of the connection beed holds
/// from `local` (its listening address) to `peer`.
#[cfg(target_os = "linux")]
pub fn peer_owner(peer: SocketAddr, local: SocketAddr) -> io::Result<Owner> {
    // An IPv6 connection proper is listed only in tcp6; an IPv4 one in tcp,
    // or in tcp6 when the client's socket is dual-stack.
    let tables: &[&str] = match unmapped(local.ip()) {
        IpAddr::V4(_) => &["/proc/net/tcp", "/proc/net/tcp6"],
        IpAddr::V6(_) => &["/proc/net/tcp6"],
    };
    let mut outcome = Owner::NotFound;
    for table in tables {
        let file = match std::fs::File::open(table) {
            Ok(file) => file,
            // A kernel without IPv6 has no tcp6: nothing is listed there.
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(err),
        };
        let table = io::BufReader::new(io::Read::take(file, MAX_TABLE_BYTES));
        match search(table, MAX_TABLE_BYTES, peer, local)? {
            Owner::NotFound => {}
            Owner::TooLarge => outcome = Owner::TooLarge,
            found @ Owner::Uid(_) => return Ok(found),
        }
    }
    Ok(outcome)
}

/// No connection table outside Linux: nobody is found, so the secret stays
/// required.
#[cfg(not(target_os = "linux"))]
pub fn peer_owner(_peer: SocketAddr, _local: SocketAddr) -> io::Result<Owner> {
    Ok(Owner::NotFound)
}

/// Searches one table, read through a reader that stops after `cap`
/// bytes, for the established row of the peer's socket.
fn search(mut table: impl BufRead, cap: u64, peer: SocketAddr, local: SocketAddr) -> io::Result<Owner> {
    let (peer, local) = (unmap(peer), unmap(local));
    let mut consumed = 0u64;
    let mut line = Vec::with_capacity(MAX_LINE_BYTES);
    loop {
        line.clear();
        let read = io::Read::take(&mut table, MAX_LINE_BYTES as u64).read_until(b'\n', &mut line)?;
        consumed += read as u64;
        if read == 0 {
            // The end of the table, or of the part the cap let through (a
            // table exactly at the cap counts as cut: nothing says otherwise).
            return Ok(if consumed >= cap { Owner::TooLarge } else { Owner::NotFound });
        }
        if line.last() != Some(&b'\n') {
            if read == MAX_LINE_BYTES {
                // Not a row this knows: skip the rest of it.
                consumed += table.skip_until(b'\n')? as u64;
            }
            // Else the table's last line, cut short (by the cap, say): a
            // uid cut to its first digits would name someone else.
            continue;
        }
        let Some(row) = std::str::from_utf8(&line).ok().and_then(parse_row) else { continue };
        if row.state == ESTABLISHED && unmap(row.local) == peer && unmap(row.remote) == local {
            return Ok(Owner::Uid(row.uid));
        }
    }
}

/// `   2: 0100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000     0        0 21687 …`
fn parse_row(line: &str) -> Option<Row> {
    let mut fields = line.split_ascii_whitespace();
    let slot = fields.next()?;
    // The header line's first field is `sl`; a row's is `N:`.
    slot.strip_suffix(':').filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))?;
    let local = parse_endpoint(fields.next()?)?;
    let remote = parse_endpoint(fields.next()?)?;
    let state = fields.next().filter(|s| s.len() == 2).and_then(hex_u32).and_then(|s| u8::try_from(s).ok())?;
    // tx_queue:rx_queue, tr:tm->when, retrnsmt, then the uid in decimal.
    let uid = fields.nth(3).filter(|u| u.bytes().all(|b| b.is_ascii_digit()))?.parse().ok()?;
    Some(Row { local, remote, state, uid })
}

/// `0100007F:D340` (tcp) or `0000000000000000FFFF00000100007F:B681` (tcp6).
fn parse_endpoint(text: &str) -> Option<SocketAddr> {
    let (address, port) = text.split_once(':')?;
    let port = u16::try_from(hex_u32(port).filter(|_| port.len() == 4)?).ok()?;
    // Each 8-digit word is the address's memory read as a host-order u32,
    // so the bytes come back in the host's byte order.
    let ip = match address.len() {
        8 => IpAddr::V4(Ipv4Addr::from(hex_u32(address)?.to_ne_bytes())),
        32 => {
            let mut bytes = [0u8; 16];
            for (chunk, word) in bytes.chunks_exact_mut(4).zip(address.as_bytes().chunks_exact(8)) {
                let word = std::str::from_utf8(word).ok()?;
                chunk.copy_from_slice(&hex_u32(word)?.to_ne_bytes());
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Hex digits only: `from_str_radix` alone would take a leading `+`.
fn hex_u32(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 8 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

/// An IPv4-mapped IPv6 address as the IPv4 address it maps.
fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

fn unmap(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(unmapped(addr.ip()), addr.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real rows (a little-endian host): a listener on port 46721 (B681),
    /// a TIME_WAIT row, then the two ends of an IPv4 connection from port
    /// 54080 (D340) — beed's end first, owned by 0, the peer's by 1000.
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 138 1 00000000f2f64f39 100 0 0 10 0                       
   1: 020200C0:85A0 507100CB:0050 06 00000000:00000000 03:00000BFB 00000000     0        0 0 3 00000000efede252                                      
   2: 0100007F:B681 0100007F:D340 01 00000000:00000000 00:00000000 00000000     0        0 21688 1 000000000fb9d68c 20 0 0 10 -1                     
   3: 0100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  1000        0 21687 2 000000000fb9d68c 20 0 0 10 -1                     
";

    /// Real rows: `::1` port 38800 (9790) to 46721, and a dual-stack client
    /// socket at `::ffff:127.0.0.1` port 54074 (D33A), owned by 1001.
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:B681 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21682 1 00000000fbdc49e1 100 0 0 10 0
   1: 00000000000000000000000001000000:9790 00000000000000000000000001000000:B681 01 00000000:00000000 00:00000000 00000000  1002        0 21683 2 000000005c6fcc44 20 0 0 10 -1
   3: 0000000000000000FFFF00000100007F:D33A 0000000000000000FFFF00000100007F:B681 01 00000000:00000000 00:00000000 00000000  1001        0 21685 2 00000000097db413 20 0 0 10 -1
   4: 0000000000000000FFFF00000100007F:B681 0000000000000000FFFF00000100007F:D33A 01 00000000:00000000 00:00000000 00000000     0        0 21686 1 00000000bd1b7148 20 0 0 10 -1
   5: 00000000000000000000000001000000:B681 00000000000000000000000001000000:9790 01 00000000:00000000 00:00000000 00000000     0        0 21684 1 0000000036bf97f9 20 0 0 10 -1
";

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    fn find(table: &str, peer: &str, local: &str) -> Owner {
        search(table.as_bytes(), MAX_TABLE_BYTES, addr(peer), addr(local)).unwrap()
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn the_peers_row_is_found_not_beeds_own() {
        assert_eq!(find(TCP, "127.0.0.1:54080", "127.0.0.1:46721"), Owner::Uid(1000));
        // beed's own end of the same connection is never taken for the peer's.
        assert_eq!(find(TCP, "127.0.0.1:46721", "127.0.0.1:54080"), Owner::Uid(0));
        assert_eq!(find(TCP, "127.0.0.1:54081", "127.0.0.1:46721"), Owner::NotFound);
        assert_eq!(find(TCP, "127.0.0.2:54080", "127.0.0.1:46721"), Owner::NotFound);
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn ipv6_and_ipv4_mapped_rows_are_found() {
        assert_eq!(find(TCP6, "[::1]:38800", "[::1]:46721"), Owner::Uid(1002));
        // beed on 127.0.0.1 sees a dual-stack client as plain IPv4.
        assert_eq!(find(TCP6, "127.0.0.1:54074", "127.0.0.1:46721"), Owner::Uid(1001));
        assert_eq!(find(TCP6, "[::ffff:127.0.0.1]:54074", "[::ffff:127.0.0.1]:46721"), Owner::Uid(1001));
        assert_eq!(find(TCP6, "[::1]:54074", "[::1]:46721"), Owner::NotFound, "::1 is not 127.0.0.1");
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn a_time_wait_row_never_counts() {
        // Listed with uid 0 whoever made it.
        assert_eq!(find(TCP, "192.0.2.2:34208", "203.0.113.80:80"), Owner::NotFound);
        let established = TCP.replace("507100CB:0050 06", "507100CB:0050 01");
        assert_eq!(find(&established, "192.0.2.2:34208", "203.0.113.80:80"), Owner::Uid(0));
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn odd_lines_are_skipped_and_never_trusted() {
        let row = "   9: 0100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  1000        0 1 2 0 20 0 0 10 -1\n";
        let odd = [
            "",
            "\n",
            "garbage\n",
            "   9: 0100007F:D340\n",
            "   9: 0100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000\n",
            "   9: 0100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  -1000 0 1\n",
            "   9: +100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  1000 0 1\n",
            "   9: 0100007F:+340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  1000 0 1\n",
            "   9: 0100007F:D3400 0100007F:B681 01 00000000:00000000 00:00000000 00000000  1000 0 1\n",
            "   9: 100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  1000 0 1\n",
            "   9: 0100007F:D340 0100007F:B681 1 00000000:00000000 00:00000000 00000000  1000 0 1\n",
            "   9: 0100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  99999999999 0 1\n",
            "   x: 0100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  1000 0 1\n",
            "   9: 0100007F:D340 0100007F:B681 01 00000000:00000000 00:00000000 00000000  1000 0 1",
        ];
        for odd in odd {
            assert_eq!(find(odd, "127.0.0.1:54080", "127.0.0.1:46721"), Owner::NotFound, "{odd:?}");
            // A good row after it is still found.
            assert_eq!(find(&format!("{odd}\n{row}"), "127.0.0.1:54080", "127.0.0.1:46721"), Owner::Uid(1000));
        }
        // Not UTF-8, and a line longer than any row, with a row hidden in its tail.
        let mut bytes = b"   9: \xff\xfe\n".to_vec();
        bytes.extend_from_slice(&[b'x'; 4 * MAX_LINE_BYTES]);
        bytes.extend_from_slice(row.trim_start().as_bytes());
        bytes.extend_from_slice(row.as_bytes());
        let found = search(&bytes[..], MAX_TABLE_BYTES, addr("127.0.0.1:54080"), addr("127.0.0.1:46721")).unwrap();
        assert_eq!(found, Owner::Uid(1000));
        let tail_only = &bytes[..bytes.len() - row.len()];
        let found = search(tail_only, MAX_TABLE_BYTES, addr("127.0.0.1:54080"), addr("127.0.0.1:46721")).unwrap();
        assert_eq!(found, Owner::NotFound, "a row inside an over-long line is not a row");
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn a_table_past_the_cap_is_not_searched_further() {
        let cap = 400;
        let cut = io::Read::take(TCP.as_bytes(), cap);
        assert_eq!(search(cut, cap, addr("127.0.0.1:54080"), addr("127.0.0.1:46721")).unwrap(), Owner::TooLarge);
        let whole = io::Read::take(TCP.as_bytes(), TCP.len() as u64 + 1);
        let found = search(whole, TCP.len() as u64 + 1, addr("127.0.0.1:54080"), addr("127.0.0.1:46721")).unwrap();
        assert_eq!(found, Owner::Uid(1000));
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn endpoints_parse_in_the_hosts_byte_order() {
        assert_eq!(parse_endpoint("0100007F:D340"), Some(addr("127.0.0.1:54080")));
        assert_eq!(parse_endpoint("00000000000000000000000001000000:9790"), Some(addr("[::1]:38800")));
        assert_eq!(parse_endpoint("0000000000000000FFFF00000100007F:B681"), Some(addr("[::ffff:127.0.0.1]:46721")));
        for bad in
            ["", ":", "0100007F", "0100007F:", "0100007F:D34", "0100007FF:D340", "0100007G:D340", "-100007F:D340"]
        {
            assert_eq!(parse_endpoint(bad), None, "{bad}");
        }
    }

    /// The live tables: this process's own connection is found, owned by
    /// its own uid, over IPv4 and (when the host has it) IPv6.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_connection_of_this_process_is_ours() {
        let uid = rustix::process::geteuid().as_raw();
        for host in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = std::net::TcpListener::bind(host) else { continue };
            let local = listener.local_addr().unwrap();
            let client = std::net::TcpStream::connect(local).unwrap();
            let (_accepted, peer) = listener.accept().unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            assert_eq!(peer_owner(peer, local).unwrap(), Owner::Uid(uid), "{host}");
            drop(client);
            // Hung up: no established row is left to vouch for anyone.
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert_ne!(peer_owner(peer, local).unwrap(), Owner::Uid(uid), "{host} after the hang-up");
        }
    }
}
