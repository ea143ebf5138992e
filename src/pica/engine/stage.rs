//! How batches are spread and staged: the threads a batch runs on and its split into
//! contiguous parts on the worker pool, and the conversion of inputs into register rows in
//! chunks that stay in cache until the code reads them.

use crate::common::Error;

/// Vertices a batch needs before [`Shader::set_threads`](super::Shader::set_threads)'s automatic setting splits it
/// across the host's cores. A split on the worker pool costs about 5 us of CPU time per
/// call (`benches/split.rs`; README "Results"), and a part of this size of `mvp`, the
/// cheapest example, takes about 100 us, so the split repays its cost many times over; the
/// wall-clock crossover on an idle machine has not been measured, so the threshold is not
/// lowered towards it.
pub const PARALLEL_MIN_BATCH: usize = 8192;

/// Fewest vertices one thread of a split batch takes, whatever the thread count asked for.
pub const PARALLEL_MIN_PER_THREAD: usize = 512;

/// The most parts a batch is split into: one per worker of the pool plus the calling
/// thread (more would only queue behind them). A larger thread setting means this many, so
/// that no setting (`usize::MAX`, a C caller's `UINT32_MAX`) allocates per requested thread.
pub fn max_batch_threads() -> usize {
    crate::pool::workers() + 1
}

/// Threads for a batch of `n` vertices under the setting `threads` (see
/// [`Shader::set_threads`](super::Shader::set_threads)): at most [`max_batch_threads`].
pub fn batch_threads(threads: usize, n: usize) -> usize {
    let wanted = match threads {
        0 if n < PARALLEL_MIN_BATCH => 1,
        0 => crate::pool::workers(),
        t => t,
    };
    wanted
        .min(max_batch_threads())
        .min(n / PARALLEL_MIN_PER_THREAD)
        .max(1)
}

/// Split `0..n` (`n == rows.len()`) into `threads` contiguous parts and run `run(range,
/// rows of the range)` on each, the first on the calling thread and the others on the
/// process's persistent workers (`src/pool.rs`: no thread is started per call, and each
/// worker's thread-local staging rows and JIT registers are reused from batch to batch). Returns the sum of the parts' results, or the first error in part order (the
/// parts' errors carry whatever indices `run` gives them). A panic in a part is resumed
/// here.
pub(super) fn split_rows<R: Send, E: Send>(
    threads: usize,
    n: usize,
    rows: &mut [R],
    run: impl Fn(std::ops::Range<usize>, &mut [R]) -> Result<u64, E> + Sync,
) -> Result<u64, E> {
    if threads <= 1 || n < 2 {
        return run(0..n, rows);
    }
    let per = n.div_ceil(threads);
    let run = &run;
    let jobs: Vec<_> = rows
        .chunks_mut(per)
        .enumerate()
        .map(|(k, part)| {
            let lo = k * per;
            move || run(lo..lo + part.len(), part)
        })
        .collect();
    let results = crate::pool::run_parts(jobs);
    let mut total = 0;
    for r in results {
        total += r?;
    }
    Ok(total)
}

