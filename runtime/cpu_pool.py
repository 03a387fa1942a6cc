"""The CPU thread pool's native side: workers that wait for a launch spinning (then sleeping on a futex) with
the GIL released, and a launch handed to them by one store, as OpenMP runtimes do.

A Python worker that blocks on a queue takes 10-50 us to wake (futex wake-up of an idle core, then the GIL:
the calling thread holds it until it enters its own chunk), and a round trip back costs as much again;
measured on a 2-core VM: 10 us back to back, 27 us after 1 ms idle, 42 us after 10 ms. Launches of less
than ~250 us of work ran on one thread for that reason. Here each worker is a Python thread that calls
`mlwarp_pool_worker` once and stays in native code: it polls the pool's job counter (`pause`, a
`sched_yield` every 256 polls) for `spin_ns` after its last job, then sleeps on the counter (futex) until
the next launch wakes it. A launch (`mlwarp_pool_run`, called with the GIL released) writes the job,
bumps the counter, wakes sleepers only when there are some, runs chunks itself and spins until the
workers' chunks are done: a few microseconds when the workers are polling.

Each participant (the calling thread is 0, worker q is q) owns a contiguous range of the launch's chunks,
range p = [p * n / parts, (p + 1) * n / parts), and runs it first, then takes what is left of the others'
(q + 1, q + 2, ...): back-to-back launches over the same arrays then find each part of them in the cache of
the core that touched it last (claiming from one shared counter bounced them between cores), and a busy or
sleeping worker's range is still run. Chunk k is [k * chunk, min((k + 1) * chunk, total)), the Python
pool's cuts.

A range's chunks are claimed one at a time with a compare-exchange on its word, (job counter << 32 | next
chunk), so a worker late for one launch never runs a chunk with another launch's fields: a claim succeeds
only while the job it read is unfinished, a job's fields change only once it is finished, and a launch
closes every claim word (index 2**32 - 1) before it writes them, so a worker that read one of them new fails
its claim (a fence after the close, an acquire fence after the reads).

Launches with private copies (runtime/cpu.py `_Private`, warp-cpu-privatize-scatter) give range r its own
launch struct (`args + r * stride`) and run a range's chunks one at a time, in order ("ordered": the claim
word's bit 31 holds the range while a chunk runs; whoever runs the next one, the range's sums come in
thread order), and `mlwarp_reduce_<type>` adds the ranges' copies into the array afterwards, copy by copy.
Such a launch may also give the chunks an order (`order`, an array of the n chunk numbers): the k-th chunk claimed
(position k of the ranges above) is then chunk order[k], so a range can hold chunks that are not contiguous
(runtime/cpu.py `_Private`: the chunks whose sums land in the part of the array a range owns).

The library is built once per machine, with the kernels' own LLVM (object_code.py) and linker: at install, into
the library cache (`<library>/cpu-pool-<key>/pool.so`, by `python -m mlwarp.kernels.precompile`, as Warp ships
its runtime compiled), else on first use into the kernel cache (`<cache>/cpu-pool-<key>/pool.so`): a process
with an empty kernel cache then pays no ~0.3 s build before its first parallel launch. The key holds the source
and the host CPU (the object is built for it). `library()` is None where it cannot be built (no linker, not
x86-64 Linux): the Python pool (runtime/cpu.py) runs the launch then.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import sys
import threading
import warnings

from mlwarp.core.host import cpu_flags

from . import cache

# The pool struct (bytes): the counters the workers poll, the job's fields, then one claim word per participant
# (each on its own cache line)
SEQ, SLEEPERS, STOP, SPIN_LIMIT = 0, 4, 8, 16
FINISHED = 64
FN, ARGS, TOTAL, CHUNK, NCHUNKS, PARTS, STRIDE, ORDERED, ORDER = 128, 136, 144, 152, 160, 168, 176, 184, 192
CLAIMS, LINE = 256, 64
MAX_PARTICIPANTS = 1024
SIZE, ALIGN = CLAIMS + LINE * MAX_PARTICIPANTS, 64

# How long an idle worker polls before it sleeps ($MLWARP_CPU_SPIN_US overrides): back-to-back launches
# from Python come a few to a few tens of microseconds apart.
SPIN_NS = 200_000

_SYS_FUTEX, _FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE, _CLOCK_MONOTONIC = 202, 128, 129, 1  # x86-64 Linux

SOURCE = """
llvm.func @clock_gettime(i32, !llvm.ptr) -> i32
llvm.func @sched_yield() -> i32
llvm.func @syscall(i64, ...) -> i64

