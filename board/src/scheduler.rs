//! The CPU shared among the open boards: at most `slots` searches run at once, the others wait
//! in arrival order and are told how many searches are before them. An open-ended analysis holds
//! its slot as a *preemptible* permit: once it has run a time slice and another search waits, the
//! scheduler raises its stop flag, so it ends its round, gives the slot up and queues again (its
//! tree is kept; nothing is lost but the wait).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long an analysis runs before it yields to a waiting search.
pub const SLICE: Duration = Duration::from_millis(1500);
/// How often a waiting search looks at the queue again (and at its cancel flag).
const POLL: Duration = Duration::from_millis(50);

pub struct Scheduler {
    slots: usize,
    state: Mutex<Queue>,
    changed: Condvar,
}

#[derive(Default)]
struct Queue {
    next_ticket: u64,
    waiting: VecDeque<u64>,
    running: Vec<Running>,
}

struct Running {
    ticket: u64,
    since: Instant,
    /// Raised to make a preemptible search yield; None for one that must finish (a move).
    preempt: Option<Arc<AtomicBool>>,
}

/// A running search's slot, given back when dropped.
pub struct Permit {
    scheduler: Arc<Scheduler>,
    ticket: u64,
}

impl Scheduler {
    pub fn new(slots: usize) -> Arc<Scheduler> {
        Arc::new(Scheduler {
            slots: slots.max(1),
            state: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        })
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a slot. `ahead(n)` is called whenever the number of searches before this one
    /// changes (0 once it runs). Gives up (None) when `cancel` is raised while waiting.
    /// `preempt`: the stop flag of a search that yields when others wait (an analysis).
    pub fn acquire(
        self: &Arc<Self>,
        cancel: &AtomicBool,
        preempt: Option<Arc<AtomicBool>>,
        mut ahead: impl FnMut(usize),
    ) -> Option<Permit> {
        let mut q = self.lock();
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.waiting.push_back(ticket);
        let mut said = None;
        loop {
            let place = q.waiting.iter().position(|&t| t == ticket).unwrap_or(0);
            if place == 0 && q.running.len() < self.slots {
                q.waiting.pop_front();
                q.running.push(Running {
                    ticket,
                    since: Instant::now(),
                    preempt,
                });
                drop(q);
                if said.is_some() {
                    ahead(0);
                }
                return Some(Permit {
                    scheduler: self.clone(),
                    ticket,
                });
            }
            if cancel.load(Ordering::SeqCst) {
                q.waiting.retain(|&t| t != ticket);
                drop(q);
                self.changed.notify_all();
                if said.is_some() {
                    ahead(0);
                }
                return None;
            }
            // Analyses that have had their slice make room.
            for r in &q.running {
                if let Some(flag) = &r.preempt
                    && r.since.elapsed() >= SLICE
                {
                    flag.store(true, Ordering::SeqCst);
                }
            }
            let n = q.running.len() + place;
            if said != Some(n) {
                said = Some(n);
                drop(q);
                ahead(n);
                q = self.lock();
                continue;
            }
            q = self
                .changed
                .wait_timeout(q, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Searches waiting for a slot.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.scheduler
            .lock()
            .running
            .retain(|r| r.ticket != self.ticket);
        self.scheduler.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn one_slot_queues_in_order_and_says_so() {
        let s = Scheduler::new(1);
        let never = AtomicBool::new(false);
        let first = s.acquire(&never, None, |_| {}).unwrap();
        let (tx, rx) = mpsc::channel();
        let s2 = s.clone();
        let waiter = std::thread::spawn(move || {
            let never = AtomicBool::new(false);
            let _p = s2.acquire(&never, None, |n| tx.send(n).unwrap()).unwrap();
        });
        assert_eq!(rx.recv().unwrap(), 1, "one search runs before it");
        assert_eq!(s.waiting(), 1);
        drop(first);
        assert_eq!(rx.recv().unwrap(), 0, "it runs now");
        waiter.join().unwrap();
        assert_eq!(s.waiting(), 0);
    }

    #[test]
    fn a_waiting_search_can_give_up() {
        let s = Scheduler::new(1);
        let never = AtomicBool::new(false);
        let _held = s.acquire(&never, None, |_| {}).unwrap();
        let cancel = AtomicBool::new(true);
        assert!(s.acquire(&cancel, None, |_| {}).is_none());
        assert_eq!(s.waiting(), 0);
    }

    #[test]
    fn an_analysis_yields_after_its_slice() {
        let s = Scheduler::new(1);
        let never = AtomicBool::new(false);
        let flag = Arc::new(AtomicBool::new(false));
        let analysis = s.acquire(&never, Some(flag.clone()), |_| {}).unwrap();
        let s2 = s.clone();
        let waiter = std::thread::spawn(move || {
            let never = AtomicBool::new(false);
            s2.acquire(&never, None, |_| {}).is_some()
        });
        let started = Instant::now();
        while !flag.load(Ordering::SeqCst) {
            assert!(started.elapsed() < SLICE * 10, "never asked to yield");
            std::thread::sleep(POLL);
        }
        assert!(started.elapsed() >= SLICE - POLL * 2);
        drop(analysis);
        assert!(waiter.join().unwrap());
    }
}
