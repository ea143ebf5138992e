//! x86-64 and AArch64 JIT compilers for PICA200 shaders (work in progress).