llvm.func internal @now() -> i64 {
  %one = llvm.mlir.constant(1 : i64) : i64
  %clock = llvm.mlir.constant(CLOCK : i32) : i32
  %ts = llvm.alloca %one x !llvm.array<2 x i64> : (i64) -> !llvm.ptr
  %r = llvm.call @clock_gettime(%clock, %ts) : (i32, !llvm.ptr) -> i32
  %s = llvm.load %ts : !llvm.ptr -> i64
  %nsp = llvm.getelementptr %ts[8] : (!llvm.ptr) -> !llvm.ptr, i8
  %ns = llvm.load %nsp : !llvm.ptr -> i64
  %g = llvm.mlir.constant(1000000000 : i64) : i64
  %sg = llvm.mul %s, %g : i64
  %t = llvm.add %sg, %ns : i64
  llvm.return %t : i64
}

llvm.func internal @futex(%addr: !llvm.ptr, %op: i64, %val: i64) {
  %nr = llvm.mlir.constant(FUTEX : i64) : i64
  %null = llvm.mlir.zero : !llvm.ptr
  %r = llvm.call @syscall(%nr, %addr, %op, %val, %null) vararg(!llvm.func<i64 (i64, ...)>) : (i64, !llvm.ptr, i64, i64, !llvm.ptr) -> i64
  llvm.return
}

// The claim word of participant p's range of chunks.
llvm.func internal @claim_word(%pool: !llvm.ptr, %p: i64) -> !llvm.ptr {
  %line = llvm.mlir.constant(LINE : i64) : i64
  %base = llvm.mlir.constant(CLAIMS_ : i64) : i64
  %o = llvm.mul %p, %line : i64
  %off = llvm.add %o, %base : i64
  %w = llvm.getelementptr %pool[%off] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  llvm.return %w : !llvm.ptr
}

// The first chunk of participant p's range: p * n / parts.
llvm.func internal @range_start(%p: i64, %n: i64, %parts: i64) -> i64 {
  %pn = llvm.mul %p, %n : i64
  %k = llvm.sdiv %pn, %parts : i64
  llvm.return %k : i64
}