/// Indices of the set bits of `mask`, lowest first.
pub(super) fn set_bits(mut mask: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// `dst[k][r] = f(src[k][r])` (on f32 bits) for the registers `r` in `mask`, the others left
/// as they are. Inlined into each caller with its `f`, so the per-register loop is vector code.
#[inline(always)]
pub(super) fn map_rows(
    src: &[[[f32; 4]; 16]],
    dst: &mut [[[f32; 4]; 16]],
    mask: u16,
    f: impl Fn(u32) -> u32 + Copy,
) {
    let conv = |row: &[f32; 4]| row.map(|x| f32::from_bits(f(x.to_bits())));
    // One pass per vertex over its registers: each source row is read once, in address order.
    if mask == 0xFFFF {
        for (d, s) in dst.iter_mut().zip(src) {
            for (dr, sr) in d.iter_mut().zip(s) {
                *dr = conv(sr);
            }
        }
        return;
    }
    let mut regs = [0usize; 16];
    let mut count = 0;
    for r in set_bits(mask) {
        regs[count] = r;
        count += 1;
    }
    let regs = &regs[..count];
    // One register per 64-byte line the converted registers occupy.
    let mut lines = [0usize; 4];
    let mut nlines = 0;
    for &r in regs {
        if nlines == 0 || lines[nlines - 1] / 4 != r / 4 {
            lines[nlines] = r;
            nlines += 1;
        }
    }
    let lines = &lines[..nlines];
    // Reading each row's lines `PREFETCH` vertices before converting it starts those cache
    // misses early (a batch of 65,536 vertices is 16 MiB of rows, mostly not in cache); the
    // values only feed `touched`, which nothing waits for until the end.
    let mut touched = 0u32;
    for (k, (d, s)) in dst.iter_mut().zip(src).enumerate() {
        if let Some(ahead) = src.get(k + PREFETCH) {
            for &r in lines {
                touched |= ahead[r][0].to_bits();
            }
        }
        for &r in regs {
            d[r] = conv(&s[r]);
        }
    }
    std::hint::black_box(touched);
}

/// How far ahead [`map_rows`] reads input rows.
const PREFETCH: usize = 16;

/// Vertices converted per chunk of a staged batch: 256 rows are 64 KiB, which stay in the
/// L2 cache between their conversion and the code that reads them.
const STAGE_CHUNK: usize = 256;

/// A thread's staging rows, kept between batches (a fresh 64 KiB buffer per call, allocated
/// and zeroed, cost more than converting a 64-vertex batch): `dirty` has a bit for each
/// register that some row may hold a non-zero value in.
struct Staging {
    rows: Vec<[[f32; 4]; 16]>,
    dirty: u16,
}

thread_local! {
    static STAGING: std::cell::Cell<Option<Staging>> = const { std::cell::Cell::new(None) };
}

impl Staging {
    /// The calling thread's rows (or new ones): at least `len`, zero outside `mask`.
    fn take(len: usize, mask: u16) -> Staging {
        let mut s = STAGING
            .try_with(|c| c.take())
            .ok()
            .flatten()
            .unwrap_or(Staging {
                rows: Vec::new(),
                dirty: 0,
            });
        let stale = s.dirty & !mask;
        if stale != 0 {
            for row in &mut s.rows {
                for r in set_bits(stale) {
                    row[r] = [0.0; 4];
                }
            }
        }
        s.dirty = mask;
        if s.rows.len() < len {
            s.rows.resize(len, [[0.0; 4]; 16]);
        }
        s
    }

    /// Hand the rows back to the thread for its next batch.
    fn give_back(self) {
        // During thread teardown the slot may be gone: the rows are then just freed.
        let _ = STAGING.try_with(|c| c.set(Some(self)));
    }
}

/// Runs `run` over `0..n` in consecutive ranges of at most [`STAGE_CHUNK`] and adds up what
/// they return. The first error stops it, its invocation index counted from the start of
/// `0..n` instead of its range.
pub(super) fn chunked(
    n: usize,
    mut run: impl FnMut(std::ops::Range<usize>) -> Result<u64, Error>,
) -> Result<u64, Error> {
    let mut total = 0;
    for base in (0..n).step_by(STAGE_CHUNK) {
        total += run(base..n.min(base + STAGE_CHUNK)).map_err(|e| e.offset(base))?;
    }
    Ok(total)
}

/// Converts `inputs` to register rows with `load` in chunks (bounded memory; the rows stay in
/// cache between conversion and execution, see [`chunked`]) and hands each chunk to `run`,
/// which reports failing vertices relative to the chunk. `load` writes only the registers in
/// `mask` of the rows it is given; the others are zero.
pub(super) fn stage_chunks<T>(
    inputs: &[T],
    outputs: &mut [[[f32; 4]; 16]],
    mask: u16,
    load: impl Fn(&[T], &mut [[[f32; 4]; 16]]),
    mut run: impl FnMut(&[[[f32; 4]; 16]], &mut [[[f32; 4]; 16]]) -> Result<u64, Error>,
) -> Result<u64, Error> {
    let n = inputs.len().min(outputs.len());
    let mut staging = Staging::take(STAGE_CHUNK.min(n), mask);
    let result = chunked(n, |range| {
        let rows = &mut staging.rows[..range.len()];
        load(&inputs[range.clone()], rows);
        run(rows, &mut outputs[range])
    });
    staging.give_back();
    result
}
