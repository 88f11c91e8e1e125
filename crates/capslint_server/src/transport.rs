//! The stdio transport: `lsp-server`'s framing on standard input and output, with a reader that
//! survives a message whose body is not a JSON-RPC message (it is logged and skipped: its frame was read
//! whole, so the stream is still in step). A broken header, or the end of the input, ends the reader,
//! and with it the connection.

use std::io::{self, BufRead, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Connection, Message};

/// The connection over standard input and output, and its two threads.
pub fn stdio() -> (Connection, JoinHandle<()>, JoinHandle<()>) {
    let (writer_sender, writer_receiver) = crossbeam_channel::bounded::<Message>(0);
    let writer = std::thread::Builder::new()
        .name("capslint-writer".into())
        .spawn(move || write_all(&writer_receiver, &mut io::stdout().lock()))
        .expect("the writer thread starts");
    let (reader_sender, reader_receiver) = crossbeam_channel::bounded::<Message>(0);
    let reader = std::thread::Builder::new()
        .name("capslint-reader".into())
        .spawn(move || read_all(&mut io::stdin().lock(), &reader_sender))
        .expect("the reader thread starts");
    (Connection { sender: writer_sender, receiver: reader_receiver }, reader, writer)
}

/// Writes every message sent until all senders are gone (or the output is closed).
fn write_all(messages: &Receiver<Message>, out: &mut impl Write) {
    for message in messages {
        if message.write(out).is_err() {
            return;
        }
    }
}

/// Reads messages until the input ends, a header is broken, or `exit` arrives.
pub fn read_all(input: &mut impl BufRead, messages: &Sender<Message>) {
    loop {
        match Message::read(input) {
            Ok(Some(message)) => {
                let exit = matches!(&message, Message::Notification(notification) if notification.method == "exit");
                if messages.send(message).is_err() || exit {
                    return;
                }
            }
            Ok(None) => return,
            Err(error) if error.kind() == io::ErrorKind::InvalidData && error.to_string().contains("payload") => {
                eprintln!("capslint server: message skipped: {error}");
            }
            Err(error) => {
                eprintln!("capslint server: input ended: {error}");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn a_malformed_body_is_skipped_and_reading_goes_on() {
        let input = [
            frame("{not json"),
            frame("[1, 2]"),
            frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#),
            "Content-Length: nope\r\n\r\n".to_string(),
            frame(r#"{"jsonrpc":"2.0","method":"never","params":{}}"#),
        ]
        .concat();
        let (sender, receiver) = crossbeam_channel::unbounded();
        read_all(&mut input.as_bytes(), &sender);
        drop(sender);
        let methods: Vec<String> = receiver
            .iter()
            .map(|message| match message {
                Message::Notification(notification) => notification.method,
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(methods, vec!["initialized".to_string()]);
    }
}
