//! The worker threads that split batches run on.
//!
//! A batch split across threads used to start and join scoped threads on every call: each
//! start costs a `clone`, a fresh stack and, on the new thread, fresh thread-local staging
//! rows and multi-vertex buffers (`Staging` in `src/pica/engine/stage.rs`, the `Spare` slots of
//! `jit/src/pica/batch`), which the thread threw away when it ended. The workers here live for
//! the rest of the process, so their thread-local buffers are allocated once and reused by
//! every later batch. The pool is one per process, created on the first split batch: it
//! belongs to no engine, so dropping a shader or an engine neither waits for it nor leaves
//! anything of that engine behind; idle workers sleep on a condition variable.

use std::sync::OnceLock;

/// Workers in the pool: one per core of the host. The calling thread runs the first part of
/// a split batch itself, so a batch split into as many parts as cores leaves one worker idle;
/// parts beyond the workers queue and run as workers free up (the same outputs either way).
pub(crate) fn workers() -> usize {
    // Asked once: `available_parallelism` reads cgroup files on Linux, and every batch asks.
    static WORKERS: OnceLock<usize> = OnceLock::new();
    *WORKERS.get_or_init(|| std::thread::available_parallelism().map_or(1, |c| c.get()))
}

/// The process's pool, or `None` when the host refused to start its threads (then parts run
/// one after another on the calling thread: slower, the same results).
fn pool() -> Option<&'static rayon_core::ThreadPool> {
    static POOL: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon_core::ThreadPoolBuilder::new()
            .num_threads(workers())
            .thread_name(|k| format!("picajit-batch-{k}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Run every job and return their results in job order: the first on the calling thread, the
/// others on the pool's workers at the same time. Returns once all have finished; a panic in
/// a job is resumed on the calling thread after the others have finished.
pub(crate) fn run_parts<T: Send>(jobs: Vec<impl FnOnce() -> T + Send>) -> Vec<T> {
    let mut slots: Vec<Option<T>> = Vec::with_capacity(jobs.len());
    slots.resize_with(jobs.len(), || None);
    let mut jobs = jobs.into_iter();
    let mut slot_iter = slots.iter_mut();
    match (pool(), jobs.next(), slot_iter.next()) {
        (Some(pool), Some(first), Some(first_slot)) => {
            pool.in_place_scope(|scope| {
                for (job, slot) in jobs.by_ref().zip(slot_iter.by_ref()) {
                    scope.spawn(move |_| *slot = Some(job()));
                }
                *first_slot = Some(first());
            });
        }
        (None, Some(first), Some(first_slot)) => {
            *first_slot = Some(first());
            for (job, slot) in jobs.zip(slot_iter) {
                *slot = Some(job());
            }
        }
        _ => {}
    }
    // Every job ran to completion (a panic would have been resumed above).
    slots.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_job_order() {
        let jobs: Vec<_> = (0..9).map(|k| move || k * 10).collect();
        assert_eq!(
            super::run_parts(jobs),
            (0..9).map(|k| k * 10).collect::<Vec<_>>()
        );
    }

    #[test]
    fn calls_reuse_the_same_threads() {
        // Thread ids are never reused within a process: threads started per call would show
        // up as new ids on every call.
        let mut seen = std::collections::HashSet::new();
        for _ in 0..6 {
            let jobs: Vec<_> = (0..4)
                .map(|_| {
                    || {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        std::thread::current().id()
                    }
                })
                .collect();
            let ids = super::run_parts(jobs);
            assert_eq!(ids[0], std::thread::current().id());
            seen.extend(ids);
        }
        assert!(seen.len() <= super::workers() + 1, "{} threads", seen.len());
    }

    #[test]
    fn a_panicking_job_reaches_the_caller() {
        let jobs: Vec<Box<dyn FnOnce() -> u32 + Send>> =
            vec![Box::new(|| 1), Box::new(|| panic!("part 1 failed"))];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| super::run_parts(jobs)));
        assert!(r.is_err());
        // The pool still works afterwards.
        let jobs: Vec<_> = [2, 3].into_iter().map(|v| move || v).collect();
        assert_eq!(super::run_parts(jobs), vec![2, 3]);
    }
}
