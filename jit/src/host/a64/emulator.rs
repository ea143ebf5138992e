//! Running AArch64 code on other hosts, under the unicorn CPU emulator (feature
//! `emulate-a64`). The runtime (`crate::host::runtime::ExecCode::call`) hands emulated code
//! a [`Guest`] where it would call native code, and the argument's
//! [`CodeArg::emulate`](crate::host::runtime::CodeArg::emulate) copies what the code reads
//! into guest memory, runs it and copies back what it writes: what those objects are is the
//! argument's business, not this file's.
//!
//! # Guest memory
//!
//! ```text
//! 0x0010_0000  code (read + execute, up to CODE_MAX bytes)
//! 0x0100_0000  data (read + write, DATA_SIZE bytes): laid out by the argument
//! 0x0200_0000  stack (64 KiB, grows down)
//! 0x0300_0000  return sentinel (LR at entry; emulation stops when the PC gets there)
//! ```
//!
//! Copying (a few KiB per call) is cheaper than mapping host memory, which would need page
//! alignment of every object and a mapping per call; it also keeps the emulated code from
//! ever seeing a host address.
//!
//! # Cost
//!
//! A `Unicorn` instance is not `Send`, so each thread keeps one (created on first use) and
//! re-uses it for every program: switching to another program writes its code and drops the
//! emulator's translation cache. Each run is bounded by an instruction cap (`emu_start` with
//! no timeout and a count); the PC must have reached the sentinel, otherwise the run fails
//! with the reason, which the runtime also keeps for [`last_error`].

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use unicorn_engine::{Arch, Mode, Prot, RegisterARM64, Unicorn};

const CODE_BASE: u64 = 0x0010_0000;
/// Largest code size that can be emulated.
pub const CODE_MAX: usize = 0x00F0_0000;
/// Start of the guest's read/write data area, which the argument lays out.
pub const DATA_BASE: u64 = 0x0100_0000;
/// Size of the data area.
pub const DATA_SIZE: u64 = 0x21_0000;
const STACK_BASE: u64 = 0x0200_0000;
const STACK_SIZE: u64 = 0x1_0000;
const SENTINEL: u64 = 0x0300_0000;

// The guest regions must not overlap.
const _: () = assert!(CODE_BASE + CODE_MAX as u64 <= DATA_BASE);
const _: () = assert!(DATA_BASE + DATA_SIZE <= STACK_BASE);
const _: () = assert!(STACK_BASE + STACK_SIZE <= SENTINEL);

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static EMU: RefCell<Option<Guest>> = const { RefCell::new(None) };
    static LAST_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
    static COUNTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static COUNTS: std::cell::Cell<InstructionCounts> =
        const { std::cell::Cell::new(InstructionCounts { total: 0, broadcast: 0, budget: 0, q_memory: 0 }) };
}

/// AArch64 instructions emulated calls on this thread executed while counting was on
/// ([`count_instructions`]): a measurement of generated code (what the bench table cannot
/// time without AArch64 hardware), not used by the runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstructionCounts {
    /// Every instruction.
    pub total: u64,
    /// Broadcast reads of one value for all lanes: `ldr s` with an immediate offset and
    /// `dup v.4s, v.s[0]`.
    pub broadcast: u64,
    /// Budget checks of code that counts its budget down in x24: `subs x24, x24, #n` and the
    /// branch after it.
    pub budget: u64,
    /// Loads and stores of whole q registers with an immediate offset (`ldr q`/`str q`):
    /// per-lane state traffic, where a spill of a vector value would show.
    pub q_memory: u64,
}

/// Start counting the instructions emulated calls on this thread execute (from zero), or
/// stop; returns the counts so far. Counting runs a hook per instruction: measurement only.
pub fn count_instructions(on: bool) -> InstructionCounts {
    let counts = COUNTS.with(|c| c.replace(InstructionCounts::default()));
    COUNTING.with(|c| c.set(on));
    counts
}

/// Why the last emulated call on this thread failed, if it did (diagnostics).
pub fn last_error() -> Option<String> {
    LAST_ERROR.with(|e| e.borrow().clone())
}

/// Record why an emulated call failed (see [`last_error`]).
pub(crate) fn set_last_error(e: String) {
    LAST_ERROR.with(|l| *l.borrow_mut() = Some(e));
}

/// Types that are plain bytes both ways: no references, no heap, and every bit pattern the
/// generated code may leave in them is a value of the type (raw pointers among them are
/// translated back by the argument before any use). Only such values cross into and out
/// of guest memory.
///
/// # Safety
///
/// Implement only for `repr(C)` (or primitive) types with that property; their padding,
/// if any, is only ever copied, never interpreted.
pub unsafe trait Plain {}
// SAFETY: primitive numbers: every bit pattern is a value.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for i32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: as above.
unsafe impl Plain for f32 {}
// SAFETY: arrays of plain values, without padding between elements.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

