//! Executable memory, the choice between running code natively and under the emulator, and
//! the one place generated code is called. Every executable mapping of the crate goes through
//! [`ExecCode`] (`tests/native_runtime.rs` checks that no file but this one and its macOS
//! part maps memory).
//!
//! Code is assembled into a plain `Vec<u8>`, copied into a fresh anonymous mapping that is
//! writable but not executable (`dynasmrt::mmap::MutableBuffer`), and the mapping is then
//! switched to read+execute (`make_exec`, an `mprotect`/`VirtualProtect`). Memory is therefore
//! never writable and executable at the same time (W^X), and the code is immutable afterwards.
//! On AArch64 the instruction cache is synchronised with the written range before the code
//! first runs. macOS is the exception: under the hardened runtime only `MAP_JIT` memory may be
//! executable, so there each block of code gets a `MAP_JIT` mapping written under Apple
//! silicon's per-thread write protection (on Intel Macs, which have none, the mapping is
//! writable and executable at once; `runtime/macos.rs` has the details).
//!
//! Generated code of every instruction set is a function of the host's C calling convention
//! (System V on x86-64) taking one pointer and returning a `u32`; what the pointer leads to,
//! and what the number means, is the caller's ([`CodeArg`]).

#[cfg(feature = "emulate-a64")]
use crate::host::a64::emulator::Guest;
use crate::host::Backend;
#[cfg(not(target_os = "macos"))]
use dynasmrt::mmap::{ExecutableBuffer, MutableBuffer};
use std::fmt;

#[cfg(target_os = "macos")]
mod macos;

/// Natively mapped code: dynasmrt's buffer (mapped writable, then switched to read+execute),
/// or on macOS a `MAP_JIT` mapping. Either dereferences to the code's bytes.
#[cfg(not(target_os = "macos"))]
type NativeCode = ExecutableBuffer;
#[cfg(target_os = "macos")]
type NativeCode = macos::JitCode;

/// Why code cannot be made runnable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// Code for this backend cannot run on this host: it is not the host's instruction set,
    /// and this build does not emulate it.
    NotRunnable(Backend),
    /// Mapping executable memory failed.
    Map(String),
    /// The emulator refused the code (too large for its code region).
    #[cfg_attr(
        not(feature = "emulate-a64"),
        allow(dead_code, reason = "only the emulator refuses code")
    )]
    Emulator(String),
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::NotRunnable(b @ Backend::A64) => write!(
                f,
                "{b} code cannot run on this host (other hosts run it under emulation in builds \
                 with the emulate-a64 feature)"
            ),
            ExecError::NotRunnable(b) => write!(f, "{b} code cannot run on this host"),
            ExecError::Map(e) => write!(f, "cannot map executable memory: {e}"),
            ExecError::Emulator(e) => write!(f, "cannot emulate the code: {e}"),
        }
    }
}

impl std::error::Error for ExecError {}

/// The one argument of generated code: natively a pointer, under the emulator the memory that
/// pointer reaches, copied into guest memory and back.
pub trait CodeArg {
    /// The pointer native code receives.
    fn pointer(&mut self) -> *mut u8;

    /// Run `entry` of emulated code on this argument: copy what the code reads into the
    /// guest's data area, run (with x0 a guest address), and copy back what it wrote, with
    /// the semantics of a native call. Returns w0.
    ///
    /// # Safety
    ///
    /// Every pointer the argument holds must be valid for what the code does through it (the
    /// contract of [`ExecCode::call`]); here they are read and written instead of by the code.
    #[cfg(feature = "emulate-a64")]
    unsafe fn emulate(&mut self, guest: &mut Guest, entry: usize) -> Result<u32, String>;
}

/// A self-contained block of plain bytes (no pointers inside) that the code reads and writes
/// through its argument; emulated code gets a copy at the start of the guest's data area,
/// copied back after the run, and runs at most `cap` instructions.
pub struct PlainBlock<'a> {
    /// The block.
    pub bytes: &'a mut [u8],
    /// Most instructions an emulated run executes (reaching it is an error).
    #[cfg_attr(
        not(feature = "emulate-a64"),
        allow(dead_code, reason = "only emulated runs are capped")
    )]
    pub cap: usize,
}

