// picajit's whole-program test bench around the THEIA RTL's execution unit
// (SPDX-License-Identifier: MIT OR Apache-2.0). It is compiled together with the original
// project's RTL files (MemoryUnit, ExecutionUnit and what they instantiate), read from a
// checkout at test time into a scratch directory, and never shipped with them.
//
// The bench plays the control unit and the IO unit for one core: for each case it loads the
// instruction memory and all 128 register rows straight into the memory arrays (the IO unit
// could only reach rows 0-63), pulses the execution unit's trigger with entry index 0x8000
// (instruction-memory row 0 holds the entry address), answers texture reads, logs output
// writes, waits for oDone (at most MAXCYCLES clocks) and prints every register row. The ALU's
// result flops and the return-address register are not reset between cases, as in the RTL.
//
// Case file (hex):  C N              then N lines  HI LO   (instruction-memory rows 0..N-1)
//                                    then 128 lines X Y Z  (register rows 0..127)
// Output per case:  O AX AY AZ DX DY DZ    one per clock with the output write enable
//                   T AX AY AZ             one per texture read (data: see tmem_data)
//                   D DONE RETVAL CYCLES RA RX RY RZ   DONE 0 when no oDone came (a stall);
//                                          RA the return address, R* the ALU's result flops
//                   G ROW X Y Z            128 lines
`timescale 1ns / 1ps
`include "aDefinitions.v"
`include "bench.vh"

`ifndef MAXCYCLES
`define MAXCYCLES 10000
`endif

