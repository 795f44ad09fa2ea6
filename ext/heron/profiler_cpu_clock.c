/*
 * Heron::Profiler::CPUClock: the calling thread's CPU time, without a system call on most
 * reads.
 *
 * Linux reads CLOCK_THREAD_CPUTIME_ID only through a system call (the vDSO does not serve it).
 * A profiled request reads it at least twice, and on a virtual machine those two calls cost a
 * hello world about 6% of its req/s, more than any other part of the profiler
 * (docs/profiling.md, "What it costs").
 *
 * But a thread that has not been descheduled since it last read its CPU clock has been running
 * all along: its CPU time has advanced exactly as much as the wall clock. The kernel says when
 * a thread was descheduled through the restartable-sequences (rseq) area glibc registers for
 * every thread: a non-null `rseq_cs` pointer there is reset to null whenever the thread is
 * preempted, blocks, migrates or takes a signal. So a read either
 *   - extrapolates: `rseq_cs` still holds this file's descriptor (which covers no code, so it
 *     never restarts anything) and the anchor is under ANCHOR_MS old: anchor CPU time plus
 *     the CLOCK_MONOTONIC_RAW time since (a vDSO read); or
 *   - anchors: sets `rseq_cs`, then reads the CPU clock (the system call) and the raw clock.
 *
 * The one difference from the kernel's clock: time a hypervisor takes from a virtual CPU
 * between an anchor and a read is invisible to the guest, so it counts as CPU here; ANCHOR_MS
 * bounds how long that can accumulate. Where there is no rseq (not Linux, glibc before 2.35,
 * registration turned off with glibc.pthread.rseq=0) or the kernel fails the check made at
 * load (a short sleep must clear `rseq_cs`), every read is the system call.
 *
 *   CPUClock.now -> Float (ms)   CPUClock.mode -> :rseq or :syscall
 */
#include "profiler.h"
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#ifdef HAVE_HERON_RSEQ
#include <sys/rseq.h>
#endif

#define ANCHOR_MS 1.0 /* longest stretch extrapolated from one system call */

/* The calling thread's last system-call reading. */
typedef struct Heron_Profiler_CPUClock_anchor {
  double cpu_ms, raw_ms; /* CLOCK_THREAD_CPUTIME_ID and CLOCK_MONOTONIC_RAW, then */
  double last_ms;        /* the last value returned: readings never go back */
  int set;               /* 0 until the first reading (and again after a fork) */
} Heron_Profiler_CPUClock_anchor;

static __thread Heron_Profiler_CPUClock_anchor Heron_Profiler_CPUClock_here;
static int Heron_Profiler_CPUClock_rseq; /* whether reads may extrapolate */

