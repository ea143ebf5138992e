//! TOY, the made-up instruction set (`picajit_interp::toy`), in the facade: its text syntax
//! ([`asm`]), a program prepared for an [`Engine`](crate::Engine) ([`engine::Shader`]) and the
//! `picajit … --isa toy` commands ([`cli`]). Its C functions, `src/toy/capi.rs`, are the
//! module `capi::toy`, declared with the other ISAs' in the C ABI's module tree.
//!
//! ```
//! use picajit::interp::toy::exec::{State, Status};
//! use picajit::toy::{engine::Shader, parse};
//! use picajit::Engine;
//!
//! let program = parse("li r1, 10\nl: add r2, r2, r1\nloop r1, l\nhalt").unwrap();
//! let shader = Shader::new(program, Engine::Jit).unwrap();
//! let mut state = State::default();
//! let out = shader.run(&mut state, 0);
//! assert_eq!(out.status, Status::Halted { pc: 3 });
//! assert_eq!(state.regs[2], 55);
//! ```

pub mod asm;
pub mod cli;
pub mod engine;

pub use asm::{parse, print, ParseError};