// Participant q claims and runs chunks of job s until none is left: its own range first, then the others'
// (q + 1, q + 2, ... mod parts). The first one timed when `timed`: its ns per thread (-1.0 when none ran).
llvm.func internal @run_chunks(%pool: !llvm.ptr, %s: i32, %q: i64, %timed: i1) -> f64 {
  %one = llvm.mlir.constant(1 : i64) : i64
  %zero = llvm.mlir.constant(0 : i64) : i64
  %c32 = llvm.mlir.constant(32 : i64) : i64
  %mask = llvm.mlir.constant(4294967295 : i64) : i64
  %false = llvm.mlir.constant(false) : i1
  %none = llvm.mlir.constant(-1.0 : f64) : f64
  %first = llvm.alloca %one x f64 : (i64) -> !llvm.ptr
  %pending = llvm.alloca %one x i1 : (i64) -> !llvm.ptr
  %round = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  llvm.store %none, %first : f64, !llvm.ptr
  llvm.store %timed, %pending : i1, !llvm.ptr
  llvm.store %zero, %round : i64, !llvm.ptr
  %fnp = llvm.getelementptr %pool[FN_] : (!llvm.ptr) -> !llvm.ptr, i8
  %fn = llvm.load %fnp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
  %argsp = llvm.getelementptr %pool[ARGS_] : (!llvm.ptr) -> !llvm.ptr, i8
  %args = llvm.load %argsp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
  %totalp = llvm.getelementptr %pool[TOTAL_] : (!llvm.ptr) -> !llvm.ptr, i8
  %total = llvm.load %totalp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %chunkp = llvm.getelementptr %pool[CHUNK_] : (!llvm.ptr) -> !llvm.ptr, i8
  %chunk = llvm.load %chunkp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %np = llvm.getelementptr %pool[NCHUNKS_] : (!llvm.ptr) -> !llvm.ptr, i8
  %n = llvm.load %np atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %partsp = llvm.getelementptr %pool[PARTS_] : (!llvm.ptr) -> !llvm.ptr, i8
  %parts = llvm.load %partsp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %stridep = llvm.getelementptr %pool[STRIDE_] : (!llvm.ptr) -> !llvm.ptr, i8
  %stride = llvm.load %stridep atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %orderedp = llvm.getelementptr %pool[ORDERED_] : (!llvm.ptr) -> !llvm.ptr, i8
  %ordered64 = llvm.load %orderedp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %ordered = llvm.icmp "ne" %ordered64, %zero : i64
  %orderp = llvm.getelementptr %pool[ORDER_] : (!llvm.ptr) -> !llvm.ptr, i8
  %order = llvm.load %orderp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %reordered = llvm.icmp "ne" %order, %null : !llvm.ptr
  %busy = llvm.mlir.constant(2147483648 : i64) : i64
  %finp = llvm.getelementptr %pool[FINISHED_] : (!llvm.ptr) -> !llvm.ptr, i8
  %tag = llvm.zext %s : i32 to i64
  // the fields above are job s's unless its claim words are already closed (see mlwarp_pool_run)
  llvm.fence acquire
  llvm.br ^range
^range:
  %ri = llvm.load %round : !llvm.ptr -> i64
  %more_r = llvm.icmp "slt" %ri, %parts : i64
  llvm.cond_br %more_r, ^rangebody, ^done
^rangebody:
  %pq = llvm.add %q, %ri : i64
  %p = llvm.srem %pq, %parts : i64
  %claimp = llvm.call @claim_word(%pool, %p) : (!llvm.ptr, i64) -> !llvm.ptr
  %p1 = llvm.add %p, %one : i64
  %endk = llvm.call @range_start(%p1, %n, %parts) : (i64, i64, i64) -> i64
  %argoff = llvm.mul %p, %stride : i64
  %rargs = llvm.getelementptr %args[%argoff] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  llvm.br ^loop
^loop:
  %c = llvm.load %claimp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %hi = llvm.lshr %c, %c32 : i64
  %same = llvm.icmp "eq" %hi, %tag : i64
  llvm.cond_br %same, ^check, ^done
^check:
  // (ordered: a busy range's index has bit 31 set, so it is left for whoever holds it)
  %k = llvm.and %c, %mask : i64
  %more = llvm.icmp "slt" %k, %endk : i64
  llvm.cond_br %more, ^claim, ^nextrange
^nextrange:
  %ri1 = llvm.add %ri, %one : i64
  llvm.store %ri1, %round : i64, !llvm.ptr
  llvm.br ^range
^claim:
  // ordered: the word's busy bit (2**31, never set otherwise) holds the range while its chunk runs
  %cplus = llvm.add %c, %one : i64
  %cbusy = llvm.or %c, %busy : i64
  %c1 = llvm.select %ordered, %cbusy, %cplus : i1, i64
  %pair = llvm.cmpxchg %claimp, %c, %c1 acq_rel monotonic : !llvm.ptr, i64
  %ok = llvm.extractvalue %pair[1] : !llvm.struct<(i64, i1)>
  llvm.cond_br %ok, ^run, ^loop
^run:
  // (position k of the ranges is chunk order[k] when the launch gives an order)
  llvm.cond_br %reordered, ^lookup, ^natural(%k : i64)
^lookup:
  %slot = llvm.getelementptr %order[%k] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %kk = llvm.load %slot : !llvm.ptr -> i64
  llvm.br ^natural(%kk : i64)
^natural(%ck: i64):
  %begin = llvm.mul %ck, %chunk : i64
  %e0 = llvm.add %begin, %chunk : i64
  %lt = llvm.icmp "slt" %e0, %total : i64
  %end = llvm.select %lt, %e0, %total : i1, i64
  %t = llvm.load %pending : !llvm.ptr -> i1
  llvm.cond_br %t, ^timedrun, ^plainrun
^timedrun:
  %t0 = llvm.call @now() : () -> i64
  llvm.call %fn(%rargs, %begin, %end) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
  %t1 = llvm.call @now() : () -> i64
  %d = llvm.sub %t1, %t0 : i64
  %len = llvm.sub %end, %begin : i64
  %df = llvm.sitofp %d : i64 to f64
  %lf = llvm.sitofp %len : i64 to f64
  %per = llvm.fdiv %df, %lf : f64
  llvm.store %per, %first : f64, !llvm.ptr
  llvm.store %false, %pending : i1, !llvm.ptr
  llvm.br ^finish
^plainrun:
  llvm.call %fn(%rargs, %begin, %end) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
  llvm.br ^finish
^finish:
  llvm.cond_br %ordered, ^release, ^count
^release:
  // before the count: the launch may close this word once every chunk is counted
  llvm.store %cplus, %claimp atomic release {alignment = 8 : i64} : i64, !llvm.ptr
  llvm.br ^count
^count:
  %f = llvm.atomicrmw add %finp, %one release : !llvm.ptr, i64
  llvm.br ^loop
^done:
  %r = llvm.load %first : !llvm.ptr -> f64
  llvm.return %r : f64
}