impl CodeArg for PlainBlock<'_> {
    #[inline(always)]
    fn pointer(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr()
    }

    #[cfg(feature = "emulate-a64")]
    unsafe fn emulate(&mut self, guest: &mut Guest, entry: usize) -> Result<u32, String> {
        use crate::host::a64::emulator::{DATA_BASE, DATA_SIZE};
        if self.bytes.len() as u64 > DATA_SIZE {
            return Err(format!(
                "{} bytes of context do not fit the guest data area",
                self.bytes.len()
            ));
        }
        guest.write(DATA_BASE, self.bytes)?;
        let w0 = guest.run(entry, DATA_BASE, self.cap)?;
        guest.read(DATA_BASE, self.bytes)?;
        Ok(w0)
    }
}

/// Code for `backend` runs natively on this host.
fn native(backend: Backend) -> bool {
    Backend::host() == Some(backend)
}

/// Code for `backend` runs on this host under the emulator.
fn emulated(backend: Backend) -> bool {
    cfg!(feature = "emulate-a64") && backend == Backend::A64 && !native(backend)
}

/// True when code for `backend` can run on this host, natively or emulated: when
/// [`ExecCode::for_backend`] does not answer [`ExecError::NotRunnable`].
pub fn can_run(backend: Backend) -> bool {
    native(backend) || emulated(backend)
}

/// Immutable code that can run on this host: natively (the host's backend, mapped W^X) or,
/// with the `emulate-a64` feature, AArch64 code under the emulator (`crate::host::a64::emulator`).
pub struct ExecCode {
    inner: Inner,
    /// Start address and length of natively mapped code ((0, 0) for emulated code), kept
    /// so that a call does not go through the buffer's (out-of-line) `Deref` twice: perf on
    /// short runs showed those calls.
    span: (usize, usize),
}

enum Inner {
    Native(NativeCode),
    #[cfg(feature = "emulate-a64")]
    Emulated(crate::host::a64::emulator::EmuCode),
}

impl fmt::Debug for ExecCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            Inner::Native(b) => write!(f, "ExecCode({} bytes)", b.len()),
            #[cfg(feature = "emulate-a64")]
            Inner::Emulated(e) => write!(f, "ExecCode(emulated, {} bytes)", e.len()),
        }
    }
}

impl ExecCode {
    /// Make `code`, generated for `backend`, runnable here: natively when `backend` is the
    /// host's, under the emulator for AArch64 code with the `emulate-a64` feature, otherwise
    /// [`ExecError::NotRunnable`].
    pub fn for_backend(backend: Backend, code: &[u8]) -> Result<ExecCode, ExecError> {
        if native(backend) {
            return ExecCode::native(code);
        }
        #[cfg(feature = "emulate-a64")]
        if emulated(backend) {
            return Ok(ExecCode {
                inner: Inner::Emulated(
                    crate::host::a64::emulator::EmuCode::new(code).map_err(ExecError::Emulator)?,
                ),
                span: (0, 0),
            });
        }
        let _ = code;
        Err(ExecError::NotRunnable(backend))
    }

    /// Map `code` as read+execute memory.
    fn native(code: &[u8]) -> Result<ExecCode, ExecError> {
        let buf = map_native(code).map_err(|e| ExecError::Map(e.to_string()))?;
        let span = (buf.as_ptr() as usize, buf.len());
        Ok(ExecCode {
            inner: Inner::Native(buf),
            span,
        })
    }

    /// Start address of natively mapped code (`None` for emulated code).
    pub fn address(&self) -> Option<usize> {
        match &self.inner {
            Inner::Native(b) => Some(b.as_ptr() as usize),
            #[cfg(feature = "emulate-a64")]
            Inner::Emulated(_) => None,
        }
    }

    /// Bytes of memory the code occupies: natively mapped code takes whole pages (4 KiB
    /// counted per page; hosts with larger pages hold more), emulated code its length.
    pub fn mapped_bytes(&self) -> usize {
        match &self.inner {
            Inner::Native(b) => b.len().max(1).div_ceil(4096) * 4096,
            #[cfg(feature = "emulate-a64")]
            Inner::Emulated(e) => e.len(),
        }
    }