fn bytes_of<T: Plain>(v: &T) -> &[u8] {
    // SAFETY: `T` is plain data (see `Plain`): its `size_of::<T>()` bytes may be viewed and
    // copied as bytes.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

fn err(what: &str, e: impl std::fmt::Debug) -> String {
    format!("{what}: {e:?}")
}

/// AArch64 code prepared for emulation.
pub struct EmuCode {
    id: u64,
    code: Vec<u8>,
}

impl std::fmt::Debug for EmuCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EmuCode({} bytes)", self.code.len())
    }
}

/// This thread's emulator with one program loaded, as an argument sees it: guest memory to
/// copy to and from, and runs of the program.
pub struct Guest {
    uc: Unicorn<'static, ()>,
    /// Id of the code currently in the code region.
    loaded: u64,
    /// Programs loaded so far (see [`RENEW_AFTER`]).
    loads: u32,
}

/// Programs an emulator instance runs before it is replaced by a fresh one: what unicorn
/// keeps per translated program beyond its translation buffer is then returned too, so a
/// long run over many programs (the differential fuzzer) stays at a bounded footprint.
const RENEW_AFTER: u32 = 256;

impl Guest {
    fn new() -> Result<Guest, String> {
        let mut uc = Unicorn::new(Arch::ARM64, Mode::ARM).map_err(|e| err("unicorn", e))?;
        uc.mem_map(CODE_BASE, CODE_MAX as u64, Prot::READ | Prot::EXEC)
            .map_err(|e| err("map code", e))?;
        uc.mem_map(DATA_BASE, DATA_SIZE, Prot::READ | Prot::WRITE)
            .map_err(|e| err("map data", e))?;
        uc.mem_map(STACK_BASE, STACK_SIZE, Prot::READ | Prot::WRITE)
            .map_err(|e| err("map stack", e))?;
        uc.mem_map(SENTINEL, 0x1000, Prot::READ | Prot::EXEC)
            .map_err(|e| err("map sentinel", e))?;
        // FP/SIMD enabled at EL0 and EL1 (CPACR_EL1.FPEN = 0b11).
        uc.reg_write(RegisterARM64::CPACR_EL1, 3 << 20)
            .map_err(|e| err("cpacr", e))?;
        Ok(Guest {
            uc,
            loaded: 0,
            loads: 0,
        })
    }

    fn load(&mut self, code: &EmuCode) -> Result<(), String> {
        if self.loaded == code.id {
            return Ok(());
        }
        self.uc
            .mem_write(CODE_BASE, &code.code)
            .map_err(|e| err("write code", e))?;
        // Drop every translation, not only those of the code range: QEMU hands out its
        // translation buffer (1 GiB on 64-bit hosts) from a pointer that only a full flush
        // rewinds, so removing ranges left the pointer climbing through fresh pages with each
        // new program (the differential fuzzer's RSS reached 1.7 GB in ten minutes).
        self.uc
            .ctl_flush_tb()
            .map_err(|e| err("flush translations", e))?;
        self.loaded = code.id;
        self.loads += 1;
        Ok(())
    }

    /// Write `bytes` to guest memory at `addr`.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), String> {
        self.uc
            .mem_write(addr, bytes)
            .map_err(|e| err("write guest memory", e))
    }

    /// Read `buf.len()` bytes of guest memory at `addr`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        self.uc
            .mem_read(addr, buf)
            .map_err(|e| err("read guest memory", e))
    }

    /// Write the bytes of `v` to guest memory at `addr`.
    pub fn write_value<T: Plain>(&mut self, addr: u64, v: &T) -> Result<(), String> {
        self.write(addr, bytes_of(v))
    }

    /// Read a `T` from guest memory at `addr` into `out`.
    pub fn read_value<T: Plain>(&self, addr: u64, out: &mut T) -> Result<(), String> {
        // SAFETY: `T` is plain data whose every bit pattern the generated code may write is
        // a value of the type (see `Plain`), so overwriting its bytes keeps it valid.
        let buf = unsafe {
            std::slice::from_raw_parts_mut((out as *mut T).cast::<u8>(), std::mem::size_of::<T>())
        };
        self.read(addr, buf)
    }

    /// Run the loaded code from byte offset `entry` with x0 = `arg` (a guest address), an
    /// empty stack, FPCR 0 and the sentinel as return address, for at most `cap`
    /// instructions; returns w0. Not reaching the sentinel (the cap, a fault) is an error.
    pub fn run(&mut self, entry: usize, arg: u64, cap: usize) -> Result<u32, String> {
        let uc = &mut self.uc;
        uc.reg_write(RegisterARM64::X0, arg)
            .map_err(|e| err("x0", e))?;
        uc.reg_write(RegisterARM64::SP, STACK_BASE + STACK_SIZE)
            .map_err(|e| err("sp", e))?;
        uc.reg_write(RegisterARM64::X30, SENTINEL)
            .map_err(|e| err("lr", e))?;
        uc.reg_write(RegisterARM64::FPCR, 0)
            .map_err(|e| err("fpcr", e))?;
        let hook = if COUNTING.with(|c| c.get()) {
            let h = uc
                .add_code_hook(CODE_BASE, CODE_BASE + CODE_MAX as u64 - 1, |uc, addr, _| {
                    let mut word = [0u8; 4];
                    let w = match uc.mem_read(addr, &mut word) {
                        Ok(()) => u32::from_le_bytes(word),
                        Err(_) => 0,
                    };
                    COUNTS.with(|c| {
                        let mut n = c.get();
                        n.total += 1;
                        // LDR St, [Xn, #imm]; DUP Vd.4S, Vn.S[0].
                        if w & 0xFFC0_0000 == 0xBD40_0000 || w & 0xFFFF_FC00 == 0x4E04_0400 {
                            n.broadcast += 1;
                        }
                        // SUBS X24, X24, #imm (and the B.LO after it).
                        if w & 0xFFC0_03FF == 0xF100_0318 {
                            n.budget += 2;
                        }
                        // LDR Qt / STR Qt, [Xn, #imm] (unsigned offset).
                        if w & 0xFF80_0000 == 0x3D80_0000 {
                            n.q_memory += 1;
                        }
                        c.set(n);
                    });
                })
                .map_err(|e| err("hook", e))?;
            // Blocks translated before the hook existed would run without it.
            uc.ctl_flush_tb()
                .map_err(|e| err("flush translations", e))?;
            Some(h)
        } else {
            None
        };
        let started = {
            let _env = HostFloatEnv::default_for_emulation();
            uc.emu_start(CODE_BASE + entry as u64, SENTINEL, 0, cap)
        };
        if let Some(h) = hook {
            uc.remove_hook(h).map_err(|e| err("unhook", e))?;
            uc.ctl_flush_tb()
                .map_err(|e| err("flush translations", e))?;
        }
        started.map_err(|e| err("emu_start", e))?;
        let pc = uc.pc_read().map_err(|e| err("pc", e))?;
        if pc != SENTINEL {
            return Err(format!(
                "stopped at {pc:#x} (instruction cap {cap} reached?)"
            ));
        }
        let x0 = uc.reg_read(RegisterARM64::X0).map_err(|e| err("x0", e))?;
        Ok(x0 as u32)
    }
}