// Worker q (1 .. parts - 1): polls for a job after the last one it saw, spin_ns long, then sleeps on the job
// counter.
llvm.func @mlwarp_pool_worker(%pool: !llvm.ptr, %q: i64) {
  %one = llvm.mlir.constant(1 : i64) : i64
  %one32 = llvm.mlir.constant(1 : i32) : i32
  %zero = llvm.mlir.constant(0 : i64) : i64
  %zero32 = llvm.mlir.constant(0 : i32) : i32
  %m255 = llvm.mlir.constant(255 : i64) : i64
  %false = llvm.mlir.constant(false) : i1
  %wait = llvm.mlir.constant(WAIT : i64) : i64
  %seqp = llvm.getelementptr %pool[SEQ_] : (!llvm.ptr) -> !llvm.ptr, i8
  %sleepp = llvm.getelementptr %pool[SLEEPERS_] : (!llvm.ptr) -> !llvm.ptr, i8
  %stopp = llvm.getelementptr %pool[STOP_] : (!llvm.ptr) -> !llvm.ptr, i8
  %spinp = llvm.getelementptr %pool[SPIN_LIMIT_] : (!llvm.ptr) -> !llvm.ptr, i8
  %seen = llvm.alloca %one x i32 : (i64) -> !llvm.ptr
  %since = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  %polls = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  %s0 = llvm.load %seqp atomic acquire {alignment = 4 : i64} : !llvm.ptr -> i32
  llvm.store %s0, %seen : i32, !llvm.ptr
  llvm.br ^idle
^idle:
  %t0 = llvm.call @now() : () -> i64
  llvm.store %t0, %since : i64, !llvm.ptr
  llvm.store %zero, %polls : i64, !llvm.ptr
  llvm.br ^spin
^spin:
  %st = llvm.load %stopp atomic monotonic {alignment = 4 : i64} : !llvm.ptr -> i32
  %stopped = llvm.icmp "ne" %st, %zero32 : i32
  llvm.cond_br %stopped, ^exit, ^poll
^poll:
  %s = llvm.load %seqp atomic acquire {alignment = 4 : i64} : !llvm.ptr -> i32
  %sv = llvm.load %seen : !llvm.ptr -> i32
  %new = llvm.icmp "ne" %s, %sv : i32
  llvm.cond_br %new, ^job, ^pause
^pause:
  llvm.call_intrinsic "llvm.x86.sse2.pause"() : () -> ()
  %i = llvm.load %polls : !llvm.ptr -> i64
  %i1 = llvm.add %i, %one : i64
  llvm.store %i1, %polls : i64, !llvm.ptr
  %m = llvm.and %i1, %m255 : i64
  %chk = llvm.icmp "eq" %m, %zero : i64
  llvm.cond_br %chk, ^timecheck, ^spin
^timecheck:
  %tn = llvm.call @now() : () -> i64
  %ts = llvm.load %since : !llvm.ptr -> i64
  %el = llvm.sub %tn, %ts : i64
  %lim = llvm.load %spinp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %over = llvm.icmp "sgt" %el, %lim : i64
  llvm.cond_br %over, ^sleep, ^yield
^yield:
  %y = llvm.call @sched_yield() : () -> i32
  llvm.br ^spin
^sleep:
  %a = llvm.atomicrmw add %sleepp, %one32 seq_cst : !llvm.ptr, i32
  %s2 = llvm.load %seqp atomic seq_cst {alignment = 4 : i64} : !llvm.ptr -> i32
  %sv2 = llvm.load %seen : !llvm.ptr -> i32
  %same2 = llvm.icmp "eq" %s2, %sv2 : i32
  %st2 = llvm.load %stopp atomic seq_cst {alignment = 4 : i64} : !llvm.ptr -> i32
  %run2 = llvm.icmp "eq" %st2, %zero32 : i32
  %both = llvm.and %same2, %run2 : i1
  llvm.cond_br %both, ^futexwait, ^woke
^futexwait:
  %sv64 = llvm.zext %sv2 : i32 to i64
  llvm.call @futex(%seqp, %wait, %sv64) : (!llvm.ptr, i64, i64) -> ()
  llvm.br ^woke
^woke:
  %b = llvm.atomicrmw sub %sleepp, %one32 seq_cst : !llvm.ptr, i32
  llvm.br ^idle
^job:
  llvm.store %s, %seen : i32, !llvm.ptr
  %r = llvm.call @run_chunks(%pool, %s, %q, %false) : (!llvm.ptr, i32, i64, i1) -> f64
  llvm.br ^idle
^exit:
  llvm.return
}

