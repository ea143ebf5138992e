#[test]
fn dump() {
    let src = std::fs::read_to_string("examples/theia/ray_triangle.theia").unwrap();
    let p = picajit::theia::asm::assemble(&src).unwrap();
    let code = picajit_interp::theia::exec::Code::imem(p.imem());
    let k = picajit_interp::theia::table::ENTRY_POINTS
        .iter()
        .position(|(n, _)| *n == "ENTRYPOINT_ADRR_MAIN")
        .unwrap();
    let entry = p.entries[k] as u16;
    let b = picajit_jit::theia::generate(
        &code,
        picajit_interp::theia::Profile::Rtl,
        picajit_jit::Backend::X64,
        &[entry],
    )
    .unwrap();
    std::fs::write("/tmp/theia2/rt.bin", b).unwrap();
}
