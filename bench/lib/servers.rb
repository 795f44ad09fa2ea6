# frozen_string_literal: true

# What a script comparing servers side by side needs: their command lines, the process wrapper
# and the CPU and memory probes.
require_relative "server_process"
require_relative "peak_rss"
require_relative "child_cpu"

module Bench
  # Command lines of the servers compared, one process each, production, bound to 127.0.0.1 unless told
  # (bench/README.md, "Servers").
  module Servers
    module_function

    # @param name [String] "heron", "puma" or "falcon".
    # @param port [Integer]
    # @param app [String] the rackup file.
    # @param extra [Array<String>] more options for that server.
    # @param host [String] the address to bind.
    # @return [Array<String>]
    def argv(name, port, app, extra = [], host: "127.0.0.1")
      case name
      when "heron" then %W[bundle exec exe/heron -b tcp://#{host}:#{port} -e production -q] + extra + [app]
      when "puma" then %W[bundle exec puma --no-config -b tcp://#{host}:#{port} -e production] + extra + [app]
      when "falcon" then %W[bundle exec falcon serve --threaded --count 1 -b http://#{host}:#{port}] + extra + ["-c", app]
      else raise ArgumentError, "unknown server #{name}"
      end
    end

    # Starts one of them on a free port from the repository's root, logging to `dir/LABEL.log`.
    # @param name [String] as for {.argv}.
    # @param app [String] the rackup file, relative to the root.
    # @param extra [Array<String>] more options for that server.
    # @param dir [String] where its log goes.
    # @param label [String] the log's name.
    # @param options [Hash] more for {ServerProcess#initialize} (rlimit_nofile:, env:).
    # @return [ServerProcess] started (it answers on its port).
    def start(name, app, extra = [], dir:, label: name, **options)
      port = ServerProcess.free_port
      ServerProcess.new(argv(name, port, app, extra), port: port, log: File.join(dir, "#{label}.log"),
                                                      chdir: File.expand_path("../..", __dir__), **options).start
    end
  end
end
