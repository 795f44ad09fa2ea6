# frozen_string_literal: true

require_relative "extension"

module Heron
  module Profiler
    # Allocations counted per thread, for a Rack server that runs each request on a thread of its
    # own (Puma): Ruby counts them per process, and threads take turns without a fiber switch
    # {FiberAccounting} could see, so one request's count would hold every other thread's. Once
    # enabled (by {Profiler.wrap} when the app is built outside a fiber scheduler, with no Heron
    # configuration), a NEWOBJ hook counts each allocation in a thread-local counter that
    # FiberAccounting reads instead. A hook call per allocation is its cost, so it stays off
    # under Heron and Falcon, where requests are fibers and the process counter read at each
    # fiber switch is already exact. Written in C (ext/heron_profiler/profiler_thread_allocations.c):
    #
    # - `ThreadAllocations.enable` -> true: starts counting (once; it then stays on).
    # - `ThreadAllocations.enabled?` -> Boolean.
    # - `ThreadAllocations.count` -> Integer: the calling thread's allocations since then.
    module ThreadAllocations
    end
  end
end
