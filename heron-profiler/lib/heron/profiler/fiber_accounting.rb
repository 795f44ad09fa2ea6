# frozen_string_literal: true

require_relative "extension"

module Heron
  module Profiler
    # Attributes reactor time (how long a request's fibers held the thread), CPU time on
    # CPU-sampled requests, allocated objects and GC runs to the request each fiber works for.
    #
    # A C event hook on fiber switches reads the counters whenever a switch leaves or
    # enters a fiber working for an open {RequestProfile}, and charges their growth since the
    # previous switch to the profile of the fiber that was running, so two requests
    # interleaving on one reactor each get only their own share. Fibers of Async tasks a request
    # starts join its profile ({AsyncTaskHook}). The hook is added when the first profile opens
    # and then stays, returning at once while none is open; an unprofiled server has none.
    #
    # It runs at every fiber switch, so it is written in C: ext/heron/profiler_fiber_accounting.c
    # defines and documents `open(profile)`, `attach(profile, fiber = Fiber.current)`,
    # `checkpoint`, `close(profile)`, `current`, `profile_for(fiber)` and `tracing?`.
    #
    # Limits: allocations and GC runs are process-wide counters, so with several reactor threads
    # another thread's allocations between two switches land on whichever fiber was current
    # here; under a server with a thread per request (Puma) allocations are counted per thread
    # instead ({ThreadAllocations}), GC runs stay process-wide. Reactor time is the monotonic clock (a vDSO read, no system call): it includes time
    # the kernel or hypervisor took the thread away while the fiber ran, which is also time the
    # fiber kept every other request on the reactor waiting. CPU time is per thread, read with
    # {CPUClock} (a system call) only for a profile whose `measure_cpu` the middleware left on
    # (config.profile_cpu_sample). Work in threads a request starts is not charged to it. A GC
    # run is charged to the fiber that triggered it.
    class FiberAccounting
    end
  end
end
