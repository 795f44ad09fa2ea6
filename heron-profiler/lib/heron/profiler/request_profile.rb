# frozen_string_literal: true

require_relative "extension"

module Heron
  module Profiler
    # Everything measured about one request while it runs. {FiberAccounting} charges the time its
    # fibers held the reactor (and, on CPU-sampled requests, thread CPU time), allocations and GC
    # runs to it between fiber switches; the SQL hooks add {Query}s; the {Meter} stamps the
    # times. {Record.of} makes the record the {Store} keeps; {Steps} adds custom steps.
    #
    # Every profiled request runs its methods, so the whole class is C
    # (ext/heron_profiler/profiler_request_profile.c, where each is documented): `new`, `start`,
    # `app_returned`, `finished`, `id`, `server_timing`, `add_query`, `trim_queries`, `to_s`,
    # `started_at`, the readers and writers, and KEPT_QUERIES (statements a stored record
    # keeps; `db_count` and `db_ms` still count them all).
    class RequestProfile
    end
  end
end
