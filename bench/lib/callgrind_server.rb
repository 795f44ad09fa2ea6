# frozen_string_literal: true

require "socket"
require "tmpdir"
require "rbconfig"
require_relative "server_process"

module Bench
  # The real server (`exe/heron`) under valgrind's callgrind, driven by a few keep-alive
  # connections: how many instructions one request costs, as the count of a run with N requests
  # (after a warm-up) minus the count of a run with none. For the same build and input it barely
  # moves between runs, unlike req/s on a shared machine. Time inside system calls is not counted.
  # bench/instructions.rb and bench/profiler_instructions.rb use it.
  #
  #   Bench::CallgrindServer.new(app: "bench/hello.ru", flags: ["--no-profile"]).per_request(10_000)
  class CallgrindServer
    ROOT = File.expand_path("../..", __dir__)
    REQUEST = "GET / HTTP/1.1\r\nHost: bench\r\n\r\n"
    CONNECTIONS = 4
    WARMUP = 200
    # Seconds the server may take to start under callgrind: about a minute on a quiet machine,
    # past 120 s at a load average of 5 on 2 CPUs (2026-11-26, both profiler_instructions runs
    # gave up there).
    START_TIMEOUT = 900

    # @return [String, nil] the callgrind profile of the last run (for callgrind_annotate).
    attr_reader :profile

    # @param app [String] the rackup file.
    # @param flags [Array<String>] extra `heron` flags.
    # @param request [String] the request every connection sends, again and again.
    # @param valgrind [Array<String>] extra valgrind options.
    # @param connections [Integer] keep-alive connections sending requests at once.
    # @param warmup [Integer] requests before the counted ones (a slow endpoint needs fewer).
    def initialize(app:, flags: [], request: REQUEST, valgrind: [], connections: CONNECTIONS, warmup: WARMUP)
      @app = File.expand_path(app, ROOT)
      @flags = flags
      @request = request
      @valgrind = valgrind
      @connections = connections
      @warmup = warmup
      @dir = Dir.mktmpdir("heron-callgrind")
    end

    # @param requests [Integer] requests in the measured run.
    # @return [Integer] instructions per request.
    def per_request(requests)
      (instructions(requests) - instructions(0)) / requests
    end

    # @param count [Integer] requests after the warm-up.
    # @return [Integer] instructions the server process ran: start-up, warm-up and `count`
    #   requests (all threads).
    def instructions(count)
      log = File.join(@dir, "callgrind.log")
      @profile = File.join(@dir, "callgrind.out.#{count}")
      port = ServerProcess.free_port
      server = ServerProcess.new([*argv, "-p", port.to_s, "-o", "127.0.0.1", @app], port: port, log: log, chdir: ROOT)
      server.start(timeout: START_TIMEOUT)
      drive(port, @warmup)
      drive(port, count)
      server.stop(grace: 120)
      File.read(log)[/refs:\s+([\d,]+)/, 1].delete(",").to_i
    end

    # @param requests [Integer] what {#per_request} was given.
    # @return [Hash] :run and :zero, the profiles {#per_request} left behind (see {CallgrindDiff}).
    def profiles(requests)
      { run: File.join(@dir, "callgrind.out.#{requests}"), zero: File.join(@dir, "callgrind.out.0") }
    end

    # @return [String] a one-line description of the set-up, for reports.
    def describe
      "`exe/heron -e production -q --no-metrics --control-bind tcp://127.0.0.1:0 #{@flags.join(' ')}` " \
        "under `valgrind --tool=callgrind`; #{@connections} keep-alive connection(s), #{@warmup} warm-up requests"
    end

    private

    def argv
      ["valgrind", "--tool=callgrind", "--callgrind-out-file=#{@profile}", *@valgrind,
       RbConfig.ruby, "-rbundler/setup", "-I", File.join(ROOT, "lib"), File.join(ROOT, "exe/heron"),
       "-e", "production", "-q", "--no-metrics", "--control-bind", "tcp://127.0.0.1:0", *@flags]
    end

    def drive(port, count)
      Array.new(@connections) { Thread.new { keep_alive(port, count / @connections) } }.each(&:join)
    end

    def keep_alive(port, count)
      socket = TCPSocket.new("127.0.0.1", port)
      count.times do
        socket.write(@request)
        read_response(socket)
      end
    ensure
      socket&.close
    end

    def read_response(socket)
      buffer = +""
      buffer << socket.readpartial(65_536) until (head = buffer.index("\r\n\r\n"))
      length = buffer[/content-length: (\d+)/i, 1].to_i
      buffer << socket.readpartial(65_536) while buffer.bytesize < head + 4 + length
    end
  end
end