/// The host's default float environment while the emulator runs. Its floating point is
/// software, but with a fast path ("hardfloat") that computes round-to-nearest guest
/// operations with host float instructions and takes their results as they are: with the
/// calling thread's MXCSR set to another rounding mode or to flush denormals, the guest's
/// results would follow it (`tests/float_env.rs` saw F32-mode PICA and USC results change).
/// So MXCSR's control bits are the default (round to nearest, nothing flushed, every
/// exception masked) during the emulation, and the caller's value comes back afterwards.
struct HostFloatEnv {
    #[cfg(target_arch = "x86_64")]
    saved: Option<u32>,
}

impl HostFloatEnv {
    #[cfg(target_arch = "x86_64")]
    const MXCSR_DEFAULT: u32 = 0x1F80;
    #[cfg(target_arch = "x86_64")]
    const MXCSR_FLAGS: u32 = 0x3F;

    fn default_for_emulation() -> HostFloatEnv {
        #[cfg(target_arch = "x86_64")]
        {
            let mut v = 0u32;
            // SAFETY: `stmxcsr` stores this thread's MXCSR into the local `v`; nothing else
            // is read or written.
            unsafe {
                std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack, preserves_flags));
            }
            if v & !Self::MXCSR_FLAGS == Self::MXCSR_DEFAULT {
                return HostFloatEnv { saved: None };
            }
            let default = Self::MXCSR_DEFAULT | (v & Self::MXCSR_FLAGS);
            // SAFETY: loads a valid MXCSR (no reserved bit, every exception masked) for this
            // thread only; `drop` loads the saved value back.
            unsafe {
                std::arch::asm!("ldmxcsr [{}]", in(reg) &default, options(nostack, preserves_flags, readonly));
            }
            HostFloatEnv { saved: Some(v) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        HostFloatEnv {}
    }
}

impl Drop for HostFloatEnv {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(v) = self.saved {
            // SAFETY: loads back the value this thread's MXCSR had before (valid, as it was
            // in use).
            unsafe {
                std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack, preserves_flags, readonly));
            }
        }
    }
}

impl EmuCode {
    /// Prepare `code` (at most [`CODE_MAX`] bytes).
    pub fn new(code: &[u8]) -> Result<EmuCode, String> {
        if code.len() > CODE_MAX {
            return Err(format!(
                "{} bytes of code is too large to emulate",
                code.len()
            ));
        }
        Ok(EmuCode {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            code: code.to_vec(),
        })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// Run `f` on this thread's emulator with this code loaded (a fresh emulator after
    /// [`RENEW_AFTER`] programs).
    pub fn with_guest<R>(
        &self,
        f: impl FnOnce(&mut Guest) -> Result<R, String>,
    ) -> Result<R, String> {
        EMU.with(|cell| {
            let mut slot = cell.borrow_mut();
            let renew = slot
                .as_ref()
                .is_some_and(|e| e.loads >= RENEW_AFTER && e.loaded != self.id);
            if slot.is_none() || renew {
                *slot = None;
                *slot = Some(Guest::new()?);
            }
            let emu = slot.as_mut().ok_or("no emulator")?;
            emu.load(self)?;
            f(emu)
        })
    }
}
