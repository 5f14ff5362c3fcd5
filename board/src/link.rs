//! The channel between a tab's reader (the server) and its board's thread: requests one way, and
//! the `interrupt` flag that stops the board's search when a request comes in.
//!
//! The flag alone cannot say whether a request is still on its way: a board that took a request
//! and then cleared the flag could see the reader raise it a moment later for that same request,
//! and stop its next search at once for nothing. So the reader counts a request as announced
//! before queueing it, the board counts it as taken when it receives it, and a search's flag is
//! re-armed from that count (`Link::rearm`): raised exactly while a request is announced and not
//! yet taken.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::time::Duration;

use tokio::sync::mpsc::Sender;

use crate::messages::{Reply, Request};

/// The reader's end.
pub struct Inbox {
    requests: SyncSender<Request>,
    interrupt: Arc<AtomicBool>,
    announced: Arc<AtomicUsize>,
}

/// The board's end: requests in, replies out, and the flag its searches stop on.
pub struct Link {
    requests: Receiver<Request>,
    pub replies: Sender<Reply>,
    /// Raised while a request waits to be taken: every search of the board stops on it.
    pub interrupt: Arc<AtomicBool>,
    announced: Arc<AtomicUsize>,
}

/// A new channel holding at most `capacity` requests.
pub fn channel(capacity: usize, replies: Sender<Reply>) -> (Inbox, Link) {
    let (tx, rx) = mpsc::sync_channel(capacity);
    let interrupt = Arc::new(AtomicBool::new(false));
    let announced = Arc::new(AtomicUsize::new(0));
    let inbox = Inbox {
        requests: tx,
        interrupt: interrupt.clone(),
        announced: announced.clone(),
    };
    let link = Link {
        requests: rx,
        replies,
        interrupt,
        announced,
    };
    (inbox, link)
}

impl Inbox {
    /// Queues `r` and stops the board's search.
    ///
    /// # Errors
    /// The queue is full, or the board's thread has ended.
    pub fn send(&self, r: Request) -> Result<(), TrySendError<Request>> {
        self.announced.fetch_add(1, Ordering::SeqCst);
        self.interrupt.store(true, Ordering::SeqCst);
        self.requests.try_send(r).inspect_err(|_| {
            self.announced.fetch_sub(1, Ordering::SeqCst);
        })
    }

    /// The tab is gone: the board's search stops now and its thread ends with the channel.
    pub fn close(self) {
        self.interrupt.store(true, Ordering::SeqCst);
    }
}

impl Link {
    /// The next request, waiting for one; None when the tab has closed.
    pub fn next(&self) -> Option<Request> {
        let r = self.requests.recv().ok()?;
        self.announced.fetch_sub(1, Ordering::SeqCst);
        Some(r)
    }

    /// The next request if one was announced (waiting the moment it takes to arrive).
    pub fn try_next(&self) -> Result<Request, TryRecvError> {
        loop {
            match self.requests.try_recv() {
                Ok(r) => {
                    self.announced.fetch_sub(1, Ordering::SeqCst);
                    return Ok(r);
                }
                Err(TryRecvError::Empty) if self.announced.load(Ordering::SeqCst) > 0 => {
                    std::thread::sleep(Duration::from_micros(50));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Lowers the flag for the next search unless a request is still to be taken.
    pub fn rearm(&self) {
        self.interrupt.store(false, Ordering::SeqCst);
        if self.announced.load(Ordering::SeqCst) > 0 {
            self.interrupt.store(true, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link() -> (Inbox, Link) {
        let (replies, _) = tokio::sync::mpsc::channel(1);
        channel(4, replies)
    }

    /// A request taken before the reader's flag could matter leaves no stale flag behind.
    #[test]
    fn a_taken_request_does_not_stop_the_next_search() {
        let (inbox, link) = link();
        inbox.send(Request::Undo).expect("room");
        assert!(link.interrupt.load(Ordering::SeqCst));
        assert!(matches!(link.next(), Some(Request::Undo)));
        link.rearm();
        assert!(!link.interrupt.load(Ordering::SeqCst));
        assert!(matches!(link.try_next(), Err(TryRecvError::Empty)));
    }

    #[test]
    fn a_request_still_to_be_taken_keeps_the_flag_up() {
        let (inbox, link) = link();
        inbox.send(Request::Undo).expect("room");
        inbox.send(Request::Redo).expect("room");
        assert!(matches!(link.try_next(), Ok(Request::Undo)));
        link.rearm();
        assert!(link.interrupt.load(Ordering::SeqCst));
        assert!(matches!(link.try_next(), Ok(Request::Redo)));
        link.rearm();
        assert!(!link.interrupt.load(Ordering::SeqCst));
        inbox.close();
        assert!(link.interrupt.load(Ordering::SeqCst));
        assert!(link.next().is_none());
    }

    #[test]
    fn a_full_queue_refuses_and_counts_nothing() {
        let (inbox, link) = link();
        for _ in 0..4 {
            inbox.send(Request::Undo).expect("room");
        }
        assert!(matches!(
            inbox.send(Request::Undo),
            Err(TrySendError::Full(_))
        ));
        for _ in 0..4 {
            assert!(link.try_next().is_ok());
        }
        link.rearm();
        assert!(!link.interrupt.load(Ordering::SeqCst));
    }
}