static double Heron_Profiler_CPUClock_read(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#ifdef HAVE_HERON_RSEQ
/* The kernel checks that the word before a descriptor's abort address is the signature glibc
 * registered; the range [start_ip, start_ip + 0) is empty, so it never aborts anything. */
static const uint32_t Heron_Profiler_CPUClock_signature[2] __attribute__((aligned(8))) = { RSEQ_SIG, 0 };
static struct rseq_cs Heron_Profiler_CPUClock_descriptor;

/* The calling thread's rseq area. */
static volatile struct rseq *Heron_Profiler_CPUClock_area(void)
{
  return (volatile struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* Sets this thread's rseq_cs to the descriptor; the kernel resets it when the thread leaves
 * the CPU. */
static void Heron_Profiler_CPUClock_arm(void)
{
  Heron_Profiler_CPUClock_area()->rseq_cs = (uint64_t)(uintptr_t)&Heron_Profiler_CPUClock_descriptor;
}

/* Whether this thread has stayed on the CPU since it was armed. A thread whose registration
 * failed (cpu_id negative) has a pointer nobody resets: never. */
static int Heron_Profiler_CPUClock_armed(void)
{
  volatile struct rseq *area = Heron_Profiler_CPUClock_area();
  return (int32_t)area->cpu_id >= 0 && area->rseq_cs == (uint64_t)(uintptr_t)&Heron_Profiler_CPUClock_descriptor;
}

/* Whether rseq is registered and this kernel clears rseq_cs when a thread sleeps. */
static int Heron_Profiler_CPUClock_works(void)
{
  struct timespec nap = { 0, 1000 };
  if (__rseq_size == 0 || (int32_t)Heron_Profiler_CPUClock_area()->cpu_id < 0) return 0;
  Heron_Profiler_CPUClock_descriptor.abort_ip = (uint64_t)(uintptr_t)&Heron_Profiler_CPUClock_signature[1];
  Heron_Profiler_CPUClock_descriptor.start_ip = Heron_Profiler_CPUClock_descriptor.abort_ip;
  Heron_Profiler_CPUClock_arm();
  nanosleep(&nap, NULL);
  return Heron_Profiler_CPUClock_area()->rseq_cs == 0;
}
#else
static void Heron_Profiler_CPUClock_arm(void) {}
static int Heron_Profiler_CPUClock_armed(void) { return 0; }
static int Heron_Profiler_CPUClock_works(void) { return 0; }
#endif

/* The anchor's CPU time plus the raw time since, when the thread stayed on the CPU since the
 * anchor and that is under ANCHOR_MS ago; else a new anchor's CPU time. */
static double Heron_Profiler_CPUClock_reading(Heron_Profiler_CPUClock_anchor *anchor)
{
  double raw;
  if (anchor->set) {
    raw = Heron_Profiler_CPUClock_read(CLOCK_MONOTONIC_RAW);
    if (Heron_Profiler_CPUClock_armed() && raw - anchor->raw_ms < ANCHOR_MS) return anchor->cpu_ms + (raw - anchor->raw_ms);
  }
  Heron_Profiler_CPUClock_arm();
  anchor->cpu_ms = Heron_Profiler_CPUClock_read(CLOCK_THREAD_CPUTIME_ID);
  anchor->raw_ms = Heron_Profiler_CPUClock_read(CLOCK_MONOTONIC_RAW);
  if (!anchor->set) anchor->last_ms = anchor->cpu_ms;
  anchor->set = 1;
  return anchor->cpu_ms;
}

/* CPU time of the calling thread, in ms (see the top of this file). An extrapolated reading
 * can run ahead of the kernel's by time a hypervisor took; the next anchor then reads less,
 * and the clock waits for the kernel's to catch up instead of going back. */
double Heron_Profiler_CPUClock_now_ms(void)
{
  Heron_Profiler_CPUClock_anchor *anchor = &Heron_Profiler_CPUClock_here;
  double now;
  if (!Heron_Profiler_CPUClock_rseq) return Heron_Profiler_CPUClock_read(CLOCK_THREAD_CPUTIME_ID);
  now = Heron_Profiler_CPUClock_reading(anchor);
  if (now < anchor->last_ms) return anchor->last_ms;
  return anchor->last_ms = now;
}

/* A forked child's thread has its own, new CPU clock: the parent's anchor is not its own. */
static void Heron_Profiler_CPUClock_forked(void)
{
  Heron_Profiler_CPUClock_here.set = 0;
}

/* call-seq: CPUClock.now -> Float. The calling thread's CPU time in ms. */
static VALUE Heron_Profiler_CPUClock_now(VALUE self)
{
  return DBL2NUM(Heron_Profiler_CPUClock_now_ms());
}

/* call-seq: CPUClock.mode -> :rseq or :syscall. How #now reads the clock (see above). */
static VALUE Heron_Profiler_CPUClock_mode(VALUE self)
{
  return ID2SYM(rb_intern(Heron_Profiler_CPUClock_rseq ? "rseq" : "syscall"));
}

void Init_Heron_Profiler_CPUClock(VALUE mProfiler)
{
  VALUE mod = rb_define_module_under(mProfiler, "CPUClock");
  Heron_Profiler_CPUClock_rseq = Heron_Profiler_CPUClock_works();
  pthread_atfork(NULL, NULL, Heron_Profiler_CPUClock_forked);
  rb_define_module_function(mod, "now", Heron_Profiler_CPUClock_now, 0);
  rb_define_module_function(mod, "mode", Heron_Profiler_CPUClock_mode, 0);
}