module picajit_exe_tb;
  reg Clock = 0;
  reg Reset = 1;
  reg Trigger = 0;
  reg [15:0] Entry = 16'h8000;

  wire [95:0] wRead0, wRead1, wWriteData, wIORead0, wIORead1;
  wire [15:0] wReadAddr0, wReadAddr1, wWriteAddr, wIP1, wIP2;
  wire wWriteEnable, wReturnCode, wDone;
  wire [63:0] wInstruction1, wInstruction2;
  wire [95:0] wOmAddr, wOmData, wTmAddr;
  wire wOmWe, wTmReq;
  reg [95:0] TmData = 0;
  reg TmAvailable = 0;
  wire [15:0] wCreg;

  MemoryUnit MEM (
    .Clock(Clock), .Reset(Reset), .iFlipMemory(1'b0),
    .iDataReadAddress1_EXE(wReadAddr0), .iDataReadAddress2_EXE(wReadAddr1),
    .oData1_EXE(wRead0), .oData2_EXE(wRead1),
    .iDataWriteEnable_EXE(wWriteEnable), .iDataWriteAddress_EXE(wWriteAddr),
    .iData_EXE(wWriteData),
    .iDataReadAddress1_IO(16'h0), .iDataReadAddress2_IO(16'h0),
    .oData1_IO(wIORead0), .oData2_IO(wIORead1),
    .iDataWriteEnable_IO(1'b0), .iDataWriteAddress_IO(16'h0), .iData_IO(96'h0),
    .iInstructionReadAddress1(wIP1), .iInstructionReadAddress2(wIP2),
    .oInstruction1(wInstruction1), .oInstruction2(wInstruction2),
    .iInstructionWriteEnable(1'b0), .iInstructionWriteAddress(16'h0), .iInstruction(64'h0),
    .iControlRegister(16'h0), .oControlRegister(wCreg)
  );

  ExecutionUnit EXE (
    .Clock(Clock), .Reset(Reset), .iInitialCodeAddress(Entry),
    .iInstruction1(wInstruction1), .iInstruction2(wInstruction2),
    .oInstructionPointer1(wIP1), .oInstructionPointer2(wIP2),
    .iDataRead0(wRead0), .iDataRead1(wRead1), .iTrigger(Trigger),
    .oDataReadAddress0(wReadAddr0), .oDataReadAddress1(wReadAddr1),
    .oDataWriteEnable(wWriteEnable), .oDataWriteAddress(wWriteAddr), .oDataBus(wWriteData),
    .oReturnCode(wReturnCode),
    .oOMEMWriteAddress(wOmAddr), .oOMEMWriteData(wOmData), .oOMEMWriteEnable(wOmWe),
    .oTMEMReadAddress(wTmAddr), .iTMEMReadData(TmData), .iTMEMDataAvailable(TmAvailable),
    .oTMEMDataRequest(wTmReq), .oDone(wDone)
  );

  always #5 Clock = !Clock;

  // The texture word at an address: the same function as the Rust test's Io.
  function [95:0] tmem_data(input [95:0] a);
    reg [31:0] x, y, z;
    begin
      x = a[95:64] ^ 32'h12345678;
      y = a[63:32] * 3;
      z = {a[24:0], a[31:25]};
      tmem_data = {x, y, z};
    end
  endfunction

  reg logging = 0;

  // Texture memory: answer a request two clocks later for one clock, then wait for the
  // request to drop (it stays up while the operation is TMREAD).
  reg served = 0;
  always @(posedge Clock) begin
    if (!wTmReq || !logging) begin
      served <= 0;
      TmAvailable <= 0;
    end else if (!served) begin
      served <= 1;
      @(posedge Clock);
      @(posedge Clock);
      TmData <= tmem_data(wTmAddr);
      TmAvailable <= 1;
      $display("T %h %h %h", wTmAddr[95:64], wTmAddr[63:32], wTmAddr[31:0]);
      @(posedge Clock);
      TmAvailable <= 0;
    end
  end

  always @(posedge Clock)
    if (logging && wOmWe)
      $display("O %h %h %h %h %h %h", wOmAddr[95:64], wOmAddr[63:32], wOmAddr[31:0],
               wOmData[95:64], wOmData[63:32], wOmData[31:0]);

  integer fd, n, i, cycles, done, retval;
  reg [31:0] hi, lo, x, y, z;
  reg [7:0] tag;
  reg [95:0] row;
  reg [15:0] ra;
  initial begin
    `OPEN_INPUT(fd, `CASES, "cases")
    while (!$feof(fd)) begin
      n = 0;
      if ($fscanf(fd, " %c %h", tag, n) == 2 && tag == "C") begin
        // reset the unit (its FSMs may be stuck after a stall); the result flops and the
        // return address keep their values
        Reset = 1;
        Trigger = 0;
        repeat (3) @(negedge Clock);
        // The fetch unit keeps presenting the word at its pointer, which the new program
        // replaces: a CALL there would set the return address, an effect of loading the
        // memory behind the unit's back that the RTL's one-time load never has.
        ra = EXE.IFU.rReturnAddress;
        // rows past the program hold NOP (0): the fetch unit reads ahead of the executed
        // instruction, and unknown bits there would fire its CALL edge detector
        // (`always @(posedge IsCall)`) in simulation
        for (i = 0; i <= 128; i = i + 1)
          MEM.INST_MEM.Ram[i] = 64'h0;
        for (i = 0; i < n; i = i + 1) begin
          if ($fscanf(fd, " %h %h", hi, lo) != 2) $display("ERROR short case");
          MEM.INST_MEM.Ram[i] = {hi, lo};
        end
        for (i = 0; i < 128; i = i + 1) begin
          if ($fscanf(fd, " %h %h %h", x, y, z) != 3) $display("ERROR short registers");
          row = {x, y, z};
          case (i / 32)
            0: MEM.IMEM.Ram[i % 32] = row;
            1: MEM.SMEM.MEM_B.Ram[i % 32] = row;
            2: MEM.RMEM.Ram[i % 32] = row;
            3: MEM.XMEM.Ram[i % 32] = row;
          endcase
        end
        Reset = 0;
        repeat (3) @(negedge Clock);
        EXE.IFU.rReturnAddress = ra;
        logging = 1;
        Trigger = 1;
        @(negedge Clock);
        Trigger = 0;
        cycles = 0;
        while (!wDone && cycles < `MAXCYCLES) begin
          @(negedge Clock);
          cycles = cycles + 1;
        end
        done = wDone;
        retval = wReturnCode;
        // Let the RETURN that follows the completing instruction write back (two clocks), then
        // hold the unit in reset: after a RET followed in memory by RETURN, done comes at the
        // RET and the unit goes on from the return address (its first instruction completes
        // four clocks after done), which the comparison leaves out.
        repeat (3) @(negedge Clock);
        Reset = 1;
        logging = 0;
        $display("D %0d %0d %0d %h %h %h %h", done, retval, cycles, EXE.IFU.rReturnAddress,
                 EXE.ALU2ResultA, EXE.ALU2ResultB, EXE.ALU2ResultC);
        for (i = 0; i < 128; i = i + 1) begin
          case (i / 32)
            0: row = MEM.IMEM.Ram[i % 32];
            1: row = MEM.SMEM.MEM_B.Ram[i % 32];
            2: row = MEM.RMEM.Ram[i % 32];
            3: row = MEM.XMEM.Ram[i % 32];
          endcase
          $display("G %0d %h %h %h", i, row[95:64], row[63:32], row[31:0]);
        end
      end
    end
    $finish;
  end
endmodule
