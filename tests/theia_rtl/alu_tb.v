// picajit's test bench around the THEIA RTL's VectorALU (SPDX-License-Identifier: MIT OR Apache-2.0).
// It is compiled together with the original project's RTL files, read from a checkout at test
// time, and never shipped with them. Each line of the vector file is
//   OP AX AY AZ BX BY BZ   (hex)
// The bench raises iInputReady for one clock, waits for OutputReady (at most 400 clocks) and
// prints one line per vector:
//   RA RB RC TAKEN NOTTAKEN CYCLES    (hex, hex, hex, bit, bit, decimal; CYCLES -1 = no result)
`timescale 1ns / 1ps
`include "aDefinitions.v"
`include "bench.vh"

module picajit_alu_tb;
  reg Clock = 0;
  reg Reset = 1;
  reg [15:0] Op = 0;
  reg [31:0] Ax = 0, Ay = 0, Az = 0, Bx = 0, By = 0, Bz = 0;
  reg InputReady = 0;
  wire [31:0] RA, RB, RC;
  wire Taken, NotTaken, RetSub, OutputReady;
  wire [95:0] OmAddr, OmData, TmAddr;
  wire OmWe, TmReq;

  VectorALU alu (
    .Clock(Clock), .Reset(Reset), .iOperation(Op),
    .iChannel_Ax(Ax), .iChannel_Bx(Bx), .iChannel_Ay(Ay), .iChannel_By(By),
    .iChannel_Az(Az), .iChannel_Bz(Bz),
    .oResultA(RA), .oResultB(RB), .oResultC(RC),
    .iInputReady(InputReady), .oBranchTaken(Taken), .oBranchNotTaken(NotTaken),
    .oReturnFromSub(RetSub), .iCurrentIP(16'h0),
    .oOMEMWriteAddress(OmAddr), .oOMEMWriteData(OmData), .oOMEM_WriteEnable(OmWe),
    .oTMEMReadAddress(TmAddr), .iTMEMReadData(96'h0), .iTMEMDataAvailable(1'b0),
    .oTMEMDataRequest(TmReq), .OutputReady(OutputReady)
  );

  always #5 Clock = !Clock;

  integer fd, n, cycles, taken, nottaken, attempt;
  reg [31:0] op32;
  initial begin
    `OPEN_INPUT(fd, `VECTORS, "vectors")
    repeat (3) @(negedge Clock);
    Reset = 0;
    repeat (3) @(negedge Clock);
    // Warm-up: the first MAG after reset never raises OutputReady in simulation (the
    // square-root unit's toggle flop starts unknown), so run one of each multi-cycle
    // operation before the vectors.
    Op = `MAG; Ax = 32'h20000; InputReady = 1;
    @(negedge Clock);
    InputReady = 0;
    repeat (60) @(negedge Clock);
    Op = `DIV; Bx = 32'h20000; By = 32'h20000; Bz = 32'h20000; InputReady = 1;
    @(negedge Clock);
    InputReady = 0;
    repeat (100) @(negedge Clock);
    Op = 0;
    repeat (4) @(negedge Clock);
    while (!$feof(fd)) begin
      n = $fscanf(fd, "%h %h %h %h %h %h %h\n", op32, Ax, Ay, Az, Bx, By, Bz);
      if (n == 7) begin
        // A vector gets a second attempt when no result comes: the square-root unit's input
        // flop (kept blocking, as written) sometimes misses its start pulse in simulation
        // after another multi-cycle operation. An operation that never completes stalls twice.
        attempt = 0;
        cycles = 400;
        while (attempt < 2 && cycles >= 400) begin
          Op = op32[15:0];
          InputReady = 1;
          @(negedge Clock);
          InputReady = 0;
          cycles = 0;
          taken = 0;
          nottaken = 0;
          while (!OutputReady && cycles < 400) begin
            @(negedge Clock);
            cycles = cycles + 1;
          end
          if (!OutputReady) begin
            Op = 0;
            repeat (4) @(negedge Clock);
          end
          attempt = attempt + 1;
        end
        if (OutputReady) begin
          taken = Taken;
          nottaken = NotTaken;
          @(negedge Clock);
          $display("%h %h %h %0d %0d %0d", RA, RB, RC, taken, nottaken, cycles);
        end else
          $display("%h %h %h %0d %0d -1", RA, RB, RC, taken, nottaken);
        // idle with a NOP so that every unit returns to its initial state
        Op = 0;
        repeat (4) @(negedge Clock);
      end
    end
    $finish;
  end
endmodule