// A launch, from participant 0: publishes the job, wakes sleeping workers, runs chunks, waits for the workers'
// chunks. Returns the ns per thread of the first chunk this thread ran (-1.0 when the workers took them all).
llvm.func @mlwarp_pool_run(%pool: !llvm.ptr, %fn: !llvm.ptr, %args: !llvm.ptr, %total: i64, %chunk: i64,
                           %stride: i64, %ordered: i64, %order: !llvm.ptr) -> f64 {
  %one = llvm.mlir.constant(1 : i64) : i64
  %one32 = llvm.mlir.constant(1 : i32) : i32
  %zero = llvm.mlir.constant(0 : i64) : i64
  %zero32 = llvm.mlir.constant(0 : i32) : i32
  %c32 = llvm.mlir.constant(32 : i64) : i64
  %mask = llvm.mlir.constant(4294967295 : i64) : i64
  %true = llvm.mlir.constant(true) : i1
  %wake = llvm.mlir.constant(WAKE : i64) : i64
  %all = llvm.mlir.constant(2147483647 : i64) : i64
  %patience = llvm.mlir.constant(2000 : i64) : i64
  %seqp = llvm.getelementptr %pool[SEQ_] : (!llvm.ptr) -> !llvm.ptr, i8
  %sleepp = llvm.getelementptr %pool[SLEEPERS_] : (!llvm.ptr) -> !llvm.ptr, i8
  %finp = llvm.getelementptr %pool[FINISHED_] : (!llvm.ptr) -> !llvm.ptr, i8
  %fnp = llvm.getelementptr %pool[FN_] : (!llvm.ptr) -> !llvm.ptr, i8
  %argsp = llvm.getelementptr %pool[ARGS_] : (!llvm.ptr) -> !llvm.ptr, i8
  %totalp = llvm.getelementptr %pool[TOTAL_] : (!llvm.ptr) -> !llvm.ptr, i8
  %chunkp = llvm.getelementptr %pool[CHUNK_] : (!llvm.ptr) -> !llvm.ptr, i8
  %np = llvm.getelementptr %pool[NCHUNKS_] : (!llvm.ptr) -> !llvm.ptr, i8
  %partsp = llvm.getelementptr %pool[PARTS_] : (!llvm.ptr) -> !llvm.ptr, i8
  %parts = llvm.load %partsp atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
  %stridep = llvm.getelementptr %pool[STRIDE_] : (!llvm.ptr) -> !llvm.ptr, i8
  %orderedp = llvm.getelementptr %pool[ORDERED_] : (!llvm.ptr) -> !llvm.ptr, i8
  %orderp = llvm.getelementptr %pool[ORDER_] : (!llvm.ptr) -> !llvm.ptr, i8
  %polls = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  %pi = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  %tc = llvm.add %total, %chunk : i64
  %tc1 = llvm.sub %tc, %one : i64
  %n = llvm.sdiv %tc1, %chunk : i64
  %s = llvm.load %seqp atomic monotonic {alignment = 4 : i64} : !llvm.ptr -> i32
  %s1 = llvm.add %s, %one32 : i32
  %tag = llvm.zext %s1 : i32 to i64
  %claim0 = llvm.shl %tag, %c32 : i64
  %closed = llvm.or %claim0, %mask : i64
  // close every claim word first: a worker late for the last job that reads a field written below then fails
  // its claim (the fence pairs with run_chunks' acquire fence)
  llvm.store %zero, %pi : i64, !llvm.ptr
  llvm.br ^close
^close:
  %ci = llvm.load %pi : !llvm.ptr -> i64
  %cmore = llvm.icmp "slt" %ci, %parts : i64
  llvm.cond_br %cmore, ^closebody, ^publish
^closebody:
  %cw = llvm.call @claim_word(%pool, %ci) : (!llvm.ptr, i64) -> !llvm.ptr
  llvm.store %closed, %cw atomic seq_cst {alignment = 8 : i64} : i64, !llvm.ptr
  %ci1 = llvm.add %ci, %one : i64
  llvm.store %ci1, %pi : i64, !llvm.ptr
  llvm.br ^close
^publish:
  llvm.fence seq_cst
  llvm.store %fn, %fnp atomic monotonic {alignment = 8 : i64} : !llvm.ptr, !llvm.ptr
  llvm.store %args, %argsp atomic monotonic {alignment = 8 : i64} : !llvm.ptr, !llvm.ptr
  llvm.store %total, %totalp atomic monotonic {alignment = 8 : i64} : i64, !llvm.ptr
  llvm.store %chunk, %chunkp atomic monotonic {alignment = 8 : i64} : i64, !llvm.ptr
  llvm.store %n, %np atomic monotonic {alignment = 8 : i64} : i64, !llvm.ptr
  llvm.store %stride, %stridep atomic monotonic {alignment = 8 : i64} : i64, !llvm.ptr
  llvm.store %ordered, %orderedp atomic monotonic {alignment = 8 : i64} : i64, !llvm.ptr
  llvm.store %order, %orderp atomic monotonic {alignment = 8 : i64} : !llvm.ptr, !llvm.ptr
  llvm.store %zero, %finp atomic monotonic {alignment = 8 : i64} : i64, !llvm.ptr
  llvm.store %zero, %pi : i64, !llvm.ptr
  llvm.br ^open
^open:
  %oi = llvm.load %pi : !llvm.ptr -> i64
  %omore = llvm.icmp "slt" %oi, %parts : i64
  llvm.cond_br %omore, ^openbody, ^go
^openbody:
  %ow = llvm.call @claim_word(%pool, %oi) : (!llvm.ptr, i64) -> !llvm.ptr
  %k0 = llvm.call @range_start(%oi, %n, %parts) : (i64, i64, i64) -> i64
  %open = llvm.or %claim0, %k0 : i64
  llvm.store %open, %ow atomic seq_cst {alignment = 8 : i64} : i64, !llvm.ptr
  %oi1 = llvm.add %oi, %one : i64
  llvm.store %oi1, %pi : i64, !llvm.ptr
  llvm.br ^open
^go:
  llvm.store %s1, %seqp atomic seq_cst {alignment = 4 : i64} : i32, !llvm.ptr
  %sl = llvm.load %sleepp atomic seq_cst {alignment = 4 : i64} : !llvm.ptr -> i32
  %asleep = llvm.icmp "sgt" %sl, %zero32 : i32
  llvm.cond_br %asleep, ^wake, ^work
^wake:
  llvm.call @futex(%seqp, %wake, %all) : (!llvm.ptr, i64, i64) -> ()
  llvm.br ^work
^work:
  %first = llvm.call @run_chunks(%pool, %s1, %zero, %true) : (!llvm.ptr, i32, i64, i1) -> f64
  llvm.store %zero, %polls : i64, !llvm.ptr
  llvm.br ^wait
^wait:
  %f = llvm.load %finp atomic acquire {alignment = 8 : i64} : !llvm.ptr -> i64
  %done = llvm.icmp "sge" %f, %n : i64
  llvm.cond_br %done, ^exit, ^pause
^pause:
  llvm.call_intrinsic "llvm.x86.sse2.pause"() : () -> ()
  %i = llvm.load %polls : !llvm.ptr -> i64
  %i1 = llvm.add %i, %one : i64
  llvm.store %i1, %polls : i64, !llvm.ptr
  %long = llvm.icmp "sgt" %i1, %patience : i64
  llvm.cond_br %long, ^yield, ^wait
^yield:
  %y = llvm.call @sched_yield() : () -> i32
  llvm.br ^wait
^exit:
  llvm.return %first : f64
}

