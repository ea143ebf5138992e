// What picajit's THEIA test benches (alu_tb.v, exe_tb.v) share (SPDX-License-Identifier: MIT OR
// Apache-2.0). tests/theia_rtl.rs copies it beside them into the scratch directory.

// Opens the input file `name` (a file-name macro the test defines) into `fd`, or ends the
// simulation with an error line naming `what`.
`define OPEN_INPUT(fd, name, what) \
    fd = $fopen(name, "r"); \
    if (fd == 0) begin \
      $display("ERROR cannot open %s", what); \
      $finish; \
    end
