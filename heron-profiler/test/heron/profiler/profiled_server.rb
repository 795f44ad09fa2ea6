# frozen_string_literal: true

require "heron/profiler"

# Runs an app behind the profiler on the real Heron server and fetches request records.
# The app is wrapped in Rack::Lint inside the profiler; the server helper's own outer Lint is
# left off because Rack 3.2's Lint cannot wrap another Lint around an Array body (to_ary).
module ProfiledServer
  # @param app [#call] the Rack app (wrapped in Rack::Lint here).
  # @param error_io [IO] where the server and the profiler log (N+1 warnings...): by default a
  #   log of the test's own, not the terminal.
  # @yieldparam port [Integer]
  def with_profiled_server(app, environment: "development", error_io: StringIO.new, **config, &block)
    settings = Heron::Configuration.new(environment: environment, error_io: error_io, **config)
    profiled = Heron::Profiler.wrap(Rack::Lint.new(app), settings, logger: Heron::Log::Logger.new(settings)) # as Heron's AppLoader does
    with_server(profiled, lint: false, environment: environment, error_io: error_io, **config) { |port, _server| block.call(port) }
  end

  # GETs a path on a fresh connection (Connection: close) and reads the whole response. It
  # splits lines itself, so it works whatever `$/` is (`ruby -0` changes it).
  # @return [Array(Integer, Hash, String)] status, headers (lower-case names), body.
  def http_get(port, path, headers = "")
    socket = connect(port)
    socket.write("GET #{path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n#{headers}\r\n")
    parse_response(read_all(socket, timeout: 30))
  ensure
    socket&.close
  end

  # @param raw [String] a whole HTTP/1.1 response with a Content-Length body.
  # @return [Array(Integer, Hash, String)] status, headers, body.
  def parse_response(raw)
    head, body = raw.split("\r\n\r\n", 2)
    status_line, *lines = head.to_s.split("\r\n")
    headers = lines.to_h { |line| line.split(": ", 2).then { |name, value| [name.downcase, value] } }
    [status_line.to_s[/\A\S+ (\d{3})/, 1].to_i, headers, body.to_s]
  end

  # Waits until the request's record is complete (after-reply callbacks included).
  # @param headers [Hash] the response headers (server-timing names the record).
  # @return [Hash] the store record.
  def profile_record(headers, timeout: 30)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    loop do
      record = Heron::Profiler.store.find(Heron::Profiler.record_id(headers.fetch("server-timing")))
      return record if record && record[:after_reply_ms]
      flunk "no complete profile record within #{timeout}s" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.01
    end
  end

  # Runs GETs for all paths at once, each on its own connection.
  # @return [Array<Hash>] their store records, in the order of the paths.
  def concurrent_records(port, *paths)
    paths.map { |path| Thread.new { http_get(port, path) } }.map { |thread| profile_record(thread.value[1]) }
  end

  # @return [Boolean] whether two records' [start, last byte] spans overlap.
  def overlapping?(first, second)
    first[:started_at] < second[:started_at] + second[:total_ms] / 1000.0 &&
      second[:started_at] < first[:started_at] + first[:total_ms] / 1000.0
  end
end