REDUCE

// Ends the workers: they return from mlwarp_pool_worker.
llvm.func @mlwarp_pool_stop(%pool: !llvm.ptr) {
  %one32 = llvm.mlir.constant(1 : i32) : i32
  %wake = llvm.mlir.constant(WAKE : i64) : i64
  %all = llvm.mlir.constant(2147483647 : i64) : i64
  %seqp = llvm.getelementptr %pool[SEQ_] : (!llvm.ptr) -> !llvm.ptr, i8
  %stopp = llvm.getelementptr %pool[STOP_] : (!llvm.ptr) -> !llvm.ptr, i8
  llvm.store %one32, %stopp atomic seq_cst {alignment = 4 : i64} : i32, !llvm.ptr
  %s = llvm.atomicrmw add %seqp, %one32 seq_cst : !llvm.ptr, i32
  llvm.call @futex(%seqp, %wake, %all) : (!llvm.ptr, i64, i64) -> ()
  llvm.return
}
"""

# dst[i] = dst[i] + copy 0[i] + copy 1[i] + ... (in that order) for i in [begin, end); each copy's element is
# reset to the identity (-0.0, 0). args: {dst ptr, copies ptr, copies, elements per copy}, an entry's signature.
_REDUCE = """
llvm.func @mlwarp_reduce_T(%args: !llvm.ptr, %begin: i64, %end: i64) {
  %one = llvm.mlir.constant(1 : i64) : i64
  %zero = llvm.mlir.constant(0 : i64) : i64
  %identity = llvm.mlir.constant(IDENTITY) : T
  %dst = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %srcp = llvm.getelementptr %args[8] : (!llvm.ptr) -> !llvm.ptr, i8
  %src = llvm.load %srcp : !llvm.ptr -> !llvm.ptr
  %copiesp = llvm.getelementptr %args[16] : (!llvm.ptr) -> !llvm.ptr, i8
  %copies = llvm.load %copiesp : !llvm.ptr -> i64
  %countp = llvm.getelementptr %args[24] : (!llvm.ptr) -> !llvm.ptr, i8
  %count = llvm.load %countp : !llvm.ptr -> i64
  %ip = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  %qp = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  llvm.store %zero, %qp : i64, !llvm.ptr
  llvm.br ^outer
^outer:
  // copy by copy (the inner loop over elements vectorises): each element still gets copy 0, then 1, ...
  %q = llvm.load %qp : !llvm.ptr -> i64
  %qmore = llvm.icmp "slt" %q, %copies : i64
  llvm.cond_br %qmore, ^start, ^exit
^start:
  %qc = llvm.mul %q, %count : i64
  %row = llvm.getelementptr %src[%qc] : (!llvm.ptr, i64) -> !llvm.ptr, T
  llvm.store %begin, %ip : i64, !llvm.ptr
  llvm.br ^inner
^inner:
  %i = llvm.load %ip : !llvm.ptr -> i64
  %more = llvm.icmp "slt" %i, %end : i64
  llvm.cond_br %more, ^add, ^next
^add:
  %d = llvm.getelementptr %dst[%i] : (!llvm.ptr, i64) -> !llvm.ptr, T
  %sa = llvm.getelementptr %row[%i] : (!llvm.ptr, i64) -> !llvm.ptr, T
  %acc = llvm.load %d : !llvm.ptr -> T
  %v = llvm.load %sa : !llvm.ptr -> T
  %sum = ADD %acc, %v : T
  llvm.store %sum, %d : T, !llvm.ptr
  llvm.store %identity, %sa : T, !llvm.ptr
  %i1 = llvm.add %i, %one : i64
  llvm.store %i1, %ip : i64, !llvm.ptr
  llvm.br ^inner
^next:
  %q1 = llvm.add %q, %one : i64
  llvm.store %q1, %qp : i64, !llvm.ptr
  llvm.br ^outer
^exit:
  llvm.return
}
"""
# the reduce functions' element types: (MLIR type, identity attribute, add)
REDUCE_TYPES = {"f32": ("-0.0 : f32", "llvm.fadd"), "f64": ("-0.0 : f64", "llvm.fadd"), "i32": ("0 : i32", "llvm.add"),
                "i64": ("0 : i64", "llvm.add")}

_CONSTANTS = {"CLOCK": _CLOCK_MONOTONIC, "FUTEX": _SYS_FUTEX, "WAIT": _FUTEX_WAIT_PRIVATE,
              "WAKE": _FUTEX_WAKE_PRIVATE, "SEQ_": SEQ, "SLEEPERS_": SLEEPERS, "STOP_": STOP, "SPIN_LIMIT_": SPIN_LIMIT,
              "FINISHED_": FINISHED, "FN_": FN, "ARGS_": ARGS, "TOTAL_": TOTAL, "CHUNK_": CHUNK, "NCHUNKS_": NCHUNKS,
              "PARTS_": PARTS, "CLAIMS_": CLAIMS, "LINE": LINE, "STRIDE_": STRIDE, "ORDERED_": ORDERED,
              "ORDER_": ORDER}


def source() -> str:
    """The pool's LLVM-dialect module, its constants filled in."""
    reduce = "".join(_REDUCE.replace("IDENTITY", identity).replace("ADD", add).replace(" T", f" {t}")
                     .replace("_T(", f"_{t}(") for t, (identity, add) in REDUCE_TYPES.items())
    text = SOURCE.replace("REDUCE\n", reduce)
    for name in sorted(_CONSTANTS, key=len, reverse=True):  # longest first: no name is cut by a shorter one
        text = text.replace(f"({name} ", f"({_CONSTANTS[name]} ").replace(f"[{name}]", f"[{_CONSTANTS[name]}]")
    return text


