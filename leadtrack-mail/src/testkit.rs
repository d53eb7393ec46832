//! A loopback SMTP server for tests: it takes every message sent to it (but to the
//! addresses it is told to refuse, which get `550`) and keeps each with its envelope, for
//! the test to read back. Enough of SMTP (RFC 5321) for a client such as lettre: `EHLO`,
//! `HELO`, `MAIL`, `RCPT`, `DATA` (with dot-unstuffing), `RSET`, `NOOP` and `QUIT`, in plain
//! text.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A message as the server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The envelope's sender (`MAIL FROM`).
    pub from: String,
    /// The envelope's recipients (`RCPT TO`) the server took.
    pub to: Vec<String>,
    /// The message: headers, a blank line, the body (lines end with CRLF).
    pub data: String,
}

impl Received {
    /// The body: what follows the headers' blank line, without the final line break.
    pub fn body(&self) -> &str {
        let body = self
            .data
            .split_once("\r\n\r\n")
            .map_or("", |(_, body)| body);
        body.strip_suffix("\r\n").unwrap_or(body)
    }
}

/// The running server.
pub struct SmtpReceiver {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl SmtpReceiver {
    /// Starts a server on a free loopback port, refusing the recipients `refused`.
    pub async fn start(refused: &[&str]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let refused: Arc<Vec<String>> = Arc::new(refused.iter().map(|r| r.to_string()).collect());
        let kept = Arc::clone(&received);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (kept, refused) = (Arc::clone(&kept), Arc::clone(&refused));
                tokio::spawn(async move {
                    // A client that goes away mid-session only ends its session.
                    let _ = session(stream, &kept, &refused).await;
                });
            }
        });
        Self { addr, received }
    }

    /// `smtp://127.0.0.1:PORT`, as `--smtp-url` takes it.
    pub fn url(&self) -> String {
        format!("smtp://{}", self.addr)
    }

    /// The messages received so far, oldest first.
    pub fn messages(&self) -> Vec<Received> {
        self.received.lock().expect("not poisoned").clone()
    }
}

/// The address inside `MAIL FROM:<a@b>` or `RCPT TO:<a@b>` (and any parameters after it).
fn address(argument: &str) -> String {
    let start = argument.find('<').map_or(0, |at| at + 1);
    let end = argument[start..]
        .find('>')
        .map_or(argument.len(), |at| start + at);
    argument[start..end].to_owned()
}

/// One client's session, until it quits or goes.
async fn session(
    stream: TcpStream,
    received: &Mutex<Vec<Received>>,
    refused: &[String],
) -> std::io::Result<()> {
    let (reader, mut writer) = stream.into_split();
    let mut lines = BufReader::new(reader);
    writer.write_all(b"220 leadtrack-test ESMTP\r\n").await?;
    let mut envelope = Received {
        from: String::new(),
        to: Vec::new(),
        data: String::new(),
    };
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end();
        let verb = command.get(..4).unwrap_or(command).to_ascii_uppercase();
        let reply: &[u8] = match verb.as_str() {
            "EHLO" => b"250-leadtrack-test\r\n250 8BITMIME\r\n",
            "HELO" | "NOOP" => b"250 OK\r\n",
            "MAIL" => {
                envelope.from = address(&command[4..]);
                b"250 OK\r\n"
            }
            "RCPT" => {
                let to = address(&command[4..]);
                if refused.contains(&to) {
                    b"550 5.1.1 No such mailbox\r\n"
                } else {
                    envelope.to.push(to);
                    b"250 OK\r\n"
                }
            }
            "DATA" => {
                writer
                    .write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n")
                    .await?;
                envelope.data = data(&mut lines).await?;
                received
                    .lock()
                    .expect("not poisoned")
                    .push(envelope.clone());
                b"250 OK queued\r\n"
            }
            "RSET" => {
                envelope.to.clear();
                b"250 OK\r\n"
            }
            "QUIT" => {
                writer.write_all(b"221 Bye\r\n").await?;
                return Ok(());
            }
            _ => b"502 Command not implemented\r\n",
        };
        writer.write_all(reply).await?;
    }
}

/// A message's lines up to the lone `.`, each leading dot of the client's stuffing removed.
async fn data(lines: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> std::io::Result<String> {
    let mut data = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 || line == ".\r\n" {
            return Ok(data);
        }
        data.push_str(line.strip_prefix('.').unwrap_or(&line));
    }
}
