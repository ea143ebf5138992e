//! The hardware's control-flow stacks, evaluated statically.
//!
//! Everything the CALL/IF/LOOP stacks hold is known at compile time except one number per loop
//! frame (iterations left, read from an int uniform): return addresses, IF targets, loop bounds
//! and the int register a loop reads all come from instruction fields. So the stack contents
//! along any path are a *static* [`StackContext`], and the PC update after an instruction
//! (`interp/src/exec/flow.rs`, `Stacks::next_pc`) can be computed at compile time, with a
//! runtime branch only where a loop ends (iterate again or pop).
//!
//! [`next_pc`] is a line-by-line port of that function onto static contexts, so every rule
//! (ring-buffer overflow dropping the oldest entry, LOOP > IF > CALL > jump priority, a
//! finished loop suppressing the instruction's own jump, a BREAK being the LOOP stack's one
//! action of its instruction, the fourth consecutive CALL pop not updating the PC, aL
//! stepping after every iteration) holds by construction. A region of the
//! source program (a CALL body, an IF arm, a LOOP body) becomes one or more *instances*: the
//! same instructions compiled once per distinct stack context they run under. Structured code
//! is the common case of this (one context per region), and odd programs (JMP out of a region,
//! a CALL whose body ends in another region, overflowing rings, recursion) are still exact.
//!
//! Loop counters are the runtime part. Each loop frame gets a *slot* (0..=3) when it is pushed:
//! the lowest slot no other frame in the context uses. Generated code keeps the counter of a
//! frame in `JitContext::loop_counters[slot]`; when the ring overflows, the dropped frame's
//! slot is reused, so nothing has to move at run time.

use picajit_interp::pica::exec::pc_after;

/// CALL frame: pop when the PC reaches `end`, continue at `ret`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallFrame {
    /// One past the last instruction of the called range.
    pub end: u32,
    /// Return address.
    pub ret: u32,
}

/// IF frame: pop when the PC reaches `end` and continue at `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IfFrame {
    /// Where the true arm ends (start of the else arm).
    pub end: u32,
    /// Where execution continues (past the else arm).
    pub target: u32,
}

/// LOOP frame: at `end` step aL, then go back to `start` or pop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoopFrame {
    /// One past the last body instruction.
    pub end: u32,
    /// First body instruction.
    pub start: u32,
    /// Int uniform the LOOP read (its `z` is the aL step).
    pub int: u8,
    /// Runtime counter slot.
    pub slot: u8,
}

/// Capacity of the CALL ring.
pub const CALL_DEPTH: usize = 4;
/// Capacity of the IF ring.
pub const IF_DEPTH: usize = 8;
/// Capacity of the LOOP ring.
pub const LOOP_DEPTH: usize = 4;

/// The static contents of the three stacks, bottom first.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct StackContext {
    /// CALL ring.
    pub calls: Vec<CallFrame>,
    /// IF ring.
    pub ifs: Vec<IfFrame>,
    /// LOOP ring.
    pub loops: Vec<LoopFrame>,
}

impl StackContext {
    /// True when all three stacks are empty.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.ifs.is_empty() && self.loops.is_empty()
    }

    /// CALL push; a full ring drops its oldest entry.
    pub fn push_call(&mut self, f: CallFrame) {
        if self.calls.len() == CALL_DEPTH {
            self.calls.remove(0);
        }
        self.calls.push(f);
    }

    /// IF push; a full ring drops its oldest entry.
    pub fn push_if(&mut self, f: IfFrame) {
        if self.ifs.len() == IF_DEPTH {
            self.ifs.remove(0);
        }
        self.ifs.push(f);
    }

    /// LOOP push; a full ring drops its oldest entry. Returns the counter slot of the new frame.
    pub fn push_loop(&mut self, end: u32, start: u32, int: u8) -> u8 {
        if self.loops.len() == LOOP_DEPTH {
            self.loops.remove(0);
        }
        let slot = (0..LOOP_DEPTH as u8)
            .find(|s| self.loops.iter().all(|f| f.slot != *s))
            .unwrap_or(0);
        self.loops.push(LoopFrame {
            end,
            start,
            int,
            slot,
        });
        slot
    }
}

/// Where execution goes after an instruction, in static terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NextPc {
    /// Always this PC and context.
    Static(u32, StackContext),
    /// A loop frame ends here: aL += i`int`.z, then if `loop_counters[slot] > 0` decrement it and
    /// continue at `cont`, otherwise at `exit` (with the frame popped).
    LoopEnd {
        /// Int uniform of the loop.
        int: u8,
        /// Counter slot.
        slot: u8,
        /// Next PC and context when the loop iterates again.
        cont: (u32, StackContext),
        /// Next PC and context when the loop is done.
        exit: (u32, StackContext),
    },
}