    /// True when the code runs under the emulator.
    pub fn is_emulated(&self) -> bool {
        !matches!(self.inner, Inner::Native(_))
    }

    /// Run the function at byte offset `entry` on `arg`; returns what it returns. `Err` only
    /// for emulated code that did not finish (a fault, the instruction cap, a context that
    /// does not fit guest memory): the reason, also kept for
    /// [`last_error`](crate::host::a64::emulator::last_error).
    ///
    /// # Safety
    ///
    /// The code at `entry` must be a complete function generated for this code's backend with
    /// the signature `fn(*mut u8) -> u32` of the host's C calling convention, which restores
    /// every callee-saved register and the float control register, and touches no memory
    /// but its stack and what `arg` leads to; every pointer in `arg` must be valid for what
    /// the code does through it.
    #[inline(always)]
    pub unsafe fn call<A: CodeArg + ?Sized>(
        &self,
        entry: usize,
        arg: &mut A,
    ) -> Result<u32, String> {
        match &self.inner {
            // SAFETY: forwarded contract.
            Inner::Native(buf) => Ok(unsafe { call_native(buf, self.span, entry, arg.pointer()) }),
            #[cfg(feature = "emulate-a64")]
            Inner::Emulated(e) => {
                // SAFETY: forwarded contract (the argument copies in place of the code).
                let r = e.with_guest(|guest| unsafe { arg.emulate(guest, entry) });
                if let Err(why) = &r {
                    crate::host::a64::emulator::set_last_error(why.clone());
                }
                r
            }
        }
    }
}

/// Copy `code` into a fresh mapping, writable but not executable, then switch it to
/// read+execute and make the instruction cache coherent with it.
#[cfg(not(target_os = "macos"))]
fn map_native(code: &[u8]) -> std::io::Result<NativeCode> {
    let mut m = MutableBuffer::new(code.len().max(1))?;
    m.set_len(code.len());
    m.copy_from_slice(code);
    let buf = m.make_exec()?;
    // AArch64 instruction caches are not coherent with data writes: clean and invalidate the
    // range (`dc cvau`/`ic ivau`) before running.
    #[cfg(target_arch = "aarch64")]
    dynasmrt::cache_control::synchronize_icache(&buf);
    Ok(buf)
}

/// Copy `code` into a fresh `MAP_JIT` mapping, written under the thread's JIT write
/// protection, with the instruction cache made coherent with it (`runtime/macos.rs`).
#[cfg(target_os = "macos")]
fn map_native(code: &[u8]) -> std::io::Result<NativeCode> {
    macos::JitCode::new(code)
}

/// # Safety
///
/// As [`ExecCode::call`].
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
unsafe fn call_native(buf: &NativeCode, span: (usize, usize), entry: usize, arg: *mut u8) -> u32 {
    // `span` is `buf`'s start and length (recorded at mapping): the buffer's `Deref` is out
    // of line, and short calls showed it in perf.
    assert!(entry < span.1);
    #[cfg(target_arch = "x86_64")]
    type Entry = crate::host::x64::abi::EntryFn<u8>;
    #[cfg(target_arch = "aarch64")]
    type Entry = crate::host::a64::abi::EntryFn<u8>;
    // Make this thread see the instructions the mapping published (an `isb`, after
    // `synchronize_icache` or, on macOS, `sys_icache_invalidate` in `map_native`).
    #[cfg(target_arch = "aarch64")]
    dynasmrt::cache_control::prepare_for_execution(buf);
    #[cfg(not(target_arch = "aarch64"))]
    let _ = buf;
    // SAFETY: the caller guarantees a complete function with this signature at `entry`
    // (`entry < span.1`, checked above); the mapping is executable and outlives the call.
    let f: Entry = unsafe { std::mem::transmute((span.0 + entry) as *const u8) };
    // SAFETY: the caller guarantees that the code touches only its stack and what `arg`
    // leads to, and restores the callee-saved registers and the float control register.
    unsafe { f(arg) }
}

/// No backend targets this host: native code is never created here (`for_backend` maps only
/// the host's backend).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn call_native(
    _buf: &NativeCode,
    _span: (usize, usize),
    _entry: usize,
    _arg: *mut u8,
) -> u32 {
    unreachable!("no native code on a host without a backend")
}