def supported() -> bool:
    """The native pool's syscalls and `pause` are x86-64 Linux's."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def _key() -> str:
    host = platform.machine() + " " + " ".join(cpu_flags())
    return hashlib.sha256((source() + host).encode()).hexdigest()[:20]


def entry_name() -> str:
    """The pool library's folder in a cache (the kernel cache or the library cache)."""
    return f"cpu-pool-{_key()}"


def build_into(folder: str) -> str:
    """The pool library's path under `folder`, built there first when missing."""
    path = os.path.join(folder, entry_name(), "pool.so")
    if not os.path.exists(path):
        _build(path)
    return path


def _build(path: str) -> None:
    """Compiles SOURCE into the shared library `path`."""
    from ..compiler.native import llvm_library  # lazy: MLIR
    from ..compiler.targets.cpu.object_code import write_object  # lazy: MLIR (LLVM's C API)

    llvm_library.build(source(), path, write_object)


_library = None
_library_error = None
_library_lock = threading.Lock()


def library():
    """The pool's library (built on first use, then from the cache); None where it cannot be had (the reason
    is in `library_error()`)."""
    global _library, _library_error
    if _library is not None or _library_error is not None:
        return _library
    with _library_lock:
        if _library is None and _library_error is None:
            try:
                if not supported():
                    raise OSError(f"no native pool on {sys.platform}/{platform.machine()}")
                installed = os.path.join(cache.library_dir(), entry_name(), "pool.so")
                lib = ctypes.CDLL(installed if os.path.exists(installed) else build_into(cache.cache_dir()))
                lib.mlwarp_pool_worker.argtypes = [ctypes.c_void_p, ctypes.c_int64]
                lib.mlwarp_pool_worker.restype = None
                lib.mlwarp_pool_run.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 4 + [ctypes.c_void_p]
                lib.mlwarp_pool_run.restype = ctypes.c_double
                lib.mlwarp_pool_stop.argtypes = [ctypes.c_void_p]
                lib.mlwarp_pool_stop.restype = None
                for t in REDUCE_TYPES:
                    f = getattr(lib, f"mlwarp_reduce_{t}")
                    f.argtypes, f.restype = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64], None
                _library = lib
            except Exception as e:  # no linker, no LLVM, an unwritable cache: the Python pool instead
                _library_error = f"{type(e).__name__}: {e}"
                if supported():
                    warnings.warn(f"mlwarp: the native CPU thread pool could not be built ({_library_error}); "
                                  f"parallel CPU launches use the Python pool (slower to start)", RuntimeWarning,
                                  stacklevel=2)
    return _library