/// Static port of `Stacks::next_pc`: the PC after the instruction at `pc` that requested `jump`,
/// with the stacks as they are after the instruction's own pushes and pops. `broke`: the
/// instruction was a BREAK whose pop was the LOOP stack's action, and `jump` that frame's end
/// (LOOP priority, no loop end checked).
pub fn next_pc(ctx: &StackContext, pc: u32, jump: Option<u32>, broke: bool) -> NextPc {
    let next = pc.wrapping_add(1);
    if broke {
        let (pc, c) = rest(ctx.clone(), next, jump, true, None);
        return NextPc::Static(pc, c);
    }
    match ctx.loops.last() {
        Some(top) if top.end == next => {
            let (int, slot, start) = (top.int, top.slot, top.start);
            let cont = rest(ctx.clone(), next, Some(start), false, jump);
            let mut popped = ctx.clone();
            popped.loops.pop();
            let exit = rest(popped, next, None, true, jump);
            NextPc::LoopEnd {
                int,
                slot,
                cont,
                exit,
            }
        }
        _ => {
            let (pc, c) = rest(ctx.clone(), next, None, false, jump);
            NextPc::Static(pc, c)
        }
    }
}

/// The IF and CALL checks and the priority merge of `Stacks::next_pc` ([`pc_after`]), after
/// the loop check, on `ctx`'s frames.
fn rest(
    mut ctx: StackContext,
    next: u32,
    loop_pc: Option<u32>,
    loop_popped: bool,
    jump: Option<u32>,
) -> (u32, StackContext) {
    let pc = pc_after(
        next,
        loop_pc,
        loop_popped,
        jump,
        |pc| pop_at(&mut ctx.ifs, pc, |f| (f.end, f.target)),
        |pc| pop_at(&mut ctx.calls, pc, |f| (f.end, f.ret)),
    );
    (pc, ctx)
}

/// Pop `stack`'s top frame if it ends at `pc` (`frame` gives a frame's end and where it sends
/// the PC), returning where it sends the PC.
fn pop_at<T>(stack: &mut Vec<T>, pc: u32, frame: impl Fn(&T) -> (u32, u32)) -> Option<u32> {
    let (end, to) = frame(stack.last()?);
    (end == pc).then(|| {
        stack.pop();
        to
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_overflow_drops_oldest_and_reuses_slot() {
        let mut c = StackContext::default();
        for i in 0..4 {
            assert_eq!(c.push_loop(10 + i, i, 0), i as u8);
        }
        // The frame in slot 0 is dropped; its slot is reused.
        assert_eq!(c.push_loop(20, 5, 1), 0);
        assert_eq!(c.loops.len(), 4);
        assert_eq!(c.loops[0].end, 11);
    }

    #[test]
    fn fourth_call_pop_is_lost() {
        let mut c = StackContext::default();
        // Four nested calls all ending at 10, returning to 1, 2, 3, 4 (innermost last).
        for r in 1..=4 {
            c.push_call(CallFrame { end: 10, ret: r });
        }
        // ret 4 ≠ 10 stops the chain after the first pop.
        assert_eq!(next_pc(&c, 9, None, false), {
            let mut e = c.clone();
            e.calls.pop();
            NextPc::Static(4, e)
        });
        // A chain of returns: each frame's return address is the next frame's end.
        let mut c = StackContext::default();
        c.push_call(CallFrame { end: 40, ret: 50 });
        c.push_call(CallFrame { end: 30, ret: 40 });
        c.push_call(CallFrame { end: 20, ret: 30 });
        c.push_call(CallFrame { end: 10, ret: 20 });
        // Pops 10→20, 20→30, 30→40, and the fourth pop (40→50) does not update the PC.
        assert_eq!(
            next_pc(&c, 9, None, false),
            NextPc::Static(40, StackContext::default())
        );
    }

    #[test]
    fn loop_pop_suppresses_jump_but_loses_to_if() {
        let mut c = StackContext::default();
        c.push_loop(5, 2, 0);
        match next_pc(&c, 4, Some(100), false) {
            NextPc::LoopEnd { cont, exit, .. } => {
                assert_eq!(cont.0, 2);
                assert_eq!(exit, (5, StackContext::default()));
            }
            other => panic!("{other:?}"),
        }
        c.push_if(IfFrame { end: 5, target: 9 });
        match next_pc(&c, 4, None, false) {
            NextPc::LoopEnd { cont, exit, .. } => {
                assert_eq!(cont.0, 2);
                assert!(cont.1.ifs.is_empty());
                assert_eq!(exit.0, 9);
            }
            other => panic!("{other:?}"),
        }
    }
}
