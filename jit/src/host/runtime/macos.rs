//! Executable memory on macOS, where the hardened runtime (what a notarized app runs under)
//! refuses the rest of the runtime's way of mapping code: making anonymous memory executable
//! with `mprotect` needs the `com.apple.security.cs.allow-unsigned-executable-memory`
//! entitlement. An app with only `com.apple.security.cs.allow-jit` may map memory with
//! `MAP_JIT` instead, and that is what this file does, one mapping per block of code (the macOS
//! kernel allows a process any number of `MAP_JIT` regions, XNU's
//! `VM_MAP_POLICY_ALLOW_MULTIPLE_JIT`; iOS allows one, and this file is for macOS only).
//!
//! * **Apple silicon.** The mapping is `PROT_READ | PROT_WRITE | PROT_EXEC`, but the hardware
//!   never lets a thread write and execute it at once: each thread's view of every `MAP_JIT`
//!   region is either writable or executable, switched by `pthread_jit_write_protect_np`
//!   (pthread_jit_write_protect_np(3): enabled = executable and not writable, disabled =
//!   writable and not executable). The code is copied with the protection disabled on the
//!   copying thread only, for the copy alone, and enabled again (the state threads start in;
//!   there is no call that reads the state, so a caller that had disabled it on this thread
//!   for a JIT of its own finds it enabled after compiling a shader); other threads see the
//!   region executable and never writable throughout. The instruction cache is then made
//!   coherent with the written range (`sys_icache_invalidate`, `<libkern/OSCacheControl.h>`);
//!   each thread that runs the code executes an `isb` first (`call_native` in the runtime).
//! * **Intel Macs.** There is no per-thread protection there (pthread_jit_write_protect_np(3)
//!   promises it only where `pthread_jit_write_protect_supported_np` answers non-zero, which
//!   Apple silicon alone does, and the toggle exists only from macOS 11 while Rust's x86-64
//!   macOS target also runs on older systems, so it is not called). The region is mapped
//!   readable, writable and executable, as Apple documents for `MAP_JIT`, the code copied in
//!   before anything can run it, and write access then dropped with `mprotect` (removing a
//!   permission is what the hardened runtime never refuses; JITs such as SpiderMonkey's keep
//!   W^X on Intel Macs the same way). If that `mprotect` fails the mapping is released and the
//!   error reported, so code never stays writable and executable. x86-64 instruction fetch is
//!   coherent with stores, so no cache maintenance is needed.
//!
//! The mapping is unmapped when the code is dropped.

use std::ffi::c_void;
use std::ops::Deref;
use std::{io, ptr, slice};

#[cfg(target_arch = "aarch64")]
#[link(name = "System")]
extern "C" {
    /// `void sys_icache_invalidate(void *start, size_t len)` (`<libkern/OSCacheControl.h>`,
    /// libSystem; not in the `libc` crate): makes instruction fetches from `[start, start +
    /// len)` see the data written there, on every core.
    fn sys_icache_invalidate(start: *mut c_void, len: usize);
}

/// Immutable code in its own `MAP_JIT` mapping, owned by this value and unmapped on drop.
pub(super) struct JitCode {
    /// Start of the mapping (page-aligned, never null).
    ptr: *mut u8,
    /// Bytes of code at `ptr`.
    len: usize,
    /// Bytes mapped (`len`, at least 1), as given to `mmap` and `munmap`.
    size: usize,
}

// SAFETY: the mapping is owned by this value alone and never written after `new` returns
// (the only write is the copy in `new`, on the thread that makes the value); the shared
// access it allows is reading and executing the bytes, which any thread may do at once.
unsafe impl Send for JitCode {}
// SAFETY: as for `Send`: `&JitCode` gives read-only access to memory nobody writes.
unsafe impl Sync for JitCode {}

impl JitCode {
    /// Map `code` as executable memory.
    pub(super) fn new(code: &[u8]) -> io::Result<JitCode> {
        let size = code.len().max(1);
        // SAFETY: a fresh anonymous private mapping at an address the kernel chooses (no
        // `MAP_FIXED`), so it replaces nothing; the arguments are plain values.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
                libc::MAP_PRIVATE | libc::MAP_ANON | libc::MAP_JIT,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "mmap with MAP_JIT: {e} (under the hardened runtime the app needs the \
                     com.apple.security.cs.allow-jit entitlement)"
                ),
            ));
        }
        // From here on the mapping is unmapped on every path (`Drop`).
        let jit = JitCode {
            ptr: p.cast::<u8>(),
            len: code.len(),
            size,
        };
        #[cfg(target_arch = "aarch64")]
        {
            // SAFETY: switches this thread's view of every MAP_JIT region to writable and not
            // executable. No code of such a region runs on this thread before the protection
            // is enabled again two statements below (the copy in between is ordinary code),
            // and other threads' views do not change.
            unsafe { libc::pthread_jit_write_protect_np(0) };
            // SAFETY: `jit.ptr` starts `size >= code.len()` bytes of a mapping made above,
            // writable for this thread now and referenced by nothing else; `code` is a live
            // slice that cannot overlap a mapping that did not exist when it was borrowed.
            unsafe { ptr::copy_nonoverlapping(code.as_ptr(), jit.ptr, code.len()) };
            // SAFETY: switches this thread's view back to executable and not writable (the
            // state threads start in, which the rest of the process expects).
            unsafe { libc::pthread_jit_write_protect_np(1) };
            // SAFETY: the range is the code just written, inside the mapping; the call only
            // performs cache maintenance on it.
            unsafe { sys_icache_invalidate(jit.ptr.cast::<c_void>(), code.len()) };
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            // SAFETY: `jit.ptr` starts `size >= code.len()` bytes of a mapping made above,
            // writable (and referenced by nothing else); `code` is a live slice that cannot
            // overlap a mapping that did not exist when it was borrowed.
            unsafe { ptr::copy_nonoverlapping(code.as_ptr(), jit.ptr, code.len()) };
            // SAFETY: the range is exactly the mapping made above, owned by `jit`; dropping
            // write access invalidates no reference (nothing else points into it yet).
            let r = unsafe {
                libc::mprotect(
                    jit.ptr.cast::<c_void>(),
                    size,
                    libc::PROT_READ | libc::PROT_EXEC,
                )
            };
            if r != 0 {
                // `jit` is dropped here, unmapping the region: no code stays writable.
                return Err(io::Error::other(format!(
                    "mprotect of the MAP_JIT code to read and execute: {}",
                    io::Error::last_os_error()
                )));
            }
        }
        Ok(jit)
    }
}

impl Deref for JitCode {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for reads of `len` initialised bytes (the copied code in a
        // zero-filled mapping) for as long as `self` lives, and nothing writes them after
        // `new`; the mapping is always readable, whatever a thread's write protection.
        unsafe { slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for JitCode {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `size` are exactly the mapping `new` made, owned by this value
        // alone; slices borrowed from it (`Deref`) and calls into it (`ExecCode::call`
        // borrows the code) cannot outlive `self`.
        let r = unsafe { libc::munmap(self.ptr.cast::<c_void>(), self.size) };
        debug_assert_eq!(r, 0, "munmap: {}", io::Error::last_os_error());
    }
}
