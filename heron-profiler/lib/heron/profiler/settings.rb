# frozen_string_literal: true

module Heron
  module Profiler
    # The profiler's settings, declared once here: their defaults, types (the names of the checks
    # in {OptionTypes}, which are also Heron's `Config::Types`), docs and, when the profiler runs
    # inside Heron, their config-file directives and command-line flags.
    #
    # This file is data only (it loads nothing): Heron's settings table requires it when the gem is
    # installed and adds these to its own (`profile_path "/x"` in config/heron.rb,
    # `--profile-sample 10`); {Options} reads them under any Rack server. The table in
    # heron-profiler/README.md is made from it (`bundle exec rake docs:settings`).
    module Settings
      ALL = [
        { name: :profile_path, default: "/__heron", type: [:url_path],
          group: "heron-profiler", directive: :value, usage: "profile_path PATH",
          shown: "`\"/__heron\"`",
          flags: ["--profile-path PATH"], help: "profiler pages' path",
          doc: "`profile_path \"/_debug\"`" },
        { name: :profile_sample, default: 1, type: [:positive_integer],
          group: "heron-profiler", directive: :value, usage: "profile_sample N",
          shown: "`1`",
          flags: ["--profile-sample N"], help: "profile one request in N",
          doc: "`profile_sample 10`: only one request in 10 is measured (and gets Server-Timing); the others pass straight to the app. For production, where measuring every request costs too much (see [profiling.md](docs/profiling.md#what-it-costs))" },
        { name: :profile_cpu_sample, default: 100, type: [:positive_integer],
          group: "heron-profiler", directive: :value, usage: "profile_cpu_sample N",
          shown: "`100`",
          flags: ["--profile-cpu-sample N"], help: "read thread CPU time on one profiled request in N",
          doc: "`profile_cpu_sample 1`: every profiled request also gets its thread CPU time (`cpu` in Server-Timing, `cpu_ms` in the record), at the cost of a system call at each of its fiber switches; by default the first profiled request and one in 100 after it do, and every profiled request gets `reactor` (the time its fibers held the reactor, from the vDSO's monotonic clock; see [profiling.md](docs/profiling.md#reading-the-cpu-clock))" },
        { name: :profile_token, default: nil, type: [:optional_string],
          group: "heron-profiler", directive: :value, usage: "profile_token TOKEN",
          shown: "none",
          doc: "`profile_token ENV[\"HERON_PROFILE_TOKEN\"]`: the profiler's pages then need this token, sent as `X-Heron-Token: TOKEN`, `Authorization: Bearer TOKEN` or `?token=TOKEN` (redacted in the access log)" },
        { name: :n_plus_one_threshold, default: 2, type: [:positive_integer],
          group: "heron-profiler", directive: :value, usage: "n_plus_one_threshold COUNT",
          shown: "`2`",
          flags: ["--n-plus-one-threshold COUNT"], help: "repeated-query warning",
          doc: "`n_plus_one_threshold 5`: a query repeated this often in one request is flagged" },
        { name: :query_backtrace, default: 5, type: [:positive_integer],
          group: "heron-profiler", directive: :value, usage: "query_backtrace FRAMES",
          shown: "`5`",
          flags: ["--query-backtrace FRAMES"], help: "app frames kept per query",
          doc: "`query_backtrace 10`: application frames (gems, Ruby's library and Heron left out) the profiler keeps per SQL query, shown folded on the request page; `1` keeps the call site only, the cheapest (see [profiling.md](docs/profiling.md#call-sites))" },
        { name: :query_backtrace_exclude, default: [], type: [:strings],
          group: "heron-profiler", directive: :list, usage: "query_backtrace_exclude DIR, ...",
          shown: "none",
          doc: "`query_backtrace_exclude \"lib/instrumentation\", \"vendor\"`: more directories whose frames are not application code (relative to the working directory), for call sites and query backtraces" },
        { name: :n_plus_one_safelist, default: [], type: [:strings],
          group: "heron-profiler", directive: :list, usage: "n_plus_one_safelist ENTRY, ...",
          shown: "none",
          flags: ["--n-plus-one-safelist LIST"], help: "comma-separated call sites or tables",
          doc: "`n_plus_one_safelist \"app/views/feed.rb\", \"app/models/user.rb:14\", \"settings\"`: repeated queries from these call sites (a file, or file:line) or on these tables are not reported as N+1 (see [profiling.md](docs/profiling.md#n1-queries))" },
      ].freeze
    end
  end
end
