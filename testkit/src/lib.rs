//! Dev-only support for picajit's tests, benches and fuzz targets; not part of the library
//! an emulator links. [`testgen`] generates random PICA200 programs (valid but arbitrary
//! shaders with their uniforms and inputs) from a seed or from fuzzer bytes, drawing opcodes
//! from the opcode table, and assembler stress sources.

pub mod testgen;
