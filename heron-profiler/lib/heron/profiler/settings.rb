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
          flags: ["--profile-path PATH"], help: "profiler pages' path",
          doc: "`profile_path \"/_debug\"`" },
        { name: :profile_sample, default: 1, type: [:positive_integer],
          group: "heron-profiler", directive: :value, usage: "profile_sample N",
          flags: ["--profile-sample N"], help: "profile one request in N",
          doc: "`profile_sample 10`: only one request in 10 is measured (and gets Server-Timing), for production (see [profiling.md](docs/profiling.md#what-it-costs))" },
        { name: :profile_cpu_sample, default: 100, type: [:positive_integer],
          group: "heron-profiler", directive: :value, usage: "profile_cpu_sample N",
          flags: ["--profile-cpu-sample N"], help: "read thread CPU time on one profiled request in N",
          doc: "`profile_cpu_sample 1`: every profiled request gets its thread CPU time, not one in 100 (see [profiling.md](docs/profiling.md#reading-the-cpu-clock))" },
        { name: :profile_token, default: nil, type: [:optional_string],
          group: "heron-profiler", directive: :value, usage: "profile_token TOKEN",
          doc: "`profile_token ENV[\"HERON_PROFILE_TOKEN\"]`: the profiler's pages need this token (see [profiling.md](docs/profiling.md))" },
        { name: :n_plus_one_threshold, default: 2, type: [:positive_integer],
          group: "heron-profiler", directive: :value, usage: "n_plus_one_threshold COUNT",
          flags: ["--n-plus-one-threshold COUNT"], help: "repeated-query warning",
          doc: "`n_plus_one_threshold 5`: a query repeated this often in one request is flagged" },
        { name: :query_backtrace, default: 5, type: [:positive_integer],
          group: "heron-profiler", directive: :value, usage: "query_backtrace FRAMES",
          flags: ["--query-backtrace FRAMES"], help: "app frames kept per query",
          doc: "`query_backtrace 10`: application frames kept per SQL query; `1` keeps the call site only (see [profiling.md](docs/profiling.md#call-sites))" },
        { name: :query_backtrace_exclude, default: [], type: [:strings],
          group: "heron-profiler", directive: :list, usage: "query_backtrace_exclude DIR, ...",
          doc: "`query_backtrace_exclude \"lib/instrumentation\", \"vendor\"`: more directories whose frames are not application code" },
        { name: :n_plus_one_safelist, default: [], type: [:strings],
          group: "heron-profiler", directive: :list, usage: "n_plus_one_safelist ENTRY, ...",
          flags: ["--n-plus-one-safelist LIST"], help: "comma-separated call sites or tables",
          doc: "`n_plus_one_safelist \"app/models/user.rb:14\", \"settings\"`: call sites or tables never reported as N+1 (see [profiling.md](docs/profiling.md#n1-queries))" },
      ].freeze
    end
  end
end