def library_error() -> str | None:
    return _library_error


def spin_ns() -> int:
    value = os.environ.get("MLWARP_CPU_SPIN_US")
    return SPIN_NS if not value else max(0, int(float(value) * 1000))


def _aligned_alloc(align: int, size: int) -> int:
    libc = ctypes.CDLL(None)
    libc.aligned_alloc.restype, libc.aligned_alloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t, ctypes.c_size_t]
    return libc.aligned_alloc(align, size)


class NativePool:
    """`size - 1` workers in mlwarp_pool_worker; the calling thread is the last one. One launch at a time:
    `run` returns None (the caller runs the launch itself) while another thread's launch holds the pool."""

    def __init__(self, size: int, lib):
        if not 1 <= size <= MAX_PARTICIPANTS:
            raise ValueError(f"the native CPU pool runs 1 to {MAX_PARTICIPANTS} threads, not {size}")
        self.size, self.lib = size, lib
        # outside Python's heap and never freed (256 bytes a pool): a worker may poll it until the process ends
        self.address = _aligned_alloc(ALIGN, SIZE)
        if not self.address:
            raise MemoryError("mlwarp: no memory for the CPU pool")
        ctypes.memset(self.address, 0, SIZE)
        ctypes.c_int64.from_address(self.address + SPIN_LIMIT).value = spin_ns()
        ctypes.c_int64.from_address(self.address + PARTS).value = size
        self._busy = threading.Lock()
        self.workers = [threading.Thread(target=lib.mlwarp_pool_worker, args=(self.address, i),
                                         name=f"mlwarp-cpu-{i}", daemon=True) for i in range(1, size)]
        for w in self.workers:
            w.start()

    def run(self, fn_address: int, args, total: int, chunk: int, stride: int = 0, ordered: bool = False,
            order=None):
        """Runs threads [0, total) in chunks; the ns per thread of the calling thread's first chunk (None when
        it ran none), or False when another launch holds the pool. `stride`: range r's chunks get the launch
        struct at `args + r * stride` (one per range: size of them); `ordered`: a range's chunks run one at a
        time, in order (whoever runs them), so what they sum into a range's own copy is summed in thread order;
        `order`: the address of an int64 array of the chunk numbers in the order the ranges take them (None:
        0, 1, 2, ...)."""
        if not self._busy.acquire(False):
            return False
        try:
            ns = self.lib.mlwarp_pool_run(self.address, fn_address, args, total, chunk, stride, int(ordered), order)
        finally:
            self._busy.release()
        return ns if ns >= 0 else None

    def close(self) -> None:
        if self.workers:
            with self._busy:
                self.lib.mlwarp_pool_stop(self.address)
            for w in self.workers:
                w.join()
            self.workers = []
